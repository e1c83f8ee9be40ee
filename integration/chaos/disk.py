"""Disk use in a soak (scripts/chaos --soak --disk; issue 45): each node's
data directory sampled once a minute beside the finalized deploys, judged
like memory (the median of the first window after the warm-up against the
median of the last), and the growth per 1,000 finalized deploys, the
figure that says what retention saves. Standard library only.
"""

import os


def dir_bytes(path):
    """The bytes of the files under `path` (0 when it is gone); files that
    vanish while counted (RocksDB compacting) are skipped."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def least_squares_slope(points):
    """The slope of y over x of (x, y) points by least squares; None for
    fewer than two distinct x."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def bytes_per_thousand(samples):
    """Bytes of disk per 1,000 finalized deploys over (finalized, bytes)
    samples: the least-squares slope, times 1,000; None without a slope."""
    slope = least_squares_slope(samples)
    return None if slope is None else slope * 1000


def judge(name, points, finalized, window, limit, medians_of, growth_of):
    """One node's row and its problem (None when within `limit`): points
    are (minute, bytes) after the warm-up, finalized {minute: deploys}.
    medians_of and growth_of are the soak's window functions (chaos.py)."""
    per_k = bytes_per_thousand([(finalized[m], b) for m, b in points
                                if finalized.get(m) is not None])
    medians = medians_of(points, window)
    growth = growth_of(medians)
    first = f"{points[0][1] / 2**20:.0f}" if points else "-"
    last = f"{points[-1][1] / 2**20:.0f}" if points else "-"
    cells = ("- | - | -" if medians is None else
             f"{medians[0] / 2**20:.0f} | {medians[1] / 2**20:.0f} | " +
             ("-" if growth is None else f"{growth * 100:+.1f}%"))
    per_k_cell = "-" if per_k is None else f"{per_k / 1024:.1f}"
    row = f"| {name} | {first} | {last} | {cells} | {per_k_cell} |"
    if growth is None:
        return row, f"{name}: too few disk samples after the warm-up"
    if abs(growth) > limit:
        return row, (f"{name}'s disk use moved {growth * 100:+.1f}% after the"
                     f" warm-up (window medians; at most {limit:.0%})")
    return row, None


HEADER = ["| node | disk at warm-up MiB | last MiB | {w}-min medians: first "
          "MiB | last MiB | growth | KiB per 1,000 finalized deploys |",
          "|---|---:|---:|---:|---:|---:|---:|"]


# RocksDB's parts of a node's disk (rnode's gauges): the write-ahead log,
# the table files, and what the tables would hold compacted.
PART_GAUGES = ("rnode_rocksdb_wal_bytes", "rnode_rocksdb_table_bytes",
               "rnode_rocksdb_live_data_bytes")


def parts_line(name, gauges):
    """A line on where one node's disk is: gauges is its PART_GAUGES at each
    sample ({gauge: bytes}). The log and the tables move apart (the log
    drops at each flush, the tables at each compaction), so a sawtooth of
    the whole shows here which part it is. None without samples."""
    cells = []
    for gauge, label in zip(PART_GAUGES, ("log", "tables", "tables' live data")):
        values = sorted(g[gauge] for g in gauges if gauge in g)
        if values:
            cells.append(f"{label} {values[len(values) // 2] / 2**20:.1f} "
                         f"(largest {values[-1] / 2**20:.1f})")
    if not cells:
        return None
    return f"- {name}: " + ", ".join(cells) + " MiB"


def live_line(name, points, finalized):
    """A line on one node's live state after the warm-up: points are
    (minute, bytes of rnode_retention_kept_bytes), finalized {minute:
    deploys}. What the deploys left in the state is the users' data, which
    no retention deletes; the disk's growth beyond it is the node's own.
    None without points."""
    if not points:
        return None
    per_k = bytes_per_thousand([(finalized[m], b) for m, b in points
                                if finalized.get(m) is not None])
    rate = ("-" if per_k is None else f"{per_k / 1024:.1f} KiB")
    return (f"- {name}: live state {points[0][1] / 2**20:.1f} -> "
            f"{points[-1][1] / 2**20:.1f} MiB, {rate} per 1,000 finalized "
            f"deploys")
