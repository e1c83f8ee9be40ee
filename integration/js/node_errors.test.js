// Refusals of a real `rnode run --standalone`: each bad deploy gets its
// documented error in-band (gRPC status OK, the reply's `error` oneof) or
// its HTTP status, and the node keeps serving afterwards. Run with
// `node --test`.
'use strict';

const { after, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');

const {
  RnodeProcess, deployIdOfSuccess, errorMessages, grpc, kMaxBodyBytes, liveCase,
  makeTempDir, signDeploy, waitFor,
} = require('./harness');

const kTerm = 'new x in { x!(1) }';

const dataDir = makeTempDir('errors');
// --fault-injection: the full-disk case below fills its disk on purpose.
const node = new RnodeProcess('errors', dataDir, ['--fault-injection']);

before(async () => {
  await node.start();
});

after(async () => {
  await node.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

// Each case starts on an empty pool and must leave the node serving.
const it = liveCase(node);

// doDeploy must answer with an in-band error matching `pattern`.
async function assertRefused(proto, pattern) {
  const reply = await node.unary(node.deployClient, 'doDeploy', proto);
  assert.match(errorMessages(reply, 'doDeploy'), pattern);
}

it('wrong shard id is refused', async () => {
  const d = signDeploy(node.privateKey, {
    term: kTerm, validAfterBlockNumber: await node.latestBlockNumber(),
    shardId: 'wrongshard',
  });
  await assertRefused(d.proto,
    /Deploy shardId 'wrongshard' is not as expected network shard 'root'\./);
});

it('term changed after signing is refused for its signature', async () => {
  const d = signDeploy(node.privateKey, {
    term: kTerm, validAfterBlockNumber: await node.latestBlockNumber(),
  });
  await assertRefused({ ...d.proto, term: 'new x in { x!(2) }' }, /signature/);
});

it('phlo price below the node minimum is refused', async () => {
  const d = signDeploy(node.privateKey, {
    term: kTerm, validAfterBlockNumber: await node.latestBlockNumber(),
    phloPrice: 0,
  });
  await assertRefused(d.proto, /Phlo price 0 is less than minimum price 1\./);
});

for (const [name, below] of [['60 blocks behind', 60], ['far in the past', 1e12]]) {
  it(`validAfterBlockNumber ${name} (window closed) is refused`, async () => {
    const latest = await node.latestBlockNumber();
    const d = signDeploy(node.privateKey,
      { term: kTerm, validAfterBlockNumber: latest - below });
    await assertRefused(d.proto, /can no longer be included/);
  });
}

// The public node's window (RUST Validate::transaction_expiration): block N
// may hold a deploy only if N - 50 < validAfterBlockNumber < N. The next
// block is latest + 1, so latest - 49 is the first closed value.
it('validAfterBlockNumber latest - 49 (closed for the next block) is refused', async () => {
  const latest = await node.latestBlockNumber();
  const d = signDeploy(node.privateKey,
    { term: kTerm, validAfterBlockNumber: latest - 49 });
  await assertRefused(d.proto, /can no longer be included/);
});

it('validAfterBlockNumber latest - 48 (last open value) is accepted', async () => {
  const latest = await node.latestBlockNumber();
  const d = signDeploy(node.privateKey,
    { term: kTerm, validAfterBlockNumber: latest - 48 });
  const reply = await node.ok(node.deployClient, 'doDeploy', d.proto);
  assert.equal(deployIdOfSuccess(reply.result), d.id);
  const view = await waitFor('the deploy to be finalized', async () => {
    const r = await node.getJson(`/api/deploy/${d.id}`);
    return r.status === 200 && r.body.isFinalized ? r.body : null;
  });
  assert.equal(view.blockNumber - (latest - 48), 49);
});

it('the same signed deploy sent twice is refused the second time', async () => {
  const d = signDeploy(node.privateKey, {
    term: kTerm, validAfterBlockNumber: await node.latestBlockNumber(),
  });
  const first = await node.ok(node.deployClient, 'doDeploy', d.proto);
  assert.equal(deployIdOfSuccess(first.result), d.id);
  // Whether it is still pooled or already in a block, it is a duplicate.
  await assertRefused(d.proto, /already/);

  const res = await node.postJson('/api/deploy', d.json);
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.error, 'duplicate_deploy');
});

it('a request that is not protobuf gets a gRPC error status', async () => {
  const err = await new Promise((resolve) => {
    node.deployClient.makeUnaryRequest('/casper.v1.DeployService/doDeploy',
      (x) => x, (x) => x, Buffer.from([0xff, 0xff, 0xff]),
      { deadline: Date.now() + 15000 }, (e) => resolve(e));
  });
  assert.ok(err, 'a malformed request was answered with success');
  assert.ok([grpc.status.INTERNAL, grpc.status.INVALID_ARGUMENT].includes(err.code),
    `gRPC status ${err.code} (${err.details})`);
});

it('HTTP deploy body above --api-http-max-body-bytes gets 413', async () => {
  const body = JSON.stringify({ data: { term: 'x'.repeat(2 * kMaxBodyBytes) } });
  const res = await node.postJson('/api/deploy', body);
  assert.equal(res.status, 413, res.text);
});

it('HTTP deploy body that is not JSON gets 400', async () => {
  const res = await node.postJson('/api/deploy', '{"data": {"term": ');
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error, 'invalid_deploy');
});

it('HTTP deploy with the wrong shard gets 400 with the node\'s message', async () => {
  const d = signDeploy(node.privateKey, {
    term: kTerm, validAfterBlockNumber: await node.latestBlockNumber(),
    shardId: 'wrongshard',
  });
  const res = await node.postJson('/api/deploy', d.json);
  assert.equal(res.status, 400, res.text);
  assert.match(res.body.message, /is not as expected network shard 'root'/);
});

it('a full disk refuses deploys with 507 disk_full, and space returning ends it', async () => {
  const kDiskFull = /^Deploy was not accepted: this validator's disk is full, so it cannot store the deploy; retry once space returns or deploy to another validator\.$/;
  const full = await node.postJson('/api/fault/disk-full', '', node.adminUrl);
  assert.equal(full.status, 200, full.text);
  assert.equal(full.body.diskFull, true);
  try {
    const d = signDeploy(node.privateKey, {
      term: kTerm, validAfterBlockNumber: await node.latestBlockNumber(),
    });
    const res = await node.postJson('/api/deploy', d.json);
    assert.equal(res.status, 507, res.text);
    assert.equal(res.body.error, 'disk_full');
    assert.match(res.body.message, kDiskFull);
    await assertRefused(d.proto, /this validator's disk is full/);
    // Reads go on.
    const status = await fetch(`${node.httpUrl}/api/status`);
    assert.equal(status.status, 200);
  } finally {
    const heal = await node.postJson('/api/fault/heal', '', node.adminUrl);
    assert.equal(heal.status, 200, heal.text);
    assert.equal(heal.body.diskFull, false);
  }
  // Space returned: the store resumes within seconds and deploys go in.
  const d = signDeploy(node.privateKey, {
    term: kTerm, validAfterBlockNumber: await node.latestBlockNumber(),
  });
  const taken = await waitFor('a deploy taken after the disk healed', async () => {
    const res = await node.postJson('/api/deploy', d.json);
    if (res.status === 507) return null;
    assert.equal(res.status, 200, res.text);
    return res;
  }, { timeoutMs: 30000, intervalMs: 250 });
  assert.ok(taken);
});
