"""3-d pooling, max unpooling and fractional max pooling as functions
(re-exported by ``retrograd.nn.functional``).

Each is a composite of core's ops (the 3-d pools are separable into two of
core's 2-d pools), so gradients come from the table; the shared helpers live
in ``_conv_pool``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core import extending as _ext
from retrograd.core.extending import composite_op, wrap as _wrap
from retrograd.nn.functional import (_adaptive_matrix, _floating, _inexact, _int_tuple, _no_bfloat16, _ntuple, _t,
                                     avg_pool2d)
from retrograd.nn._conv_pool import _adaptive_max, _adaptive_sizes, _const, _lp_pool, _reshape

__all__ = ["max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]


# --- 3-d pooling -----------------------------------------------------------------------
# Max and average pooling are separable: a 3-d window's maximum (mean) is the
# maximum (mean) over its depth taps of the 2-d windows' maxima (means), so
# each is two of core's 2-d pools: over (H, W) with the depth as channels,
# then over (D, 1) of the result. Their gradients come from core's.

def _three(v, arg, fn, rule):
    t = _int_tuple(v, arg, fn)
    if len(t) == 1:
        t = t * 3
    if len(t) != 3:
        raise RuntimeError(f"{fn}: {arg} must {rule}")
    return t


def _pool3d_args(fn, kernel_size, stride, padding, dilation):
    e = "" if fn == "avg_pool3d" else "either "
    k = _three(kernel_size, "kernel_size", fn, f"{e}be a single int, or a tuple of three ints")
    if stride is None or (isinstance(stride, (tuple, list)) and not stride):
        s = k
    else:
        s = _three(stride, "stride", fn, f"{e}be omitted, a single int, or a tuple of three ints")
    p = _three(padding, "padding", fn, f"{e}be a single int, or a tuple of three ints")
    d = _three(dilation, "dilation", fn, "be either a single int, or a tuple of three ints")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} dW: {s[2]}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} dilationH: {d[1]} "
                           f"dilationW: {d[2]}")
    if any(v < 0 for v in p):
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    for kk, pp, dd in zip(k, p, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    return k, s, p, d


def _pooled_size(n, k, s, p, d, ceil_mode):
    # torch's pooling_output_shape: with ceil_mode a last window must start
    # inside the input or the left padding
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool3d_input(input, fn):
    x = _t(input)
    if x.ndim not in (4, 5) or any(v == 0 for v in x.shape[x.ndim - 4:]):
        raise RuntimeError(f"{fn}: non-empty 4D or 5D (batch mode) tensor expected for input, but got "
                           f"{list(x.shape)}")
    return x, (_reshape(x, (1,) + tuple(x.shape)) if x.ndim == 4 else x)


def _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, want_indices):
    x0, x = _pool3d_input(input, "max_pool3d")
    k, s, p, d = _pool3d_args("max_pool3d", kernel_size, stride, padding, dilation)
    N, C, *size = x.shape
    out = [_pooled_size(n, kk, ss, pp, dd, bool(ceil_mode)) for n, kk, ss, pp, dd in zip(size, k, s, p, d)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, [C] + size))}). Calculated output size: "
                           f"({'x'.join(map(str, [C] + out))}). Output size is too small")
    # explicit padding with the dtype's lowest value: left `padding`, right
    # whatever makes floor-mode windows come out as `out` (negative crops)
    right = [(o - 1) * ss + dd * (kk - 1) + 1 - n - pp for o, ss, dd, kk, n, pp in zip(out, s, d, k, size, p)]
    if x.dtype.kind == "b":
        raise NotImplementedError('"max_pool3d" not implemented for bool input, as in torch; convert it first, '
                                  "e.g. input.float()")
    low = -math.inf if _inexact(x.dtype) else np.iinfo(x.dtype).min
    xp = _c.pad(x, (p[2], right[2], p[1], right[1], p[0], right[0]), value=low)
    dp, hp, wp = xp.shape[2:]
    y1 = _c.max_pool2d(_reshape(xp, (N * C, dp, hp, wp)), k[1:], s[1:], 0, d[1:], False)
    ho, wo = y1.shape[2:]
    y = _c.max_pool2d(_reshape(y1, (N * C, 1, dp, ho * wo)), (k[0], 1), (s[0], 1), 0, (d[0], 1), False)
    y = _reshape(y, (N, C) + tuple(out))
    if x0.ndim == 4:
        y = _reshape(y, y.shape[1:])
    if not want_indices:
        return y
    # the depth stage's argmax picks a depth, the first stage's (h, w) within it
    i1 = _ext.max_pool2d_indices(xp._array.reshape(N * C, dp, hp, wp), k[1:], s[1:], 0, d[1:], False)
    i2 = _ext.max_pool2d_indices(y1._array.reshape(N * C, 1, dp, ho * wo), (k[0], 1), (s[0], 1), 0, (d[0], 1),
                                 False)
    depth = i2.reshape(N * C, out[0], ho * wo) // (ho * wo)
    hw = np.take_along_axis(i1.reshape(N * C, dp, ho * wo), depth, axis=1)
    flat = ((depth - p[0]) * size[1] + hw // wp - p[1]) * size[2] + hw % wp - p[2]
    return y, _wrap(flat.reshape(y.shape).astype(np.int64), device=y.device)


def max_pool3d_with_indices(input: Tensor, kernel_size: int | tuple[int, int, int],
                            stride: int | tuple[int, int, int] | None = None, padding: int | tuple[int, int, int] = 0,
                            dilation: int | tuple[int, int, int] = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`max_pool3d` that also returns each maximum's flat index
    ``(d * H + h) * W + w`` within its input volume (int64), whatever
    ``return_indices`` says.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
    kernel_size, stride, padding, dilation, ceil_mode
        As for :func:`max_pool3d`.
    return_indices : bool, optional
        Ignored (torch's signature).

    Returns
    -------
    tuple of Tensor
        The maxima and their indices.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.max_pool3d_with_indices(rg.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
    (tensor([[[[[7.]]]]]), tensor([[[[[7]]]]]))
    """
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@composite_op('max_pool3d')
def max_pool3d(input: Tensor, kernel_size: int | tuple[int, int, int], stride: int | tuple[int, int, int] | None = None,
               padding: int | tuple[int, int, int] = 0, dilation: int | tuple[int, int, int] = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """3-d max pooling: the maximum of each window.

    The gradient goes to each window's argmax (the first one on ties, in
    depth, row, column order, as torch).

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
    kernel_size : int or tuple of int
        The window's (depth, height, width).
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    padding : int or tuple of int, optional
        Implicit -inf padding on both sides (default 0), at most half the
        effective kernel.
    dilation : int or tuple of int, optional
        The spacing between window elements (default 1).
    ceil_mode : bool, optional
        Round the output size up (default False).
    return_indices : bool, optional
        Also return each maximum's flat index ``(d * H + h) * W + w`` within
        its input volume, int64 (default False).

    Returns
    -------
    Tensor or tuple of Tensor
        The maxima, and with ``return_indices`` their indices.

    Raises
    ------
    RuntimeError
        For an input that is not 4-D or 5-D, invalid sizes, too much padding
        or an empty output.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.arange(27.0).reshape(1, 1, 3, 3, 3)
    >>> F.max_pool3d(x, 2, stride=1)[0, 0, 0]
    tensor([[13., 14.],
            [16., 17.]])
    >>> F.max_pool3d(rg.ones(2, 4, 8, 8, 8), 3, stride=2, padding=1).shape
    (2, 4, 4, 4, 4)
    """
    return _max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, bool(return_indices))


