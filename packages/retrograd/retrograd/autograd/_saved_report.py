"""saved_tensors_report(tensor): what memory the graph behind a tensor keeps
alive through saved tensors (new; no torch equivalent).

Reads each node's generated ``_saved_arrays()`` (released saves are skipped);
nodes without one (AccumulateGrad) contribute no rows; custom Functions list
what they saved with save_for_backward. Arrays
that share memory (views of one buffer, the same array saved by two nodes)
are counted once in the total: byte ranges are merged per owning buffer.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retrograd.core import Tensor

__all__ = ["saved_tensors_report", "SavedTensorsReport", "SavedTensorRow"]


@dataclass(frozen=True)
class SavedTensorRow:
    node: str           # the saving node's name(), e.g. "MulBackward0"
    name: str           # the saved value's name in the node ("self", "other", "result", ...)
    shape: tuple
    dtype: np.dtype
    nbytes: int         # bytes of this view (shared bytes are counted once in total_bytes)
    shared: bool        # its memory was already counted for an earlier row


def _owner_and_range(array):
    """(key of the buffer that owns the memory, (start, end) byte address range)."""
    if isinstance(array, np.ndarray):
        base = array
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        if array.size == 0:
            return id(base), (0, 0)
        lo, hi = np.lib.array_utils.byte_bounds(array)
        return id(base), (lo, hi)
    # CuPy: the device allocation behind the array
    mem = array.data.mem
    start = array.data.ptr
    return ("cupy", id(mem)), (start, start + array.nbytes)


def _merged_length(ranges):
    total, cur_lo, cur_hi = 0, None, None
    for lo, hi in sorted(ranges):
        if cur_hi is None or lo > cur_hi:
            if cur_hi is not None:
                total += cur_hi - cur_lo
            cur_lo, cur_hi = lo, hi
        else:
            cur_hi = max(cur_hi, hi)
    if cur_hi is not None:
        total += cur_hi - cur_lo
    return total


class SavedTensorsReport:
    """Rows (one per saved tensor, graph order from the output) and the bytes
    they keep alive, shared memory counted once."""

    def __init__(self, rows, total_bytes, num_nodes):
        self.rows = rows
        self.total_bytes = total_bytes
        self.num_nodes = num_nodes

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __repr__(self):
        return (f"SavedTensorsReport(rows={len(self.rows)}, total_bytes={self.total_bytes}, "
                f"num_nodes={self.num_nodes})")

    def __str__(self):
        head = ("node", "saved", "shape", "dtype", "bytes")
        body = [(r.node, r.name, str(tuple(r.shape)), str(r.dtype),
                 f"{r.nbytes}{' (shared)' if r.shared else ''}") for r in self.rows]
        widths = [max(len(x) for x in col) for col in zip(head, *body)]
        fmt = "  ".join("{:<%d}" % w for w in widths[:-1]) + "  {:>%d}" % widths[-1]
        lines = [fmt.format(*head), "  ".join("-" * w for w in widths)]
        lines += [fmt.format(*b) for b in body]
        lines.append(f"{len(self.rows)} saved tensors in {self.num_nodes} nodes; "
                     f"{self.total_bytes} bytes kept alive (shared memory counted once)")
        return "\n".join(lines)


def saved_tensors_report(tensor) -> SavedTensorsReport:
    """List every array the graph behind ``tensor`` keeps alive through saved
    tensors: one row per saved tensor (node, name, shape, dtype, bytes), and
    ``total_bytes`` with memory shared between arrays counted once."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"saved_tensors_report(): expected a Tensor, got {type(tensor).__name__}")
    rows: list = []
    ranges: dict = {}
    seen_ranges: list = []
    root = tensor.grad_fn
    visited = set()
    stack = [root] if root is not None else []
    order = []
    while stack:                       # iterative: graphs may be very deep
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        order.append(node)
        for fn, _ in reversed(node.next_functions):
            if fn is not None and id(fn) not in visited:
                stack.append(fn)
    for node in order:
        saved_arrays = getattr(node, "_saved_arrays", None)
        if saved_arrays is None:
            continue
        for name, array in saved_arrays():
            if array is None:
                continue
            key, rng = _owner_and_range(array)
            shared = any(k == key and lo < rng[1] and rng[0] < hi and rng[0] < rng[1]
                         for k, (lo, hi) in seen_ranges)
            seen_ranges.append((key, rng))
            ranges.setdefault(key, []).append(rng)
            rows.append(SavedTensorRow(node.name(), name, tuple(array.shape), array.dtype,
                                       int(array.nbytes), shared))
    total = sum(_merged_length(r) for r in ranges.values())
    return SavedTensorsReport(rows, total, len(order))
