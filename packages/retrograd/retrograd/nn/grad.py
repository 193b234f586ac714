"""Gradients of the convolutions with respect to their input and weight (torch.nn.grad).

``convNd_input`` is the transposed convolution with the input's size given
explicitly (a strided convolution maps several input sizes to one output
size); for 1-d and 2-d it is core's ``conv2d_input_grad`` op. The weight
gradients, and conv3d's input gradient, are the autograd gradient of the
convolution itself: the convolution is linear in each argument, so the
gradient with respect to a zero placeholder of the right shape is the
answer. Either way the results are differentiable (with respect to the
other argument and ``grad_output``) when grad mode is on.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import retrograd.core as _c
from retrograd import autograd as _autograd
from retrograd.core import Tensor
from retrograd.core import extending as _ext
from retrograd.nn.functional import _ntuple, _t, conv1d, conv2d
from retrograd.nn._conv_pool import conv3d

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]

_CONVS = {1: conv1d, 2: conv2d, 3: conv3d}

_OPTIONS = """stride : int or tuple of int, optional
        The stride of the convolution (default 1).
    padding : int or tuple of int, optional
        Its zero padding on both sides (default 0).
    dilation : int or tuple of int, optional
        Its kernel dilation (default 1).
    groups : int, optional
        Its number of channel groups (default 1)."""

_RAISES = """Raises
    ------
    RuntimeError
        Shapes that do not belong to one convolution with these options
        (ranks, channels, groups, or a ``grad_output`` whose size is not the
        convolution's output size)."""


def _fill(fn):
    fn.__doc__ = (fn.__doc__ or "").replace("{options}", _OPTIONS).replace("{raises}", _RAISES)
    return fn


def _options(n, stride, padding, dilation, groups):
    st, pd, dl = _ntuple(stride, n, "stride"), _ntuple(padding, n, "padding"), _ntuple(dilation, n, "dilation")
    if any(s <= 0 for s in st):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dl):
        raise RuntimeError("dilation should be greater than zero")
    if any(p < 0 for p in pd):
        raise RuntimeError("negative padding is not supported")
    if int(groups) <= 0:
        raise RuntimeError("non-positive groups is not supported")
    return st, pd, dl, int(groups)


