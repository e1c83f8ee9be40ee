// Deploys that conflict, from a client written to the public schema
// (@tgrospic/rnode-grpc-js signing, the public gRPC and HTTP APIs): three
// validators on 127.0.0.1 take increments of one shared counter
// (`for (@n <- @"counter") { @"counter"!(n + 1) }`) round-robin at 20 a
// second. Parallel blocks race for the counter, merges reject increments,
// and the validators propose them again. After the drain every
// acknowledged deploy has a terminal status, the same on every node; the
// counter at the last finalized block equals the number reported
// FINALIZED; none is EXPIRED. The same holds after every node restarts.
// RNODE_LIFECYCLE_DEPLOYS sets the count (default 600). Run with
// `node --test`.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');

const {
  makeTempDir, newPrivateKey, startShard, stopAllAfter, waitFor,
} = require('./harness');
const { sendDeploy, settled, sleep, statusOf, watchHeight } = require('./lifecycle');

const kDeploys = Number(process.env.RNODE_LIFECYCLE_DEPLOYS || 600);
const kRatePerSecond = 20;
const kCounter = 'counter';
// Bounds of the waits: generous against a loaded 2-core machine; only a
// stuck shard reaches them.
const kConnectMs = 60000;
const kDrainMs = 300000;

const dir = makeTempDir('lifecycle');
const nodes = [];

stopAllAfter(dir, nodes);

// The counter's values at block `blockHash` (the public getDataAtName on a
// string name).
async function counterAt(n, blockHash) {
  const data = await n.ok(n.deployClient, 'getDataAtName', {
    par: { exprs: [{ g_string: kCounter }] }, blockHash, usePreStateHash: false,
  });
  return data.payload.par.map((p) => Number(p.exprs[0].g_int));
}

// Where an expired deploy went (for the failure message): its window,
// the blocks holding it and the blocks whose merge rejected it, with
// their numbers and creators.
async function whereabouts(n, id, lfb) {
  const view = await n.getJson(`/api/deploy/${id}?view=full`);
  const out = [`${id.slice(0, 16)}: validAfter ${view.body.validAfterBlockNumber}`];
  const rejecting = [];
  for (let end = lfb.blockNumber; end > 0; end -= 50) {
    const r = await n.getJson(`/api/blocks/${Math.max(1, end - 49)}/${end}`);
    if (r.status !== 200) break;
    for (const b of r.body) {
      const info = b.blockInfo || b;
      const rej = (info.rejectedDeploys || []).map((x) => x.sig || x);
      if (rej.includes(id)) rejecting.push(`#${info.blockNumber} by ${info.sender.slice(0, 8)}`);
      if ((b.deploys || []).some((d) => d.sig === id)) {
        rejecting.push(`holder #${info.blockNumber} by ${info.sender.slice(0, 8)}`);
      }
    }
  }
  out.push(`latest copy #${view.body.blockNumber}`, ...rejecting);
  return out.join(', ');
}

// The counter equals the FINALIZED increments, on every node, and none
// expired; returns the counts.
async function checkCounter(all, statuses, lfb, initId) {
  const counts = { finalized: 0, failed: 0, expired: 0, rejected: 0 };
  for (const [id, s] of statuses) {
    if (id === initId) continue;
    if (s.state === 'DEPLOY_STATE_FINALIZED') ++counts.finalized;
    if (s.state === 'DEPLOY_STATE_FAILED') ++counts.failed;
    if (s.state === 'DEPLOY_STATE_EXPIRED') {
      ++counts.expired;
      console.log(`expired: ${id} rejections ${s.rejectionCount} latest block ${s.block}`);
    }
    if (s.rejectionCount > 0) ++counts.rejected;
  }
  assert.equal(statuses.get(initId).state, 'DEPLOY_STATE_FINALIZED');
  for (const n of all) {
    assert.deepEqual(await counterAt(n, lfb.blockHash), [counts.finalized],
      `${n.label}: the counter at block ${lfb.blockNumber} against ` +
      `${JSON.stringify(counts)}`);
  }
  if (counts.expired > 0) {
    const lost = [...statuses].filter(([, s]) => s.state === 'DEPLOY_STATE_EXPIRED');
    const where = [];
    for (const [id] of lost.slice(0, 5)) where.push(await whereabouts(all[0], id, lfb));
    assert.fail(`expired: ${JSON.stringify(counts)}\n${where.join('\n')}`);
  }
  assert.equal(counts.failed, 0, `failed: ${JSON.stringify(counts)}`);
  return counts;
}

test(`${kDeploys} increments of one counter at ${kRatePerSecond}/s on 3 validators: ` +
  'the counter equals the deploys reported FINALIZED, before and after a restart',
async () => {
  const keys = [newPrivateKey(), newPrivateKey(), newPrivateKey()];
  const all = await startShard(dir, { validatorKeys: keys, networkId: 'js-lifecycle', nodes,
    connectMs: kConnectMs });
  // The newest block any validator has (a deploy's window counts from it).
  const watch = watchHeight(all);
  const send = (i, term) => sendDeploy(all, i, keys[i % keys.length], term, watch);

  const initId = await send(0, `@"${kCounter}"!(0)`);
  await waitFor('the counter to be set', async () =>
    (await statusOf(all[0], initId)).state === 'DEPLOY_STATE_FINALIZED',
  { timeoutMs: kConnectMs, intervalMs: 200 });

  // Paced: increment i is due at t0 + i / rate, whatever the replies take.
  const increment = `for (@n <- @"${kCounter}") { @"${kCounter}"!(n + 1) }`;
  const t0 = Date.now();
  const pending = [];
  for (let i = 0; i < kDeploys; ++i) {
    const due = t0 + (i * 1000) / kRatePerSecond;
    if (due > Date.now()) await sleep(due - Date.now());
    pending.push(send(i + 1, increment));
  }
  const ids = await Promise.all(pending);
  await watch.stop();
  assert.equal(new Set(ids).size, kDeploys);
  const everything = [initId, ...ids];

  const before = await settled(all, everything, 'after the drain', kDrainMs);
  const counts = await checkCounter(all, before.statuses, before.lfb, initId);
  // The figures, for the closing note and docs/performance.md.
  console.log(`lifecycle: ${kDeploys} increments sent in ${(Date.now() - t0) / 1000} s; ` +
    `${counts.finalized} FINALIZED, ${counts.rejected} rejected by a merge then ` +
    `proposed again; counter ${counts.finalized} at block ${before.lfb.blockNumber}`);
  assert.equal(counts.finalized, kDeploys, JSON.stringify(counts));

  // Every node restarts on its data dir: the statuses are read from the
  // chain, not a memory cache, and stay the same.
  for (const n of all) await n.stop();
  for (const n of all) await n.start();
  const again = await settled(all, everything, 'after the restart', kDrainMs);
  for (const [id, s] of before.statuses) {
    const now = again.statuses.get(id);
    assert.equal(now.state, s.state, `${id} after the restart`);
    // Rejections are on record in the stored blocks (more blocks may have
    // come since, none takes one away).
    assert.ok(now.rejectionCount >= s.rejectionCount, `${id} after the restart`);
  }
  await checkCounter(all, again.statuses, again.lfb, initId);
});
