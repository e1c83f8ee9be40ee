// Joining from the shard's last finalized state (issue 45), with real
// processes on 127.0.0.1: three validators make blocks, then a new observer
// (empty data dir, the shard's genesis files, the bootstrap) joins. It must
// anchor at the shard's last finalized block without replaying the blocks
// below it (its casper_blocks_validated_total stays far below the shard's
// height), verify the anchor by the blocks above it (join.phase
// "verifying", not ready), say so in /api/status (join.phase "done") and
// in its metrics, and then follow the shard: deploys sent afterwards
// settle FINALIZED on it
// as on the validators, with one last finalized block, also after a kill -9
// and restart of the joined node. The third test starts a fourth validator,
// bonded since the genesis, fresh: it joins the same way and then proposes
// the deploys sent to it. Every node runs with
// --state-sync-min-finalized 30 (the default, 1024, needs a longer shard;
// scripts/join measures that). The second test joins another observer,
// killed five times while it fetches the state, from a shard whose third
// validator serves corrupt trie nodes. RNODE_STATE_JOIN_DEPLOYS sets the
// deploys made before the join (default 80). Run with `node --test`.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const { RnodeProcess, makeTempDir, newPrivateKey, startShard, stopAllAfter, waitFor } =
  require('./harness');
const { lastFinalized, sendDeploy, settled, sleep, watchHeight } = require('./lifecycle');

const kDeploys = Number(process.env.RNODE_STATE_JOIN_DEPLOYS || 80);
const kMinFinalized = 30;
const kTerm = 'new x in { x!(0) }';
const kDrainMs = 180000;

const dir = makeTempDir('state-join');
const nodes = [];
// The first test's shard, for the others: {validators, keys, idle,
// firstJoin}.
let shard = null;

stopAllAfter(dir, nodes);

// `count` deploys to `validators` (keys by index), settled on every node
// of `all`; returns the last finalized block they agree on.
async function deployAndSettle(validators, keys, all, count, what) {
  const watch = watchHeight(validators);
  const ids = [];
  try {
    // Deploys are signed valid after the watched height: not before the
    // watch has seen it.
    const height = await validators[0].latestBlockNumber();
    await waitFor('the height watch', async () => watch.height >= height,
      { timeoutMs: 10000, intervalMs: 50 });
    for (let i = 0; i < count; ++i) {
      ids.push(await sendDeploy(validators, i, keys[i % keys.length], kTerm, watch));
      await sleep(40);
    }
  } finally {
    await watch.stop();
  }
  const { statuses, lfb } = await settled(all, ids, what, kDrainMs);
  for (const [id, s] of statuses) {
    assert.equal(s.state, 'DEPLOY_STATE_FINALIZED', `${what}: deploy ${id.slice(0, 16)} is ${s.state}`);
  }
  return lfb;
}

