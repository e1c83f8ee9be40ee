// Figures of a standalone node (not a test; run by hand):
//   RNODE_BIN=build/bin/rnode node integration/js/standalone_figures.js
// Prints the time from `rnode run --standalone` to ready (5 fresh starts),
// a deploy's time from doDeploy to its block-finalised event (p50/p95 over
// 100 deploys sent one after another) and the node's RSS after 1,000
// deploys (sent 16 at a time).
'use strict';

const fs = require('node:fs');
const {
  RnodeProcess, WebSocket, deployIdOfSuccess, makeTempDir, signDeploy,
} = require('./harness');

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function timeToReady() {
  const out = [];
  for (let i = 0; i < 5; ++i) {
    const dir = makeTempDir('figures-ready');
    const node = new RnodeProcess('figures-ready', dir);
    const t0 = process.hrtime.bigint();
    await node.start();
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
    await node.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out.sort((a, b) => a - b);
}

async function main() {
  const ready = await timeToReady();
  console.log(`ready after start (ms, 5 fresh data dirs): min ${ready[0].toFixed(0)} ` +
    `median ${ready[2].toFixed(0)} max ${ready[4].toFixed(0)}`);

  const dir = makeTempDir('figures');
  const node = new RnodeProcess('figures', dir);
  await node.start();
  const finalized = new Map();  // deploy id -> resolve
  const ws = new WebSocket(node.wsUrl);
  ws.on('message', (data) => {
    const e = JSON.parse(data.toString());
    if (e.event !== 'block-finalised') return;
    for (const d of e.payload.deploys) {
      const done = finalized.get(d.id);
      if (done) done();
    }
  });
  await new Promise((resolve) => ws.once('open', resolve));

  async function send(term) {
    const deploy = signDeploy(node.privateKey, {
      term, validAfterBlockNumber: await node.latestBlockNumber(),
    });
    const waiting = new Promise((resolve) => finalized.set(deploy.id, resolve));
    const t0 = process.hrtime.bigint();
    const reply = await node.ok(node.deployClient, 'doDeploy', deploy.proto);
    deployIdOfSuccess(reply.result);
    await waiting;
    finalized.delete(deploy.id);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  }

  const latencies = [];
  for (let i = 0; i < 100; ++i) latencies.push(await send(`@"figures"!(${i})`));
  latencies.sort((a, b) => a - b);
  console.log(`doDeploy -> block-finalised (ms, 100 sequential deploys): ` +
    `p50 ${percentile(latencies, 0.5).toFixed(1)} p95 ${percentile(latencies, 0.95).toFixed(1)} ` +
    `max ${latencies[99].toFixed(1)}`);

  const t0 = Date.now();
  for (let i = 0; i < 1000; i += 16) {
    const batch = [];
    for (let j = i; j < Math.min(i + 16, 1000); ++j) batch.push(send(`@"bulk"!(${j})`));
    await Promise.all(batch);
  }
  const seconds = (Date.now() - t0) / 1000;
  const metrics = await (await fetch(`${node.httpUrl}/metrics`)).text();
  const rss = /^process_resident_memory_bytes (\d+)/m.exec(metrics)[1];
  const blocks = /^casper_latest_block_number (\d+)/m.exec(metrics)[1];
  console.log(`1,000 more deploys (16 in flight) finalized in ${seconds.toFixed(1)} s ` +
    `(${(1000 / seconds).toFixed(0)}/s, chain at block ${blocks}); ` +
    `RSS ${(Number(rss) / (1 << 20)).toFixed(0)} MiB`);
  ws.close();
  await node.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => { console.error(e); process.exit(1); });
