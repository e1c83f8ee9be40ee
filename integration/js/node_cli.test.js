// `rnode run` refuses bad flags, bad config and impossible starts with one
// clear line on stderr and a non-zero exit, before serving anything.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const { RNODE_BIN, RnodeProcess, freePorts, makeTempDir } = require('./harness');

// A refused start takes well under a second; this bounds a hung one.
const kRunTimeoutMs = 30000;

// Runs `rnode run` on free ports (a port flag in `args` replaces its
// default).
async function run(args) {
  const ports = await freePorts(4);
  const flags = ['--api-port-grpc-external', '--api-port-grpc-internal',
    '--api-port-http', '--api-port-admin-http'];
  const defaults = [];
  flags.forEach((flag, k) => {
    if (!args.includes(flag)) defaults.push(flag, String(ports[k]));
  });
  const r = spawnSync(RNODE_BIN, ['run', '--api-host', '127.0.0.1',
    ...defaults, ...args], { encoding: 'utf8', timeout: kRunTimeoutMs });
  assert.equal(r.error, undefined, `spawn: ${r.error}`);
  return r;
}

function refused(r, pattern) {
  assert.notEqual(r.status, 0, `expected a refusal, got exit ${r.status}: ${r.stdout}`);
  assert.match(r.stderr, pattern);
}

test('an unknown flag is refused', async () => {
  const dir = makeTempDir('cli');
  refused(await run(['--standalone', '--data-dir', dir, '--no-such-flag']),
    /no-such-flag/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a malformed value names its setting', async () => {
  const dir = makeTempDir('cli');
  refused(await run(['--standalone', '--data-dir', dir, '--min-phlo-price', 'cheap']),
    /casper\.min-phlo-price: expected an integer/);
  refused(await run(['--standalone', '--data-dir', dir,
    '--fault-tolerance-threshold', '1.5']), /fault-tolerance-threshold/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a bad config file names the file and line, an unknown key its name', async () => {
  const dir = makeTempDir('cli');
  const file = path.join(dir, 'rnode.toml');
  fs.writeFileSync(file, '[casper]\nshard-name = "a"\nmin-phlo-price = = 3\n');
  refused(await run(['--standalone', '--data-dir', dir]), /rnode\.toml:3:/);
  fs.writeFileSync(file, '[casper]\nshard-nmae = "a"\n');
  refused(await run(['--standalone', '--data-dir', dir]), /casper\.shard-nmae/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a new shard without genesis files or --standalone is refused', async () => {
  const dir = makeTempDir('cli');
  refused(await run(['--data-dir', dir]), /--bonds-file/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a port in use is named', async () => {
  const dir = makeTempDir('cli');
  const blocker = net.createServer();
  await new Promise((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = blocker.address().port;
  try {
    refused(await run(['--standalone', '--data-dir', dir,
      '--api-port-http', String(port)]), new RegExp(`127\\.0\\.0\\.1:${port}`));
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a second node on a data dir in use is refused', async () => {
  const dir = makeTempDir('cli');
  const first = new RnodeProcess('cli-first', dir);
  await first.start();
  try {
    refused(await run(['--standalone', '--data-dir', dir]), /lock|in use/i);
  } finally {
    await first.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// The TCP ports listening on the IPv4 address `hexIp` (/proc/net/tcp's
// form: 127.0.0.1 is 0100007F), on IPv4 sockets or as an IPv4-mapped
// address on IPv6 ones (gRPC's way).
function listeningOn(hexIp) {
  const ports = new Set();
  for (const [file, want] of [['/proc/net/tcp', hexIp],
    ['/proc/net/tcp6', `0000000000000000FFFF0000${hexIp}`]]) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4 || f[3] !== '0A') continue;  // LISTEN
      const [ip, port] = f[1].split(':');
      if (ip === want) ports.add(parseInt(port, 16));
    }
  }
  return ports;
}

test('the admin APIs listen on loopback whatever --api-host says', async () => {
  // The public APIs on 127.0.0.2 (loopback too: tests stay on this machine);
  // the admin ones stay on 127.0.0.1 (regression: they followed --api-host,
  // so a node serving its API to the internet served propose and fault
  // injection with it).
  const dir = makeTempDir('cli-admin');
  const node = new RnodeProcess('cli-admin', dir, [], { apiHost: '127.0.0.2' });
  await node.start();
  try {
    const publicHost = listeningOn('0200007F');
    const adminHost = listeningOn('0100007F');
    assert.ok(publicHost.has(node.ports.http), 'public HTTP not on --api-host');
    assert.ok(publicHost.has(node.ports.grpcExternal));
    for (const port of [node.ports.adminHttp, node.ports.grpcInternal]) {
      assert.ok(adminHost.has(port), `admin port ${port} not on 127.0.0.1`);
      assert.ok(!publicHost.has(port), `admin port ${port} on --api-host`);
    }
    // No web page elsewhere may call the admin API: no CORS header, and a
    // preflight is not granted.
    const status = await fetch(`${node.adminUrl}/api/no-such-route`);
    assert.equal(status.headers.get('access-control-allow-origin'), null);
    const preflight = await fetch(`${node.adminUrl}/api/propose`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    assert.notEqual(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    // Nor the public API, unless api-server.allowed-origins lists the page's
    // origin (none by default).
    const pub = await fetch(`${node.httpUrl}/api/status`,
      { headers: { Origin: 'http://evil.example' } });
    assert.equal(pub.status, 200);
    assert.equal(pub.headers.get('access-control-allow-origin'), null);
  } finally {
    await node.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an admin API on an address others can reach needs an explicit setting', async () => {
  const dir = makeTempDir('cli-admin-public');
  refused(await run(['--standalone', '--data-dir', dir, '--api-admin-host', '0.0.0.0']),
    /api-server\.admin-host: '0\.0\.0\.0' is not a loopback address/);
  refused(await run(['--standalone', '--data-dir', dir, '--api-admin-host', '10.1.2.3']),
    /allow-public-admin/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the client verbs talk to a running node', async () => {
  const dir = makeTempDir('cli-verbs');
  const node = new RnodeProcess('cli-verbs', dir);
  await node.start();
  const client = (args) => spawnSync(RNODE_BIN, [...args,
    '--grpc-port', String(node.ports.grpcExternal),
    '--grpc-port-internal', String(node.ports.grpcInternal)],
  { encoding: 'utf8', timeout: kRunTimeoutMs });
  try {
    let r = client(['status']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).isReady, true);

    r = client(['deploy', '--private-key-file', path.join(dir, 'validator.key'),
      '--term', '@"cli"!(1)', '--wait']);
    assert.equal(r.status, 0, r.stderr);
    const id = /DeployId is: ([0-9a-f]+)/.exec(r.stdout)[1];
    const block = /Finalized in block ([0-9a-f]{64})/.exec(r.stdout)[1];

    r = client(['find-deploy', '--deploy-id', id]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).blockInfo.blockHash, block);
    r = client(['is-finalized', block]);
    assert.equal(r.stdout.trim(), 'true', r.stderr);
    r = client(['show-block', block.slice(0, 10)]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).blockInfo.blockHash, block);
    r = client(['last-finalized-block']);
    assert.equal(JSON.parse(r.stdout).blockInfo.blockHash, block, r.stderr);
    r = client(['show-blocks', '--depth', '2']);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.includes(block));

    // Nothing waits: propose is refused in-band, exit 1 with the reason.
    r = client(['propose']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /No new deploys to propose\./);
    // A bad signing key never reaches the node.
    r = client(['deploy', '--private-key', 'zz', '--term', 'Nil']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /private-key/);
  } finally {
    await node.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
