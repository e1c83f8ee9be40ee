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

const { after, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const {
  deployIdOfSuccess, makeTempDir, newPrivateKey, rnodeJs, RnodeProcess,
  signDeploy, waitFor,
} = require('./harness');

const kDeploys = Number(process.env.RNODE_LIFECYCLE_DEPLOYS || 600);
const kRatePerSecond = 20;
const kCounter = 'counter';
// Bounds of the waits: generous against a loaded 2-core machine; only a
// stuck shard reaches them.
const kConnectMs = 60000;
const kDrainMs = 300000;

const dir = makeTempDir('lifecycle');
const nodes = [];

after(async () => {
  for (const n of nodes) await n.stop();
  if (process.env.RNODE_TEST_KEEP) {
    for (const n of nodes) fs.writeFileSync(path.join(dir, `${n.label}.log`), n.output());
  }
  // RNODE_TEST_KEEP=1 keeps the nodes' data dirs (and their logs).
  if (!process.env.RNODE_TEST_KEEP) fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function lastFinalized(n) {
  const r = await n.getJson('/api/last-finalized-block');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.blockInfo;
}

// The counter's values at block `blockHash` (the public getDataAtName on a
// string name).
async function counterAt(n, blockHash) {
  const data = await n.ok(n.deployClient, 'getDataAtName', {
    par: { exprs: [{ g_string: kCounter }] }, blockHash, usePreStateHash: false,
  });
  return data.payload.par.map((p) => Number(p.exprs[0].g_int));
}

// deployFinalizationStatus of `id` on `n`: { state, rejectionCount }.
async function statusOf(n, id) {
  const reply = await n.unary(n.deployClient, 'deployFinalizationStatus',
    { deploySig: Buffer.from(id, 'hex') });
  if (reply.message === 'error') return { state: 'UNKNOWN', rejectionCount: 0 };
  return {
    state: reply.status.state,
    rejectionCount: Number(reply.status.rejectionCount),
    block: reply.status.latestBlockHash ? reply.status.latestBlockHash.toString('hex') : null,
  };
}

const kTerminal = new Set(['DEPLOY_STATE_FINALIZED', 'DEPLOY_STATE_FAILED',
  'DEPLOY_STATE_EXPIRED']);

// Waits until every id has a terminal status on every node and the nodes
// agree on it and on the last finalized block; returns the statuses (by
// id) and that block.
async function settled(all, ids, what) {
  let last = '';
  return waitFor(`${what}: every deploy terminal and agreed on every node`, async () => {
    const statuses = new Map();
    for (const id of ids) {
      const each = await Promise.all(all.map((n) => statusOf(n, id)));
      const states = new Set(each.map((s) => s.state));
      if (states.size !== 1 || !kTerminal.has(each[0].state)) {
        last = `${id.slice(0, 16)}: ${each.map((s) => s.state).join(', ')}`;
        return null;
      }
      statuses.set(id, each[0]);
    }
    // Read after the statuses: a terminal status does not change as the
    // last finalized block moves on, so the counter there must match.
    const lfbs = await Promise.all(all.map(lastFinalized));
    if (new Set(lfbs.map((b) => b.blockHash)).size !== 1) {
      last = `last finalized blocks differ: ${lfbs.map((b) => b.blockNumber).join(', ')}`;
      return null;
    }
    return { statuses, lfb: lfbs[0] };
  }, { timeoutMs: kDrainMs, intervalMs: 1000 }).catch((e) => {
    throw new Error(`${e.message}; last seen: ${last}\n` +
      `${all.map((m) => m.output()).join('\n')}`);
  });
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
  const addr = keys.map((k) => rnodeJs.getAddrFromPrivateKey(k));
  const bonds = path.join(dir, 'bonds.txt');
  const wallets = path.join(dir, 'wallets.txt');
  fs.writeFileSync(bonds, addr.map((a) => `${a.pubKey} 1000\n`).join(''));
  fs.writeFileSync(wallets, addr.map((a) => `${a.revAddr},5000000000000000\n`).join(''));
  const common = [
    '--bonds-file', bonds, '--wallets-file', wallets,
    '--deploy-timestamp', String(Date.now()),
    '--network-id', 'js-lifecycle', '--fault-tolerance-threshold', '0.1',
    '--lookup-interval', '1s',
  ];
  const node = (label, key, extra = []) => {
    const n = new RnodeProcess(label, path.join(dir, label), [...common, ...extra],
      { standalone: false, privateKey: key, keepPorts: true });
    nodes.push(n);
    return n;
  };
  const v1 = node('v1', keys[0]);
  await v1.start();
  const boot = ['--bootstrap', (await v1.getJson('/api/status')).body.address];
  const v2 = node('v2', keys[1], boot);
  const v3 = node('v3', keys[2], boot);
  await Promise.all([v2.start(), v3.start()]);
  const all = [v1, v2, v3];
  await waitFor('every validator connected to the 2 others', async () => {
    for (const n of all) {
      if ((await n.getJson('/api/status')).body.peers < 2) return false;
    }
    return true;
  }, { timeoutMs: kConnectMs, intervalMs: 200 });

  // The newest block any validator has, refreshed in the background (a
  // deploy's window counts from it).
  let height = 0;
  let sending = true;
  const heights = (async () => {
    while (sending) {
      try {
        height = Math.max(height, ...await Promise.all(all.map((n) => n.latestBlockNumber())));
      } catch {
        // A call that fails leaves the last height.
      }
      await sleep(250);
    }
  })();

  const send = async (i, term) => {
    for (let attempt = 0; ; ++attempt) {
      const n = all[(i + attempt) % all.length];
      const d = signDeploy(keys[(i + attempt) % keys.length],
        { term, validAfterBlockNumber: Math.max(0, height - 5) });
      const reply = await n.unary(n.deployClient, 'doDeploy', d.proto);
      if (reply.message !== 'error') {
        assert.equal(deployIdOfSuccess(reply.result), d.id);
        return d.id;
      }
      const why = reply.error.messages.join('; ');
      assert.match(why, /catching up/, `doDeploy #${i} to ${n.label}: ${why}`);
      assert.ok(attempt < 100, `#${i}: no validator takes deploys`);
      await sleep(100);
    }
  };

  const initId = await send(0, `@"${kCounter}"!(0)`);
  await waitFor('the counter to be set', async () =>
    (await statusOf(v1, initId)).state === 'DEPLOY_STATE_FINALIZED',
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
  sending = false;
  await heights;
  assert.equal(new Set(ids).size, kDeploys);
  const everything = [initId, ...ids];

  const before = await settled(all, everything, 'after the drain');
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
  const again = await settled(all, everything, 'after the restart');
  for (const [id, s] of before.statuses) {
    const now = again.statuses.get(id);
    assert.equal(now.state, s.state, `${id} after the restart`);
    // Rejections are on record in the stored blocks (more blocks may have
    // come since, none takes one away).
    assert.ok(now.rejectionCount >= s.rejectionCount, `${id} after the restart`);
  }
  await checkCounter(all, again.statuses, again.lfb, initId);
});
