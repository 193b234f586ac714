"""The numpy backend's kernels: NumPy calls that compute an op of the table
on arrays, into a buffer allocated once per guard key where the op has one
(ufunc ``out=``).

A kernel is only a candidate: the program builder runs it on the trace's
own arrays and keeps it only when it gives the eager op's dtype, shape and
values (_program.py); otherwise the step calls the op itself.
"""
from __future__ import annotations

import numpy as np

from retrograd.compile import _arrays, _loops
from retrograd.compile._trace import Ref

_UNARY = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "sqrt": np.sqrt, "square": np.square, "reciprocal": np.reciprocal,
    "abs": np.absolute, "expm1": np.expm1, "log1p": np.log1p, "exp2": np.exp2,
    "log2": np.log2, "log10": np.log10, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "floor": np.floor,
    "ceil": np.ceil, "trunc": np.trunc, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "logical_not": np.logical_not, "bitwise_not": np.invert,
}
_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "true_divide": np.true_divide, "pow": np.power, "maximum": np.maximum,
    "minimum": np.minimum, "atan2": np.arctan2, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
    # (the masks of create_graph formulas: clamp's, maximum's, ...)
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
}


def _elementwise(xp):
    """relu, relu's backward (``g * (y != 0)``), sigmoid and a copy into
    ``out``, written with the array module ``xp`` (CuPy's for a CUDA
    program: _device_helpers; on the CPU, relu and its backward are the C
    loops of _loops.pyx, which fall back to these forms)."""
    def relu(x, out):
        return xp.maximum(x, 0, out=out)

    def mask_mul(g, y, out):
        return xp.multiply(g, xp.not_equal(y, 0), out=out)

    def sigmoid(x, out):
        xp.negative(x, out=out)
        xp.exp(out, out=out)
        xp.add(out, 1, out=out)
        return xp.reciprocal(out, out=out)

    def copy_into(x, out):
        xp.copyto(out, x)
        return out
    return relu, mask_mul, sigmoid, copy_into


# (clone and a small expand are both a copy into a buffer)
_, _, _sigmoid, _copy_into = _elementwise(np)
_relu, _mask_mul = _loops.relu, _loops.mask_mul


def _is_tensor_free(x):
    if type(x) is Ref:
        return False
    if type(x) in (tuple, list):
        return all(_is_tensor_free(y) for y in x)
    return True


class Kernel:
    """``fn(*operands, **kw)``; ``out``: whether it takes ``out=``; ``close``:
    values may differ from the op's by rounding (compared with a tolerance);
    ``origin``: the NumPy function ``fn`` stands for (``fn`` itself on the
    CPU, its CuPy twin in a CUDA program: what fusion reads)."""
    __slots__ = ("fn", "operands", "kw", "out", "close", "origin")

    def __init__(self, fn, operands, kw=None, out=True, close=False, origin=None):
        self.fn, self.operands, self.kw, self.out, self.close = fn, operands, kw or {}, out, close
        self.origin = fn if origin is None else origin

    def with_operands(self, operands):
        return Kernel(self.fn, operands, self.kw, self.out, self.close, self.origin)


def candidate(step, out_array):
    """A Kernel for ``step`` (an op whose result is ``out_array`` at trace
    time), or None when NumPy (CuPy for a device array) has no direct
    equivalent here."""
    if type(out_array) is np.ndarray:
        return _candidate(step, out_array)
    if not _arrays.is_device(out_array):
        return None
    k = _candidate(step, out_array)
    return None if k is None else on_device(k, _arrays.module_of(out_array))


def _candidate(step, out_array):
    name, a = step.name, step.args
    if step.kind != "op" or len(step.outs) != 1:
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
    if name == MASK_MUL and len(a) == 2:
        return Kernel(_mask_mul, a)
    if name in ("log_softmax", "softmax") and len(a) == 2 and type(a[1]) is int \
            and out_array.ndim >= 1 and out_array.dtype.kind == "f":
        return Kernel(_log_softmax if name == "log_softmax" else _softmax, a[:1],
                      {"axis": a[1] % out_array.ndim})
    if name == "sigmoid" and len(a) == 1:
        return Kernel(_sigmoid, a, close=True)
    if name == "clone" and len(a) == 1:
        return Kernel(_copy_into, a)
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
# The name of the step a program builder makes of relu's backward, ``g *
# (y != 0)`` (two steps of the trace: _program._fold_mask_casts).
MASK_MUL = "_relu_mask_mul"
# one object (each `np.add.reduce` is a new bound method): the numba backend
# tells a sum's kernel by identity
add_reduce = np.add.reduce


def _log_softmax(x, axis, out):
    # core's kernel, operation for operation (x minus its max over the
    # axis, minus the log of the sum of the exponentials), into `out`
    s = np.subtract(x, np.maximum.reduce(x, axis=axis, keepdims=True), out=out)
    total = add_reduce(np.exp(s), axis=axis, keepdims=True)
    return np.subtract(s, np.log(total, out=total), out=out)


def _softmax(x, axis, out):
    # (as _log_softmax: core's kernel, into `out`)
    e = np.exp(np.subtract(x, np.maximum.reduce(x, axis=axis, keepdims=True), out=out), out=out)
    return np.true_divide(e, add_reduce(e, axis=axis, keepdims=True), out=out)


def _getitem(x, index):
    return x[index]


def _astype(x, dtype):
    return x.astype(dtype)


def on_device(k, xp):
    """``k`` calling the device array module ``xp``'s (CuPy's) function in
    place of NumPy's: a CUDA program calls CuPy directly, not through
    NumPy's dispatch to it."""
    fn = k.fn
    dev = _device_helpers(xp).get(fn)
    if dev is None:
        dev = getattr(xp, fn.__name__, None) if isinstance(fn, np.ufunc) or fn in _BY_NAME else \
            fn if fn in (_getitem, _astype) else None
    if dev is None:
        return None
    return Kernel(dev, k.operands, k.kw, k.out, k.close, origin=fn)


# NumPy functions whose CuPy twin has the same name and arguments
_BY_NAME = {np.matmul, np.mean, np.broadcast_to, np.transpose, np.swapaxes, np.where}
_HELPERS: dict = {}


def _device_helpers(xp):
    """{NumPy-side kernel: the same kernel written with ``xp``}."""
    helpers = _HELPERS.get(xp)
    if helpers is None:
        relu, mask_mul, sigmoid, copy_into = _elementwise(xp)

        def total(x, axis=None, keepdims=False, out=None):
            return xp.sum(x, axis=axis, keepdims=keepdims, out=out)

        def reshape(x, shape):
            # (cupy.reshape names its argument newshape)
            return x.reshape(shape)

        helpers = _HELPERS[xp] = {_relu: relu, _mask_mul: mask_mul, _sigmoid: sigmoid,
                                  _copy_into: copy_into,
                                  add_reduce: total, np.reshape: reshape}
    return helpers


def agrees(got, want, close):
    """Whether a kernel's result stands for the op's (dtype, shape, values)."""
    if type(got) is not type(want) or got.dtype != want.dtype or got.shape != want.shape:
        return False
    got, want = _arrays.host(got), _arrays.host(want)
    if close and got.dtype.kind in "fc":
        tol = 64 * np.finfo(got.dtype).eps
        return bool(np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True))
    return bool(np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"))
