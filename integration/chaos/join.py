#!/usr/bin/env python3
"""A new observer joins a long shard (issue 48; docs/reliability.md).

  scripts/join [--blocks N] [--rate R] [--node-arg ARG ...] [--out DIR]
               [--deadline S] [--keep | --reuse DIR] [--read-answers]
               [--validator]

Starts a fresh shard of 3 validators and an observer (scripts/shard), runs
a stream of deploys (rnode-loadgen, R a second, default 100, in runs of
two minutes, each drained) until the first validator's newest block is
numbered N (default 20,000), then starts one more observer with an empty
data dir (scripts/shard join) while a stream of 10 deploys a second runs
for a minute. It measures the joiner's time to ready, its time to hold the
others' last finalized block, its catch-up rate and its resident memory
(sampled every half second and the kernel's peak, VmHWM). With
--validator the shard is made with one spare validator (bonded in the
genesis, never started: four bonded, three running) and, once the
observer has caught up, the spare joins the same way (scripts/shard join
--validator) and is measured the same way; the checks then hold for both.

Verdict: every deploy acknowledged during the fill and the join
finalized; within --deadline seconds (default 1800) the joiner is ready
and holds the others' last finalized block; its peak resident memory is
at most the largest validator's resident memory plus 100 MiB (it holds
the same chain; catching up must not buffer it); every node finalizes
every node's last finalized block and one post-state root holds.

--reuse DIR keeps the shard in DIR and, when DIR holds one already,
restarts it and fills only up to N blocks (its joiners' data is deleted
first): several joins, of several builds (--rnode), against one long
shard. The shard runs on the --rnode binary too.

Writes join.md and join.json to --out (default join-out/<time>); exits 0
only when every check passed. Not in the test command: 20,000 blocks take
about half an hour to make on 2 cores. Only the Python standard library is
used.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos  # noqa: E402  (the campaign's shard helpers and checks)

FILL_CHUNK_S = 120
JOIN_RATE = 10
JOIN_STREAM_S = 60
# The joiner's peak resident memory may exceed the largest validator's by
# this much (the same allowance the hostile scenario gives an attacked one).
RSS_ALLOWANCE_KIB = 100 * 1024


def stream(a, shard, sub, rate, seconds):
    """Starts rnode-loadgen at `rate` for `seconds` (then its drain)."""
    os.makedirs(sub, exist_ok=True)
    args = chaos.loadtest.target_args(a.loadgen, shard.folder, sub) + [
        "--phases", f"{rate}/s:{seconds}s", "--drain-seconds",
        str(chaos.DRAIN_S)] + (["--read-answers"] if a.read_answers else [])
    with open(os.path.join(sub, "loadgen.log"), "w") as log:
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)


# How long the chain is: the newest block's number (chaos.LATEST). Not the
# blocks held, which retention (16,384 numbers by default) keeps from
# growing past it.


def fill(a, shard, out_dir):
    """Streams until the first validator's newest block is numbered
    a.blocks; returns (acknowledged, problems)."""
    witness = shard.validators()[0]
    acknowledged, problems, run = 0, [], 0
    started = time.monotonic()
    blocks = chaos.metrics(witness).get(chaos.LATEST, 0)
    while blocks < a.blocks:
        before = blocks
        run += 1
        sub = os.path.join(out_dir, f"fill-{run:03d}")
        child = stream(a, shard, sub, a.rate, FILL_CHUNK_S)
        code = child.wait(timeout=FILL_CHUNK_S + chaos.DRAIN_S + 120)
        got, failed, verdict = chaos.stream_report(sub)
        acknowledged += got
        if code != 0:
            problems.append(f"fill run {run}: {verdict}")
        blocks = chaos.metrics(witness).get(chaos.LATEST, 0)
        chaos.note(f"fill run {run}: #{blocks:.0f} of {a.blocks} after "
                   f"{time.monotonic() - started:.0f} s ({verdict})")
        if blocks <= before:
            problems.append(f"fill run {run}: the shard made no block")
            break
    return acknowledged, problems


def join(a, shard, out_dir, validator=False):
    """Starts a fresh observer (or the spare validator) and follows it until
    it holds the others' last finalized block; returns the figures."""
    others = list(shard.nodes())
    node = chaos.shard_tool.add_joiner(shard.folder, shard.state, validator)
    sub = "join-stream" + ("-validator" if validator else "")
    load = stream(a, shard, os.path.join(out_dir, sub), JOIN_RATE,
                  JOIN_STREAM_S)
    started = time.monotonic()
    child = chaos.shard_tool.start(shard.rnode, node, shard.state,
                                   shard.state["bootstrap"])
    shard.children[node["name"]] = child
    shard.save()
    validators_rss = {n["name"]: chaos.rss_kib(n["pid"])
                      for n in shard.validators()}
    figures = {"joiner": node["name"], "ready_s": None, "caught_up_s": None,
               "blocks_at_start": chaos.metrics(others[0]).get(
                   chaos.DAG_BLOCKS, 0)}
    rss_max, samples = 0, []
    try:
        while time.monotonic() - started < a.deadline:
            now = time.monotonic() - started
            if child.poll() is not None:
                raise chaos.CheckFailed(
                    f"{node['name']} exited (code {child.returncode})")
            rss = chaos.rss_kib(child.pid) or 0
            rss_max = max(rss_max, rss)
            samples.append((round(now, 1), rss))
            if figures["ready_s"] is None:
                try:
                    status = chaos.http_json(node, "/api/status")
                    if status.get("isReady"):
                        figures["ready_s"] = round(now, 1)
                        # How it joined (issue 45): from state, or by
                        # replay (join null or phase not_needed).
                        figures["join"] = status.get("join")
                except (OSError, ValueError):
                    pass
            if figures["ready_s"] is not None:
                target = max((chaos.lfb(n) or (-1, ""))[0] for n in others)
                held = chaos.holds_final(node, target, others)
                if held is not None:
                    figures["caught_up_s"] = round(now, 1)
                    figures["lfb"] = held[0]
                    break
            time.sleep(0.5)
        figures["peak_kib"] = chaos.rss_kib(child.pid, "VmHWM")
        figures["sampled_max_kib"] = rss_max
        figures["validators_kib"] = validators_rss
        figures["validators_now_kib"] = {
            n["name"]: chaos.rss_kib(n["pid"]) for n in shard.validators()}
        figures["blocks"] = chaos.metrics(node).get(chaos.DAG_BLOCKS, 0)
        figures["rss_samples"] = samples[::10]
    finally:
        load.wait(timeout=JOIN_STREAM_S + chaos.DRAIN_S + 120)
    got, failed, verdict = chaos.stream_report(os.path.join(out_dir, sub))
    figures["join_stream"] = {"acknowledged": got, "failed": failed,
                              "verdict": verdict, "ok": load.returncode == 0}
    return figures


