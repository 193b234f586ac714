"""torch's elementwise functions and predicates that are exact composites of
the table's ops (deg2rad, logaddexp, xlogy, hypot, nan_to_num, ...), and the
comparisons and reductions a NumPy-minded program reaches for (isclose,
allclose, equal, nansum, nanmean, aminmax, var_mean, count_nonzero).

Each differentiable one is written with the table's ops, so its gradient and
every higher one come from theirs; where torch's derivative formula has a
special case (xlogy at 0, sinc at 0, copysign at 0), the composite selects
with ``where`` on an argument made safe first, so no ``nan`` leaks into the
gradient of the branch that was not taken. The predicates compute on the
arrays and return tensors that never require grad, as torch's.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core import _creation
from retrograd.core._dtype_rules import get_default_dtype
from retrograd.core._dtypes import _is_inexact_dtype, is_floating_dtype as _is_floating_dtype
from retrograd.core.abi import Tensor, composite_op
from retrograd.core.grad_mode import no_grad

__all__ = [
    "deg2rad", "rad2deg", "frac", "logit", "xlogy", "hypot", "logaddexp", "logaddexp2", "copysign",
    "sinc", "heaviside", "signbit", "nan_to_num", "isposinf", "isneginf", "isreal", "isclose",
    "allclose", "equal", "float_power", "positive", "count_nonzero", "nansum", "nanmean", "aminmax",
    "var_mean", "std_mean", "is_complex", "is_floating_point", "is_nonzero", "is_same_size", "numel",
    "is_signed", "scalar_tensor",
]


def _t(x, fn: str, arg: str = "input") -> Tensor:
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be Tensor, not {type(x).__name__}")


def _operand(x, like: Tensor) -> Tensor:
    """A second operand as a tensor on `like`'s device (numbers keep NumPy's
    weak-scalar dtype rules through the ops that use them)."""
    return x if isinstance(x, Tensor) else _creation.as_tensor(x, device=like.device)


def _floating(x: Tensor) -> Tensor:
    """`x` itself when floating or complex, else in the default dtype (torch
    computes the float functions of integers in float32)."""
    if _is_inexact_dtype(x._array.dtype):
        return x
    return x.to(get_default_dtype())


def _mask(x: Tensor, arr) -> Tensor:
    return _creation._make(np.asarray(arr) if not hasattr(arr, "__cuda_array_interface__") else arr,
                           x.device, False)


_ONE_ARG = """
    Parameters
    ----------
    input : Tensor
        The input."""
_TWO_ARGS = """
    Parameters
    ----------
    input : Tensor
        The first operand.
    other : Tensor or number
        The second operand, broadcast against ``input``."""


def _doc(summary: str, body: str, params: str, returns: str, example: str) -> str:
    return (f"{summary}\n\n    {body}\n{params}\n\n    Returns\n    -------\n    Tensor\n        {returns}\n\n"
            f"    Examples\n    --------\n    >>> import retrograd as rg\n    {example}\n    ")


@composite_op("deg2rad")
def deg2rad(input) -> Tensor:
    return _floating(_t(input, "deg2rad")) * (math.pi / 180.0)


@composite_op("rad2deg")
def rad2deg(input) -> Tensor:
    return _floating(_t(input, "rad2deg")) * (180.0 / math.pi)


deg2rad.__doc__ = _doc("Convert angles from degrees to radians.",
                       "``input * pi / 180``; integer inputs give the default float dtype.", _ONE_ARG,
                       "The angles in radians.",
                       ">>> rg.deg2rad(rg.tensor([180.0, 90.0]))\n    tensor([3.1415927, 1.5707964])")
rad2deg.__doc__ = _doc("Convert angles from radians to degrees.",
                       "``input * 180 / pi``; integer inputs give the default float dtype.", _ONE_ARG,
                       "The angles in degrees.",
                       ">>> rg.rad2deg(rg.tensor([3.1415927, -1.5707964]))\n    tensor([180., -90.])")


@composite_op("frac")
def frac(input) -> Tensor:
    x = _t(input, "frac")
    return x - _abi.trunc(x)


frac.__doc__ = _doc("The fractional part of each element, with the sign of the element.",
                    "``input - trunc(input)``; its gradient is ``grad``.", _ONE_ARG,
                    "The fractional parts.",
                    ">>> rg.frac(rg.tensor([1.5, -2.25, 3.0]))\n    tensor([ 0.5 , -0.25,  0.  ])")


@composite_op("logit")
def logit(input, eps=None) -> Tensor:
    x = _floating(_t(input, "logit"))
    if eps is not None:
        x = _abi.clamp(x, eps, 1.0 - eps)
    return _abi.log(x / (1.0 - x))


logit.__doc__ = _doc("The log-odds ``log(p / (1 - p))`` of each element, the inverse of sigmoid.",
                     "With ``eps``, the input is first clamped to ``[eps, 1 - eps]``, so the gradient is 0\n"
                     "    outside that range (torch's rule).",
                     _ONE_ARG + "\n    eps : float, optional\n        The clamping margin (default: none).",
                     "The log-odds.",
                     ">>> rg.logit(rg.tensor([0.5, 0.75]))\n    tensor([0.       , 1.0986123])")


@composite_op("xlogy")
def xlogy(input, other) -> Tensor:
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError("xlogy(): one of 'input' and 'other' must be a Tensor")
        input = _creation.as_tensor(input, device=other.device)
    y = _operand(other, input)
    # torch's rule: the gradient for input is log(other), but 0 where input is
    # 0 and other <= 0 (where the value is 0 too): log(1) there
    safe = _abi.where((input == 0) & (y <= 0), 1.0, y)
    return input * _abi.log(safe)


xlogy.__doc__ = _doc("``input * log(other)``, and 0 where ``input`` is 0 (unless ``other`` is ``nan``).",
                     "The gradient for ``input`` is ``log(other)`` (0 where ``input`` is 0 and ``other`` is\n"
                     "    not positive), for ``other`` ``input / other``.", _TWO_ARGS, "The broadcast result.",
                     ">>> rg.xlogy(rg.tensor([0.0, 2.0]), rg.tensor([0.0, 3.0]))\n"
                     "    tensor([0.       , 2.1972246])")


@composite_op("hypot")
def hypot(input, other) -> Tensor:
    x = _t(input, "hypot")
    y = _operand(other, x)
    return _abi.sqrt(x * x + y * y)


hypot.__doc__ = _doc("The hypotenuse ``sqrt(input**2 + other**2)`` of each pair of elements.",
                     "Its gradient is ``input / result`` and ``other / result``.", _TWO_ARGS,
                     "The broadcast result.",
                     ">>> rg.hypot(rg.tensor([3.0, 5.0]), rg.tensor([4.0, 12.0]))\n    tensor([ 5., 13.])")


@composite_op("logaddexp")
def logaddexp(input, other) -> Tensor:
    x = _t(input, "logaddexp")
    y = _operand(other, x)
    m = _abi.maximum(x, y)
    # finite m only: inf - inf would make nan where both are the same infinity
    d = _abi.where(_abi.isfinite(m), -_abi.abs(x - y), 0.0)
    return m + _abi.log1p(_abi.exp(d))


@composite_op("logaddexp2")
def logaddexp2(input, other) -> Tensor:
    x = _t(input, "logaddexp2")
    y = _operand(other, x)
    ln2 = math.log(2.0)
    return logaddexp(x * ln2, y * ln2) / ln2


logaddexp.__doc__ = _doc("``log(exp(input) + exp(other))``, computed without overflow.",
                         "``max(input, other) + log1p(exp(-|input - other|))``; where the two are equal each\n"
                         "    gets half the gradient.", _TWO_ARGS, "The broadcast result.",
                         ">>> rg.logaddexp(rg.tensor([0.0, 1.0]), rg.tensor([0.0, -1.0]))\n"
                         "    tensor([0.6931472, 1.126928 ])")
logaddexp2.__doc__ = _doc("``log2(2**input + 2**other)``, computed without overflow.",
                          "The base-2 form of :func:`retrograd.logaddexp`.", _TWO_ARGS, "The broadcast result.",
                          ">>> rg.logaddexp2(rg.tensor([1.0, 3.0]), rg.tensor([1.0, 3.0]))\n"
                          "    tensor([2., 4.])")


@composite_op("copysign")
def copysign(input, other) -> Tensor:
    x = _floating(_t(input, "copysign"))
    y = _operand(other, x)
    neg = _mask(x, np.signbit(y._array)) if _is_inexact_dtype(y._array.dtype) else y < 0
    return _abi.where(neg, -_abi.abs(x), _abi.abs(x))


copysign.__doc__ = _doc("The magnitude of ``input`` with the sign of ``other`` (``-0.0`` counts as negative).",
                        "The gradient for ``input`` is ``grad * sign`` (0 where ``input`` is 0), none for\n"
                        "    ``other``.", _TWO_ARGS, "The broadcast result.",
                        ">>> rg.copysign(rg.tensor([1.0, -2.0, 3.0]), rg.tensor([-1.0, 1.0, -0.0]))\n"
                        "    tensor([-1.,  2., -3.])")


@composite_op("sinc")
def sinc(input) -> Tensor:
    x = _floating(_t(input, "sinc"))
    zero = x == 0
    px = _abi.where(zero, 1.0, x) * math.pi
    return _abi.where(zero, 1.0, _abi.sin(px) / px)


sinc.__doc__ = _doc("The normalized sinc ``sin(pi * x) / (pi * x)`` of each element, 1 at 0.",
                    "Its gradient at 0 is 0.", _ONE_ARG, "The sinc values.",
                    ">>> rg.sinc(rg.tensor([0.0, 0.5, -0.5]))\n    tensor([1.       , 0.63661975, 0.63661975])")


@composite_op("heaviside")
def heaviside(input, values) -> Tensor:
    x = _t(input, "heaviside")
    v = _operand(values, x)
    if x._array.dtype != v._array.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes: "
                           f"{x._array.dtype} and {v._array.dtype}; convert one of them first")
    with no_grad():
        return _abi.where(x == 0, v, (x > 0).to(x._array.dtype))


heaviside.__doc__ = _doc("The Heaviside step: 0 below 0, 1 above, ``values`` at 0.",
                         "The result never requires grad (the step has no useful derivative).",
                         _ONE_ARG + "\n    values : Tensor\n        What to take where ``input`` is 0 (same dtype).",
                         "The step values.",
                         ">>> rg.heaviside(rg.tensor([-1.0, 0.0, 2.0]), rg.tensor([0.5]))\n"
                         "    tensor([0. , 0.5, 1. ])")


def _predicate(name: str, fn, summary: str, example: str):
    @composite_op(name)
    def pred(input) -> Tensor:
        x = _t(input, name)
        return _mask(x, fn(x._array))
    pred.__name__ = pred.__qualname__ = name
    pred.__doc__ = _doc(summary, "A bool tensor of ``input``'s shape, which never requires grad.", _ONE_ARG,
                        "The bool result.", example)
    return pred


signbit = _predicate("signbit", np.signbit, "Whether each element has its sign bit set (``-0.0`` included).",
                     ">>> rg.signbit(rg.tensor([-1.0, -0.0, 2.0]))\n    tensor([ True,  True, False])")
isposinf = _predicate("isposinf", np.isposinf, "Whether each element is positive infinity.",
                      ">>> rg.isposinf(rg.tensor([float('inf'), -float('inf'), 1.0]))\n"
                      "    tensor([ True, False, False])")
isneginf = _predicate("isneginf", np.isneginf, "Whether each element is negative infinity.",
                      ">>> rg.isneginf(rg.tensor([float('inf'), -float('inf'), 1.0]))\n"
                      "    tensor([False,  True, False])")
isreal = _predicate("isreal", lambda a: np.imag(a) == 0 if a.dtype.kind == "c" else np.ones(a.shape, bool),
                    "Whether each element is real (a zero imaginary part; always for real dtypes).",
                    ">>> rg.isreal(rg.tensor([1.0, 2.0]))\n    tensor([ True,  True])")


@composite_op("nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor:
    x = _t(input, "nan_to_num")
    if not _is_inexact_dtype(x._array.dtype):
        return x.clone()
    info = np.finfo(x._array.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    out = _abi.where(_abi.isnan(x), nan, x)
    out = _abi.where(_mask(x, np.isposinf(x._array)), hi, out)
    return _abi.where(_mask(x, np.isneginf(x._array)), lo, out)


nan_to_num.__doc__ = _doc("Replace ``nan``, ``inf`` and ``-inf`` by finite numbers.",
                          "By default ``nan`` becomes 0 and the infinities the dtype's largest and smallest\n"
                          "    values. The gradient flows through the elements kept.",
                          _ONE_ARG + "\n    nan, posinf, neginf : float, optional\n"
                          "        The replacements (defaults: 0, the dtype's max, its min).",
                          "The cleaned tensor.",
                          ">>> rg.nan_to_num(rg.tensor([float('nan'), float('inf'), 1.0]), posinf=9.0)\n"
                          "    tensor([0., 9., 1.])")


@composite_op("isclose")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    x = _t(input, "isclose")
    y = _operand(other, x)
    if x._array.dtype != y._array.dtype and isinstance(other, Tensor):
        raise RuntimeError(f"{x._array.dtype} did not match {y._array.dtype}")
    return _mask(x, np.isclose(x._array, y._array, rtol=rtol, atol=atol, equal_nan=equal_nan))


@composite_op("allclose")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(isclose(input, other, rtol, atol, equal_nan)._array.all())


_CLOSE = (_TWO_ARGS + "\n    rtol, atol : float, optional\n        The tolerances: close means "
          "``|input - other| <= atol + rtol * |other|``.\n    equal_nan : bool, optional\n"
          "        Whether two ``nan`` count as close (default False).")
isclose.__doc__ = _doc("Whether each pair of elements is close.", "A bool tensor that never requires grad.",
                       _CLOSE, "The bool result.",
                       ">>> rg.isclose(rg.tensor([1.0, 2.0]), rg.tensor([1.0 + 1e-9, 2.1]))\n"
                       "    tensor([ True, False])")
allclose.__doc__ = _doc("Whether all pairs of elements are close (a Python bool).",
                        "``isclose(...).all()`` as a Python bool.", _CLOSE, "``True`` or ``False`` (a bool).",
                        ">>> rg.allclose(rg.tensor([1.0, 2.0]), rg.tensor([1.0, 2.0 + 1e-9]))\n    True")


@composite_op("equal")
def equal(input, other) -> bool:
    x = _t(input, "equal")
    y = _t(other, "equal", "other")
    return x.shape == y.shape and bool((x._array == y._array).all())


equal.__doc__ = _doc("Whether two tensors have the same shape and elements (a Python bool).",
                     "``nan`` is never equal to itself.",
                     "\n    Parameters\n    ----------\n    input, other : Tensor\n        The tensors.",
                     "``True`` or ``False`` (a bool).",
                     ">>> rg.equal(rg.tensor([1, 2]), rg.tensor([1, 2]))\n    True")


@composite_op("float_power")
def float_power(input, exponent) -> Tensor:
    if not isinstance(input, Tensor):
        input = _creation.as_tensor(input, device=exponent.device)
    wide = np.complex128 if input._array.dtype.kind == "c" else np.float64
    e = exponent.to(wide) if isinstance(exponent, Tensor) else exponent
    return _abi.pow(input.to(wide), e)


float_power.__doc__ = _doc("``input ** exponent`` in double precision (float64, or complex128).",
                           "Both operands are converted first, as torch's.",
                           "\n    Parameters\n    ----------\n    input : Tensor or number\n        The base.\n"
                           "    exponent : Tensor or number\n        The exponent.", "The float64 result.",
                           ">>> rg.float_power(rg.tensor([2, 3]), 2)\n    tensor([4., 9.], dtype=float64)")


@composite_op("positive")
def positive(input) -> Tensor:
    x = _t(input, "positive")
    if x._array.dtype == np.bool_:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return x


positive.__doc__ = _doc("``input`` itself (unary plus); refused for bool tensors.", "No copy is made.", _ONE_ARG,
                        "``input``.", ">>> rg.positive(rg.tensor([-1.0, 2.0]))\n    tensor([-1.,  2.])")


def _dims(dim, ndim: int):
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(d % ndim if ndim else 0 for d in dims)


@composite_op("count_nonzero")
def count_nonzero(input, dim=None) -> Tensor:
    x = _t(input, "count_nonzero")
    axis = _dims(dim, x.ndim)
    return _mask(x, np.asarray(np.count_nonzero(x._array, axis=axis), dtype=np.int64))


count_nonzero.__doc__ = _doc("The number of non-zero elements, over ``dim`` or the whole tensor.",
                             "An int64 tensor that never requires grad.",
                             _ONE_ARG + "\n    dim : int or tuple of int, optional\n        The dimensions to count over.",
                             "The counts.",
                             ">>> rg.count_nonzero(rg.tensor([[0.0, 1.0], [2.0, 3.0]]), dim=0)\n"
                             "    tensor([1, 2])")


@composite_op("nansum")
def nansum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    x = _t(input, "nansum")
    if _is_inexact_dtype(x._array.dtype):
        x = _abi.where(_abi.isnan(x), 0.0, x)
    return _abi.sum(x, dim, keepdim, dtype=dtype)


@composite_op("nanmean")
def nanmean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    x = _t(input, "nanmean")
    if not _is_inexact_dtype(x._array.dtype):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{x._array.dtype}")
    kept = ~_abi.isnan(x)
    return nansum(x, dim, keepdim, dtype=dtype) / _abi.sum(kept, dim, keepdim).to(x._array.dtype)


_NANRED = (_ONE_ARG + "\n    dim : int or tuple of int, optional\n        The dimensions to reduce (default: all)."
           "\n    keepdim : bool, optional\n        Keep the reduced dimensions with size 1.\n"
           "    dtype : dtype, optional\n        The dtype to compute in.")
nansum.__doc__ = _doc("The sum of the elements, ``nan`` counted as 0.",
                      "The gradient is ``grad`` for every element but the ``nan`` ones (0 there).", _NANRED,
                      "The sums.", ">>> rg.nansum(rg.tensor([1.0, float('nan'), 2.0]))\n    tensor(3.)")
nanmean.__doc__ = _doc("The mean of the elements that are not ``nan``.",
                       "All ``nan`` gives ``nan`` (0 / 0).", _NANRED, "The means.",
                       ">>> rg.nanmean(rg.tensor([1.0, float('nan'), 2.0]))\n    tensor(1.5)")

aminmax_result = namedtuple("aminmax", ["min", "max"])


@composite_op("aminmax")
def aminmax(input, *, dim=None, keepdim=False):
    x = _t(input, "aminmax")
    if x.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                           "has no identity.")
    d = () if dim is None else dim
    if dim is None and keepdim:
        return aminmax_result(_abi.amin(x, d).reshape([1] * x.ndim), _abi.amax(x, d).reshape([1] * x.ndim))
    return aminmax_result(_abi.amin(x, d, keepdim), _abi.amax(x, d, keepdim))


aminmax.__doc__ = _doc("The smallest and the largest element, over ``dim`` or the whole tensor.",
                       "A named tuple ``(min, max)``; ties share the gradient as in amin/amax.",
                       _ONE_ARG + "\n    dim : int, optional\n        The dimension to reduce (default: all).\n"
                       "    keepdim : bool, optional\n        Keep the reduced dimension with size 1.",
                       "``(min, max)``.",
                       ">>> rg.aminmax(rg.tensor([3.0, -1.0, 2.0]))\n"
                       "    aminmax(min=tensor(-1.), max=tensor(3.))")


def _stat_mean(fn, name: str):
    @composite_op(name)
    def stat_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
        x = _t(input, name)
        if unbiased is not None:
            correction = 1 if unbiased else 0
        return fn(x, dim, keepdim=keepdim, correction=correction), _abi.mean(x, dim, keepdim)
    stat_mean.__name__ = stat_mean.__qualname__ = name
    what = "variance" if name == "var_mean" else "standard deviation"
    stat_mean.__doc__ = _doc(f"The {what} and the mean, over ``dim`` or the whole tensor.",
                             f"A tuple ``({what.split()[-1]}, mean)``; ``correction`` is Bessel's (1: divide by n - 1).",
                             _ONE_ARG + "\n    dim : int or tuple of int, optional\n        The dimensions to reduce."
                             "\n    correction : int, optional\n        The degrees of freedom removed (default 1)."
                             "\n    keepdim : bool, optional\n        Keep the reduced dimensions with size 1.",
                             f"``({what.split()[-1]}, mean)``.",
                             f">>> rg.{name}(rg.tensor([1.0, 2.0, 3.0, 4.0]))\n    @@{name}")
    return stat_mean


var_mean = _stat_mean(_abi.var, "var_mean")
std_mean = _stat_mean(_abi.std, "std_mean")
var_mean.__doc__ = var_mean.__doc__.replace("@@var_mean", "(tensor(1.6666666), tensor(2.5))")
std_mean.__doc__ = std_mean.__doc__.replace("@@std_mean", "(tensor(1.2909944), tensor(2.5))")


def _is(name: str, test, summary: str, example: str):
    def fn(input) -> bool:
        return test(_t(input, name))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{summary}\n\n    Parameters\n    ----------\n    input : Tensor\n        The tensor.\n\n"
                  f"    Returns\n    -------\n    bool\n\n    Examples\n    --------\n    >>> import retrograd as rg\n"
                  f"    {example}\n    ")
    return fn


is_complex = _is("is_complex", lambda x: x._array.dtype.kind == "c", "Whether the dtype is complex.",
                 ">>> rg.is_complex(rg.tensor([1.0]))\n    False")
is_floating_point = _is("is_floating_point", lambda x: _is_floating_dtype(x._array.dtype),
                        "Whether the dtype is a floating-point one.",
                        ">>> rg.is_floating_point(rg.tensor([1.0]))\n    True")
is_signed = _is("is_signed", lambda x: x._array.dtype.kind in "ifc" or _is_floating_dtype(x._array.dtype),
                "Whether the dtype is signed (every float and complex dtype, the signed integers).",
                ">>> rg.is_signed(rg.tensor([1], dtype=rg.uint8))\n    False")
numel = _is("numel", lambda x: int(x._array.size), "The number of elements.",
            ">>> rg.numel(rg.zeros(2, 3))\n    6")
numel.__doc__ = numel.__doc__.replace("bool\n", "int\n")


def is_nonzero(input) -> bool:
    """Whether a one-element tensor is non-zero (``bool(input)``).

    Parameters
    ----------
    input : Tensor
        A tensor of exactly one element.

    Returns
    -------
    bool

    Raises
    ------
    RuntimeError
        For a tensor of no or several elements.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_nonzero(rg.tensor([0.5]))
    True
    """
    x = _t(input, "is_nonzero")
    if x._array.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if x._array.size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(x._array.reshape(()).item())


def is_same_size(input, other) -> bool:
    """Whether two tensors have the same shape.

    Parameters
    ----------
    input, other : Tensor
        The tensors.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_same_size(rg.zeros(2, 3), rg.ones(2, 3))
    True
    """
    return _t(input, "is_same_size").shape == _t(other, "is_same_size", "other").shape


@composite_op("scalar_tensor")
def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 0-d tensor holding the number ``s``, in the default float dtype unless told.

    Parameters
    ----------
    s : number
        The value.
    dtype : dtype, optional
        The dtype (default: the default float dtype, whatever the number).
    device : str or Device, optional
        Where it lives.
    requires_grad : bool, optional
        Whether it records operations.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.scalar_tensor(3)
    tensor(3.)
    """
    return _creation.tensor(s, dtype=get_default_dtype() if dtype is None else dtype, device=device,
                            requires_grad=requires_grad)


