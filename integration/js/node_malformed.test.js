// Malformed input to a real `rnode run --standalone`, over gRPC and HTTP:
// wrong JSON types, missing fields, bad hex, oversized terms and bodies,
// deep nesting, bad signatures, closed windows, replays, requests that are
// not HTTP or not protobuf, a slow client. Each case pins the exact answer
// (gRPC in-band ServiceError text or status code; HTTP status, error kind
// and message) and, through `it`, that the node still answers afterwards.
// node_errors.test.js holds the first cases of this kind. Run with
// `node --test`.
'use strict';

const { after, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const {
  RnodeProcess, deployIdOfSuccess, errorMessages, grpc, kMaxBodyBytes, liveCase,
  makeTempDir, newPrivateKey, rnodeJs, signDeploy, waitFor,
} = require('./harness');

// The client signs with these (its own dependencies); resolved from its
// install so that a deploy with an expiration timestamp, which the client
// cannot sign, is hashed and signed the same way.
const kClientDir = path.dirname(require.resolve('@tgrospic/rnode-grpc-js'));
const { blake2bHex } = require(require.resolve('blakejs', { paths: [kClientDir] }));
const { ec: EllipticCurve } =
  require(require.resolve('elliptic', { paths: [kClientDir] }));

const kTerm = 'new x in { x!(1) }';
// util/limits.h kMaxDeployTermBytes.
const kMaxDeployTermBytes = 1 << 20;
// util/limits.h kMaxShardIdBytes.
const kMaxShardIdBytes = 256;
// util/limits.h kMaxDerSignatureBytes.
const kMaxDerSignatureBytes = 72;
// rholang/frontend/limits.h kMaxNestingDepth.
const kMaxNestingDepth = 512;
// grpc-max-recv-message-size (docs/node.md "Threads").
const kMaxGrpcRequestBytes = 16 << 20;
// api-server.max-blocks-limit (the node's default).
const kMaxBlocksLimit = 100;
// node/http/http_server.h kMaxHeaderBytes.
const kMaxHeaderBytes = 8 << 10;
// The order of secp256k1's group.
const kCurveOrder =
  BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
// How long a raw HTTP exchange may take before the case fails.
const kRawHttpDeadlineMs = 15000;
// The shape the HTTP data-at-name routes expect of a name.
const kNameShape = 'a name is {"UnforgPrivate"|"UnforgDeploy"|"UnforgDeployer": {"data": hex}}';

const dataDir = makeTempDir('malformed');
const node = new RnodeProcess('malformed', dataDir);

before(async () => {
  await node.start();
});

after(async () => {
  await node.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

// Each case starts on an empty pool and must leave the node serving.
const it = liveCase(node);

// A deploy of kTerm signed by the node's key, valid for the next block
// unless `options` say otherwise.
async function freshDeploy(options = {}) {
  return signDeploy(node.privateKey, {
    term: kTerm, validAfterBlockNumber: await node.latestBlockNumber(), ...options,
  });
}

// `expected` is the whole message (a string) or an anchored RegExp.
function assertMessage(actual, expected) {
  if (expected instanceof RegExp) {
    assert.match(actual, expected);
  } else {
    assert.equal(actual, expected);
  }
}

// A unary call on the external DeployService must answer status OK with
// exactly this in-band error.
async function assertServiceError(method, request, expected) {
  const reply = await node.unary(node.deployClient, method, request);
  assertMessage(errorMessages(reply, method), expected);
}

// doDeploy must refuse `proto` with exactly this message.
async function assertRefused(proto, expected) {
  await assertServiceError('doDeploy', proto, expected);
}

// A unary call that must fail with gRPC status `code`; returns the error.
async function assertGrpcStatus(client, method, request, code) {
  const err = await node.unary(client, method, request).then(
    (reply) => assert.fail(`${method} answered ${JSON.stringify(reply)}`),
    (e) => e);
  assert.equal(err.code, code, `gRPC status ${err.code} (${err.details})`);
  return err;
}

// Sends `bytes` as the whole request message of `methodPath` (no client
// encoding) and resolves to the call's error, or fails if it succeeds.
function rawGrpcCall(client, methodPath, bytes) {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(methodPath, (x) => x, (x) => x, bytes,
      { deadline: Date.now() + 15000 }, (err, reply) => {
        if (err) {
          resolve(err);
        } else {
          reject(new Error(`${methodPath} answered ${reply.toString('hex')}`));
        }
      });
  });
}

// Protobuf wire encoding, for requests the client library cannot make.
function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return Buffer.from(out);
}
function lengthDelimited(field, bytes) {
  return Buffer.concat([Buffer.from([(field << 3) | 2]), varint(bytes.length), bytes]);
}

// The HTTP answer must be `status` with {"error": kind, "message": ...}.
function assertHttpError(res, status, kind, expected) {
  assert.equal(res.status, status, res.text);
  assert.ok(res.body !== null, `not JSON: ${res.text}`);
  assert.equal(res.body.error, kind, res.text);
  assertMessage(res.body.message, expected);
}

async function getJsonRes(urlPath, init = {}) {
  const res = await fetch(`${node.httpUrl}${urlPath}`, init);
  const text = await res.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Left null: the caller asserts on what it expects.
  }
  return { status: res.status, text, body };
}

