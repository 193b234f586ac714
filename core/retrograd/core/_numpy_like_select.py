"""torch's order statistics (median, nanmedian, kthvalue, quantile,
nanquantile), unique_consecutive, and the functional writes (scatter,
index_put, put, masked_scatter, the diagonal/select/slice scatters), written
over the table's ops: the order statistics pick from sort's values with
gather (the gradient goes to the picked elements), the writes select with
where or write into a view of a copy (CopySlices records the gradients)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core import _creation
from retrograd.core._dtypes import _is_inexact_dtype
from retrograd.core.abi import Tensor, composite_op

__all__ = [
    "median", "nanmedian", "kthvalue", "quantile", "nanquantile", "unique", "unique_consecutive", "scatter", "index_put",
    "put", "masked_scatter", "diagonal_scatter", "select_scatter", "slice_scatter", "cholesky_solve",
    "cholesky_inverse", "renorm", "sgn", "randint_like", "asarray", "frombuffer",
]


def _t(x, fn: str, arg: str = "input") -> Tensor:
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _const(like: Tensor, arr) -> Tensor:
    return _creation._make(arr, like.device, False)


def _doc(summary: str, params: str, returns: str, example: str, body: str = "") -> str:
    body = f"\n\n    {body}" if body else ""
    return (f"{summary}{body}\n\n    Parameters\n    ----------\n{params}\n\n    Returns\n    -------\n"
            f"    {returns}\n\n    Examples\n    --------\n    >>> import retrograd as rg\n    {example}\n    ")


_IN = "    input : Tensor\n        The input."
_DIM = ("\n    dim : int, optional\n        The dimension (default: the flattened input).\n"
        "    keepdim : bool, optional\n        Keep the reduced dimension with size 1.")

median_result = namedtuple("median", ["values", "indices"])
nanmedian_result = namedtuple("nanmedian", ["values", "indices"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])


def _sorted(x: Tensor, dim):
    from retrograd.core._composites_reductions_linalg import sort
    if dim is None:
        x, dim = _abi.reshape(x, (-1,)), 0
    dim = dim % max(x.ndim, 1)
    if x.ndim == 0:
        x, dim = _abi.reshape(x, (1,)), 0
    s = sort(x, dim)
    return x, dim, s.values, s.indices


def _pick(values: Tensor, indices: Tensor, dim: int, k, keepdim: bool):
    k = _const(values, np.asarray(k, dtype=np.int64))
    v = _abi.gather(values, dim, k)
    i = _abi.gather(indices, dim, k)
    if not keepdim:
        v, i = _abi.squeeze(v, dim), _abi.squeeze(i, dim)
    return v, i


def _median(name: str, result, ignore_nan: bool):
    @composite_op(name)
    def fn(input, dim=None, keepdim=False):
        x0 = _t(input, name)
        x, d, vals, idx = _sorted(x0, dim)
        n = x.shape[d]
        if n == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        nans = np.isnan(np.asarray(x._array)).sum(axis=d, keepdims=True) if _is_inexact_dtype(x._array.dtype) \
            else np.zeros([1 if j == d else s for j, s in enumerate(x.shape)], dtype=np.int64)
        if ignore_nan:
            k = np.maximum((n - nans - 1) // 2, 0)
        else:
            k = np.where(nans > 0, n - 1, (n - 1) // 2)   # nan sorts last: any nan gives nan
        v, i = _pick(vals, idx, d, k, keepdim)
        if dim is None:
            return _abi.reshape(v, ())
        return result(v, i)
    fn.__name__ = fn.__qualname__ = name
    what = "ignoring ``nan``" if ignore_nan else "``nan`` if the values hold one"
    fn.__doc__ = _doc(f"The median ({what}): the lower of the two middle values for an even count.",
                      _IN + _DIM, "Tensor, or (values, indices) with a ``dim``",
                      f">>> rg.{name}(rg.tensor([3.0, 1.0, 4.0, 2.0]))\n    tensor(2.)",
                      "The gradient goes to the element picked.")
    return fn


median = _median("median", median_result, False)
nanmedian = _median("nanmedian", nanmedian_result, True)


@composite_op("kthvalue")
def kthvalue(input, k, dim=-1, keepdim=False):
    x0 = _t(input, "kthvalue")
    x, d, vals, idx = _sorted(x0, dim)
    if not 1 <= k <= x.shape[d]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    shape = [1 if j == d else s for j, s in enumerate(x.shape)]
    v, i = _pick(vals, idx, d, np.full(shape, k - 1), keepdim)
    if x0.ndim == 0:
        v, i = _abi.reshape(v, ()), _abi.reshape(i, ())
    return kthvalue_result(v, i)


kthvalue.__doc__ = _doc("The ``k``-th smallest value along ``dim`` and its index.",
                        _IN + "\n    k : int\n        Which one (1 is the smallest).\n    dim : int, optional\n"
                        "        The dimension (default -1).\n    keepdim : bool, optional\n"
                        "        Keep the dimension with size 1.", "(values, indices)",
                        ">>> rg.kthvalue(rg.tensor([3.0, 1.0, 4.0]), 2)\n"
                        "    kthvalue(values=tensor(3.), indices=tensor(0))")

_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, ignore_nan: bool):
    @composite_op(name)
    def fn(input, q, dim=None, keepdim=False, *, interpolation="linear"):
        x0 = _t(input, name)
        if interpolation not in _INTERP:
            raise ValueError(f"quantile() interpolation must be one of {', '.join(_INTERP)}. Got {interpolation}")
        qa = np.asarray(q._array if isinstance(q, Tensor) else q, dtype=np.float64)
        if qa.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if ((qa < 0) | (qa > 1)).any():
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        x, d, vals, idx = _sorted(x0, dim)
        n = x.shape[d]
        if n == 0:
            raise RuntimeError(f"{name}() input tensor must be non-empty")
        nans = np.isnan(np.asarray(x._array)).sum(axis=d, keepdims=True)
        count = (n - nans) if ignore_nan else np.full(nans.shape, n)
        outs = []
        for qv in np.atleast_1d(qa):
            pos = qv * np.maximum(count - 1, 0)
            lo = np.floor(pos).astype(np.int64)
            hi = np.minimum(lo + 1, np.maximum(count - 1, 0))
            frac = pos - lo
            if interpolation == "lower":
                hi, frac = lo, frac * 0
            elif interpolation == "higher":
                lo = np.ceil(pos).astype(np.int64)
                hi, frac = lo, frac * 0
            elif interpolation == "nearest":
                lo = np.round(pos).astype(np.int64)     # round half to even, as torch's
                hi, frac = lo, frac * 0
            elif interpolation == "midpoint":
                frac = np.where(hi > lo, 0.5, 0.0)
            lo = np.minimum(np.maximum(lo, 0), n - 1)
            hi = np.minimum(np.maximum(hi, 0), n - 1)
            vlo, _ = _pick(vals, idx, d, lo, True)
            vhi, _ = _pick(vals, idx, d, hi, True)
            out = vlo + (vhi - vlo) * _const(vlo, frac.astype(vlo._array.dtype))
            bad = (count == 0) if ignore_nan else (nans > 0)
            if bad.any():
                out = _abi.where(_const(out, bad), float("nan"), out)
            outs.append(out if keepdim else _abi.squeeze(out, d))
        if dim is None and not keepdim:
            outs = [_abi.reshape(o, ()) for o in outs]
        elif dim is None and keepdim:
            outs = [_abi.reshape(o, (1,) * x0.ndim) for o in outs]
        return outs[0] if qa.ndim == 0 else _abi.stack(outs, 0)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(f"The ``q``-th quantiles{' ignoring nan' if ignore_nan else ''} along ``dim`` "
                      "(of the flattened input without one).",
                      _IN + "\n    q : float or Tensor\n        Quantiles in [0, 1]; a 1-d tensor adds a leading "
                      "dimension." + _DIM + "\n    interpolation : str, optional\n        'linear', 'lower', "
                      "'higher', 'midpoint' or 'nearest'.", "Tensor",
                      f">>> rg.{name}(rg.tensor([1.0, 2.0, 3.0, 4.0]), 0.5)\n    tensor(2.5)")
    return fn


quantile = _quantile("quantile", False)
nanquantile = _quantile("nanquantile", True)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse each run of equal consecutive elements (or slices along ``dim``) to one.

    Parameters
    ----------
    input : Tensor
        The input.
    return_inverse : bool, optional
        Also return, for each element, the index of its run.
    return_counts : bool, optional
        Also return the length of each run.
    dim : int, optional
        Compare slices along this dimension (default: the flattened input).

    Returns
    -------
    Tensor or tuple
        The collapsed values, then the inverse and the counts if asked for.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.unique_consecutive(rg.tensor([1, 1, 2, 2, 3, 1]), return_counts=True)
    (tensor([1, 2, 3, 1]), tensor([2, 2, 1, 1]))
    """
    x = _t(input, "unique_consecutive")
    a = np.asarray(x._array)
    if dim is None:
        flat = a.reshape(-1)
        change = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, bool)
        vals = flat[change]
        run = np.cumsum(change) - 1
        inverse = run.reshape(a.shape)
    else:
        d = dim % max(a.ndim, 1)
        moved = np.moveaxis(a, d, 0).reshape(a.shape[d], -1)
        change = np.concatenate([[True], (moved[1:] != moved[:-1]).any(axis=1)]) if len(moved) else \
            np.zeros(0, bool)
        vals = np.moveaxis(np.moveaxis(a, d, 0)[change], 0, d)
        inverse = np.cumsum(change) - 1
    counts = np.diff(np.concatenate([np.flatnonzero(change), [change.size]])) if change.size else np.zeros(0)
    out = [_const(x, np.ascontiguousarray(vals))]
    if return_inverse:
        out.append(_const(x, inverse.astype(np.int64)))
    if return_counts:
        out.append(_const(x, counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (or slices along ``dim``), sorted.

    As torch's, the result carries no gradient.

    Parameters
    ----------
    input : Tensor
        The input.
    sorted : bool, optional
        Accepted for torch's signature: the values always come sorted (as torch's CPU kernel returns them).
    return_inverse : bool, optional
        Also return, for each element, the index of its value in the result.
    return_counts : bool, optional
        Also return how often each value occurs.
    dim : int, optional
        Compare slices along this dimension (default: the flattened input).

    Returns
    -------
    Tensor or tuple
        The distinct values, then the inverse and the counts if asked for.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.unique(rg.tensor([3, 1, 3, 2]), return_inverse=True)
    (tensor([1, 2, 3]), tensor([2, 0, 2, 1]))
    """
    x = _t(input, "unique")
    a = np.asarray(x._array)
    if dim is None:
        vals, inverse, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(a.shape)
    else:
        if not -a.ndim <= dim < max(a.ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-a.ndim}, {a.ndim - 1}], but got "
                             f"{dim})")
        vals, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
        inverse = inverse.reshape(-1)
    out = [_const(x, np.ascontiguousarray(vals))]
    if return_inverse:
        out.append(_const(x, inverse.astype(np.int64)))
    if return_counts:
        out.append(_const(x, counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def _flat_write(x: Tensor, flat_index: np.ndarray, values: Tensor, accumulate: bool) -> Tensor:
    """`x` with the flattened positions `flat_index` set to (or, accumulating,
    added) `values` (one per position, any shape)."""
    flat = _abi.reshape(x, (-1,))
    v = _abi.reshape(values, (-1,)) if values.ndim else _abi.expand(_abi.reshape(values, (1,)), (flat_index.size,))
    if v.shape[0] != flat_index.size:
        v = _abi.reshape(_abi.expand(values, tuple(flat_index.shape)), (-1,))
    fi = flat_index.reshape(-1)
    if not accumulate:
        # the last write wins (NumPy's order): earlier duplicates contribute nothing
        _, last = np.unique(fi[::-1], return_index=True)
        winner = np.zeros(fi.size, dtype=bool)
        winner[fi.size - 1 - last] = True
        keep = np.ones(flat.shape[0], dtype=bool)
        keep[fi] = False
        flat = _abi.where(_const(x, keep), flat, 0)
        # the earlier duplicates write 0, yet keep torch's gradient (grad at their position): v plus
        # a constant that cancels it
        v = v + _abi.where(_const(x, winner), 0.0, -v).detach()
    out = _abi.scatter_add(flat, 0, _const(x, fi.astype(np.int64)), v.to(x.dtype) if v.dtype != x.dtype else v)
    return _abi.reshape(out, tuple(x.shape))


@composite_op("scatter")
def scatter(input, dim, index, src=None, value=None, *, reduce=None) -> Tensor:
    x = _t(input, "scatter")
    i = _t(index, "scatter", "index")
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is not supported; use rg.scatter_add (reduce='add') or "
                                  "write the product by hand")
    if src is None and value is None:
        raise TypeError("scatter(): expected a 'src' tensor or a 'value'")
    s = src if src is not None else value
    ia = np.asarray(i._array)
    d = dim % max(x.ndim, 1)
    # the flat target of each index element: its own coordinates, index's value along dim
    coords = list(np.indices(ia.shape))
    coords[d] = ia
    flat_index = np.ravel_multi_index(tuple(coords), tuple(x.shape)) if x.ndim else np.zeros(ia.shape, np.int64)
    if isinstance(s, Tensor):
        sl = tuple(slice(0, n) for n in ia.shape)
        vals = _abi.getitem(s, sl) if s.ndim else s
    else:
        vals = _creation.full(tuple(ia.shape), s, dtype=x.dtype, device=x.device)
    return _flat_write(x, flat_index, vals, False)


scatter.__doc__ = _doc("``input`` with the values of ``src`` (or ``value``) written at ``index`` along ``dim``.",
                       _IN + "\n    dim : int\n        The dimension ``index`` indexes.\n    index : Tensor\n"
                       "        int64 positions, shaped like the part of ``src`` to write.\n    src : Tensor, optional\n"
                       "        The values.\n    value : number, optional\n        One value for every position.",
                       "Tensor", ">>> rg.scatter(rg.zeros(3), 0, rg.tensor([2, 0]), rg.tensor([5.0, 7.0]))\n"
                       "    tensor([7., 0., 5.])",
                       "Where ``index`` repeats a position, the last write wins (torch leaves that undefined).")


@composite_op("index_put")
def index_put(input, indices, values, accumulate=False) -> Tensor:
    x = _t(input, "index_put")
    pos = np.arange(x._array.size).reshape(x.shape)
    idx = tuple(np.asarray(i._array) if isinstance(i, Tensor) else i for i in indices)
    flat_index = np.asarray(pos[idx])
    v = values if isinstance(values, Tensor) else _creation.tensor(values, dtype=x.dtype, device=x.device)
    return _flat_write(x, flat_index, v, accumulate)


@composite_op("put")
def put(input, index, source, accumulate=False) -> Tensor:
    x = _t(input, "put")
    fi = np.asarray(_t(index, "put", "index")._array) % max(x._array.size, 1)
    return _flat_write(x, fi, _t(source, "put", "source"), accumulate)


@composite_op("masked_scatter")
def masked_scatter(input, mask, source) -> Tensor:
    x = _t(input, "masked_scatter")
    m = np.broadcast_to(np.asarray(_t(mask, "masked_scatter", "mask")._array), tuple(x.shape))
    fi = np.flatnonzero(m)
    src = _t(source, "masked_scatter", "source")
    if src._array.size < fi.size:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask")
    return _flat_write(x, fi, _abi.narrow(_abi.reshape(src, (-1,)), 0, 0, fi.size), False)


_WRITE = _IN + "\n    indices : tuple of Tensor\n        The index of each dimension.\n    values : Tensor\n" \
    "        The values.\n    accumulate : bool, optional\n        Add instead of writing."
index_put.__doc__ = _doc("``input`` with ``input[indices] = values`` (or ``+=``), out of place.", _WRITE, "Tensor",
                         ">>> rg.index_put(rg.zeros(3), (rg.tensor([0, 0]),), rg.tensor([1.0, 2.0]), True)\n"
                         "    tensor([3., 0., 0.])")
put.__doc__ = _doc("``input`` with the flattened positions ``index`` set to ``source`` (or added).",
                   _IN + "\n    index : Tensor\n        Flat positions.\n    source : Tensor\n        The values.\n"
                   "    accumulate : bool, optional\n        Add instead of writing.", "Tensor",
                   ">>> rg.put(rg.zeros(2, 2), rg.tensor([3]), rg.tensor([9.0]))\n    tensor([[0., 0.],\n"
                   "            [0., 9.]])")
masked_scatter.__doc__ = _doc("``input`` with the positions where ``mask`` is True filled from ``source``, in order.",
                              _IN + "\n    mask : Tensor\n        A bool mask broadcast to ``input``.\n"
                              "    source : Tensor\n        The values, taken in order.", "Tensor",
                              ">>> rg.masked_scatter(rg.zeros(3), rg.tensor([True, False, True]), "
                              "rg.tensor([1.0, 2.0]))\n    tensor([1., 0., 2.])")


def _view_scatter(name: str, view, summary: str, params: str, example: str):
    @composite_op(name)
    def fn(input, src, *args, **kwargs):
        x = _t(input, name)
        out = x.clone()
        view(out, *args, **kwargs).copy_(_t(src, name, "src"))
        return out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(summary, _IN + "\n    src : Tensor\n        What to write, shaped like the view.\n" + params,
                      "Tensor", example, "Out of place: a copy of ``input`` is written; the gradient of the "
                      "overwritten part goes to ``src``.")
    return fn


diagonal_scatter = _view_scatter(
    "diagonal_scatter", lambda t, offset=0, dim1=0, dim2=1: _abi.diagonal(t, offset, dim1, dim2),
    "``input`` with its diagonal (``offset``, ``dim1``, ``dim2``) replaced by ``src``.",
    "    offset, dim1, dim2 : int, optional\n        The diagonal, as :func:`retrograd.diagonal`.",
    ">>> rg.diagonal_scatter(rg.zeros(2, 2), rg.tensor([1.0, 2.0]))\n    tensor([[1., 0.],\n            [0., 2.]])")
select_scatter = _view_scatter(
    "select_scatter", lambda t, dim, index: _abi.select(t, dim, index),
    "``input`` with the slice ``index`` of dimension ``dim`` replaced by ``src``.",
    "    dim, index : int\n        The slice, as :func:`retrograd.select`.",
    ">>> rg.select_scatter(rg.zeros(2, 2), rg.tensor([1.0, 2.0]), 0, 1)\n    tensor([[0., 0.],\n            [1., 2.]])")
slice_scatter = _view_scatter(
    "slice_scatter", lambda t, dim=0, start=None, end=None, step=1: _abi.getitem(
        t, (slice(None),) * (dim % max(t.ndim, 1)) + (slice(start, end, step),)),
    "``input`` with the slice ``start:end:step`` of dimension ``dim`` replaced by ``src``.",
    "    dim : int, optional\n        The dimension (default 0).\n    start, end, step : int, optional\n"
    "        The slice.",
    ">>> rg.slice_scatter(rg.zeros(4), rg.tensor([1.0, 2.0]), start=1, end=3)\n    tensor([0., 1., 2., 0.])")


@composite_op("cholesky_solve")
def cholesky_solve(input, input2, upper=False) -> Tensor:
    b, u = _t(input, "cholesky_solve"), _t(input2, "cholesky_solve", "input2")
    from retrograd.core import linalg
    a = _abi.matmul(u.mT, u) if upper else _abi.matmul(u, u.mT)
    return linalg.solve(a, b)


@composite_op("cholesky_inverse")
def cholesky_inverse(input, upper=False) -> Tensor:
    u = _t(input, "cholesky_inverse")
    from retrograd.core import linalg
    return linalg.inv(_abi.matmul(u.mT, u) if upper else _abi.matmul(u, u.mT))


cholesky_solve.__doc__ = _doc("Solve ``A X = B`` given the Cholesky factor of ``A``.",
                              "    input : Tensor\n        ``B``.\n    input2 : Tensor\n        The factor (lower, "
                              "or upper with ``upper=True``).\n    upper : bool, optional\n        Which factor.",
                              "Tensor", ">>> rg.cholesky_solve(rg.tensor([[2.0], [4.0]]), rg.eye(2) * 2)\n"
                              "    tensor([[0.5],\n            [1. ]])")
cholesky_inverse.__doc__ = _doc("The inverse of ``A`` given its Cholesky factor.",
                                "    input : Tensor\n        The factor.\n    upper : bool, optional\n        Which "
                                "factor.", "Tensor", ">>> rg.cholesky_inverse(rg.tensor([[2.0, 0.0], [0.0, 2.0]]))\n"
                                "    tensor([[0.25, 0.  ],\n            [0.  , 0.25]])")


@composite_op("renorm")
def renorm(input, p, dim, maxnorm) -> Tensor:
    x = _t(input, "renorm")
    d = dim % max(x.ndim, 1)
    others = tuple(j for j in range(x.ndim) if j != d)
    norms = _abi.norm(x, p, others, True) if others else _abi.abs(x)
    # torch's factor: maxnorm / (norm + 1e-7) where the norm exceeds maxnorm (differentiated too)
    factor = _abi.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return x * factor


renorm.__doc__ = _doc("Rescale each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` down to it.",
                      _IN + "\n    p : float\n        The norm.\n    dim : int\n        The dimension of the slices.\n"
                      "    maxnorm : float\n        The largest norm kept.", "Tensor",
                      ">>> rg.renorm(rg.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)\n"
                      "    tensor([[0.6, 0.8],\n            [0.3, 0.4]])")


@composite_op("sgn")
def sgn(input) -> Tensor:
    x = _t(input, "sgn")
    if x._array.dtype.kind == "c":
        raise NotImplementedError("sgn of complex tensors (x / |x|) is not supported: retrograd records no "
                                  "complex sign; compute x / x.abs() where x != 0")
    return _abi.sign(x)


sgn.__doc__ = _doc("The sign of each element (:func:`retrograd.sign`; complex inputs are refused).", _IN, "Tensor",
                   ">>> rg.sgn(rg.tensor([-2.0, 0.0, 3.0]))\n    tensor([-1.,  0.,  1.])")


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, generator=None):
    """Random integers in ``[low, high)`` shaped like ``input`` (one bound: ``[0, low)``).

    Parameters
    ----------
    input : Tensor
        Gives the shape, dtype and device.
    low, high : int
        The bounds.
    generator : numpy.random.Generator, optional
        Where to draw from.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.randint_like(rg.zeros(3), 5).shape
    (3,)
    """
    x = _t(input, "randint_like")
    if high is None:
        low, high = 0, low
    return _creation.randint(low, high, tuple(x.shape), generator=generator, dtype=dtype or x.dtype,
                             device=device or x.device, requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """A tensor from ``obj``, sharing its memory when it can (``torch.asarray``).

    Tensors and NumPy arrays of the dtype are wrapped without a copy unless
    ``copy=True``; other data is converted as :func:`retrograd.tensor` does.

    Parameters
    ----------
    obj : Tensor, array_like
        The data.
    dtype : dtype, optional
        The dtype.
    device : str or Device, optional
        Where it lives.
    copy : bool, optional
        Always (True) or never (False) copy; None: when needed.
    requires_grad : bool, optional
        Whether it records operations.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> a = np.zeros(2)
    >>> t = rg.asarray(a)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 0.], dtype=float64)
    """
    if isinstance(obj, Tensor):
        t = obj.clone() if copy else obj
        t = t.to(dtype=dtype) if dtype is not None else t
        if device is None and _creation._default_device_on:
            device = _creation._default_device()
        if device is not None:
            # (torch's asarray of a tensor moves it: to `device`, or the default device)
            t = t.to(device)
    elif copy:
        t = _creation.tensor(obj, dtype=dtype, device=device)
    else:
        t = _creation.as_tensor(obj, dtype=dtype, device=device)
    return t.requires_grad_(requires_grad) if requires_grad else t


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor:
    """A 1-d tensor over the bytes of an object of the buffer protocol, without a copy.

    Parameters
    ----------
    buffer : bytes-like
        The memory.
    dtype : dtype
        How to read it.
    count : int, optional
        How many elements (default: all).
    offset : int, optional
        Where to start, in bytes.
    requires_grad : bool, optional
        Whether it records operations.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.frombuffer(bytearray(b"\\x01\\x02\\x03"), dtype=rg.uint8)
    tensor([1, 2, 3], dtype=uint8)
    """
    arr = np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    return _creation._make(arr, None, bool(requires_grad))
