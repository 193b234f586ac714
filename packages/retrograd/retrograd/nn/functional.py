"""rg.nn.functional: torch.nn.functional's signatures and semantics.

Stable primitives (softmax, log_softmax, logsigmoid, convolution, pooling)
are entries of core's derivatives.yaml with their own backward formulas.
Everything else here is an exact composite of table ops (the losses,
linear, bilinear, dropout, the norms, embedding, pad, leaky_relu, elu,
adaptive_avg_pool2d), so its gradients, and higher-order ones, come from
the table; each is recorded under its own name in profiles
(``@composite_op``). Arguments are checked as torch checks them, with
torch's exception classes.
"""
from __future__ import annotations

from retrograd.core import extending as _ext
from retrograd.core.extending import check_tensor_arg, composite_op, max_pool2d_indices, wrap as _wrap
import warnings

import operator
from collections.abc import Sequence
from typing import Literal, overload

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from numpy.typing import DTypeLike
del TYPE_CHECKING

__all__ = [
    "linear", "conv1d", "conv2d", "max_pool2d", "avg_pool2d", "softmax", "log_softmax",
    "logsigmoid", "cross_entropy", "nll_loss", "mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "dropout", "layer_norm", "embedding", "relu", "relu_", "gelu", "silu", "softplus",
    "sigmoid", "tanh", "pad", "leaky_relu", "leaky_relu_", "elu", "elu_", "batch_norm", "one_hot", "l1_loss",
    "huber_loss", "adaptive_avg_pool2d", "bilinear",
]

# an int, or one per spatial dim (torch's _size_2_t)
_Size2 = int | tuple[int, int]


def _not_a_tensor(x, what):
    # torch's argument parser's refusals (lists, tuples, None, strings, torch
    # tensors, numbers: nn.functional has no Scalar overloads): retrograd.core's
    # one rule for them
    check_tensor_arg(x, f"argument '{what}'", True)


def _t(x, what="input"):
    if isinstance(x, Tensor):
        return x
    _not_a_tensor(x, what)
    return _c.as_tensor(x)


def _int_tuple(v, arg, fn):
    """An int or a sequence of ints (torch's IntArrayRef); int() would silently
    truncate floats, so they (and strings, None) raise TypeError as torch."""
    items = (v,) if not isinstance(v, (tuple, list)) else v
    out = []
    for i, s in enumerate(items):
        if isinstance(s, (bool, np.bool_)) or not hasattr(type(s), "__index__"):
            raise TypeError(f"{fn}(): argument '{arg}' must be an int or a tuple of ints, but found element "
                            f"of type {type(s).__name__} at pos {i}")
        s = operator.index(s)
        if not (-(1 << 63) <= s < (1 << 63)):
            raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {i}: {s} does not "
                            "fit in a 64-bit integer")
        out.append(s)
    return tuple(out)


def _arr(x, what="target"):
    if isinstance(x, Tensor):
        return x._array
    _not_a_tensor(x, what)
    return x if hasattr(x, "__cuda_array_interface__") else np.asarray(x)     # CuPy arrays stay


def _on_device(a, like):
    # host array `a` on the device of array `like` (a CuPy array there)
    if isinstance(a, np.ndarray) and not isinstance(like, np.ndarray) and hasattr(like, "get"):
        import cupy
        with cupy.cuda.Device(like.device.id):
            return cupy.asarray(a)
    return a


def _ntuple(v, n, what):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            v = tuple(v) * n
        if len(v) != n:
            raise RuntimeError(f"expected {what} to be a single integer value or a list of {n} values "
                               f"to match the convolution dimensions, but got {what}={list(v)}")
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _reduction(size_average, reduce, reduction):
    # torch's legacy size_average / reduce arguments
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _c.sum(loss)
    return _c.mean(loss)


# --- linear and convolution ------------------------------------------------------

@composite_op('linear')
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """The affine map ``input @ weight.T + bias``.

    Parameters
    ----------
    input : Tensor
        Of shape ``(*, in_features)``.
    weight : Tensor
        Of shape ``(out_features, in_features)`` (or 1-D: a dot product).
    bias : Tensor, optional
        Of shape ``(out_features,)`` (broadcast).

    Returns
    -------
    Tensor
        Of shape ``(*, out_features)``.

    Raises
    ------
    RuntimeError
        If the shapes do not match.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.linear(rg.tensor([[1.0, 2.0]]), rg.tensor([[1.0, 1.0], [0.0, 2.0]]), rg.tensor([0.5, 0.0]))
    tensor([[3.5, 4. ]])
    """
    x, w = _t(input), _t(weight, "weight")
    if w.ndim != 2:
        out = _c.matmul(x, w)
        return out if bias is None else _c.add(out, bias)
    # torch's graph: AddmmBackward0 (or MmBackward0) over TBackward0 of the
    # weight, with the input folded to a matrix and the result viewed back,
    # so graph walks and hook orders see torch's nodes
    wt = _c.t(w)
    if bias is None:
        return _c.mm(x, wt) if x.ndim == 2 else _c.matmul(x, wt)
    b = _t(bias, "bias")
    if b.ndim > 1 or x.ndim == 0:
        return _c.add(_c.matmul(x, wt), b)
    if x.ndim == 2:
        return _c.addmm(b, x, wt)
    rows = int(np.prod(x.shape[:-1], dtype=np.int64))
    fold = _c.view if x.is_contiguous() else _c.reshape      # torch: ViewBackward0 where it can
    out = _c.addmm(b, fold(x, (rows, x.shape[-1])), wt)
    return _c.view(out, tuple(x.shape[:-1]) + (w.shape[0],))


@composite_op('bilinear')
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """The bilinear map ``y[..., o] = input1 @ weight[o] @ input2 + bias[o]``.

    Parameters
    ----------
    input1 : Tensor
        Of shape ``(*, in1_features)``.
    input2 : Tensor
        Of shape ``(*, in2_features)``, the same leading dims.
    weight : Tensor
        Of shape ``(out_features, in1_features, in2_features)``.
    bias : Tensor, optional
        Of shape ``(out_features,)``.

    Returns
    -------
    Tensor
        Of shape ``(*, out_features)``.

    Raises
    ------
    RuntimeError
        If the inputs' leading dims differ or a size does not match the
        weight's (torch's messages).

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.bilinear(rg.tensor([[1.0, 2.0]]), rg.tensor([[3.0]]), rg.ones(4, 2, 1)).shape
    (1, 4)
    """
    x1, x2, w = _t(input1, "input1"), _t(input2, "input2"), _t(weight, "weight")
    if x1.ndim != x2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {x1.ndim} and {x2.ndim}")
    for d in range(x1.ndim - 1):
        if x1.shape[d] != x2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got "
                               f"{x1.shape[d]} and {x2.shape[d]}")
    if w.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out_features, in1_features, in2_features), got "
                           f"weight of size {list(w.shape)}")
    if x1.shape[-1] != w.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {x1.shape[-1]} but "
                           f"expected {w.shape[1]}")
    if x2.shape[-1] != w.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {x2.shape[-1]} but "
                           f"expected {w.shape[2]}")
    if bias is not None and tuple(_arr(bias, "bias").shape) != (w.shape[0],):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {_arr(bias).shape[0]} but "
                           f"expected {w.shape[0]}")
    out = _c.einsum("...i,oij,...j->...o", x1, w, x2)
    if bias is not None:
        out = _c.add(out, bias)
    return out


# -- activations (torch.nn.functional's spellings of the elementwise ops) ------

