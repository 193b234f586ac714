"""More convolutions, pooling, resampling and pixel shuffles as functions
(re-exported by ``retrograd.nn.functional``).

Each one is a composite of core's ops, so gradients of every order come from
the table: the transposed convolutions are a convolution of the input spread
out by the stride (zeros in between) with the flipped, transposed kernel;
conv3d stacks the kernel's depth taps as channels of one conv2d; the 1-d
pools are 2-d pools of height 1; interpolation and adaptive max pooling
gather input elements with integer indices (whose backward sums into the
sources) and weight them with constants.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core import extending as _ext
from retrograd.core.extending import composite_op, wrap as _wrap
from retrograd.nn.functional import (_arr, _check_positive, _conv2d_biased, _conv_padding, _floating,
                                     _int_tuple, _ntuple, _on_device, _t, adaptive_avg_pool2d, avg_pool2d,
                                     max_pool2d)

__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv3d", "max_pool1d",
           "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "adaptive_avg_pool1d",
           "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
           "adaptive_max_pool2d_with_indices", "lp_pool1d", "lp_pool2d", "interpolate", "upsample",
           "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle", "unfold", "fold"]

# core's transposed 2-d convolution (the input gradient of conv2d as an op: GEMM and col2im); it covers
# output_padding < stride, the compositions below the rest
_CONV2D_INPUT_GRAD = _ext.conv2d_input_grad

_TRANSPOSED_DOC = """
    stride : int or tuple of int, optional
        The stride of the convolution this one transposes: the output moves
        by ``stride`` per input element (default 1).
    padding : int or tuple of int, optional
        ``dilation * (kernel_size - 1) - padding`` zeros are added to both
        sides of the spread-out input (default 0): the output is cropped by
        ``padding`` on each side.
    output_padding : int or tuple of int, optional
        Extra elements on one side of the output (default 0); less than
        ``stride`` or ``dilation``. Chooses among the input sizes a strided
        convolution maps to the same output size.
    groups : int, optional
        Split the channels into groups transposed separately (default 1).
    dilation : int or tuple of int, optional
        The spacing between kernel elements (default 1)."""


def _reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    return _c.reshape(x, tuple(shape))


def _const(a: np.ndarray, like: Tensor) -> Tensor:
    # a constant of the computation, on the device of `like`
    return _wrap(_on_device(a, _arr(like)), device=like.device)


# --- transposed convolutions and conv3d ---------------------------------------------

def _conv_transpose(name, input, weight, bias, stride, padding, output_padding, groups, dilation, n):
    x, w = _t(input), _t(weight, "weight")
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(x.shape)}")
    if w.ndim != n + 2:
        raise RuntimeError(f"{name}: expected a {n + 2}-D weight (in_channels, out_channels / groups, *kernel), "
                           f"got weight of size {list(w.shape)}")
    st, dl = _ntuple(stride, n, "stride"), _ntuple(dilation, n, "dilation")
    pd, op = _ntuple(padding, n, "padding"), _ntuple(output_padding, n, "output_padding")
    _check_positive(st, dl)
    if any(p < 0 for p in pd):
        raise RuntimeError("negative padding is not supported")
    if any(o < 0 for o in op):
        raise RuntimeError("negative output_padding is not supported")
    g = int(groups)
    if g <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(o >= s and o >= d for o, s, d in zip(op, st, dl)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got output_padding "
                           f"{list(op)}, stride {list(st)} and dilation {list(dl)}")
    unbatched = x.ndim == n + 1
    if unbatched:
        x = _reshape(x, (1,) + tuple(x.shape))
    cin = x.shape[1]
    if w.shape[0] != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected input{list(x.shape)} to "
                           f"have {w.shape[0]} channels, but got {cin} channels instead")
    if w.shape[0] % g:
        raise RuntimeError(f"Given groups={g}, expected weight to be divisible by {g} at dimension 0, but got "
                           f"weight of size [{list(w.shape)}] instead")
    cout = w.shape[1] * g
    if bias is not None:
        b = _t(bias, "bias")
        if b.ndim != 1 or b.shape[0] != cout:
            raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected bias to be "
                               f"1-dimensional with {cout} elements, but got bias of size {list(b.shape)} instead")
    ks = tuple(w.shape[2:])
    out = [(i - 1) * s - 2 * p + d * (k - 1) + o + 1 for i, s, p, d, k, o in zip(x.shape[2:], st, pd, dl, ks, op)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, out))}). Output size is too small")
    if n == 1:
        # a transposed conv2d of height 1
        x = _reshape(x, (x.shape[0], cin, 1, x.shape[2]))
        w = _reshape(w, (cin, w.shape[1], 1, ks[0]))
        st, pd, op, dl = (1,) + st, (0,) + pd, (0,) + op, (1,) + dl
    if n == 3:
        y = _conv_transpose3d(x, w, bias, st, pd, op, dl, g, out[0])
    else:
        y = _conv_transpose2d(x, w, bias, st, pd, op, dl, g)
    if n == 1:
        y = _reshape(y, (y.shape[0], y.shape[1], y.shape[3]))
    if unbatched:
        y = _reshape(y, y.shape[1:])
    return y


def _conv_transpose2d(x, w, bias, st, pd, op, dl, g):
    N, cin, H, W = x.shape
    kh, kw = w.shape[2:]
    cout = w.shape[1] * g
    if H == W == 1:
        return _conv_transpose2d_pixel(x, w, bias, pd, op, dl, g)
    if all(o < s for o, s in zip(op, st)):
        # output_padding less than the stride: the output is an input conv2d maps onto x
        size = tuple((i - 1) * s - 2 * p + d * (k - 1) + o + 1 for i, s, p, d, k, o in
                     zip((H, W), st, pd, dl, (kh, kw), op))
        y = _CONV2D_INPUT_GRAD(x, w, (N, cout) + size, st, (pd[0], pd[0], pd[1], pd[1]), dl, g)
        return y if bias is None else _c.add(y, _reshape(_t(bias), (-1, 1, 1)))
    if st == (1, 1):
        return _conv_transpose2d_unstrided(x, w, bias, pd, op, dl, g)
    return _conv_transpose2d_phases(x, w, bias, st, pd, op, dl, g)


def _conv_transpose3d(x, w, bias, st, pd, op, dl, g, d_out):
    """The kernel's depth taps become output channels of one transposed
    conv2d over height and width (each input depth slice a batch element);
    each tap's slices are spread out by the depth stride, moved to depth
    ``tap * dilation - padding`` and summed."""
    N, cin, D = x.shape[:3]
    cpg, kd = w.shape[1], w.shape[2]
    cout = cpg * g
    x2 = _reshape(_c.permute(x, (0, 2, 1, 3, 4)), (N * D, cin) + tuple(x.shape[3:]))
    w2 = _reshape(w, (cin, cpg * kd) + tuple(w.shape[3:]))
    y = _conv_transpose2d(x2, w2, None, st[1:], pd[1:], op[1:], dl[1:], g)       # (N * D, cout * kd, Ho, Wo)
    ho, wo = y.shape[2:]
    y = _reshape(y, (N, D, cout, kd, ho, wo))
    sd, n_full = st[0], D * st[0]
    if sd > 1:
        # input depth i lands on depth i * stride: stride - 1 zeros after each
        y = _c.pad(_c.unsqueeze(y, 2), (0, 0, 0, 0, 0, 0, 0, 0, 0, sd - 1))
        y = _reshape(y, (N, n_full, cout, kd, ho, wo))
    total = None
    for j in range(kd):
        tap = _c.getitem(y, (slice(None), slice(None), slice(None), j))          # (N, D * stride, cout, Ho, Wo)
        start = j * dl[0] - pd[0]
        lo, hi = max(0, -start), min(n_full, d_out - start)
        if hi > lo:
            tap = _c.pad(_c.getitem(tap, (slice(None), slice(lo, hi))),
                         (0, 0, 0, 0, 0, 0, start + lo, d_out - start - hi))
        else:       # the tap misses the output (heavy padding): it contributes zeros
            tap = _c.mul(_c.pad(_c.getitem(tap, (slice(None), slice(0, 1))), (0, 0, 0, 0, 0, 0, 0, d_out - 1)), 0.0)
        total = tap if total is None else _c.add(total, tap)
    y = _c.permute(total, (0, 2, 1, 3, 4))
    return y if bias is None else _c.add(y, _reshape(_t(bias), (-1, 1, 1, 1)))


def _dilate_kernel(w, dl):
    # the dilated kernel: dilation - 1 zeros between its taps
    if dl == (1, 1):
        return w
    a, b, kh, kw = w.shape
    w = _c.pad(_reshape(w, (a, b, kh, 1, kw, 1)), (0, dl[1] - 1, 0, 0, 0, dl[0] - 1))
    w = _reshape(w, (a, b, kh * dl[0], kw * dl[1]))
    return _c.getitem(w, (Ellipsis, slice(0, dl[0] * (kh - 1) + 1), slice(0, dl[1] * (kw - 1) + 1)))


def _conv_transpose2d_pixel(x, w, bias, pd, op, dl, g):
    # a 1x1 input (a generator's latent code): each output pixel is one
    # kernel tap times the input, a matrix product with no zeros involved
    N, cin = x.shape[:2]
    w = _dilate_kernel(w, dl)
    cpg, kh, kw = w.shape[1:]
    # the batch goes into the rows of one product per group (a broadcast
    # batch dim would make the weight's gradient a sum of per-sample products)
    xm = _c.permute(_reshape(x, (N, g, cin // g)), (1, 0, 2))
    y = _c.matmul(xm, _reshape(w, (g, cin // g, cpg * kh * kw)))          # (g, N, cpg * kh * kw)
    y = _reshape(_c.permute(y, (1, 0, 2)), (N, g * cpg, kh, kw))
    out = [k - 2 * p + o for k, p, o in zip((kh, kw), pd, op)]
    y = _c.pad(y, (-pd[1], out[1] + pd[1] - kw, -pd[0], out[0] + pd[0] - kh))
    return y if bias is None else _c.add(y, _reshape(_t(bias), (-1, 1, 1)))


def _conv_transpose2d_unstrided(x, w, bias, pd, op, dl, g):
    # stride 1: a convolution with the flipped kernel, its in/out channels
    # swapped within each group, over the input padded by dilation * (k - 1)
    # - padding on each side (plus output_padding after); negative amounts crop
    cin, kh, kw = x.shape[1], w.shape[2], w.shape[3]
    before = [d * (k - 1) - p for d, k, p in zip(dl, (kh, kw), pd)]
    after = [b + o for b, o in zip(before, op)]
    crop = (min(before[1], 0), min(after[1], 0), min(before[0], 0), min(after[0], 0))
    if any(crop):
        x = _c.pad(x, crop)
    conv_pad = (max(before[0], 0), max(after[0], 0), max(before[1], 0), max(after[1], 0))
    wt = _reshape(w, (g, cin // g, w.shape[1], kh, kw))
    wt = _reshape(_c.permute(wt, (0, 2, 1, 3, 4)), (w.shape[1] * g, cin // g, kh, kw))
    return _conv2d_biased(x, _c.flip(wt, (2, 3)), bias, (1, 1), conv_pad, tuple(dl), g)


def _conv_transpose2d_phases(x, w, bias, st, pd, op, dl, g):
    """Strided: output position q * s + r (phase r) only sees kernel taps
    r, r + s, r + 2s, ..., so each phase is a stride-1 convolution of the
    undilated input with that sub-kernel. All s_h * s_w phases are output
    channels of one conv2d (no multiplications by inserted zeros); a
    pixel-shuffle interleaves them and the padding is cropped off."""
    N, cin, H, W = x.shape
    cpg = w.shape[1]                           # output channels per group
    sh, sw = st
    w = _dilate_kernel(w, dl)
    kh, kw = w.shape[2:]
    mh, mw = -(-kh // sh), -(-kw // sw)        # taps per phase
    # tap k = j * s + r -> (j, r); j runs backwards in a convolution
    w = _c.pad(w, (0, mw * sw - kw, 0, mh * sh - kh))
    w = _reshape(w, (g, cin // g, cpg, mh, sh, mw, sw))
    w = _c.flip(w, (3, 5))
    w = _reshape(_c.permute(w, (0, 4, 6, 2, 1, 3, 5)), (g * sh * sw * cpg, cin // g, mh, mw))
    y = _ext.conv2d(x, w, (1, 1), (mh - 1, mh - 1, mw - 1, mw - 1), (1, 1), g)
    qh, qw = y.shape[2:]                       # H + mh - 1, W + mw - 1
    y = _reshape(y, (N, g, sh, sw, cpg, qh, qw))
    y = _reshape(_c.permute(y, (0, 1, 4, 5, 2, 6, 3)), (N, g * cpg, qh * sh, qw * sw))
    # the full output starts at index 0; torch's starts at `padding`
    out = [(i - 1) * s - 2 * p + k + o for i, s, p, k, o in zip((H, W), st, pd, (kh, kw), op)]
    y = _c.pad(y, (-pd[1], out[1] + pd[1] - qw * sw, -pd[0], out[0] + pd[0] - qh * sh))
    return y if bias is None else _c.add(y, _reshape(_t(bias), (-1, 1, 1)))


@composite_op('conv_transpose1d')
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | tuple[int] = 1,
                     padding: int | tuple[int] = 0, output_padding: int | tuple[int] = 0, groups: int = 1,
                     dilation: int | tuple[int] = 1) -> Tensor:
    """A 1-d transposed convolution: the gradient of :func:`conv1d` with
    respect to its input (sometimes called a "deconvolution").

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C_in, L)`` or ``(C_in, L)``.
    weight : Tensor
        Of shape ``(C_in, C_out / groups, k)``.
    bias : Tensor, optional
        Of shape ``(C_out,)``.{transposed}

    Returns
    -------
    Tensor
        Of shape ``(N, C_out, L_out)``, ``L_out = (L - 1) * stride - 2 *
        padding + dilation * (k - 1) + output_padding + 1``.

    Raises
    ------
    RuntimeError
        For inputs or weights of the wrong rank or channels, negative
        padding, non-positive strides, dilations or groups, too large an
        ``output_padding``, or an empty output.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.conv_transpose1d(rg.tensor([[[1.0, 2.0]]]), rg.tensor([[[1.0, 10.0]]]), stride=2)
    tensor([[[ 1., 10.,  2., 20.]]])
    """
    return _conv_transpose("conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


@composite_op('conv_transpose2d')
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | tuple[int, int] = 1,
                     padding: int | tuple[int, int] = 0, output_padding: int | tuple[int, int] = 0,
                     groups: int = 1, dilation: int | tuple[int, int] = 1) -> Tensor:
    """A 2-d transposed convolution: the gradient of :func:`conv2d` with
    respect to its input (sometimes called a "deconvolution").

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C_in, H, W)`` or ``(C_in, H, W)``.
    weight : Tensor
        Of shape ``(C_in, C_out / groups, kH, kW)``.
    bias : Tensor, optional
        Of shape ``(C_out,)``.{transposed}

    Returns
    -------
    Tensor
        Of shape ``(N, C_out, H_out, W_out)``, ``H_out = (H - 1) * stride -
        2 * padding + dilation * (kH - 1) + output_padding + 1`` (likewise W).

    Raises
    ------
    RuntimeError
        For inputs or weights of the wrong rank or channels, negative
        padding, non-positive strides, dilations or groups, too large an
        ``output_padding``, or an empty output.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.ones(1, 1, 2, 2)
    >>> F.conv_transpose2d(x, rg.ones(1, 1, 2, 2))
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    >>> F.conv_transpose2d(rg.ones(8, 16, 4, 4), rg.ones(16, 3, 4, 4), stride=2, padding=1).shape
    (8, 3, 8, 8)
    """
    return _conv_transpose("conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


@composite_op('conv_transpose3d')
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: int | tuple[int, int, int] = 1, padding: int | tuple[int, int, int] = 0,
                     output_padding: int | tuple[int, int, int] = 0, groups: int = 1,
                     dilation: int | tuple[int, int, int] = 1) -> Tensor:
    """A 3-d transposed convolution: the gradient of :func:`conv3d` with
    respect to its input (sometimes called a "deconvolution").

    The kernel's depth taps are computed as extra output channels of one
    :func:`conv_transpose2d` over height and width, then shifted along the
    depth and summed.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.
    weight : Tensor
        Of shape ``(C_in, C_out / groups, kD, kH, kW)``.
    bias : Tensor, optional
        Of shape ``(C_out,)``.{transposed}

    Returns
    -------
    Tensor
        Of shape ``(N, C_out, D_out, H_out, W_out)``, ``D_out = (D - 1) *
        stride - 2 * padding + dilation * (kD - 1) + output_padding + 1``
        (likewise H and W).

    Raises
    ------
    RuntimeError
        For inputs or weights of the wrong rank or channels, negative
        padding, non-positive strides, dilations or groups, too large an
        ``output_padding``, or an empty output.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> y = F.conv_transpose3d(rg.ones(1, 1, 2, 2, 2), rg.ones(1, 1, 2, 2, 2))
    >>> y.shape
    (1, 1, 3, 3, 3)
    >>> y[0, 0, 1]
    tensor([[2., 4., 2.],
            [4., 8., 4.],
            [2., 4., 2.]])
    >>> F.conv_transpose3d(rg.ones(2, 4, 3, 3, 3), rg.ones(4, 1, 4, 4, 4), stride=2, padding=1, groups=2).shape
    (2, 2, 6, 6, 6)
    """
    return _conv_transpose("conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3)


conv_transpose1d.__doc__ = (conv_transpose1d.__doc__ or "").replace("{transposed}", _TRANSPOSED_DOC)
conv_transpose2d.__doc__ = (conv_transpose2d.__doc__ or "").replace("{transposed}", _TRANSPOSED_DOC)
conv_transpose3d.__doc__ = (conv_transpose3d.__doc__ or "").replace("{transposed}", _TRANSPOSED_DOC)


@composite_op('conv3d')
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | tuple[int, int, int] = 1,
           padding: int | tuple[int, int, int] | str = 0, dilation: int | tuple[int, int, int] = 1,
           groups: int = 1) -> Tensor:
    """A 3-d convolution (cross-correlation) of ``input`` with ``weight``.

    The depth taps of the kernel become channels of one :func:`conv2d` over
    height and width (the depth positions go into the batch).

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.
    weight : Tensor
        Of shape ``(C_out, C_in / groups, kD, kH, kW)``.
    bias : Tensor, optional
        Of shape ``(C_out,)``.
    stride : int or tuple of int, optional
        The step between windows (default 1).
    padding : int, tuple of int or {'valid', 'same'}, optional
        Zeros added on both sides of each spatial dim (default 0).
    dilation : int or tuple of int, optional
        The spacing between kernel elements (default 1).
    groups : int, optional
        Split the channels into groups convolved separately (default 1).

    Returns
    -------
    Tensor
        Of shape ``(N, C_out, D_out, H_out, W_out)``, each size ``(size + 2 *
        padding - dilation * (k - 1) - 1) // stride + 1``.

    Raises
    ------
    RuntimeError
        For inputs or weights of the wrong rank or channels, invalid
        options, or a kernel larger than the padded input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.conv3d(rg.ones(1, 1, 3, 3, 3), rg.ones(1, 1, 2, 2, 2)).shape
    (1, 1, 2, 2, 2)
    >>> float(F.conv3d(rg.ones(1, 1, 2, 2, 2), rg.ones(1, 1, 2, 2, 2)).sum())
    8.0
    """
    x, w = _t(input), _t(weight, "weight")
    if x.ndim not in (4, 5):
        raise RuntimeError(f"Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input "
                           f"of size: {list(x.shape)}")
    if w.ndim != 5:
        raise RuntimeError(f"conv3d: expected a 5-D weight, got weight of size {list(w.shape)}")
    unbatched = x.ndim == 4
    if unbatched:
        x = _reshape(x, (1,) + tuple(x.shape))
    st, dl = _ntuple(stride, 3, "stride"), _ntuple(dilation, 3, "dilation")
    _check_positive(st, dl)
    ks = tuple(w.shape[2:])
    pad = _conv_padding(padding, ks, dl, st)
    g = int(groups)
    if g <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if w.shape[0] % g:
        raise RuntimeError(f"Given groups={g}, expected weight to be divisible by {g} at dimension 0, but got "
                           f"weight of size [{list(w.shape)}] instead")
    N, C = x.shape[:2]
    if C != w.shape[1] * g:
        raise RuntimeError(f"Given groups={g}, weight of size {list(w.shape)}, expected input{list(x.shape)} to "
                           f"have {w.shape[1] * g} channels, but got {C} channels instead")
    padded = [s + pad[2 * i] + pad[2 * i + 1] for i, s in enumerate(x.shape[2:])]
    if any(p < d * (k - 1) + 1 for p, d, k in zip(padded, dl, ks)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, ks))}). Kernel size can't be greater than actual input size")
    if pad[0] or pad[1]:
        x = _c.pad(x, (0, 0, 0, 0, pad[0], pad[1]))
    kd, sd, dd = ks[0], st[0], dl[0]
    do = (padded[0] - dd * (kd - 1) - 1) // sd + 1
    H, W = x.shape[3:]
    # depth tap j of output depth i reads input depth i * stride + j * dilation
    taps = [_c.getitem(x, (slice(None), slice(None), slice(j * dd, j * dd + (do - 1) * sd + 1, sd)))
            for j in range(kd)]
    cols = _c.stack(taps, 2) if kd > 1 else _c.unsqueeze(taps[0], 2)       # (N, C, kD, D_out, H, W)
    cols = _reshape(_c.permute(cols, (0, 3, 1, 2, 4, 5)), (N * do, C * kd, H, W))
    w2 = _reshape(w, (w.shape[0], w.shape[1] * kd) + ks[1:])
    y = _conv2d_biased(cols, w2, bias, st[1:], pad[2:], dl[1:], g)
    y = _c.permute(_reshape(y, (N, do) + tuple(y.shape[1:])), (0, 2, 1, 3, 4))
    if unbatched:
        y = _reshape(y, y.shape[1:])
    return y


# --- pooling ---------------------------------------------------------------------------

def _one(v, arg, fn):
    # an int or a 1-sequence (torch's IntArrayRef of size 1)
    t = _int_tuple(v, arg, fn)
    if len(t) != 1:
        raise RuntimeError(f"{fn}() argument '{arg}' should contain one int (got {len(t)})")
    return t[0]


def _pool1d_input(input, fn, torch_style):
    x = _t(input)
    if x.ndim not in (2, 3):
        if torch_style:
            raise RuntimeError(f"{fn}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                               f"input, but got:{list(x.shape)}")
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {fn})")
    # (.., L) -> (.., 1, L): a 2-d pool of height 1
    return x, _reshape(x, tuple(x.shape[:-1]) + (1, x.shape[-1]))


def _unheight(y: Tensor) -> Tensor:
    return _reshape(y, tuple(y.shape[:-2]) + (y.shape[-1],))


def max_pool1d_with_indices(input: Tensor, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None,
                            padding: int | tuple[int] = 0, dilation: int | tuple[int] = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`max_pool1d` that also returns each maximum's index along the
    input's length (int64), whatever ``return_indices`` says.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, L)`` or ``(C, L)``.
    kernel_size, stride, padding, dilation, ceil_mode
        As for :func:`max_pool1d`.
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
    >>> F.max_pool1d_with_indices(rg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """
    out, idx = max_pool2d_with_indices(*_max_pool1d_args(input, kernel_size, stride, padding, dilation, ceil_mode))
    return _unheight(out), _unheight(idx)