def judge(figures, fill_problems, checks=None, label=""):
    """The checks of one join's figures, added to `checks` (a new dict by
    default) with `label` after each name; the fill's with no label."""
    if checks is None:
        checks = {}
        checks["fill"] = (not fill_problems, "; ".join(fill_problems) or
                          "every acknowledged deploy finalized")
    js = figures.get("join_stream", {})
    checks["join stream" + label] = (js.get("ok", False),
                                     js.get("verdict", "none"))
    caught = figures.get("caught_up_s")
    checks["caught up" + label] = (
        caught is not None,
        f"ready after {figures.get('ready_s')} s, the others' last "
        f"finalized block #{figures.get('lfb')} after {caught} s"
        if caught is not None else
        f"not caught up within the deadline (ready: {figures.get('ready_s')})")
    peak = figures.get("peak_kib") or figures.get("sampled_max_kib") or 0
    largest = max(list(figures.get("validators_kib", {}).values()) +
                  list(figures.get("validators_now_kib", {}).values()) +
                  [0])
    checks["memory" + label] = (
        peak <= largest + RSS_ALLOWANCE_KIB,
        f"joiner peak {peak / 1024:.0f} MiB; largest validator "
        f"{largest / 1024:.0f} MiB")
    return checks


def render(a, figures, checks, seconds):
    who = "a fresh observer" + (", then a spare validator," if a.validator
                                else "")
    lines = [f"# Join: {who} against {a.blocks} blocks", "",
             f"fill at {a.rate} deploys/s; join under {JOIN_RATE}/s for "
             f"{JOIN_STREAM_S} s; {seconds:.0f} s in all", "",
             "| check | passed | detail |", "|---|---|---|"]
    for name, (ok, text) in checks.items():
        lines.append(f"| {name} | {'yes' if ok else 'NO'} | {text} |")
    lines += figure_lines(figures)
    if figures.get("validator"):
        lines += ["", "the spare validator:"]
        lines += figure_lines(figures["validator"])
    return "\n".join(lines) + "\n"


def figure_lines(figures):
    """The lines on one joiner's catch-up and state join."""
    lines = []
    caught = figures.get("caught_up_s")
    if caught:
        rate = figures.get("blocks", 0) / caught
        lines += ["", f"{figures.get('blocks', 0):.0f} blocks held after "
                      f"{caught} s: {rate:.0f} blocks/s"]
    join = figures.get("join")
    if join and join.get("phase") == "done":
        lines += ["", f"joined from state at #{join.get('anchorNumber')} "
                      f"(floor #{join.get('floor')}) in {join.get('seconds', 0):.1f} s: "
                      f"{join.get('rootsDone')} state tries, "
                      f"{join.get('trieNodes')} trie nodes, "
                      f"{join.get('trieBytes', 0) / 1e6:.1f} MB fetched"]
    return lines