// Writes `text` (a string or Buffer, or a list of them sent `gapMs` apart)
// on a fresh TCP connection to the HTTP port and resolves to the first
// response: {status, headers, body}. Fails if none is whole within the
// deadline.
function rawHttp(pieces, { gapMs = 0 } = {}) {
  const parts = Array.isArray(pieces) ? pieces : [pieces];
  return new Promise((resolve, reject) => {
    const socket = net.connect(node.ports.http, '127.0.0.1');
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (fn, value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      fn(value);
    };
    const timer = setTimeout(() => finish(reject, new Error(
      `no whole HTTP response within ${kRawHttpDeadlineMs} ms; got ` +
      JSON.stringify(data.toString('latin1').slice(0, 300)))), kRawHttpDeadlineMs);
    const tryParse = () => {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return null;
      const lines = data.subarray(0, end).toString('latin1').split('\r\n');
      const m = /^HTTP\/1\.[01] (\d{3}) /.exec(lines[0]);
      if (!m) return { error: `not an HTTP status line: ${lines[0]}` };
      const headers = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (data.length < end + 4 + length) return null;
      return {
        status: Number(m[1]), headers,
        body: data.subarray(end + 4, end + 4 + length).toString('utf8'),
      };
    };
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      const r = tryParse();
      if (r && r.error) finish(reject, new Error(r.error));
      else if (r) finish(resolve, r);
    });
    socket.on('error', (e) => finish(reject, e));
    socket.on('close', () => finish(reject, new Error(
      `connection closed before a whole response; got ${
        JSON.stringify(data.toString('latin1').slice(0, 300))}`)));
    (async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
        if (done) return;
        socket.write(part);
      }
    })();
  });
}

// A raw HTTP answer must be `status` with exactly this error JSON.
function assertRawHttpError(res, status, kind, message) {
  assert.equal(res.status, status, res.body);
  assert.deepEqual(JSON.parse(res.body), { error: kind, message });
}

