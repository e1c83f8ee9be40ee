// A shard of real `rnode run` processes on 127.0.0.1: three validators
// (fault tolerance 0.1) and a read-only observer that find each other
// through the first validator. 300 deploys go round-robin to the running
// validators while one validator is killed with SIGKILL and restarted,
// another is stopped with SIGSTOP for 20 s and resumed, and a fourth
// (unbonded) validator joins late. At the end every deploy is finalized on
// every node, and every node has the same last finalized block and
// post-state root. Run with `node --test`.
'use strict';

const { after, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const {
  deployIdOfSuccess, makeTempDir, newPrivateKey, rnodeJs, RnodeProcess,
  signDeploy, waitFor,
} = require('./harness');

const kDeploys = 300;
// Deploys in flight at once (each waits for the node's reply only).
const kInFlight = 8;
const kStopSeconds = 20;
// Bounds of the waits: all generous against a loaded 2-core machine;
// only a stuck shard reaches them.
const kConnectMs = 60000;
const kCatchUpMs = 180000;

const dir = makeTempDir('shard');
const nodes = [];

after(async () => {
  for (const n of nodes) {
    try {
      if (n.child !== null && n.exit === null) n.signal('SIGCONT');
    } catch {
      // Already gone.
    }
    await n.stop();
  }
  // RNODE_TEST_KEEP=1 keeps the nodes' data dirs (and their logs).
  if (!process.env.RNODE_TEST_KEEP) fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function status(n) {
  const r = await n.getJson('/api/status');
  assert.equal(r.status, 200);
  return r.body;
}

async function lastFinalized(n) {
  const r = await n.getJson('/api/last-finalized-block');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.blockInfo;
}

test('a 3-validator shard finalizes 300 deploys through kill -9, SIGSTOP and a late joiner',
  async () => {
    const keys = [newPrivateKey(), newPrivateKey(), newPrivateKey(), newPrivateKey()];
    const addr = keys.map((k) => rnodeJs.getAddrFromPrivateKey(k));
    const bonds = path.join(dir, 'bonds.txt');
    const wallets = path.join(dir, 'wallets.txt');
    // The first three are bonded; the fourth only has a wallet.
    fs.writeFileSync(bonds, addr.slice(0, 3).map((a) => `${a.pubKey} 1000\n`).join(''));
    fs.writeFileSync(wallets,
      addr.map((a) => `${a.revAddr},5000000000000000\n`).join(''));
    const common = [
      '--bonds-file', bonds, '--wallets-file', wallets,
      '--deploy-timestamp', String(Date.now()),
      '--network-id', 'js-shard', '--fault-tolerance-threshold', '0.1',
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
    const boot = ['--bootstrap', (await status(v1)).address];
    assert.match(boot[1], /^rnode:\/\/[0-9a-f]{40}@127\.0\.0\.1\?protocol=\d+&discovery=\d+$/);
    const v2 = node('v2', keys[1], boot);
    const v3 = node('v3', keys[2], boot);
    const observer = node('observer', null, boot);
    await Promise.all([v2.start(), v3.start(), observer.start()]);
    const all = [v1, v2, v3, observer];

    // Discovery makes a full mesh: every node sees the three others.
    await waitFor('every node to be connected to the 3 others', async () => {
      for (const n of all) if ((await status(n)).peers < 3) return false;
      return true;
    }, { timeoutMs: kConnectMs, intervalMs: 200 });
    for (const n of all) {
      assert.equal((await lastFinalized(n)).blockNumber, 0, `${n.label} starts at genesis`);
    }

    // Deploys round-robin over the validators that run; each is signed by
    // one of the bonded validators' wallets. Every acknowledged id is kept.
    const acknowledged = [];
    const sentTo = new Map();  // id -> where and when, for failure reports
    const t0 = Date.now();
    const phase = (what) => sentTo.set(what, `${what} at ${Date.now() - t0} ms`);
    let next = 0;
    const running = new Set([v1, v2, v3]);
    async function submit(count) {
      const end = next + count;
      const worker = async () => {
        while (next < end) {
          const i = next++;
          const targets = [v1, v2, v3].filter((n) => running.has(n));
          // A validator catching up with its peers refuses deploys (it
          // cannot judge their window), and so does one that has not yet
          // heard a proven bonded validator since it (re)started (it has
          // nobody to keep a copy); the client tries the next one.
          let n = null;
          let d = null;
          let reply = null;
          for (let attempt = 0; ; ++attempt) {
            n = targets[(i + attempt) % targets.length];
            // The newest block any running validator has (a validator just
            // restarted is behind, and a window counted from its view may
            // close before its deploy is in a block: docs/p2p.md
            // "Measured").
            const heights = await Promise.all(targets.map((m) => m.latestBlockNumber()));
            d = signDeploy(keys[i % 3], {
              term: `new x in { x!(${i}) }`,
              validAfterBlockNumber: Math.max(0, Math.max(...heights) - 5),
            });
            reply = await n.unary(n.deployClient, 'doDeploy', d.proto);
            if (reply.message !== 'error') break;
            const why = reply.error.messages.join('; ');
            assert.match(why, /catching up|reaches no other validator/, `doDeploy #${i} to ${n.label}: ${why}`);
            assert.ok(attempt < 200, `#${i}: no validator takes deploys`);
            await sleep(100);
          }
          assert.equal(deployIdOfSuccess(reply.result), d.id);
          acknowledged.push(d.id);
          sentTo.set(d.id, `#${i} to ${n.label} at ${Date.now() - t0} ms`);
        }
      };
      await Promise.all(Array.from({ length: kInFlight }, worker));
    }

    await submit(100);

    // A validator killed with SIGKILL and restarted on its data dir.
    running.delete(v2);
    phase('kill v2');
    await v2.kill();
    await submit(50);
    await v2.start();
    phase('v2 restarted');
    running.add(v2);
    await submit(50);

    // A validator stopped for 20 s, deploys flowing meanwhile.
    running.delete(v3);
    v3.signal('SIGSTOP');
    phase('v3 stopped');
    const stoppedAt = Date.now();
    await submit(50);
    await sleep(Math.max(0, stoppedAt + kStopSeconds * 1000 - Date.now()));
    v3.signal('SIGCONT');
    phase('v3 resumed');
    running.add(v3);

    // A fourth validator (unbonded) joins late and syncs.
    const v4 = node('v4', keys[3], boot);
    await v4.start();
    all.push(v4);
    await submit(kDeploys - next);
    assert.equal(acknowledged.length, kDeploys);

    // Every acknowledged deploy is finalized on every node.
    for (const n of all) {
      let missing = [];
      try {
        await waitFor(`${n.label} to finalize all ${kDeploys} deploys`, async () => {
          missing = [];
          for (const id of acknowledged) {
            const r = await n.getJson(`/api/deploy/${id}`);
            if (r.status !== 200 || !r.body.isFinalized) {
              missing.push(`${id.slice(0, 16)} (${sentTo.get(id)}): ${r.status}`);
            }
          }
          return missing.length === 0;
        }, { timeoutMs: kCatchUpMs, intervalMs: 500 });
      } catch (e) {
        const lfbs = await Promise.all(all.map(async (m) => {
          try {
            const b = await lastFinalized(m);
            return `${m.label} #${b.blockNumber}`;
          } catch (err) {
            return `${m.label}: ${err.message}`;
          }
        }));
        const phases = [...sentTo.entries()].filter(([k]) => !/^30/.test(k)).map(([, v]) => v);
        throw new Error(`${e.message}; ${missing.length} not final:\n` +
          `${missing.join('\n')}\nphases: ${phases.join(', ')}\n` +
          `last finalized: ${lfbs.join(', ')}\n` +
          `${all.map((m) => m.output()).join('\n')}`);
      }
    }

    // One last finalized block, with one post-state root, on every node.
    const agreed = await waitFor('every node to have the same last finalized block',
      async () => {
        const lfbs = await Promise.all(all.map(lastFinalized));
        const hashes = new Set(lfbs.map((b) => b.blockHash));
        return hashes.size === 1 ? lfbs : null;
      }, { timeoutMs: kCatchUpMs, intervalMs: 500 });
    const roots = new Set(agreed.map((b) => b.postStateHash));
    assert.equal(roots.size, 1, `post-state roots differ: ${[...roots].join(', ')}`);
    assert.ok(agreed[0].blockNumber > 0);
    for (const n of all) assert.equal(n.exit, null, `${n.label} is still running`);
  });
