// Test harness for the client tests of `rnode run --standalone`: starts and
// stops a real node process on 127.0.0.1, and gives typed access to its gRPC
// (@grpc/grpc-js + our own protos), HTTP (fetch) and /ws/events (ws) APIs,
// with deploys signed by the public client @tgrospic/rnode-grpc-js.
//
// Every wait is a bounded poll with a deadline; a failed wait says what it
// waited for. RNODE_BIN names the binary (default ../../build/bin/rnode).
'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const kRepoRoot = path.resolve(__dirname, '..', '..');
const kProtoDir = path.join(kRepoRoot, 'proto');
// Debian's libprotobuf-dev ships google/protobuf/empty.proto here.
const kSystemProtoDir = '/usr/include';

const RNODE_BIN = process.env.RNODE_BIN
  ? path.resolve(process.env.RNODE_BIN)
  : path.join(kRepoRoot, 'build', 'bin', 'rnode');

// A fresh standalone node is ready in well under a second here; sanitizer
// builds on a loaded CI machine take far longer. Only a hung node reaches it.
const kStartDeadlineMs = 60000;
// How long SIGTERM may take (the node lets API calls finish for 2 s).
const kStopDeadlineMs = 20000;
// Standalone proposes within ~20 ms of a deploy and finalizes at once, so a
// deploy is final well within this; the margin is for slow machines.
const kFinalizeDeadlineMs = 30000;
const kPollIntervalMs = 50;
// Deadline of one gRPC call.
const kCallDeadlineMs = 15000;
// Largest HTTP body the node under test accepts (--api-http-max-body-bytes).
const kMaxBodyBytes = 1024 * 1024;
// Phlo limit of the tests' deploys: far above what their small terms cost,
// far below the standalone wallet's balance.
const kPhloLimit = 1000000;
// Lines of node output kept for failure reports.
const kMaxLogLines = 400;

// Nodes still running when this test process ends (a failed hook, a
// cancelled run) are killed rather than left behind.
const liveChildren = new Set();
process.on('exit', () => {
  for (const child of liveChildren) child.kill('SIGKILL');
});

const deps = loadDependencies();
const grpc = deps.grpc;

function loadDependencies() {
  const pinned = require('./package.json').dependencies;
  for (const [name, wanted] of Object.entries(pinned)) {
    let installed = null;
    try {
      const manifest = path.join(__dirname, 'node_modules', name, 'package.json');
      installed = JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
    } catch {
      // Reported below.
    }
    if (installed !== wanted) {
      const what = installed === null
        ? `${name} is not installed in integration/js/node_modules`
        : `integration/js/node_modules has ${name} ${installed}, package.json pins ${wanted}`;
      throw new Error(`${what}: run scripts/setup (or scripts/js-deps) to ` +
        'install the JavaScript test dependencies');
    }
  }
  return {
    grpc: require('@grpc/grpc-js'),
    protoLoader: require('@grpc/proto-loader'),
    rnodeJs: require('@tgrospic/rnode-grpc-js'),
    WebSocket: require('ws'),
  };
}

function loadProtos() {
  const definition = deps.protoLoader.loadSync(
    ['DeployServiceV1.proto', 'ProposeServiceV1.proto'], {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
      includeDirs: [kProtoDir, kSystemProtoDir],
    });
  return grpc.loadPackageDefinition(definition);
}

const protos = loadProtos();

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Thrown by a probe to end a wait at once (the condition can no longer hold).
class WaitAborted extends Error {}

