// Interoperability of deploy signatures and REV addresses between our `rnode`
// CLI and the public JavaScript client @tgrospic/rnode-grpc-js, used
// unchanged. Run with `node --test signing.test.js`; RNODE_BIN names the
// binary (default ../../build/bin/rnode from this folder).
'use strict';

const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const rnodeJs = loadRnodeGrpcJs();

const RNODE_BIN = process.env.RNODE_BIN
  ? path.resolve(process.env.RNODE_BIN)
  : path.resolve(__dirname, '../../build/bin/rnode');

// Generous: each call signs or verifies one deploy, but CI machines under
// sanitizers can be slow. Only a hung process should ever hit it.
const kRnodeTimeoutMs = 30000;

// Order of the secp256k1 group, for building a malleated (high-S) signature.
const kSecp256k1N =
  0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

// Well-known development keys (docker/.env.example; not secrets) and their
// published REV addresses (docker/genesis/wallets.txt).
const kDevKeys = [
  {
    name: 'bootstrap',
    privateKey: '5f668a7ee96d944a4494cc947e4005e172d7ab3461ee5538f1f2a45a835e9657',
    address: '1111AtahZeefej4tvVR6ti9TJtv8yxLebT31SCEVDCKMNikBk5r3g',
  },
  {
    name: 'validator1',
    privateKey: '357cdc4201a5650830e0bc5a03299a30038d9934ba4c7ab73ec164ad82471ff9',
    address: '111127RX5ZgiAdRaQy4AWy57RdvAAckdELReEBxzvWYVvdnR32PiHA',
  },
  {
    name: 'validator2',
    privateKey: '2c02138097d019d263c1d5383fcaddb1ba6416a0f4e64e3a617fe3af45b7851d',
    address: '111129p33f7vaRrpLqK8Nr35Y2aacAjrR5pd6PCzqcdrMuPHzymczH',
  },
];

// Deploys in rnode-grpc-js's input shape. Every integer stays below 2^53 so
// that JSON numbers and JS numbers hold it exactly.
const kDeployCases = [
  {
    name: 'ASCII term, VABN 0 (reference vector of api_ecosystem.md 3.1)',
    key: kDevKeys[0],
    data: {
      term: 'new x in { x!(1) }',
      timestamp: 1700000000000,
      phloprice: 1,
      phlolimit: 100000,
      validafterblocknumber: 0,
      shardid: 'root',
    },
  },
  {
    name: 'VABN -1 (ten-byte negative varint)',
    key: kDevKeys[1],
    data: {
      term: 'new out(`rho:io:stdout`) in { out!("hello") }',
      timestamp: 1700000000001,
      phloprice: 1,
      phlolimit: 500000,
      validafterblocknumber: -1,
      shardid: 'root',
    },
  },
  {
    name: 'unicode term',
    key: kDevKeys[2],
    data: {
      term: 'new out(`rho:io:stdout`) in { out!("Grüße, 世界 🚀 — ünïcödé ∑") }',
      timestamp: 1735689600000,
      phloprice: 2,
      phlolimit: 250000,
      validafterblocknumber: 12345,
      shardid: 'root',
    },
  },
  {
    name: 'multi-line term with quotes, backslashes and tabs',
    key: kDevKeys[0],
    data: {
      term: [
        'new return, out(`rho:io:stdout`) in {',
        '\tcontract return(@msg) = {',
        '\t\tout!("line \\"one\\"\\n" ++ msg)',
        '\t} |',
        '\treturn!("C:\\\\path")',
        '}',
        '',
      ].join('\n'),
      timestamp: Date.UTC(2024, 0, 2, 3, 4, 5, 678),
      phloprice: 10,
      phlolimit: 1000000,
      validafterblocknumber: 1,
      shardid: 'testnet',
    },
  },
  {
    name: 'large phloLimit, phloPrice, VABN and timestamp',
    key: kDevKeys[1],
    data: {
      term: 'Nil',
      timestamp: 4102444800000,
      phloprice: 1000000007,
      phlolimit: Number.MAX_SAFE_INTEGER,
      validafterblocknumber: 9007199254740000,
      shardid: 'f1r3fly',
    },
  },
  {
    name: 'smallest non-zero values',
    key: kDevKeys[2],
    data: {
      term: '0',
      timestamp: 1,
      phloprice: 1,
      phlolimit: 1,
      validafterblocknumber: 1,
      shardid: 'r',
    },
  },
];

