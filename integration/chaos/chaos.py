#!/usr/bin/env python3
"""The fault campaign against a local shard (docs/reliability.md).

  scripts/chaos [--quick] [--scenarios A,B,...] [--rate R] [--seed S]
                [--sanitized]
                [--out DIR] [--base-port P] [--keep]
                [--hosts [--delay MS] [--jitter MS] [--loss PCT]
                         [--bandwidth KBIT]]
  scripts/chaos --soak [--soak-minutes M] [--warmup-minutes W]
                [--measured-minutes N] [--rate R] [--disk] [--workload W]
                [--read-answers]

Starts a fresh shard of 3 validators and an observer (scripts/shard), then
runs each named scenario under a steady stream of deploys from
rnode-loadgen (--allow-failures: a stopped node refuses deploys on purpose)
and judges it. Scenarios:

  kill9        SIGKILL a random validator and restart it, 20 times (--quick 3)
  sigstop      SIGSTOP a validator for 20 s (--quick 10 s), then SIGCONT;
               it must stop being behind its peers (rnode_behind_seconds_
               total still for 5 s) within 60 s
  partition    cut a validator off from its peers for 30 s (--quick 15 s):
               its transport refuses them and fails its own calls
               (POST /api/fault/isolate on its admin port; the shard runs
               with --fault-injection), then heal it (/api/fault/heal);
               with --hosts the relay drops the packets instead (its
               links to the other nodes cut, and the relay must count
               drops), the node itself untouched
  restart-all  SIGKILL every validator at once, restart them all
  long-outage  stop a validator (SIGTERM) for 10 minutes while the stream
               runs at 50 deploys/s (--quick: until the others made 1,100
               blocks, past the engine's old 1,024-block buffer; 300 with
               --sanitized), then start it: within 60 s (300 s sanitized) it
               has the others' last finalized block and proposes again
  disk-full    fill a validator's disk for 30 s (--quick 15 s): every write
               of its store fails as on a full disk (POST
               /api/fault/disk-full), so it refuses deploys with
               507 disk_full and takes no blocks; then space returns
               (/api/fault/heal) and it must take deploys again
  hostile      while the stream runs at 20 deploys/s or more, a hostile
               process attacks a random validator all at once: sybil
               identities hold its unreserved peer slots; rnode-badpeer
               sends garbage frames, oversized messages and streams, a
               flood of requests, forged blocks (a bad signature, an
               unbonded sender), orphan blocks from fresh keys whose
               parents nobody has, and deploys that break admission
               (unfunded keys, a window beyond the horizon, a price of 0)
               over its gRPC API; HTTP requests with a foreign Host, a
               foreign Origin on /ws/events and bodies over the limit.
               Verdict (the fault check): no bad deploy or request got
               in, every orphan refused unkept, each validator's RSS
               within +100 MiB of its start, the victim alive; and the
               stream check is strict: no honest deploy refused (not as
               "catching up", not as "pool full"), every one finalized,
               acknowledgement p99 under 1 s
  bad-peer     once the shard is quiet (its stream's deploys final),
               rnode-badpeer against a random validator: garbage frames,
               oversized messages and streams, a flood of requests, a block
               with a bad signature, one from an unbonded key, and an
               equivocation signed with another validator's key (which
               the shard then slashes: run it last)

Opt-in (named in --scenarios only):

  beyond-history  stop a validator until every other node's retention
               deleted the blocks it needs next (their floors above its
               height; run with --node-arg=--retain-blocks=1024), then
               start it: it cannot catch up by height, so after
               sync.rejoin-after-seconds (30 s) it forgets its chain and
               joins again from the others' last finalized state; within
               150 s of its restart it has their last finalized block and
               proposes again

After each scenario the checks are:
  fault      the fault happened as meant and the victim's own answer to it
             was right (per scenario: the cut-off validator lost its peers;
             the full-disk one refused deploys as disk_full and took them
             again once space returned; the attacked one refused every bad
             message, counted them, and the equivocator was slashed)
  stream     every deploy a node acknowledged finalized (rnode-loadgen's
             verdict after its drain)
  advance    every node's last finalized block advanced within 60 s of
             the fault's end
  agreement  every node's last finalized block is finalized on every node
             within 60 s (no two nodes finalize conflicting blocks)
  state      the highest block final on all nodes has the same post-state
             root on every node

--soak runs no fault: a steady stream for --soak-minutes (default 150) with
every node's resident memory sampled once a minute. The warm-up ends at
the first minute from --warmup-minutes (default 10) on when every
validator's RocksDB block cache is 90 % full and every node's trie cache
has stopped filling; at least --measured-minutes
(default 60) must follow it. It passes when each node's RSS less its block
cache (a bounded cache filling is not growth; an observer's fills far
slower than a validator's), as the median of the last 10 samples, is at
most 10 % above the median of the first 10 after the warm-up, every
acknowledged deploy finalized, and agreement and state hold at the end.
The single samples at both ends, raw RSS and the trend are reported
beside it. It writes
soak.md, soak.json, rss.csv and memory.csv (the heap, RocksDB, DAG and
disk gauges each minute), and on a failure every node's log in logs/; not in
the test command: it takes two and a half hours. Each node's data
directory (db/) is sampled each minute too (disk.csv): the soak reports
its window medians and its growth per 1,000 finalized deploys, and with
--disk fails a node whose disk use moved more than 10 % either way after
the warm-up (retention on; issue 45).

--hosts (with --delay MS, --jitter MS, --loss PCT, --bandwidth KBIT) runs
the shard on separate test hosts behind rnode-netrelay (scripts/shard up
--hosts; docs/performance.md "Separate hosts"), so every verdict holds at
that distance.

Writes chaos.md (the table) and chaos.json to --out (default
chaos-out/<time>), each scenario's load report in a subfolder, and exits 0
only when every check of every scenario passed. Randomness (which
validator, how long it stays down) comes from --seed (printed; default
drawn). Only the Python standard library is used.
"""

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from importlib.machinery import SourceFileLoader
from statistics import median

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
shard_tool = SourceFileLoader(
    "shard_tool", os.path.join(REPO, "scripts", "shard")).load_module()
loadtest = SourceFileLoader(
    "loadtest", os.path.join(REPO, "scripts", "loadtest")).load_module()
disk = SourceFileLoader("disk", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "disk.py")).load_module()

# How long a check waits for the shard to get there.
CHECK_DEADLINE_S = 60
# Seconds the stream runs before a fault and after it heals.
LEAD_S = 5
TAIL_S = 10
# Longest a scenario's load generator may take to finish its drain.
DRAIN_S = 120
POLL_S = 0.25
SCENARIOS = ("kill9", "sigstop", "partition", "restart-all", "disk-full",
             "long-outage", "hostile", "bad-peer")


def note(message):
    print(f"chaos: {message}", flush=True)


class CheckFailed(Exception):
    pass


class Shard:
    """The nodes scripts/shard started in `folder`, and the ones this
    driver restarts (kept in shard.json so scripts/shard down stops them)."""

    def __init__(self, folder, rnode):
        self.folder = folder
        self.rnode = rnode
        self.state = shard_tool.load_state(folder)
        self.children = {}  # name -> Popen of a node this driver started

    def nodes(self):
        return self.state["nodes"]

    def validators(self):
        return [n for n in self.nodes() if n["role"] == "validator"]

    def save(self):
        shard_tool.save_state(self.folder, self.state)

    def kill(self, node, sig=signal.SIGKILL):
        os.kill(node["pid"], sig)
        if sig == signal.SIGKILL:
            child = self.children.pop(node["name"], None)
            if child is not None:
                child.wait()
            deadline = time.monotonic() + 10
            while shard_tool.alive(node["pid"]):
                if time.monotonic() > deadline:
                    raise CheckFailed(f"{node['name']} outlived SIGKILL")
                time.sleep(0.05)

    def start(self, node, deadline_s=shard_tool.START_DEADLINE_S):
        """Starts `node` again on its data; returns once its API says it is
        ready (within `deadline_s`, scripts/shard's bound by default). The
        bootstrap node restarts without a bootstrap (its peers reconnect to
        it)."""
        boot = "" if node is self.nodes()[0] else self.state["bootstrap"]
        child = shard_tool.start(self.rnode, node, self.state, boot)
        self.children[node["name"]] = child
        self.save()
        try:
            shard_tool.wait_ready(node, child, deadline_s=deadline_s)
        except SystemExit as e:  # scripts/shard's fail() exits.
            raise CheckFailed(f"{node['name']} did not restart") from e


def http_json(node, path, timeout=2.0):
    return shard_tool.http_json(node["ports"]["http"], path, timeout,
                                host=shard_tool.host_of(node))


