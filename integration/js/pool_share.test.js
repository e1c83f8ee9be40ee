// The deploy pool against a real `rnode run --standalone` (issue 43): one
// key cannot take the pool from the others, and a block takes the deploys
// that pay most first. Proposing is on request (--autopropose=false), so
// deploys wait in the pool. Run with `node --test`.
'use strict';

const { after, before, test } = require('node:test');
const assert = require('node:assert/strict');

const {
  RnodeProcess, deployIdOfSuccess, errorMessages, makeTempDir, newPrivateKey,
  signDeploy, writeShardFiles,
} = require('./harness');

// A pool of 32 gives each deployer a sixteenth: 2 deploys.
const kPoolDeploys = 32;
const kShare = 2;

// Two deployers with funds (a deployer that cannot pay is refused at
// admission); the node's own key has a bond but no wallet.
const greedy = newPrivateKey();
const other = newPrivateKey();
const { wallets } = writeShardFiles(makeTempDir('pool-share-wallets'), [greedy, other], 0);

const dataDir = makeTempDir('pool-share');
const node = new RnodeProcess('pool-share', dataDir,
  ['--autopropose=false', '--deploy-pool-max-deploys', String(kPoolDeploys),
    '--wallets-file', wallets]);

before(async () => {
  await node.start();
});

after(async () => {
  await node.stop();
});

test('a key beyond its share is refused; other keys are not, and the block takes the highest price first',
  node.withOutput(async () => {
    const height = await node.latestBlockNumber();
    const term = 'new x in { x!(1) }';
    const taken = [];
    for (let i = 0; i < kShare; ++i) {
      const d = signDeploy(greedy, { term, validAfterBlockNumber: height });
      const reply = await node.ok(node.deployClient, 'doDeploy', d.proto);
      assert.equal(deployIdOfSuccess(reply.result), d.id);
      taken.push(d.id);
    }
    // Over gRPC: the in-band error names the share.
    const over = signDeploy(greedy, { term, validAfterBlockNumber: height });
    const refused = await node.unary(node.deployClient, 'doDeploy', over.proto);
    assert.match(errorMessages(refused, 'doDeploy'),
      new RegExp(`this deployer has ${kShare} deploys .* waiting, its share of the pool`));
    // Over HTTP: 503 busy, with a retry hint.
    const res = await fetch(`${node.httpUrl}/api/deploy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        signDeploy(greedy, { term, validAfterBlockNumber: height }).json),
    });
    const body = await res.json();
    assert.equal(res.status, 503, JSON.stringify(body));
    assert.equal(res.headers.get('retry-after'), '1');
    assert.match(JSON.stringify(body), /its share of the pool/);

    // Another key is taken, and pays more: it goes first in the block.
    const rich = signDeploy(other, { term, validAfterBlockNumber: height, phloPrice: 5 });
    const reply = await node.ok(node.deployClient, 'doDeploy', rich.proto);
    assert.equal(deployIdOfSuccess(reply.result), rich.id);

    const metrics = await (await fetch(`${node.httpUrl}/metrics`)).text();
    assert.match(metrics,
      /rnode_deploys_refused_total\{reason="deployer_share"\} 2/);

    const proposed = await node.ok(node.proposeClient, 'propose', { isAsync: false });
    const m = /^Success! Block ([0-9a-f]{64}) created and added\.$/.exec(proposed.result);
    assert.ok(m, `propose: ${JSON.stringify(proposed.result)}`);
    const block = await node.getJson(`/api/block/${m[1]}`);
    assert.equal(block.status, 200, JSON.stringify(block.body));
    const order = block.body.deploys.map((d) => d.sig);
    // The highest price first, then the oldest.
    assert.deepEqual(order, [rich.id, ...taken]);
  }));