def _max_pool1d_args(input, kernel_size, stride, padding, dilation, ceil_mode):
    x, x2 = _pool1d_input(input, "max_pool1d", True)
    k = _one(kernel_size, "kernel_size", "max_pool1d")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _one(stride, "stride",
                                                                                            "max_pool1d")
    p, d = _one(padding, "padding", "max_pool1d"), _one(dilation, "dilation", "max_pool1d")
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    span = x.shape[-1] + 2 * p - d * (k - 1) - 1
    n_out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (n_out - 1) * s >= x.shape[-1] + p:
        n_out -= 1
    if n_out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {n_out}")
    return x2, (1, k), (1, s), (0, p), (1, d), bool(ceil_mode)


def max_pool1d(input: Tensor, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None,
               padding: int | tuple[int] = 0, dilation: int | tuple[int] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """1-d max pooling: the maximum of each window along the last dim.

    The gradient goes to each window's argmax (the first one on ties).

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, L)`` or ``(C, L)``.
    kernel_size : int or tuple of int
        The window's length.
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    padding : int or tuple of int, optional
        Implicit -inf padding at both ends (default 0), at most half the kernel.
    dilation : int or tuple of int, optional
        The spacing between window elements (default 1).
    ceil_mode : bool, optional
        Round the output length up (default False).
    return_indices : bool, optional
        Also return each maximum's index along the length (default False).

    Returns
    -------
    Tensor or tuple of Tensor
        The maxima, and with ``return_indices`` their int64 indices.

    Raises
    ------
    RuntimeError
        For an input that is not 2-D or 3-D, non-positive sizes, too much
        padding or an empty output.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.max_pool1d(rg.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]]), 2)
    tensor([[[3., 5.]]])
    """
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _unheight(max_pool2d(*_max_pool1d_args(input, kernel_size, stride, padding, dilation, ceil_mode)))


def max_pool2d_with_indices(input: Tensor, kernel_size: int | tuple[int, int],
                            stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0,
                            dilation: int | tuple[int, int] = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`max_pool2d` that also returns each maximum's flat index
    ``h * W + w`` within its input plane (int64), whatever ``return_indices`` says.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)`` or ``(C, H, W)``.
    kernel_size, stride, padding, dilation, ceil_mode
        As for :func:`max_pool2d`.
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
    >>> F.max_pool2d_with_indices(rg.tensor([[[[1.0, 5.0], [3.0, 2.0]]]]), 2)
    (tensor([[[[5.]]]]), tensor([[[[1]]]]))
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


@composite_op('avg_pool1d')
def avg_pool1d(input: Tensor, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None,
               padding: int | tuple[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-d average pooling: the mean of each window along the last dim.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, L)`` or ``(C, L)``.
    kernel_size : int or tuple of int
        The window's length.
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    padding : int or tuple of int, optional
        Implicit zeros at both ends (default 0), at most half the kernel.
    ceil_mode : bool, optional
        Round the output length up (default False).
    count_include_pad : bool, optional
        Count the padding zeros in the divisor (default True).

    Returns
    -------
    Tensor
        The window averages.

    Raises
    ------
    RuntimeError
        For an input that is not 2-D or 3-D, or invalid sizes.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.avg_pool1d(rg.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]]), 3)
    tensor([[[2., 5.]]])
    """
    _, x2 = _pool1d_input(input, "avg_pool1d", False)
    k = _one(kernel_size, "kernel_size", "avg_pool1d")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _one(stride, "stride",
                                                                                            "avg_pool1d")
    p = _one(padding, "padding", "avg_pool1d")
    return _unheight(avg_pool2d(x2, (1, k), (1, s), (0, p), bool(ceil_mode), bool(count_include_pad)))


@composite_op('adaptive_avg_pool1d')
def adaptive_avg_pool1d(input: Tensor, output_size: int | tuple[int]) -> Tensor:
    """1-d average pooling to a given output length.

    Output position ``i`` of ``m`` averages input positions ``floor(i * L /
    m)`` to ``ceil((i + 1) * L / m) - 1``, as torch's.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(N, C, L)`` or ``(C, L)``.
    output_size : int or tuple of int
        The output's length.

    Returns
    -------
    Tensor
        Of shape ``(N, C, output_size)`` (or unbatched).

    Raises
    ------
    RuntimeError
        For an input that is not 2-D or 3-D, or a bad ``output_size``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.adaptive_avg_pool1d(rg.arange(5.0).reshape(1, 1, 5), 2)
    tensor([[[1., 3.]]])
    """
    _, x2 = _pool1d_input(input, "adaptive_avg_pool1d", False)
    m = _one(output_size, "output_size", "adaptive_avg_pool1d")
    return _unheight(adaptive_avg_pool2d(x2, (1, m)))


def _adaptive_windows(n, m):
    # (m, K) input positions of each output's window floor(i*n/m) ..
    # ceil((i+1)*n/m)-1, short windows padded with their last position
    i = np.arange(m)
    start, end = (i * n) // m, -((-(i + 1) * n) // m)
    k = int((end - start).max()) if m else 1
    return np.minimum(start[:, None] + np.arange(k), end[:, None] - 1)


def _adaptive_max(x: Tensor, sizes: tuple[int, ...], fn: str) -> tuple[Tensor, Tensor]:
    """Max over torch's adaptive windows of the last len(sizes) dims; the
    gradient goes to the argmax (the first on ties, in row-major order)
    through take_along_dim."""
    nd = len(sizes)
    spatial = tuple(x.shape[x.ndim - nd:])
    lead = tuple(x.shape[:x.ndim - nd])
    arr = _arr(x)
    wins = [_adaptive_windows(n, m) for n, m in zip(spatial, sizes)]          # per dim (m, K)
    index = []
    for i, w in enumerate(wins):
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = w.shape
        index.append(_on_device(w.reshape(shape), arr))
    ks = tuple(w.shape[1] for w in wins)
    win = arr[(Ellipsis,) + tuple(index)].reshape(lead + sizes + (int(np.prod(ks)),))
    k = win.argmax(-1) if win.size else np.zeros(win.shape[:-1], np.int64)
    taps = [(k // int(np.prod(ks[i + 1:]))) % ks[i] for i in range(nd)]
    flat: Any = 0
    for i, w in enumerate(wins):
        shape = [1] * nd
        shape[i] = sizes[i]
        flat = flat * spatial[i] + _on_device(w, arr)[_on_device(np.arange(sizes[i]).reshape(shape), arr), taps[i]]
    idx = _wrap(flat.astype(np.int64), device=x.device)
    plane = _reshape(x, lead + (int(np.prod(spatial)),))
    out = _c.take_along_dim(plane, _reshape(idx, lead + (-1,)), dim=-1)
    return _reshape(out, lead + sizes), idx


def _adaptive_max_checks(x, fn, nd):
    if x.ndim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 "
                               f"'self' (while checking arguments for {fn})")
        raise RuntimeError(f"{fn}(): Expected 3D or 4D tensor, but got: {list(x.shape)}")
    for d in range(x.ndim - nd - 1, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(x.shape)} with dimension {d} being empty")
    if not _c.is_floating_dtype(x.dtype):
        raise NotImplementedError(f'"{fn}" not implemented for {x.dtype} input, as in torch; convert it first, '
                                  "e.g. input.float()")


def _adaptive_sizes(output_size, spatial, fn):
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != len(spatial):
            raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {len(spatial)}")
        sizes = list(output_size)
    else:
        sizes = [output_size] * len(spatial)
    out = tuple(n if s is None else _int_tuple(s, "output_size", fn)[0] for s, n in zip(sizes, spatial))
    if any(s < 0 for s in out):
        raise RuntimeError(f"{fn}(): elements of output_size must be greater than or equal to 0, but got "
                           f"{list(out)}")
    return out


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: int | tuple[int],
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool1d` that also returns each maximum's index
    along the input's length (int64), whatever ``return_indices`` says.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, L)`` or ``(C, L)``.
    output_size : int or tuple of int
        The output's length.
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
    >>> F.adaptive_max_pool1d_with_indices(rg.tensor([[1.0, 4.0, 2.0, 3.0, 0.0]]), 2)
    (tensor([[4., 3.]]), tensor([[1, 3]]))
    """
    x = _t(input)
    _adaptive_max_checks(x, "adaptive_max_pool1d", 1)
    m = _one(output_size, "output_size", "adaptive_max_pool1d")
    if m < 0:
        raise RuntimeError(f"adaptive_max_pool1d(): elements of output_size must be greater than or equal to 0, "
                           f"but got [{m}]")
    return _adaptive_max(x, (m,), "adaptive_max_pool1d")


