"""Folding batch norm into the preceding convolution or linear layer, for inference.

In eval mode a batch norm is an affine map per channel, ``y = (x - mean) *
w / sqrt(var + eps) + b``, so it can be merged into the layer before it: one
layer instead of two, with the same output (up to rounding).
"""
from __future__ import annotations

import copy
from typing import Any, TypeVar

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]

M = TypeVar("M")

_BN_ARGS = """bn_rm, bn_rv : Tensor
        The batch norm's running mean and variance, one per channel.
    bn_eps : float
        The batch norm's ``eps``.
    bn_w, bn_b : Tensor or None
        The batch norm's weight and bias (None: 1 and 0)."""


def fuse_conv_bn_eval(conv: M, bn: Any, transpose: bool = False) -> M:
    """A copy of the convolution ``conv`` that computes ``bn(conv(x))`` (both in eval mode).

    Parameters
    ----------
    conv : Module
        A convolution (``rg.nn.Conv2d``, ...), in eval mode; it is not changed.
    bn : Module
        The batch norm that follows it, in eval mode, with running statistics.
    transpose : bool, optional
        ``conv`` is a transposed convolution (its weight's dim 1 holds the
        output channels); default False.

    Returns
    -------
    Module
        A deep copy of ``conv`` with the fused weight and bias.

    Raises
    ------
    AssertionError
        If either module is in training mode, or ``bn`` has no running statistics.

    Examples
    --------
    >>> import retrograd as rg
    >>> conv, bn = rg.nn.Conv2d(2, 3, 3).eval(), rg.nn.BatchNorm2d(3).eval()
    >>> with rg.no_grad():
    ...     _ = bn.running_mean.uniform_(-1, 1)
    ...     _ = bn.running_var.uniform_(0.5, 2)
    >>> from retrograd.nn.utils.fusion import fuse_conv_bn_eval
    >>> fused = fuse_conv_bn_eval(conv, bn)
    >>> x = rg.randn(1, 2, 5, 5)
    >>> float((fused(x) - bn(conv(x))).abs().max()) < 1e-5
    True
    """
    if conv.training or bn.training:  # type: ignore[attr-defined]
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(  # type: ignore[attr-defined]
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,  # type: ignore[attr-defined]
        bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The weight and bias of a convolution followed by a batch norm in eval mode, as one convolution's.

    Each output channel's kernel is scaled by ``bn_w / sqrt(bn_rv + bn_eps)``,
    and the bias becomes ``(conv_b - bn_rm) * bn_w / sqrt(bn_rv + bn_eps) + bn_b``.

    Parameters
    ----------
    conv_w : Tensor
        The convolution's weight.
    conv_b : Tensor or None
        Its bias (None: 0).
    {bn_args}
    transpose : bool, optional
        A transposed convolution's weight (output channels in dim 1); default False.

    Returns
    -------
    tuple of Parameter
        ``(weight, bias)``, in the convolution's dtypes, requiring grad as
        ``conv_w`` (the bias: as ``conv_b``, or False when it was None).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.fusion import fuse_conv_bn_weights
    >>> w, b = fuse_conv_bn_weights(
    ...     rg.ones(2, 1, 3), None, rg.zeros(2), rg.ones(2), 0.0, rg.tensor([2.0, 3.0]), rg.tensor([1.0, 0.0]))
    >>> w[:, 0, 0], b.requires_grad
    (tensor([2., 3.]), False)
    """
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _c.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _c.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _c.zeros_like(bn_rm)
    rsqrt = _c.rsqrt(bn_rv + bn_eps)
    shape = ((1, -1) if transpose else (-1, 1)) + (1,) * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=w_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: M, bn: Any) -> M:
    """A copy of the linear layer ``linear`` that computes ``bn(linear(x))`` (both in eval mode).

    Parameters
    ----------
    linear : Linear
        In eval mode; it is not changed.
    bn : Module
        The batch norm that follows it (``rg.nn.BatchNorm1d``), in eval mode,
        with running statistics and ``num_features`` equal to
        ``linear.out_features`` (or 1).

    Returns
    -------
    Linear
        A deep copy of ``linear`` with the fused weight and bias.

    Raises
    ------
    AssertionError
        If either module is in training mode, the sizes do not match, or
        ``bn`` has no running statistics.

    Examples
    --------
    >>> import retrograd as rg
    >>> lin, bn = rg.nn.Linear(4, 3).eval(), rg.nn.BatchNorm1d(3).eval()
    >>> with rg.no_grad():
    ...     _ = bn.running_mean.uniform_(-1, 1)
    >>> from retrograd.nn.utils.fusion import fuse_linear_bn_eval
    >>> fused = fuse_linear_bn_eval(lin, bn)
    >>> x = rg.randn(5, 4)
    >>> float((fused(x) - bn(lin(x))).abs().max()) < 1e-5
    True
    """
    if linear.training or bn.training:  # type: ignore[attr-defined]
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:  # type: ignore[attr-defined]
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got linear.out_features="
            f"{linear.out_features} and bn.num_features={bn.num_features}")  # type: ignore[attr-defined]
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(  # type: ignore[attr-defined]
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,  # type: ignore[attr-defined]
        bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor, bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """The weight and bias of a linear layer followed by a batch norm in eval mode, as one linear layer's.

    Parameters
    ----------
    linear_w : Tensor
        The linear layer's weight, ``(out_features, in_features)``.
    linear_b : Tensor or None
        Its bias (None: 0).
    {bn_args}

    Returns
    -------
    tuple of Parameter
        ``(weight, bias)``, in the linear layer's dtypes, requiring grad as
        ``linear_w`` (the bias: as ``linear_b``, or False when it was None).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.fusion import fuse_linear_bn_weights
    >>> w, b = fuse_linear_bn_weights(
    ...     rg.ones(2, 3), None, rg.zeros(2), rg.ones(2), 0.0, rg.tensor([2.0, 3.0]), rg.zeros(2))
    >>> w.detach()
    tensor([[2., 2., 2.],
            [3., 3., 3.]])
    """
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = _c.zeros_like(bn_rm)
    scale = bn_w * _c.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


for _fn in (fuse_conv_bn_weights, fuse_linear_bn_weights):
    _fn.__doc__ = str(_fn.__doc__).replace("{bn_args}", _BN_ARGS)
del _fn
