"""Empty-tensor samples of the op registry: every sample of
op_samples.OP_DB with an array argument gives up to two variants with a
zero-size dimension, its first axis or its last axis emptied in every array
argument that shares that axis (so broadcasting partners stay compatible).
Shape parameters are left as they are: where torch then rejects the call,
retrograd must raise the same type of error (tests/oracle/test_oracle_empty.py).
"""
from __future__ import annotations

import numpy as np


def _emptied(sample, last):
    arrays = [a for a in sample.args if isinstance(a, np.ndarray) and a.ndim >= 1]
    if not arrays:
        return None
    first = arrays[0]
    n = first.shape[-1] if last else first.shape[0]
    if n == 0:
        return None
    args = []
    for a in sample.args:
        if isinstance(a, np.ndarray) and a.ndim >= 1:
            if last and a.shape[-1] == n:
                a = np.ascontiguousarray(a[..., :0])
            elif not last and a.ndim == first.ndim and a.shape[0] == n:
                a = np.ascontiguousarray(a[:0])
        args.append(a)
    return sample.with_args(args)


# ops whose samples carry precomputed index parameters for the original
# shapes (max/min's _take_dim indices): emptying the array alone is no case
SKIP = {"_take_dim": "its indices parameter is computed from the un-emptied input"}


def empty_samples(op):
    """The empty variants of `op`'s samples (deduplicated by argument shapes)."""
    if op.name in SKIP:
        return []
    out, seen = [], set()
    for s in op.samples():
        for last in (False, True):
            e = _emptied(s, last)
            if e is None:
                continue
            key = (repr(e), tuple(sorted(e.kwargs.items(), key=lambda kv: kv[0])).__repr__())
            if key in seen:
                continue
            seen.add(key)
            e.desc = f"{s.desc or 'sample'}_empty_{'last' if last else 'first'}"
            out.append(e)
    return out


def all_empty_samples(ops):
    import pytest
    out = []
    for op in ops:
        for i, s in enumerate(empty_samples(op)):
            out.append(pytest.param(op, s, id=f"{op.name}-{i}-{s.desc}"))
    return out