def adaptive_max_pool1d(input: Tensor, output_size: int | tuple[int], return_indices: bool = False) -> Any:
    """1-d max pooling to a given output length.

    Output position ``i`` of ``m`` takes the maximum of input positions
    ``floor(i * L / m)`` to ``ceil((i + 1) * L / m) - 1``; the gradient goes
    to that maximum (the first one on ties).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(N, C, L)`` or ``(C, L)``.
    output_size : int or tuple of int
        The output's length.
    return_indices : bool, optional
        Also return the maxima's int64 indices along the length (default False).

    Returns
    -------
    Tensor or tuple of Tensor
        The maxima, and with ``return_indices`` their indices.

    Raises
    ------
    RuntimeError
        For an input that is not 2-D or 3-D, an empty non-batch dim or a
        bad ``output_size``.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.adaptive_max_pool1d(rg.tensor([[[1.0, 4.0, 2.0, 3.0, 0.0]]]), 3)
    tensor([[[4., 4., 3.]]])
    """
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: int | None | tuple[int | None, int | None],
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool2d` that also returns each maximum's flat
    index ``h * W + w`` in its input plane (int64), whatever ``return_indices`` says.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)`` or ``(C, H, W)``.
    output_size : int, None or tuple of (int or None)
        The output's (height, width); None keeps the input's size.
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
    >>> F.adaptive_max_pool2d_with_indices(rg.tensor([[[1.0, 4.0], [3.0, 2.0]]]), 1)
    (tensor([[[4.]]]), tensor([[[1]]]))
    """
    x = _t(input)
    _adaptive_max_checks(x, "adaptive_max_pool2d", 2)
    sizes = _adaptive_sizes(output_size, tuple(x.shape[-2:]), "adaptive_max_pool2d")
    return _adaptive_max(x, sizes, "adaptive_max_pool2d")


def adaptive_max_pool2d(input: Tensor, output_size: int | None | tuple[int | None, int | None],
                        return_indices: bool = False) -> Any:
    """2-d max pooling to a given output size.

    The windows are those of :func:`adaptive_avg_pool2d`; the gradient goes
    to each window's maximum (the first one on ties).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(N, C, H, W)`` or ``(C, H, W)``.
    output_size : int, None or tuple of (int or None)
        The output's (height, width): an int for both; None keeps the
        input's size in that dim.
    return_indices : bool, optional
        Also return each maximum's flat index ``h * W + w`` in its plane
        (default False).

    Returns
    -------
    Tensor or tuple of Tensor
        The maxima, and with ``return_indices`` their int64 indices.

    Raises
    ------
    RuntimeError
        For an input that is not 3-D or 4-D, an empty non-batch dim or a bad
        ``output_size``.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.adaptive_max_pool2d(rg.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    out, idx = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def _lp_pool(input, norm_type, pool, ksize_prod, kernel_size, stride, ceil_mode):
    x = _t(input)
    p = float(norm_type)
    if p == math.inf:
        return pool(_c.abs(x), "max", kernel_size, stride, ceil_mode)
    if p == -math.inf:
        return _c.neg(pool(_c.neg(_c.abs(x)), "max", kernel_size, stride, ceil_mode))
    total = _c.mul(pool(_c.pow(x, norm_type), "avg", kernel_size, stride, ceil_mode), ksize_prod)
    # where a window sums to zero the output is zero with a zero gradient, as
    # torch's (its root would have an infinite slope there)
    zero = _c.eq(total, 0)
    root = _c.pow(_c.where(zero, _c.ones_like(total), total), 1.0 / norm_type)
    return _c.where(zero, _c.zeros_like(total), root)


def _pool_1d(x, kind, kernel_size, stride, ceil_mode):
    if kind == "max":
        return max_pool1d(x, kernel_size, stride, 0, 1, ceil_mode)
    return avg_pool1d(x, kernel_size, stride, 0, ceil_mode)


def _pool_2d(x, kind, kernel_size, stride, ceil_mode):
    if kind == "max":
        return max_pool2d(x, kernel_size, stride, 0, 1, ceil_mode)
    return avg_pool2d(x, kernel_size, stride, 0, ceil_mode)


@composite_op('lp_pool1d')
def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: int | tuple[int] | None = None,
              ceil_mode: bool = False) -> Tensor:
    """1-d power-average pooling: ``(sum of x ** p over each window) ** (1 / p)``.

    ``p = inf`` is max pooling of ``|x|``. Where a window's sum is zero the
    output and its gradient are zero.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, L)`` or ``(C, L)``.
    norm_type : float
        The power ``p``.
    kernel_size : int
        The window's length.
    stride : int, optional
        The step between windows (default: ``kernel_size``).
    ceil_mode : bool, optional
        Round the output length up (default False).

    Returns
    -------
    Tensor
        The pooled tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.lp_pool1d(rg.tensor([[[3.0, 4.0, 1.0, 0.0]]]), 2, 2)
    tensor([[[5., 1.]]])
    """
    k = _one(kernel_size, "kernel_size", "lp_pool1d")
    return _lp_pool(input, norm_type, _pool_1d, k, kernel_size, stride, ceil_mode)


@composite_op('lp_pool2d')
def lp_pool2d(input: Tensor, norm_type: float, kernel_size: int | tuple[int, int],
              stride: int | tuple[int, int] | None = None, ceil_mode: bool = False) -> Tensor:
    """2-d power-average pooling: ``(sum of x ** p over each window) ** (1 / p)``.

    ``p = inf`` is max pooling of ``|x|``. Where a window's sum is zero the
    output and its gradient are zero.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)`` or ``(C, H, W)``.
    norm_type : float
        The power ``p``.
    kernel_size : int or tuple of int
        The window's (height, width).
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
    >>> F.lp_pool2d(rg.tensor([[[[3.0, 0.0], [0.0, 4.0]]]]), 2, 2)
    tensor([[[[5.]]]])
    """
    kh, kw = _ntuple(kernel_size, 2, "kernel_size")
    return _lp_pool(input, norm_type, _pool_2d, kh * kw, kernel_size, stride, ceil_mode)


# --- resampling ------------------------------------------------------------------------

_INTERP_MODES = ("nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact")
_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def _scale_value(scale, n_in, n_out, dt):
    # torch's compute_scales_value: the inverse of a given factor, else in / out
    if scale is not None and scale > 0:
        return dt(1.0 / scale)
    return dt(n_in) / dt(n_out)


def _nearest_taps(n_in, n_out, scale, exact):
    dst = np.arange(n_out)
    if not exact and n_out == n_in:
        return dst[:, None], None
    if not exact and n_out == 2 * n_in:
        return (dst >> 1)[:, None], None
    s = _scale_value(scale, n_in, n_out, np.float32)
    # float32 arithmetic, as torch's kernel, so that the same indices round the same way
    src = ((dst + 0.5) * np.float64(s)).astype(np.float32) if exact else dst.astype(np.float32) * s
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)[:, None], None


def _source_positions(n_in, n_out, align_corners, scale, dt, cubic):
    # torch's area_pixel_compute_scale and area_pixel_compute_source_index
    dst = np.arange(n_out).astype(dt)
    if align_corners:
        ratio = dt(n_in - 1) / dt(n_out - 1) if n_out > 1 else dt(0)
        return ratio * dst
    ratio = _scale_value(scale, n_in, n_out, dt)
    src = ratio * (dst + dt(0.5)) - dt(0.5)
    return src if cubic else np.maximum(src, dt(0))


def _linear_taps(n_in, n_out, align_corners, scale, dt):
    if n_out == n_in:
        return np.arange(n_out)[:, None], None
    real = _source_positions(n_in, n_out, align_corners, scale, dt, False)
    i0 = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    lam = np.clip(real - i0.astype(dt), dt(0), dt(1)).astype(dt)
    i1 = i0 + (i0 < n_in - 1)
    return np.stack([i0, i1], 1), np.stack([dt(1) - lam, lam], 1)


def _cubic_taps(n_in, n_out, align_corners, scale, dt):
    real = _source_positions(n_in, n_out, align_corners, scale, dt, True)
    i = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    t = np.clip(real - i.astype(dt), dt(0), dt(1)).astype(dt)
    a = dt(-0.75)

    def near(x):      # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):       # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    one = dt(1)
    w = np.stack([far(t + one), near(t), near(one - t), far(one - t + one)], 1).astype(dt)
    idx = np.clip(i[:, None] - 1 + np.arange(4), 0, n_in - 1)
    return idx, w


def _area_taps(n_in, n_out, dt):
    idx = _adaptive_windows(n_in, n_out)
    i = np.arange(n_out)
    length = -((-(i + 1) * n_in) // n_out) - (i * n_in) // n_out
    w = np.where(np.arange(idx.shape[1]) < length[:, None], dt(1) / length[:, None].astype(dt), dt(0))
    return idx, w.astype(dt)


def _resample(x: Tensor, d: int, idx: np.ndarray, w: np.ndarray | None) -> Tensor:
    """Output position i along dim d: sum_k w[i, k] * x[idx[i, k]] (one
    gather; index_select's backward sums into the sources)."""
    m, taps = idx.shape
    if w is None and taps == 1 and m == x.shape[d] and (idx[:, 0] == np.arange(m)).all():
        return x
    y = _c.index_select(x, d, _const(np.ascontiguousarray(idx.reshape(-1), dtype=np.int64), x))
    if w is None:
        return y
    shape = tuple(x.shape[:d]) + (m, taps) + tuple(x.shape[d + 1:])
    wt = _const(w.astype(x.dtype).reshape((m, taps) + (1,) * (x.ndim - d - 1)), x)
    return _c.sum(_c.mul(_reshape(y, shape), wt), d + 1)


def _interp_sizes(x, size, scale_factor, mode, recompute_scale_factor):
    dim = x.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(x.shape[2:])} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(s) for s in size]}")
            sizes = [int(s) for s in size]
        else:
            if not isinstance(size, (int, np.integer)) or isinstance(size, bool):
                raise TypeError(f"interpolate(): size must be an int or a tuple of ints, not {type(size).__name__}")
            sizes = [int(size)] * dim
        scales = [None] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(x.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        # the output size is floor(size * factor); unless recomputed, the
        # factor itself (not size_out / size_in) places the samples
        sizes = [int(math.floor(n * s)) for n, s in zip(x.shape[2:], scales)]
        if recompute_scale_factor or mode == "area":
            scales = [None] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    return sizes, scales


def _check_interp_input(x, sizes, mode):
    names = _SPATIAL[len(sizes)]
    ins, outs = tuple(x.shape[2:]), tuple(sizes)
    if any(n <= 0 for n in ins + outs):
        def fmt(v):
            return ", ".join(f"{c}: {n}" for c, n in zip(names, v))
        sep = " and" if len(sizes) == 1 else ""
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({fmt(ins)}){sep} "
                           f"output ({fmt(outs)})")
    if x.shape[1] == 0:
        raise RuntimeError(f"Non-empty {x.ndim}D data tensor expected but got a tensor with sizes {list(x.shape)}")
    if mode in ("nearest", "nearest-exact"):
        if not _c.is_floating_dtype(x.dtype) and x.dtype != np.uint8:
            raise NotImplementedError(f'"{mode}" interpolation is not implemented for {x.dtype} input, as in torch; '
                                      "convert it first, e.g. input.float()")
    else:
        _floating(x, f"upsample_{mode}")


@composite_op('interpolate')
def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of ``input`` (all dims after the first two).

    Modes:

    - ``'nearest'``: output ``i`` copies input ``floor(i * scale)`` (torch's
      historical rule, as OpenCV's); ``'nearest-exact'``: input
      ``floor((i + 0.5) * scale)`` (as PIL and scikit-image).
    - ``'linear'`` (3-D input), ``'bilinear'`` (4-D), ``'trilinear'`` (5-D):
      weighted mean of the two nearest inputs along each dim.
    - ``'bicubic'`` (4-D): cubic convolution (``a = -0.75``) over four
      inputs along each dim; it can overshoot the input's range.
    - ``'area'``: the mean over each output's window, as :func:`adaptive_avg_pool2d`.

    ``scale`` is ``in / out``, or ``1 / scale_factor`` when a factor is
    given and ``recompute_scale_factor`` is not True. With ``align_corners``
    the corner samples of input and output coincide.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, W)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
    size : int or tuple of int, optional
        The output's spatial size.
    scale_factor : float or tuple of float, optional
        Multiplier of the spatial size (the output size is rounded down).
        Give exactly one of ``size`` and ``scale_factor``.
    mode : str, optional
        ``'nearest'`` (default), ``'nearest-exact'``, ``'linear'``,
        ``'bilinear'``, ``'bicubic'``, ``'trilinear'`` or ``'area'``.
    align_corners : bool, optional
        For the interpolating modes only: align the corner pixels' centres
        (default False).
    recompute_scale_factor : bool, optional
        Place the samples by the rounded output size instead of the given
        ``scale_factor``.
    antialias : bool, optional
        Not supported (must be False).

    Returns
    -------
    Tensor
        Of shape ``(N, C, *size)``.

    Raises
    ------
    ValueError
        For both or neither of ``size`` and ``scale_factor``, lengths that do
        not match the spatial dims, ``align_corners`` with a non-interpolating
        mode, ``recompute_scale_factor`` with ``size``.
    TypeError
        For a ``size`` that is not ints.
    RuntimeError
        For an empty input or output size.
    NotImplementedError
        For a mode that does not fit the input's rank, an unknown mode,
        integer input to the interpolating modes, or ``antialias=True``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([[[1.0, 2.0, 4.0]]])
    >>> F.interpolate(x, scale_factor=2)
    tensor([[[1., 1., 2., 2., 4., 4.]]])
    >>> F.interpolate(x, size=5, mode="linear", align_corners=True)
    tensor([[[1. , 1.5, 2. , 3. , 4. ]]])
    >>> F.interpolate(rg.ones(1, 3, 4, 4), scale_factor=1.5, mode="bilinear").shape
    (1, 3, 6, 6)
    """
    x = _t(input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    sizes, scales = _interp_sizes(x, size, scale_factor, mode, recompute_scale_factor)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and x.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    wanted = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "area": (3, 4, 5), "linear": (3,),
              "bilinear": (4,), "trilinear": (5,), "bicubic": (4,)}.get(mode, ())
    if x.ndim not in wanted:
        need = {"linear": 3, "bilinear": 4, "trilinear": 5}.get(mode)
        if need is not None and x.ndim in (3, 4, 5):
            raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs {need}D input")
        if mode == "lanczos" and x.ndim == 4:
            raise NotImplementedError("interpolate: mode 'lanczos' (which needs antialias=True) is not supported "
                                      "in retrograd; use 'bicubic'")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the "
                                  f"modes: {_INTERP_MODES} (got {mode})")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported in retrograd; low-pass the input "
                                  "first (e.g. F.avg_pool2d) or resize without antialiasing")
    _check_interp_input(x, sizes, mode)
    if mode == "area" and x.ndim == 3:
        return adaptive_avg_pool1d(x, sizes[0])
    if mode == "area" and x.ndim == 4:
        return adaptive_avg_pool2d(x, tuple(sizes))
    dt = np.float64 if x.dtype == np.float64 else np.float32
    y = x
    for d in range(x.ndim - 1, 1, -1):       # the last dim first, as torch's separable kernels
        n_in, n_out, s = x.shape[d], sizes[d - 2], scales[d - 2]
        if mode in ("nearest", "nearest-exact"):
            idx, w = _nearest_taps(n_in, n_out, s, mode == "nearest-exact")
        elif mode == "bicubic":
            idx, w = _cubic_taps(n_in, n_out, bool(align_corners), s, dt)
        elif mode == "area":
            idx, w = _area_taps(n_in, n_out, dt)
        else:
            idx, w = _linear_taps(n_in, n_out, bool(align_corners), s, dt)
        y = _resample(y, d, idx, w)
    return _c.clone(y) if y is x else y


def upsample(input: Tensor, size: int | Sequence[int] | None = None,
             scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`interpolate` (warns, as torch's).

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, *spatial)``.
    size, scale_factor, mode, align_corners
        As for :func:`interpolate`.

    Returns
    -------
    Tensor
        The resized tensor.

    Examples
    --------
    >>> import warnings
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample(rg.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: int | Sequence[int] | None = None,
                     scale_factor: float | None = None) -> Tensor:
    """Deprecated: :func:`interpolate` with ``mode='nearest'`` (warns, as torch's).

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, *spatial)``.
    size, scale_factor
        As for :func:`interpolate`.

    Returns
    -------
    Tensor
        The resized tensor.

    Examples
    --------
    >>> import warnings
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_nearest(rg.ones(1, 1, 2, 2), scale_factor=2).shape
    (1, 1, 4, 4)
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: int | Sequence[int] | None = None,
                      scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """Deprecated: :func:`interpolate` with ``mode='bilinear'`` and
    ``align_corners=True`` (warns, as torch's).

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)``.
    size, scale_factor
        As for :func:`interpolate`.

    Returns
    -------
    Tensor
        The resized tensor.

    Examples
    --------
    >>> import warnings
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_bilinear(rg.tensor([[[[0.0, 3.0]]]]), size=(1, 4))
    tensor([[[[0., 1., 2., 3.]]]])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --- pixel shuffles, fold and unfold ---------------------------------------------------

def _factor(v, name, fn):
    f = _int_tuple(v, name, fn)
    if len(f) != 1:
        raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(v).__name__}")
    if f[0] <= 0:
        raise RuntimeError(f"{fn} expects a positive {name}, but got {f[0]}")
    return f[0]


@composite_op('pixel_shuffle')
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)``: each
    group of ``r**2`` channels becomes an ``r x r`` block of pixels.

    Parameters
    ----------
    input : Tensor
        At least 3-D, the channels third from last.
    upscale_factor : int
        ``r``.

    Returns
    -------
    Tensor
        Of shape ``(*, C, H * r, W * r)``.

    Raises
    ------
    RuntimeError
        For fewer than 3 dims, a non-positive factor or channels not
        divisible by ``r**2``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.pixel_shuffle(rg.arange(4.0).reshape(4, 1, 1), 2)
    tensor([[[0., 1.],
             [2., 3.]]])
    """
    x = _t(input)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with {x.ndim} "
                           "dimension(s)")
    r = _factor(upscale_factor, "upscale_factor", "pixel_shuffle")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    y = _reshape(x, tuple(lead) + (c // (r * r), r, r, h, w))
    y = _c.permute(y, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return _reshape(y, tuple(lead) + (c // (r * r), h * r, w * r))


@composite_op('pixel_unshuffle')
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """The inverse of :func:`pixel_shuffle`: ``(*, C, H * r, W * r)`` into
    ``(*, C * r**2, H, W)``.

    Parameters
    ----------
    input : Tensor
        At least 3-D, the channels third from last.
    downscale_factor : int
        ``r``.

    Returns
    -------
    Tensor
        Of shape ``(*, C * r**2, H, W)``.

    Raises
    ------
    RuntimeError
        For fewer than 3 dims, a non-positive factor or a height or width
        not divisible by ``r``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.pixel_unshuffle(rg.arange(4.0).reshape(1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    x = _t(input)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{x.ndim} dimension(s)")
    r = _factor(downscale_factor, "downscale_factor", "pixel_unshuffle")
    *lead, c, h, w = x.shape
    for name, s, d in (("height", h, -2), ("width", w, -1)):
        if s % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={s} is not divisible by {r}")
    n = len(lead)
    y = _reshape(x, tuple(lead) + (c, h // r, r, w // r, r))
    y = _c.permute(y, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return _reshape(y, tuple(lead) + (c * r * r, h // r, w // r))


def _block_positions(size, k, d, p, s):
    # (k, n_blocks) positions in the padded dim read by each kernel tap and block
    n = (size + 2 * p - d * (k - 1) - 1) // s + 1
    return np.arange(k)[:, None] * d + np.arange(max(n, 0))[None, :] * s, n


def _fold_args(kernel_size, dilation, padding, stride, fn):
    out = [_ntuple(v, 2, name) for v, name in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                (padding, "padding"), (stride, "stride"))]
    k, d, p, s = out
    if any(v <= 0 for v in k + d + s) or any(v < 0 for v in p):
        raise RuntimeError(f"{fn}: kernel_size, dilation and stride must be greater than zero and padding "
                           f"non-negative, but got kernel_size={k}, dilation={d}, padding={p}, stride={s}")
    return k, d, p, s


@composite_op('unfold')
def unfold(input: Tensor, kernel_size: int | tuple[int, int], dilation: int | tuple[int, int] = 1,
           padding: int | tuple[int, int] = 0, stride: int | tuple[int, int] = 1) -> Tensor:
    """Extract the sliding blocks of a batched image as columns (im2col).

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)`` or ``(C, H, W)``.
    kernel_size : int or tuple of int
        The block's (height, width).
    dilation : int or tuple of int, optional
        The spacing between block elements (default 1).
    padding : int or tuple of int, optional
        Zeros added on both sides (default 0).
    stride : int or tuple of int, optional
        The step between blocks (default 1).

    Returns
    -------
    Tensor
        Of shape ``(N, C * kH * kW, L)``, ``L`` the number of blocks; each
        column one block, channel-major.

    Raises
    ------
    IndexError
        For an input of fewer than 3 dims (as torch's).
    RuntimeError
        For an input of more than 4 dims, bad sizes, or no block.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.unfold(rg.arange(9.0).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    x = _t(input)
    if x.ndim < 3:
        # torch's im2col reads a channel dim that is not there
        n = max(x.ndim, 1)
        raise IndexError(f"unfold: Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                         f"{x.ndim}): a 3-D (unbatched) or 4-D (batched) input is needed")
    if x.ndim > 4:
        raise RuntimeError(f"unfold: expected a 3-D (unbatched) or 4-D (batched) input, but got input of size "
                           f"{list(x.shape)}")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride, "unfold")
    rows, oh = _block_positions(x.shape[-2], k[0], d[0], p[0], s[0])
    cols, ow = _block_positions(x.shape[-1], k[1], d[1], p[1], s[1])
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size {tuple(x.shape[-2:])}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, calculated shape of the array of sliding blocks as ({oh}, {ow}), but its "
                           "components must be at least one.")
    if p[0] or p[1]:
        x = _c.pad(x, (p[1], p[1], p[0], p[0]))
    lead = tuple(x.shape[:-3])
    c = x.shape[-3]
    arr = x._array
    r = _on_device(rows[:, None, :, None], arr)
    q = _on_device(cols[None, :, None, :], arr)
    blocks = _c.getitem(x, (Ellipsis, r, q))           # (.., C, kH, kW, oh, ow)
    return _reshape(blocks, lead + (c * k[0] * k[1], oh * ow))


@composite_op('fold')
def fold(input: Tensor, output_size: int | tuple[int, int], kernel_size: int | tuple[int, int],
         dilation: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
         stride: int | tuple[int, int] = 1) -> Tensor:
    """Sum columns of sliding blocks back into an image (col2im), the
    adjoint of :func:`unfold`: overlapping block elements add up.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C * kH * kW, L)`` or ``(C * kH * kW, L)``.
    output_size : int or tuple of int
        The image's (height, width).
    kernel_size : int or tuple of int
        The block's (height, width).
    dilation : int or tuple of int, optional
        The spacing between block elements (default 1).
    padding : int or tuple of int, optional
        Padding of the image the blocks were taken from (default 0).
    stride : int or tuple of int, optional
        The step between blocks (default 1).

    Returns
    -------
    Tensor
        Of shape ``(N, C, H, W)`` or ``(C, H, W)``.

    Raises
    ------
    RuntimeError
        For an input that is not 2-D or 3-D, channels not divisible by the
        block size, or a number of blocks that does not fit ``output_size``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.fold(rg.ones(1, 4, 4), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    x = _t(input)
    if x.ndim not in (2, 3) or any(s == 0 for s in x.shape[x.ndim - 2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(x.shape)}")
    size = _ntuple(output_size, 2, "output_size")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride, "fold")
    kk = k[0] * k[1]
    if x.shape[-2] % kk:
        raise RuntimeError(f"Expected size of input's dimension {x.ndim - 2} to be divisible by the product of "
                           f"kernel_size, but got input.size({x.ndim - 2})={x.shape[-2]} and kernel_size={k}.")
    rows, oh = _block_positions(size[0], k[0], d[0], p[0], s[0])
    cols, ow = _block_positions(size[1], k[1], d[1], p[1], s[1])
    if oh * ow != x.shape[-1] or oh < 1 or ow < 1:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension {x.ndim - 1} to match the calculated number of "
                           f"sliding blocks {oh} * {ow} = {oh * ow}, but got input.size({x.ndim - 1})={x.shape[-1]}.")
    lead = tuple(x.shape[:-2])
    c = x.shape[-2] // kk
    hp, wp = size[0] + 2 * p[0], size[1] + 2 * p[1]
    # each column element's position in the flattened padded image
    flat = (rows[:, None, :, None] * wp + cols[None, :, None, :]).reshape(-1)
    src = _reshape(x, lead + (c, kk * oh * ow))
    index = np.ascontiguousarray(np.broadcast_to(flat, lead + (c, flat.size)))
    y = _c.scatter_add(_c.zeros(lead + (c, hp * wp), dtype=x.dtype, device=x.device), -1, _const(index, x), src)
    y = _reshape(y, lead + (c, hp, wp))
    if p[0] or p[1]:
        y = _c.pad(y, (-p[1], -p[1], -p[0], -p[0]))
    return y
