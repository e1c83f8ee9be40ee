// Catching up (issue 48), with real processes on 127.0.0.1: a validator
// stopped while the other two make blocks, started again on a shard that
// has gone idle, says it is not ready (/api/status isReady false, with
// sync.state and how far behind) until it has heard its peers' height and
// fetched what it missed, then is ready with the others' last finalized
// block, without any new block to tell it it was behind. Before, it
// reported ready at once and served its old state until some deploy made
// a block. RNODE_CATCH_UP_DEPLOYS sets the deploys sent while it is down
// (default 60). Run with `node --test`.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');

const { makeTempDir, newPrivateKey, startShard, stopAllAfter, waitFor } = require('./harness');
const { lastFinalized, sendDeploy, settled, sleep, watchHeight } = require('./lifecycle');

const kDeploys = Number(process.env.RNODE_CATCH_UP_DEPLOYS || 60);
const kTerm = 'new x in { x!(0) }';
const kDrainMs = 180000;

const dir = makeTempDir('catch-up');
const nodes = [];

stopAllAfter(dir, nodes);

test('a validator restarted on an idle shard is ready only once it has caught up', async () => {
  const keys = [newPrivateKey(), newPrivateKey(), newPrivateKey()];
  const all = await startShard(dir, { validatorKeys: keys, networkId: 'catchup', nodes });
  const [v1, v2, v3] = all;
  const exit = await v3.stop();
  assert.equal(exit.code, 0, 'v3 did not stop cleanly');

  // The two others make blocks while v3 is down.
  const up = [v1, v2];
  const watch = watchHeight(up);
  const ids = [];
  try {
    for (let i = 0; i < kDeploys; ++i) {
      ids.push(await sendDeploy(up, i, keys[i % 2], kTerm, watch));
      await sleep(50);
    }
  } finally {
    await watch.stop();
  }
  const { lfb } = await settled(up, ids, 'while v3 is down', kDrainMs);
  const height = Math.max(await v1.latestBlockNumber(), await v2.latestBlockNumber());
  assert.ok(height >= 20, `the shard made only ${height} blocks`);

  // v3 again, on its old data dir; the shard is idle now. What its status
  // says from its first answer until it is ready.
  const seen = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      try {
        const r = await v3.getJson('/api/status');
        if (r.status === 200) seen.push(r.body);
      } catch {
        // Not listening yet.
      }
      await sleep(25);
    }
  })();
  try {
    await v3.start();
  } finally {
    polling = false;
    await poller;
  }
  // Ready means caught up: within two numbers of the peers' height...
  const atReady = await v3.latestBlockNumber();
  const ready = (await v3.getJson('/api/status')).body;
  assert.ok(atReady >= height - 2,
    `ready at #${atReady}, the shard at #${height}: ${JSON.stringify(ready.sync)}`);
  assert.equal(ready.isReady, true);
  assert.equal(ready.sync.state, 'caught_up');
  // ... and while it was not, it said why.
  const before = seen.filter((s) => !s.isReady);
  assert.ok(before.length > 0, 'v3 was never seen not ready');
  assert.ok(before.every((s) => s.sync && ['starting', 'behind'].includes(s.sync.state)),
    JSON.stringify(before.map((s) => s.sync)));
  // The same last finalized block as the others, with no new block made.
  let mine = null;
  await waitFor('v3 to have the shard\'s last finalized block', async () => {
    mine = await lastFinalized(v3);
    return mine.blockHash === lfb.blockHash;
  }, { timeoutMs: 30000, intervalMs: 250 }).catch(async (e) => {
    const status = (await v3.getJson('/api/status')).body;
    const metrics = await (await fetch(`${v3.httpUrl}/metrics`)).text()
      .catch(() => '');
    v3.note(metrics.split('\n').filter((l) => /^(casper_|rnode_sync|rnode_behind)/.test(l)).join('\n'));
    throw new Error(`${e.message}: v3 at #${mine && mine.blockNumber}, the others at ` +
      `#${lfb.blockNumber}; v3's sync ${JSON.stringify(status.sync)}\n${v3.output()}`);
  });
  assert.equal(Math.max(await v1.latestBlockNumber(), await v2.latestBlockNumber()), height,
    'a block was made after v3 restarted: it was told, not asked');
});