def main():
    p = argparse.ArgumentParser(prog="scripts/join",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--blocks", type=int, default=20000)
    p.add_argument("--rate", type=float, default=100)
    p.add_argument("--deadline", type=float, default=1800)
    p.add_argument("--node-arg", action="append", default=[], metavar="ARG")
    p.add_argument("--read-answers", action="store_true",
                   help="the deploys receive their own sends (rnode-loadgen "
                        "--read-answers): the state does not grow with the "
                        "history, so joins of short and long shards compare "
                        "history alone")
    p.add_argument("--validator", action="store_true",
                   help="a spare validator joins too, after the observer "
                        "(the shard is made with one: four bonded, three "
                        "running); not with --reuse")
    p.add_argument("--out")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--reuse", metavar="DIR")
    p.add_argument("--rnode", default=os.environ.get(
        "RNODE_BIN", os.path.join(chaos.REPO, "build", "bin", "rnode")))
    p.add_argument("--loadgen", default=os.environ.get(
        "RNODE_LOADGEN", os.path.join(chaos.REPO, "build", "bin",
                                      "rnode-loadgen")))
    a = p.parse_args()
    if a.validator and a.reuse:
        chaos.loadtest.fail("--validator makes its own shard (with a spare "
                            "validator): not with --reuse")
    for binary in (a.rnode, a.loadgen):
        if not os.access(binary, os.X_OK):
            chaos.loadtest.fail(f"{binary} not found: run scripts/setup first")
    out_dir = os.path.abspath(a.out or os.path.join(
        "join-out", time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(out_dir, exist_ok=True)
    if a.reuse:
        folder = os.path.abspath(a.reuse)
        os.makedirs(folder, exist_ok=True)
        # The last run's joiner: a fresh one joins now.
        for name in os.listdir(folder):
            if name.startswith("joiner"):
                shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
    else:
        folder = tempfile.mkdtemp(prefix="rnode-join-")
    started = time.monotonic()
    figures, checks = {}, {}
    try:
        # A port block for each node and joiner (a run just before may
        # hold its ports in TIME_WAIT for a minute).
        blocks = 6 if a.validator else 5
        base = next((b for b in range(47400, 60000, 1000)
                     if chaos.loadtest.ports_free(b, blocks)), None)
        if base is None:
            chaos.loadtest.fail(f"no {blocks} free port blocks from 47400")
        chaos.loadtest.shard_up(
            folder, base, os.path.abspath(a.rnode),
            [f"--node-arg={x}" for x in a.node_arg] +
            (["--spare-validators", "1"] if a.validator else []))
        shard = chaos.Shard(folder, os.path.abspath(a.rnode))
        acknowledged, problems = fill(a, shard, out_dir)
        figures = {"acknowledged": acknowledged}
        try:
            figures.update(join(a, shard, out_dir))
        except chaos.CheckFailed as e:
            problems.append(str(e))
        checks = judge(figures, problems)
        if a.validator:
            try:
                figures["validator"] = join(a, shard, out_dir, validator=True)
            except chaos.CheckFailed as e:
                figures["validator"] = {}
                checks["validator"] = (False, str(e))
            judge(figures["validator"], [], checks, " (validator)")
        try:
            lowest, text = chaos.check_agreement(shard)
            checks["agreement"] = (True, text)
            checks["state"] = (True, chaos.check_state(shard, lowest))
        except chaos.CheckFailed as e:
            checks.setdefault("agreement", (False, str(e)))
            checks.setdefault("state", (False, "not checked"))
    finally:
        chaos.loadtest.shard_down(folder, wipe=False)
        reports = chaos.sanitizer_reports(folder, out_dir)
        passed = bool(checks) and all(ok for ok, _ in checks.values())
        if reports or not passed:
            chaos.keep_logs(folder, out_dir)
        if a.keep or a.reuse:
            chaos.note(f"shard kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    table = render(a, figures, checks, time.monotonic() - started)
    print(table, end="")
    with open(os.path.join(out_dir, "join.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "join.json"), "w") as f:
        json.dump({"blocks": a.blocks, "rate": a.rate, "figures": figures,
                   "checks": checks}, f, indent=1)
    passed = passed and not reports
    chaos.note(f"{'join passed' if passed else 'join FAILED'}; {out_dir}/join.md")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
