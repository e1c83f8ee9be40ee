// What operators' tools rely on: every metric family a running node
// exports is documented in docs/metrics.md, every metric the Grafana
// dashboard (docker/grafana/rnode-dashboard.json) queries is exported, and
// both gRPC ports answer server reflection (grpcurl's way of listing
// services).
'use strict';

const { after, before, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const grpc = require('@grpc/grpc-js');
const { RnodeProcess, makeTempDir } = require('./harness');

// The services a reflection client lists, from the raw
// grpc.reflection.v1alpha.ServerReflection stream (no reflection proto is
// needed: the request is field 7, list_services = "", and the names are the
// strings inside the reply's list_services_response).
function listServices(port) {
  return new Promise((resolve, reject) => {
    const client = new grpc.Client(`127.0.0.1:${port}`,
      grpc.credentials.createInsecure());
    const call = client.makeBidiStreamRequest(
      '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo',
      (b) => b, (b) => b, new grpc.Metadata(),
      { deadline: Date.now() + 10000 });
    call.on('data', (reply) => {
      const text = reply.toString('latin1');
      resolve([...text.matchAll(/[A-Za-z_][\w.]*Service[\w]*/g)].map((m) => m[0]));
      call.end();
      client.close();
    });
    call.on('error', (e) => { client.close(); reject(e); });
    call.write(Buffer.from([0x3a, 0x00]));
  });
}

const repo = path.resolve(__dirname, '..', '..');
const dataDir = makeTempDir('dashboard');
const node = new RnodeProcess('dashboard', dataDir);
let exported;  // family names from # TYPE lines

before(async () => {
  await node.start();
  const text = await (await fetch(`${node.httpUrl}/metrics`)).text();
  exported = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => m[1]));
});

after(async () => {
  await node.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('every exported family is documented in docs/metrics.md', node.withOutput(() => {
  const doc = fs.readFileSync(path.join(repo, 'docs', 'metrics.md'), 'utf8');
  assert.ok(exported.size > 20, `only ${exported.size} families exported`);
  const missing = [...exported].filter((name) => !doc.includes(`\`${name}\``));
  assert.deepEqual(missing, [], 'undocumented metric families');
}));

test('every metric the dashboard queries is exported', node.withOutput(() => {
  const dash = JSON.parse(fs.readFileSync(
    path.join(repo, 'docker', 'grafana', 'rnode-dashboard.json'), 'utf8'));
  const names = new Set();
  for (const panel of dash.panels) {
    for (const target of panel.targets) {
      for (const m of target.expr.matchAll(/\b((?:rnode|casper|process)_[a-z0-9_]+)/g)) {
        names.add(m[1].replace(/_bucket$/, ''));
      }
    }
  }
  assert.ok(names.size > 10, `the dashboard names only ${names.size} metrics`);
  const missing = [...names].filter((name) => !exported.has(name));
  assert.deepEqual(missing, [], 'dashboard queries metrics the node does not export');
}));

test('both gRPC ports answer server reflection', node.withOutput(async () => {
  const external = await listServices(node.ports.grpcExternal);
  assert.ok(external.includes('casper.v1.DeployService'), external.join(', '));
  assert.ok(!external.includes('casper.v1.ProposeService'), external.join(', '));
  const internal = await listServices(node.ports.grpcInternal);
  assert.ok(internal.includes('casper.v1.DeployService'), internal.join(', '));
  assert.ok(internal.includes('casper.v1.ProposeService'), internal.join(', '));
}));
