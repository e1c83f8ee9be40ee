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
