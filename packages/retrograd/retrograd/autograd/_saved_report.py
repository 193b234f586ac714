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
    """One saved tensor of a :func:`saved_tensors_report`.

    Parameters
    ----------
    node : str
        The saving node's ``name()``, e.g. ``"MulBackward0"``.
    name : str
        The saved value's name in the node (``"self"``, ``"other"``,
        ``"result"``, ...).
    shape : tuple
        The saved array's shape.
    dtype : numpy.dtype
        Its dtype.
    nbytes : int
        The bytes of this view.
    shared : bool
        Its memory was already counted for an earlier row.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import saved_tensors_report
    >>> x = rg.ones(3, requires_grad=True)
    >>> saved_tensors_report(x.exp().sum()).rows[0]
    SavedTensorRow(node='ExpBackward0', name='result', shape=(3,), dtype=dtype('float64'), nbytes=24, shared=False)
    """

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
    """What :func:`saved_tensors_report` returns.

    Iterating gives the rows (:class:`SavedTensorRow`, one per saved tensor,
    in graph order from the output); ``str()`` formats them as a table.

    Parameters
    ----------
    rows : list of SavedTensorRow
        One per saved tensor.
    total_bytes : int
        The bytes the rows keep alive, memory shared between them counted
        once.
    num_nodes : int
        The number of nodes of the graph walked.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import saved_tensors_report
    >>> x = rg.ones(3, requires_grad=True)
    >>> report = saved_tensors_report((x * x).sum())
    >>> report
    SavedTensorsReport(rows=2, total_bytes=24, num_nodes=3)
    >>> [(row.name, row.shared) for row in report]
    [('other', False), ('self', True)]
    """

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
    """List every array the graph behind ``tensor`` keeps alive through saved tensors.

    One row per saved tensor (node, name, shape, dtype, bytes), and
    ``total_bytes`` with memory shared between arrays (views of one buffer,
    one array saved by two nodes) counted once: what freeing the graph
    would give back. Saves already released (by a backward without
    ``retain_graph``) are skipped; custom Functions list what they saved
    with ``save_for_backward``. New in retrograd: torch has no equivalent.

    Parameters
    ----------
    tensor : Tensor
        The output whose graph to walk (a tensor without ``grad_fn`` gives an
        empty report).

    Returns
    -------
    SavedTensorsReport
        Its rows, ``total_bytes`` and ``num_nodes``; print it for a table.

    Raises
    ------
    TypeError
        When ``tensor`` is not a Tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import saved_tensors_report
    >>> x = rg.ones(3, 4, requires_grad=True)
    >>> w = rg.ones(4, 2, requires_grad=True)
    >>> loss = (x @ w).tanh().sum()
    >>> print(saved_tensors_report(loss))
    node             saved   shape   dtype    bytes
    ---------------  ------  ------  -------  -----
    TanhBackward0    result  (3, 2)  float32     24
    MatmulBackward0  other   (4, 2)  float32     32
    MatmulBackward0  self    (3, 4)  float32     48
    3 saved tensors in 5 nodes; 104 bytes kept alive (shared memory counted once)
    >>> loss.backward()
    >>> saved_tensors_report(loss).total_bytes     # backward released them
    0
    """
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