def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """The rectified linear unit ``max(input, 0)``, elementwise.

    Parameters
    ----------
    input : Tensor
        Any tensor.
    inplace : bool, optional
        Overwrite ``input`` and return it (default False), as :func:`relu_`.

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    RuntimeError
        With ``inplace=True`` on a leaf that requires grad.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.relu(rg.tensor([-1.0, 0.5]))
    tensor([0. , 0.5])
    """
    return _t(input).relu_() if inplace else _c.relu(_t(input))


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`: overwrite ``input`` with ``max(input, 0)``.

    Parameters
    ----------
    input : Tensor
        The tensor to overwrite (not a leaf that requires grad).

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
    >>> x = rg.tensor([-1.0, 2.0])
    >>> F.relu_(x) is x, x
    (True, tensor([0., 2.]))
    """
    return _t(input).relu_()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """The Gaussian error linear unit ``x * Phi(x)``, ``Phi`` the standard
    normal CDF.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    approximate : {'none', 'tanh'}, optional
        ``'tanh'``: the approximation ``0.5 * x * (1 + tanh(sqrt(2 / pi) *
        (x + 0.044715 * x**3)))`` (default ``'none'``: exact, with erf).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    RuntimeError
        For an unknown ``approximate``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.gelu(rg.tensor([0.0, 1.0]))
    tensor([0.       , 0.8413447])
    """
    return _c.gelu(_t(input), approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """The sigmoid linear unit (swish) ``x * sigmoid(x)``.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    inplace : bool, optional
        Overwrite ``input`` and return it (default False).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    RuntimeError
        With ``inplace=True`` on a leaf that requires grad.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.silu(rg.tensor([0.0, 1.0]))
    tensor([0.       , 0.7310586])
    """
    if not inplace:
        return _c.silu(_t(input))
    # No in-place kernel: silu saves its input, so it runs on a copy whose
    # result is written back into `input` (a tracked in-place copy).
    input[...] = _c.silu(input.clone())
    return input


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: F811 (torch's name)
    """``log(1 + exp(beta * x)) / beta``, a smooth ReLU; linear (``x``) where
    ``beta * x > threshold``, for stability.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    beta : float, optional
        The sharpness (default 1).
    threshold : float, optional
        Above ``beta * x > threshold`` the result is ``x`` (default 20).

    Returns
    -------
    Tensor
        Of the input's shape.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.softplus(rg.tensor([0.0, 30.0]))
    tensor([ 0.6931472, 30.       ])
    """
    return _c.softplus(_t(input), beta=beta, threshold=threshold)


def sigmoid(input: Tensor) -> Tensor:
    """The logistic function ``1 / (1 + exp(-x))``, elementwise.

    Parameters
    ----------
    input : Tensor
        Any tensor.

    Returns
    -------
    Tensor
        Of the input's shape.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.sigmoid(rg.tensor([0.0]))
    tensor([0.5])
    """
    return _c.sigmoid(_t(input))


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent, elementwise.

    Parameters
    ----------
    input : Tensor
        Any tensor.

    Returns
    -------
    Tensor
        Of the input's shape.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.tanh(rg.tensor([0.0, 1.0]))
    tensor([0.       , 0.7615942])
    """
    return _c.tanh(_t(input))


def _inexact(dtype):
    # floating-point (bfloat16 too: NumPy kind 'V', core.is_floating_dtype) or complex
    return _c.is_floating_dtype(dtype) or dtype.kind == "c"


def _opmath(x):
    # torch's CPU kernels of the norms take a bfloat16 input (with float32
    # weights too: autocast's mix), compute in float32 and return bfloat16:
    # (x to compute on, the dtype to round the result to, or None)
    if x.dtype.kind == "V" and _c.is_floating_dtype(x.dtype):
        return x.float(), x.dtype
    return x, None


def _rounded(y, dtype):
    return y if dtype is None else y.to(dtype)


def _no_bfloat16(x, kernel):
    # torch has no CPU kernel `kernel` for bfloat16 (pdist, avg_pool3d, ...):
    # its NotImplementedError
    if x.dtype.kind == "V" and _c.is_floating_dtype(x.dtype):
        raise NotImplementedError(f'"{kernel}" not implemented for bfloat16 input, as in torch; convert it first, '
                                  "e.g. input.float()")


def _floating(x, fn):
    # torch has no kernel of these activations, norms and pools for integer
    # or bool input
    if not _inexact(x.dtype):
        raise NotImplementedError(f'"{fn}" not implemented for {x.dtype} input, as in torch; convert it first, '
                                  "e.g. input.float()")


def _write_back(input, result):
    # torch's in-place activations: `result` was computed from a copy of
    # `input` (so no op saved the buffer it overwrites), then copied into
    # it as one tracked in-place write; a leaf that requires grad raises
    input[...] = result
    return input


@composite_op('leaky_relu')
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, ``negative_slope * x`` elsewhere.

    At 0 the gradient is ``negative_slope``, as torch's.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    negative_slope : float, optional
        The slope for non-positive inputs (default 0.01).
    inplace : bool, optional
        Overwrite ``input`` and return it (default False).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    NotImplementedError
        For an integer or bool input, as torch.
    RuntimeError
        With ``inplace=True`` on a leaf that requires grad.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.leaky_relu(rg.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2,  3. ])
    """
    x = _t(input)
    _floating(x, "leaky_relu")
    src = x.clone() if inplace else x
    # x > 0 picks x, else slope * x: at 0 the gradient is the slope, as torch's
    out = _c.where(_arr(src) > 0, src, _c.mul(src, negative_slope))
    if not inplace:
        return out
    _write_back(x, out)
    if negative_slope < 0 and x.requires_grad:
        # torch's backward reads the in-place result, from which a negative
        # slope cannot tell the inputs' signs apart, so torch refuses it at
        # backward; retrograd's would be right, but code must not come to rely on it
        x.register_hook(_refuse_inplace_negative_slope)
    return x


def _refuse_inplace_negative_slope(_grad):
    raise RuntimeError(
        "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
        "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
        "version instead (F.leaky_relu(x, slope) or inplace=False).")


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu`.

    Parameters
    ----------
    input : Tensor
        The floating-point tensor to overwrite.
    negative_slope : float, optional
        The slope for non-positive inputs (default 0.01).

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
    >>> x = rg.tensor([-1.0, 1.0])
    >>> F.leaky_relu_(x, 0.5)
    tensor([-0.5,  1. ])
    """
    return leaky_relu(input, negative_slope, inplace=True)


@composite_op('elu')
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """The exponential linear unit: ``x`` where ``x > 0``, ``alpha * (exp(x) - 1)``
    elsewhere (Clevert et al., 2015).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    alpha : float, optional
        The value the negative side tends to is ``-alpha`` (default 1).
    inplace : bool, optional
        Overwrite ``input`` and return it (default False).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    NotImplementedError
        For an integer or bool input, as torch.
    RuntimeError
        With ``inplace=True`` on a leaf that requires grad.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.elu(rg.tensor([-1.0, 2.0]))
    tensor([-0.63212055,  2.        ])
    """
    x = _t(input)
    _floating(x, "elu")
    src = x.clone() if inplace else x
    out = _elu_like(src, alpha)
    return _write_back(x, out) if inplace else out


def _elu_like(x, alpha, inner_scale=1.0):
    # max(0, x) + min(0, alpha * (exp(x / inner_scale) - 1)): elu, and celu
    # and selu (_activations.py). expm1 sees only the non-positive part: exp
    # of a large x would overflow, and inf * 0 in the unused branch's
    # gradient would be NaN. At 0 the gradient is alpha, as torch's
    pos = _arr(x) > 0
    inner = _c.where(pos, 0.0, x)
    if inner_scale != 1.0:
        inner = _c.div(inner, inner_scale)
    return _c.where(pos, x, _c.mul(_c.expm1(inner), alpha))


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`elu`.

    Parameters
    ----------
    input : Tensor
        The floating-point tensor to overwrite.
    alpha : float, optional
        The negative side's scale (default 1).

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
    >>> x = rg.tensor([0.0, 2.0])
    >>> F.elu_(x) is x
    True
    """
    return elu(input, alpha, inplace=True)


# --- padding -------------------------------------------------------------------------

# the input ranks that torch's non-constant padding accepts, by pad length
_PAD_RANKS = {2: (2, 3), 4: (3, 4), 6: (4, 5)}


def _pad_source_index(mode, n, left, right, d, shape):
    """Which element along a dim of size n each padded position reads.
    reflect and replicate index the uncropped dim (a negative pad crops
    what they read); circular first crops, then wraps within what is left,
    as torch's _pad_circular."""
    if mode == "circular":
        lo, hi = max(-left, 0), n - max(-right, 0)
        m = hi - lo
        if m < 0:
            raise RuntimeError(f"pad: negative padding ({left}, {right}) removes more than dim {d}'s size {n}")
        lpad, rpad = max(left, 0), max(right, 0)
        if lpad > m or rpad > m:
            raise RuntimeError(f"Padding value causes wrapping around more than once. (padding ({left}, "
                               f"{right}) at dimension {d} of input {shape}: each side may pad at most the "
                               f"{m} elements the dim keeps)")
        return lo + np.arange(-lpad, m + rpad) % max(m, 1)
    size = n + left + right
    if size < 0:
        raise RuntimeError(f"pad: padding ({left}, {right}) at dimension {d} of input {shape} gives a negative "
                           f"output size {size}")
    pos = np.arange(-left, n + right)
    if mode == "replicate":
        return np.clip(pos, 0, n - 1)
    if left >= n or right >= n:
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                           f"but got: padding ({left}, {right}) at dimension {d} of input {shape}")
    pos = np.abs(pos)
    return np.where(pos > n - 1, 2 * (n - 1) - pos, pos)


