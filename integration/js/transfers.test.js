// REV transfers that conflict, from a client written to the public schema:
// wallets funded at genesis send each other seeded random amounts through
// the public vault interface (findOrCreate, deployerAuthKey, transfer),
// round-robin to three validators on 127.0.0.1 at 20 a second. Each round
// pairs the wallets differently, so transfers share wallets in both
// directions and parallel blocks change the same balances; balances are
// mergeable number channels (docs/merge.md §7), so a merge adds the
// changes rather than rejecting one (the test prints how many were
// rejected all the same). Every 50th deploy has a phlo limit of 1: it runs
// out of phlo (FAILED), is charged and moves nothing.
//
// After the drain every deploy has a terminal status, the same on every
// node (a read-only observer, which never pools a deploy, included), and
// at the last finalized block each wallet holds
// its genesis balance, less what it sent and plus what it received in the
// transfers reported FINALIZED, less the charge (cost x phlo price) of
// each of its deploys reported FINALIZED or FAILED. So the wallets' total
// plus the fees is conserved, and a transfer is FINALIZED exactly when its
// effect is in the balances (one whose effect was dropped, or counted
// twice, leaves two wallets off by its amount).
//
// RNODE_TRANSFERS sets the count (default 300; the acceptance run of issue
// 44 is 2,000), RNODE_TRANSFER_WALLETS the wallets (default 100) and
// RNODE_TRANSFER_SEED the amounts' seed (printed). Run with `node --test`.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');

const {
  makeTempDir, newPrivateKey, rnodeJs, startShard, stopAllAfter,
} = require('./harness');
const { sendDeploy, settled, sleep, watchHeight } = require('./lifecycle');

const kTransfers = Number(process.env.RNODE_TRANSFERS || 300);
const kWallets = Number(process.env.RNODE_TRANSFER_WALLETS || 100);
const kSeed = Number(process.env.RNODE_TRANSFER_SEED || (Date.now() % 0x7fffffff));
const kRatePerSecond = 20;
// One deploy in this many runs out of phlo.
const kOutOfPhloEvery = 50;
// What writeShardFiles gives each wallet.
const kGenesisBalance = 5000000000000000n;
// Bounds of the waits: generous against a loaded 2-core machine; only a
// stuck shard reaches them.
const kConnectMs = 60000;
const kDrainMs = 300000;

const dir = makeTempDir('transfers');
const nodes = [];

stopAllAfter(dir, nodes);

// mulberry32: a small seeded generator, so a failing run can be repeated.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Transfer `i`: from wallet i mod W to the wallet 1 + (i / W) mod (W - 1)
// places after it, a random amount of 1 to 1,000,000 dust.
function plan(count, walletCount, random) {
  const out = [];
  for (let i = 0; i < count; ++i) {
    const from = i % walletCount;
    const step = 1 + (Math.floor(i / walletCount) % (walletCount - 1));
    out.push({
      from, to: (from + step) % walletCount,
      amount: BigInt(1 + Math.floor(random() * 1000000)),
      outOfPhlo: i % kOutOfPhloEvery === kOutOfPhloEvery - 1,
    });
  }
  return out;
}

// Our own wording of the public vault transfer a wallet client makes.
function transferTerm(fromAddr, toAddr, amount) {
  return `new rl(\`rho:registry:lookup\`), deployerId(\`rho:rchain:deployerId\`),
    vaultsCh, fromCh, keyCh, resultCh in {
  rl!(\`rho:rchain:revVault\`, *vaultsCh) |
  for (@(_, vaults) <- vaultsCh) {
    @vaults!("findOrCreate", "${fromAddr}", *fromCh) |
    @vaults!("deployerAuthKey", *deployerId, *keyCh) |
    for (@(true, from) <- fromCh; key <- keyCh) {
      @from!("transfer", "${toAddr}", ${amount}, *key, *resultCh)
    }
  }
}`;
}

// The balance of `revAddr` at block `blockHash` on `n` (an exploratory
// deploy of the vault lookup public wallets use).
async function balanceAt(n, blockHash, revAddr) {
  const term = `new return, rl(\`rho:registry:lookup\`), vaultsCh, vaultCh in {
  rl!(\`rho:rchain:revVault\`, *vaultsCh) |
  for (@(_, vaults) <- vaultsCh) {
    @vaults!("findOrCreate", "${revAddr}", *vaultCh) |
    for (@(true, vault) <- vaultCh) { @vault!("balance", *return) }
  }
}`;
  const reply = await n.ok(n.deployClient, 'exploratoryDeploy',
    { term, blockHash, usePreStateHash: false });
  const data = reply.result.postBlockData;
  assert.equal(data.length, 1, `${n.label}: balance of ${revAddr}: ${JSON.stringify(data)}`);
  return BigInt(data[0].exprs[0].g_int);
}