// The same signature with S replaced by n - S: as valid for ECDSA, but
// the high-S form the node refuses (signature malleability).
function highSTwin(der) {
  assert.equal(der[0], 0x30);
  const rLength = der[3];
  const r = der.subarray(4, 4 + rLength);
  const sLength = der[5 + rLength];
  const s = BigInt(`0x${der.subarray(6 + rLength, 6 + rLength + sLength).toString('hex')}`);
  let hex = (kCurveOrder - s).toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  let high = Buffer.from(hex, 'hex');
  if (high[0] & 0x80) high = Buffer.concat([Buffer.from([0]), high]);
  const body = Buffer.concat([
    Buffer.from([0x02, r.length]), r, Buffer.from([0x02, high.length]), high]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

// A deploy with an expiration timestamp (field 13 of DeployDataProto),
// signed by the node's key: the client's preimage with field 13 appended
// (the highest field, so still the proto3 encoding in field order).
function signWithExpiration({ validAfterBlockNumber, expirationTimestamp }) {
  const timestamp = Date.now();
  const data = {
    term: kTerm, timestamp, phloprice: 1, phlolimit: 1000000,
    validafterblocknumber: validAfterBlockNumber, shardid: 'root',
  };
  const preimage = Buffer.concat([
    Buffer.from(rnodeJs.deployDataProtobufSerialize(data)),
    Buffer.from([(13 << 3) | 0]), varint(expirationTimestamp)]);
  const key = new EllipticCurve('secp256k1').keyFromPrivate(node.privateKey);
  const sig = Buffer.from(
    key.sign(blake2bHex(preimage, undefined, 32), { canonical: true }).toDER());
  const deployer = Buffer.from(key.getPublic('array'));
  return {
    proto: {
      deployer, term: kTerm, timestamp: String(timestamp), sig,
      sigAlgorithm: 'secp256k1', phloPrice: '1', phloLimit: '1000000',
      validAfterBlockNumber: String(validAfterBlockNumber), shardId: 'root',
      expirationTimestamp: String(expirationTimestamp),
    },
    json: {
      data: {
        term: kTerm, timestamp, phloPrice: 1, phloLimit: 1000000,
        validAfterBlockNumber, shardId: 'root', expirationTimestamp,
      },
      deployer: deployer.toString('hex'),
      signature: sig.toString('hex'),
      sigAlgorithm: 'secp256k1',
    },
  };
}

// Waits until the deploy is in a finalized block; its /api/deploy view.
async function finalizedView(id) {
  return waitFor(`deploy ${id.slice(0, 16)}... to be finalized`, async () => {
    const r = await node.getJson(`/api/deploy/${id}`);
    return r.status === 200 && r.body.isFinalized ? r.body : null;
  });
}

// ---- doDeploy: fields the signature cannot vouch for ----

it('gRPC doDeploy with every field left at its default is refused for the term', async () => {
  await assertRefused({}, 'term must not be empty');
});

it('gRPC doDeploy of a term one byte above the term limit is refused', async () => {
  // Valid Rholang padded with spaces: only the size is wrong.
  const term = `${' '.repeat(kMaxDeployTermBytes + 1 - kTerm.length)}${kTerm}`;
  const d = await freshDeploy({ term });
  await assertRefused(d.proto,
    `term is ${kMaxDeployTermBytes + 1} bytes, limit ${kMaxDeployTermBytes}`);
});

for (const [field, option, value] of [
  ['phloLimit', 'phloLimit', -1],
  ['phloPrice', 'phloPrice', -1],
  ['timestamp', 'timestamp', -5],
]) {
  // Signed as sent: the check is on the value, not the signature. A
  // negative phlo price is refused here, before the minimum-price check.
  it(`gRPC doDeploy with a negative ${field} is refused`, async () => {
    const d = await freshDeploy({ [option]: value });
    await assertRefused(d.proto, `${field} must not be negative, got ${value}`);
  });
}

it('gRPC doDeploy with a shard id above the shard id limit is refused', async () => {
  const shardId = 'r'.repeat(kMaxShardIdBytes + 44);
  const d = await freshDeploy({ shardId });
  await assertRefused(d.proto,
    `shardId is ${shardId.length} bytes, limit ${kMaxShardIdBytes}`);
});

it('gRPC doDeploy in a language other than rholang is refused', async () => {
  // language is not signed: the rest of the deploy is valid.
  const d = await freshDeploy();
  await assertRefused({ ...d.proto, language: 'python' },
    "unsupported deploy language 'python' (only rholang)");
});

// ---- doDeploy: signature and deployer ----

for (const name of ['ed25519', 'secp256k1_eth', 'secp256k1 ', '']) {
  // Names ignore ASCII case but nothing else: no default for "".
  it(`gRPC doDeploy with sigAlgorithm ${JSON.stringify(name)} is refused`, async () => {
    const d = await freshDeploy();
    await assertRefused({ ...d.proto, sigAlgorithm: name },
      `unsupported signature algorithm '${name}' ` +
      '(expected secp256k1, secp256k1:eth or secp256k1-eth)');
  });
}

it('gRPC doDeploy with sigAlgorithm "SECP256K1" is accepted (case is ignored)', async () => {
  const d = await freshDeploy();
  await node.ok(node.deployClient, 'doDeploy', { ...d.proto, sigAlgorithm: 'SECP256K1' });
});

it('gRPC doDeploy naming secp256k1:eth for a DER signature is refused for its length', async () => {
  const d = await freshDeploy();
  await assertRefused({ ...d.proto, sigAlgorithm: 'secp256k1:eth' },
    `sig: compact signature must be 64 bytes, got ${d.proto.sig.length}`);
});

it('gRPC doDeploy with a zeroed signature is refused as not DER', async () => {
  const d = await freshDeploy();
  await assertRefused({ ...d.proto, sig: Buffer.alloc(70) },
    'sig: signature is not valid DER');
});

for (const length of [0, 100]) {
  it(`gRPC doDeploy with a ${length}-byte signature is refused for its length`, async () => {
    const d = await freshDeploy();
    await assertRefused({ ...d.proto, sig: Buffer.alloc(length, 0x30) },
      `sig: DER signature must be 1 to ${kMaxDerSignatureBytes} bytes, got ${length}`);
  });
}

it('gRPC doDeploy signed by another key than its deployer is refused', async () => {
  const d = await freshDeploy();
  // The same data signed by another key: a valid signature, wrong signer.
  const other = signDeploy('a'.repeat(64), {
    term: kTerm, validAfterBlockNumber: Number(d.proto.validAfterBlockNumber),
    timestamp: Number(d.proto.timestamp),
  });
  assert.notDeepEqual(other.proto.deployer, d.proto.deployer);
  await assertRefused({ ...d.proto, sig: other.proto.sig },
    'sig: signature does not match the deploy and deployer');
});

it('gRPC doDeploy with the high-S twin of a valid signature is refused', async () => {
  const d = await freshDeploy();
  await assertRefused({ ...d.proto, sig: highSTwin(d.proto.sig) },
    'sig: signature has a high S value');
});

it('gRPC doDeploy with a 33-byte (compressed) deployer key is refused', async () => {
  const d = await freshDeploy();
  await assertRefused({ ...d.proto, deployer: d.proto.deployer.subarray(0, 33) },
    'deployer: public key must be 65 bytes of uncompressed SEC1 (04||X||Y), got 33 bytes');
});

it('gRPC doDeploy with a 65-byte deployer key off the curve is refused', async () => {
  const d = await freshDeploy();
  const offCurve = Buffer.concat([Buffer.from([0x04]), Buffer.alloc(64)]);
  await assertRefused({ ...d.proto, deployer: offCurve },
    'deployer: public key is not a point on secp256k1');
});

// ---- doDeploy: windows and replays ----

it('gRPC doDeploy whose expiration timestamp has passed is refused', async () => {
  const d = signWithExpiration({
    validAfterBlockNumber: await node.latestBlockNumber(), expirationTimestamp: 1000,
  });
  await assertRefused(d.proto,
    /^deploy expired: expirationTimestamp 1000 is before now \(\d+\)$/);
});

it('a deploy waiting for a future block, replayed (gRPC, HTTP), is refused as pooled', async () => {
  // validAfterBlockNumber ahead, within the horizon of 50 blocks: admitted
  // (docs/node.md "Proposer"), then it waits in the pool, so the replay
  // meets it there every time.
  const d = await freshDeploy({
    validAfterBlockNumber: (await node.latestBlockNumber()) + 50,
  });
  const first = await node.ok(node.deployClient, 'doDeploy', d.proto);
  assert.equal(deployIdOfSuccess(first.result), d.id);
  const expected = `deploy ${d.id} is already in the pool`;
  await assertRefused(d.proto, expected);
  assertHttpError(await node.postJson('/api/deploy', d.json), 409, 'duplicate_deploy',
    expected);
  const status = await node.getJson(`/api/deploy-finalization-status/${d.id}`);
  assert.deepEqual(status, {
    status: 200, body: { state: 'Pending', rejectionCount: 0, latestBlockHash: null },
  });
});

// Regression (issue 43): a window starting far ahead was admitted and sat
// in the pool until the chain got there (20,000 of them filled it).
it('a deploy whose window starts more than 50 blocks ahead is refused', async () => {
  const height = await node.latestBlockNumber();
  const d = await freshDeploy({ validAfterBlockNumber: height + 100000 });
  await assertRefused(d.proto, new RegExp(
    `^Deploy is valid only after block ${height + 100000}, more than 50 blocks above ` +
    'this validator\'s highest block, \\d+; set validAfterBlockNumber to a recent ' +
    'block number\\.$'));
});

it('a deploy in a block, replayed over HTTP and gRPC, is refused naming the block', async () => {
  const d = await freshDeploy();
  const res = await node.postJson('/api/deploy', d.json);
  assert.equal(res.status, 200, res.text);
  assert.equal(deployIdOfSuccess(res.body), d.id);
  const view = await finalizedView(d.id);
  const expected = `Deploy ${d.id} is already in block ${view.blockHash}.`;
  assertHttpError(await node.postJson('/api/deploy', d.json), 409, 'duplicate_deploy',
    expected);
  await assertRefused(d.proto, expected);
});

it('HTTP deploy whose validity window closed is refused with the window named', async () => {
  const latest = await node.latestBlockNumber();
  const validAfterBlockNumber = latest - 60;
  const d = await freshDeploy({ validAfterBlockNumber });
  // Nothing is pending (the `it` wrapper), so the chain stays at `latest`.
  assertHttpError(await node.postJson('/api/deploy', d.json), 400, 'invalid_deploy',
    `deploy can no longer be included: validAfterBlockNumber ${validAfterBlockNumber} ` +
    `allows blocks up to ${validAfterBlockNumber + 49} (lifespan 50 blocks) and the ` +
    `chain is at block ${latest}`);
});

it('HTTP deploy whose expiration timestamp has passed is refused', async () => {
  const d = signWithExpiration({
    validAfterBlockNumber: await node.latestBlockNumber(), expirationTimestamp: 1000,
  });
  assertHttpError(await node.postJson('/api/deploy', d.json), 400, 'invalid_deploy',
    /^deploy expired: expirationTimestamp 1000 is before now \(\d+\)$/);
});

// ---- doDeploy: terms that do not parse ----

// Terms are not parsed at admission: one that does not parse is admitted,
// then fails in its block, errored and charged its parse cost (one phlo a
// byte, docs/costs.md), and the node goes on.
it('a deploy term nested past the parser limit is admitted and fails in its block', async () => {
  const term = `new x in { x!(${'@{'.repeat(3000)}1${'}'.repeat(3000)}) }`;
  const d = await freshDeploy({ term });
  const reply = await node.ok(node.deployClient, 'doDeploy', d.proto);
  assert.equal(deployIdOfSuccess(reply.result), d.id);
  const view = await finalizedView(d.id);
  assert.equal(view.errored, true, JSON.stringify(view));
  assert.equal(view.systemDeployError, '');
  assert.equal(view.cost, Buffer.byteLength(term));
});

// A phlo limit of 0 would pay nothing (its precharge is 0) for a place in
// a block: the shard's rules refuse it (the public node admits it and the
// deploy fails in its block at cost 0; an unfunded key could fill blocks
// with such deploys).
it('a deploy with phloLimit 0 is refused by the shard rules', async () => {
  const d = await freshDeploy({ phloLimit: 0 });
  const reply = await node.unary(node.deployClient, 'doDeploy', d.proto);
  assert.match(errorMessages(reply, 'doDeploy with phloLimit 0'),
    /^Phlo limit 0 is outside this shard's range, 1 to 1000000000\.$/);
  const r = await node.getJson(`/api/deploy-finalization-status/${d.id}`);
  assert.equal(r.status, 404, 'the refused deploy was kept');
});

// A deployer whose balance at the last finalized block cannot cover
// phloLimit x phloPrice is refused (issue 43). Before, the deploy was
// pooled and went in a block as a failed deploy at cost 0: throwaway keys
// could fill blocks for nothing. Nothing is kept, over gRPC or HTTP.
it('a deploy whose deployer cannot pay is refused, and nothing is kept', async () => {
  const key = newPrivateKey();
  const expected = /^Deploy was not accepted: insufficient funds: the deployer's vault 1111[1-9A-HJ-NP-Za-km-z]+ holds 0 at the last finalized block, less than phloLimit x phloPrice = \d+\.$/;
  const d = signDeploy(key, { term: kTerm, validAfterBlockNumber: await node.latestBlockNumber() });
  const reply = await node.unary(node.deployClient, 'doDeploy', d.proto);
  assert.match(errorMessages(reply, 'doDeploy from an unfunded key'), expected);
  const r = await node.getJson(`/api/deploy-finalization-status/${d.id}`);
  assert.equal(r.status, 404, 'the refused deploy was kept');
  const h = signDeploy(key, { term: kTerm, validAfterBlockNumber: await node.latestBlockNumber() });
  const res = await fetch(`${node.httpUrl}/api/deploy`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(h.json),
  });
  const body = await res.json();
  assert.equal(res.status, 422, JSON.stringify(body));
  assert.match(JSON.stringify(body), /insufficient funds/);
  const metrics = await (await fetch(`${node.httpUrl}/metrics`)).text();
  assert.match(metrics, /rnode_deploys_refused_total\{reason="insufficient_funds"\} 2/);
});

// ---- gRPC requests that do not decode ----

it('gRPC request above grpc-max-recv-message-size fails RESOURCE_EXHAUSTED', async () => {
  const term = 'x'.repeat(kMaxGrpcRequestBytes + (1 << 20));
  const err = await assertGrpcStatus(node.deployClient, 'doDeploy', { term },
    grpc.status.RESOURCE_EXHAUSTED);
  assert.match(err.details,
    new RegExp(`^Received message larger than max \\(\\d+ vs\\. ${kMaxGrpcRequestBytes}\\)$`));
});

it('gRPC doDeploy whose term is not UTF-8 fails INTERNAL (does not decode)', async () => {
  // DeployDataProto{term: "\xff\xfe"}: proto3 strings must be UTF-8.
  const bytes = lengthDelimited(2, Buffer.from([0xff, 0xfe]));
  const err = await rawGrpcCall(node.deployClient, '/casper.v1.DeployService/doDeploy', bytes);
  assert.equal(err.code, grpc.status.INTERNAL, `gRPC status ${err.code} (${err.details})`);
});

it('gRPC getDataAtName with a name nested beyond protobuf\'s depth fails INTERNAL', async () => {
  // Par{bundles: [Bundle{body: Par{...}}]} 200 deep: 400 nested messages,
  // past protobuf's 100, which the client library would not even encode.
  let par = Buffer.alloc(0);
  for (let i = 0; i < 200; ++i) par = lengthDelimited(11, lengthDelimited(1, par));
  const query = Buffer.concat([
    lengthDelimited(1, par), lengthDelimited(2, Buffer.from('ab'.repeat(32)))]);
  const err = await rawGrpcCall(node.deployClient,
    '/casper.v1.DeployService/getDataAtName', query);
  assert.equal(err.code, grpc.status.INTERNAL, `gRPC status ${err.code} (${err.details})`);
});

it('gRPC ProposeService is not served on the external port (UNIMPLEMENTED)', async () => {
  const err = await rawGrpcCall(node.deployClient,
    '/casper.v1.ProposeService/propose', Buffer.alloc(0));
  assert.equal(err.code, grpc.status.UNIMPLEMENTED, `gRPC status ${err.code} (${err.details})`);
});

it('gRPC method the service does not have fails UNIMPLEMENTED', async () => {
  const err = await rawGrpcCall(node.deployClient,
    '/casper.v1.DeployService/deployEverything', Buffer.alloc(0));
  assert.equal(err.code, grpc.status.UNIMPLEMENTED, `gRPC status ${err.code} (${err.details})`);
});

it('gRPC previewPrivateNames (not implemented yet) fails UNIMPLEMENTED', async () => {
  await assertGrpcStatus(node.deployClient, 'previewPrivateNames',
    { user: Buffer.alloc(65), timestamp: '1', nameQty: 1 }, grpc.status.UNIMPLEMENTED);
});

// ---- gRPC reads ----

for (const [what, hash] of [
  ['non-hex', 'xyz123'], ['too short', 'abc'], ['0x-prefixed', `0x${'ab'.repeat(32)}`],
]) {
  it(`gRPC getBlock with a ${what} hash is refused as malformed`, async () => {
    await assertServiceError('getBlock', { hash },
      `'${hash}' is not a valid block hash (minimum 6 hex characters)`);
  });
}

it('gRPC getBlock with a well-formed unknown hash answers not found', async () => {
  const hash = 'ab'.repeat(32);
  await assertServiceError('getBlock', { hash }, `Block not found: ${hash}`);
});

it('gRPC isFinalized with a non-hex hash is refused', async () => {
  await assertServiceError('isFinalized', { hash: 'xyz' },
    "'xyz' is not a block hash (64 hex characters)");
});

it('gRPC findDeploy given the hex text instead of the id bytes answers not found', async () => {
  // The id is raw bytes; the node echoes the hex of what it got.
  await assertServiceError('findDeploy', { deployId: Buffer.from('abcd') },
    "Couldn't find block containing deploy with id: 61626364");
});

it('gRPC deployFinalizationStatus with an empty id answers not found', async () => {
  await assertServiceError('deployFinalizationStatus', { deploySig: Buffer.alloc(0) },
    "Couldn't find block containing deploy with id: ");
});

it('gRPC bondStatus with an empty public key is refused', async () => {
  await assertServiceError('bondStatus', { publicKey: Buffer.alloc(0) },
    'public key must be 65 bytes of uncompressed SEC1 (04||X||Y), got 0 bytes');
});

it('gRPC exploratoryDeploy of a term nested 3000 deep is refused at the parser', async () => {
  const term = `new x in { x!(${'@{'.repeat(3000)}1${'}'.repeat(3000)}) }`;
  await assertServiceError('exploratoryDeploy', { term },
    new RegExp(`^1:\\d+: nesting deeper than ${kMaxNestingDepth} levels$`));
});

it('gRPC exploratoryDeploy above the term limit is refused', async () => {
  await assertServiceError('exploratoryDeploy',
    { term: ' '.repeat(kMaxDeployTermBytes + 1) }, 'the term is too large');
});

it('gRPC exploratoryDeploy of an unfinished term reports where it ends', async () => {
  await assertServiceError('exploratoryDeploy', { term: 'new x in {' },
    '1:11: expected a process, found end of input');
});

it('gRPC exploratoryDeploy at an unknown block answers not found', async () => {
  const blockHash = 'ab'.repeat(32);
  await assertServiceError('exploratoryDeploy', { term: kTerm, blockHash },
    `Block not found: ${blockHash}`);
});

it('gRPC getDataAtName with a send as the name is refused', async () => {
  await assertServiceError('getDataAtName',
    { par: { sends: [{ chan: {}, data: [] }] }, blockHash: 'ab'.repeat(32) },
    'a name must be a closed value: sends are not supported');
});

it('gRPC listenForDataAtName deeper than the blocks limit is refused', async () => {
  await assertServiceError('listenForDataAtName', { depth: 1000000, name: {} },
    `Your request depth 1000000 exceeds the maximum depth limit ${kMaxBlocksLimit}`);
});

it('gRPC getBlocksByHeights with end below start fails INVALID_ARGUMENT', async () => {
  const err = await node.stream(node.deployClient, 'getBlocksByHeights',
    { startBlockNumber: '5', endBlockNumber: '2' }).then(
    (replies) => assert.fail(`answered ${replies.length} blocks`), (e) => e);
  assert.equal(err.code, grpc.status.INVALID_ARGUMENT, `${err.code} ${err.details}`);
  assert.equal(err.details, 'endBlockNumber is below startBlockNumber');
});

// ---- HTTP POST /api/deploy: the JSON body ----

for (const [what, body] of [['an array', '[1,2]'], ['null', 'null'], ['a string', '"deploy"']]) {
  it(`HTTP deploy whose body is ${what} is refused`, async () => {
    assertHttpError(await node.postJson('/api/deploy', body), 400, 'invalid_deploy',
      'the body is not a JSON object');
  });
}

it('HTTP deploy whose body is not UTF-8 is refused as not JSON', async () => {
  const body = Buffer.concat([
    Buffer.from('{"data":{"term":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]);
  const res = await getJsonRes('/api/deploy', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body,
  });
  assertHttpError(res, 400, 'invalid_deploy', 'the body is not a JSON object');
});

it('HTTP deploy whose data is an array is refused with the expected shape', async () => {
  const d = await freshDeploy();
  assertHttpError(await node.postJson('/api/deploy', { ...d.json, data: [d.json.data] }),
    400, 'invalid_deploy',
    'expected {"data":{...},"deployer":hex,"signature":hex,"sigAlgorithm":...}');
});

for (const [field, value] of [['term', 5], ['shardId', 1], ['term', null]]) {
  it(`HTTP deploy with data.${field} = ${JSON.stringify(value)} is refused`, async () => {
    const d = await freshDeploy();
    const body = { ...d.json, data: { ...d.json.data, [field]: value } };
    assertHttpError(await node.postJson('/api/deploy', body), 400, 'invalid_deploy',
      `missing or non-string field '${field}'`);
  });
}

for (const value of ['soon', 1.5, true, [1], {}, '99999999999999999999']) {
  // A numeric string is accepted (64-bit values from JavaScript); one out
  // of int64 range is not a number.
  it(`HTTP deploy with data.timestamp = ${JSON.stringify(value)} is refused`, async () => {
    const d = await freshDeploy();
    const body = { ...d.json, data: { ...d.json.data, timestamp: value } };
    assertHttpError(await node.postJson('/api/deploy', body), 400, 'invalid_deploy',
      "field 'timestamp' must be an integer");
  });
}

for (const field of ['phloPrice', 'validAfterBlockNumber']) {
  it(`HTTP deploy without data.${field} is refused`, async () => {
    const d = await freshDeploy();
    const body = { ...d.json, data: { ...d.json.data, [field]: undefined } };
    assertHttpError(await node.postJson('/api/deploy', body), 400, 'invalid_deploy',
      `missing field '${field}'`);
  });
}

it('HTTP deploy without a signature is refused', async () => {
  const d = await freshDeploy();
  assertHttpError(await node.postJson('/api/deploy', { ...d.json, signature: undefined }),
    400, 'invalid_deploy', "missing or non-string field 'signature'");
});

for (const [what, edit] of [
  ['an odd-length', (hex) => hex.slice(1)],
  ['a non-hex', (hex) => `zz${hex.slice(2)}`],
  ['a 0x-prefixed', (hex) => `0x${hex}`],
  ['a base64', (hex) => Buffer.from(hex, 'hex').toString('base64')],
]) {
  it(`HTTP deploy with ${what} deployer is refused as not hex`, async () => {
    const d = await freshDeploy();
    assertHttpError(
      await node.postJson('/api/deploy', { ...d.json, deployer: edit(d.json.deployer) }),
      400, 'invalid_deploy', "field 'deployer' is not hex");
  });
}

it('HTTP deploy with a base64 signature is refused as not hex', async () => {
  const d = await freshDeploy();
  const signature = Buffer.from(d.json.signature, 'hex').toString('base64');
  assertHttpError(await node.postJson('/api/deploy', { ...d.json, signature }),
    400, 'invalid_deploy', "field 'signature' is not hex");
});

it('HTTP deploy with a negative phloLimit is refused', async () => {
  const d = await freshDeploy({ phloLimit: -1 });
  assertHttpError(await node.postJson('/api/deploy', d.json), 400, 'invalid_deploy',
    'phloLimit must not be negative, got -1');
});

it('HTTP deploy with a zeroed signature is refused as not DER', async () => {
  const d = await freshDeploy();
  assertHttpError(
    await node.postJson('/api/deploy', { ...d.json, signature: '00'.repeat(70) }),
    400, 'invalid_deploy', 'sig: signature is not valid DER');
});

// ---- HTTP reads ----

for (const [what, hash] of [
  ['non-hex', 'zzzzzz'], ['too short', 'abc'], ['0x-prefixed', `0x${'ab'.repeat(32)}`],
  ['too long', 'a'.repeat(66)],
]) {
  it(`HTTP GET /api/block with a ${what} hash is refused as malformed`, async () => {
    assertHttpError(await getJsonRes(`/api/block/${hash}`), 400, 'invalid_hash',
      `'${hash}' is not a valid block hash (minimum 6 hex characters)`);
  });
}

it('HTTP GET /api/block of a well-formed unknown hash is 404', async () => {
  const hash = 'ab'.repeat(32);
  assertHttpError(await getJsonRes(`/api/block/${hash}`), 404, 'block_not_found',
    `Block not found: ${hash}`);
});

it('HTTP GET /api/is-finalized with a non-hex hash is refused', async () => {
  assertHttpError(await getJsonRes('/api/is-finalized/xyz'), 400, 'invalid_hash',
    "'xyz' is not a valid block hash (minimum 6 hex characters)");
});

for (const [what, id] of [
  ['a non-hex', 'xyz'], ['an odd-length', 'abc'], ['an empty (0x)', '0x'],
]) {
  it(`HTTP GET /api/deploy with ${what} id is refused`, async () => {
    assertHttpError(await getJsonRes(`/api/deploy/${id}`), 400, 'invalid_deploy_id',
      'the deploy id is not hex');
  });
}

it('HTTP GET /api/deploy with a base64 id is refused as not hex', async () => {
  const d = await freshDeploy();
  const id = encodeURIComponent(Buffer.from(d.id, 'hex').toString('base64'));
  assertHttpError(await getJsonRes(`/api/deploy/${id}`), 400, 'invalid_deploy_id',
    'the deploy id is not hex');
});

it('HTTP GET /api/deploy of an unknown id is 404', async () => {
  assertHttpError(await getJsonRes('/api/deploy/ABCD'), 404, 'deploy_not_found',
    "Couldn't find block containing deploy with id: abcd");
});

for (const depth of ['0', '-1', 'abc']) {
  it(`HTTP GET /api/blocks/${depth} is refused`, async () => {
    assertHttpError(await getJsonRes(`/api/blocks/${depth}`), 400, 'invalid_depth',
      'depth must be a positive integer');
  });
}

for (const range of ['5/2', '-1/2', 'a/b']) {
  it(`HTTP GET /api/blocks/${range} is refused`, async () => {
    assertHttpError(await getJsonRes(`/api/blocks/${range}`), 400, 'invalid_range',
      'expected /api/blocks/{start}/{end} with start <= end');
  });
}

// The finalization-status route judges ids as /api/deploy/{id} does.
for (const id of ['xyz', '0x', 'abc']) {
  it(`HTTP GET /api/deploy-finalization-status/${id} is refused as not hex`, async () => {
    assertHttpError(await getJsonRes(`/api/deploy-finalization-status/${id}`), 400,
      'invalid_deploy_id', 'the deploy id is not hex');
  });
}

it('HTTP GET /api/deploy-finalization-status of an unknown id is 404', async () => {
  assertHttpError(await getJsonRes('/api/deploy-finalization-status/abcd'), 404,
    'deploy_not_found', "Couldn't find block containing deploy with id: abcd");
});

// JSON numbers past int64 are not integers of the deploy (they used to wrap
// to negative values). Written as raw text: JavaScript cannot hold them.
for (const [field, value] of [['phloLimit', '9223372036854775808'],
  ['timestamp', '18446744073709551615'], ['validAfterBlockNumber', '9223372036854775808']]) {
  it(`HTTP deploy with data.${field} = ${value} is refused as not an integer`, async () => {
    const d = await freshDeploy();
    const text = JSON.stringify({ ...d.json, data: { ...d.json.data, [field]: 7 } })
      .replace(`"${field}":7`, `"${field}":${value}`);
    assert.ok(text.includes(value));
    assertHttpError(await node.postJson('/api/deploy', text), 400, 'invalid_deploy',
      `field '${field}' must be an integer`);
  });
}

it('HTTP deploy with a numeric sigAlgorithm is refused as not a string', async () => {
  const d = await freshDeploy();
  assertHttpError(await node.postJson('/api/deploy', { ...d.json, sigAlgorithm: 5 }), 400,
    'invalid_deploy', "missing or non-string field 'sigAlgorithm'");
});

it('HTTP deploy with a null sigAlgorithm is taken as secp256k1', async () => {
  const d = await freshDeploy();
  const res = await node.postJson('/api/deploy', { ...d.json, sigAlgorithm: null });
  assert.equal(res.status, 200, res.text);
  assert.equal(deployIdOfSuccess(res.body), d.id);
});

it('HTTP HEAD is answered as GET without a body', async () => {
  for (const route of ['/api/status', '/api/last-finalized-block']) {
    const get = await fetch(`${node.httpUrl}${route}`);
    const head = await fetch(`${node.httpUrl}${route}`, { method: 'HEAD' });
    assert.equal(get.status, 200, route);
    assert.equal(head.status, 200, route);
    assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), route);
    assert.equal(await head.text(), '', route);
  }
});

it('HTTP GET /api/bond-status with a non-hex key is refused', async () => {
  assertHttpError(await getJsonRes('/api/bond-status/xyz'), 400, 'invalid_public_key',
    'not hex');
});

it('HTTP GET /api/bond-status with a 2-byte key is refused for its length', async () => {
  assertHttpError(await getJsonRes('/api/bond-status/abcd'), 400, 'invalid_public_key',
    'public key must be 65 bytes of uncompressed SEC1 (04||X||Y), got 2 bytes');
});

// ---- HTTP explore-deploy ----

it('HTTP explore-deploy with a numeric term is refused', async () => {
  assertHttpError(await node.postJson('/api/explore-deploy', { term: 5 }), 400,
    'invalid_request', "missing or non-string field 'term'");
});

it('HTTP explore-deploy of 100000 nested parentheses is refused at the parser', async () => {
  const term = `new x in { x!(${'('.repeat(100000)}1${')'.repeat(100000)}) }`;
  assertHttpError(await node.postJson('/api/explore-deploy', { term }), 400,
    'invalid_term', new RegExp(`^1:\\d+: nesting deeper than ${kMaxNestingDepth} levels$`));
});

it('HTTP explore-deploy of a term with a NUL byte is refused at the byte', async () => {
  assertHttpError(await node.postJson('/api/explore-deploy', { term: `${kTerm}\u0000` }),
    400, 'invalid_term', `1:${kTerm.length + 1}: unexpected byte 0x00`);
});

it('HTTP explore-deploy-by-block-hash with a non-hex block hash is refused', async () => {
  assertHttpError(await node.postJson('/api/explore-deploy-by-block-hash',
    { term: kTerm, blockHash: 'zz' }), 400, 'invalid_hash',
  "'zz' is not a valid block hash (minimum 6 hex characters)");
});

it('HTTP explore-deploy-by-block-hash at an unknown block is 404', async () => {
  const blockHash = 'ab'.repeat(32);
  assertHttpError(await node.postJson('/api/explore-deploy-by-block-hash',
    { term: kTerm, blockHash }), 404, 'not_found', `Block not found: ${blockHash}`);
});

// ---- HTTP data-at-name ----

it('HTTP data-at-name whose body is an array is refused', async () => {
  assertHttpError(await node.postJson('/api/data-at-name', '[1]'), 400,
    'invalid_request', 'the body is not a JSON object');
});

for (const [what, name, message] of [
  ['that is a string', 'x', `${kNameShape}, got string`],
  ['that is missing', undefined, `${kNameShape}, got null`],
  ['of an unknown kind', { UnforgFoo: { data: '00' } },
    `${kNameShape}: unknown kind "UnforgFoo"`],
  ['with numeric data', { UnforgPrivate: { data: 5 } },
    'UnforgPrivate must be {"data": hex}'],
  ['with odd-length hex', { UnforgPrivate: { data: 'abc' } },
    'UnforgPrivate.data: hex string has odd length 3'],
  ['with non-hex data', { UnforgDeploy: { data: 'zz' } },
    'UnforgDeploy.data: invalid hex digit at position 0'],
]) {
  it(`HTTP data-at-name refuses a name ${what}`, async () => {
    assertHttpError(await node.postJson('/api/data-at-name', { name, depth: 1 }), 400,
      'invalid_name', message);
  });
}

it('HTTP data-at-name with a non-numeric depth is refused', async () => {
  assertHttpError(await node.postJson('/api/data-at-name',
    { name: { UnforgPrivate: { data: 'ab' } }, depth: 'deep' }), 400,
  'invalid_request', "field 'depth' must be an integer");
});

it('HTTP data-at-name-by-block-hash with a numeric block hash is refused', async () => {
  assertHttpError(await node.postJson('/api/data-at-name-by-block-hash',
    { name: { UnforgPrivate: { data: 'ab' } }, blockHash: 5 }), 400,
  'invalid_hash', "missing or non-string field 'blockHash'");
});

it('HTTP data-at-name-by-block-hash at an unknown block is 404', async () => {
  const blockHash = 'ab'.repeat(32);
  assertHttpError(await node.postJson('/api/data-at-name-by-block-hash',
    { name: { UnforgPrivate: { data: 'ab' } }, blockHash }), 404, 'not_found',
  `Block not found: ${blockHash}`);
});

// ---- HTTP routes and methods ----

for (const [method, route] of [
  ['GET', '/api/deploy'], ['PUT', '/api/deploy'], ['DELETE', '/api/block/abcdef'],
  ['POST', '/api/status'], ['GET', '/api/v1/nope'], ['GET', '/api/blocks/1/2/3'],
]) {
  it(`HTTP ${method} ${route} has no route (404)`, async () => {
    const res = await getJsonRes(route, {
      method, ...(method === 'PUT' ? { body: '{}' } : {}),
    });
    assertHttpError(res, 404, 'not_found', `no route ${method} ${route}`);
  });
}

it('admin HTTP GET /api/propose has no route; POST with nothing pending is 409', async () => {
  const get = await fetch(`${node.adminUrl}/api/propose`);
  const getBody = await get.json();
  assert.equal(get.status, 404);
  assert.deepEqual(getBody, { error: 'not_found', message: 'no route GET /api/propose' });
  const post = await fetch(`${node.adminUrl}/api/propose`, { method: 'POST' });
  assert.equal(post.status, 409);
  assert.deepEqual(await post.json(),
    { error: 'no_new_deploys', message: 'No new deploys to propose.' });
});

// ---- HTTP at the protocol level ----

it('HTTP request line that is not HTTP gets 400 bad_request', async () => {
  assertRawHttpError(await rawHttp('GARBAGE\r\n\r\n'), 400, 'bad_request', 'bad method');
});

it('HTTP request with a non-numeric Content-Length gets 400 bad_request', async () => {
  assertRawHttpError(await rawHttp(
    'POST /api/deploy HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n'),
  400, 'bad_request', 'bad Content-Length');
});

it('HTTP headers above 8 KiB get 431 headers_too_large', async () => {
  const res = await rawHttp('GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    `X-Padding: ${'a'.repeat(kMaxHeaderBytes + 100)}\r\n\r\n`);
  assertRawHttpError(res, 431, 'headers_too_large',
    `request headers exceed ${kMaxHeaderBytes} bytes`);
});

it('HTTP Content-Length above the body limit gets 413 before any body is sent', async () => {
  const res = await rawHttp('POST /api/deploy HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    `Content-Length: ${2 * kMaxBodyBytes}\r\n\r\n`);
  assertRawHttpError(res, 413, 'body_too_large',
    `request body exceeds ${kMaxBodyBytes} bytes`);
});

it('HTTP chunked body growing past the body limit gets 413', async () => {
  const chunk = 'a'.repeat(kMaxBodyBytes / 2);
  const size = chunk.length.toString(16);
  const res = await rawHttp([
    'POST /api/deploy HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n',
    `${size}\r\n${chunk}\r\n`, `${size}\r\n${chunk}\r\n`, `10\r\n${'a'.repeat(16)}\r\n`,
    '0\r\n\r\n']);
  assertRawHttpError(res, 413, 'body_too_large',
    `request body exceeds ${kMaxBodyBytes} bytes`);
});

it('HTTP WebSocket upgrade on a path other than /ws/events is 404', async () => {
  const res = await rawHttp('GET /ws/nope HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    'Upgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Key: dGhpcyBpcyBhIHRlc3Qga2V5\r\nSec-WebSocket-Version: 13\r\n\r\n');
  assertRawHttpError(res, 404, 'not_found', 'no WebSocket endpoint at /ws/nope');
});

// The read timeout itself (30 s) is node/http's (tests/node/http_test.cc
// SlowlorisRequestIsClosedAfterReadTimeout); here: while one client
// trickles a deploy in and another holds an idle connection, others are
// served, and the slow deploy is then answered.
it('a deploy trickled in slowly and an idle connection do not hold up other clients', async () => {
  const idle = net.connect(node.ports.http, '127.0.0.1');
  await new Promise((resolve, reject) => {
    idle.once('connect', resolve);
    idle.once('error', reject);
  });
  try {
    const d = await freshDeploy();
    const body = JSON.stringify(d.json);
    const request = 'POST /api/deploy HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      'Content-Type: application/json\r\nConnection: close\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const pieces = [];
    const kPieces = 20;
    const step = Math.ceil(request.length / kPieces);
    for (let i = 0; i < request.length; i += step) pieces.push(request.slice(i, i + step));
    // 20 pieces 200 ms apart: about 4 s from the first byte to the last.
    const slow = rawHttp(pieces, { gapMs: 200 });
    let slowDone = false;
    slow.then(() => { slowDone = true; }, () => { slowDone = true; });
    // Counts the other clients' requests answered while the slow one was
    // still incomplete.
    let servedMeanwhile = 0;
    while (!slowDone) {
      const res = await fetch(`${node.httpUrl}/api/status`,
        { signal: AbortSignal.timeout(10000) });
      assert.equal(res.status, 200);
      await res.json();
      await node.ok(node.deployClient, 'status', {});
      if (!slowDone) ++servedMeanwhile;
      await new Promise((r) => setTimeout(r, 100));
    }
    const res = await slow;
    assert.equal(res.status, 200, res.body);
    assert.equal(deployIdOfSuccess(JSON.parse(res.body)), d.id);
    assert.ok(servedMeanwhile >= 2,
      `only ${servedMeanwhile} other requests were served while the slow one arrived`);
    await finalizedView(d.id);
  } finally {
    idle.destroy();
  }
});