@composite_op('pad')
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad (or, with negative amounts, crop) the last dims of ``input``, as
    torch's ``F.pad``.

    ``pad`` lists ``(left, right)`` amounts from the LAST dim backwards:
    ``(1, 2)`` pads the last dim by 1 before and 2 after, ``(1, 2, 3, 4)``
    also the second-to-last by 3 and 4.

    - ``'constant'``: fill with ``value``; any number of dims; negative
      amounts crop.
    - ``'reflect'``: mirror without repeating the edge (``[1, 2, 3]`` padded
      by 2 on the left gives ``[3, 2, 1, 2, 3]``); each amount less than the
      dim's size.
    - ``'replicate'``: repeat the edge element.
    - ``'circular'``: wrap around; negative amounts crop first, and each
      amount is at most the (cropped) dim's size.

    The non-constant modes pad the last 1, 2 or 3 dims of an input of 2-3,
    3-4 or 4-5 dims (a pad of length 2, 4 or 6), as torch's. The gradient
    sums over the positions each element was copied to.

    Parameters
    ----------
    input : Tensor
        The tensor to pad.
    pad : tuple or list of int
        ``(left, right)`` pairs, last dim first.
    mode : {'constant', 'reflect', 'replicate', 'circular'}, optional
        How the new elements are filled (default ``'constant'``).
    value : float, optional
        The fill value of ``'constant'`` (default 0; cast to the input's dtype).

    Returns
    -------
    Tensor
        The padded tensor (a new tensor even when nothing changes).

    Raises
    ------
    TypeError
        If ``pad`` is not a tuple or list of ints.
    RuntimeError
        For an odd ``pad`` length, one longer than twice the input's dims, a
        ``value`` with a non-constant mode, reflect amounts of at least the
        dim's size, circular padding that would wrap more than once, or a
        crop larger than the dim.
    NotImplementedError
        For an unknown mode, or a non-constant pad length the input's rank
        does not allow.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([[1.0, 2.0, 3.0]])
    >>> F.pad(x, (1, 2))
    tensor([[0., 1., 2., 3., 0., 0.]])
    >>> F.pad(x, (2, 1), mode="reflect")
    tensor([[3., 2., 1., 2., 3., 2.]])
    >>> F.pad(x, (1, 1), mode="circular")
    tensor([[3., 1., 2., 3., 1.]])
    >>> F.pad(x, (-1, 0))
    tensor([[2., 3.]])
    """
    x = _t(input)
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    p = _int_tuple(pad, "pad", "pad")
    if mode == "constant":
        return _c.pad(x, p, "constant", value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}: use 'constant', 'reflect', 'replicate' "
                                  "or 'circular'")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if len(p) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    shape = list(x.shape)
    ranks = _PAD_RANKS.get(len(p))
    if ranks is None or x.ndim not in ranks:
        raise NotImplementedError(
            f"Padding size {len(p)} is not supported for {x.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode != "circular" and any(s == 0 for s in shape[x.ndim - ranks[0]:]):
        raise RuntimeError(f"Expected {ranks[0]}D or {ranks[1]}D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: {shape}")
    if all(a >= 0 for a in p) and all(p[2 * i] < x.shape[x.ndim - 1 - i] and p[2 * i + 1] <
                                       x.shape[x.ndim - 1 - i] for i in range(len(p) // 2)):
        # core's pad, whose source positions depend on the shapes alone: a
        # compiled function makes them per call (these would be an array
        # constant, which rg.compile refuses to bake in)
        return _c.pad(x, p, mode)
    out = x
    for i in range(len(p) // 2):
        d = x.ndim - 1 - i
        left, right = p[2 * i], p[2 * i + 1]
        n = out.shape[d]
        idx = _pad_source_index(mode, n, left, right, d, shape)
        if idx.shape[0] != n or (idx != np.arange(n)).any():
            # one integer-array index: repeated sources accumulate their
            # gradients in getitem's backward
            out = _c.getitem(out, (slice(None),) * d + (_on_device(idx, x._array),))
    return _c.clone(out) if out is x else out


def _conv_padding(padding, ksize, dilation, stride):
    # (before, after) per spatial dim, flattened; 'same' puts the odd extra
    # element after, as torch
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0) * len(ksize)
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            out = []
            for k, d in zip(ksize, dilation):
                total = d * (k - 1)
                out += [total // 2, total - total // 2]
            return tuple(out)
        raise RuntimeError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    p = _ntuple(padding, len(ksize), "padding")
    if any(q < 0 for q in p):
        raise RuntimeError("negative padding is not supported")
    return tuple(v for q in p for v in (q, q))


def _check_positive(stride, dilation):
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")


def _conv2d_biased(x, w, bias, st, pad, dl, groups):
    # a bias of one dtype with the input and weight goes into the conv op
    # (_conv2d_bias adds it in the kernel, one pass less); any other bias
    # is a broadcast add, dtype promotion included
    if bias is None:
        return _ext.conv2d(x, w, st, pad, dl, groups)
    b = _t(bias)
    if b.ndim == 1 and b.dtype == x.dtype == w.dtype:
        return _ext.conv2d_bias(x, w, b, st, pad, dl, groups)
    return _c.add(_ext.conv2d(x, w, st, pad, dl, groups), _c.reshape(b, (-1, 1, 1)))


@composite_op('conv2d')
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | tuple[int, int] = 1,
           padding: int | tuple[int, int] | str = 0, dilation: int | tuple[int, int] = 1,
           groups: int = 1) -> Tensor:
    """A 2-d convolution (cross-correlation) of ``input`` with ``weight``.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C_in, H, W)`` or, unbatched, ``(C_in, H, W)``.
    weight : Tensor
        Of shape ``(C_out, C_in / groups, kH, kW)``.
    bias : Tensor, optional
        Of shape ``(C_out,)``.
    stride : int or tuple of int, optional
        The step between windows (default 1).
    padding : int, tuple of int or {'valid', 'same'}, optional
        Zeros added on both sides of each spatial dim (default 0). ``'same'``
        keeps the size (stride 1 only; an odd total puts the extra zero after).
    dilation : int or tuple of int, optional
        The spacing between kernel elements (default 1).
    groups : int, optional
        Split the channels into groups convolved separately (default 1).

    Returns
    -------
    Tensor
        Of shape ``(N, C_out, H_out, W_out)``, ``H_out = (H + 2 * padding -
        dilation * (kH - 1) - 1) // stride + 1`` (likewise W).

    Raises
    ------
    RuntimeError
        For inputs or weights of the wrong rank, non-positive strides or
        dilations, negative or unknown padding, or 'same' with a stride.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.ones(1, 1, 3, 3)
    >>> F.conv2d(x, rg.ones(1, 1, 2, 2))
    tensor([[[[4., 4.],
              [4., 4.]]]])
    >>> F.conv2d(x, rg.ones(2, 1, 3, 3), padding="same").shape
    (1, 2, 3, 3)
    """
    x, w = _t(input), _t(weight)
    if x.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input "
                           f"of size: {list(x.shape)}")
    if w.ndim != 4:
        raise RuntimeError(f"conv2d: expected a 4-D weight, got weight of size {list(w.shape)}")
    unbatched = x.ndim == 3
    if unbatched:
        x = _c.reshape(x, (1,) + tuple(x.shape))
    st, dl = _ntuple(stride, 2, "stride"), _ntuple(dilation, 2, "dilation")
    _check_positive(st, dl)
    pad = _conv_padding(padding, tuple(w.shape[2:]), dl, st)
    out = _conv2d_biased(x, w, bias, st, pad, dl, int(groups))
    if unbatched:
        out = _c.reshape(out, tuple(out.shape[1:]))
    return out


@composite_op('conv1d')
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | tuple[int] = 1,
           padding: int | tuple[int] | str = 0, dilation: int | tuple[int] = 1, groups: int = 1) -> Tensor:
    """A 1-d convolution (cross-correlation): a :func:`conv2d` of height 1.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C_in, L)`` or ``(C_in, L)``.
    weight : Tensor
        Of shape ``(C_out, C_in / groups, k)``.
    bias : Tensor, optional
        Of shape ``(C_out,)``.
    stride : int or tuple of int, optional
        The step between windows (default 1).
    padding : int, tuple of int or {'valid', 'same'}, optional
        Zeros added at both ends (default 0).
    dilation : int or tuple of int, optional
        The spacing between kernel elements (default 1).
    groups : int, optional
        Split the channels into groups convolved separately (default 1).

    Returns
    -------
    Tensor
        Of shape ``(N, C_out, L_out)``, ``L_out = (L + 2 * padding - dilation *
        (k - 1) - 1) // stride + 1``.

    Raises
    ------
    RuntimeError
        For inputs or weights of the wrong rank or invalid options.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.conv1d(rg.tensor([[[1.0, 2.0, 3.0, 4.0]]]), rg.tensor([[[1.0, -1.0]]]))
    tensor([[[-1., -1., -1.]]])
    """
    x, w = _t(input), _t(weight)
    if x.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input "
                           f"of size: {list(x.shape)}")
    if w.ndim != 3:
        raise RuntimeError(f"conv1d: expected a 3-D weight, got weight of size {list(w.shape)}")
    unbatched = x.ndim == 2
    if unbatched:
        x = _c.reshape(x, (1,) + tuple(x.shape))
    st, dl = _ntuple(stride, 1, "stride"), _ntuple(dilation, 1, "dilation")
    _check_positive(st, dl)
    pad = (0, 0) + _conv_padding(padding, (w.shape[2],), dl, st)
    x4 = _c.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2]))
    w4 = _c.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
    out = _conv2d_biased(x4, w4, bias, (1,) + st, pad, (1,) + dl, int(groups))
    out = _c.reshape(out, (out.shape[0], out.shape[1], out.shape[3]))
    if unbatched:
        out = _c.reshape(out, tuple(out.shape[1:]))
    return out


# --- pooling -----------------------------------------------------------------------

@overload
def max_pool2d(input: Tensor, kernel_size: _Size2, stride: _Size2 | None = None, padding: _Size2 = 0,
               dilation: _Size2 = 1, ceil_mode: bool = False,
               return_indices: Literal[False] = False) -> Tensor: ...
@overload
def max_pool2d(input: Tensor, kernel_size: _Size2, stride: _Size2 | None = None, padding: _Size2 = 0,
               dilation: _Size2 = 1, ceil_mode: bool = False, *,
               return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...
def max_pool2d(input: Tensor, kernel_size: _Size2, stride: _Size2 | None = None, padding: _Size2 = 0,
               dilation: _Size2 = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-d max pooling: the maximum of each window.

    The gradient goes to each window's argmax (the first one on ties, as
    torch).

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)`` or ``(C, H, W)``.
    kernel_size : int or tuple of int
        The window's (height, width).
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    padding : int or tuple of int, optional
        Implicit -inf padding on both sides (default 0), at most half the kernel.
    dilation : int or tuple of int, optional
        The spacing between window elements (default 1).
    ceil_mode : bool, optional
        Round the output size up (default False).
    return_indices : bool, optional
        Also return each maximum's flat index ``h * W + w`` within its input
        plane, int64 (default False).

    Returns
    -------
    Tensor or tuple of Tensor
        The maxima, and with ``return_indices`` their indices.

    Raises
    ------
    RuntimeError
        For invalid sizes, strides or padding.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([[[[1.0, 5.0], [3.0, 2.0]]]])
    >>> F.max_pool2d(x, 2, return_indices=True)
    (tensor([[[[5.]]]]), tensor([[[[1]]]]))
    """
    out = _c.max_pool2d(input, kernel_size, stride, padding, dilation, bool(ceil_mode))
    if not return_indices:
        return out
    idx = max_pool2d_indices(_arr(input), kernel_size, stride, padding, dilation, bool(ceil_mode))
    return out, _wrap(idx, device=out.device)


