"""torch's index builders and split variants over NumPy (issue 41): argwhere,
nonzero, bucketize, searchsorted, bincount (tensors that never require
grad, as torch's), split_with_sizes and the "unsafe" splits (retrograd's
views need no unsafe variant), constant_pad_nd, the inclusive range, and
the function forms of is_inference, get_device, detach_ and zero_."""
from __future__ import annotations

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core import _creation
from retrograd.core._dtypes import _is_inexact_dtype, is_floating_dtype as _is_floating_dtype
from retrograd.core._numpy_like_shape import _IN, _const, _doc, _t
from retrograd.core.abi import Tensor, composite_op

__all__ = ["argwhere", "nonzero", "bucketize", "searchsorted", "bincount"]


def argwhere(input) -> Tensor:
    """The indices of the non-zero elements, one row per element (``nonzero``).

    Parameters
    ----------
    input : Tensor
        The input.

    Returns
    -------
    Tensor
        An int64 ``(count, input.ndim)`` tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.argwhere(rg.tensor([[0, 1], [2, 0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    x = _t(input, "argwhere")
    return _const(x, np.argwhere(x._array).astype(np.int64))


def nonzero(input, *, as_tuple=False):
    """The indices of the non-zero elements: rows of indices, or one tensor per dimension.

    Parameters
    ----------
    input : Tensor
        The input.
    as_tuple : bool, optional
        Return one 1-d index tensor per dimension (NumPy's ``nonzero``).

    Returns
    -------
    Tensor or tuple of Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nonzero(rg.tensor([0, 3, 0, 4]))
    tensor([[1],
            [3]])
    >>> rg.nonzero(rg.tensor([0, 3, 0, 4]), as_tuple=True)
    (tensor([1, 3]),)
    """
    x = _t(input, "nonzero")
    if as_tuple:
        a = x._array if x.ndim else x._array.reshape(1)
        return tuple(_const(x, i.astype(np.int64)) for i in np.nonzero(a))
    return argwhere(x)


def bucketize(input, boundaries, *, out_int32=False, right=False) -> Tensor:
    """The index of the bucket each element falls in, for sorted 1-d ``boundaries``.

    With ``right=False`` an element equal to a boundary goes to the bucket
    left of it (``boundaries[i-1] < x <= boundaries[i]``).

    Parameters
    ----------
    input : Tensor or number
        The values.
    boundaries : Tensor
        Sorted 1-d boundaries.
    out_int32 : bool, optional
        int32 indices instead of int64.
    right : bool, optional
        Which side of a boundary its equal values go to.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.bucketize(rg.tensor([1, 5, 9]), rg.tensor([1, 3, 5, 7, 9]))
    tensor([0, 2, 4])
    """
    b = _t(boundaries, "bucketize", "boundaries")
    x = input if isinstance(input, Tensor) else _creation.tensor(input)
    idx = np.searchsorted(b._array, x._array, side="right" if right else "left")
    return _const(b, np.asarray(idx, dtype=np.int32 if out_int32 else np.int64))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None) -> Tensor:
    """Where each value would be inserted in the last dimension of ``sorted_sequence`` to keep it sorted.

    Parameters
    ----------
    sorted_sequence : Tensor
        Sorted along its last dimension (1-d, or one row per row of ``input``).
    input : Tensor or number
        The values.
    out_int32 : bool, optional
        int32 indices instead of int64.
    right, side : optional
        ``right=True`` or ``side='right'``: after equal values.
    sorter : Tensor, optional
        Indices that sort ``sorted_sequence``.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.searchsorted(rg.tensor([1, 3, 5, 7, 9]), rg.tensor([3, 6, 9]))
    tensor([1, 3, 4])
    """
    s = _t(sorted_sequence, "searchsorted", "sorted_sequence")
    scalar = not isinstance(input, Tensor)
    x = _creation.tensor(input) if scalar else input
    sd = side if side is not None else ("right" if right else "left")
    seq = np.asarray(s._array)
    if sorter is not None:
        seq = np.take_along_axis(seq, np.asarray(sorter._array), -1)
    if seq.ndim == 1:
        idx = np.searchsorted(seq, x._array, side=sd)
    else:
        flat_s = seq.reshape(-1, seq.shape[-1])
        flat_x = np.asarray(x._array).reshape(flat_s.shape[0], -1)
        idx = np.stack([np.searchsorted(r, v, side=sd) for r, v in zip(flat_s, flat_x)]).reshape(x.shape)
    return _const(s, np.asarray(idx, dtype=np.int32 if out_int32 else np.int64))


def bincount(input, weights=None, minlength=0) -> Tensor:
    """Count the occurrences of each non-negative integer (or sum their ``weights``).

    Parameters
    ----------
    input : Tensor
        A 1-d tensor of non-negative integers.
    weights : Tensor, optional
        A weight per element.
    minlength : int, optional
        The least length of the result.

    Returns
    -------
    Tensor
        int64 counts, or the weights' sums (float64, as torch's for float weights).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.bincount(rg.tensor([0, 1, 1, 3]))
    tensor([1, 2, 0, 1])
    """
    x = _t(input, "bincount")
    if x.ndim != 1 or x._array.dtype.kind not in "iu":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if x._array.size and int(x._array.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    w = None if weights is None else np.asarray(weights._array)
    out = np.bincount(x._array, weights=w, minlength=minlength)
    if w is not None and w.dtype == np.float32:
        out = out.astype(np.float32)
    return _const(x, out if w is not None else out.astype(np.int64))


@composite_op("split_with_sizes")
def split_with_sizes(input, split_sizes, dim=0) -> tuple:
    return tuple(_abi.split(_t(input, "split_with_sizes"), list(split_sizes), dim))


@composite_op("unsafe_split")
def unsafe_split(tensor, split_size, dim=0) -> tuple:
    return tuple(_abi.split(_t(tensor, "unsafe_split", "tensor"), split_size, dim))


@composite_op("unsafe_split_with_sizes")
def unsafe_split_with_sizes(input, split_sizes, dim=0) -> tuple:
    return split_with_sizes(input, split_sizes, dim)


@composite_op("unsafe_chunk")
def unsafe_chunk(input, chunks, dim=0) -> tuple:
    return tuple(_abi.chunk(_t(input, "unsafe_chunk"), chunks, dim))


split_with_sizes.__doc__ = _doc("Split along ``dim`` into parts of the given sizes (views).",
                                _IN + "\n    split_sizes : sequence of int\n        The sizes, summing to the "
                                "dimension's size.\n    dim : int, optional\n        The dimension.", "tuple of Tensor",
                                ">>> [t.tolist() for t in rg.split_with_sizes(rg.arange(5), [2, 3])]\n"
                                "    [[0, 1], [2, 3, 4]]")
unsafe_split.__doc__ = _doc("Split into parts of ``split_size`` along ``dim``: :func:`retrograd.split`.",
                            "    tensor : Tensor\n        The input.\n    split_size : int or sequence of int\n"
                            "        The size of each part.\n    dim : int, optional\n        The dimension.",
                            "tuple of Tensor", ">>> len(rg.unsafe_split(rg.arange(5), 2))\n    3",
                            "torch's ``unsafe_split`` skips view checks that retrograd's views do not need.")
unsafe_split_with_sizes.__doc__ = _doc("Split along ``dim`` into parts of the given sizes: "
                                       ":func:`retrograd.split_with_sizes`.",
                                       _IN + "\n    split_sizes : sequence of int\n        The sizes.\n"
                                       "    dim : int, optional\n        The dimension.", "tuple of Tensor",
                                       ">>> len(rg.unsafe_split_with_sizes(rg.arange(5), [1, 4]))\n    2")
unsafe_chunk.__doc__ = _doc("Split into ``chunks`` parts along ``dim``: :func:`retrograd.chunk`.",
                            _IN + "\n    chunks : int\n        The number of parts.\n    dim : int, optional\n"
                            "        The dimension.", "tuple of Tensor",
                            ">>> len(rg.unsafe_chunk(rg.arange(6), 3))\n    3")


@composite_op("constant_pad_nd")
def constant_pad_nd(input, pad, value=0) -> Tensor:
    return _abi.pad(_t(input, "constant_pad_nd"), tuple(pad), "constant", value)


constant_pad_nd.__doc__ = _doc("Pad with a constant: ``pad`` holds (before, after) pairs from the last dimension.",
                               _IN + "\n    pad : sequence of int\n        The padding.\n    value : number, optional"
                               "\n        The fill value (default 0).", "Tensor",
                               ">>> rg.constant_pad_nd(rg.tensor([1.0, 2.0]), [1, 2], 9.0)\n"
                               "    tensor([9., 1., 2., 9., 9.])")


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:  # noqa: A001
    """The numbers from ``start`` to ``end`` **inclusive**, ``step`` apart (torch's deprecated ``range``).

    Use :func:`retrograd.arange` (``end`` excluded) in new code. The default
    dtype is the default float dtype, whatever the arguments.

    Parameters
    ----------
    start, end : number
        The first and the last value (one argument: ``end``, from 0).
    step : number, optional
        The spacing (default 1).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.range(1, 3)
    tensor([1., 2., 3.])
    """
    from retrograd.core._dtype_rules import get_default_dtype
    if end is None:
        start, end = 0, start
    n = int(np.floor((end - start) / step)) + 1
    vals = start + step * np.arange(n if n > 0 else 0)
    return _creation.tensor(vals, dtype=get_default_dtype() if dtype is None else dtype, device=device,
                            requires_grad=requires_grad)


def is_inference(input) -> bool:
    """Whether ``input`` was made in inference mode (``input.is_inference()``).

    Parameters
    ----------
    input : Tensor
        The tensor.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> with rg.inference_mode():
    ...     t = rg.zeros(1)
    >>> rg.is_inference(t), rg.is_inference(rg.zeros(1))
    (True, False)
    """
    return _t(input, "is_inference").is_inference()


def get_device(input) -> int:
    """The CUDA device index of ``input``, -1 on the CPU (``input.get_device()``).

    Parameters
    ----------
    input : Tensor
        The tensor.

    Returns
    -------
    int

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.get_device(rg.zeros(1))
    -1
    """
    return _t(input, "get_device").get_device()


def detach_(input) -> Tensor:
    """Detach ``input`` from its graph in place (``input.detach_()``).

    Parameters
    ----------
    input : Tensor
        The tensor.

    Returns
    -------
    Tensor
        ``input``, now a leaf that does not require grad.

    Examples
    --------
    >>> import retrograd as rg
    >>> y = rg.ones(2, requires_grad=True) * 2
    >>> rg.detach_(y).grad_fn is None
    True
    """
    return _t(input, "detach_").detach_()


def zero_(input) -> Tensor:
    """Fill ``input`` with zeros in place (``input.zero_()``).

    Parameters
    ----------
    input : Tensor
        The tensor.

    Returns
    -------
    Tensor
        ``input``.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.zero_(rg.ones(2))
    tensor([0., 0.])
    """
    return _t(input, "zero_").zero_()


__all__ += ["split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk", "constant_pad_nd",
            "range", "is_inference", "get_device", "detach_", "zero_"]


# --- scatter_reduce and index_reduce ----------------------------------------------------------------------------
# Note [scatter_reduce's gradients]: "sum" and "mean" are scatter_add over the ops. For "amax"/"amin" and
# "prod" the value is reduced on the arrays (NumPy's ufunc.at) and a term that is zero in value carries
# torch's gradient (scatter_reduce_backward): amax/amin split it evenly among the elements equal to the
# result, counting self's even when include_self=False (torch's rule); prod gives each element the product
# of the others, exact with zeros. That term is linear with weights fixed at forward time, so the double
# backward of "prod" is not torch's.
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_checks(x: Tensor, d: int, idx: np.ndarray, src: Tensor, fn: str) -> None:
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index")
    if src.dtype != x.dtype:
        raise RuntimeError(f"{fn}(): Expected self.dtype to be equal to src.dtype")
    if idx.ndim != max(x.ndim, 1) and idx.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    for k, n in enumerate(idx.shape):
        if n > (src.shape[k] if src.ndim else 1) or (k != d and n > (x.shape[k] if x.ndim else 1)):
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(idx.shape)} to be "
                               f"smaller than self {list(x.shape)} apart from dimension {d} and to be smaller "
                               f"size than src {list(src.shape)}")
    size = x.shape[d] if x.ndim else 1
    if idx.size and (idx.min() < -size or idx.max() >= size):
        bad = idx[(idx < -size) | (idx >= size)].flat[0]
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy(force=True))


def _reduce_values(a: np.ndarray, flat_t: np.ndarray, vals: np.ndarray, reduce: str, include_self: bool,
                   touched: np.ndarray) -> np.ndarray:
    out = a.reshape(-1).copy()
    if not include_self:
        if reduce == "prod":
            start = 1
        elif _is_floating_dtype(a.dtype):
            start = -np.inf if reduce == "amax" else np.inf
        elif a.dtype.kind == "b":
            start = reduce == "amin"
        else:
            info = np.iinfo(a.dtype)
            start = info.min if reduce == "amax" else info.max
        out[touched.reshape(-1)] = start
    ufunc = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    ufunc.at(out, flat_t, vals)
    return out.reshape(a.shape)


def _scatter_reduce(x: Tensor, d: int, index: Tensor, src: Tensor, reduce: str, include_self: bool,
                    fn: str) -> Tensor:
    idx = _host(index)
    _scatter_checks(x, d, idx, src, fn)
    shape = tuple(x.shape) or (1,)
    idx = idx.astype(np.int64) % (shape[d] if shape[d] else 1)
    if idx.size == 0:
        return x * 1 if x.dtype.kind != "b" else _abi.clone(x)
    region = tuple(slice(0, n) for n in idx.shape)
    s = src if tuple(src.shape) == idx.shape else src[region]
    grid = list(np.indices(idx.shape, sparse=True))
    grid[d] = idx
    flat_t = np.ravel_multi_index(tuple(np.broadcast_arrays(*grid)), shape).reshape(-1)
    counts = np.bincount(flat_t, minlength=int(np.prod(shape))).reshape(tuple(x.shape))
    touched = counts > 0
    index_t = _const(x, idx)
    if reduce in ("sum", "mean"):
        base = x if include_self else _abi.where(_const(x, touched), _const(x, np.zeros((), x._array.dtype)), x)
        total = _abi.scatter_add(base, d, index_t, s)
        if reduce == "sum":
            return total
        n = counts + (1 if include_self else 0)
        n = np.where(n == 0, 1, n)
        if _is_inexact_dtype(x.dtype):
            return total / _const(x, n.astype(x._array.dtype))
        return _abi.floor_divide(total, _const(x, n.astype(x._array.dtype)))
    a, sv = _host(x), _host(s)
    value = _reduce_values(a, flat_t, sv.reshape(-1), reduce, include_self, touched)
    V = _const(x, value)
    if not (x.requires_grad or s.requires_grad) or not _is_inexact_dtype(x.dtype):
        return V
    vt = value.reshape(-1)[flat_t].reshape(idx.shape)
    if reduce == "prod":
        masked_self = np.where(a == 0, 1, a)
        w_self = _reduce_values(masked_self, flat_t, sv.reshape(-1), "prod", include_self, touched) / masked_self
        src_zero = sv == 0
        zeros_at = np.bincount(flat_t, weights=src_zero.reshape(-1), minlength=value.size)[flat_t].reshape(idx.shape)
        single = src_zero & (zeros_at == 1)
        masked_src_result = _reduce_values(a, flat_t, np.where(single, 1, sv).reshape(-1), "prod", include_self,
                                           touched).reshape(-1)[flat_t].reshape(idx.shape)
        w_src = np.where(single, masked_src_result, vt / np.where(src_zero, 1, sv))
        self_part, src_part = x, s
    else:
        self_is = a == value
        src_is = sv == vt
        n = self_is + np.bincount(flat_t, weights=src_is.reshape(-1), minlength=value.size).reshape(value.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            w_self = self_is / n
            w_src = src_is / n.reshape(-1)[flat_t].reshape(idx.shape)
        zero = _const(x, np.zeros((), a.dtype))
        self_part = _abi.where(_const(x, self_is), x, zero)
        src_part = _abi.where(_const(x, src_is), s, zero)
    if not include_self:
        w_self = np.where(touched, 0, w_self)
    w_self = np.where(np.isfinite(w_self), w_self, 0).astype(a.dtype)
    w_src = np.where(np.isfinite(w_src), w_src, 0).astype(a.dtype)
    Z = _const(x, w_self) * self_part
    Z = _abi.scatter_add(Z, d, index_t, _const(x, w_src) * src_part)
    Zd = Z.detach()
    finite = _const(x, np.isfinite(_host(Zd)) & np.isfinite(value))
    # where the term is not finite (an infinite element), the value stands alone (no gradient there)
    return _abi.where(finite, V + (Z - Zd), V)


def _reduce_arg(reduce, fn: str, allowed=_REDUCES) -> str:
    if reduce not in allowed:
        if fn == "index_reduce":
            raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                               f"{reduce}.")
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return reduce


@composite_op("scatter_reduce")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True) -> Tensor:
    x = _t(input, "scatter_reduce")
    index, src = _t(index, "scatter_reduce", "index"), _t(src, "scatter_reduce", "src")
    _reduce_arg(reduce, "scatter_reduce")
    d = _abi._wrap_dim_py(dim, max(x.ndim, 1))
    return _scatter_reduce(x, d, index, src, reduce, bool(include_self), "scatter")


@composite_op("index_reduce")
def index_reduce(input, dim, index, source, reduce, *, include_self=True) -> Tensor:
    x = _t(input, "index_reduce")
    index, source = _t(index, "index_reduce", "index"), _t(source, "index_reduce", "source")
    _reduce_arg(reduce, "index_reduce", _REDUCES[1:])
    d = _abi._wrap_dim_py(dim, max(x.ndim, 1))
    idx = _host(index)
    if idx.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if idx.dtype.kind not in "iu":
        raise IndexError("index_reduce_(): Expected dtype int32/int64 for index")
    if source.dtype != x.dtype:
        raise RuntimeError(f"index_reduce_(): self ({x.dtype}) and source ({source.dtype}) must have the same "
                           "scalar type")
    sshape = tuple(source.shape) or (1,)
    if x.ndim != source.ndim and source.ndim and x.ndim:
        raise IndexError("index_reduce_(): Source and self must have the same number of dimensions")
    if sshape[d] != idx.reshape(-1).shape[0]:
        raise IndexError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to source.size(dim) "
                         f"({sshape[d]})")
    full = np.broadcast_to(idx.reshape([-1 if k == d else 1 for k, _ in enumerate(sshape)]), sshape)
    src = source if source.ndim else _abi.reshape(source, (1,))
    return _scatter_reduce(x, d, _const(x, np.ascontiguousarray(full)), src, reduce, bool(include_self),
                           "index_reduce")


_RED = ("    reduce : {'sum', 'prod', 'mean', 'amax', 'amin'}\n        How the values that meet at one place combine.\n"
        "    include_self : bool, optional\n        Whether ``input``'s own value there takes part (default True).")
scatter_reduce.__doc__ = _doc(
    "``input`` with the values of ``src`` reduced into it at the places ``index`` names along ``dim``.",
    _IN + "\n    dim : int\n        The dimension ``index`` indexes.\n    index : Tensor\n        int64 indices, "
    "of ``src``'s number of dimensions.\n    src : Tensor\n        The values." + "\n" + _RED,
    "Tensor",
    ">>> rg.scatter_reduce(rg.zeros(2), 0, rg.tensor([0, 0, 1]), rg.tensor([1.0, 5.0, 2.0]), 'amax',\n"
    "    ...                  include_self=False)\n    tensor([5., 2.])",
    "The gradient is torch's: amax and amin split it evenly among equal maxima, prod handles zeros "
    "(its double backward is not supported).")
index_reduce.__doc__ = _doc(
    "``input`` with the slices of ``source`` reduced into the slices ``index`` names along ``dim``.",
    _IN + "\n    dim : int\n        The dimension.\n    index : Tensor\n        A 1-d int64 tensor, one entry per "
    "slice of ``source``.\n    source : Tensor\n        The values." + "\n" + _RED.replace("'sum', ", ""),
    "Tensor",
    ">>> rg.index_reduce(rg.ones(2), 0, rg.tensor([0, 0, 1]), rg.tensor([2.0, 3.0, 4.0]), 'prod')\n"
    "    tensor([6., 4.])",
    "The gradients are those of :func:`scatter_reduce`.")


def nonzero_static(input, *, size, fill_value=-1) -> Tensor:
    """The indices of the non-zero elements, cut or padded with ``fill_value`` to exactly ``size`` rows.

    Parameters
    ----------
    input : Tensor
        The input.
    size : int
        The number of rows of the result.
    fill_value : int, optional
        The value of the padding rows (default -1).

    Returns
    -------
    Tensor
        An int64 ``(size, input.ndim)`` tensor.

    Raises
    ------
    RuntimeError
        For a negative ``size``.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.tensor([0, 3, 0, 4]).nonzero_static(size=3)
    tensor([[ 1],
            [ 3],
            [-1]])
    """
    x = _t(input, "nonzero_static")
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = np.argwhere(_host(x)).astype(np.int64)[:size]
    out = np.full((int(size), x.ndim), fill_value, dtype=np.int64)
    out[:found.shape[0]] = found
    return _const(x, out)


__all__ += ["scatter_reduce", "index_reduce", "nonzero_static"]
