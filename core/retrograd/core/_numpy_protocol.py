"""NumPy's function protocol for tensors: ``np.f(tensor, ...)`` -> a retrograd op.

``Tensor.__array_function__`` calls :func:`dispatch`. Each entry of ``TABLE``
maps a NumPy function name to a function taking NumPy's arguments (``axis=``,
``keepdims=``, ...) and computing the same value with retrograd ops, so the
autograd graph is recorded. Metadata queries (``METADATA``: np.shape,
np.ndim, ...) read only shapes and dtypes, and comparisons and index queries
(``NONDIFFERENTIABLE``: np.allclose, np.argmax, ...) give results without a
gradient: both run on the arrays. Any other
NumPy function raises TypeError naming it, whether or not a tensor needs
grad (the graph is never dropped silently, and a result never depends
on whether grad happened to be on): convert with np.asarray(t)
first, or use the retrograd op.
"""
from __future__ import annotations

import numpy as np

import retrograd.core as _rg
from retrograd.core import Tensor


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"numpy.{name}: out= is not supported on retrograd tensors; assign the result")


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _reduction(rg_name, np_name):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        _no_out(np_name, out)
        if kw.get("where", True) is not True or kw.get("initial", None) is not None:
            raise TypeError(f"numpy.{np_name}: where=/initial= are not supported on retrograd tensors")
        op = _op(rg_name, np_name)
        if dtype is not None:
            return op(a, dim=_axis(axis), keepdim=bool(keepdims), dtype=dtype)
        return op(a, dim=_axis(axis), keepdim=bool(keepdims))
    return fn


def _minmax(rg_name, np_name):
    def fn(a, axis=None, out=None, keepdims=False, **kw):
        _no_out(np_name, out)
        if kw.get("initial", None) is not None or kw.get("where", True) is not True:
            raise TypeError(f"numpy.{np_name}: where=/initial= are not supported on retrograd tensors")
        op = _op(rg_name, np_name)
        if axis is not None:
            return op(a, dim=_axis(axis), keepdim=bool(keepdims))
        res = op(a)
        # NumPy's keepdims over every axis keeps each as size 1
        return _rg.reshape(res, (1,) * _tensor(a).ndim) if keepdims else res
    return fn


def _op(rg_name, np_name):
    op = getattr(_rg, rg_name, None)
    if op is None:
        raise TypeError(f"numpy.{np_name} has no retrograd counterpart ({rg_name}) in this build; "
                        "use a retrograd op, or np.asarray(t) / t.detach() for a plain array")
    return op


def _tensor(x):
    return x if isinstance(x, Tensor) else _rg.as_tensor(np.asarray(x))


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    _no_out("concatenate", out)
    arrays = list(arrays)
    if axis is None:
        arrays = [_rg.reshape(_tensor(a), (-1,)) for a in arrays]
        axis = 0
    res = _rg.cat(arrays, axis)
    return res if dtype is None else res.to(np.dtype(dtype))


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    _no_out("stack", out)
    res = _rg.stack(list(arrays), axis)
    return res if dtype is None else res.to(np.dtype(dtype))


def _atleast(ndim):
    # NumPy's atleast_1d/2d/3d: a 0-d x is (1,)*ndim; a 1-d (n,) is (1, n) in
    # 2-d and (1, n, 1) in 3-d; a 2-d (m, n) is (m, n, 1) in 3-d
    def one(x):
        t = _tensor(x)
        if t.ndim >= ndim:
            return t
        if t.ndim == 0:
            return _rg.reshape(t, (1,) * ndim)
        if t.ndim == 1:
            return _rg.reshape(t, (1, t.shape[0]) + (1,) * (ndim - 2))
        return _rg.reshape(t, tuple(t.shape) + (1,))

    def fn(*arys):
        res = [one(a) for a in arys]
        return res[0] if len(res) == 1 else tuple(res)
    return fn


def _hstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [_atleast(1)(a) for a in tup]
    res = _rg.cat(arrays, 0 if arrays and arrays[0].ndim == 1 else 1)
    return res if dtype is None else res.to(np.dtype(dtype))


def _vstack(tup, *, dtype=None, casting="same_kind"):
    res = _rg.cat([_atleast(2)(a) for a in tup], 0)
    return res if dtype is None else res.to(np.dtype(dtype))