def avg_pool2d(input: Tensor, kernel_size: _Size2, stride: _Size2 | None = None, padding: _Size2 = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-d average pooling: the mean of each window.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, H, W)`` or ``(C, H, W)``.
    kernel_size : int or tuple of int
        The window's (height, width).
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
        For invalid sizes, strides, padding or divisor.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.avg_pool2d(rg.tensor([[[[1.0, 2.0], [3.0, 6.0]]]]), 2)
    tensor([[[[3.]]]])
    """
    return _c.avg_pool2d(input, kernel_size, stride, padding, bool(ceil_mode), bool(count_include_pad),
                         divisor_override)


def _adaptive_size(output_size, shape):
    """torch's output_size for adaptive pooling: an int for both dims or a
    pair whose None entries keep the input's size."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 2:
            raise RuntimeError(f"adaptive_avg_pool2d: output_size must be 2, got {tuple(output_size)}")
        sizes = output_size
    else:
        sizes = (output_size, output_size)
    out = []
    for s, n in zip(sizes, shape):
        if s is None:
            out.append(n)
            continue
        out.append(_int_tuple(s, "output_size", "adaptive_avg_pool2d")[0])
    if any(s < 0 for s in out):
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{out[0]}, {out[1]}}}")
    return tuple(out)


def _adaptive_matrix(n, m, dtype):
    # (m, n): row i averages input positions floor(i*n/m) .. ceil((i+1)*n/m)-1
    a = np.zeros((m, n), dtype=dtype)
    for i in range(m):
        start, end = (i * n) // m, -((-(i + 1) * n) // m)
        a[i, start:end] = 1.0 / (end - start)
    return a


