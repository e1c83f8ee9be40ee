// What the tests of deploys' statuses share (deploy_lifecycle and
// transfers): a background watch of the shard's height, round-robin sends
// that retry a validator still catching up, a deploy's status on a node,
// and the wait until every deploy has the same terminal status everywhere.
'use strict';

const assert = require('node:assert/strict');

const { deployIdOfSuccess, signDeploy, waitFor } = require('./harness');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A sleep that does not keep the process alive: a background loop left
// running by a failed test must not hang the run.
const idle = (ms) => new Promise((r) => setTimeout(r, ms).unref());

const kTerminal = new Set(['DEPLOY_STATE_FINALIZED', 'DEPLOY_STATE_FAILED',
  'DEPLOY_STATE_EXPIRED']);

// Follows the highest block number among `all` every 250 ms until
// stop() (which resolves once the watch has ended). A failed call leaves
// the last height.
function watchHeight(all) {
  let height = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        height = Math.max(height, ...await Promise.all(all.map((n) => n.latestBlockNumber())));
      } catch {
        // Keep the last height.
      }
      await idle(250);
    }
  })();
  return {
    get height() { return height; },
    stop: async () => { running = false; await loop; },
  };
}

// Signs `term` with `key` (valid after the watched height less 5) and sends
// it to all[i mod n], at most 100 times, the next validator each time:
// - refused as catching up (never pooled), it is signed again (the height
//   has moved on), unless an earlier attempt pooled it;
// - refused as "reaches no other validator" (no peer acknowledged a copy in
//   time: a slow peer, as under the sanitizers), the same signed deploy goes
//   again, since a peer that got the copy late may still include it and a
//   deploy is kept once by its id.
// Resolves to the deploy id; any other refusal fails the test. `options` go
// to signDeploy (phloLimit, ...).
async function sendDeploy(all, i, key, term, watch, options = {}) {
  const sign = () => signDeploy(key,
    { term, validAfterBlockNumber: Math.max(0, watch.height - 5), ...options });
  let d = sign();
  let resent = false;
  for (let attempt = 0; ; ++attempt) {
    const n = all[(i + attempt) % all.length];
    const reply = await n.unary(n.deployClient, 'doDeploy', d.proto);
    if (reply.message !== 'error') {
      assert.equal(deployIdOfSuccess(reply.result), d.id);
      return d.id;
    }
    const why = reply.error.messages.join('; ');
    // A resent deploy that a peer holds or included already is taken.
    if (resent && /is already in (the pool|block)/.test(why)) return d.id;
    assert.match(why, /catching up|reaches no other validator/,
      `doDeploy #${i} to ${n.label}: ${why}`);
    assert.ok(attempt < 100, `#${i}: no validator takes deploys`);
    // Once pooled somewhere, the same deploy goes again for good: a new
    // one beside it could run twice.
    resent = resent || !/catching up/.test(why);
    if (!resent) d = sign();
    await sleep(100);
  }
}

// deployFinalizationStatus of `id` on `n`: { state, rejectionCount, block }
// (state UNKNOWN when the node answers with an error).
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

async function lastFinalized(n) {
  const r = await n.getJson('/api/last-finalized-block');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.blockInfo;
}

// Waits (at most `timeoutMs`) until every id has a terminal status on every
// node of `all`, the nodes agree on it and on the last finalized block;
// returns { statuses (by id), lfb }. The failure names the last deploy
// seen unsettled and carries the nodes' output.
async function settled(all, ids, what, timeoutMs) {
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
    // last finalized block moves on, so what the caller reads there must
    // match it.
    const lfbs = await Promise.all(all.map(lastFinalized));
    if (new Set(lfbs.map((b) => b.blockHash)).size !== 1) {
      last = `last finalized blocks differ: ${lfbs.map((b) => b.blockNumber).join(', ')}`;
      return null;
    }
    return { statuses, lfb: lfbs[0] };
  }, { timeoutMs, intervalMs: 1000 }).catch((e) => {
    throw new Error(`${e.message}; last seen: ${last}\n` +
      `${all.map((m) => m.output()).join('\n')}`);
  });
}

module.exports = { lastFinalized, sendDeploy, settled, sleep, statusOf, watchHeight };
