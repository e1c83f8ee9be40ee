// The shard's deploy rules (docs/node.md "Deploy rules") on a 2-validator
// shard of real `rnode run` processes on 127.0.0.1, made with a term limit
// above what one p2p packet carries by default (256 KiB): a deploy at the
// limit is acknowledged (the other validator holds a copy: the transport's
// packet limit follows the shard's term limit) and finalized; one byte
// more is refused by name, not as "reaches no other validator" (regression:
// a term above ~256 KiB was acknowledged by a standalone node but could
// never reach a peer). Run with `node --test`.
'use strict';

const { after, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const {
  deployIdOfSuccess, errorMessages, makeTempDir, newPrivateKey, RnodeProcess,
  signDeploy, waitFor, writeShardFiles,
} = require('./harness');

// Bounds of the waits (generous for a loaded 2-core machine).
const kConnectMs = 60000;
const kFinalizedMs = 120000;
// The shard's term limit: above the default packet (256 KiB).
const kMaxTermBytes = 400000;

const dir = makeTempDir('shard-rules');
const nodes = [];

after(async () => {
  for (const n of nodes) await n.stop();
  if (!process.env.RNODE_TEST_KEEP) fs.rmSync(dir, { recursive: true, force: true });
});

// A Rholang term of exactly `bytes` bytes (a string sent on a new name).
function termOf(bytes) {
  const head = 'new x in { x!("';
  const tail = '") }';
  return head + 'a'.repeat(bytes - head.length - tail.length) + tail;
}

test('a deploy at the shard term limit travels and is finalized; one byte more is refused by name', async () => {
  const keys = [newPrivateKey(), newPrivateKey()];
  const { bonds, wallets } = writeShardFiles(dir, keys);
  const common = [
    '--bonds-file', bonds, '--wallets-file', wallets,
    '--deploy-timestamp', String(Date.now()),
    '--network-id', 'js-rules', '--fault-tolerance-threshold', '0.1',
    '--lookup-interval', '1s', '--max-deploy-term-bytes', String(kMaxTermBytes),
  ];
  const node = (label, key, extra) => {
    const n = new RnodeProcess(label, path.join(dir, label), [...common, ...extra],
      { standalone: false, privateKey: key });
    nodes.push(n);
    return n;
  };
  const v1 = node('v1', keys[0], []);
  await v1.start();
  const v2 = node('v2', keys[1], ['--bootstrap', (await v1.getJson('/api/status')).body.address]);
  await v2.start();
  await waitFor('v1 and v2 to be connected', async () =>
    (await v1.getJson('/api/status')).body.peers >= 1 &&
    (await v2.getJson('/api/status')).body.peers >= 1,
  { timeoutMs: kConnectMs, intervalMs: 200 });

  const over = signDeploy(keys[0], {
    term: termOf(kMaxTermBytes + 1), validAfterBlockNumber: 0, phloLimit: 100000000,
  });
  const refused = await v1.unary(v1.deployClient, 'doDeploy', over.proto);
  assert.equal(errorMessages(refused, 'doDeploy one byte over the limit'),
    `Deploy term is ${kMaxTermBytes + 1} bytes, more than this shard's limit of ` +
    `${kMaxTermBytes} bytes.`);

  const at = signDeploy(keys[0], {
    term: termOf(kMaxTermBytes), validAfterBlockNumber: 0, phloLimit: 100000000,
  });
  const accepted = await v1.unary(v1.deployClient, 'doDeploy', at.proto);
  assert.equal(deployIdOfSuccess(accepted.result), at.id);
  await waitFor('v2 to see the deploy at the limit finalized', async () => {
    const r = await v2.getJson(`/api/deploy-finalization-status/${at.id}`);
    return r.status === 200 && r.body.state === 'Finalized';
  }, { timeoutMs: kFinalizedMs, intervalMs: 250 });
  for (const n of nodes) assert.equal(n.exit, null, `${n.label} is still running`);
});