def _check_shapes(n, name, in_shape, w_shape, g_shape, st, pd, dl, groups):
    """Raise unless ``in_shape``, ``w_shape`` and ``g_shape`` are one convolution's input, weight and output."""
    rank = n + 2
    if len(w_shape) != rank:
        raise RuntimeError(f"{name}: expected a {rank}-dimensional weight, got size {list(w_shape)}")
    if len(in_shape) != rank:
        raise RuntimeError(f"Expected {rank}-dimensional input for {rank}-dimensional weight {list(w_shape)}, but "
                           f"got {len(in_shape)}-dimensional input of size {list(in_shape)} instead")
    if len(g_shape) != rank:
        raise RuntimeError(f"{name}: expected a {rank}-dimensional grad_output, got size {list(g_shape)}")
    if w_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {list(w_shape)} instead")
    if in_shape[1] != w_shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w_shape)}, expected input{list(in_shape)} "
                           f"to have {w_shape[1] * groups} channels, but got {in_shape[1]} channels instead")
    out = [(i + 2 * p - d * (k - 1) - 1) // s + 1 for i, p, d, k, s in zip(in_shape[2:], pd, dl, w_shape[2:], st)]
    expected = [in_shape[0], w_shape[0], *out]
    if any(o <= 0 for o in out) or list(g_shape) != expected:
        raise RuntimeError(f"{name}: grad_output has size {list(g_shape)}, but a convolution of an input of size "
                           f"{list(in_shape)} with a weight of size {list(w_shape)} and these options gives "
                           f"{expected}")


def _by_autograd(n, wrt_input, shape, other, grad_output, st, pd, dl, groups):
    # the gradient of the (bilinear) convolution with respect to a zero placeholder of `shape`; the graph is
    # kept only when the caller could differentiate the result
    keep = _c.is_grad_enabled() and (other.requires_grad or grad_output.requires_grad)
    dtype = np.result_type(other.dtype, grad_output.dtype)
    with _c.enable_grad():
        leaf = _c.zeros(tuple(shape), dtype=dtype, device=grad_output.device, requires_grad=True)
        args = (leaf, other) if wrt_input else (other, leaf)
        y = _CONVS[n](*args, None, st, pd, dl, groups)
        (res,) = _autograd.grad(y, leaf, grad_output, create_graph=keep)
    return res if keep else res.detach()


def _input_grad(n, name, input_size, weight, grad_output, stride, padding, dilation, groups):
    w, g = _t(weight, "weight"), _t(grad_output, "grad_output")
    st, pd, dl, groups = _options(n, stride, padding, dilation, groups)
    shape = tuple(int(s) for s in input_size)
    _check_shapes(n, name, shape, tuple(w.shape), tuple(g.shape), st, pd, dl, groups)
    if n == 3:
        return _by_autograd(3, True, shape, w, g, st, pd, dl, groups)
    if n == 1:
        # a conv2d of height 1
        g = _c.reshape(g, (g.shape[0], g.shape[1], 1, g.shape[2]))
        w = _c.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
        res = _ext.conv2d_input_grad(g, w, (shape[0], shape[1], 1, shape[2]), (1,) + st, (0, 0, pd[0], pd[0]),
                                     (1,) + dl, groups)
        return _c.reshape(res, shape)
    return _ext.conv2d_input_grad(g, w, shape, st, (pd[0], pd[0], pd[1], pd[1]), dl, groups)


def _weight_grad(n, name, input, weight_size, grad_output, stride, padding, dilation, groups):
    x, g = _t(input), _t(grad_output, "grad_output")
    st, pd, dl, groups = _options(n, stride, padding, dilation, groups)
    shape = tuple(int(s) for s in weight_size)
    _check_shapes(n, name, tuple(x.shape), shape, tuple(g.shape), st, pd, dl, groups)
    return _by_autograd(n, False, shape, x, g, st, pd, dl, groups)


@_fill
def conv1d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: int | tuple[int] = 1,
                 padding: int | tuple[int] = 0, dilation: int | tuple[int] = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv1d`` with respect to its input.

    Parameters
    ----------
    input_size : sequence of int
        The input's shape ``(N, C_in, L)``.
    weight : Tensor
        The weight, ``(C_out, C_in / groups, k)``.
    grad_output : Tensor
        The gradient of the convolution's output, ``(N, C_out, L_out)``.
    {options}

    Returns
    -------
    Tensor
        Of shape ``input_size``.

    {raises}

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.randn(1, 1, 4, requires_grad=True)
    >>> w = rg.randn(1, 1, 2)
    >>> g = rg.randn(1, 1, 3)
    >>> (expected,) = rg.autograd.grad(rg.nn.functional.conv1d(x, w), x, g)
    >>> bool(rg.allclose(rg.nn.grad.conv1d_input(x.shape, w, g), expected))
    True
    """
    return _input_grad(1, "conv1d_input", input_size, weight, grad_output, stride, padding, dilation, groups)


@_fill
def conv1d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: int | tuple[int] = 1,
                  padding: int | tuple[int] = 0, dilation: int | tuple[int] = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv1d`` with respect to its weight.

    Parameters
    ----------
    input : Tensor
        The input, ``(N, C_in, L)``.
    weight_size : sequence of int
        The weight's shape ``(C_out, C_in / groups, k)``.
    grad_output : Tensor
        The gradient of the convolution's output, ``(N, C_out, L_out)``.
    {options}

    Returns
    -------
    Tensor
        Of shape ``weight_size``.

    {raises}

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([[[1.0, 2.0, 3.0]]])
    >>> rg.nn.grad.conv1d_weight(x, (1, 1, 2), rg.ones(1, 1, 2))
    tensor([[[3., 5.]]])
    """
    return _weight_grad(1, "conv1d_weight", input, weight_size, grad_output, stride, padding, dilation, groups)


@_fill
def conv2d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: int | tuple[int, int] = 1,
                 padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv2d`` with respect to its input (a transposed convolution).

    Parameters
    ----------
    input_size : sequence of int
        The input's shape ``(N, C_in, H, W)``: with a stride, several input
        sizes give one output size, so it is needed.
    weight : Tensor
        The weight, ``(C_out, C_in / groups, kH, kW)``.
    grad_output : Tensor
        The gradient of the convolution's output, ``(N, C_out, H_out, W_out)``.
    {options}

    Returns
    -------
    Tensor
        Of shape ``input_size``.

    {raises}

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.ones(1, 1, 2, 2)
    >>> rg.nn.grad.conv2d_input((1, 1, 3, 3), w, rg.ones(1, 1, 2, 2))
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    return _input_grad(2, "conv2d_input", input_size, weight, grad_output, stride, padding, dilation, groups)


@_fill
def conv2d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: int | tuple[int, int] = 1,
                  padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv2d`` with respect to its weight.

    Parameters
    ----------
    input : Tensor
        The input, ``(N, C_in, H, W)``.
    weight_size : sequence of int
        The weight's shape ``(C_out, C_in / groups, kH, kW)``.
    grad_output : Tensor
        The gradient of the convolution's output, ``(N, C_out, H_out, W_out)``.
    {options}

    Returns
    -------
    Tensor
        Of shape ``weight_size``.

    {raises}

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.arange(9.0).reshape(1, 1, 3, 3)
    >>> rg.nn.grad.conv2d_weight(x, (1, 1, 2, 2), rg.ones(1, 1, 2, 2))
    tensor([[[[ 8., 12.],
              [20., 24.]]]])
    """
    return _weight_grad(2, "conv2d_weight", input, weight_size, grad_output, stride, padding, dilation, groups)


@_fill
def conv3d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor,
                 stride: int | tuple[int, int, int] = 1, padding: int | tuple[int, int, int] = 0,
                 dilation: int | tuple[int, int, int] = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv3d`` with respect to its input.

    Parameters
    ----------
    input_size : sequence of int
        The input's shape ``(N, C_in, D, H, W)``.
    weight : Tensor
        The weight, ``(C_out, C_in / groups, kD, kH, kW)``.
    grad_output : Tensor
        The gradient of the convolution's output, ``(N, C_out, D_out, H_out, W_out)``.
    {options}

    Returns
    -------
    Tensor
        Of shape ``input_size``.

    {raises}

    Examples
    --------
    >>> import retrograd as rg
    >>> g = rg.nn.grad.conv3d_input((1, 1, 2, 2, 2), rg.ones(1, 1, 1, 1, 1), rg.ones(1, 1, 1, 1, 1), stride=2)
    >>> g.flatten()
    tensor([1., 0., 0., 0., 0., 0., 0., 0.])
    """
    return _input_grad(3, "conv3d_input", input_size, weight, grad_output, stride, padding, dilation, groups)


@_fill
def conv3d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,
                  stride: int | tuple[int, int, int] = 1, padding: int | tuple[int, int, int] = 0,
                  dilation: int | tuple[int, int, int] = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv3d`` with respect to its weight.

    Parameters
    ----------
    input : Tensor
        The input, ``(N, C_in, D, H, W)``.
    weight_size : sequence of int
        The weight's shape ``(C_out, C_in / groups, kD, kH, kW)``.
    grad_output : Tensor
        The gradient of the convolution's output, ``(N, C_out, D_out, H_out, W_out)``.
    {options}

    Returns
    -------
    Tensor
        Of shape ``weight_size``.

    {raises}

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.ones(1, 1, 2, 2, 2)
    >>> rg.nn.grad.conv3d_weight(x, (2, 1, 1, 1, 1), rg.ones(1, 2, 2, 2, 2)).flatten()
    tensor([8., 8.])
    """
    return _weight_grad(3, "conv3d_weight", input, weight_size, grad_output, stride, padding, dilation, groups)
