"""Pointwise composites of the table's ops: addcmul and addcdiv (torch's
functions of those names), and the draws that Tensor's in-place random
methods (normal_, uniform_, bernoulli_, exponential_) write."""
from __future__ import annotations

import numpy as np

from retrograd.core import _creation
from retrograd.core._dtypes import _is_inexact_dtype, is_floating_dtype as _is_floating_dtype
from retrograd.core.abi import Tensor, composite_op

__all__ = ["addcmul", "addcdiv"]


_ADDC_DOC = """``input + value * tensor1 {sym} tensor2``, element by element, broadcast.

    Parameters
    ----------
    input, tensor1, tensor2 : Tensor
        The operands.
    value : number, optional
        The factor of the {what} (default 1).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.{name}(rg.tensor([1.0, 1.0]), rg.tensor([2.0, 3.0]), rg.tensor([4.0, 6.0]), value=2)
    {example}
    """


@composite_op("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    return input + value * (tensor1 * tensor2)


@composite_op("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    return input + value * (tensor1 / tensor2)


addcmul.__doc__ = _ADDC_DOC.format(sym="*", what="product", name="addcmul", example="tensor([17., 37.])")
addcdiv.__doc__ = _ADDC_DOC.format(sym="/", what="quotient", name="addcdiv", example="tensor([2., 2.])")


def _draws(self, kind, a, b, generator):
    # values of self's shape and dtype for an in-place random method (their
    # history is none: the method's gradient to self's old value is zero)
    if not _is_inexact_dtype(self.dtype) and kind not in ("random", "geometric"):
        raise NotImplementedError(f"{kind}_(): not implemented for {self.dtype} tensors (as torch); use a "
                                  "floating tensor")
    g = _creation._generator(generator, kind + "_", self.device)
    shape = tuple(self.shape)
    if kind == "normal":
        if b < 0:
            raise RuntimeError(f"normal_ expects std >= 0.0, but found std {b}")
        out = a + b * g.standard_normal(shape)
    elif kind == "uniform":
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
        out = a + (b - a) * g.random(shape)
    elif kind == "bernoulli":
        if not 0 <= a <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={a}")
        out = g.random(shape) < a
    elif kind == "cauchy":
        if b <= 0:
            raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={b}")
        out = a + b * g.standard_cauchy(shape)
    elif kind == "log_normal":
        if b <= 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={b}")
        out = g.lognormal(a, b, shape)
    elif kind == "geometric":
        if not 0 < a < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but found p={a}")
        out = g.geometric(a, shape)
    elif kind == "random":
        out = g.integers(a, b, shape, endpoint=False)
    else:
        if a <= 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={a}")
        out = g.standard_exponential(shape) / a
    return _creation._make(out.astype(self.dtype), self.device, False)


def _random_bounds(self, frm, to, kwargs):
    # Tensor.random_'s arguments: random_(), random_(to), random_(from, to), from= as a keyword
    given_from = "from" in kwargs
    if given_from:
        frm = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"random_() got unexpected keyword arguments {sorted(kwargs)}")
    if to is None and frm is not None and not given_from:
        frm, to = None, frm              # random_(to)
    return _random_range(self, frm, to)


def _dim_order(shape, strides, ambiguity_check):
    # Tensor.dim_order: the dims by decreasing stride; ambiguous when two dims of size above 1 tie
    order = tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))
    if ambiguity_check:
        big = [strides[d] for d in range(len(strides)) if shape[d] != 1]
        if len(set(big)) != len(big):
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                               "memory formats.")
    return order


def _random_range(self, frm, to):
    # random_(): [0, 2**mantissa] for floats (every integer there is exact), the dtype's range for ints;
    # random_(to): [0, to); random_(from, to): [from, to) (to=None: the dtype's top)
    kind = self.dtype.kind
    if _is_floating_dtype(self.dtype):
        top = 2 ** (np.finfo(self.dtype).nmant + 1) + 1
    elif kind == "b":
        top = 2
    else:
        top = int(np.iinfo(self.dtype).max) + 1
    if to is None and frm is None:
        return 0, top
    if to is None:
        return int(frm), top
    if frm is None:
        frm = 0
    if not int(frm) < int(to):
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={frm} >= to={to}")
    return int(frm), int(to)
