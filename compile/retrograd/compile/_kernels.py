"""The numpy backend's kernels: NumPy calls that compute an op of the table
on arrays, into a buffer allocated once per guard key where the op has one
(ufunc ``out=``).

A kernel is only a candidate: the program builder runs it on the trace's
own arrays and keeps it only when it gives the eager op's dtype, shape and
values (_program.py); otherwise the step calls the op itself.
"""
from __future__ import annotations

import numpy as np

from retrograd.compile._trace import Ref

_UNARY = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "sqrt": np.sqrt, "square": np.square, "reciprocal": np.reciprocal,
    "abs": np.absolute, "expm1": np.expm1, "log1p": np.log1p, "exp2": np.exp2,
    "log2": np.log2, "log10": np.log10, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "floor": np.floor,
    "ceil": np.ceil, "trunc": np.trunc, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite,
}
_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "true_divide": np.true_divide, "pow": np.power, "maximum": np.maximum,
    "minimum": np.minimum, "atan2": np.arctan2, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
}


def _relu(x, out):
    return np.maximum(x, 0, out=out)


def _sigmoid(x, out):
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    return np.reciprocal(out, out=out)


def _clone(x, out):
    np.copyto(out, x)
    return out


def _is_tensor_free(x):
    if type(x) is Ref:
        return False
    if type(x) in (tuple, list):
        return all(_is_tensor_free(y) for y in x)
    return True


class Kernel:
    """``fn(*operands, **kw)``; ``out``: whether it takes ``out=``; ``close``:
    values may differ from the op's by rounding (compared with a tolerance)."""
    __slots__ = ("fn", "operands", "kw", "out", "close")

    def __init__(self, fn, operands, kw=None, out=True, close=False):
        self.fn, self.operands, self.kw, self.out, self.close = fn, operands, kw or {}, out, close


def candidate(step, out_array):
    """A Kernel for ``step`` (an op whose result is ``out_array`` at trace
    time), or None when NumPy has no direct equivalent here."""
    name, a = step.name, step.args
    if step.kind != "op" or len(step.outs) != 1 or not isinstance(out_array, np.ndarray):
        return None
    shape = out_array.shape
    if name in _UNARY and len(a) == 1 and type(a[0]) is Ref:
        return Kernel(_UNARY[name], a)
    if name in _BINARY and len(a) >= 2 and (type(a[0]) is Ref or type(a[1]) is Ref):
        if len(a) == 3 and a[2] != 1:          # add/sub with alpha
            return None
        if not all(type(x) is Ref or isinstance(x, (int, float, bool)) for x in a[:2]):
            return None
        return Kernel(_BINARY[name], a[:2])
    if name == "relu" and len(a) == 1:
        return Kernel(_relu, a)
    if name == "sigmoid" and len(a) == 1:
        return Kernel(_sigmoid, a, close=True)
    if name == "clone" and len(a) == 1:
        return Kernel(_clone, a)
    if name in ("sum", "mean") and len(a) == 4 and a[3] is None and _is_tensor_free(a[1:]):
        dim = a[1]
        axis = tuple(dim) if isinstance(dim, (list, tuple)) else dim
        if axis == ():
            axis = None
        # (sum: the ufunc's own reduce, which np.sum calls after a Python
        # layer that costs more than summing a small array)
        return Kernel(add_reduce if name == "sum" else np.mean, a[:1],
                      {"axis": axis, "keepdims": bool(a[2])}, close=True)
    if name in ("matmul", "mm") and len(a) == 2 and out_array.ndim >= 1:
        return Kernel(np.matmul, a, close=True)
    if name in ("reshape", "view") and len(a) == 2:
        return Kernel(np.reshape, a[:1], {"shape": shape}, out=False)
    if name in ("expand", "broadcast_to") and len(a) == 2:
        if out_array.size <= _SMALL:
            # a copy into a buffer: np.broadcast_to's Python overhead costs
            # more than copying a small array (a gradient expanded by sum's
            # backward, most often)
            return Kernel(_copy_into, a[:1])
        return Kernel(np.broadcast_to, a[:1], {"shape": shape}, out=False)
    if name == "t" and len(a) == 1:
        return Kernel(np.transpose, a, out=False)
    if name == "transpose" and len(a) == 3 and _is_tensor_free(a[1:]):
        return Kernel(np.swapaxes, a[:1], {"axis1": a[1], "axis2": a[2]}, out=False)
    if name == "permute" and len(a) == 2 and _is_tensor_free(a[1:]):
        return Kernel(np.transpose, a[:1], {"axes": tuple(a[1])}, out=False)
    if name == "getitem" and len(a) == 2 and _is_tensor_free(a[1]):
        idx = a[1]
        return Kernel(_getitem, a[:1], {"index": tuple(idx) if type(idx) is list else idx}, out=False)
    if name == "_to_dtype" and len(a) == 2:
        return Kernel(_astype, a[:1], {"dtype": out_array.dtype}, out=False)
    if name == "where" and len(a) == 3:
        return Kernel(np.where, a, out=False)
    return None


_SMALL = 4096
# one object (each `np.add.reduce` is a new bound method): the numba backend
# tells a sum's kernel by identity
add_reduce = np.add.reduce


def _copy_into(x, out):
    np.copyto(out, x)
    return out


def _getitem(x, index):
    return x[index]


def _astype(x, dtype):
    return x.astype(dtype)


def agrees(got, want, close):
    """Whether a kernel's result stands for the op's (dtype, shape, values)."""
    if not isinstance(got, np.ndarray) or got.dtype != want.dtype or got.shape != want.shape:
        return False
    if close and got.dtype.kind in "fc":
        tol = 64 * np.finfo(got.dtype).eps
        return bool(np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True))
    return bool(np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"))