@composite_op('adaptive_avg_pool2d')
def adaptive_avg_pool2d(input: Tensor, output_size: int | None | tuple[int | None, int | None]) -> Tensor:
    """2-d average pooling to a given output size.

    Output position ``i`` of a dim of input size ``n`` and output size ``m``
    averages input positions ``floor(i * n / m)`` to ``ceil((i + 1) * n / m)
    - 1`` (windows may differ in size and overlap), as torch's. When the
    sizes divide evenly this is an :func:`avg_pool2d`; otherwise two
    averaging matrices, ``rows @ input @ cols``. Either way the gradients of
    every order come from table ops.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(N, C, H, W)`` or ``(C, H, W)``.
    output_size : int, None or tuple of (int or None)
        The output's (height, width); an int for both; None keeps the input's
        size in that dim.

    Returns
    -------
    Tensor
        Of shape ``(N, C, *output_size)`` (or unbatched).

    Raises
    ------
    RuntimeError
        For an input that is not 3-D or 4-D, an empty non-batch dim, an
        ``output_size`` of the wrong length or with negative entries.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.arange(5.0).reshape(1, 1, 1, 5)
    >>> F.adaptive_avg_pool2d(x, (1, 2))
    tensor([[[[1., 3.]]]])
    >>> F.adaptive_avg_pool2d(rg.ones(2, 3, 7, 9), (None, 1)).shape
    (2, 3, 7, 1)
    """
    x = _t(input)
    if x.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(x.shape)}")
    for d in range(x.ndim - 3, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(f"adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with dimension {d} being empty")
    _floating(x, "adaptive_avg_pool2d")
    H, W = x.shape[-2:]
    oh, ow = _adaptive_size(output_size, (H, W))
    if oh and ow and H % oh == 0 and W % ow == 0:
        # equal windows that tile the input: a plain average pool
        return _c.avg_pool2d(x, (H // oh, W // ow), (H // oh, W // ow))
    # windows of unequal or overlapping extent: averaging matrices on each
    # side, rows (oh, H) @ x @ columns (W, ow)
    rows = _wrap(_on_device(_adaptive_matrix(H, oh, x.dtype), x._array), device=x.device)
    cols = _wrap(_on_device(_adaptive_matrix(W, ow, x.dtype).T.copy(), x._array), device=x.device)
    return _c.matmul(_c.matmul(rows, x), cols)


# --- softmax family ----------------------------------------------------------------

def _softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: DTypeLike | None = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (computed stably, max-shifted).

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    dim : int, optional
        The dim that sums to 1. None picks one with a deprecation warning, as
        torch (0 for 0-, 1- and 3-d inputs, else 1).
    _stacklevel : int, optional
        Kept for torch's signature; unused.
    dtype : dtype, optional
        Cast the input to it first.

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    IndexError
        If ``dim`` is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.softmax(rg.tensor([[0.0, 0.0], [0.0, 1.0]]), dim=1)
    tensor([[0.5      , 0.5      ],
            [0.2689414, 0.7310586]])
    """
    x = _t(input)
    if dim is None:
        dim = _softmax_dim("softmax", x.ndim)
    if dtype is not None:
        x = x.to(dtype)
    return _c.softmax(x, dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: DTypeLike | None = None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim``: :func:`softmax`'s logarithm,
    computed stably.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    dim : int, optional
        The dim normalised. None picks one with a deprecation warning, as torch.
    _stacklevel : int, optional
        Kept for torch's signature; unused.
    dtype : dtype, optional
        Cast the input to it first.

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    IndexError
        If ``dim`` is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.log_softmax(rg.tensor([0.0, 0.0]), dim=0)
    tensor([-0.6931472, -0.6931472])
    """
    x = _t(input)
    if dim is None:
        dim = _softmax_dim("log_softmax", x.ndim)
    if dtype is not None:
        x = x.to(dtype)
    return _c.log_softmax(x, dim)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably as ``min(x, 0) - log1p(exp(-|x|))``.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.

    Returns
    -------
    Tensor
        Of the input's shape.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.logsigmoid(rg.tensor([0.0, -1000.0]))
    tensor([-6.931472e-01, -1.000000e+03])
    """
    return _c.logsigmoid(input)


# --- losses --------------------------------------------------------------------------

def _class_weights(weight, C, dtype, like):
    # (C,) class weights on the device of array `like`
    if weight is None:
        return _on_device(np.ones(C, dtype=dtype), like)
    w = _on_device(_arr(weight), like)
    if w.shape != (C,):
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes "
                           f"but got weight tensor of shape: {list(w.shape)}")
    return w.astype(dtype, copy=False)


def _class_weight_tensor(weight, C, dtype, like):
    """The (C,) class weights as a tensor of ``dtype`` on the device of
    array ``like``: ``weight`` itself where it is one of that dtype (a
    compiled function then reads it at each call), else a cast of it."""
    _class_weights(weight, C, dtype, like)                # checks its shape
    w = weight if isinstance(weight, Tensor) else _c.as_tensor(_on_device(_arr(weight, "weight"), like))
    return w if w.dtype == dtype else w.to(dtype)


def _check_class_target(x, t, fn):
    """A class-index target for input x: torch's shape checks (and classes:
    ValueError for a batch size mismatch, RuntimeError otherwise), then an
    integer dtype."""
    if x.ndim >= 2:
        if t.ndim == 0:
            raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size (0): pass "
                             f"one class index per sample, a target of shape [{x.shape[0]}]")
        if t.ndim >= 1 and t.shape[0] != x.shape[0]:
            raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                             f"({t.shape[0]}).")
        if x.ndim == 2 and t.ndim != 1:
            raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported (input of shape "
                               f"{list(x.shape)}, target of shape {list(t.shape)})")
        want = (x.shape[0],) + tuple(x.shape[2:])
        if tuple(t.shape) != want:
            raise RuntimeError(f"Expected target size {list(want)}, got {list(t.shape)}")
    elif t.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif t.ndim == 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}; "
                         "pass a 0-d target (one class index) for an unbatched input")
    if t.dtype.kind not in "iu":
        raise RuntimeError(
            f"{fn}(): expected integer class labels (a target of dtype int64, torch's Long), but got a target of dtype "
            f"{t.dtype}. Convert it with target.long(); to give class probabilities instead, pass a float "
            f"target of the input's shape {list(x.shape)}")


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(tuple(a.shape), tuple(np.shape(b) if not isinstance(b, Tensor) else b.shape))
        return True
    except ValueError:
        return False          # the op's own shape error comes first, as torch's


def _float_loss_input(x, kernel, target=None):
    # torch's loss kernels exist for floating dtypes only: NotImplementedError
    # naming the kernel, before NumPy would compute in its own promotion
    dt = getattr(x, "dtype", None)
    if dt is not None and target is not None and getattr(target, "dtype", None) is not None:
        dt = np.result_type(dt, target.dtype)           # an integer input with a float target is computed
    if dt is not None and np.dtype(dt).kind in "biu" and (target is None or _broadcasts(x, target)):
        raise NotImplementedError(f'"{kernel}" not implemented for {np.dtype(dt)} tensors; convert the input '
                                  "first, e.g. x.float()")


def _nll_parts(x, target, weight, ignore_index):
    """(picked log-probabilities (M,), per-element weights (M,), ignored
    (M,) bool tensor, batch shape, C) for input x (N, C, d...) or (C,) and
    class indices ``target``.

    What the target decides is computed by ops on the target tensor, never
    on its array: a compiled function (rg.compile) then reads each call's
    targets instead of baking the first call's into its program."""
    if x.ndim == 0:
        raise ValueError("Expected input to have at least 1 dimension (got 0)")
    t = _arr(target)
    _check_class_target(x, t, "nll_loss")
    if x.ndim == 1:
        C = x.shape[0]
        x2 = _c.reshape(x, (1, C))
        batch = ()
    else:
        C = x.shape[1]
        want = (x.shape[0],) + tuple(x.shape[2:])
        if x.ndim == 2:
            x2 = x
        else:
            # classes last, then one row per element
            x2 = _c.reshape(_c.permute(x, (0,) + tuple(range(2, x.ndim)) + (1,)), (-1, C))
        batch = want
    if isinstance(t, np.ndarray) and not _compiling():
        # eagerly on the CPU: NumPy on the target's array
        tf = t.reshape(-1)
        keep = tf != ignore_index
        safe = np.where(keep, tf, 0)
        bad = (safe < 0) | (safe >= C)
        if bad.any():
            raise IndexError(f"Target {int(safe[bad][0])} is out of bounds.")
        picked = _c.getitem(x2, (np.arange(tf.shape[0]), safe))
        w = _class_weights(weight, C, x.dtype, safe)
        wv = np.where(keep, w[safe], 0).astype(x.dtype, copy=False)
        return picked, wv, ~keep, batch, C
    # On a device, or traced by rg.compile: ops on the target tensor. A
    # compiled program then reads each call's targets (an array computed
    # here would be baked in), and a CUDA loss never reads the device.
    tt = target if isinstance(target, Tensor) else _c.as_tensor(t)
    tf = _c.reshape(tt, (-1,))
    keep = _c.ne(tf, ignore_index)
    # (an ignored element reads class 0; its weight is 0)
    safe = _c.where(keep, tf, 0)
    on_device = not isinstance(t, np.ndarray)
    if on_device:
        # Checking on the host would wait for every queued kernel (a
        # synchronize per loss). torch's kernel asserts on the device; here
        # an out-of-range target poisons its loss and gradient with NaN
        # instead (never a silently wrong value), and is read from a class
        # in range meanwhile.
        bad = _c.logical_or(_c.lt(safe, 0), _c.ge(safe, C))
        safe = _c.where(bad, 0, safe)
    else:
        # Traced: the check reads the array, so it runs when the function is
        # traced, not on each compiled call. A later call's class >= C
        # raises IndexError in the indexing below; a negative one is moved
        # out of range for it, where NumPy would read a class from the end.
        flat = t.reshape(-1)
        out_of_range = ((flat < 0) | (flat >= C)) & (flat != ignore_index)
        if out_of_range.any():
            raise IndexError(f"Target {int(flat[out_of_range][0])} is out of bounds.")
        safe = _c.where(_c.lt(safe, 0), C, safe)
    picked = _c.getitem(x2, (_c.arange(tf.shape[0], device=x.device), safe))
    if weight is None:
        wv = keep.to(x.dtype)
    else:
        wv = _c.where(keep, _c.getitem(_class_weight_tensor(weight, C, x.dtype, t), safe), 0.0)
    if on_device:
        wv = _c.where(_c.logical_and(bad, keep), float("nan"), wv)
    return picked, wv, _c.logical_not(keep), batch, C


# Note [eager NumPy, traced ops]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A few functionals compute values that need no gradient (a target's mask
# and class weights, a batch norm's running statistics, an embedding's
# indices) with NumPy on the arrays, which eagerly is the fastest way. A
# trace (rg.compile) records ops only: a value computed on arrays would be
# baked into the program as a constant of the first call. So eager uses
# NumPy and tracing uses ops, and _compiling() is the one place that says
# which: the compiler's public is_compiling() when retrograd-compile is
# installed (it is optional), else never.
try:
    from retrograd.compile import is_compiling as _is_compiling
except ImportError:          # retrograd-compile is not installed: nothing traces
    def _is_compiling() -> bool:
        return False


def _compiling() -> bool:
    """True while rg.compile traces on this thread: use ops, not NumPy, for
    values the program must recompute at each call. See Note [eager NumPy,
    traced ops]."""
    return bool(_is_compiling())


def _mean_over_weight(total, denom):
    """total / denom for reduction='mean'. Every target ignored (denom 0)
    gives torch's results: a NaN loss whose gradient is 0, not 0/0."""
    if isinstance(denom, (np.ndarray, np.generic, float, int)):
        if denom == 0:
            return _c.add(_c.mul(total, 0.0), float("nan"))
        return _c.div(total, denom)
    # a tensor (computed by ops from the targets): the same without reading
    # it on the host (a CUDA synchronize; a compiled function reads each
    # call's): a zero denominator divides by 1 (gradient 0, as total's
    # weights are 0) and adds NaN to the loss
    empty = _c.eq(denom, 0)
    return _c.where(empty, float("nan"), _c.div(total, _c.where(empty, 1.0, denom)))


@composite_op('nll_loss')
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of class indices, for an input of
    log-probabilities.

    Each element contributes ``-weight[t] * input[t]`` for its target class
    ``t``; ``'mean'`` divides the sum by the sum of those weights, over the
    elements whose target is not ``ignore_index``. When every target is
    ignored the mean is NaN, as torch's.

    Parameters
    ----------
    input : Tensor
        Log-probabilities of shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``.
    target : Tensor
        Integer class indices of shape ``()``, ``(N,)`` or ``(N, d1, ...)``.
    weight : Tensor, optional
        A weight per class, of shape ``(C,)`` (a constant: it must not
        require grad).
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    ignore_index : int, optional
        A target value that is skipped (default -100).
    reduction : {'mean', 'sum', 'none'}, optional
        How the losses combine (default ``'mean'``).

    Returns
    -------
    Tensor
        A scalar, or the losses of shape ``target.shape`` with ``'none'``.

    Raises
    ------
    ValueError
        For mismatched batch sizes or an unknown reduction.
    RuntimeError
        For a non-integer target, a target shape that does not fit, a
        ``weight`` of the wrong size or one that requires grad.
    IndexError
        For a target outside ``[0, C)``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> logp = rg.tensor([[-0.1, -2.4], [-1.2, -0.4]])
    >>> F.nll_loss(logp, rg.tensor([0, 1]))
    tensor(0.25)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if isinstance(weight, Tensor) and weight.requires_grad and _c.is_grad_enabled():
        # as torch: the class weights of nll_loss (and of cross_entropy with
        # class indices) are constants; a silently missing gradient is worse
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True: pass weight.detach().")
    x = _t(input)
    picked, wv, _, batch, _ = _nll_parts(x, target, weight, ignore_index)
    _float_loss_input(x, "nll_loss_out_frame")      # after the shapes, as torch
    losses = _c.neg(_c.mul(picked, wv))
    if reduction == "none":
        return _c.reshape(losses, batch)
    total = _c.sum(losses)
    if reduction == "sum":
        return total
    return _mean_over_weight(total, wv.sum())


@composite_op('cross_entropy')
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """The cross entropy of logits: ``log_softmax`` over the class dim,
    then :func:`nll_loss` (class-index target) or ``-sum(target * logp)``
    (class-probability target).

    Parameters
    ----------
    input : Tensor
        Logits of shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``; the class
        dim is 1 (0 for an unbatched input).
    target : Tensor
        Integer class indices (the input's shape without C) or float class
        probabilities (the input's shape).
    weight : Tensor, optional
        A weight per class, of shape ``(C,)``.
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    ignore_index : int, optional
        A class-index target value that is skipped (default -100).
    reduction : {'mean', 'sum', 'none'}, optional
        How the losses combine (default ``'mean'``; weighted by the targets'
        class weights for class indices).
    label_smoothing : float, optional
        In [0, 1]: the target becomes ``(1 - s) * target + s / C``
        (default 0).

    Returns
    -------
    Tensor
        A scalar, or per-sample losses with ``'none'``.

    Raises
    ------
    ValueError
        For mismatched batch sizes or an unknown reduction.
    RuntimeError
        For a target that is neither class indices nor probabilities of the
        input's shape, or ``label_smoothing`` outside [0, 1].
    IndexError
        For a 0-d input or a target outside ``[0, C)``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> logits = rg.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    >>> F.cross_entropy(logits, rg.tensor([0, 2]))
    tensor(0.6690786)
    >>> F.cross_entropy(logits, rg.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    tensor(0.6690786)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    x = _t(input)
    if x.ndim == 0:
        # torch looks up the class dim (1) of the 0-d input first
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1): "
                         "cross_entropy needs an input of shape (C,) or (N, C, ...)")
    cdim = 0 if x.ndim == 1 else 1
    C = x.shape[cdim]
    logp = _c.log_softmax(x, cdim)
    t = _arr(target)
    wshape = [1] * x.ndim
    wshape[cdim] = C
    if tuple(t.shape) == tuple(x.shape) and not _inexact(t.dtype):
        # torch: a target of the input's shape holds class probabilities
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{t.dtype}; for class indices pass a target of shape {list(x.shape[:cdim])}"
                           f"{list(x.shape[cdim + 1:]) if x.ndim > 2 else ''}")
    if t.dtype.kind in "iu":
        nll = nll_loss(logp, target if isinstance(target, Tensor) else t, weight,
                       ignore_index=ignore_index, reduction=reduction)
        if label_smoothing == 0.0:
            return nll
        # torch's cross_entropy_loss_label_smoothing
        # (ops on the target tensor, as in nll_loss: nothing baked into a
        # compiled program)
        tt = target if isinstance(target, Tensor) else _c.as_tensor(t)
        ignored = _c.eq(tt, ignore_index)
        if weight is not None:
            w = _class_weight_tensor(weight, C, x.dtype, t)
            smooth = _c.neg(_c.sum(_c.mul(logp, _c.reshape(w, tuple(wshape))), cdim))
        else:
            smooth = _c.neg(_c.sum(logp, cdim))
        smooth = _c.where(ignored, 0.0, smooth)
        if reduction == "mean":
            if weight is not None:
                # (nll_loss checked the classes: an ignored one reads class 0)
                picked = _c.getitem(w, _c.where(ignored, 0, tt))
                denom = _c.sum(_c.where(ignored, 0.0, picked))
            else:
                denom = _c.sum(_c.logical_not(ignored)).to(x.dtype)
            ret = _mean_over_weight(_c.sum(smooth), denom)
        elif reduction == "sum":
            ret = _c.sum(smooth)
        else:
            ret = smooth
        return _c.add(_c.mul(nll, 1.0 - label_smoothing), _c.mul(ret, label_smoothing / C))
    if not _c.is_floating_dtype(t.dtype) or tuple(t.shape) != tuple(x.shape):
        if not _inexact(t.dtype) and tuple(t.shape) == tuple(x.shape):
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{t.dtype}")
        # not class probabilities: checked as class indices (torch's errors)
        _check_class_target(x, t, "cross_entropy")
    tt = _t(target)
    if label_smoothing > 0:
        tt = _c.add(_c.mul(tt, 1.0 - label_smoothing), label_smoothing / C)
    prod = _c.mul(logp, tt)
    if weight is not None:
        w = _class_weights(weight, C, x.dtype, t)          # checks its shape
        if isinstance(weight, Tensor):
            # a Tensor keeps its graph: probability targets differentiate
            # weight, as torch's composite does
            w = _c.reshape(weight, tuple(wshape))
        else:
            w = w.reshape(wshape)
        prod = _c.mul(prod, w)
    if reduction == "none":
        return _c.neg(_c.sum(prod, cdim))
    total = _c.neg(_c.sum(prod))
    if reduction == "sum":
        return total
    return _c.div(total, x.numel() // C if x.numel() else float("nan"))


@composite_op('mse_loss')
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """The squared error ``(input - target) ** 2``, averaged or summed.

    Parameters
    ----------
    input : Tensor
        Any floating-point tensor.
    target : Tensor
        Of the input's shape (a different shape broadcasts, with torch's warning).
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).
    weight : Tensor, optional
        An elementwise weight of the input's shape; ``'mean'`` then divides
        by its sum, as torch's.

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown reduction, or a weight whose shape is not the input's.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.mse_loss(rg.tensor([1.0, 2.0]), rg.tensor([0.0, 0.0]))
    tensor(2.5)
    """
    reduction = _reduction(size_average, reduce, reduction)
    _size_warning(input, target)
    _float_loss_input(input, "mse_cpu", target)
    d = _c.sub(input, target)
    return _weighted_reduce(_c.mul(d, d), input, weight, reduction, True)


def _size_warning(input, target):
    if np.shape(_arr(input)) != np.shape(_arr(target)):
        warnings.warn(f"Using a target size ({list(np.shape(_arr(target)))}) that is different to the "
                      f"input size ({list(np.shape(_arr(input)))}). This will likely lead to incorrect "
                      "results due to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _weighted_reduce(loss, input, weight, reduction, mean_over_weight):
    """Reduce an elementwise loss, with torch's optional elementwise weight
    (the input's shape). torch's weighted 'mean' differs by loss: l1 and mse
    divide by the sum of the weights, huber by the number of elements."""
    if weight is None:
        return _reduce(loss, reduction)
    if np.shape(_arr(weight, "weight")) != np.shape(_arr(input)):
        raise ValueError(f"Weights and input must have the same size. (weight of shape "
                         f"{list(np.shape(_arr(weight)))}, input of shape {list(np.shape(_arr(input)))})")
    loss = _c.mul(loss, weight)
    if reduction == "mean" and mean_over_weight:
        return _c.div(_c.sum(loss), _c.sum(weight) if isinstance(weight, Tensor) else _arr(weight).sum())
    return _reduce(loss, reduction)


@composite_op('l1_loss')
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """The absolute error ``|input - target|``, averaged or summed.

    The gradient at ``input == target`` is 0, as torch's.

    Parameters
    ----------
    input : Tensor
        Any tensor.
    target : Tensor
        Of the input's shape (a different shape broadcasts, with torch's warning).
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).
    weight : Tensor, optional
        An elementwise weight of the input's shape; ``'mean'`` then divides
        by its sum, as torch's.

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown reduction, or a weight whose shape is not the input's.
    RuntimeError
        For ``'mean'`` of an integer input, as torch.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.l1_loss(rg.tensor([1.0, -3.0]), rg.tensor([0.0, 0.0]))
    tensor(2.)
    >>> F.l1_loss(rg.tensor([1.0, -3.0]), rg.tensor([0.0, 0.0]), weight=rg.tensor([3.0, 1.0]))
    tensor(1.5)
    """
    reduction = _reduction(size_average, reduce, reduction)
    _size_warning(input, target)
    x = _t(input)
    if not _inexact(x.dtype) and reduction == "mean":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {x.dtype}")
    return _weighted_reduce(_c.abs(_c.sub(x, target)), x, weight, reduction, True)


@composite_op('huber_loss')
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """The Huber loss of ``d = input - target``: ``0.5 * d**2`` where
    ``|d| < delta``, ``delta * (|d| - 0.5 * delta)`` elsewhere.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    target : Tensor
        Of the input's shape (a different shape broadcasts, with torch's warning).
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).
    delta : float, optional
        Where the loss turns linear (default 1), positive.
    weight : Tensor, optional
        An elementwise weight of the input's shape; ``'mean'`` stays the mean
        over elements, as torch's.

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    RuntimeError
        If ``delta`` is not positive.
    ValueError
        For an unknown reduction, or a weight whose shape is not the input's.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.huber_loss(rg.tensor([0.5, 3.0]), rg.tensor([0.0, 0.0]), reduction="none")
    tensor([0.125, 2.5  ])
    """
    reduction = _reduction(None, None, reduction)
    if not delta > 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta (got delta={delta}).")
    _size_warning(input, target)
    x = _t(input)
    _floating(x, "huber_loss")
    d = _c.sub(x, target)
    small = np.abs(_arr(d)) < delta
    # 0.5 * d**2 inside |d| < delta, delta * (|d| - delta / 2) outside; the
    # two agree in value and slope at |d| == delta
    quad = _c.mul(_c.mul(d, d), 0.5)
    lin = _c.mul(_c.sub(_c.abs(d), 0.5 * delta), delta)
    return _weighted_reduce(_c.where(small, quad, lin), x, weight, reduction, False)


@composite_op('binary_cross_entropy')
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """Binary cross entropy of probabilities ``x`` against targets ``y`` in [0, 1]:
    ``-weight * (y * log(x) + (1 - y) * log(1 - x))``, each log clamped at -100
    as in torch (a probability of exactly 0 or 1 gives a loss of 100, not inf).

    For logits, :func:`binary_cross_entropy_with_logits` is the stable form.
    Inside (0, 1) the gradient is torch's, ``(x - y) / (x (1 - x))``; at
    exactly 0 or 1, where the clamp holds, it is 0 (torch divides by
    ``max(x (1 - x), 1e-12)`` there instead).

    Parameters
    ----------
    input : Tensor
        Probabilities, each in [0, 1].
    target : Tensor
        Targets of the input's shape, in [0, 1].
    weight : Tensor, optional
        An elementwise weight broadcast to the input.
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    ValueError
        If the target's shape is not the input's, or for an unknown reduction.
    RuntimeError
        If an input value lies outside [0, 1].

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.binary_cross_entropy(rg.tensor([0.5, 0.9]), rg.tensor([1.0, 0.0]), reduction="none")
    tensor([0.6931472, 2.302585 ])
    """
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _t(input), _t(target, "target")
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(f"Using a target size ({list(y.shape)}) that is different to the input size "
                         f"({list(x.shape)}) is deprecated. Please ensure they have the same size.")
    values = np.asarray(x.detach())
    if values.size and not ((values >= 0) & (values <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1 (binary_cross_entropy takes "
                           "probabilities; for logits use binary_cross_entropy_with_logits)")
    log_x = _c.clamp(_c.log(x), min=-100.0)
    log_1mx = _c.clamp(_c.log(_c.sub(1.0, x)), min=-100.0)
    loss = _c.neg(_c.add(_c.mul(y, log_x), _c.mul(_c.sub(1.0, y), log_1mx)))
    if weight is not None:
        loss = _c.mul(loss, weight)
    return _reduce(loss, reduction)


@composite_op('binary_cross_entropy_with_logits')
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy of logits ``x`` against targets ``y`` in [0, 1]:
    ``-(pos_weight * y * log(sigmoid(x)) + (1 - y) * log(1 - sigmoid(x)))``,
    computed stably for any logit.

    Parameters
    ----------
    input : Tensor
        Logits.
    target : Tensor
        Probabilities of the input's shape.
    weight : Tensor, optional
        An elementwise weight broadcast to the input.
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).
    pos_weight : Tensor, optional
        A weight of the positive term, broadcast along the last dim (one per class).

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    ValueError
        If the target's shape is not the input's, or for an unknown reduction.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(rg.tensor([0.0, 2.0]), rg.tensor([1.0, 0.0]), reduction="none")
    tensor([0.6931472, 2.126928 ])
    """
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _t(input), _t(target)
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(f"Target size ({list(y.shape)}) must be the same as input size ({list(x.shape)})")
    ls = _c.logsigmoid(x)
    loss = _c.mul(_c.sub(1.0, y), x)
    if pos_weight is None:
        loss = _c.sub(loss, ls)
    else:
        lw = _c.add(_c.mul(_c.sub(pos_weight, 1.0), y), 1.0)
        loss = _c.sub(loss, _c.mul(lw, ls))
    if weight is not None:
        loss = _c.mul(loss, weight)
    return _reduce(loss, reduction)