def _dstack(tup):
    return _rg.cat([_atleast(3)(a) for a in tup], 2)


def _column_stack(tup):
    cols = [_rg.reshape(t, (-1, 1)) if t.ndim < 2 else t for t in map(_tensor, tup)]
    return _rg.cat(cols, 1)


def _where(condition, x=None, y=None):
    if x is None and y is None:
        return np.where(np.asarray(condition))          # indices: no gradient
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    c = condition.detach() if isinstance(condition, Tensor) else condition
    return _rg.where(c, x, y)


def _reshape(a, *args, **kwargs):
    # NumPy >= 2.1 spells it shape=, older newshape=; order='C' only.
    shape = args[0] if args else kwargs.pop("shape", kwargs.pop("newshape", None))
    if kwargs.get("order", "C") != "C" or (len(args) > 1 and args[1] != "C"):
        raise TypeError("numpy.reshape: only order='C' is supported on retrograd tensors")
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    return _rg.reshape(_tensor(a), tuple(shape))


def _transpose(a, axes=None):
    t = _tensor(a)
    if axes is None:
        axes = tuple(range(t.ndim))[::-1]
    return _rg.permute(t, tuple(axes))


def _squeeze(a, axis=None):
    t = _tensor(a)
    if axis is not None:
        for d in (axis if isinstance(axis, (tuple, list)) else (axis,)):
            if t.shape[d] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return _rg.squeeze(t, axis)


def _expand_dims(a, axis):
    t = _tensor(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = t.ndim + len(axes)
    shape = list(t.shape)
    for d in sorted(d % nd for d in axes):
        shape.insert(d, 1)
    return _rg.reshape(t, tuple(shape))


def _clip(a, a_min=np._NoValue if hasattr(np, "_NoValue") else None, a_max=None, out=None, **kw):
    _no_out("clip", out)
    lo = kw.pop("min", None) if a_min is None or a_min is getattr(np, "_NoValue", None) else a_min
    hi = kw.pop("max", None) if a_max is None else a_max
    t = _tensor(a)
    # where-based: the gradient passes where lo <= a <= hi (torch's clamp rule)
    if lo is not None:
        lo_d = lo.detach() if isinstance(lo, Tensor) else lo
        t = _rg.where(_rg.lt(t.detach(), lo_d), lo, t)
    if hi is not None:
        hi_d = hi.detach() if isinstance(hi, Tensor) else hi
        t = _rg.where(_rg.gt(t.detach(), hi_d), hi, t)
    return t


def _nd(x):
    # np.ndim on a tensor would come back through __array_function__
    return x.ndim if isinstance(x, Tensor) else np.ndim(x)


def _dot(a, b, out=None):
    _no_out("dot", out)
    if _nd(a) == 0 or _nd(b) == 0:
        return _rg.mul(a, b)
    if _nd(b) > 2:
        raise TypeError("numpy.dot with an N-D second argument (N > 2) is not supported on "
                        "retrograd tensors; use rg.tensordot or rg.matmul")
    return _rg.matmul(a, b)


def _matmul(a, b, out=None, **kw):
    _no_out("matmul", out)
    return _rg.matmul(a, b)


def _swapaxes(a, axis1, axis2):
    return _rg.transpose(_tensor(a), axis1, axis2)


def _moveaxis(a, source, destination):
    return _rg.movedim(_tensor(a), source, destination)


def _flip(m, axis=None):
    t = _tensor(m)
    return _rg.flip(t, tuple(range(t.ndim)) if axis is None else axis)


def _roll(a, shift, axis=None):
    return _rg.roll(_tensor(a), shift, axis)


def _tile(a, reps):
    return _rg.tile(_tensor(a), reps if isinstance(reps, (tuple, list)) else (reps,))


def _take_along_axis(arr, indices, axis=-1):
    return _rg.take_along_dim(_tensor(arr), indices, axis)


def _broadcast_to(array, shape, subok=False):
    return _rg.broadcast_to(_tensor(array), tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))


def _diagonal(a, offset=0, axis1=0, axis2=1):
    return _rg.diagonal(_tensor(a), offset, axis1, axis2)


def _tril(m, k=0):
    return _rg.tril(_tensor(m), k)


