"""More of torch's activation functions, as compositions of core's ops
(re-exported by ``retrograd.nn.functional``): hardtanh, relu6, hardsigmoid,
hardswish, mish, selu, celu, glu, softmin, softsign, tanhshrink, threshold,
softshrink, hardshrink, prelu, rrelu, gumbel_softmax, channel_shuffle, and
the in-place forms hardtanh_, selu_, celu_, threshold_, rrelu_.

With ``inplace=True`` a function computes its result from a copy of the
input and writes it back as one tracked in-place op (functional's
``_write_back``), as torch's in-place kernels: the input's version moves,
and a leaf that requires grad raises.

Their gradients are torch's inside each piece; at the exact kinks (``x ==
min_val`` for hardtanh, ``x == ±3`` for hardswish, ...) torch picks one
side's derivative by its kernel's convention, and these may pick the other.
"""
from __future__ import annotations

import warnings

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import composite_op
from retrograd.nn.functional import _elu_like, _floating, _t, _write_back, leaky_relu

__all__ = ["hardtanh", "relu6", "hardsigmoid", "hardswish", "mish", "selu", "celu", "glu", "softmin",
           "softsign", "tanhshrink", "threshold", "softshrink", "hardshrink", "prelu", "hardtanh_", "selu_", "celu_",
           "threshold_", "rrelu", "rrelu_", "gumbel_softmax", "channel_shuffle", "native_channel_shuffle"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _x(input, name):
    x = _t(input)
    _floating(x, name)
    return x


def _apply(input, name, inplace, compute):
    # compute(x) out of place, or (inplace) from a copy, written back into input
    x = _x(input, name)
    if not inplace:
        return compute(x)
    return _write_back(x, compute(x.clone()))


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
        Overwrite ``input`` and return it (default False).

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

    def compute(x):
        inside = _c.logical_and(_c.gt(x, min_val), _c.lt(x, max_val))
        return _c.where(inside, x, _c.clamp(x, min_val, max_val).detach())
    return _apply(input, "hardtanh", inplace, compute)


@composite_op("relu6")
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``: :func:`hardtanh` between 0 and 6.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Overwrite ``input`` and return it (default False).

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
    return hardtanh(input, 0.0, 6.0, inplace)


@composite_op("hardsigmoid")
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``: a piecewise-linear sigmoid.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Overwrite ``input`` and return it (default False).

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
    return _apply(input, "hardsigmoid", inplace, lambda x: _c.div(hardtanh(_c.add(x, 3.0), 0.0, 6.0), 6.0))


@composite_op("hardswish")
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (Howard et al., 2019).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Overwrite ``input`` and return it (default False).

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
    return _apply(input, "hardswish", inplace, lambda x: _c.mul(x, hardsigmoid(x)))


@composite_op("mish")
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (Misra, 2019).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Overwrite ``input`` and return it (default False).

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
    return _apply(input, "mish", inplace, lambda x: _c.mul(x, _c.tanh(_c.softplus(x))))


@composite_op("selu")
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants (Klambauer et al., 2017).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Overwrite ``input`` and return it (default False).

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
    return _apply(input, "selu", inplace, lambda x: _c.mul(_elu_like(x, _SELU_ALPHA, 1.0), _SELU_SCALE))


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
        Overwrite ``input`` and return it (default False).

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
    return _apply(input, "celu", inplace, lambda x: _elu_like(x, alpha, alpha))


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
        Overwrite ``input`` and return it (default False).

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
    return _apply(input, "threshold", inplace, lambda x: _c.where(_c.gt(x, threshold), x, float(value)))


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


# torch.hardshrink and torch.prelu are core's (rg.hardshrink, rg.prelu): one implementation, also F's
hardshrink = _c.hardshrink
prelu = _c.prelu


# --- in-place forms -------------------------------------------------------------------

_INPLACE_DOC = """In-place :func:`{name}`: overwrite ``input`` with its result.

    Parameters
    ----------
    input : Tensor
        The floating-point tensor to overwrite (not a leaf that requires grad).
    {params}

    Returns
    -------
    Tensor
        ``input`` itself.

    Raises
    ------
    RuntimeError
        On a leaf that requires grad.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor({values})
    >>> F.{name}_(x{args}) is x, x
    (True, {result})
    """


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return globals()["threshold"](input, threshold, value, inplace=True)


hardtanh_.__doc__ = _INPLACE_DOC.format(
    name="hardtanh", params="min_val, max_val : float, optional\n        The bounds (default -1 and 1).",
    values="[-2.0, 0.5]", args="", result="tensor([-1. ,  0.5])")
selu_.__doc__ = _INPLACE_DOC.format(name="selu", params="", values="[0.0, 1.0]", args="",
                                    result="tensor([0.      , 1.050701])")
celu_.__doc__ = _INPLACE_DOC.format(name="celu", params="alpha : float, optional\n        Default 1.",
                                    values="[0.0, 2.0]", args=", 2.0", result="tensor([0., 2.])")
threshold_.__doc__ = _INPLACE_DOC.format(
    name="threshold", params="threshold, value : float\n        Entries at or below ``threshold`` become ``value``.",
    values="[0.5, 2.0]", args=", 1.0, 0.0", result="tensor([0., 2.])")


# --- randomized leaky ReLU -----------------------------------------------------------------

@composite_op("rrelu")
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """The randomized leaky ReLU (Xu et al., 2015): ``x`` where ``x > 0``, else
    ``a * x``, with a slope ``a`` drawn from U(lower, upper) for each element
    in training, and ``(lower + upper) / 2`` otherwise.

    The slopes come from retrograd's global generator (``rg.manual_seed``);
    the gradient is the slope used (1 for a positive ``x``).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    lower, upper : float, optional
        The slopes' range (default 1/8 and 1/3).
    training : bool, optional
        Draw random slopes (default False: the mean slope, a leaky ReLU).
    inplace : bool, optional
        Overwrite ``input`` and return it (default False).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    RuntimeError
        If ``lower > upper``, or with ``inplace`` on a leaf that requires grad.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.rrelu(rg.tensor([-1.0, 2.0]), 0.1, 0.3)
    tensor([-0.2,  2. ])
    >>> _ = rg.manual_seed(0)
    >>> y = F.rrelu(-rg.ones(1000), 0.1, 0.3, training=True)
    >>> 0.1 <= -float(y.max()) and -float(y.min()) <= 0.3
    True
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        x = _x(input, "leaky_relu")
        return leaky_relu(x, (lower + upper) / 2, inplace)

    def compute(x):
        u = _c.rand(tuple(x.shape), dtype=x.dtype)
        if x.device != u.device:
            u = u.to(x.device)
        # the slope times x; x > 0 keeps slope 1, as ATen's rrelu_with_noise
        slope = _c.where(_c.le(x, 0.0), _c.add(_c.mul(u, upper - lower), lower), 1.0).detach()
        return _c.mul(x, slope)
    return _apply(input, "rrelu", inplace, compute)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place :func:`rrelu`.

    Parameters
    ----------
    input : Tensor
        The floating-point tensor to overwrite (not a leaf that requires grad).
    lower, upper : float, optional
        The slopes' range (default 1/8 and 1/3).
    training : bool, optional
        Draw random slopes (default False: the mean slope).

    Returns
    -------
    Tensor
        ``input`` itself.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([-1.0, 1.0])
    >>> F.rrelu_(x, 0.2, 0.4) is x, x
    (True, tensor([-0.3,  1. ]))
    """
    return rrelu(input, lower, upper, training, inplace=True)


# --- Gumbel-softmax and channel shuffle -------------------------------------------------

@composite_op("gumbel_softmax")
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax (Concrete) distribution: ``softmax((logits
    + g) / tau)`` with ``g`` standard Gumbel noise (Jang et al., 2016;
    Maddison et al., 2016).

    With ``hard=True`` the result is one-hot (the sample's argmax along
    ``dim``), but its gradient is the soft sample's: the straight-through
    estimator ``y_hard - y_soft.detach() + y_soft``. The noise comes from
    retrograd's global generator (``rg.manual_seed``).

    Parameters
    ----------
    logits : Tensor
        Unnormalized log-probabilities, floating point.
    tau : float, optional
        The temperature (default 1): small values give nearly one-hot samples.
    hard : bool, optional
        Return one-hot vectors (default False).
    eps : float, optional
        Deprecated and unused, as in torch (a value other than the default warns).
    dim : int, optional
        The dim of the categories (default -1).

    Returns
    -------
    Tensor
        Of the shape of ``logits``; sums to 1 along ``dim``.

    Warns
    -----
    UserWarning
        If ``eps`` is given another value.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> _ = rg.manual_seed(0)
    >>> logits = rg.tensor([[0.0, 5.0, 0.0]], requires_grad=True)
    >>> y = F.gumbel_softmax(logits, tau=0.5, hard=True)
    >>> y
    tensor([[0., 1., 0.]], grad_fn=<AddBackward0>)
    >>> (y * rg.tensor([1.0, 2.0, 3.0])).sum().backward()
    >>> logits.grad.abs().sum() > 0        # the soft sample's gradient
    tensor(True)
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    x = _t(logits, "logits")
    # standard Gumbel: -log(E) for E ~ Exp(1)
    gumbels = _c.neg(_c.log(_c.empty_like(x).exponential_()))
    y_soft = _c.softmax(_c.div(_c.add(x, gumbels), tau), dim)
    if not hard:
        return y_soft
    with _c.no_grad():
        index = _c.argmax(y_soft, dim, keepdim=True)
        y_hard = _c.zeros_like(x).scatter_add(dim, index, _c.ones(tuple(index.shape), dtype=x.dtype,
                                                                      device=x.device))
    return _c.add(_c.sub(y_hard, y_soft.detach()), y_soft)


def _channel_shuffle(input, groups):
    x = _t(input)
    if x.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(x.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c = x.shape[0], x.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = tuple(x.shape[2:])
    # (N, g, C/g, *) -> (N, C/g, g, *): channel i of group j moves to i * g + j
    y = _c.transpose(_c.reshape(x, (n, groups, c // groups) + rest), 1, 2)
    return _c.reshape(y, (n, c) + rest)


_SHUFFLE_DOC = """Shuffle the channels of ``(N, C, *)`` input{native}: split them into
    ``groups`` groups, then interleave them, so that channel ``i`` of group
    ``j`` moves to position ``i * groups + j`` (ShuffleNet, Zhang et al., 2017).

    Parameters
    ----------
    input : Tensor
        Of at least 3 dims, its channels (dim 1) divisible by ``groups``.
    groups : int
        A positive number of groups.

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    RuntimeError
        For an input of fewer than 3 dims, ``groups <= 0``, or channels not divisible by ``groups``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.arange(4.0).reshape(1, 4, 1)
    >>> F.{name}(x, 2).flatten()
    tensor([0., 2., 1., 3.])
    """


@composite_op("channel_shuffle")
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    return _channel_shuffle(input, groups)


@composite_op("native_channel_shuffle")
def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    return _channel_shuffle(input, groups)


channel_shuffle.__doc__ = _SHUFFLE_DOC.format(native="", name="channel_shuffle")
native_channel_shuffle.__doc__ = _SHUFFLE_DOC.format(
    native=" (torch's kernel-level form; here the same computation as :func:`channel_shuffle`)",
    name="native_channel_shuffle")
