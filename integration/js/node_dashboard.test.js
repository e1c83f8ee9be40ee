// The metric names that operators see stay in step: every family a running
// node exports is documented in docs/metrics.md, and every metric the
// Grafana dashboard (docker/grafana/rnode-dashboard.json) queries is
// exported.
'use strict';

const { after, before, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { RnodeProcess, makeTempDir } = require('./harness');

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