def admin_post(node, path, timeout=5.0):
    """POSTs to the node's admin API; its JSON answer."""
    url = (f"http://{shard_tool.host_of(node)}:{node['ports']['admin_http']}"
           f"{path}")
    req = urllib.request.Request(url, data=b"", method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return json.loads(res.read().decode())
    except (OSError, ValueError, urllib.error.URLError) as e:
        raise CheckFailed(f"POST {path} on {node['name']}: {e}") from e


@contextlib.contextmanager
def admin_fault(node, route, field):
    """POSTs the fault `route` on the node's admin API, which must answer
    with `field` true, and heals every fault on leaving."""
    if admin_post(node, route).get(field) is not True:
        raise CheckFailed(f"{node['name']} did not report {field} after "
                          f"POST {route}")
    try:
        yield
    finally:
        admin_post(node, "/api/fault/heal")


def peer_count(node):
    """How many peers the node's API says are connected; None when it
    does not answer."""
    try:
        return int(http_json(node, "/status").get("peers", -1))
    except (OSError, ValueError, urllib.error.URLError):
        return None


def metrics(node):
    """The node's /metrics as {sample with labels: value}."""
    url = f"http://{shard_tool.host_of(node)}:{node['ports']['http']}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=5) as res:
            text = res.read().decode()
    except (OSError, urllib.error.URLError) as e:
        raise CheckFailed(f"GET /metrics on {node['name']}: {e}") from e
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                out[name] = float(value)
            except ValueError:
                pass
    return out


def lfb(node):
    """(number, hash) of the node's last finalized block; None when its API
    does not answer."""
    try:
        block = http_json(node, "/api/last-finalized-block")
    except (OSError, ValueError, urllib.error.URLError):
        return None
    info = block.get("blockInfo", block)
    return info.get("blockNumber", -1), info.get("blockHash", "")


def is_finalized(node, block_hash):
    try:
        return http_json(node, f"/api/is-finalized/{block_hash}") is True
    except (OSError, ValueError, urllib.error.URLError):
        return False


def holds_final(node, target, others):
    """`node`'s last finalized block (number, hash) when it is numbered
    `target` or more and is finalized on every node of `others`; else
    None."""
    mine = lfb(node)
    if mine and mine[0] >= target and all(
            is_finalized(n, mine[1]) for n in others):
        return mine
    return None


def post_state(node, block_hash):
    try:
        block = http_json(node, f"/api/block/{block_hash}")
    except (OSError, ValueError, urllib.error.URLError):
        return None
    return block.get("blockInfo", block).get("postStateHash")


def check_advance(shard, baseline):
    """Every node's LFB number passes its `baseline` within the deadline."""
    deadline = time.monotonic() + CHECK_DEADLINE_S
    waiting = {n["name"] for n in shard.nodes()}
    while waiting and time.monotonic() < deadline:
        for n in shard.nodes():
            got = lfb(n)
            if n["name"] in waiting and got and got[0] > baseline[n["name"]]:
                waiting.discard(n["name"])
        time.sleep(POLL_S)
    if waiting:
        raise CheckFailed("no new finalized block within "
                          f"{CHECK_DEADLINE_S} s on {', '.join(sorted(waiting))}")
    return f"all {len(shard.nodes())} nodes advanced"


def check_agreement(shard):
    """Each node's LFB is finalized on every node; returns the lowest of
    them (final everywhere)."""
    heads = {}
    for n in shard.nodes():
        got = lfb(n)
        if got is None:
            raise CheckFailed(f"{n['name']}'s API does not answer")
        heads[n["name"]] = got
    deadline = time.monotonic() + CHECK_DEADLINE_S
    missing = []
    while time.monotonic() < deadline:
        missing = [(n["name"], name) for name, (_, h) in heads.items()
                   for n in shard.nodes() if not is_finalized(n, h)]
        if not missing:
            lowest = min(heads.values())
            return lowest, (f"{len(set(h for _, h in heads.values()))} "
                            f"distinct heads final on all nodes")
        time.sleep(POLL_S)
    pairs = ", ".join(f"{a} lacks {b}'s" for a, b in missing[:4])
    raise CheckFailed(f"last finalized blocks not final everywhere: {pairs}")


def check_state(shard, block):
    number, block_hash = block
    roots = {n["name"]: post_state(n, block_hash) for n in shard.nodes()}
    if None in roots.values() or len(set(roots.values())) != 1:
        raise CheckFailed(f"post-state roots of block {number} differ: {roots}")
    return f"block {number}: one root on {len(roots)} nodes"


def stream_report(folder):
    """What rnode-loadgen's report.json in `folder` says: (acknowledged,
    failed, the first line of its verdict); zeros and "no report" when it
    wrote none."""
    report = {}
    try:
        with open(os.path.join(folder, "report.json")) as f:
            report = json.load(f)
    except (OSError, ValueError):
        pass
    phases = report.get("phases", [{}])
    verdict = report.get("run", {}).get("verdict") or "no report"
    return (sum(p.get("acknowledged", 0) for p in phases),
            sum(p.get("failed", 0) for p in phases),
            verdict.splitlines()[0])


def lfb_numbers(shard):
    numbers = {}
    for n in shard.nodes():
        got = lfb(n)
        numbers[n["name"]] = got[0] if got else -1
    return numbers


# Scenarios: each performs its fault on a running stream and returns the
# LFB numbers at the moment the fault healed (the `advance` baseline) and
# a line saying what it did.

def kill9(shard, rng, quick):
    times = 3 if quick else 20
    for i in range(times):
        victim = rng.choice(shard.validators())
        down = rng.uniform(1, 5)
        note(f"kill9 {i + 1}/{times}: SIGKILL {victim['name']}, "
             f"down {down:.1f} s")
        shard.kill(victim)
        time.sleep(down)
        shard.start(victim)
        time.sleep(rng.uniform(2, 5))
    return lfb_numbers(shard), f"{times} kills"


BEHIND = "rnode_behind_seconds_total"
# A node counts as caught up once it has not been behind for this long.
CAUGHT_UP_QUIET_S = 5


def behind_seconds(node):
    """Seconds the node has spent behind its peers, all reasons."""
    return sum(v for k, v in metrics(node).items()
               if k.startswith(BEHIND + "{"))


def behind_split(node):
    """The node's time behind its peers by reason, as text (for a failed
    check: why a node refused deploys as catching up)."""
    try:
        m = metrics(node)
    except CheckFailed:
        return "no metrics"
    parts = [f"{k[len(BEHIND) + 1:-1]} {v:.1f} s" for k, v in sorted(m.items())
             if k.startswith(BEHIND + "{") and v > 0]
    return "behind: " + (", ".join(parts) if parts else "never")


def seconds_to_catch_up(node, deadline_s=CHECK_DEADLINE_S):
    """Waits until `node` has not been behind (rnode_behind_seconds_total
    still) for CAUGHT_UP_QUIET_S; returns how long after the call its last
    time behind ended. CheckFailed if that does not come within
    `deadline_s` (soak run 5: a validator that fell behind never caught up)."""
    start = time.monotonic()
    last = behind_seconds(node)
    quiet_since = start
    while True:
        time.sleep(POLL_S)
        now = time.monotonic()
        value = behind_seconds(node)
        if value > last + 0.05:  # the node samples every 0.1 s
            quiet_since = now
        last = value
        if now - quiet_since >= CAUGHT_UP_QUIET_S:
            return quiet_since - start
        if now - start > deadline_s:
            raise CheckFailed(
                f"{node['name']} was still behind its peers {deadline_s} s "
                f"later ({BEHIND} {value:.1f} s in all)")


def sigstop(shard, rng, quick):
    pause = 10 if quick else 20
    victim = rng.choice(shard.validators())
    note(f"sigstop: SIGSTOP {victim['name']} for {pause} s")
    before = behind_seconds(victim)
    shard.kill(victim, signal.SIGSTOP)
    try:
        time.sleep(pause)
    finally:
        shard.kill(victim, signal.SIGCONT)
    # It catches up with its peers: it stops being behind (and refusing
    # deploys as catching up) within the deadline. The pause itself counts
    # as time behind (else the wait above proves nothing).
    took = seconds_to_catch_up(victim)
    counted = behind_seconds(victim) - before
    if counted < pause / 2:
        raise CheckFailed(f"{victim['name']} counted {counted:.1f} s behind "
                          f"for a {pause} s pause ({BEHIND})")
    return lfb_numbers(shard), (f"{victim['name']} stopped {pause} s, "
                                f"{counted:.1f} s behind, caught up "
                                f"{took:.1f} s after")


def relay_links(shard, *args):
    """scripts/shard link ARGS on a shard of separate hosts."""
    out = subprocess.run([sys.executable, loadtest.SHARD, "link", "--dir",
                          shard.folder, *args],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise CheckFailed(f"scripts/shard link {' '.join(args)}: "
                          f"{out.stderr.strip()}")


def relay_cut_count(shard, victim):
    """Packets the relay dropped as cut on links from or to `victim` (its
    counters, asked for with SIGUSR1)."""
    net = shard.state["net"]
    seen = os.path.getsize(net["log"])
    os.kill(net["relay_pid"], signal.SIGUSR1)
    deadline = time.monotonic() + 5
    slot = f"h{victim['slot']}"
    while time.monotonic() < deadline:
        with open(net["log"], errors="replace") as f:
            f.seek(seen)
            text = f.read()
        if "netrelay: not IPv4" in text:
            return sum(int(m.group(1)) for m in re.finditer(
                rf"netrelay: (?:{slot} -> h\d+|h\d+ -> {slot}): passed \d+, "
                r"lost \d+, cut (\d+)", text))
        time.sleep(0.05)
    raise CheckFailed("the relay did not print its counters")


def partition_at_relay(shard, victim, cut):
    """A shard of separate hosts: the relay drops every packet between the
    victim and the other nodes (the machine's links stay, so its API still
    answers) for `cut` seconds; the relay must count dropped packets."""
    relay_links(shard, "--isolate", victim["name"])
    try:
        time.sleep(cut)
        dropped = relay_cut_count(shard, victim)
    finally:
        relay_links(shard, "--reset")
    if dropped == 0:
        raise CheckFailed(f"the relay dropped nothing between "
                          f"{victim['name']} and its peers in {cut} s")
    return dropped


def partition(shard, rng, quick):
    cut = 15 if quick else 30
    victim = rng.choice(shard.validators())
    note(f"partition: {victim['name']} cut off from its peers for {cut} s")
    if shard.state.get("net"):
        dropped = partition_at_relay(shard, victim, cut)
        return lfb_numbers(shard), (f"{victim['name']} cut off {cut} s at "
                                    f"the relay ({dropped} packets dropped)")
    with admin_fault(victim, "/api/fault/isolate", "isolated"):
        # The cut is real: the victim drops every peer while cut off
        # (polled until the cut ends, then the cut is held to its length).
        start = time.monotonic()
        deadline = start + cut
        peers = peer_count(victim)
        while peers != 0 and time.monotonic() < deadline:
            time.sleep(POLL_S)
            peers = peer_count(victim)
        if peers != 0:
            raise CheckFailed(f"{victim['name']} still had {peers} peers "
                              f"after {cut} s cut off")
        dropped = time.monotonic() - start
        time.sleep(max(0.0, deadline - time.monotonic()))
    return lfb_numbers(shard), (f"{victim['name']} cut off {cut} s, "
                                f"peerless after {dropped:.1f} s")


def restart_all(shard, rng, quick):
    note("restart-all: SIGKILL every validator, then start them all")
    for v in shard.validators():
        shard.kill(v)
    time.sleep(rng.uniform(1, 3))
    # The bootstrap first: the others join through it.
    for v in shard.validators():
        shard.start(v)
    return lfb_numbers(shard), f"{len(shard.validators())} restarted"


# long-outage (issue 48): the blocks the others make while the victim is
# down. The quick form is past the engine's old buffer of 1,024 blocks
# waiting for parents, which wedged a node that far behind for good; the
# full one is ten minutes at LONG_OUTAGE_RATE. Under a sanitizer the quick
# form is shorter (replay there is several times slower) but still far
# beyond the gap the hash walk closes.
LONG_OUTAGE_BLOCKS = 1100
LONG_OUTAGE_SANITIZED_BLOCKS = 300
LONG_OUTAGE_FULL_S = 600
LONG_OUTAGE_RATE = 50
# From its restart, the victim has the others' last finalized block (and
# proposes again) within this long; a sanitizer build gets longer.
CATCH_UP_S = 60
CATCH_UP_SANITIZED_S = 300
DAG_BLOCKS = "casper_dag_blocks"
CREATED = 'casper_propose_total{result="created"}'


def stop_cleanly(shard, node):
    """SIGTERM, then waits for the exit (SIGKILL after 30 s)."""
    os.kill(node["pid"], signal.SIGTERM)
    deadline = time.monotonic() + 30
    child = shard.children.pop(node["name"], None)
    while shard_tool.alive(node["pid"]) and (
            child is None or child.poll() is None):
        if time.monotonic() > deadline:
            shard.kill(node)
            return
        time.sleep(0.05)


def caught_and_proposing(victim, target, others, since, limit, created=0):
    """Polls until `victim` holds a last finalized block numbered `target`
    or more that is final on `others`, and has proposed a block (more than
    `created`), or until `limit` s after `since` (a monotonic time); the
    seconds after `since` at which each held, None for one that did not."""
    caught = proposed = None
    while time.monotonic() - since < limit:
        now = time.monotonic() - since
        if caught is None and holds_final(victim, target, others) is not None:
            caught = now
        if proposed is None and metrics(victim).get(CREATED, 0) > created:
            proposed = now
        if caught is not None and proposed is not None:
            break
        time.sleep(POLL_S)
    return caught, proposed


def long_outage(shard, rng, quick, sanitized=False):
    """A validator is stopped while the others make blocks (past the old
    buffer's 1,024 in the quick form, ten minutes in the full one), then
    started again: within CATCH_UP_S it has the others' last finalized
    block and proposes again."""
    victim = rng.choice(shard.validators()[1:])
    others = [n for n in shard.nodes() if n is not victim]
    witness = others[0]
    stop_cleanly(shard, victim)
    start_blocks = metrics(witness).get(DAG_BLOCKS, 0)
    started = time.monotonic()
    if quick:
        want = LONG_OUTAGE_SANITIZED_BLOCKS if sanitized else LONG_OUTAGE_BLOCKS
        note(f"long-outage: {victim['name']} stopped until the others make "
             f"{want} blocks")
        deadline = started + 40 * 60 if sanitized else started + 600
        while metrics(witness).get(DAG_BLOCKS, 0) < start_blocks + want:
            if time.monotonic() > deadline:
                raise CheckFailed(f"the others made only "
                                  f"{metrics(witness).get(DAG_BLOCKS, 0) - start_blocks:.0f} "
                                  f"of {want} blocks in {deadline - started:.0f} s")
            time.sleep(1)
    else:
        note(f"long-outage: {victim['name']} stopped for "
             f"{LONG_OUTAGE_FULL_S} s")
        time.sleep(LONG_OUTAGE_FULL_S)
    down = time.monotonic() - started
    made = metrics(witness).get(DAG_BLOCKS, 0) - start_blocks
    target = max((lfb(n) or (-1, ""))[0] for n in others)
    restarted = time.monotonic()
    shard.start(victim)
    ready_s = time.monotonic() - restarted
    limit = CATCH_UP_SANITIZED_S if sanitized else CATCH_UP_S
    caught, proposed = caught_and_proposing(
        victim, target, others, restarted, limit,
        created=metrics(victim).get(CREATED, 0))
    what = (f"{victim['name']} down {down:.0f} s while the others made "
            f"{made:.0f} blocks (last finalized #{target}); ready after "
            f"{ready_s:.1f} s")
    if caught is None or proposed is None:
        raise CheckFailed(
            f"{what}; within {limit} s of its restart: "
            f"{'had' if caught is not None else 'did not have'} the others' "
            f"last finalized block, "
            f"{'proposed' if proposed is not None else 'proposed nothing'}")
    return lfb_numbers(shard), (f"{what}, the others' last finalized block "
                                f"after {caught:.1f} s, proposing after "
                                f"{proposed:.1f} s")


# beyond-history (issue 45): the victim is stopped until every other node's
# retention deleted the blocks it needs next (their floors above its
# height), so that it cannot catch up by height; within REJOIN_S of its
# restart it must have forgotten its chain, joined again from the others'
# last finalized state (sync.rejoin-after-seconds, 30 s by default, then
# the join) and proposed again. Opt-in: it needs every node with a short
# retention (--node-arg=--retain-blocks=1024), and takes some minutes.
REJOIN_S = 150
REJOIN_DEADLINE_S = 1200
# The stream's length: the others' floors passed the victim's height in
# about 3 minutes at 50 deploys/s (1,250 blocks), then the rejoin and the
# checks.
BEYOND_HISTORY_S = 480
FLOOR = "rnode_retention_floor"
LATEST = "casper_latest_block_number"


def beyond_history(shard, rng, quick):
    """A validator is stopped until the others' floors pass its height,
    then started: within REJOIN_S it has the others' last finalized block
    and proposes again."""
    victim = rng.choice(shard.validators()[1:])
    others = [n for n in shard.nodes() if n is not victim]
    height = metrics(victim).get(LATEST, -1)
    stop_cleanly(shard, victim)
    started = time.monotonic()
    note(f"beyond-history: {victim['name']} (at #{height:.0f}) stopped until "
         f"every other node's floor is above #{height + 1:.0f}")
    while True:
        floors = [metrics(n).get(FLOOR) for n in others]
        if any(f is None for f in floors):
            raise CheckFailed("a node exports no retention floor: run with "
                              "--node-arg=--retain-blocks=1024")
        if min(floors) > height + 1:
            break
        if time.monotonic() - started > REJOIN_DEADLINE_S:
            raise CheckFailed(f"after {REJOIN_DEADLINE_S} s the others' "
                              f"floors are {floors}, not above "
                              f"#{height + 1:.0f} (--retain-blocks=1024?)")
        time.sleep(2)
    down = time.monotonic() - started
    target = max((lfb(n) or (-1, ""))[0] for n in others)
    restarted = time.monotonic()
    shard.start(victim, REJOIN_S)  # once it is ready: after the join
    ready_s = time.monotonic() - restarted
    caught, proposed = caught_and_proposing(victim, target, others, restarted,
                                            REJOIN_S)
    log = os.path.join(victim["data_dir"], "node.log")
    try:
        with open(log, errors="replace") as f:
            rejoined = "joining the shard again" in f.read()
    except OSError:
        rejoined = False
    what = (f"{victim['name']} down {down:.0f} s until the others' floors "
            f"passed #{height + 1:.0f} (their last finalized #{target}); "
            f"{'it joined again' if rejoined else 'it did not join again'}, "
            f"ready after {ready_s:.1f} s")
    if caught is None or proposed is None or not rejoined:
        raise CheckFailed(
            f"{what}; within {REJOIN_S} s of its restart: "
            f"{'had' if caught is not None else 'did not have'} the others' "
            f"last finalized block, "
            f"{'proposed' if proposed is not None else 'proposed nothing'}")
    return lfb_numbers(shard), (f"{what}; the others' last finalized block "
                                f"after {caught:.1f} s, proposing after "
                                f"{proposed:.1f} s")


DISK_FULL = 'rnode_deploys_refused_total{reason="disk_full"}'
# Longer than an admission takes once its deploy is stored (the peer copy's
# 1 s and the extra copy's 0.25 s in DeployAdmission::Admit).
ADMISSION_SETTLE_S = 2
RECEIVED = "rnode_deploys_received_total"


def disk_full(shard, rng, quick):
    """A validator's disk fills: its store's writes fail with ENOSPC."""
    full = 15 if quick else 30
    victim = rng.choice(shard.validators())
    note(f"disk-full: {victim['name']}'s disk full for {full} s")
    with admin_fault(victim, "/api/fault/disk-full", "diskFull"):
        # A deploy stored before the fault may still be waiting for a peer's
        # copy (up to 1.25 s, DeployAdmission::Admit) and is counted
        # received once a peer holds it: the window starts after that.
        time.sleep(ADMISSION_SETTLE_S)
        start = metrics(victim)
        time.sleep(full)
        during = metrics(victim)
    refused = during.get(DISK_FULL, 0) - start.get(DISK_FULL, 0)
    admitted = during.get(RECEIVED, 0) - start.get(RECEIVED, 0)
    # The stream sends it a share of its deploys: each one refused as
    # disk_full, none taken.
    if refused <= 0 or admitted > 0:
        raise CheckFailed(f"{victim['name']} with a full disk refused "
                          f"{refused:.0f} deploys as disk_full and took "
                          f"{admitted:.0f}")
    # Space returned: it takes deploys again (the stream's next ones).
    deadline = time.monotonic() + CHECK_DEADLINE_S
    while True:
        taken = metrics(victim).get(RECEIVED, 0) - during.get(RECEIVED, 0)
        if taken > 0:
            break
        if time.monotonic() > deadline:
            raise CheckFailed(f"{victim['name']} took no deploy within "
                              f"{CHECK_DEADLINE_S} s of space returning "
                              f"({behind_split(victim)})")
        time.sleep(POLL_S)
    return lfb_numbers(shard), (f"{victim['name']}'s disk full {full} s: "
                                f"{refused:.0f} deploys refused disk_full")


INVALID = 'casper_blocks_validated_total{verdict="invalid"}'
MALFORMED = "p2p_malformed_total"


# How long the shard's last finalized block must stand still to count as
# quiet (no deploy left to finalize), and the longest wait for that.
QUIET_S = 5
QUIET_DEADLINE_S = 180


def wait_quiet(shard):
    """Waits until every node's last finalized block is the same and has
    not moved for QUIET_S (the stream's deploys are final and nothing else
    makes blocks)."""
    deadline = time.monotonic() + QUIET_DEADLINE_S
    last, since, first = None, time.monotonic(), lfb_numbers(shard)
    while time.monotonic() < deadline:
        now = lfb_numbers(shard)
        if now != last or len(set(now.values())) != 1:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= QUIET_S:
            return
        time.sleep(POLL_S)
    raise CheckFailed(f"the shard did not go quiet within {QUIET_DEADLINE_S} "
                      f"s (last finalized blocks {first} then {last})")


def bad_peer(shard, rng, quick):
    """rnode-badpeer against a random validator (the victim); another one
    (the equivocator) has a second block signed with its key. The attack
    comes once the deploy stream's blocks are final and the shard is quiet:
    the slash must then make its own block (it once waited for the next
    deploy, and none came)."""
    wait_quiet(shard)
    # The advance check wants finality past this: the slash's block.
    quiet = lfb_numbers(shard)
    validators = shard.validators()
    victim = rng.choice(validators)
    equivocator = rng.choice([v for v in validators if v is not victim])
    with open(os.path.join(shard.folder, "genesis", "keys.json")) as f:
        keys = json.load(f)["keys"]
    eq_key = keys[validators.index(equivocator)]["public"]
    try:
        address = http_json(victim, "/status")["address"]
        blocks = [b.get("blockInfo", b)
                  for b in http_json(victim, "/api/blocks/30")]
    except (OSError, ValueError, KeyError, urllib.error.URLError) as e:
        raise CheckFailed(f"{victim['name']}'s API: {e}") from e
    theirs = [b for b in blocks if b.get("sender") == eq_key]
    if not blocks or not theirs:
        raise CheckFailed(f"no recent block of {equivocator['name']} on "
                          f"{victim['name']}")
    latest = max(theirs, key=lambda b: b.get("seqNum", 0))
    before = metrics(victim)
    note(f"bad-peer: attacking {victim['name']}; {equivocator['name']} "
         f"equivocates on its block {latest['blockHash'][:16]} "
         f"(seq {latest.get('seqNum')})")
    cmd = [shard.badpeer, "--target", address,
           "--network-id", shard.state["network_id"],
           "--block", blocks[0]["blockHash"],
           "--equivocate", latest["blockHash"],
           "--equivocator-key-file", equivocator["key_file"],
           "--seed", str(rng.randrange(2**31)),
           "--flood-count", "2000" if quick else "20000"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                         check=False)
    attacks = {}
    for line in out.stdout.splitlines():
        try:
            got = json.loads(line)
            attacks[got["attack"]] = got
        except (ValueError, KeyError):
            pass
    if out.returncode != 0:
        raise CheckFailed(f"rnode-badpeer exited {out.returncode}: "
                          f"{out.stderr.strip()[:300]} {list(attacks.values())}")
    if not shard_tool.alive(victim["pid"]):
        raise CheckFailed(f"{victim['name']} died under the attacks")
    problems = []
    if attacks["garbage"]["accepted"] != 0:
        problems.append(f"{attacks['garbage']['accepted']} garbage frames "
                        "accepted")
    oversized = attacks["oversized"]
    if oversized["unary"]["code"] != 8:  # RESOURCE_EXHAUSTED
        problems.append(f"oversized Send answered {oversized['unary']}")
    if oversized["huge_stream"]["code"] == 0:
        problems.append("a stream announcing 1 GiB was accepted")
    for b in oversized["broken_streams"]:
        if b["stream"]["code"] == 0 or b["next_send"]["code"] != 7:
            problems.append(f"a stream with {b['what']}: {b}")
    if attacks["flood"]["answers"]["failed"]:
        problems.append(f"flood calls failed: {attacks['flood']['answers']}")
    # The three forged blocks: each refused as invalid (counted once the
    # consensus thread got to it).
    deadline = time.monotonic() + CHECK_DEADLINE_S
    while True:
        after = metrics(victim)
        invalid = after.get(INVALID, 0) - before.get(INVALID, 0)
        if invalid >= 3 or time.monotonic() > deadline:
            break
        time.sleep(POLL_S)
    if invalid < 3:
        problems.append(f"{invalid:.0f} of the 3 forged blocks judged invalid")
    if after.get(MALFORMED, 0) <= before.get(MALFORMED, 0):
        problems.append("no malformed message counted")
    if problems:
        raise CheckFailed("; ".join(problems))
    # Every node sees the equivocator without stake once a block that
    # slashes it is final.
    deadline = time.monotonic() + CHECK_DEADLINE_S
    bonded = [n["name"] for n in shard.nodes()]
    while bonded and time.monotonic() < deadline:
        bonded = []
        for n in shard.nodes():
            try:
                if http_json(n, f"/api/bond-status/{eq_key}").get("isBonded",
                                                                  True):
                    bonded.append(n["name"])
            except (OSError, ValueError, urllib.error.URLError):
                bonded.append(n["name"])
        time.sleep(POLL_S)
    if bonded:
        raise CheckFailed(f"{equivocator['name']} still bonded on "
                          f"{', '.join(bonded)} after {CHECK_DEADLINE_S} s")
    flood = attacks["flood"]["answers"]
    return quiet, (
        f"{victim['name']} attacked ({invalid:.0f} forged blocks invalid, "
        f"flood {flood['acknowledged']} acked/{flood['busy']} busy/"
        f"{flood['shed']} shed); {equivocator['name']} equivocated, slashed")

# The hostile scenario's bounds (docs/reliability.md "hostile"). A sanitizer
# build (--sanitized) runs its stream at HOSTILE_SANITIZED_RATE (at 20/s a
# TSan shard on two cores falls behind and refuses deploys as "catching
# up": no finding) and allows HOSTILE_SANITIZED_RSS_FACTOR times the growth
# (ASan and TSan keep shadow memory for what the node touches: a TSan run
# grew 168 to 410 MiB where the release build grows 15 to 61).
HOSTILE_RATE = 20
HOSTILE_SANITIZED_RATE = 5
HOSTILE_RSS_GROWTH_KIB = 100 * 1024
HOSTILE_SANITIZED_RSS_FACTOR = 8
# Above the node's default api-server.http-max-body-bytes (16 MiB).
OVERSIZED_BODY_BYTES = (16 << 20) + 1
HOSTILE_ACK_P99_S = 1.0
NOT_BUFFERED_UNBONDED = 'casper_peer_blocks_not_buffered_total{reason="unbonded"}'


class RssWatch:
    """Samples the resident memory of `nodes` every half second on a
    thread until stop(); keeps each node's first and highest sample."""

    def __init__(self, nodes):
        import threading
        self.nodes = nodes
        self.first = {n["name"]: rss_kib(n["pid"]) for n in nodes}
        self.peak = dict(self.first)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.5):
            for n in self.nodes:
                got = rss_kib(n["pid"])
                if got is not None and (self.peak[n["name"]] or 0) < got:
                    self.peak[n["name"]] = got

    def stop(self):
        self._stop.set()
        self._thread.join()

    def growth_kib(self):
        return {k: (self.peak[k] or 0) - (self.first[k] or 0)
                for k in self.first}


def http_abuse(node, rounds):
    """Requests the node's public HTTP API must refuse: a foreign Host
    (421), a foreign Origin on /ws/events (403), a body announced over the
    limit (413, answered from its header: the body is not sent). Returns
    {what: [status codes]}."""
    import http.client
    port = node["ports"]["http"]
    got = {"foreign_host": [], "foreign_origin": [], "oversized_body": []}
    for _ in range(rounds):
        for what, method, path, headers, body in (
                ("foreign_host", "GET", "/status",
                 {"Host": "attacker.example"}, None),
                ("foreign_origin", "GET", "/ws/events",
                 {"Origin": "http://attacker.example", "Connection": "Upgrade",
                  "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                  "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}, None),
                ("oversized_body", "POST", "/api/deploy",
                 {"Content-Type": "application/json",
                  "Content-Length": str(OVERSIZED_BODY_BYTES)}, None)):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                conn.putrequest(method, path, skip_host=True)
                for name, value in {"Host": f"127.0.0.1:{port}",
                                    **headers}.items():
                    conn.putheader(name, value)
                conn.endheaders()
                got[what].append(conn.getresponse().status)
            except (OSError, http.client.HTTPException):
                got[what].append(0)  # the node closed on it: refused too
            finally:
                conn.close()
    return got


def hostile(shard, rng, quick, sanitized=False):
    """Every attack of issue 43 at once on a random validator while the
    honest stream runs; see the module's docstring."""
    validators = shard.validators()
    victim = rng.choice(validators)
    # The sybils take another validator's unreserved slots: on the victim
    # they would also keep out the attacker's own block peer.
    crowded = rng.choice([v for v in validators if v is not victim])
    try:
        address = http_json(victim, "/status")["address"]
        crowded_address = http_json(crowded, "/status")["address"]
        blocks = [b.get("blockInfo", b)
                  for b in http_json(victim, "/api/blocks/5")]
    except (OSError, ValueError, KeyError, urllib.error.URLError) as e:
        raise CheckFailed(f"{victim['name']}'s API: {e}") from e
    if not blocks:
        raise CheckFailed(f"no block on {victim['name']}")
    before = metrics(victim)
    watch = RssWatch(validators)
    hold = 20 if quick else 60
    orphans = 100 if quick else 400
    note(f"hostile: attacking {victim['name']}, sybils on "
         f"{crowded['name']} for {hold} s")
    common = ["--network-id", shard.state["network_id"],
              "--seed", str(rng.randrange(2**31))]
    started = time.monotonic()
    sybils = subprocess.Popen(
        [shard.badpeer, "--target", crowded_address] + common +
        ["--attacks", "sybil", "--sybil-count", "60",
         "--hold-seconds", str(hold)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out = subprocess.run(
            [shard.badpeer, "--target", address] + common +
            ["--attacks", "garbage,oversized,flood,bad-signature,"
                      "unbonded,orphans,deploys",
                      "--block", blocks[0]["blockHash"],
                      "--orphan-count", str(orphans),
                      "--flood-count", "2000" if quick else "20000",
                      "--api-grpc",
                      f"127.0.0.1:{victim['ports']['grpc_external']}",
                      "--deploy-count", "100" if quick else "1000"],
            capture_output=True, text=True, timeout=600, check=False)
        attacked = time.monotonic()
        http = http_abuse(victim, 5 if quick else 20)
        abused = time.monotonic()
        sybil_out, sybil_err = sybils.communicate(timeout=hold + 120)
    finally:
        if sybils.poll() is None:
            sybils.kill()
            sybils.wait()
        watch.stop()
    attacks = {}
    for line in (out.stdout + sybil_out).splitlines():
        try:
            got = json.loads(line)
            attacks[got["attack"]] = got  # the last line of each
        except (ValueError, KeyError):
            pass
    problems = []
    if out.returncode != 0:
        problems.append(f"rnode-badpeer exited {out.returncode}: "
                        f"{out.stderr.strip()[:300]}")
    if sybils.returncode != 0:
        problems.append(f"the sybils exited {sybils.returncode}: "
                        f"{sybil_err.strip()[:300]}")
    if not shard_tool.alive(victim["pid"]):
        raise CheckFailed(f"{victim['name']} died under the attacks")
    if attacks.get("garbage", {}).get("accepted", 1) != 0:
        problems.append("garbage frames accepted")
    if attacks.get("oversized", {}).get("huge_stream", {}).get("code", 0) == 0:
        problems.append("a stream announcing 1 GiB was accepted")
    kinds = attacks.get("deploys", {}).get("kinds", {})
    accepted = sum(k.get("accepted", 0) for k in kinds.values())
    if len(kinds) != 3 or accepted:
        problems.append(f"bad deploys: {accepted} accepted ({kinds})")
    for what, codes in http.items():
        if any(200 <= c < 300 for c in codes):
            problems.append(f"HTTP {what} answered {codes}")
    # The two forged blocks invalid, every orphan refused unkept.
    deadline = time.monotonic() + CHECK_DEADLINE_S
    while True:
        after = metrics(victim)
        invalid = after.get(INVALID, 0) - before.get(INVALID, 0)
        refused = (after.get(NOT_BUFFERED_UNBONDED, 0)
                   - before.get(NOT_BUFFERED_UNBONDED, 0))
        if (invalid >= 2 and refused >= orphans) or time.monotonic() > deadline:
            break
        time.sleep(POLL_S)
    if invalid < 2:
        problems.append(f"{invalid:.0f} of the 2 forged blocks judged invalid")
    # Under a sanitizer the victim's transport sheds part of the flood
    # ("busy": those never reach it); the ones that do must be refused.
    if refused < orphans and not (sanitized and refused > 0):
        problems.append(f"{refused:.0f} of {orphans} orphans refused unkept")
    growth = watch.growth_kib()
    bound = HOSTILE_RSS_GROWTH_KIB * (HOSTILE_SANITIZED_RSS_FACTOR
                                      if sanitized else 1)
    for name, kib in growth.items():
        if kib > bound:
            problems.append(f"{name}'s RSS grew {kib / 1024:.0f} MiB")
    if problems:
        raise CheckFailed("; ".join(problems))
    sybil = attacks.get("sybil", {})
    each = ", ".join(f"{k} +{v / 1024:.0f}" for k, v in sorted(growth.items()))
    return lfb_numbers(shard), (
        f"{victim['name']} attacked: {accepted} of "
        f"{sum(k.get('sent', 0) for k in kinds.values())} bad deploys in, "
        f"{invalid:.0f} forged and {refused:.0f} orphan blocks refused, "
        f"sybils admitted {sybil.get('admitted', '?')} on "
        f"{crowded['name']}, RSS MiB {each}; badpeer "
        f"{attacked - started:.0f} s, HTTP {abused - attacked:.0f} s")


def strict_stream(folder):
    """The hostile scenario's stream verdict: (ok, text) from the load
    generator's report: no deploy refused or failed, and acknowledgement
    p99 under HOSTILE_ACK_P99_S."""
    try:
        with open(os.path.join(folder, "report.json")) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return False, "no report"
    phases = report.get("phases", [])
    failed = sum(p.get("failed", 0) for p in phases)
    p99s = [p.get("acknowledgement_seconds", {}).get("p99") for p in phases]
    p99 = max((x for x in p99s if x is not None), default=None)
    problems = []
    if failed:
        problems.append(f"{failed} honest deploys failed: "
                        f"{report.get('run', {}).get('failure_reasons')}")
    if p99 is None or p99 >= HOSTILE_ACK_P99_S:
        problems.append(f"acknowledgement p99 {p99} s")
    return not problems, "; ".join(problems) or (
        f"none refused, acknowledgement p99 {p99:.3f} s")



RUNNERS = {"kill9": kill9, "sigstop": sigstop, "partition": partition,
           "restart-all": restart_all, "disk-full": disk_full,
           "hostile": hostile, "bad-peer": bad_peer,
           "long-outage": long_outage, "beyond-history": beyond_history}
# The runners that also take --sanitized (their sizes or bounds change).
TAKES_SANITIZED = ("hostile", "long-outage")
# A scenario's nominal length (s) for its stream; it may end early. The
# stream must outlast the fault's own checks: disk-full waits for the victim
# to take a deploy once space returns, which under the sanitizer builds
# takes it over 20 s of catching up (its stream once ended first, and the
# victim had no deploy left to take; under TSan on 2026-12-03 a 45 s stream
# still ended first).
LENGTH = {"kill9": (45, 250), "sigstop": (15, 25), "partition": (20, 35),
          "restart-all": (30, 30), "disk-full": (90, 90),
          "hostile": (40, 90), "bad-peer": (5, 5),
          "long-outage": (220, LONG_OUTAGE_FULL_S + 2 * CATCH_UP_S),
          "beyond-history": (BEYOND_HISTORY_S, BEYOND_HISTORY_S)}


def run_scenario(name, shard, a, rng, out_dir):
    """Runs one scenario; returns its row for the table."""
    sub = os.path.join(out_dir, name)
    os.makedirs(sub, exist_ok=True)
    length = LENGTH[name][0 if a.quick else 1] + LEAD_S + TAIL_S
    if name == "hostile" and a.sanitized:
        length += 120  # the attacks take minutes under a sanitizer
    if name == "long-outage" and a.sanitized:
        length += CATCH_UP_SANITIZED_S
    rate = a.rate
    if name == "hostile":
        rate = HOSTILE_SANITIZED_RATE if a.sanitized else max(a.rate,
                                                               HOSTILE_RATE)
    if name in ("long-outage", "beyond-history") and not a.sanitized:
        rate = max(a.rate, LONG_OUTAGE_RATE)
    args = loadtest.target_args(a.loadgen, shard.folder, sub) + [
        "--phases", f"{rate}/s:{length}s", "--allow-failures",
        "--drain-seconds", str(DRAIN_S)]
    row = {"scenario": name, "checks": {}, "detail": ""}
    started = time.monotonic()
    with open(os.path.join(sub, "loadgen.log"), "w") as log:
        stream = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        try:
            time.sleep(LEAD_S)
            try:
                extra = ((a.sanitized,) if name in TAKES_SANITIZED
                         else ())
                baseline, row["detail"] = RUNNERS[name](shard, rng, a.quick,
                                                        *extra)
                row["checks"]["fault"] = (True, row["detail"])
            except CheckFailed as e:
                row["checks"]["fault"] = (False, str(e))
                baseline = lfb_numbers(shard)
            try:
                row["checks"]["advance"] = (True, check_advance(shard, baseline))
            except CheckFailed as e:
                row["checks"]["advance"] = (False, str(e))
            if stream.poll() is not None:
                # Without deploys no block is made: a check that failed
                # after the stream ended says so.
                for check in ("fault", "advance"):
                    ok, text = row["checks"][check]
                    if not ok:
                        row["checks"][check] = (
                            False, text + " (the deploy stream had ended)")
            code = stream.wait(timeout=length + DRAIN_S + 60)
        except BaseException:
            stream.kill()
            stream.wait()
            raise
    row["acknowledged"], row["failed"], verdict = stream_report(sub)
    row["checks"]["stream"] = (code == 0, verdict)
    if name == "hostile":
        ok, text = strict_stream(sub)
        if not ok:
            # Which validator was behind, and why (a refusal as "catching
            # up" names only the reason; TSan suite, 2026-12-06).
            text += "; " + "; ".join(f"{v['name']} {behind_split(v)}"
                                     for v in shard.validators())
        row["checks"]["stream"] = (code == 0 and ok, f"{verdict}; {text}")
    try:
        lowest, text = check_agreement(shard)
        row["checks"]["agreement"] = (True, text)
        row["checks"]["state"] = (True, check_state(shard, lowest))
    except CheckFailed as e:
        row["checks"].setdefault("agreement", (False, str(e)))
        row["checks"].setdefault("state", (False, "not checked"))
    row["seconds"] = round(time.monotonic() - started, 1)
    row["passed"] = all(ok for ok, _ in row["checks"].values())
    return row


CHECKS = ("fault", "stream", "advance", "agreement", "state")


# Growth of a node's resident memory after the warm-up that fails a soak.
SOAK_RSS_GROWTH = 0.10
# Minutes in each of the two windows a soak's growth compares: the median
# of the first SOAK_WINDOW_MIN samples after the warm-up against the median
# of the last SOAK_WINDOW_MIN. One sample against one sample judged the
# sawtooth of RocksDB's flushes and compactions (some MiB either way) as
# much as any growth: soak run 8 failed by 0.8 points on single samples
# whose window medians were 2.9-4.9 % apart.
SOAK_WINDOW_MIN = 10
# How far a node's disk use may move after the warm-up in a soak with
# --disk (retention on: issue 45), window medians as for memory.
SOAK_DISK_CHANGE = 0.10


def rss_kib(pid, field="VmRSS"):
    """A process's resident set (KiB) from /proc (VmHWM: its peak); None
    once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def soak_args_problem(warmup_minutes, measured_minutes, soak_minutes):
    """Why a soak with these minutes could not reach a verdict, or None:
    the growth compares two SOAK_WINDOW_MIN windows after the warm-up, which
    must not overlap, and the soak must last long enough for both."""
    if measured_minutes < 2 * SOAK_WINDOW_MIN:
        return (f"--measured-minutes must be at least {2 * SOAK_WINDOW_MIN} "
                f"(two {SOAK_WINDOW_MIN}-minute windows are compared), not "
                f"{measured_minutes}")
    if warmup_minutes + measured_minutes > soak_minutes:
        return ("--soak-minutes must cover --warmup-minutes and "
                "--measured-minutes")
    return None


def window_medians(points, window=SOAK_WINDOW_MIN):
    """(median of the first `window` values, median of the last `window`)
    of (minute, value) points sorted by minute; None when there are fewer
    than 2 * window points (the windows would overlap)."""
    if window < 1 or len(points) < 2 * window:
        return None
    return (median([v for _, v in points[:window]]),
            median([v for _, v in points[-window:]]))


def growth_of(medians):
    """The last window's median over the first's, less one, of a
    window_medians pair; None for no pair or a first median that is not
    positive."""
    if medians is None or medians[0] <= 0:
        return None
    return medians[1] / medians[0] - 1


def window_growth(points, window=SOAK_WINDOW_MIN):
    """Growth of (minute, value) points, sorted by minute: growth_of their
    window_medians."""
    return growth_of(window_medians(points, window))


def slope_per_hour(points):
    """Least-squares slope of (minute, value) points, per hour; None for
    fewer than two."""
    slope = disk.least_squares_slope(points)
    return None if slope is None else 60 * slope


# Where a node's memory is, sampled with its RSS in a soak (memory.csv).
# What the last collection's kept states reach (a node with retention on):
# the live state, which the disk report sets beside the disk's growth.
LIVE_STATE = "rnode_retention_kept_bytes"
MEMORY_GAUGES = ("process_heap_allocated_bytes", "process_heap_resident_bytes",
                 "rnode_rocksdb_memtable_bytes",
                 "rnode_rocksdb_block_cache_bytes",
                 "rnode_rocksdb_table_readers_bytes", "rnode_trie_cache_bytes",
                 "casper_dag_blocks", "casper_dag_window_blocks",
                 "rnode_rocksdb_block_cache_capacity_bytes",
                 *disk.PART_GAUGES)

# The warm-up ends when every validator's RocksDB block cache holds this
# share of its bound: at 10 deploys/s that takes 40-50 minutes. An observer
# reads far less (its cache was 16 % full at minute 46 of soak run 3), so it
# does not gate the warm-up.
WARM_CACHE_SHARE = 0.9


def memory_row(node):
    """The node's MEMORY_GAUGES now ({} when it does not answer)."""
    try:
        m = metrics(node)
    except CheckFailed:
        return {}
    return {g: m[g] for g in MEMORY_GAUGES + (LIVE_STATE,) if g in m}


def cache_warm(row):
    """Whether a memory_row's block cache is filled to WARM_CACHE_SHARE."""
    bound = row.get("rnode_rocksdb_block_cache_capacity_bytes")
    used = row.get("rnode_rocksdb_block_cache_bytes")
    return bool(bound) and used is not None and used >= WARM_CACHE_SHARE * bound


# The trie cache is bounded by entries and by bytes, so which bound it
# reaches depends on the workload: it counts as full once it grew by at
# most this share over a minute (soak run 5 judged its last 15 MiB of
# filling as growth).
TRIE_CACHE_STILL = 0.02
TRIE_CACHE = "rnode_trie_cache_bytes"


def trie_cache_full(before, now):
    """Whether the trie cache, sampled a minute apart (memory_rows), has
    stopped growing; True for a node that does not export it."""
    if TRIE_CACHE not in now:
        return True
    if before is None or TRIE_CACHE not in before:
        return False
    return now[TRIE_CACHE] <= (1 + TRIE_CACHE_STILL) * before[TRIE_CACHE]


# The lines by which a sanitizer build reports a fault: one in a node's or
# the load generator's log fails the campaign (the chaos_quick test under
# the asan and tsan presets would otherwise pass whatever the nodes
# reported; ctest sees only the campaign's exit code).
SANITIZER_REPORT = re.compile(
    r"WARNING: ThreadSanitizer:|ERROR: AddressSanitizer:|"
    r"ERROR: LeakSanitizer:|SUMMARY: UndefinedBehaviorSanitizer:")


def sanitizer_reports(*folders):
    """The sanitizer report lines in the *.log files under `folders`, each
    as "path: line"."""
    found = []
    for folder in folders:
        for root, _, files in os.walk(folder):
            for name in sorted(files):
                if not name.endswith(".log"):
                    continue
                path = os.path.join(root, name)
                with open(path, errors="replace") as f:
                    for line in f:
                        if SANITIZER_REPORT.search(line):
                            found.append(f"{os.path.relpath(path, folder)}: "
                                         f"{line.strip()}")
    return found


def keep_logs(folder, out_dir):
    """Copies every node's node.log from the shard's folder to
    out_dir/logs/NODE.log (a failed soak is read from them)."""
    logs = os.path.join(out_dir, "logs")
    os.makedirs(logs, exist_ok=True)
    for name in sorted(os.listdir(folder)):
        log = os.path.join(folder, name, "node.log")
        if os.path.isfile(log):
            shutil.copyfile(log, os.path.join(logs, name + ".log"))
    note(f"node logs kept in {logs}")


def run_soak(shard, a, out_dir):
    """The steady stream for a.soak_minutes, RSS and the memory gauges
    sampled each minute; the warm-up ends at the first minute from
    a.warmup_minutes on when every validator's block cache is warm, and at
    least a.measured_minutes must follow it. Each node is judged by
    window_growth of its RSS less its block cache's bytes (a bounded cache
    still filling, as an observer's is, is not growth); raw RSS growth and
    the trend are reported beside it.
    Returns (passed, report lines)."""
    seconds = int(a.soak_minutes * 60)
    args = loadtest.target_args(a.loadgen, shard.folder, out_dir) + [
        "--phases", f"{a.rate}/s:{seconds}s", "--drain-seconds", str(DRAIN_S),
        "--workload", a.workload] + (["--read-answers"] if a.read_answers
                                     else [])
    disk_samples = []  # (minute, {name: bytes of its db})
    live = {}  # minute -> {name: LIVE_STATE bytes}, nodes with retention
    parts = {}  # minute -> {name: {disk.PART_GAUGES gauge: bytes}}
    finalized = {}  # minute -> deploys finalized (the first validator's)
    names = [n["name"] for n in shard.nodes()]
    samples = []  # (minute, {name: KiB})
    caches = {}  # minute -> {name: block cache bytes or None}
    last_gauges = {}  # name -> the previous minute's memory_row
    warm_end = None
    started = time.monotonic()
    memory = open(os.path.join(out_dir, "memory.csv"), "w")
    memory.write("minute,node," + ",".join(MEMORY_GAUGES) + "\n")
    with memory, open(os.path.join(out_dir, "loadgen.log"), "w") as log:
        stream = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        try:
            minute = 0
            while minute <= a.soak_minutes and stream.poll() is None:
                nodes = shard.nodes()
                row = {n["name"]: rss_kib(n["pid"]) for n in nodes}
                samples.append((minute, row))
                disk_samples.append((minute, {
                    n["name"]: disk.dir_bytes(
                        os.path.join(shard.folder, n["name"], "db"))
                    for n in nodes}))
                with contextlib.suppress(CheckFailed):
                    finalized[minute] = metrics(shard.validators()[0]).get(
                        "rnode_deploys_finalized_total")
                gauges = [memory_row(n) for n in nodes]
                caches[minute] = {
                    n["name"]: g.get("rnode_rocksdb_block_cache_bytes")
                    for n, g in zip(nodes, gauges)}
                live[minute] = {n["name"]: g[LIVE_STATE]
                                for n, g in zip(nodes, gauges)
                                if LIVE_STATE in g}
                parts[minute] = {n["name"]: g for n, g in zip(nodes, gauges)}
                for n, g in zip(nodes, gauges):
                    memory.write(f"{minute},{n['name']}," + ",".join(
                        "%.0f" % g[k] if k in g else "" for k in MEMORY_GAUGES)
                        + "\n")
                memory.flush()
                if (warm_end is None and minute >= a.warmup_minutes
                        and all(cache_warm(g) for n, g in zip(nodes, gauges)
                                if n["role"] == "validator")
                        and all(trie_cache_full(last_gauges.get(n["name"]), g)
                                for n, g in zip(nodes, gauges))):
                    warm_end = minute
                    note(f"soak: warm at minute {minute} (every validator's "
                         f"block cache {WARM_CACHE_SHARE:.0%} full, every "
                         f"node's trie cache full)")
                last_gauges = {n["name"]: g for n, g in zip(nodes, gauges)}
                note(f"soak minute {minute}/{a.soak_minutes:g}: RSS MiB " +
                     ", ".join(f"{k} {v / 1024:.0f}" if v else f"{k} gone"
                               for k, v in row.items()))
                minute += 1
                next_at = started + minute * 60
                while time.monotonic() < next_at and stream.poll() is None:
                    time.sleep(1)
            code = stream.wait(timeout=DRAIN_S + 120)
        except BaseException:
            stream.kill()
            stream.wait()
            raise
    with open(os.path.join(out_dir, "rss.csv"), "w") as f:
        f.write("minute," + ",".join(f"{n}_kib" for n in names) + "\n")
        for minute, row in samples:
            f.write(f"{minute}," + ",".join(str(row[n] or "") for n in names)
                    + "\n")
    problems = []
    warm = [r for m, r in samples if m == warm_end]
    last = samples[-1] if samples else (0, {})
    # The verdict is window_growth of RSS less the block cache: the median
    # of the first SOAK_WINDOW_MIN minutes after the warm-up against the
    # median of the last SOAK_WINDOW_MIN. The single samples at both ends
    # and the least-squares trend are reported beside it.
    lines = ["| node | RSS at warm-up end MiB | last MiB | RSS growth | "
             "less block cache: warm MiB | last MiB | growth | "
             f"{SOAK_WINDOW_MIN}-min medians: first MiB | last MiB | "
             "growth (verdict) | max RSS MiB | trend MiB/h |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def less_cache(minute, name, kib):
        """RSS (KiB) less the node's block cache; None without a gauge."""
        cache = caches.get(minute, {}).get(name)
        return None if kib is None or cache is None else kib - cache / 1024

    if not warm:
        problems.append("never warm: the validators' block caches were not "
                        f"{WARM_CACHE_SHARE:.0%} full by minute {last[0]}")
    elif last[0] - warm_end < a.measured_minutes:
        problems.append(f"warm only at minute {warm_end}: {last[0] - warm_end}"
                        f" minutes measured after it, not {a.measured_minutes}")
    if warm:
        for n in names:
            w, l = warm[0][n], last[1][n]
            peak = max((r[n] or 0) for m, r in samples if m >= warm_end)
            if not w or not l:
                problems.append(f"{n} died during the soak")
                continue
            growth = l / w - 1
            aw = less_cache(warm_end, n, w)
            al = less_cache(last[0], n, l)
            if not aw or al is None:
                problems.append(f"{n}: no block cache gauge to judge by")
                continue
            kib = ((m, less_cache(m, n, r[n])) for m, r in samples
                   if m >= warm_end)
            points = [(m, v / 1024) for m, v in kib if v is not None]
            trend = slope_per_hour(points)
            trend_cell = "-" if trend is None else f"{trend:+.1f}"
            medians = window_medians(points)
            judged = growth_of(medians)
            if medians is None:
                problems.append(f"{n}: {len(points)} samples after the "
                                f"warm-up, fewer than two {SOAK_WINDOW_MIN}"
                                "-minute windows")
                windows = "- | - | -"
            elif judged is None:
                problems.append(f"{n}: first window's median not positive")
                windows = f"{medians[0]:.0f} | {medians[1]:.0f} | -"
            else:
                windows = (f"{medians[0]:.0f} | {medians[1]:.0f} | "
                           f"{judged * 100:+.1f}%")
            lines.append(f"| {n} | {w / 1024:.0f} | {l / 1024:.0f} | "
                         f"{growth * 100:+.1f}% | {aw / 1024:.0f} | "
                         f"{al / 1024:.0f} | {(al / aw - 1) * 100:+.1f}% | "
                         f"{windows} | {peak / 1024:.0f} | {trend_cell} |")
            if judged is not None and judged > SOAK_RSS_GROWTH:
                problems.append(f"{n} grew {judged * 100:.1f}% after the "
                                f"warm-up (median of the last {SOAK_WINDOW_MIN}"
                                " minutes of RSS less its block cache against"
                                " the first)")
    # With --observer-arg the observer runs otherwise (an archive beside
    # validators with retention): reported, not judged.
    judged = {n["name"] for n in shard.nodes()
              if a.disk and (n["role"] == "validator" or not a.observer_arg)}
    lines += disk_report(a, names, disk_samples, live, parts, finalized,
                         warm_end, judged, problems, out_dir)
    acknowledged, failed, verdict = stream_report(out_dir)
    if code != 0:
        problems.append(f"stream: {verdict}")
    try:
        lowest, text = check_agreement(shard)
        lines.append("")
        lines.append(f"agreement: {text}; state: {check_state(shard, lowest)}")
    except CheckFailed as e:
        problems.append(str(e))
    head = [f"soak: {a.soak_minutes:g} min at {a.rate:g} deploys/s, "
            f"warm at minute {warm_end} (at least {a.warmup_minutes}, the "
            f"validators' block caches {WARM_CACHE_SHARE:.0%} full), "
            f"{len(samples)} samples; "
            f"{acknowledged} acknowledged, {failed} failed; stream: "
            f"{verdict}", ""]
    tail = ["", "verdict: " + ("pass" if not problems
                               else "FAIL: " + "; ".join(problems))]
    with open(os.path.join(out_dir, "soak.json"), "w") as f:
        json.dump({"rate": a.rate, "minutes": a.soak_minutes,
                   "warmup_minutes": a.warmup_minutes, "warm_end": warm_end,
                   "measured_minutes": a.measured_minutes, "nodes": names,
                   "samples": samples, "problems": problems,
                   "stream": verdict}, f, indent=1)
    text = "\n".join(head + lines + tail) + "\n"
    with open(os.path.join(out_dir, "soak.md"), "w") as f:
        f.write(text)
    return not problems, text


def disk_report(a, names, samples, live, parts, finalized, warm_end, judged,
                problems, out_dir):
    """The soak's disk table (disk.py), where each node's disk is (`parts`,
    {minute: {name: gauges}}: RocksDB's log and tables) and each retaining
    node's live state (`live`, {minute: {name: bytes}}) beside it, the
    problems of the nodes named in `judged` appended to `problems`; writes
    disk.csv."""
    with open(os.path.join(out_dir, "disk.csv"), "w") as f:
        f.write("minute,finalized," + ",".join(f"{n}_bytes" for n in names)
                + "," + ",".join(f"{n}_live_bytes" for n in names) + "\n")
        for minute, row in samples:
            done = finalized.get(minute)
            done = "" if done is None else "%.0f" % done
            kept = live.get(minute, {})
            f.write(f"{minute},{done}," +
                    ",".join(str(row.get(n, "")) for n in names) + "," +
                    ",".join("%.0f" % kept[n] if n in kept else ""
                             for n in names) + "\n")
    if warm_end is None:
        return []
    lines = ["", f"disk (judged: at most {SOAK_DISK_CHANGE:.0%} either way "
             f"after the warm-up), workload {a.workload}"
             f"{' reading its answers' if a.read_answers else ''}:", ""]
    lines += [h.format(w=SOAK_WINDOW_MIN) for h in disk.HEADER]
    for n in names:
        points = [(m, r[n]) for m, r in samples if m >= warm_end and n in r]
        label = n if n in judged else f"{n} (not judged)"
        row, problem = disk.judge(label, points, finalized, SOAK_WINDOW_MIN,
                                  SOAK_DISK_CHANGE, window_medians, growth_of)
        lines.append(row)
        if problem and n in judged:
            problems.append(problem)
    where = [disk.parts_line(n, [parts[m][n] for m in sorted(parts)
                                 if m >= warm_end and n in parts[m]])
             for n in names]
    if any(where):
        lines += ["", "where the disk is after the warm-up (RocksDB's "
                  "gauges, medians and largest of the minute samples):",
                  ""] + [x for x in where if x]
    states = [disk.live_line(n, [(m, live[m][n]) for m in sorted(live)
                                 if m >= warm_end and n in live[m]],
                             finalized) for n in names]
    if any(states):
        lines += ["", "live state after the warm-up "
                  f"({LIVE_STATE}, what the last collection kept; not "
                  "judged):", ""] + [x for x in states if x]
    return lines


def render(rows, seed, rate):
    lines = [f"seed {seed}, {rate} deploys/s", "",
             "| scenario | what | s | acknowledged | refused | "
             + " | ".join(CHECKS) + " |",
             "|---|---|---:|---:|---:|" + "---|" * len(CHECKS)]
    for r in rows:
        # What a check saw is in chaos.json; the table names failures.
        cells = ["pass" if r["checks"][c][0] else "FAIL: " + r["checks"][c][1]
                 for c in CHECKS]
        lines.append(f"| {r['scenario']} | {r['detail']} | {r['seconds']} | "
                     f"{r['acknowledged']} | {r['failed']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(prog="scripts/chaos",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="fewer kills and a shorter stop (the test command's)")
    p.add_argument("--scenarios", default=",".join(SCENARIOS))
    p.add_argument("--rate", type=float, default=10,
                   help="deploys per second of the steady stream")
    p.add_argument("--seed", type=int)
    p.add_argument("--sanitized", action="store_true",
                   help="the binaries are a sanitizer build: hostile's stream "
                        "runs slower and its memory bound is wider")
    p.add_argument("--out")
    p.add_argument("--base-port", type=int)
    p.add_argument("--soak", action="store_true",
                   help="no faults: a long steady stream, memory sampled")
    p.add_argument("--soak-minutes", type=float, default=150,
                   help="the whole soak, warm-up included")
    p.add_argument("--warmup-minutes", type=int, default=10,
                   help="the shortest warm-up (it lasts until the block "
                        "caches are full)")
    p.add_argument("--measured-minutes", type=int, default=60,
                   help="minutes the soak must run after the warm-up")
    p.add_argument("--disk", action="store_true",
                   help="with --soak: judge each node's disk use too (at most "
                        "10%% either way after the warm-up; for a shard run "
                        "with retention, e.g. --validator-arg=--retain-blocks=1024)")
    p.add_argument("--workload", default="noop",
                   choices=("noop", "counter", "transfer", "registry", "mix"),
                   help="what the soak's deploys do (rnode-loadgen --workload)")
    p.add_argument("--read-answers", action="store_true",
                   help="the soak's deploys receive their own answers "
                        "(rnode-loadgen --read-answers): the live state does "
                        "not grow with the run, so a disk soak judges the "
                        "node's own growth")
    p.add_argument("--node-arg", action="append", default=[], metavar="ARG",
                   help="one more argument of every node's `rnode run` "
                        "(repeatable; e.g. --node-arg=--block-cache-size=16M "
                        "makes a soak's warm-up shorter)")
    p.add_argument("--validator-arg", action="append", default=[],
                   metavar="ARG",
                   help="one more argument of the validators' `rnode run` "
                        "(an option given also by --node-arg is refused)")
    p.add_argument("--observer-arg", action="append", default=[],
                   metavar="ARG",
                   help="one more argument of the observer's `rnode run` "
                        "(e.g. --observer-arg=--retain-blocks=0: an archive "
                        "beside validators with retention, one soak measuring "
                        "both)")
    loadtest.add_hosts_args(p)  # partition then cuts links at the relay
    p.add_argument("--keep", action="store_true",
                   help="keep the shard's folder (its logs)")
    p.add_argument("--rnode", default=os.environ.get(
        "RNODE_BIN", os.path.join(REPO, "build", "bin", "rnode")))
    p.add_argument("--loadgen", default=os.environ.get(
        "RNODE_LOADGEN", os.path.join(REPO, "build", "bin", "rnode-loadgen")))
    p.add_argument("--badpeer", default=os.environ.get(
        "RNODE_BADPEER", os.path.join(REPO, "build", "bin", "rnode-badpeer")))
    a = p.parse_args()
    if a.soak:
        problem = soak_args_problem(a.warmup_minutes, a.measured_minutes,
                                    a.soak_minutes)
        if problem:
            loadtest.fail(problem)
    names = [s for s in a.scenarios.split(",") if s]
    unknown = [s for s in names if s not in RUNNERS]
    if unknown or not names:
        loadtest.fail(f"unknown scenario {unknown}; known: {', '.join(SCENARIOS)}")
    for binary in (a.rnode, a.loadgen, a.badpeer):
        if not os.access(binary, os.X_OK):
            loadtest.fail(f"{binary} not found: run scripts/setup first")
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(2**31)
    note(f"seed {seed} (replay with --seed {seed})")
    rng = random.Random(seed)
    out_dir = os.path.abspath(a.out or os.path.join(
        "chaos-out", time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(out_dir, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="rnode-chaos-")
    if a.soak:
        passed = False
        try:
            loadtest.shard_up(folder, a.base_port or loadtest.free_base(47400),
                              os.path.abspath(a.rnode),
                              [f"--node-arg={x}" for x in a.node_arg] +
                              [f"--validator-arg={x}" for x in a.validator_arg] +
                              [f"--observer-arg={x}" for x in a.observer_arg] +
                              loadtest.hosts_args(a))
            passed, text = run_soak(Shard(folder, os.path.abspath(a.rnode)),
                                    a, out_dir)
        finally:
            if not passed:
                keep_logs(folder, out_dir)
            loadtest.shard_down(folder, wipe=not a.keep)
        print(text, end="")
        note(f"{'soak passed' if passed else 'soak FAILED'}; {out_dir}/soak.md")
        return 0 if passed else 1
    rows = []
    try:
        loadtest.shard_up(folder, a.base_port or loadtest.free_base(47400),
                          os.path.abspath(a.rnode),
                          ["--fault-injection",
                           *[f"--node-arg={x}" for x in a.node_arg],
                           *loadtest.hosts_args(a)])
        shard = Shard(folder, os.path.abspath(a.rnode))
        shard.badpeer = os.path.abspath(a.badpeer)
        for name in names:
            note(f"scenario {name}")
            row = run_scenario(name, shard, a, rng, out_dir)
            rows.append(row)
            note(f"{name}: {'passed' if row['passed'] else 'FAILED'}")
    finally:
        loadtest.shard_down(folder, wipe=False)
        reports = sanitizer_reports(folder, out_dir)
        for line in reports[:20]:
            note(f"sanitizer report: {line}")
        # A failed scenario is read from the nodes' logs (a CI run keeps
        # nothing else).
        if reports or not rows or not all(r["passed"] for r in rows):
            keep_logs(folder, out_dir)
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)
        if a.keep:
            note(f"shard kept in {folder}")
    table = render(rows, seed, a.rate)
    print(table, end="")
    with open(os.path.join(out_dir, "chaos.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "chaos.json"), "w") as f:
        json.dump({"seed": seed, "rate": a.rate, "quick": a.quick,
                   "scenarios": rows}, f, indent=1)
    passed = (len(rows) == len(names) and all(r["passed"] for r in rows)
              and not reports)
    if reports:
        note(f"{len(reports)} sanitizer report lines in the nodes' and "
             f"the load generator's logs (kept in {out_dir}/logs)")
    note(f"{'all verdicts green' if passed else 'FAILED'}; {out_dir}/chaos.md")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
