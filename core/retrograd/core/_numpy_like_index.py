"""torch's index builders and split variants over NumPy (issue 41): argwhere,
nonzero, bucketize, searchsorted, bincount (tensors that never require
grad, as torch's), split_with_sizes and the "unsafe" splits (retrograd's
views need no unsafe variant), constant_pad_nd, the inclusive range, and
the function forms of is_inference, get_device, detach_ and zero_."""
from __future__ import annotations

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core import _creation
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
