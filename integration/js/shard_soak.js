// Hand-run soak of a local shard (not part of the test command): three
// validators (fault tolerance 0.1) and an observer as real processes,
// deploys at a fixed rate round-robin over the validators (open loop: a
// slow node does not slow the sender) for a number of minutes. Every
// minute it samples each node's resident memory and queues from /metrics;
// at the end it checks that every acknowledged deploy is finalized on every
// node and prints a table: RSS per minute, growth after warm-up, queue
// maxima, deploy finalization latency (observed by polling).
//
//   node integration/js/shard_soak.js [--rate 50] [--minutes 10] [--warmup 2]
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const {
  deployIdOfSuccess, makeTempDir, newPrivateKey, rnodeJs, RnodeProcess,
  signDeploy, waitFor,
} = require('./harness');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const kRate = arg('rate', 50);
const kMinutes = arg('minutes', 10);
const kWarmupMinutes = arg('warmup', 2);

async function metrics(n) {
  const res = await fetch(`${n.httpUrl}/metrics`);
  const out = {};
  for (const line of (await res.text()).split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+)$/.exec(line);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

// Where v1's memory is, sampled with the RSS (MiB; the heap figures only
// when the node runs on jemalloc).
const kMemoryParts = ['process_heap_allocated_bytes',
  'process_heap_resident_bytes', 'rnode_rocksdb_memtable_bytes',
  'rnode_rocksdb_table_readers_bytes', 'rnode_rocksdb_block_cache_bytes',
  'rnode_trie_cache_bytes'];

const kQueues = ['casper_blocks_wanted', 'casper_peer_blocks_waiting',
  'rnode_deploy_pool_size', 'rnode_consensus_queue_depth',
  'casper_gossiped_deploys_held'];

async function main() {
  const dir = makeTempDir('soak');
  const keys = [newPrivateKey(), newPrivateKey(), newPrivateKey()];
  const addr = keys.map((k) => rnodeJs.getAddrFromPrivateKey(k));
  const bonds = path.join(dir, 'bonds.txt');
  const wallets = path.join(dir, 'wallets.txt');
  fs.writeFileSync(bonds, addr.map((a) => `${a.pubKey} 1000\n`).join(''));
  fs.writeFileSync(wallets,
    addr.map((a) => `${a.revAddr},5000000000000000\n`).join(''));
  const common = ['--bonds-file', bonds, '--wallets-file', wallets,
    '--deploy-timestamp', String(Date.now()), '--network-id', 'soak',
    '--fault-tolerance-threshold', '0.1'];
  const v1 = new RnodeProcess('v1', path.join(dir, 'v1'), common,
    { standalone: false, privateKey: keys[0] });
  await v1.start();
  const boot = ['--bootstrap', (await v1.getJson('/api/status')).body.address];
  const v2 = new RnodeProcess('v2', path.join(dir, 'v2'), [...common, ...boot],
    { standalone: false, privateKey: keys[1] });
  const v3 = new RnodeProcess('v3', path.join(dir, 'v3'), [...common, ...boot],
    { standalone: false, privateKey: keys[2] });
  const obs = new RnodeProcess('observer', path.join(dir, 'observer'),
    [...common, ...boot], { standalone: false });
  await Promise.all([v2.start(), v3.start(), obs.start()]);
  const validators = [v1, v2, v3];
  const all = [...validators, obs];
  await waitFor('a full mesh', async () => {
    for (const n of all) {
      if ((await n.getJson('/api/status')).body.peers < 3) return false;
    }
    return true;
  }, { timeoutMs: 60000 });

  const sent = new Map();  // id -> send time
  let failed = 0;
  let inFlight = 0;
  // The newest block number any validator has, refreshed 4 times a
  // second: a deploy's window is 50 blocks, a few seconds at this rate.
  let latest = 0;
  const latestTimer = setInterval(async () => {
    try {
      const ns = await Promise.all(validators.map((n) => n.latestBlockNumber()));
      latest = Math.max(latest, ...ns);
    } catch {
      // Kept.
    }
  }, 250);
  const samples = [];  // per minute: {minute, rss: [..], queues: {..}}
  const start = Date.now();
  const end = start + kMinutes * 60000;
  let i = 0;
  let nextSample = start;
  const rssSeries = all.map(() => []);
  const queueMax = Object.fromEntries(kQueues.map((q) => [q, 0]));
  while (Date.now() < end) {
    if (Date.now() >= nextSample) {
      const ms = await Promise.all(all.map(metrics));
      const minute = Math.round((Date.now() - start) / 60000);
      ms.forEach((m, k) => rssSeries[k].push(m.process_resident_memory_bytes));
      for (const q of kQueues) {
        for (const m of ms) queueMax[q] = Math.max(queueMax[q], m[q] ?? 0);
      }
      samples.push({ minute, rss: ms.map((m) => m.process_resident_memory_bytes),
        v1: Object.fromEntries(kMemoryParts.map((p) => [p, ms[0][p]])),
        blocks: ms[0].casper_dag_blocks });
      console.log(`minute ${minute}: sent ${sent.size}, failed ${failed}, ` +
        `in flight ${inFlight}, RSS MiB ` +
        ms.map((m) => (m.process_resident_memory_bytes / 2 ** 20).toFixed(0)).join(' '));
      nextSample += 60000;
    }
    // Open loop: deploy number i is due at start + i / rate.
    const due = start + (i * 1000) / kRate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, Math.min(wait, 50)));
    if (Date.now() < due) continue;
    const n = validators[i % 3];
    const d = signDeploy(keys[i % 3], {
      term: `new x in { x!(${i}) }`,
      validAfterBlockNumber: Math.max(0, latest - 5),
    });
    i += 1;
    inFlight += 1;
    const t0 = Date.now();
    n.ok(n.deployClient, 'doDeploy', d.proto).then((reply) => {
      deployIdOfSuccess(reply.result);
      sent.set(d.id, t0);
    }).catch((e) => {
      failed += 1;
      if (failed < 5) console.log(`deploy failed: ${e.message}`);
    }).finally(() => { inFlight -= 1; });
  }
  clearInterval(latestTimer);
  await waitFor('the last replies', async () => inFlight === 0, { timeoutMs: 60000 });
  const finalSample = await Promise.all(all.map(metrics));
  finalSample.forEach((m, k) => rssSeries[k].push(m.process_resident_memory_bytes));

  // Finalization of every acknowledged deploy on every node.
  const ids = [...sent.keys()];
  for (const n of all) {
    await waitFor(`${n.label} to finalize ${ids.length} deploys`, async () => {
      for (const id of ids) {
        const r = await n.getJson(`/api/deploy/${id}`);
        if (r.status !== 200 || !r.body.isFinalized) return false;
      }
      return true;
    }, { timeoutMs: 300000, intervalMs: 2000 });
  }
  const lfbs = await Promise.all(all.map(async (n) =>
    (await n.getJson('/api/last-finalized-block')).body.blockInfo));
  const m1 = await metrics(v1);

  console.log('\n| node | RSS after warm-up (MiB) | RSS at end (MiB) | growth | min..max after warm-up (MiB) |');
  console.log('|---|---|---|---|---|');
  all.forEach((n, k) => {
    const series = rssSeries[k].slice(kWarmupMinutes);
    const first = series[0];
    const last = series[series.length - 1];
    const lo = Math.min(...series);
    const hi = Math.max(...series);
    console.log(`| ${n.label} | ${(first / 2 ** 20).toFixed(1)} | ${(last / 2 ** 20).toFixed(1)} | ` +
      `${(((last - first) / first) * 100).toFixed(1)} % | ${(lo / 2 ** 20).toFixed(1)}..${(hi / 2 ** 20).toFixed(1)} |`);
  });
  const mib = (v) => (v === undefined ? '-' : (v / 2 ** 20).toFixed(1));
  console.log(`\n| minute | v1 RSS | ${kMemoryParts.join(' | ')} | DAG blocks |`);
  console.log(`|${'---|'.repeat(kMemoryParts.length + 3)}`);
  for (const smp of samples) {
    console.log(`| ${smp.minute} | ${mib(smp.rss[0])} | ` +
      `${kMemoryParts.map((p) => mib(smp.v1[p])).join(' | ')} | ${smp.blocks} |`);
  }
  console.log(`\nrate ${kRate}/s for ${kMinutes} min: acknowledged ${sent.size}, failed ${failed}; ` +
    `all finalized on ${all.length} nodes; last finalized #${lfbs[0].blockNumber} ` +
    `(same hash on all: ${new Set(lfbs.map((b) => b.blockHash)).size === 1})`);
  console.log(`queue maxima over the minute samples: ${JSON.stringify(queueMax)}`);
  console.log(`v1: blocks ${m1.casper_dag_blocks}, deploys in blocks ${m1.casper_block_deploys_total}, ` +
    `validation p/deploy histogram sum ${m1.casper_block_validation_seconds_per_deploy_sum}`);
  // Latency as each validator saw its own deploys (admission to the first
  // block holding it, and to finalization), means from the histograms.
  const mean = (m, h) => (m[`${h}_sum`] / m[`${h}_count`]).toFixed(3);
  for (const [k, n] of validators.entries()) {
    const m = k === 0 ? m1 : await metrics(n);
    console.log(`${n.label}: inclusion mean ${mean(m, 'rnode_deploy_inclusion_seconds')} s, ` +
      `finalization mean ${mean(m, 'rnode_deploy_finalization_seconds')} s, ` +
      `blocks made ${m['casper_propose_total{result="created"}'] ?? 0}, ` +
      `proposals with nothing to propose ${m['casper_propose_total{result="empty"}'] ?? 0}, ` +
      `deploys expired ${m.rnode_deploys_expired_total ?? 0}`);
  }
  for (const n of all) await n.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
