// Sybil pressure and a fake deploy holder against a real validator
// (docs/security.md). Real `rnode run` processes on 127.0.0.1: validator v1
// of a 2-validator shard, with room for 20 peers (10 for anyone, 10 kept for
// proven bonded validators). rnode-badpeer first connects a peer that proves
// an unbonded validator key and answers every deploy offered as held, then
// joins 200 fresh identities that stay live peers. v1 must refuse a deploy
// (no bonded validator holds a copy; the fake holder is not even asked),
// and once bonded validator v2 starts, v2 must get into v1's full table and
// v1 acknowledge deploys again. Run with `node --test`.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const {
  deployIdOfSuccess, errorMessages, makeTempDir, newPrivateKey, RnodeProcess,
  signDeploy, startBadpeer, stopAllAfter, waitFor, writeShardFiles,
} = require('./harness');

const kNetwork = 'js-sybil';
const kMaxPeers = 20;
const kSybils = 200;
// Bounds of the waits (generous for a loaded 2-core machine).
const kConnectMs = 60000;
const kJoinMs = 120000;

const dir = makeTempDir('sybil');
const nodes = [];
let attacker = null;

stopAllAfter(dir, nodes, () => attacker);

// The value of an unlabelled counter or gauge in n's /metrics (0 if absent).
async function metric(n, name) {
  const res = await fetch(`${n.httpUrl}/metrics`);
  assert.equal(res.status, 200);
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

test('200 fresh identities and a fake holder neither stall deploys nor keep a bonded validator out',
  async () => {
    const keys = [newPrivateKey(), newPrivateKey()];
    const { bonds, wallets } = writeShardFiles(dir, keys);
    const common = [
      '--bonds-file', bonds, '--wallets-file', wallets,
      '--deploy-timestamp', String(Date.now()),
      '--network-id', kNetwork, '--fault-tolerance-threshold', '0.1',
      '--lookup-interval', '1s', '--max-peers', String(kMaxPeers),
    ];
    const node = (label, key, extra = []) => {
      const n = new RnodeProcess(label, path.join(dir, label), [...common, ...extra],
        { standalone: false, privateKey: key });
      nodes.push(n);
      return n;
    };
    const v1 = node('v1', keys[0]);
    await v1.start();
    const address = (await v1.getJson('/api/status')).body.address;

    attacker = startBadpeer(['--target', address, '--network-id', kNetwork,
      '--attacks', 'fake-holder,sybil', '--sybil-count', String(kSybils),
      '--hold-seconds', '600', '--seed', '7']);
    const joined = await waitFor('the fake holder and the sybils to join v1', async () => {
      if (attacker.child.exitCode !== null) {
        throw new Error(`rnode-badpeer exited ${attacker.child.exitCode}: ${attacker.stderr()}`);
      }
      const holder = attacker.lines.find((l) => l.attack === 'fake-holder' && l.connected);
      const sybils = attacker.lines.find((l) => l.attack === 'sybil' && l.joined);
      return holder && sybils ? sybils : null;
    }, { timeoutMs: kJoinMs, intervalMs: 200 });
    console.log(`sybils joined: ${JSON.stringify(joined)}`);
    // Half the slots are for anyone; the fake holder took one of them. A
    // sybil admitted beyond them took the slot of a silent one (v1 evicts
    // a link that stopped answering to make room: under a sanitizer the
    // 200 joins are slow enough for early sybils to go silent), so the
    // bound is on the sybils holding a slot at once.
    const evicted = await metric(v1, 'p2p_peers_evicted_total');
    assert.ok(joined.admitted - evicted <= kMaxPeers / 2 - 1,
      `${JSON.stringify(joined)}, ${evicted} evicted`);
    assert.ok(joined.refused >= kSybils - kMaxPeers / 2 - evicted,
      `${JSON.stringify(joined)}, ${evicted} evicted`);
    assert.ok(await metric(v1, 'p2p_peers_refused_total') >= kSybils - kMaxPeers / 2);

    // No bonded validator is connected: the fake holder's answer would make
    // a copy, but its key is not bonded, so it is not asked.
    const lonely = signDeploy(keys[0], { term: 'new x in { x!(1) }', validAfterBlockNumber: 0 });
    const refused = await v1.unary(v1.deployClient, 'doDeploy', lonely.proto);
    assert.match(errorMessages(refused, 'doDeploy with only the attackers'),
      /reaches no other validator to keep a copy of the deploy/);

    // Bonded validator v2 gets into v1's full table (a reserved slot), and
    // v1 acknowledges deploys again, v2 holding the copies.
    const v2 = node('v2', keys[1], ['--bootstrap', address]);
    await v2.start();
    let i = 0;
    const acknowledged = await waitFor('v1 to acknowledge a deploy with v2 as the holder',
      async () => {
        const d = signDeploy(keys[1], { term: `new x in { x!(${100 + i++}) }`, validAfterBlockNumber: 0 });
        const reply = await v1.unary(v1.deployClient, 'doDeploy', d.proto);
        if (reply.message === 'error') {
          assert.match(reply.error.messages.join('; '), /reaches no other validator/);
          return null;
        }
        assert.equal(deployIdOfSuccess(reply.result), d.id);
        return d.id;
      }, { timeoutMs: kConnectMs, intervalMs: 500 });
    assert.match(acknowledged, /^[0-9a-f]+$/);

    attacker.child.kill('SIGTERM');
    assert.equal(await attacker.exited, 0, attacker.stderr());
    const holderEnd = attacker.lines.find((l) => l.attack === 'fake-holder' && l.ran);
    assert.ok(holderEnd, JSON.stringify(attacker.lines));
    assert.equal(holderEnd.deploys_offered, 0, 'v1 offered a deploy to an unbonded peer');
    const sybilEnd = attacker.lines.find((l) => l.attack === 'sybil' && l.ran);
    assert.ok(sybilEnd, JSON.stringify(attacker.lines));
    console.log(`at the end: ${JSON.stringify(holderEnd)} ${JSON.stringify(sybilEnd)}; ` +
      `v1 refused ${await metric(v1, 'p2p_peers_refused_total')} peers`);
    for (const n of nodes) assert.equal(n.exit, null, `${n.label} is still running`);
  });