def _no_lazy_bit(name: str, what: str, returns: str, example: str, identity: bool):
    def fn(input):
        x = _t(input, name)
        return x if identity else False
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{what}\n\n    torch marks conjugated and negated views with lazy bits that a later op\n"
                  f"    resolves; retrograd computes ``conj`` and ``neg`` at once, so no tensor\n"
                  f"    carries such a bit.\n\n    Parameters\n    ----------\n    input : Tensor\n"
                  f"        The tensor.\n\n    Returns\n    -------\n    {returns}\n\n    Examples\n"
                  f"    --------\n    >>> import retrograd as rg\n    {example}\n    ")
    return fn


is_conj = _no_lazy_bit("is_conj", "Whether the tensor is a lazily conjugated view: never, in retrograd.", "bool",
                       ">>> rg.is_conj(rg.tensor([1.0]))\n    False", False)
is_neg = _no_lazy_bit("is_neg", "Whether the tensor is a lazily negated view: never, in retrograd.", "bool",
                      ">>> rg.is_neg(rg.tensor([1.0]))\n    False", False)
resolve_conj = _no_lazy_bit("resolve_conj", "The tensor with its lazy conjugation applied: ``input`` itself here.",
                            "Tensor\n        ``input``.",
                            ">>> rg.resolve_conj(rg.tensor([1.0, 2.0]))\n    tensor([1., 2.])", True)
resolve_neg = _no_lazy_bit("resolve_neg", "The tensor with its lazy negation applied: ``input`` itself here.",
                           "Tensor\n        ``input``.",
                           ">>> rg.resolve_neg(rg.tensor([1.0, 2.0]))\n    tensor([1., 2.])", True)
__all__ += ["is_conj", "is_neg", "resolve_conj", "resolve_neg"]


def sum_to_size(input, *size) -> Tensor:
    """``input`` summed down to ``size``, which must broadcast to its shape.

    torch's ``Tensor.sum_to_size``: the inverse of broadcasting (leading
    dimensions are summed away, dimensions of size 1 summed with keepdim).

    Parameters
    ----------
    input : Tensor
        The tensor.
    *size : int or sequence of int
        The shape to reduce to.

    Returns
    -------
    Tensor

    Raises
    ------
    RuntimeError
        If ``size`` does not expand to ``input``'s shape.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    x = _t(input, "sum_to_size")
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else tuple(size)
    try:
        ok = np.broadcast_shapes(shape, tuple(x.shape)) == tuple(x.shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"size {list(shape)} is not expandable to size {list(x.shape)}.")
    return _abi.sum_to(x, shape)