// The sum of a counter family's samples in `node`'s /metrics (those whose
// labels include `labels`, when given).
async function counterSum(node, name, labels = '') {
  const text = await (await fetch(`${node.httpUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if ((line.startsWith(`${name}{`) || line.startsWith(`${name} `)) &&
        line.includes(labels)) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

test('a new observer joins at the last finalized state and follows the shard', async (t) => {
  const keys = [newPrivateKey(), newPrivateKey(), newPrivateKey()];
  // A fourth validator, bonded in the genesis, starts only in the third
  // test: three of four stakes finalize (fault tolerance 0.1).
  const idle = newPrivateKey();
  const validators = await startShard(dir, {
    validatorKeys: keys, idleValidatorKeys: [idle], networkId: 'statejoin', nodes,
    extraArgs: ['--state-sync-min-finalized', String(kMinFinalized), '--fault-injection'],
  });
  const [v1] = validators;
  // A young shard: the validators that started new replayed from genesis.
  for (const v of validators.slice(1)) {
    const status = (await v.getJson('/api/status')).body;
    assert.equal(status.join.phase, 'not_needed', JSON.stringify(status.join));
  }

  const before = await deployAndSettle(validators, keys, validators, kDeploys,
    'before the join');
  assert.ok(before.blockNumber >= kMinFinalized,
    `the shard finalized only #${before.blockNumber}`);

  // The joiner: v1's genesis arguments, the bootstrap, an empty data dir.
  const boot = (await v1.getJson('/api/status')).body.address;
  const joiner = new RnodeProcess('joiner', path.join(dir, 'joiner'),
    [...v1.extraArgs, '--bootstrap', boot], { standalone: false, keepPorts: true });
  nodes.push(joiner);
  // Deploys go on while it joins: blocks the shard makes then reach the
  // joiner in every phase (a block diverted to the join after it had
  // listed the blocks to hand on was lost, and the joiner never caught up).
  const during = [];
  let streaming = true;
  const stream = (async () => {
    const watch = watchHeight(validators);
    try {
      await waitFor('the height watch', async () => watch.height > 0,
        { timeoutMs: 10000, intervalMs: 50 });
      for (let i = 0; streaming && i < 200; ++i) {
        during.push(await sendDeploy(validators, i, keys[i % keys.length], kTerm, watch));
        await sleep(100);
      }
    } finally {
      await watch.stop();
    }
  })();
  const phases = new Set();
  let polling = true;
  const poller = (async () => {
    while (polling) {
      try {
        const r = await joiner.getJson('/api/status');
        if (r.status === 200 && r.body.join) {
          phases.add(r.body.join.phase);
          if (r.body.join.phase !== 'done') {
            assert.equal(r.body.isReady, false, 'ready while joining');
          }
        }
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        // Not listening yet.
      }
      await sleep(20);
    }
  })();
  try {
    await joiner.start();
  } finally {
    polling = false;
    await poller;
    streaming = false;
    await stream;
  }
  const joined = (await joiner.getJson('/api/status')).body;
  t.diagnostic(`join: ${JSON.stringify(joined.join)}; phases seen ${[...phases].join(', ')}`);
  assert.equal(joined.join.phase, 'done', JSON.stringify(joined.join));
  assert.ok(joined.join.anchorNumber >= before.blockNumber,
    `anchored at #${joined.join.anchorNumber}, the shard had finalized #${before.blockNumber}`);
  assert.ok(joined.join.trieNodes > 0, 'no trie node fetched');
  assert.equal(joined.join.error, '');
  assert.ok(await counterSum(joiner, 'rnode_state_sync_trie_nodes_total') > 0);
  assert.ok(await counterSum(v1, 'rnode_state_sync_nodes_served_total') +
    await counterSum(validators[1], 'rnode_state_sync_nodes_served_total') +
    await counterSum(validators[2], 'rnode_state_sync_nodes_served_total') > 0,
  'no validator served a trie node');
  // Nothing below the anchor was replayed: the joiner validated only what
  // came after it (the stream went on while it joined: about one block a
  // number, a few more where validators proposed at once).
  const validated = await counterSum(joiner, 'casper_blocks_validated_total',
    'verdict="valid"');
  const height = Math.max(...await Promise.all(validators.map((v) => v.latestBlockNumber())));
  t.diagnostic(`the joiner validated ${validated} blocks; anchored at ` +
    `#${joined.join.anchorNumber}, the shard at #${height} once it was ready`);
  assert.ok(validated <= 2 * (height - joined.join.anchorNumber) + 5,
    `the joiner validated ${validated} blocks, anchored at #${joined.join.anchorNumber} ` +
    `with the shard at #${height}`);
  // A deploy finalized before the join reads FINALIZED there too (its
  // block is in the window).
  const all = [...validators, joiner];
  // What was deployed while it joined settles on it too.
  await settled(all, during, 'deployed during the join', kDrainMs);
  const after = await deployAndSettle(validators, keys, all, 20, 'after the join');
  assert.ok(after.blockNumber > joined.join.anchorNumber);

  // kill -9, and a restart on the anchored data dir.
  await joiner.kill();
  await joiner.start();
  const again = (await joiner.getJson('/api/status')).body;
  assert.equal(again.join, null, 'a restarted node with history does not join again');
  await deployAndSettle(validators, keys, all, 20, 'after the restart');
  const lfbs = await Promise.all(all.map(lastFinalized));
  assert.equal(new Set(lfbs.map((b) => b.blockHash)).size, 1,
    lfbs.map((b) => `#${b.blockNumber}`).join(', '));
  await waitFor('the joiner to stay ready', async () =>
    (await joiner.getJson('/api/status')).body.isReady === true, { timeoutMs: 10000 });
  shard = { validators, keys, idle, firstJoin: joined.join };
});

// The join's trie phase survives kill -9: a second observer, its trie fetch
// slowed to one request of two nodes at a time, is killed five times in
// the states phase, each time further into the trie (run k at k/6 of the
// first joiner's trie); each run finds what the earlier ones stored and
// fetches only the rest, so all six runs together fetch about one trie,
// where starting over would fetch 3.5. Meanwhile validator 3 serves
// altered or truncated trie nodes (POST /api/fault/corrupt-trie): its
// answers are caught by hash, it is punished, and the join completes from
// the other two.
test('a joiner killed five times while fetching the state resumes, past a corrupt server', async (t) => {
  assert.ok(shard !== null, 'the first test made no shard');
  const { validators, keys, firstJoin } = shard;
  const [v1, , v3] = validators;
  const fault = await v3.postJson('/api/fault/corrupt-trie', {}, v3.adminUrl);
  assert.equal(fault.status, 200, JSON.stringify(fault.body));
  assert.equal(fault.body.corruptTrie, true);
  const trie = firstJoin.trieNodes + firstJoin.trieNodesFound;
  assert.ok(trie >= 60, `the first join's tries hold only ${trie} nodes`);
  const boot = (await v1.getJson('/api/status')).body.address;
  const joiner = new RnodeProcess('joiner2', path.join(dir, 'joiner2'),
    [...v1.extraArgs, '--bootstrap', boot, '--state-sync-requests', '1',
      '--state-sync-hashes-per-request', '2'],
    { standalone: false, keepPorts: true });
  nodes.push(joiner);
  const runs = [];
  for (let kill = 1; kill <= 5; ++kill) {
    await joiner.start({ ready: false });
    const at = await waitFor(`run ${kill} to hold ${kill}/6 of the trie`, async () => {
      const j = (await joiner.getJson('/api/status')).body.join;
      assert.ok(j !== null, 'no join: the node has history');
      assert.ok(!['verifying', 'done', 'not_needed'].includes(j.phase),
        `run ${kill} ended its trie phase before the kill: ${JSON.stringify(j)}`);
      return j.phase === 'states' && j.trieNodes + j.trieNodesFound >= kill * trie / 6
        ? j : null;
    }, { timeoutMs: 60000, intervalMs: 10 });
    const malformed = await counterSum(joiner, 'p2p_malformed_total');
    await joiner.kill();
    runs.push({ ...at, malformed });
  }
  await joiner.start();
  const last = (await joiner.getJson('/api/status')).body.join;
  runs.push({ ...last, malformed: await counterSum(joiner, 'p2p_malformed_total') });
  t.diagnostic(`first join: ${trie} trie nodes; runs (fetched/found/bad answers/punished): ` +
    runs.map((r) => `${r.trieNodes}/${r.trieNodesFound}/${r.badTrieAnswers}/${r.malformed}`)
      .join(', '));
  assert.equal(last.phase, 'done', JSON.stringify(last));
  for (let i = 1; i < runs.length; ++i) {
    assert.ok(runs[i].trieNodesFound > 0, `run ${i + 1} found nothing stored`);
  }
  const fetched = runs.reduce((sum, r) => sum + r.trieNodes, 0);
  const whole = last.trieNodes + last.trieNodesFound;
  assert.ok(fetched <= 1.5 * whole,
    `the six runs fetched ${fetched} trie nodes, for tries of ${whole}`);
  assert.ok(runs.some((r) => r.badTrieAnswers > 0), 'no corrupt answer was caught');
  assert.ok(runs.some((r) => r.malformed > 0), 'the corrupt server was not punished');

  const heal = await v3.postJson('/api/fault/heal', {}, v3.adminUrl);
  assert.equal(heal.body.corruptTrie, false);
  const all = [...validators, joiner];
  await deployAndSettle(validators, keys, all, 10, 'after the second join');
  const lfbs = await Promise.all(all.map(lastFinalized));
  assert.equal(new Set(lfbs.map((b) => b.blockHash)).size, 1,
    lfbs.map((b) => `#${b.blockNumber}`).join(', '));
});

// A validator bonded since the genesis that starts only now, with an empty
// data dir, joins from the last finalized state like an observer, and then
// does a validator's work: a deploy sent to it goes into a block it
// proposes, which every node finalizes.
test('a bonded validator joins from the state, then proposes', async (t) => {
  assert.ok(shard !== null, 'the first test made no shard');
  const { validators, keys, idle } = shard;
  const [v1] = validators;
  const boot = (await v1.getJson('/api/status')).body.address;
  const v4 = new RnodeProcess('v4', path.join(dir, 'v4'),
    [...v1.extraArgs, '--bootstrap', boot],
    { standalone: false, privateKey: idle, keepPorts: true });
  nodes.push(v4);
  await v4.start();
  const status = (await v4.getJson('/api/status')).body;
  assert.equal(status.join.phase, 'done', JSON.stringify(status.join));
  assert.equal(status.isValidator, true);
  const all = [...validators, v4];
  const watch = watchHeight(all);
  const ids = [];
  try {
    await waitFor('the height watch', async () => watch.height > 0,
      { timeoutMs: 10000, intervalMs: 50 });
    // Sent to v4 only (sendDeploy moves on to the next node of its list
    // only on a refusal).
    for (let i = 0; i < 5; ++i) {
      ids.push(await sendDeploy([v4], 0, keys[i % keys.length], kTerm, watch));
      await sleep(200);
    }
  } finally {
    await watch.stop();
  }
  const { statuses } = await settled(all, ids, 'deployed to the joined validator', kDrainMs);
  const v4Key = v4.publicKey;  // the bonds file's form of the key
  const blocks = new Set();
  for (const [id, s] of statuses) {
    assert.equal(s.state, 'DEPLOY_STATE_FINALIZED', `deploy ${id.slice(0, 16)} is ${s.state}`);
    blocks.add(s.block);
  }
  const senders = [];
  for (const hash of blocks) {
    const r = await v1.getJson(`/api/block/${hash}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    senders.push(r.body.blockInfo.sender);
  }
  t.diagnostic(`the joined validator's deploys are in ${blocks.size} blocks by ` +
    `${senders.map((s) => s.slice(0, 8)).join(', ')}`);
  assert.ok(senders.some((s) => s === v4Key),
    `no block by the joined validator (${String(v4Key).slice(0, 16)}) holds its deploys`);
});
