"""More of torch's activation functions, as compositions of core's ops
(re-exported by ``retrograd.nn.functional``): hardtanh, relu6, hardsigmoid,
hardswish, mish, selu, celu, glu, softmin, softsign, tanhshrink, threshold,
softshrink, hardshrink, prelu.

Their gradients are torch's inside each piece; at the exact kinks (``x ==
min_val`` for hardtanh, ``x == ±3`` for hardswish, ...) torch picks one
side's derivative by its kernel's convention, and these may pick the other.
"""
from __future__ import annotations

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import composite_op
from retrograd.nn.functional import _elu_like, _floating, _t

__all__ = ["hardtanh", "relu6", "hardsigmoid", "hardswish", "mish", "selu", "celu", "glu", "softmin",
           "softsign", "tanhshrink", "threshold", "softshrink", "hardshrink", "prelu"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _x(input, name):
    x = _t(input)
    _floating(x, name)
    return x


@composite_op("hardtanh")
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``; the gradient is 1 strictly inside, 0 outside.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    min_val, max_val : float, optional
        The bounds (default -1 and 1).
    inplace : bool, optional
        Accepted for torch compatibility; a new tensor is returned.

    Returns
    -------
    Tensor

    Raises
    ------
    ValueError
        If ``max_val < min_val``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.hardtanh(rg.tensor([-2.0, 0.5, 3.0]))
    tensor([-1. ,  0.5,  1. ])
    """
    if max_val < min_val:
        raise ValueError("max_val cannot be less than min_val")
    x = _x(input, "hardtanh")
    inside = _c.logical_and(_c.gt(x, min_val), _c.lt(x, max_val))
    return _c.where(inside, x, _c.clamp(x, min_val, max_val).detach())


@composite_op("relu6")
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``: :func:`hardtanh` between 0 and 6.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Accepted for torch compatibility.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.relu6(rg.tensor([-1.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0)


@composite_op("hardsigmoid")
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``: a piecewise-linear sigmoid.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Accepted for torch compatibility.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.hardsigmoid(rg.tensor([-4.0, 0.0, 4.0]))
    tensor([0. , 0.5, 1. ])
    """
    return _c.div(hardtanh(_c.add(_x(input, "hardsigmoid"), 3.0), 0.0, 6.0), 6.0)


@composite_op("hardswish")
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (Howard et al., 2019).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Accepted for torch compatibility.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.hardswish(rg.tensor([-4.0, 1.5, 4.0]))
    tensor([-0.   ,  1.125,  4.   ])
    """
    x = _x(input, "hardswish")
    return _c.mul(x, hardsigmoid(x))


@composite_op("mish")
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (Misra, 2019).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Accepted for torch compatibility.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.mish(rg.tensor([0.0, 1.0], dtype=rg.float64))
    tensor([0.        , 0.86509839], dtype=float64)
    """
    x = _x(input, "mish")
    return _c.mul(x, _c.tanh(_c.softplus(x)))


@composite_op("selu")
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants (Klambauer et al., 2017).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Accepted for torch compatibility.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.selu(rg.tensor([-1.0, 1.0], dtype=rg.float64))
    tensor([-1.11133074,  1.05070099], dtype=float64)
    """
    return _c.mul(_elu_like(_x(input, "selu"), _SELU_ALPHA, 1.0), _SELU_SCALE)


@composite_op("celu")
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (Barron, 2017).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    alpha : float, optional
        Default 1; not 0.
    inplace : bool, optional
        Accepted for torch compatibility.

    Returns
    -------
    Tensor

    Raises
    ------
    RuntimeError
        For ``alpha == 0``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.celu(rg.tensor([-1.0, 2.0], dtype=rg.float64), alpha=2.0)
    tensor([-0.78693868,  2.        ], dtype=float64)
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu's alpha must not be 0")
    return _elu_like(_x(input, "celu"), alpha, alpha)


@composite_op("glu")
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor whose ``dim`` has an even size.
    dim : int, optional
        The dim to halve (default -1).

    Returns
    -------
    Tensor
        Half the size along ``dim``.

    Raises
    ------
    RuntimeError
        If ``dim``'s size is odd, or the input is 0-d.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.glu(rg.tensor([2.0, 0.0]))
    tensor([1.])
    """
    x = _x(input, "glu")
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = x.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % x.ndim} is size {size}")
    a, b = _c.split(x, size // 2, dim)
    return _c.mul(a, _c.sigmoid(b))


@composite_op("softmin")
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x, dim)``: weights that favour the smallest entries.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    dim : int
        The dim the weights sum to 1 along.
    dtype : dtype, optional
        Compute in this dtype.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.softmin(rg.tensor([0.0, 0.0]), dim=0)
    tensor([0.5, 0.5])
    """
    from retrograd.nn.functional import softmax
    return softmax(_c.neg(_x(input, "softmin")), dim=dim, _stacklevel=_stacklevel + 1, dtype=dtype)


@composite_op("softsign")
def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.softsign(rg.tensor([-1.0, 3.0]))
    tensor([-0.5 ,  0.75])
    """
    x = _x(input, "softsign")
    return _c.div(x, _c.add(_c.abs(x), 1.0))


@composite_op("tanhshrink")
def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.tanhshrink(rg.tensor([0.0]))
    tensor([0.])
    """
    x = _x(input, "tanhshrink")
    return _c.sub(x, _c.tanh(x))


@composite_op("threshold")
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    threshold : float
        The threshold.
    value : float
        What replaces the entries at or below it.
    inplace : bool, optional
        Accepted for torch compatibility.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.threshold(rg.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    x = _x(input, "threshold")
    return _c.where(_c.gt(x, threshold), x, float(value))


@composite_op("softshrink")
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    lambd : float, optional
        Non-negative (default 0.5).

    Returns
    -------
    Tensor

    Raises
    ------
    RuntimeError
        For a negative ``lambd``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.softshrink(rg.tensor([-2.0, 0.2, 1.0]))
    tensor([-1.5,  0. ,  0.5])
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    x = _x(input, "softshrink")
    shrunk = _c.sub(x, _c.mul(_c.sign(x), lambd))
    return _c.where(_c.gt(_c.abs(x), lambd), shrunk, 0.0)


@composite_op("hardshrink")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    lambd : float, optional
        Default 0.5.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.hardshrink(rg.tensor([-2.0, 0.2, 1.0]))
    tensor([-2.,  0.,  1.])
    """
    x = _x(input, "hardshrink")
    return _c.where(_c.gt(_c.abs(x), lambd), x, 0.0)


@composite_op("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where ``x > 0``, else ``weight * x``, with a learned slope per channel (dim 1).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor, channels in dim 1 (or a 1-d tensor).
    weight : Tensor
        One slope, or one per channel.

    Returns
    -------
    Tensor

    Raises
    ------
    RuntimeError
        If ``weight`` has neither 1 element nor one per channel.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.prelu(rg.tensor([[-1.0, 2.0]]), rg.tensor([0.25]))
    tensor([[-0.25,  2.  ]])
    """
    x = _x(input, "prelu")
    w = _t(weight, "weight")
    n = w.numel()
    channels = x.shape[1] if x.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {channels}.")
    if n != 1 and x.ndim >= 2:
        w = _c.reshape(w, (n,) + (1,) * (x.ndim - 2))
    elif n == 1:
        w = _c.reshape(w, ())
    return _c.where(_c.gt(x, 0.0), x, _c.mul(w, x))