// Fails with a message saying how to install the dependencies when
// node_modules is missing or holds another version than package.json pins.
function loadRnodeGrpcJs() {
  const name = '@tgrospic/rnode-grpc-js';
  const wanted = require('./package.json').dependencies[name];
  let installed = null;
  try {
    const manifest = path.join(__dirname, 'node_modules', name, 'package.json');
    installed = JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
  } catch {
    // Reported below.
  }
  if (installed !== wanted) {
    const what = installed === null
      ? `${name} is not installed in tests/js/node_modules`
      : `tests/js/node_modules has ${name} ${installed}, package.json pins ${wanted}`;
    throw new Error(
      `${what}: run scripts/setup (or scripts/js-deps) to install the ` +
      'JavaScript test dependencies');
  }
  return require(name);
}

// Runs the rnode binary; returns {status, stdout, stderr}. Throws if it
// could not be started, timed out or died from a signal.
function runRnode(args, input) {
  assert.ok(fs.existsSync(RNODE_BIN),
    `rnode binary not found at ${RNODE_BIN}: build it, or set RNODE_BIN`);
  const r = spawnSync(RNODE_BIN, args, {
    input: input === undefined ? '' : input,
    encoding: 'utf8',
    timeout: kRnodeTimeoutMs,
    maxBuffer: 16 << 20,
  });
  if (r.error) {
    throw new Error(`rnode ${args[0]} failed to run: ${r.error.message}`);
  }
  assert.equal(r.signal, null, `rnode ${args[0]} was killed by ${r.signal}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const hex = (bytes) => Buffer.from(bytes).toString('hex');

function bytesFromHex(text, field) {
  assert.match(text, /^([0-9a-f]{2})+$/, `${field} is not lower-case hex`);
  return Uint8Array.from(Buffer.from(text, 'hex'));
}

// rnode-grpc-js deploy object -> the JSON object of `rnode verify-deploy`.
// rnode-grpc-js does not sign expirationTimestamp, so it is 0.
function toCliJson(d) {
  return {
    deployer: hex(d.deployer),
    term: d.term,
    timestamp: d.timestamp,
    sig: hex(d.sig),
    sigAlgorithm: d.sigalgorithm,
    phloPrice: d.phloprice,
    phloLimit: d.phlolimit,
    validAfterBlockNumber: d.validafterblocknumber,
    shardId: d.shardid,
    expirationTimestamp: 0,
  };
}

// JSON object of `rnode sign-deploy` -> what rnode-grpc-js verifyDeploy reads.
function toJsDeploy(j) {
  return {
    term: j.term,
    timestamp: j.timestamp,
    phloprice: j.phloPrice,
    phlolimit: j.phloLimit,
    validafterblocknumber: j.validAfterBlockNumber,
    shardid: j.shardId,
    sigalgorithm: j.sigAlgorithm,
    deployer: bytesFromHex(j.deployer, 'deployer'),
    sig: bytesFromHex(j.sig, 'sig'),
  };
}

function cliVerify(json) {
  return runRnode(['verify-deploy'], JSON.stringify(json));
}

function assertCliAccepts(json) {
  const r = cliVerify(json);
  assert.equal(r.status, 0,
    `verify-deploy rejected ${JSON.stringify(json)}: ${r.stderr}`);
  assert.equal(r.stdout.trim(), 'valid');
}

function assertCliRejects(json) {
  const r = cliVerify(json);
  assert.equal(r.status, 1,
    `verify-deploy exit ${r.status} for ${JSON.stringify(json)}; ` +
    `stdout ${JSON.stringify(r.stdout)}`);
  assert.doesNotMatch(r.stdout, /valid/);
  assert.match(r.stderr, /^invalid: \S/m);
}

// `rnode sign-deploy` for one of kDeployCases; returns the parsed JSON.
function cliSign(key, data, expirationTimestamp) {
  const args = [
    'sign-deploy',
    '--private-key', key.privateKey,
    '--term', data.term,
    '--timestamp', String(data.timestamp),
    '--phlo-price', String(data.phloprice),
    '--phlo-limit', String(data.phlolimit),
    '--valid-after-block-number', String(data.validafterblocknumber),
    '--shard-id', data.shardid,
  ];
  if (expirationTimestamp !== undefined) {
    args.push('--expiration-timestamp', String(expirationTimestamp));
  }
  const r = runRnode(args);
  assert.equal(r.status, 0, `sign-deploy failed: ${r.stderr}`);
  assert.match(r.stdout, /^[^\n]+\n$/, 'sign-deploy must print one line');
  return JSON.parse(r.stdout);
}

function publicKeyOf(key) {
  return rnodeJs.getAddrFromPrivateKey(key.privateKey).pubKey;
}

// Splits a DER ECDSA signature into BigInt r and s.
function parseDer(sig) {
  const b = Buffer.from(sig);
  assert.equal(b[0], 0x30);
  assert.equal(b[2], 0x02);
  const rLen = b[3];
  assert.equal(b[4 + rLen], 0x02);
  const sLen = b[5 + rLen];
  const int = (bytes) => BigInt('0x' + bytes.toString('hex'));
  return { r: int(b.subarray(4, 4 + rLen)), s: int(b.subarray(6 + rLen, 6 + rLen + sLen)) };
}

function encodeDer(r, s) {
  const derInt = (x) => {
    let h = x.toString(16);
    if (h.length % 2) h = '0' + h;
    let v = Buffer.from(h, 'hex');
    if (v[0] & 0x80) v = Buffer.concat([Buffer.from([0]), v]);
    return Buffer.concat([Buffer.from([0x02, v.length]), v]);
  };
  const body = Buffer.concat([derInt(r), derInt(s)]);
  return Uint8Array.from(Buffer.concat([Buffer.from([0x30, body.length]), body]));
}

describe('rnode-grpc-js signs, rnode verify-deploy accepts', () => {
  for (const c of kDeployCases) {
    it(`accepts ${c.name} signed by ${c.key.name}`, () => {
      const signed = rnodeJs.signDeploy(c.key.privateKey, c.data);
      assert.equal(rnodeJs.verifyDeploy(signed), true);
      assertCliAccepts(toCliJson(signed));
    });
  }
});

describe('rnode verify-deploy rejects a tampered rnode-grpc-js deploy', () => {
  const base = kDeployCases[2];
  const signed = rnodeJs.signDeploy(base.key.privateKey, base.data);
  const other = kDevKeys.find((k) => k !== base.key);
  const tampers = [
    ['term changed after signing', (j) => { j.term += ' '; }],
    ['phloLimit raised', (j) => { j.phloLimit += 1; }],
    ['phloPrice changed', (j) => { j.phloPrice -= 1; }],
    ['timestamp changed', (j) => { j.timestamp += 1; }],
    ['validAfterBlockNumber changed', (j) => { j.validAfterBlockNumber = -1; }],
    ['shardId changed', (j) => { j.shardId = 'roots'; }],
    ['expirationTimestamp added', (j) => { j.expirationTimestamp = 4102444800000; }],
    ['one byte of r flipped', (j) => {
      const sig = Buffer.from(j.sig, 'hex');
      sig[10] ^= 0x01;
      j.sig = sig.toString('hex');
    }],
    ['last byte of s flipped', (j) => {
      const sig = Buffer.from(j.sig, 'hex');
      sig[sig.length - 1] ^= 0x80;
      j.sig = sig.toString('hex');
    }],
    ['deployer replaced by another key', (j) => { j.deployer = publicKeyOf(other); }],
  ];

  it('accepts the untampered deploy', () => {
    assertCliAccepts(toCliJson(signed));
  });
  for (const [name, tamper] of tampers) {
    it(`rejects: ${name}`, () => {
      const json = toCliJson(signed);
      tamper(json);
      assert.notDeepEqual(json, toCliJson(signed));
      assertCliRejects(json);
    });
  }

  it('rejects the high-S (malleated) twin of a signature rnode-grpc-js accepts', () => {
    const { r, s } = parseDer(signed.sig);
    assert.ok(s <= kSecp256k1N / 2n, 'rnode-grpc-js signs low-S');
    const twin = { ...signed, sig: encodeDer(r, kSecp256k1N - s) };
    // Mathematically valid: the JS library, which does not enforce low-S,
    // accepts it. Our node must not, or deploy ids become malleable.
    assert.equal(rnodeJs.verifyDeploy(twin), true);
    assertCliRejects(toCliJson(twin));
  });
});

describe('rnode sign-deploy signs, rnode-grpc-js verifyDeploy accepts', () => {
  for (const c of kDeployCases) {
    it(`${c.name} signed by ${c.key.name}: fields round-trip and the signature verifies`, () => {
      const out = cliSign(c.key, c.data);
      const { deployer, sig, ...fields } = out;
      assert.deepEqual(fields, {
        term: c.data.term,
        timestamp: c.data.timestamp,
        sigAlgorithm: 'secp256k1',
        phloPrice: c.data.phloprice,
        phloLimit: c.data.phlolimit,
        validAfterBlockNumber: c.data.validafterblocknumber,
        shardId: c.data.shardid,
        expirationTimestamp: 0,
      });
      assert.equal(deployer, publicKeyOf(c.key));
      const der = bytesFromHex(sig, 'sig');
      assert.ok(der.length >= 70 && der.length <= 72, `DER length ${der.length}`);
      assert.ok(parseDer(der).s <= kSecp256k1N / 2n, 'signature must be low-S');
      assert.equal(rnodeJs.verifyDeploy(toJsDeploy(out)), true);
    });
  }

  it('produces byte-identical signatures to rnode-grpc-js (RFC 6979 nonces, low-S)', () => {
    for (const c of kDeployCases) {
      const out = cliSign(c.key, c.data);
      const js = rnodeJs.signDeploy(c.key.privateKey, c.data);
      assert.equal(out.sig, hex(js.sig), c.name);
      assert.equal(out.deployer, hex(js.deployer), c.name);
    }
  });

  it('rnode verify-deploy accepts rnode sign-deploy output unchanged', () => {
    for (const c of kDeployCases) {
      assertCliAccepts(cliSign(c.key, c.data));
    }
  });

  it('verifyDeploy rejects tampered copies of an rnode-signed deploy', () => {
    const c = kDeployCases[3];
    const out = cliSign(c.key, c.data);
    const tampered = [
      { ...toJsDeploy(out), term: out.term.replace('one', 'two') },
      { ...toJsDeploy(out), phlolimit: out.phloLimit + 1 },
      { ...toJsDeploy(out), validafterblocknumber: out.validAfterBlockNumber + 1 },
      { ...toJsDeploy(out), shardid: 'root' },
      (() => {
        const d = toJsDeploy(out);
        d.sig[d.sig.length - 1] ^= 0x80;
        return d;
      })(),
    ];
    for (const d of tampered) {
      assert.equal(rnodeJs.verifyDeploy(d), false, JSON.stringify(d.term));
    }
  });

  it('signs expirationTimestamp, which rnode-grpc-js does not know', () => {
    const c = kDeployCases[0];
    const expiration = 1700000060000;
    const out = cliSign(c.key, c.data, expiration);
    assert.equal(out.expirationTimestamp, expiration);
    assertCliAccepts(out);
    // rnode-grpc-js hashes fields 2..11 only, so a signature that also
    // covers field 13 must not verify there...
    assert.equal(rnodeJs.verifyDeploy(toJsDeploy(out)), false);
    // ...and dropping the field must break ours.
    assertCliRejects({ ...out, expirationTimestamp: 0 });
  });
});

describe('REV addresses agree with rnode-grpc-js and the published ones', () => {
  for (const key of kDevKeys) {
    it(`${key.name}: rev-address --public-key and --private-key`, () => {
      const fromJs = rnodeJs.getAddrFromPrivateKey(key.privateKey);
      assert.equal(fromJs.revAddr, key.address);
      assert.match(fromJs.pubKey, /^04[0-9a-f]{128}$/);
      assert.equal(rnodeJs.getAddrFromPublicKey(fromJs.pubKey).revAddr, key.address);

      const byPublic = runRnode(['rev-address', '--public-key', fromJs.pubKey]);
      assert.equal(byPublic.status, 0, byPublic.stderr);
      assert.equal(byPublic.stdout.trim(), key.address);

      const byPrivate = runRnode(['rev-address', '--private-key', key.privateKey]);
      assert.equal(byPrivate.status, 0, byPrivate.stderr);
      assert.equal(byPrivate.stdout.trim(), key.address);

      assert.equal(rnodeJs.verifyRevAddr(byPublic.stdout.trim()), true);
    });
  }

  it('rev-address refuses a compressed (33-byte) public key', () => {
    const pub = Buffer.from(publicKeyOf(kDevKeys[0]), 'hex');
    const compressed = Buffer.concat([Buffer.from([2 + (pub[64] & 1)]), pub.subarray(1, 33)]);
    const r = runRnode(['rev-address', '--public-key', compressed.toString('hex')]);
    assert.notEqual(r.status, 0);
    assert.doesNotMatch(r.stdout, /1111/);
  });
});
