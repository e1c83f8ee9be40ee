// The shard's block size limit against a real `rnode run --standalone`
// (issue 43): a block stops short of casper.max-block-bytes, and the
// deploys past it wait for the next block. Proposing is on request
// (--autopropose=false). Run with `node --test`.
'use strict';

const { after, before, test } = require('node:test');
const assert = require('node:assert/strict');

const {
  RnodeProcess, deployIdOfSuccess, makeTempDir, newPrivateKey, signDeploy,
  writeShardFiles,
} = require('./harness');

// The least limit the node takes (1 MiB): four deploys of 200 KiB fit in
// it, six do not.
const kMaxBlockBytes = 1 << 20;
const kTermBytes = 200 << 10;
const kDeploys = 6;

// Three funded deployers, two deploys each (a key's share of the default
// pool is far above two).
const keys = [newPrivateKey(), newPrivateKey(), newPrivateKey()];
const { wallets } = writeShardFiles(makeTempDir('block-size-wallets'), keys, 0);

const dataDir = makeTempDir('block-size');
const node = new RnodeProcess('block-size', dataDir,
  ['--autopropose=false', '--max-block-bytes', String(kMaxBlockBytes),
    '--wallets-file', wallets]);

before(async () => {
  await node.start();
});

after(async () => {
  await node.stop();
});

async function proposeBlock() {
  const proposed = await node.ok(node.proposeClient, 'propose', { isAsync: false });
  const m = /^Success! Block ([0-9a-f]{64}) created and added\.$/.exec(proposed.result);
  assert.ok(m, `propose: ${JSON.stringify(proposed.result)}`);
  const block = await node.getJson(`/api/block/${m[1]}`);
  assert.equal(block.status, 200, JSON.stringify(block.body));
  return block.body;
}

test('a block stops short of max-block-bytes; the rest wait for the next block',
  node.withOutput(async () => {
    const height = await node.latestBlockNumber();
    const ids = [];
    for (let i = 0; i < kDeploys; ++i) {
      const term = `@"big"!("${String(i).repeat(kTermBytes)}")`;
      const d = signDeploy(keys[i % keys.length], { term, validAfterBlockNumber: height });
      const reply = await node.ok(node.deployClient, 'doDeploy', d.proto);
      assert.equal(deployIdOfSuccess(reply.result), d.id);
      ids.push(d.id);
    }
    const first = await proposeBlock();
    const firstSigs = first.deploys.map((d) => d.sig);
    assert.ok(firstSigs.length >= 1 && firstSigs.length < kDeploys,
      `the first block holds ${firstSigs.length} of ${kDeploys} deploys`);
    const second = await proposeBlock();
    const all = [...firstSigs, ...second.deploys.map((d) => d.sig)];
    assert.deepEqual([...all].sort(), [...ids].sort());
    for (const d of [...first.deploys, ...second.deploys]) {
      assert.equal(d.errored, false, JSON.stringify(d).slice(0, 200));
    }
  }));