# --- regularization, normalization, embedding -----------------------------------------

@composite_op('dropout')
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """In training, zero each element with probability ``p`` and scale the
    others by ``1 / (1 - p)``; otherwise return ``input``.

    The mask is drawn on the host from retrograd's global generator
    (``rg.manual_seed``).

    Parameters
    ----------
    input : Tensor
        Any tensor.
    p : float, optional
        The probability of zeroing an element (default 0.5), in [0, 1].
    training : bool, optional
        Apply dropout (default True); False returns ``input`` itself.
    inplace : bool, optional
        Scale ``input`` in place (default False).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> _ = rg.manual_seed(0)
    >>> sorted(set(F.dropout(rg.ones(100), p=0.5).tolist()))
    [0.0, 2.0]
    >>> F.dropout(rg.ones(2), training=False)
    tensor([1., 1.])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = _t(input)
    if not training or p == 0.0:
        return x
    dtype = x.dtype if _inexact(x.dtype) else _c.get_default_dtype()
    if p == 1.0:
        mask = _on_device(np.zeros(x.shape, dtype=dtype), x._array)
    else:
        # drawn by rg.rand (the same numbers as get_rng().random: on the host,
        # like torch's CPU generator, then moved to x's device) and kept a
        # tensor, so that rg.compile replays the draw on every call
        mask = (_c.rand(x.shape) >= p).to(dtype) * (1.0 / (1.0 - p))
        if not isinstance(x._array, np.ndarray):
            mask = mask.to(x.device)
    if inplace:
        x *= mask
        return x
    return _c.mul(x, mask)


@composite_op('layer_norm')
def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Layer normalisation: ``(x - mean) / sqrt(var + eps) * weight + bias``,
    the mean and (biased) variance over the last ``len(normalized_shape)`` dims.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(*, *normalized_shape)``.
    normalized_shape : int or sequence of int
        The trailing dims normalised.
    weight : Tensor, optional
        A scale of shape ``normalized_shape``.
    bias : Tensor, optional
        A shift of shape ``normalized_shape``.
    eps : float, optional
        Added to the variance (default 1e-5).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    RuntimeError
        If the input's trailing dims are not ``normalized_shape``.
    NotImplementedError
        For an integer or bool input.
    TypeError
        If ``normalized_shape`` holds non-integers.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.layer_norm(rg.tensor([[1.0, 3.0]]), (2,), eps=0.0)
    tensor([[-1.,  1.]])
    """
    x = _t(input)
    ns = _int_tuple(normalized_shape, "normalized_shape", "layer_norm")
    k = len(ns)
    if k == 0 or k > x.ndim or tuple(x.shape[x.ndim - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size{list(x.shape)}")
    if not _inexact(x.dtype):
        # torch has no layer_norm kernel for integer or bool input
        raise NotImplementedError(f"layer_norm(): not implemented for {x.dtype} input, as in torch; "
                                  f"convert it first, e.g. input.float()")
    x, rounded = _opmath(x)
    dims = tuple(range(x.ndim - k, x.ndim))
    xc = _c.sub(x, _c.mean(x, dims, True))
    var = _c.mean(_c.mul(xc, xc), dims, True)
    y = _c.mul(xc, _c.pow(_c.add(var, eps), -0.5))
    if weight is not None:
        y = _c.mul(y, weight)
    if bias is not None:
        y = _c.add(y, bias)
    return _rounded(y, rounded)


def _check_stat(t, name, C):
    if t is not None and _arr(t, name).size != C:
        raise RuntimeError(f"{name} should contain {C} elements not {_arr(t).size}")


@composite_op('batch_norm')
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalisation per channel (dim 1): ``(x - mean) / sqrt(var + eps)
    * weight + bias``.

    With ``training=True`` the mean and (biased) variance are the batch's,
    over every dim but 1, and ``running_mean`` / ``running_var`` (when given)
    are updated IN PLACE, without grad: ``stat = (1 - momentum) * stat +
    momentum * batch_stat``, the variance unbiased (``n / (n - 1)``), as
    torch's. With ``training=False`` the running statistics normalise.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(N, C)`` or ``(N, C, *)``.
    running_mean, running_var : Tensor or None
        Of shape ``(C,)``; required in eval mode; state, not differentiated.
    weight : Tensor, optional
        A scale per channel, of shape ``(C,)``.
    bias : Tensor, optional
        A shift per channel, of shape ``(C,)``.
    training : bool, optional
        Use and record the batch's statistics (default False).
    momentum : float, optional
        The running statistics' update factor (default 0.1).
    eps : float, optional
        Added to the variance (default 1e-5; positive in training).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    ValueError
        For a single value per channel in training, or a non-positive
        ``eps`` in training (negative in eval).
    RuntimeError
        For a statistic or parameter without C elements, missing running
        statistics in eval mode, running statistics that require grad, or an
        input of fewer than 2 dims.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([[1.0], [3.0]])
    >>> mean, var = rg.zeros(1), rg.ones(1)
    >>> F.batch_norm(x, mean, var, training=True)
    tensor([[-0.999995],
            [ 0.999995]])
    >>> mean, var
    (tensor([0.2]), tensor([1.1]))
    """
    x = _t(input)
    if x.ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input of shape (N, C) or (N, C, *), got input of size "
                           f"{list(x.shape)}")
    C = x.shape[1]
    for t, name in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"),
                    (bias, "bias")):
        _check_stat(t, name, C)
    _floating(x, "batch_norm")
    x, rounded = _opmath(x)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    for t, name in ((running_mean, "running_mean"), (running_var, "running_var")):
        if isinstance(t, Tensor) and t.requires_grad and _c.is_grad_enabled():
            # as torch: the running statistics are state, not inputs to differentiate
            raise RuntimeError(f"The function 'native_batch_norm' is not differentiable with respect to argument "
                               f"'{name}'. This input cannot have requires_grad True: pass {name}.detach().")
    dims = (0,) + tuple(range(2, x.ndim))
    count = x.numel() // C if C else 0
    shape = (C,) + (1,) * (x.ndim - 2)     # broadcasts against (N, C, *)
    if training:
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{list(x.shape)}")
        mean = _c.mean(x, dims, True)
        xc = _c.sub(x, mean)
        var = _c.mean(_c.mul(xc, xc), dims, True)      # biased: what normalises the batch
        y = _c.mul(xc, _c.pow(_c.add(var, eps), -0.5))
        if _compiling():
            # rg.compile: the new statistics as ops, so that the program
            # computes them from each call's batch (arrays would be baked in)
            _update_running_stats_ops(running_mean, running_var, _c.reshape(mean.detach(), (C,)),
                                      _c.reshape(var.detach(), (C,)), count, momentum)
        else:
            _update_running_stats(running_mean, running_var, _arr(mean).reshape(C),
                                  _arr(var).reshape(C), count, momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(f"{'running_mean' if running_mean is None else 'running_var'} must be defined "
                               "in evaluation mode: pass the running statistics, or training=True to "
                               "normalise with the batch's own")
        rm = _c.reshape(_t(running_mean, "running_mean"), shape)
        rv = _c.reshape(_t(running_var, "running_var"), shape)
        y = _c.mul(_c.sub(x, rm), _c.pow(_c.add(rv, eps), -0.5))
    if weight is not None:
        y = _c.mul(y, _c.reshape(_t(weight, "weight"), shape))
    if bias is not None:
        y = _c.add(y, _c.reshape(_t(bias, "bias"), shape))
    return _rounded(y, rounded)


def _update_running_stats(running_mean, running_var, mean, var, count, momentum):
    """torch's running statistics, updated in place without grad:
    stat = momentum * batch_stat + (1 - momentum) * stat, the variance
    unbiased (var * n / (n - 1))."""
    with _c.no_grad():
        if running_mean is not None:
            new = momentum * mean + (1 - momentum) * _arr(running_mean)
            running_mean.copy_(_wrap(new.astype(running_mean.dtype, copy=False), device=running_mean.device))
        if running_var is not None:
            unbiased = var * (count / (count - 1))
            new = momentum * unbiased + (1 - momentum) * _arr(running_var)
            running_var.copy_(_wrap(new.astype(running_var.dtype, copy=False), device=running_var.device))


def _update_running_stats_ops(running_mean, running_var, mean, var, count, momentum):
    # _update_running_stats with tensor ops (the batch's statistics as tensors)
    with _c.no_grad():
        if running_mean is not None:
            new = _c.add(_c.mul(mean, momentum), _c.mul(running_mean, 1 - momentum))
            running_mean.copy_(new.to(running_mean.dtype))
        if running_var is not None:
            unbiased = _c.mul(var, count / (count - 1))
            new = _c.add(_c.mul(unbiased, momentum), _c.mul(running_var, 1 - momentum))
            running_var.copy_(new.to(running_var.dtype))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """One-hot encoding of int64 class indices: ``out[..., i] = 1`` where
    ``tensor[...] == i``, else 0.

    Parameters
    ----------
    tensor : Tensor
        Class indices of dtype int64 (torch's Long), of any shape.
    num_classes : int, optional
        The number of classes; -1 (default) takes the largest index plus one.

    Returns
    -------
    Tensor
        int64, of shape ``(*tensor.shape, num_classes)``, not requiring grad.

    Raises
    ------
    RuntimeError
        For a non-int64 input, negative indices, indices of at least
        ``num_classes``, or ``num_classes=-1`` with an empty input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.one_hot(rg.tensor([0, 2, 1]))
    tensor([[1, 0, 0],
            [0, 0, 1],
            [0, 1, 0]])
    >>> F.one_hot(rg.tensor([1]), num_classes=4)
    tensor([[0, 1, 0, 0]])
    """
    a = _arr(tensor, "tensor")
    if a.dtype != np.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor. (got {a.dtype}: "
                           "convert the indices with .long())")
    num_classes = _int_tuple(num_classes, "num_classes", "one_hot")[0]
    if num_classes < -1:
        raise RuntimeError(f"one_hot: num_classes must be -1 (one more than the largest index) or at least 0, "
                           f"got {num_classes}")
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size and int(a.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if a.size and int(a.max()) >= num_classes:
        raise RuntimeError(f"Class values must be smaller than num_classes. (largest {int(a.max())}, "
                           f"num_classes={num_classes})")
    out = (a[..., None] == _on_device(np.arange(num_classes), a)).astype(np.int64)
    return _wrap(out, device=tensor.device if isinstance(tensor, Tensor) else None)


@composite_op('embedding')
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer indices ``input``: ``weight[input]``.

    Repeated indices accumulate their gradients; the row ``padding_idx``
    gets none. ``max_norm`` renormalises the rows that ``input`` references
    IN PLACE (without grad) to a ``norm_type``-norm of at most ``max_norm``;
    ``scale_grad_by_freq`` divides each row's gradient by how often ``input``
    holds it. Gradients are dense.

    Parameters
    ----------
    input : Tensor
        Integer indices of any shape, in ``[0, num_embeddings)``.
    weight : Tensor
        The table, of shape ``(num_embeddings, embedding_dim)``.
    padding_idx : int, optional
        A row that gets no gradient (negative counts from the end).
    max_norm : float, optional
        Renormalise the rows looked up to at most this norm.
    norm_type : float, optional
        The p of the p-norm for ``max_norm`` (default 2).
    scale_grad_by_freq : bool, optional
        Scale the gradients by the inverse frequency in the batch (default False).
    sparse : bool, optional
        Must be False (no sparse gradients).

    Returns
    -------
    Tensor
        Of shape ``(*input.shape, embedding_dim)``.

    Raises
    ------
    ValueError
        With ``sparse=True``.
    RuntimeError
        For non-integer indices or a weight that is not 2-D.
    IndexError
        For an index outside the table.
    AssertionError
        For a ``padding_idx`` outside the table (torch's class).

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> table = rg.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    >>> F.embedding(rg.tensor([[2, 1]]), table)
    tensor([[[3., 4.],
             [1., 2.]]])
    """
    if sparse:
        raise ValueError("embedding: sparse=True (a sparse gradient for weight) is not supported; "
                         "retrograd's gradients are dense: pass sparse=False")
    idx = _arr(input)
    if idx.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {idx.dtype} instead (cast the indices "
                           "to an integer dtype)")
    w = _t(weight, "weight")
    if w.ndim != 2:
        raise RuntimeError(f"'weight' must be 2-D (num_embeddings, embedding_dim), got shape {list(w.shape)}")
    if idx.size and w.shape[0] == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive: the embedding "
                           "weight has no rows")
    if idx.size and (idx.min() < 0 or idx.max() >= w.shape[0]):
        # NumPy would wrap a negative index to a row from the end
        raise IndexError(f"index out of range in self: indices must lie in [0, {w.shape[0] - 1}] for "
                         f"{w.shape[0]} embeddings")
    if max_norm is not None:
        _embedding_renorm_(w, idx, float(max_norm), float(norm_type))
    traced = isinstance(input, Tensor) and _compiling()
    if traced:
        # rg.compile: index by the input tensor, so that the program reads
        # each call's indices (the array would be baked in). The range check
        # above ran at trace time only: a later call's negative index is
        # moved out of range, where NumPy would read a row from the end.
        rows = _c.getitem(w, _c.where(_c.lt(input, 0), w.shape[0], input))
    else:
        rows = _c.getitem(w, idx)
    if scale_grad_by_freq and rows.requires_grad:
        # torch's embedding_dense_backward: each occurrence's gradient over
        # its index's count in the batch
        uniq, inv, counts = np.unique(idx, return_inverse=True, return_counts=True)
        scale = (1.0 / counts[inv.reshape(idx.shape)]).astype(rows.dtype)[..., None]
        rows.register_hook(lambda g: g * scale)
    if padding_idx is not None:
        n = w.shape[0]
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += n
        # same values; the padding rows' gradient is cut by detach
        keep = _c.ne(input, padding_idx) if traced else idx != padding_idx
        rows = _c.where(_c.reshape(keep, tuple(idx.shape) + (1,)) if traced else keep[..., None],
                        rows, rows.detach())
    return rows


def _embedding_renorm_(w, idx, max_norm, norm_type):
    # torch.embedding_renorm_: each referenced row whose norm exceeds max_norm
    # is scaled by max_norm / (norm + 1e-7), in place and without grad (it
    # bumps weight's version, as torch's)
    n = w.shape[0]
    uniq = np.unique(idx)
    if uniq.size and (uniq[0] < -n or uniq[-1] >= n):
        raise IndexError(f"embedding: index out of range in self (num_embeddings={n})")
    uniq = np.unique(np.where(uniq < 0, uniq + n, uniq))
    rows = w._array[uniq]
    norms = np.linalg.norm(rows.reshape(len(uniq), -1).astype(np.float64), ord=norm_type, axis=1)
    big = norms > max_norm
    if big.any():
        sel = uniq[big]
        factor = (max_norm / (norms[big] + 1e-7)).astype(w.dtype).reshape((-1,) + (1,) * (w.ndim - 1))
        with _c.no_grad():
            w[sel] = _c.as_tensor(rows[big] * factor)


# more activations, by composition (_activations.py; it imports the helpers above)
from retrograd.nn._activations import celu, glu, hardshrink, hardsigmoid, hardswish  # noqa: E402,F401
from retrograd.nn._activations import hardtanh, mish, prelu, relu6, selu, softmin  # noqa: E402,F401
from retrograd.nn._activations import softshrink, softsign, tanhshrink, threshold  # noqa: E402,F401
from retrograd.nn._activations import celu_, hardtanh_, selu_, threshold_, rrelu, rrelu_  # noqa: E402,F401
from retrograd.nn._activations import gumbel_softmax, channel_shuffle, native_channel_shuffle  # noqa: E402,F401

__all__ += ["celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "mish", "prelu", "relu6", "selu",
            "softmin", "softshrink", "softsign", "tanhshrink", "threshold", "celu_", "hardtanh_", "selu_", "threshold_",
            "rrelu", "rrelu_", "gumbel_softmax", "channel_shuffle", "native_channel_shuffle"]

# more layers as functions, one file per topic (each imports the helpers above, so they come last);
# the names are listed literally, a form type checkers follow through the import cycle (a test keeps each
# list equal to its module's __all__)
from retrograd.nn._attention import scaled_dot_product_attention, multi_head_attention_forward  # noqa: E402,F401
__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]
from retrograd.nn._conv_pool import conv_transpose1d, conv_transpose2d, conv_transpose3d, conv3d  # noqa: E402,F401
from retrograd.nn._conv_pool import max_pool1d, max_pool1d_with_indices, max_pool2d_with_indices  # noqa: E402,F401
from retrograd.nn._conv_pool import avg_pool1d, adaptive_avg_pool1d, adaptive_max_pool1d  # noqa: E402,F401
from retrograd.nn._conv_pool import adaptive_max_pool1d_with_indices, adaptive_max_pool2d  # noqa: E402,F401
from retrograd.nn._conv_pool import adaptive_max_pool2d_with_indices, lp_pool1d, lp_pool2d  # noqa: E402,F401
from retrograd.nn._conv_pool import interpolate, upsample, upsample_nearest, upsample_bilinear  # noqa: E402,F401
from retrograd.nn._conv_pool import pixel_shuffle, pixel_unshuffle, unfold, fold  # noqa: E402,F401
__all__ += ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv3d", "max_pool1d",
            "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "adaptive_avg_pool1d",
            "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
            "adaptive_max_pool2d_with_indices", "lp_pool1d", "lp_pool2d", "interpolate", "upsample", "upsample_nearest",
            "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle", "unfold", "fold"]