def _triu(m, k=0):
    return _rg.triu(_tensor(m), k)


def _ravel(a, order="C"):
    return _rg.reshape(_tensor(a), (-1,))


def _split_like(name):
    def fn(ary, indices_or_sections, axis=0):
        t = _tensor(ary)
        n = t.shape[axis]
        if isinstance(indices_or_sections, (int, np.integer)):
            k = int(indices_or_sections)
            if name == "split" and n % k:
                raise ValueError("array split does not result in an equal division")
            base, extra = divmod(n, k)
            sizes = [base + 1] * extra + [base] * (k - extra)
        else:
            bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
            sizes = [max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]
        return list(_rg.split(t, sizes, axis))
    return fn


def _simple(rg_name):
    def fn(*args, **kwargs):
        return _op(rg_name, rg_name)(*args, **kwargs)
    return fn


TABLE = {
    "sum": _reduction("sum", "sum"),
    "mean": _reduction("mean", "mean"),
    "prod": _reduction("prod", "prod"),
    "max": _minmax("amax", "max"),
    "amax": _minmax("amax", "amax"),
    "min": _minmax("amin", "min"),
    "amin": _minmax("amin", "amin"),
    "matmul": _matmul,           # np.matmul is a ufunc (NumPy >= 2): reached only via np.dot paths
    "dot": _dot,
    "concatenate": _concatenate,
    "stack": _stack,
    "hstack": _hstack,
    "vstack": _vstack,
    "dstack": _dstack,
    "column_stack": _column_stack,
    "atleast_1d": _atleast(1),
    "atleast_2d": _atleast(2),
    "atleast_3d": _atleast(3),
    "where": _where,
    "reshape": _reshape,
    "ravel": _ravel,
    "transpose": _transpose,
    "swapaxes": _swapaxes,
    "moveaxis": _moveaxis,
    "squeeze": _squeeze,
    "expand_dims": _expand_dims,
    "clip": _clip,
    "flip": _flip,
    "roll": _roll,
    "tile": _tile,
    "take_along_axis": _take_along_axis,
    "broadcast_to": _broadcast_to,
    "diagonal": _diagonal,
    "tril": _tril,
    "triu": _triu,
    "split": _split_like("split"),
    "array_split": _split_like("array_split"),
}


# Functions that read only shapes, dtypes or memory layout, never the
# values: no graph can be dropped, so they run on the arrays (their results
# are plain Python / NumPy values, as NumPy's).
METADATA = frozenset({
    "shape", "ndim", "size", "result_type", "iscomplexobj", "isrealobj", "can_cast",
    "may_share_memory", "shares_memory", "broadcast_shapes",
})

# Comparisons and index queries: bool or integer results, which carry no
# gradient in torch either (torch.equal, allclose, isclose, argmax, nonzero):
# they are their own counterparts and run on the arrays.
NONDIFFERENTIABLE = frozenset({
    "array_equal", "array_equiv", "allclose", "isclose", "count_nonzero", "nonzero", "flatnonzero",
    "argwhere", "argmax", "argmin", "argsort", "searchsorted", "any", "all", "isin",
})


def dispatch(func, args, kwargs, needs_grad, arrays_of):
    """What ``np.<func>(*args, **kwargs)`` does when a tensor is among the
    arguments (called by Tensor.__array_function__). ``needs_grad`` only
    shapes the error message: a function without a counterpart always raises."""
    name = getattr(func, "__name__", str(func))
    module = getattr(func, "__module__", None) or "numpy"
    # Only NumPy's top-level functions: numpy.linalg.diagonal, say, shares a
    # name with numpy.diagonal but not its arguments.
    if module == "numpy":
        impl = TABLE.get(name)
        if impl is not None:
            return impl(*args, **kwargs)
        if name in METADATA or name in NONDIFFERENTIABLE:
            return func(*arrays_of(args), **arrays_of(kwargs))
    why = " (a tensor here requires grad: its autograd graph would be dropped)" if needs_grad else ""
    raise TypeError(
        f"{module}.{name} has no retrograd counterpart{why}. Call it on plain arrays instead: "
        f"{module}.{name}(np.asarray(t), ...) or t.detach().numpy(); or use the retrograd op "
        "(rg.<op> / a Tensor method) to keep the graph")