@composite_op('avg_pool3d')
def avg_pool3d(input: Tensor, kernel_size: int | tuple[int, int, int], stride: int | tuple[int, int, int] | None = None,
               padding: int | tuple[int, int, int] = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """3-d average pooling: the mean of each window.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
    kernel_size : int or tuple of int
        The window's (depth, height, width).
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    padding : int or tuple of int, optional
        Implicit zero padding on both sides (default 0), at most half the kernel.
    ceil_mode : bool, optional
        Round the output size up (default False).
    count_include_pad : bool, optional
        Count the padding zeros in the divisor (default True).
    divisor_override : int, optional
        A fixed divisor instead of the window's size.

    Returns
    -------
    Tensor
        The window averages.

    Raises
    ------
    RuntimeError
        For an input that is not 4-D or 5-D, invalid sizes, too much padding,
        a zero divisor or an input smaller than the kernel.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.avg_pool3d(rg.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
    tensor([[[[[3.5]]]]])
    >>> F.avg_pool3d(rg.ones(1, 1, 2, 2, 2), 2, stride=1, padding=1, count_include_pad=False).sum()
    tensor(27.)
    """
    x0, x = _pool3d_input(input, "avg_pool3d")
    k, s, p, _ = _pool3d_args("avg_pool3d", kernel_size, stride, padding, 1)
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    if x0.dtype.kind in "iu":
        return _int_avg_pool3d(x0, k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override)
    _no_bfloat16(x0, "avg_pool3d_out_frame")
    if x0.dtype.kind == "b":
        raise NotImplementedError('"avg_pool3d" not implemented for bool input, as in torch; convert it first, '
                                  "e.g. input.float()")
    N, C, *size = x.shape
    out = [_pooled_size(n, kk, ss, pp, 1, bool(ceil_mode)) for n, kk, ss, pp in zip(size, k, s, p)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    # the divisors are products over the dims, so two 2-d averages make the
    # 3-d one; with an override, two window sums and one division
    div = None if divisor_override is None else 1
    y = avg_pool2d(_reshape(x, (N * C,) + tuple(size)), k[1:], s[1:], p[1:], bool(ceil_mode),
                   bool(count_include_pad), div)
    ho, wo = y.shape[2:]
    y = avg_pool2d(_reshape(y, (N * C, 1, size[0], ho * wo)), (k[0], 1), (s[0], 1), (p[0], 0), bool(ceil_mode),
                   bool(count_include_pad), div)
    if divisor_override is not None:
        y = _c.div(y, int(divisor_override))
    y = _reshape(y, (N, C) + tuple(out))
    return _reshape(y, y.shape[1:]) if x0.ndim == 4 else y


def _int_avg_pool3d(x, k, s, p, ceil_mode, count_include_pad, divisor_override):
    # torch's integer average: the window sum divided by the divisor in
    # integer arithmetic (truncated); both come exactly from float64 pools
    xf = _c.as_tensor(np.asarray(x._array).astype(np.float64))
    sums = avg_pool3d(xf, k, s, p, ceil_mode, count_include_pad, 1)._array
    if divisor_override is not None:
        div = np.full(sums.shape, int(divisor_override), dtype=np.int64)
    else:
        ones = _c.ones_like(xf)
        div = np.rint(avg_pool3d(ones, k, s, p, ceil_mode, count_include_pad, 1)._array
                      / avg_pool3d(ones, k, s, p, ceil_mode, count_include_pad)._array).astype(np.int64)
    out = np.trunc(np.rint(sums) / div).astype(x.dtype)
    return _wrap(out, device=x.device)


def _adaptive3d_input(input, fn):
    x = _t(input)
    if x.ndim not in (4, 5):
        raise RuntimeError(f"{fn}(): Expected 4D or 5D tensor, but got{':' if 'max' in fn else ''} {list(x.shape)}")
    for d in range(x.ndim - 4, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(x.shape)} with dimension {d} being empty")
    if not _c.is_floating_dtype(x.dtype):
        raise NotImplementedError(f'"{fn}" not implemented for {x.dtype} input, as in torch; convert it first, '
                                  "e.g. input.float()")
    return x


@composite_op('adaptive_avg_pool3d')
def adaptive_avg_pool3d(input: Tensor, output_size: int | None | tuple[int | None, int | None, int | None]) -> Tensor:
    """3-d average pooling to a given output size.

    Along each dim of input size ``n`` and output size ``m``, output
    position ``i`` averages input positions ``floor(i * n / m)`` to
    ``ceil((i + 1) * n / m) - 1``, as torch's: one averaging matrix per dim.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
    output_size : int, None or tuple of (int or None)
        The output's (depth, height, width); an int for all three; None
        keeps the input's size in that dim.

    Returns
    -------
    Tensor
        Of shape ``(N, C, *output_size)`` (or unbatched).

    Raises
    ------
    RuntimeError
        For an input that is not 4-D or 5-D, an empty non-batch dim, or an
        ``output_size`` of the wrong length or with negative entries.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.adaptive_avg_pool3d(rg.arange(8.0).reshape(1, 2, 2, 2), 1)
    tensor([[[[3.5]]]])
    >>> F.adaptive_avg_pool3d(rg.ones(2, 3, 5, 7, 9), (2, None, 4)).shape
    (2, 3, 2, 7, 4)
    """
    x = _adaptive3d_input(input, "adaptive_avg_pool3d")
    D, H, W = x.shape[-3:]
    if isinstance(output_size, (tuple, list)) and len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    sizes = _adaptive_sizes(output_size, (D, H, W), "adaptive_avg_pool3d")
    lead = tuple(x.shape[:-3])

    def mat(n, m, transpose=False):
        a = _adaptive_matrix(n, m, x.dtype)
        return _const(a.T.copy() if transpose else a, x)

    y = _c.matmul(x, mat(W, sizes[2], True))                          # (.., D, H, ow)
    y = _c.matmul(mat(H, sizes[1]), y)                                # (.., D, oh, ow)
    y = _c.matmul(mat(D, sizes[0]), _reshape(y, lead + (D, sizes[1] * sizes[2])))
    return _reshape(y, lead + sizes)


def adaptive_max_pool3d_with_indices(input: Tensor,
                                     output_size: int | None | tuple[int | None, int | None, int | None],
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool3d` that also returns each maximum's flat
    index ``(d * H + h) * W + w`` in its input volume (int64), whatever
    ``return_indices`` says.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
    output_size : int, None or tuple of (int or None)
        The output's (depth, height, width); None keeps the input's size.
    return_indices : bool, optional
        Ignored (torch's signature).

    Returns
    -------
    tuple of Tensor
        The maxima and their indices.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.adaptive_max_pool3d_with_indices(rg.arange(8.0).reshape(1, 2, 2, 2), 1)
    (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """
    x = _adaptive3d_input(input, "adaptive_max_pool3d")
    sizes = _adaptive_sizes(output_size, tuple(x.shape[-3:]), "adaptive_max_pool3d")
    return _adaptive_max(x, sizes, "adaptive_max_pool3d")


def adaptive_max_pool3d(input: Tensor, output_size: int | None | tuple[int | None, int | None, int | None],
                        return_indices: bool = False) -> Any:
    """3-d max pooling to a given output size.

    The windows are those of :func:`adaptive_avg_pool3d`; the gradient goes
    to each window's maximum (the first one on ties).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
    output_size : int, None or tuple of (int or None)
        The output's (depth, height, width): an int for all three; None
        keeps the input's size in that dim.
    return_indices : bool, optional
        Also return each maximum's flat index ``(d * H + h) * W + w`` in its
        volume (default False).

    Returns
    -------
    Tensor or tuple of Tensor
        The maxima, and with ``return_indices`` their int64 indices.

    Raises
    ------
    RuntimeError
        For an input that is not 4-D or 5-D, an empty non-batch dim or a bad
        ``output_size``.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.adaptive_max_pool3d(rg.arange(27.0).reshape(1, 3, 3, 3), (1, 1, 2))
    tensor([[[[25., 26.]]]])
    """
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def _pool_3d(x, kind, kernel_size, stride, ceil_mode):
    if kind == "max":
        return max_pool3d(x, kernel_size, stride, 0, 1, ceil_mode)
    return avg_pool3d(x, kernel_size, stride, 0, ceil_mode)


@composite_op('lp_pool3d')
def lp_pool3d(input: Tensor, norm_type: float, kernel_size: int | tuple[int, int, int],
              stride: int | tuple[int, int, int] | None = None, ceil_mode: bool = False) -> Tensor:
    """3-d power-average pooling: ``(sum of x ** p over each window) ** (1 / p)``.

    ``p = inf`` is max pooling of ``|x|``. Where a window's sum is zero the
    output and its gradient are zero.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.
    norm_type : float
        The power ``p``.
    kernel_size : int or tuple of int
        The window's (depth, height, width).
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    ceil_mode : bool, optional
        Round the output size up (default False).

    Returns
    -------
    Tensor
        The pooled tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.zeros(1, 1, 2, 2, 2)
    >>> x[0, 0, 0, 0, 0], x[0, 0, 1, 1, 1] = 3.0, 4.0
    >>> F.lp_pool3d(x, 2, 2)
    tensor([[[[[5.]]]]])
    """
    kd, kh, kw = _three(kernel_size, "kernel_size", "lp_pool3d", "be a single int, or a tuple of three ints")
    return _lp_pool(input, norm_type, _pool_3d, kd * kh * kw, kernel_size, stride, ceil_mode)


# --- max unpooling ---------------------------------------------------------------------

def _unpool_size(x, k, s, p, output_size):
    # torch's _unpool_output_size: the size max pooling came from, or an
    # output_size within a stride of it
    n = len(k)
    default = [(x.shape[x.ndim - n + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(n)]
    if output_size is None:
        sizes = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        sizes = list(output_size)
        if len(sizes) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                             f"length of '{len(sizes)}'")
        for i in range(n):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < sizes[i] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {i} must be between {lo} and {hi})')
    for i, v in enumerate(sizes):
        if v < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{i}]={v}")
    return tuple(int(v) for v in sizes)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n):
    x, ind = _t(input), _t(indices, "indices")
    k = _ntuple(kernel_size, n, "kernel_size")
    s = k if stride is None else _ntuple(stride, n, "stride")
    p = _ntuple(padding, n, "padding")
    size = _unpool_size(x, k, s, p, output_size)
    kind = max(n, 2)            # 1-d unpooling is torch's 2-d one of width 1
    name = f"max_unpooling{kind}d"
    if ind.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {ind.dtype}")
    if x.ndim + (n == 1) not in (kind + 1, kind + 2):
        raise RuntimeError(f"Input to {name} should be a {kind + 1}d or {kind + 2}d Tensor, but got a tensor with "
                           f"{x.ndim + (n == 1)} dimensions.")
    if tuple(x.shape) != tuple(ind.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(x.shape)}) but "
                           f"got indices tensor with shape: {list(ind.shape)}")
    for d in range(x.ndim - n - 1, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(f"{name}_forward_out_cpu(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got {list(x.shape)} with dimension {d} being empty.")
    if n == 3 and any(v <= 0 for v in s):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(s)}")
    _floating(x, f"max_unpool{kind}d")
    lead = tuple(x.shape[:x.ndim - n])
    plane = int(np.prod(size))
    idx = ind._array.reshape(lead + (-1,))
    if plane and idx.size:
        bad = (idx < 0) | (idx >= plane)
        if bad.any():
            shown = "x".join(map(str, size + (1,) * (n == 1)))
            raise RuntimeError(f"Found an invalid max index: {int(idx[bad][0])} (output volumes are of size "
                               f"{shown})")
    # forward: torch's, each index written in order (a repeated one keeps the
    # last value); backward: torch's too, every input gets the output
    # gradient at its index, repeated or not. The scatter of x - x (zero, with
    # gradient one) carries that gradient; the values come as a constant.
    vals = np.zeros(lead + (plane,), dtype=x.dtype)
    if plane:
        np.put_along_axis(vals, np.asarray(idx), np.asarray(x._array).reshape(lead + (-1,)), axis=-1)
    y = _const(vals, x)
    if x.requires_grad and _c.is_grad_enabled() and plane:
        xf = _reshape(x, lead + (-1,))
        finite = _const(np.isfinite(np.asarray(xf._array)), x)
        link = _c.where(finite, _c.sub(xf, _c.detach(xf)), _c.zeros_like(xf))
        y = _c.add(y, _c.scatter_add(_c.zeros_like(y), -1, _wrap(idx, device=x.device), link))
    return _reshape(y, lead + size)


_UNPOOL_DOC = """
    input : Tensor
        The pooled values, of shape ``(N, C, *spatial)`` or ``(C, *spatial)``.
    indices : Tensor
        The int64 indices the max pooling returned, of the input's shape.
    kernel_size : int or tuple of int
        The max pooling's window.
    stride : int or tuple of int, optional
        The max pooling's stride (default: ``kernel_size``).
    padding : int or tuple of int, optional
        The max pooling's padding (default 0).
    output_size : sequence of int, optional
        The output's spatial size (optionally with the leading two dims);
        within a stride of the default ``(in - 1) * stride + kernel_size -
        2 * padding``.

    Returns
    -------
    Tensor
        Zeros except at the indices, which hold the input's values (the last
        one where an index repeats). The gradient of each input element is
        the output gradient at its index.

    Raises
    ------
    ValueError
        For an ``output_size`` of the wrong length or out of range.
    RuntimeError
        For indices that are not int64, of another shape than the input, or
        outside the output; an input of the wrong rank or with an empty dim.
    NotImplementedError
        For an integer input."""


@composite_op('max_unpool1d')
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None,
                 padding: int | tuple[int] = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """A partial inverse of :func:`max_pool1d`: each value goes back to
    the position its index names, the rest are zeros.

    Parameters
    ----------{unpool}

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> y, i = F.max_pool1d(rg.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
    >>> F.max_unpool1d(y, i, 2)
    tensor([[[0., 3., 2., 0.]]])
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


@composite_op('max_unpool2d')
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    """A partial inverse of :func:`max_pool2d`: each value goes back to
    the position ``h * W + w`` its index names, the rest are zeros.

    Parameters
    ----------{unpool}

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> y, i = F.max_pool2d(rg.tensor([[[[1.0, 5.0], [3.0, 2.0]]]]), 2, return_indices=True)
    >>> F.max_unpool2d(y, i, 2)
    tensor([[[[0., 5.],
              [0., 0.]]]])
    >>> F.max_unpool2d(y, i, 2, output_size=(3, 3)).shape
    (1, 1, 3, 3)
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


@composite_op('max_unpool3d')
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: int | tuple[int, int, int],
                 stride: int | tuple[int, int, int] | None = None, padding: int | tuple[int, int, int] = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    """A partial inverse of :func:`max_pool3d`: each value goes back to
    the position ``(d * H + h) * W + w`` its index names, the rest are zeros.

    Parameters
    ----------{unpool}

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> y, i = F.max_pool3d(rg.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(y, i, 2).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


for _f in (max_unpool1d, max_unpool2d, max_unpool3d):
    _f.__doc__ = (_f.__doc__ or "").replace("{unpool}", _UNPOOL_DOC)


# --- fractional max pooling --------------------------------------------------------------

def _fractional_starts(u, n_in, n_out, k):
    """torch's interval sequence: window starts for each plane's sample u,
    (alpha * (i + u)) truncated, minus (alpha * u) truncated, in the
    samples' dtype (so float32 rounds as torch's float kernel); the last
    window ends at the input's end."""
    dt = u.dtype.type
    seq = np.empty((u.shape[0], n_out), dtype=np.int64)
    if n_out > 1:
        alpha = dt(n_in - k) / dt(n_out - 1)
        i = np.arange(n_out - 1).astype(u.dtype)
        seq[:, :-1] = ((i[None, :] + u[:, None]) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)[:, None]
    if n_out > 0:
        seq[:, -1] = n_in - k
    return seq


def _fractional(input, kernel_size, output_size, output_ratio, samples, n):
    fn = f"fractional_max_pool{n}d"
    x = _t(input)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if n == 2 and len(output_ratio) > 2:        # torch's check: a float has no len() (TypeError), as there
            raise ValueError(f"{fn} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) * (n if len(output_ratio) == 1 else 1) \
            if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * n
        output_size = [int(x.shape[i - n] * ratio[i]) for i in range(n)]
    if samples is None:
        batch = 1 if x.ndim == n + 1 else x.shape[0]
        samples = _c.rand(batch, x.shape[-n - 1], n, dtype=x.dtype, device=x.device)
    three = "three " if n == 3 else ""
    k = _int_tuple(kernel_size, "kernel_size", fn)
    size = _int_tuple(output_size, "output_size", fn)
    for name, v in (("kernel_size", k), ("output_size", size)):
        if len(v) not in (1, n):
            raise RuntimeError(f"{fn}: {name} must either be a single Int or tuple of {three}Ints")
    k, size = k * (n if len(k) == 1 else 1), size * (n if len(size) == 1 else 1)
    where = fn + ("_out" if n == 3 else "")
    if x.ndim not in (n + 1, n + 2) or x.numel() == 0:
        raise RuntimeError(f"{where}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(x.shape)}")
    r = _t(samples, "_random_samples")
    if r.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {r.ndim}")
    batch, planes = (x.shape[0], x.shape[1]) if x.ndim == n + 2 else (1, x.shape[0])
    if r.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got {r.shape[2]}.")
    if r.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if r.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if r.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    _floating(x, fn)
    if any(v <= 0 for v in k):
        raise RuntimeError(f"{fn}(): kernel_size must be positive, but got {list(k)}")
    lead = tuple(x.shape[:x.ndim - n])
    if any(v < 0 for v in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(lead + size)}")
    spatial = tuple(x.shape[x.ndim - n:])
    names = ("time", "height", "width")[3 - n:]
    for name, m, kk, sz in zip(names, size, k, spatial):
        # torch's 3-d check is strict, its 2-d one not
        if m + kk - 1 > sz or (n == 3 and m + kk - 1 == sz):
            raise RuntimeError(f"{where}(): pool {name} {kk} too large relative to input {name} {sz}")
    # sample j of a plane places dim j of 3-d windows; 2-d ones take the width's first
    u = np.asarray(r._array)[:batch].reshape(batch * planes, n)
    order = (1, 0) if n == 2 else (0, 1, 2)
    P, K = batch * planes, int(np.prod(k))
    pos = []                                             # per dim: (P, m, k) input positions
    for i in range(n):
        starts = _fractional_starts(np.ascontiguousarray(u[:, order[i]]), spatial[i], size[i], k[i])
        pos.append(starts[:, :, None] + np.arange(k[i]))
    arr = np.asarray(x._array).reshape((P,) + spatial)
    index = [np.arange(P).reshape((P,) + (1,) * (2 * n))]
    for i in range(n):
        shape = [P] + [1] * (2 * n)
        shape[1 + i], shape[1 + n + i] = size[i], k[i]
        index.append(pos[i].reshape(shape))
    win = arr[tuple(index)].reshape((P,) + size + (K,))
    # torch's scan keeps the first maximum, or the last NaN
    tap = win.argmax(-1) if win.size else np.zeros(win.shape[:-1], np.int64)
    nan = np.isnan(win)
    if nan.any():
        last_nan = K - 1 - nan[..., ::-1].argmax(-1)
        tap = np.where(nan.any(-1), last_nan, tap)
    taps = [(tap // int(np.prod(k[i + 1:]))) % k[i] for i in range(n)]
    flat = np.zeros(tap.shape, dtype=np.int64)
    for i in range(n):
        shape = [1] * (n + 1)
        shape[1 + i] = size[i]
        grid = np.arange(size[i]).reshape(shape)
        row = np.arange(P).reshape([P] + [1] * n)
        flat = flat * spatial[i] + pos[i][row, grid, taps[i]]
    idx = _wrap(flat.reshape(lead + size), device=x.device)
    plane = _reshape(x, lead + (int(np.prod(spatial)),))
    out = _c.take_along_dim(plane, _reshape(idx, lead + (-1,)), dim=-1)
    return _reshape(out, lead + size), idx


_FRACTIONAL_DOC = """
    kernel_size : int or tuple of int
        The window's size, an int for every dim.
    output_size : int or tuple of int, optional
        The output's spatial size.
    output_ratio : float or tuple of float, optional
        The output's size as a fraction of the input's (rounded down); give
        this or ``output_size``.
    return_indices : bool, optional
        Also return each maximum's flat index within its input plane or
        volume, int64 (default False).
    _random_samples : Tensor, optional
        ``(N, C, {n})`` samples in [0, 1) of the input's dtype that place
        the windows (default: drawn with :func:`retrograd.rand`).

    Returns
    -------
    Tensor or tuple of Tensor
        The maxima, and with ``return_indices`` their indices. The gradient
        goes to each window's maximum (the first one on ties).

    Raises
    ------
    ValueError
        For neither ``output_size`` nor ``output_ratio``.
    RuntimeError
        For an input of the wrong rank, samples of the wrong shape or dtype,
        non-positive kernel sizes, or windows that do not fit the input.
    NotImplementedError
        For an integer input."""


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: int | tuple[int, int],
                                       output_size: int | tuple[int, int] | None = None,
                                       output_ratio: float | tuple[float, float] | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """:func:`fractional_max_pool2d` that also returns the indices,
    whatever ``return_indices`` says.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)`` or ``(C, H, W)``.
    kernel_size, output_size, output_ratio, return_indices, _random_samples
        As for :func:`fractional_max_pool2d`.

    Returns
    -------
    tuple of Tensor
        The maxima and their flat indices ``h * W + w``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.fractional_max_pool2d_with_indices(x, 2, output_size=1)
    (tensor([[[[15.]]]]), tensor([[[[15]]]]))
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


@composite_op('fractional_max_pool2d')
def fractional_max_pool2d(input: Tensor, kernel_size: int | tuple[int, int],
                          output_size: int | tuple[int, int] | None = None,
                          output_ratio: float | tuple[float, float] | None = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """2-d fractional max pooling (Graham, 2014): max pooling over
    ``kH x kW`` windows whose pseudo-random steps shrink the input to
    ``output_size``.

    Each plane's two samples place its windows: along a dim of input size
    ``n`` and output size ``m``, window ``i < m - 1`` starts at
    ``floor(a * (i + u)) - floor(a * u)`` with ``a = (n - k) / (m - 1)``,
    the last at ``n - k``. Note: ``output_ratio`` must be a tuple here
    (as torch's function; the module takes a float too).

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)`` or ``(C, H, W)``.{fractional}

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.arange(25.0).reshape(1, 1, 5, 5)
    >>> F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=rg.full((1, 1, 2), 0.5))
    tensor([[[[ 6.,  9.],
              [21., 24.]]]])
    >>> F.fractional_max_pool2d(rg.ones(2, 3, 10, 10), 3, output_ratio=(0.5, 0.5)).shape
    (2, 3, 5, 5)
    """
    out, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return (out, idx) if return_indices else out


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: int | tuple[int, int, int],
                                       output_size: int | tuple[int, int, int] | None = None,
                                       output_ratio: float | tuple[float, float, float] | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """:func:`fractional_max_pool3d` that also returns the indices,
    whatever ``return_indices`` says.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, T, H, W)`` or ``(C, T, H, W)``.
    kernel_size, output_size, output_ratio, return_indices, _random_samples
        As for :func:`fractional_max_pool3d`.

    Returns
    -------
    tuple of Tensor
        The maxima and their flat indices ``(t * H + h) * W + w``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.arange(27.0).reshape(1, 3, 3, 3)
    >>> F.fractional_max_pool3d_with_indices(x, 2, output_size=1)
    (tensor([[[[26.]]]]), tensor([[[[26]]]]))
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


@composite_op('fractional_max_pool3d')
def fractional_max_pool3d(input: Tensor, kernel_size: int | tuple[int, int, int],
                          output_size: int | tuple[int, int, int] | None = None,
                          output_ratio: float | tuple[float, float, float] | None = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    """3-d fractional max pooling (Graham, 2014): max pooling over
    ``kT x kH x kW`` windows whose pseudo-random steps shrink the input to
    ``output_size``.

    The windows are placed along each dim as in :func:`fractional_max_pool2d`
    (samples ``0, 1, 2`` for time, height, width); ``output_size + kernel_size
    - 1`` must be less than the input's size in each dim.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, T, H, W)`` or ``(C, T, H, W)``.{fractional}

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.fractional_max_pool3d(rg.ones(2, 3, 8, 8, 8), 2, output_ratio=0.5).shape
    (2, 3, 4, 4, 4)
    """
    out, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return (out, idx) if return_indices else out


fractional_max_pool2d.__doc__ = (fractional_max_pool2d.__doc__ or "").replace(
    "{fractional}", _FRACTIONAL_DOC.replace("{n}", "2"))
fractional_max_pool3d.__doc__ = (fractional_max_pool3d.__doc__ or "").replace(
    "{fractional}", _FRACTIONAL_DOC.replace("{n}", "3"))
