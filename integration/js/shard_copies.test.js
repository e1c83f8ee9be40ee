// A shard validator acknowledges a deploy only once another validator
// holds a copy of it (docs/p2p.md "Deploy gossip"). Real `rnode run`
// processes on 127.0.0.1: validator v1 of a 3-validator shard, first with
// only a read-only observer connected (the observer declines the copy: it
// could never propose the deploy, so v1 must refuse), then with validator
// v2 too (v2 holds the copy: v1 acknowledges). v1 never proposes
// (--autopropose=false), so the acknowledged deploy reaches a block only
// through v2's takeover of its copy. Regression: a peer's inbound queue used
// to count as a copy, and after kill -9 a validator whose only reconnected
// peer was the observer acknowledged deploys it alone had (chaos_quick
// kill9, seed 2081192272). Run with `node --test`.
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
const kIncludedMs = 120000;

const dir = makeTempDir('shard-copies');
const nodes = [];

after(async () => {
  for (const n of nodes) await n.stop();
  // RNODE_TEST_KEEP=1 keeps the nodes' data dirs (and their logs).
  if (!process.env.RNODE_TEST_KEEP) fs.rmSync(dir, { recursive: true, force: true });
});

async function peers(n) {
  const r = await n.getJson('/api/status');
  assert.equal(r.status, 200);
  return r.body.peers;
}

// The value of an unlabelled counter or gauge in n's /metrics (0 if absent).
async function metric(n, name) {
  const res = await fetch(`${n.httpUrl}/metrics`);
  assert.equal(res.status, 200);
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

test('a deploy is acknowledged only when another validator holds a copy', async () => {
  const keys = [newPrivateKey(), newPrivateKey(), newPrivateKey()];
  const { bonds, wallets } = writeShardFiles(dir, keys);
  const common = [
    '--bonds-file', bonds, '--wallets-file', wallets,
    '--deploy-timestamp', String(Date.now()),
    '--network-id', 'js-copies', '--fault-tolerance-threshold', '0.1',
    '--lookup-interval', '1s',
  ];
  const node = (label, key, extra) => {
    const n = new RnodeProcess(label, path.join(dir, label), [...common, ...extra],
      { standalone: false, privateKey: key });
    nodes.push(n);
    return n;
  };
  const v1 = node('v1', keys[0], ['--autopropose=false']);
  await v1.start();
  const boot = ['--bootstrap', (await v1.getJson('/api/status')).body.address];
  const observer = node('observer', null, boot);
  await observer.start();
  await waitFor('v1 and the observer to be connected', async () =>
    (await peers(v1)) >= 1 && (await peers(observer)) >= 1,
  { timeoutMs: kConnectMs, intervalMs: 200 });

  // Only the observer: it proves no validator key (docs/security.md), so
  // v1 does not even ask it for a copy, and refuses the deploy.
  const lonely = signDeploy(keys[0], { term: 'new x in { x!(1) }', validAfterBlockNumber: 0 });
  const refused = await v1.unary(v1.deployClient, 'doDeploy', lonely.proto);
  assert.match(errorMessages(refused, 'doDeploy with only the observer'),
    /reaches no other validator to keep a copy of the deploy/);
  assert.equal(await metric(observer, 'p2p_declined_total'), 0,
    'the observer was asked for a copy');
  assert.equal(await metric(v1, 'p2p_declined_by_peer_total'), 0,
    'v1 asked a peer that is no proven validator');
  // Neither in v1's pool nor in a block.
  assert.equal((await v1.getJson(`/api/deploy-finalization-status/${lonely.id}`)).status,
    404, 'v1 kept the refused deploy');

  // With validator v2 connected too, v2 holds the copy.
  const v2 = node('v2', keys[1], [...boot, '--deploy-gossip-takeover', '1000']);
  await v2.start();
  await waitFor('v1 to be connected to v2 and the observer', async () =>
    (await peers(v1)) >= 2, { timeoutMs: kConnectMs, intervalMs: 200 });
  const kept = signDeploy(keys[1], { term: 'new x in { x!(2) }', validAfterBlockNumber: 0 });
  const accepted = await v1.unary(v1.deployClient, 'doDeploy', kept.proto);
  assert.equal(deployIdOfSuccess(accepted.result), kept.id);

  // v1 never proposes: the deploy reaches a block through v2's copy.
  const block = await waitFor('v2 to include the deploy v1 acknowledged', async () => {
    const r = await v2.getJson(`/api/deploy-finalization-status/${kept.id}`);
    return r.status === 200 ? r.body.latestBlockHash : null;
  }, { timeoutMs: kIncludedMs, intervalMs: 250 });
  assert.match(block, /^[0-9a-f]{64}$/);
  for (const n of nodes) assert.equal(n.exit, null, `${n.label} is still running`);
});