// What each wallet should hold given the statuses: genesis, less the
// charge of every deploy with a kept copy, less / plus the amounts of the
// FINALIZED transfers. Returns { expected, fees, counts }.
async function expectedBalances(n, transfers, ids, statuses) {
  const expected = new Array(kWallets).fill(kGenesisBalance);
  const counts = { finalized: 0, failed: 0, expired: 0, rejected: 0, outOfPhlo: 0 };
  let fees = 0n;
  for (let i = 0; i < transfers.length; ++i) {
    const t = transfers[i];
    const s = statuses.get(ids[i]);
    if (s.rejectionCount > 0) ++counts.rejected;
    if (s.state === 'DEPLOY_STATE_EXPIRED') {
      ++counts.expired;
      continue;
    }
    const view = await n.getJson(`/api/deploy/${ids[i]}`);
    assert.equal(view.status, 200, `${ids[i]}: ${JSON.stringify(view.body)}`);
    const charge = BigInt(view.body.cost) * BigInt(view.body.phloPrice);
    fees += charge;
    expected[t.from] -= charge;
    if (s.state === 'DEPLOY_STATE_FAILED') {
      ++counts.failed;
      assert.ok(t.outOfPhlo, `transfer #${i} ${ids[i]} FAILED: ${JSON.stringify(view.body)}`);
      ++counts.outOfPhlo;
      continue;
    }
    assert.equal(s.state, 'DEPLOY_STATE_FINALIZED');
    assert.ok(!t.outOfPhlo, `transfer #${i} with a phlo limit of 1 FINALIZED`);
    ++counts.finalized;
    expected[t.from] -= t.amount;
    expected[t.to] += t.amount;
  }
  return { expected, fees, counts };
}

test(`${kTransfers} transfers among ${kWallets} wallets at ${kRatePerSecond}/s on 3 ` +
  'validators: each wallet holds what the FINALIZED transfers and the charges say',
async () => {
  console.log(`transfers: seed ${kSeed} (RNODE_TRANSFER_SEED)`);
  const validatorKeys = [newPrivateKey(), newPrivateKey(), newPrivateKey()];
  const walletKeys = Array.from({ length: kWallets }, () => newPrivateKey());
  const walletAddr = walletKeys.map((k) => rnodeJs.getAddrFromPrivateKey(k).revAddr);
  // The observer answers the balance lookups (exploratory deploys).
  const all = await startShard(dir, { validatorKeys, walletKeys, networkId: 'js-transfers',
    nodes, connectMs: kConnectMs, observer: true });
  const validators = all.slice(0, -1);
  const observer = all[all.length - 1];
  const transfers = plan(kTransfers, kWallets, generator(kSeed));

  const watch = watchHeight(validators);
  const t0 = Date.now();
  const pending = [];
  for (let i = 0; i < transfers.length; ++i) {
    const due = t0 + (i * 1000) / kRatePerSecond;
    if (due > Date.now()) await sleep(due - Date.now());
    const t = transfers[i];
    pending.push(sendDeploy(validators, i, walletKeys[t.from],
      transferTerm(walletAddr[t.from], walletAddr[t.to], t.amount), watch,
      t.outOfPhlo ? { phloLimit: 1 } : {}));
  }
  const ids = await Promise.all(pending);
  const sentSeconds = (Date.now() - t0) / 1000;
  await watch.stop();
  assert.equal(new Set(ids).size, kTransfers);

  // Every node agrees, the observer included: it never held a deploy in a
  // pool, and reads each status from the chain.
  const { statuses, lfb } = await settled(all, ids, 'after the drain', kDrainMs);
  const { expected, fees, counts } = await expectedBalances(all[0], transfers, ids, statuses);
  console.log(`transfers: ${kTransfers} sent in ${sentSeconds} s; ${counts.finalized} ` +
    `FINALIZED, ${counts.failed} FAILED (out of phlo), ${counts.expired} EXPIRED, ` +
    `${counts.rejected} rejected by a merge then proposed again; fees ${fees} dust; ` +
    `balances read at block ${lfb.blockNumber}`);
  assert.equal(counts.expired, 0, `nothing forced an expiry: ${JSON.stringify(counts)}`);
  assert.equal(counts.outOfPhlo, transfers.filter((t) => t.outOfPhlo).length);

  // The balances at the agreed last finalized block: a state root is the
  // same on every node, and only the observer runs exploratory deploys.
  const total = kGenesisBalance * BigInt(kWallets);
  const actual = [];
  for (const addr of walletAddr) actual.push(await balanceAt(observer, lfb.blockHash, addr));
  const off = [];
  for (let w = 0; w < kWallets; ++w) {
    if (actual[w] !== expected[w]) off.push(`wallet ${w}: ${actual[w] - expected[w]}`);
  }
  assert.deepEqual(off, [], `balances off by (actual - expected), seed ${kSeed}`);
  assert.equal(actual.reduce((a, b) => a + b, 0n) + fees, total,
    'the total of the wallets plus the fees');
});
