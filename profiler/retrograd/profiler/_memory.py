"""export_memory_timeline (new, absent from torch): the bytes held over time
by the arrays ops allocated while a profile_memory profile recorded, split
into three categories, as a CSV and (with matplotlib) a PNG.

Categories, decided when an array is allocated:
- saved_tensors: outputs of forward ops that recorded a backward node
  (the activations a graph holds for backward, including those its nodes
  saved);
- gradients: arrays allocated while the engine ran a backward node;
- other: everything else (outputs of ops that record no graph, ...).
An array counts from the start of the op that allocated it until it is
freed, or until the profile ended. Arrays created before the profile, or by
code outside retrograd's ops, are not seen.
"""
from __future__ import annotations

import csv
import os

CATEGORIES = ("saved_tensors", "gradients", "other")
COLUMNS = ("time_ns",) + CATEGORIES + ("total",)


def timeline(results) -> list:
    """[(time_ns since the profile started, bytes per category..., total)],
    one row at the start, one per change, one at the end; times never decrease."""
    changes = []
    for a in results.allocations:
        start, end, nbytes, category = a[0], a[1], a[2], a[3]
        changes.append((start, category, nbytes))
        if end < results.end_ns:
            changes.append((end, category, -nbytes))
    changes.sort(key=lambda c: c[0])
    held = dict.fromkeys(CATEGORIES, 0)
    rows = [(0,) + (0,) * len(CATEGORIES) + (0,)]
    for t, category, delta in changes:
        held[category] += delta
        values = tuple(held[c] for c in CATEGORIES)
        rows.append((max(t - results.start_ns, 0),) + values + (sum(values),))
    end = max(results.end_ns - results.start_ns, rows[-1][0])
    rows.append((end,) + rows[-1][1:])
    return rows


def export_memory_timeline(results, path) -> tuple:
    path = os.fspath(path)
    rows = timeline(results)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows)
    written = [path]
    try:
        # The object API, not pyplot: no GUI backend is selected or needed.
        from matplotlib.figure import Figure  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return tuple(written)

    png = os.path.splitext(path)[0] + ".png"
    times_ms = [r[0] / 1e6 for r in rows]
    fig = Figure(figsize=(10, 4))
    ax = fig.subplots()
    ax.stackplot(times_ms, *[[r[1 + i] for r in rows] for i in range(len(CATEGORIES))],
                 labels=CATEGORIES, step="post")
    ax.set_xlabel("time since the profile started (ms)")
    ax.set_ylabel("bytes held")
    ax.set_title("retrograd memory timeline")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(png)
    written.append(png)
    return tuple(written)