from retrograd.nn._pool_more import max_pool3d, max_pool3d_with_indices, avg_pool3d  # noqa: E402,F401
from retrograd.nn._pool_more import adaptive_avg_pool3d, adaptive_max_pool3d  # noqa: E402,F401
from retrograd.nn._pool_more import adaptive_max_pool3d_with_indices, lp_pool3d, max_unpool1d  # noqa: E402,F401
from retrograd.nn._pool_more import max_unpool2d, max_unpool3d, fractional_max_pool2d  # noqa: E402,F401
from retrograd.nn._pool_more import fractional_max_pool2d_with_indices, fractional_max_pool3d  # noqa: E402,F401
from retrograd.nn._pool_more import fractional_max_pool3d_with_indices  # noqa: E402,F401
__all__ += ["max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
            "adaptive_max_pool3d_with_indices", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
            "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
            "fractional_max_pool3d_with_indices"]
from retrograd.nn._normalization import group_norm, instance_norm, rms_norm, local_response_norm  # noqa: E402,F401
from retrograd.nn._normalization import normalize, cosine_similarity, pairwise_distance, pdist  # noqa: E402,F401
from retrograd.nn._normalization import embedding_bag  # noqa: E402,F401
__all__ += ["group_norm", "instance_norm", "rms_norm", "local_response_norm", "normalize", "cosine_similarity",
            "pairwise_distance", "pdist", "embedding_bag"]