// Calls `probe` until it returns a value other than undefined/null/false,
// or throws when `timeoutMs` passes; `what` names the condition. An error
// thrown by `probe` counts as "not yet" (and is reported with the timeout),
// except an assertion failure or WaitAborted, which ends the wait.
async function waitFor(what, probe, { timeoutMs = kFinalizeDeadlineMs,
  intervalMs = kPollIntervalMs } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastError = null;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v;
      lastError = null;
    } catch (e) {
      if (e instanceof assert.AssertionError || e instanceof WaitAborted) throw e;
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const why = lastError ? `; last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await sleep(intervalMs);
  }
}

// Ports are drawn below the kernel's ephemeral range (32768 and up on
// Linux): a port the kernel handed out for listen(0) and got back is soon
// handed out again as the local end of some outgoing connection, and a node
// given it then fails to bind (seen in CI: "cannot bind ...: Address already
// in use"). Nothing takes these ports by itself; another test picking the
// same one in the moment before its node binds is the only way to collide.
const kPortLow = 20000;
const kPortHigh = 32000;  // exclusive

// Listens on 127.0.0.1:`port`; the server, or null if the port is taken.
function tryListen(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

// `count` distinct TCP ports on 127.0.0.1 free at the time of the call
// (bound together, then released for the node to take).
async function freePorts(count) {
  const servers = [];
  try {
    for (let tries = 0; servers.length < count; ++tries) {
      if (tries >= 1000) throw new Error(`no ${count} free ports in [${kPortLow}, ${kPortHigh})`);
      const port = kPortLow + Math.floor(Math.random() * (kPortHigh - kPortLow));
      const server = await tryListen(port);
      if (server !== null) servers.push(server);
    }
    return servers.map((s) => s.address().port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

function makeTempDir(label) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `rnode-js-${label}-`));
}

// A shard's bonds and wallets files in `dir` for `keys` (hex private
// keys): the first `bonded` keys bonded with 1000 each (all by default),
// every key with a wallet. Returns the files' paths and the keys'
// addresses ({pubKey, revAddr, ...}).
function writeShardFiles(dir, keys, bonded = keys.length) {
  const addr = keys.map((k) => deps.rnodeJs.getAddrFromPrivateKey(k));
  const bonds = path.join(dir, 'bonds.txt');
  const wallets = path.join(dir, 'wallets.txt');
  fs.writeFileSync(bonds, addr.slice(0, bonded).map((a) => `${a.pubKey} 1000\n`).join(''));
  fs.writeFileSync(wallets, addr.map((a) => `${a.revAddr},5000000000000000\n`).join(''));
  return { bonds, wallets, addr };
}

// Starts validators on 127.0.0.1, one per key of `validatorKeys` (each
// bonded with 1000), with a funded wallet for each of those keys and of
// `walletKeys`: v1 first, the others bootstrapped from it, in `dir`. Pushes
// each process onto `nodes` as it is made (the caller stops them) and
// returns them once each has all the others as peers (within `connectMs`).
// `extraArgs` go to every node. With `observer`, a read-only node (label
// "observer", the only kind that answers exploratory deploys) joins too and
// comes last in the list. `idleValidatorKeys` are bonded (and funded) in the
// genesis but not started: the caller starts them later.
async function startShard(dir, { validatorKeys, idleValidatorKeys = [], walletKeys = [],
  networkId, nodes, extraArgs = [], connectMs = 60000, observer = false }) {
  const { bonds, wallets } = writeShardFiles(dir,
    [...validatorKeys, ...idleValidatorKeys, ...walletKeys],
    validatorKeys.length + idleValidatorKeys.length);
  const common = [
    '--bonds-file', bonds, '--wallets-file', wallets,
    '--deploy-timestamp', String(Date.now()),
    '--network-id', networkId, '--fault-tolerance-threshold', '0.1',
    '--lookup-interval', '1s', ...extraArgs,
  ];
  const node = (label, key, extra) => {
    const n = new RnodeProcess(label, path.join(dir, label), [...common, ...extra],
      { standalone: false, privateKey: key, keepPorts: true });
    nodes.push(n);
    return n;
  };
  const first = node('v1', validatorKeys[0], []);
  await first.start();
  const boot = ['--bootstrap', (await first.getJson('/api/status')).body.address];
  const rest = validatorKeys.slice(1).map((k, i) => node(`v${i + 2}`, k, boot));
  if (observer) rest.push(node('observer', null, boot));
  await Promise.all(rest.map((n) => n.start()));
  const all = [first, ...rest];
  await waitFor(`every validator connected to the ${all.length - 1} others`, async () => {
    for (const n of all) {
      if ((await n.getJson('/api/status')).body.peers < all.length - 1) return false;
    }
    return true;
  }, { timeoutMs: connectMs, intervalMs: 200 });
  return all;
}

// The rnode-badpeer binary: $RNODE_BADPEER, else beside the rnode binary.
const RNODE_BADPEER = process.env.RNODE_BADPEER ||
  path.join(path.dirname(RNODE_BIN), 'rnode-badpeer');

// rnode-badpeer with `args`: its JSON lines as they come (`lines`), its
// exit code (`exited`, a promise) and its stderr so far (`stderr()`).
// `stop()` kills it (SIGKILL) if it still runs and waits for the exit.
function startBadpeer(args) {
  assert.ok(fs.existsSync(RNODE_BADPEER), `rnode-badpeer not found at ${RNODE_BADPEER}`);
  const child = spawn(RNODE_BADPEER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  liveChildren.add(child);
  const lines = [];
  let stderr = '';
  let pending = '';
  child.stdout.on('data', (chunk) => {
    pending += chunk.toString();
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const text = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (text.trim() !== '') lines.push(JSON.parse(text));
    }
  });
  child.stderr.on('data', (chunk) => { stderr += chunk.toString(); });
  const exited = new Promise((resolve) => child.once('exit', (code) => {
    liveChildren.delete(child);
    resolve(code);
  }));
  // Once its output has ended (after 'exit').
  child.once('close', () => {
    for (const line of stderr.split('\n')) {
      if (kSanitizerReport.test(line)) sanitizerReports.push(`rnode-badpeer: ${line}`);
    }
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child, lines, exited, running,
    stderr: () => stderr,
    stop: async () => {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
  };
}

// The lines by which a sanitizer build reports a fault. One in the output
// of a node (or of rnode-badpeer) fails the test file when it exits: the
// suites under the asan and tsan presets would otherwise pass whatever the
// node processes reported, as ctest sees only the test binaries' own.
const kSanitizerReport =
  /(WARNING: ThreadSanitizer:|ERROR: AddressSanitizer:|ERROR: LeakSanitizer:|SUMMARY: UndefinedBehaviorSanitizer:)/;
const sanitizerReports = [];
process.on('exit', () => {
  if (sanitizerReports.length === 0) return;
  console.error(`sanitizer reports in rnode output (${sanitizerReports.length}):\n` +
    sanitizerReports.slice(0, 20).join('\n'));
  process.exitCode = 1;
});

// One `rnode run` process (standalone by default, or a shard node) and
// clients of its APIs.
class RnodeProcess {
  // `extraArgs` are appended to the `rnode run` command line. Options:
  // standalone (default true); privateKey (hex; a shard validator's key,
  // written to <dataDir>/validator.key; none: a read-only node); keepPorts
  // (a restart keeps the ports, so peers find the node again); apiHost (the
  // public APIs' address, default 127.0.0.1).
  constructor(label, dataDir, extraArgs = [], options = {}) {
    this.label = label;
    this.dataDir = dataDir;
    this.extraArgs = extraArgs;
    this.options = {
      standalone: true, privateKey: null, keepPorts: false, apiHost: '127.0.0.1',
      ...options,
    };
    this.ports = null;
    this.child = null;
    this.log = [];
    this.exit = null;  // {code, signal} once exited
    this.clients = [];
  }

  // Starts the node on fresh ports and waits until it is ready (with
  // { ready: false }, only until its /api/status answers: a joining node,
  // to be watched or killed before it is ready).
  async start({ ready = true } = {}) {
    assert.ok(fs.existsSync(RNODE_BIN),
      `rnode binary not found at ${RNODE_BIN}: build it, or set RNODE_BIN`);
    if (!(this.options.keepPorts && this.ports)) {
      const [grpcExternal, grpcInternal, http, adminHttp, protocol, discovery] =
        await freePorts(6);
      this.ports = { grpcExternal, grpcInternal, http, adminHttp, protocol, discovery };
    }
    const { grpcExternal, grpcInternal, http, adminHttp, protocol, discovery } = this.ports;
    const keyFile = path.join(this.dataDir, 'validator.key');
    if (!this.options.standalone && this.options.privateKey) {
      fs.mkdirSync(this.dataDir, { recursive: true });
      fs.writeFileSync(keyFile, `${this.options.privateKey}\n`, { mode: 0o600 });
    }
    this.httpUrl = `http://${this.options.apiHost}:${http}`;
    this.adminUrl = `http://127.0.0.1:${adminHttp}`;
    this.wsUrl = `ws://${this.options.apiHost}:${http}/ws/events`;
    const args = [
      'run', ...(this.options.standalone ? ['--standalone'] : []),
      ...(!this.options.standalone && this.options.privateKey
        ? ['--validator-private-key-path', keyFile] : []),
      '--data-dir', this.dataDir,
      '--host', '127.0.0.1',
      '--protocol-port', String(protocol),
      '--discovery-port', String(discovery),
      '--api-host', this.options.apiHost,
      '--api-port-grpc-external', String(grpcExternal),
      '--api-port-grpc-internal', String(grpcInternal),
      '--api-port-http', String(http),
      '--api-port-admin-http', String(adminHttp),
      '--api-http-max-body-bytes', String(kMaxBodyBytes),
      '--threads', '2',
      ...this.extraArgs,
    ];
    this.note(`$ ${RNODE_BIN} ${args.join(' ')}`);
    this.exit = null;
    this.readyLine = false;
    const child = spawn(RNODE_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    liveChildren.add(child);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        liveChildren.delete(child);
        this.exit = { code, signal };
        this.note(`[exit] code ${code} signal ${signal}`);
        resolve(this.exit);
      });
    });
    // A failed spawn (ENOENT, EACCES, ETXTBSY while the binary is being
    // relinked) emits 'error' and no 'exit'.
    child.once('error', (e) => {
      this.note(`[spawn error] ${e.message}`);
      if (this.exit === null) this.exit = { code: null, signal: null, error: e };
    });
    this.capture(child.stdout, 'stdout');
    this.capture(child.stderr, 'stderr');

    try {
      await waitFor(ready
        ? 'the node to print "ready" and answer /api/status with isReady true'
        : 'the node to answer /api/status', async () => {
        if (this.exit !== null) {
          throw new WaitAborted(this.exit.error
            ? `rnode could not be started: ${this.exit.error.message}`
            : `rnode exited early (code ${this.exit.code}, signal ${this.exit.signal})`);
        }
        if (ready && !this.readyLine) return false;
        const res = await fetch(`${this.httpUrl}/api/status`);
        if (res.status !== 200) return false;
        return !ready || (await res.json()).isReady === true;
      }, { timeoutMs: kStartDeadlineMs, intervalMs: ready ? 100 : 10 });
    } catch (e) {
      throw new Error(`${e.message}\n${this.output()}`);
    }
    const creds = grpc.credentials.createInsecure();
    const v1 = protos.casper.v1;
    this.deployClient =
      new v1.DeployService(`${this.options.apiHost}:${grpcExternal}`, creds);
    this.internalDeployClient =
      new v1.DeployService(`127.0.0.1:${grpcInternal}`, creds);
    this.proposeClient = new v1.ProposeService(`127.0.0.1:${grpcInternal}`, creds);
    this.clients = [this.deployClient, this.internalDeployClient, this.proposeClient];
    this.privateKey = null;
    if (this.options.standalone || this.options.privateKey) {
      this.privateKey = fs.readFileSync(keyFile, 'utf8').trim();
      assert.match(this.privateKey, /^[0-9a-f]{64}$/,
        `${keyFile} should hold a hex private key`);
      // Derived by the public client, not by the node.
      const addr = deps.rnodeJs.getAddrFromPrivateKey(this.privateKey);
      this.publicKey = addr.pubKey;
      this.revAddress = addr.revAddr;
    }
  }

  // Sends `signal` to the running process (SIGSTOP / SIGCONT / SIGKILL).
  signal(signal) {
    assert.ok(this.child !== null && this.exit === null, `${this.label} is not running`);
    this.child.kill(signal);
  }

  // SIGKILL and wait for the exit.
  async kill() {
    for (const c of this.clients) c.close();
    this.clients = [];
    this.signal('SIGKILL');
    await this.exited;
    this.child = null;
  }

  // SIGTERM, then SIGKILL after a deadline; returns {code, signal}.
  async stop() {
    for (const c of this.clients) c.close();
    this.clients = [];
    if (this.child === null) return this.exit;
    if (this.exit === null) {
      this.child.kill('SIGTERM');
      const timer = new Promise((resolve) => {
        this.stopTimer = setTimeout(resolve, kStopDeadlineMs, 'timeout');
      });
      const outcome = await Promise.race([this.exited, timer]);
      clearTimeout(this.stopTimer);
      if (outcome === 'timeout') {
        this.note(`[harness] no exit ${kStopDeadlineMs} ms after SIGTERM: SIGKILL`);
        this.child.kill('SIGKILL');
        await this.exited;
        this.exit.killed = true;
      }
    }
    this.child = null;
    return this.exit;
  }

  capture(stream, name) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop();
      for (const line of lines) {
        if (name === 'stdout' && /(standalone validator|node) ready in \d+ ms/.test(line)) {
          this.readyLine = true;
        }
        if (kSanitizerReport.test(line)) sanitizerReports.push(`${this.label}: ${line}`);
        this.note(`[${name}] ${line}`);
      }
    });
    stream.on('end', () => {
      if (partial !== '') this.note(`[${name}] ${partial}`);
    });
  }

  note(line) {
    this.log.push(line);
    if (this.log.length > kMaxLogLines) this.log.shift();
  }

  output() {
    return `--- rnode (${this.label}, data ${this.dataDir}) output ---\n` +
      `${this.log.join('\n')}\n--- end of rnode output ---`;
  }

  // Wraps a test body so that a failure also reports the node's output (as
  // test diagnostics, which every reporter prints).
  withOutput(fn) {
    return async (t) => {
      try {
        await fn(t);
      } catch (e) {
        // One line each: TAP would escape newlines inside one diagnostic.
        for (const line of this.output().split('\n')) t.diagnostic(line);
        throw e;
      }
    };
  }

  // ---- gRPC ----

  // A unary call; resolves to the reply (business errors stay in the
  // reply's `error` field) or rejects with the gRPC status error.
  unary(client, method, request) {
    return new Promise((resolve, reject) => {
      client[method](request, { deadline: Date.now() + kCallDeadlineMs },
        (err, reply) => (err ? reject(err) : resolve(reply)));
    });
  }

  // All replies of a server-streaming call.
  stream(client, method, request) {
    return new Promise((resolve, reject) => {
      const replies = [];
      const call = client[method](request, { deadline: Date.now() + kCallDeadlineMs });
      call.on('data', (r) => replies.push(r));
      call.on('error', reject);
      call.on('end', () => resolve(replies));
    });
  }

  // The payload of a reply whose oneof `message` must not be `error`.
  async ok(client, method, request) {
    const reply = await this.unary(client, method, request);
    if (reply.message === 'error') {
      throw new Error(`${method} answered error: ${reply.error.messages.join('; ')}`);
    }
    return reply;
  }

  async latestBlockNumber() {
    const replies = await this.stream(this.deployClient, 'getBlocks', { depth: 1 });
    assert.ok(replies.length >= 1, 'getBlocks(depth 1) returned no block');
    for (const r of replies) {
      assert.equal(r.message, 'blockInfo', `getBlocks: ${JSON.stringify(r.error)}`);
    }
    return Math.max(...replies.map((r) => Number(r.blockInfo.blockNumber)));
  }

  // ---- HTTP ----

  async getJson(urlPath) {
    const res = await fetch(`${this.httpUrl}${urlPath}`);
    return { status: res.status, body: await res.json() };
  }

  async postJson(urlPath, body, base = this.httpUrl) {
    const res = await fetch(`${base}${urlPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // Left null: the caller asserts on what it expects.
    }
    return { status: res.status, text, body: json };
  }
}

// ---- deploys ----

// secp256k1's group order: a private key must be below it.
const kSecp256k1Order = BigInt(
  '0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');

// A random secp256k1 private key, as hex (a validator's or a wallet's).
function newPrivateKey() {
  for (;;) {
    const k = crypto.randomBytes(32);
    const v = BigInt(`0x${k.toString('hex')}`);
    if (v > 0n && v < kSecp256k1Order) return k.toString('hex');
  }
}

let lastTimestamp = 0;
// Distinct, increasing timestamps: the timestamp is the deploy's nonce,
// and RFC 6979 signing is deterministic.
function nextTimestamp() {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
  return lastTimestamp;
}

// Signs with rnode-grpc-js (its input keys are lower-case) and returns the
// deploy both as the gRPC request (DeployDataProto, keepCase names) and as
// the Web API body of POST /api/deploy.
function signDeploy(privateKey, { term, validAfterBlockNumber, shardId = 'root',
  phloPrice = 1, phloLimit = kPhloLimit, timestamp = nextTimestamp() }) {
  const signed = deps.rnodeJs.signDeploy(privateKey, {
    term,
    timestamp,
    phloprice: phloPrice,
    phlolimit: phloLimit,
    validafterblocknumber: validAfterBlockNumber,
    shardid: shardId,
  });
  const deployer = Buffer.from(signed.deployer);
  const sig = Buffer.from(signed.sig);
  return {
    id: sig.toString('hex'),
    proto: {
      deployer,
      term,
      timestamp: String(timestamp),
      sig,
      sigAlgorithm: signed.sigalgorithm,
      phloPrice: String(phloPrice),
      phloLimit: String(phloLimit),
      validAfterBlockNumber: String(validAfterBlockNumber),
      shardId,
    },
    json: {
      data: { term, timestamp, phloPrice, phloLimit, validAfterBlockNumber, shardId },
      deployer: deployer.toString('hex'),
      signature: sig.toString('hex'),
      sigAlgorithm: signed.sigalgorithm,
    },
  };
}

// The deploy id in the success text of doDeploy and POST /api/deploy.
function deployIdOfSuccess(text) {
  const m = /^Success!\nDeployId is: ([0-9a-f]+)$/.exec(text);
  assert.ok(m, `unexpected deploy success text: ${JSON.stringify(text)}`);
  return m[1];
}

// Messages of the error a reply carries in its oneof; fails if it has none.
function errorMessages(reply, what) {
  assert.equal(reply.message, 'error',
    `${what}: expected an in-band error, got ${JSON.stringify(reply)}`);
  return reply.error.messages.join('\n');
}

// Proposes on `node` until it answers that nothing is pending (a deploy
// whose validAfterBlockNumber is in the future waits without counting).
async function emptyPool(node) {
  await waitFor('an empty deploy pool', async () => {
    const reply = await node.unary(node.proposeClient, 'propose', { isAsync: false });
    return reply.message === 'error' &&
      reply.error.messages.join('\n').includes('No new deploys to propose.');
  });
}

// A `test` for bad-input cases against a standalone `node`: the deploy pool
// is empty before the body (a deploy a previous case left behind cannot
// move the chain under this one), and after it the node must still answer
// status over gRPC and HTTP.
function liveCase(node) {
  const { test } = require('node:test');
  return (name, fn) => test(name, node.withOutput(async (t) => {
    await emptyPool(node);
    await fn(t);
    const { status } = await node.ok(node.deployClient, 'status', {});
    assert.equal(status.isReady, true, 'the node is no longer ready');
    const res = await fetch(`${node.httpUrl}/api/status`);
    assert.equal(res.status, 200, 'GET /api/status failed after the case');
  }));
}

// After the file's tests: stops the attacker (`attacker()`, null when none
// was started or not given) and `nodes`, then removes `dir` (RNODE_TEST_KEEP=1
// keeps it, and writes each node's output there as <label>.log).
function stopAllAfter(dir, nodes, attacker = () => null) {
  const { after } = require('node:test');
  after(async () => {
    const a = attacker();
    if (a !== null) await a.stop();
    for (const n of nodes) await n.stop();
    if (process.env.RNODE_TEST_KEEP) {
      for (const n of nodes) fs.writeFileSync(path.join(dir, `${n.label}.log`), n.output());
    } else {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

module.exports = {
  RNODE_BADPEER,
  RNODE_BIN,
  rnodeJs: deps.rnodeJs,
  RnodeProcess,
  freePorts,
  WebSocket: deps.WebSocket,
  deployIdOfSuccess,
  emptyPool,
  errorMessages,
  grpc,
  liveCase,
  kMaxBodyBytes,
  makeTempDir,
  newPrivateKey,
  signDeploy,
  startBadpeer,
  stopAllAfter,
  waitFor,
  startShard,
  writeShardFiles,
};