from retrograd.nn._losses import smooth_l1_loss, kl_div, margin_ranking_loss, hinge_embedding_loss  # noqa: E402,F401
from retrograd.nn._losses import cosine_embedding_loss, triplet_margin_loss  # noqa: E402,F401
from retrograd.nn._losses import triplet_margin_with_distance_loss, multilabel_soft_margin_loss  # noqa: E402,F401
from retrograd.nn._losses import multilabel_margin_loss, multi_margin_loss, soft_margin_loss  # noqa: E402,F401
from retrograd.nn._losses import poisson_nll_loss, gaussian_nll_loss, ctc_loss  # noqa: E402,F401
__all__ += ["smooth_l1_loss", "kl_div", "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
            "triplet_margin_loss", "triplet_margin_with_distance_loss", "multilabel_soft_margin_loss",
            "multilabel_margin_loss", "multi_margin_loss", "soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
            "ctc_loss"]
from retrograd.nn._vision import affine_grid, grid_sample  # noqa: E402,F401
__all__ += ["affine_grid", "grid_sample"]
from retrograd.nn._dropout import dropout1d, dropout2d, dropout3d, alpha_dropout  # noqa: E402,F401
from retrograd.nn._dropout import feature_alpha_dropout  # noqa: E402,F401
__all__ += ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
from retrograd.nn._linear_cross_entropy import linear_cross_entropy, conv_tbc  # noqa: E402,F401
from retrograd.nn._linear_cross_entropy import GRID_SAMPLE_INTERPOLATION_MODES  # noqa: E402,F401
from retrograd.nn._linear_cross_entropy import GRID_SAMPLE_PADDING_MODES  # noqa: E402,F401
__all__ += ["linear_cross_entropy", "conv_tbc", "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES"]
from retrograd.nn import grad  # noqa: E402,F401  (torch.nn.functional.grad is torch.nn.grad)


import typing as _typing  # noqa: E402
if not _typing.TYPE_CHECKING:   # (a type checker would accept every name)
    from retrograd._missing import module_getattr as _module_getattr
    __getattr__ = _module_getattr("torch.nn.functional", __name__)   # torch names retrograd lacks say why
