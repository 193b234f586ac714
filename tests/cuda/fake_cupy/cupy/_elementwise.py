"""The stand-in's ``cupy.ElementwiseKernel``.

A real one compiles its ``operation`` (CUDA C++, run once per element) on
the GPU. The stand-in runs it on whole NumPy arrays instead, so it accepts
the subset of C++ that reads the same as Python over arrays: statements of
the form ``[type] name = expression;`` whose expressions use + - * /,
parentheses, the math functions in _MATH, and functional casts
``float(...)``/``double(...)``. Anything else raises SyntaxError or
NameError when the kernel is made or launched, as a compile error would.

It keeps CuPy's rules where they catch mistakes: inputs and outputs must be
device arrays (or scalars for inputs) of the declared dtypes, outputs are
returned (one array, or a tuple), and each launch is logged as
``("launch", None, name)`` in ``cupy.cuda._log``.
"""
import re

import numpy as _np

_MATH = {"sin": _np.sin, "cos": _np.cos, "tan": _np.tan, "tanh": _np.tanh, "exp": _np.exp,
         "log": _np.log, "sqrt": _np.sqrt, "fabs": _np.absolute, "expm1": _np.expm1,
         "log1p": _np.log1p, "float": _np.float32, "double": _np.float64}
_DECL = re.compile(r"^\s*(?:const\s+)?(?:float|double)\s+(?=[A-Za-z_]\w*\s*=)")


def _params(spec):
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        dtype, name = part.split()
        out.append((_np.dtype(dtype), name))
    return out


class ElementwiseKernel:
    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, loop_prep="", after_loop="",
                 options=()):
        self.in_params, self.out_params = _params(in_params), _params(out_params)
        self.name = name
        stmts = [s.strip() for s in operation.split(";") if s.strip()]
        self._code = compile("\n".join(_DECL.sub("", s) for s in stmts), f"<kernel {name}>", "exec")

    def __call__(self, *args, size=None, block_size=None, stream=None):
        from cupy import ndarray
        from cupy.cuda import _log
        n_in, n_out = len(self.in_params), len(self.out_params)
        if len(args) not in (n_in, n_in + n_out):
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        ns = dict(_MATH)
        shapes = []
        for (dtype, pname), a in zip(self.in_params, args[:n_in]):
            if type(a) is ndarray:
                if a.dtype != dtype:
                    raise TypeError(f"{self.name}: input {pname} is {a.dtype}, declared {dtype}")
                ns[pname] = a._a
                shapes.append(a.shape)
            elif isinstance(a, _np.ndarray):
                raise TypeError(f"Unsupported type {type(a)} (a NumPy array given to {self.name})")
            else:
                ns[pname] = dtype.type(a)
        outs = list(args[n_in:])
        for (dtype, pname), o in zip(self.out_params, outs):
            if type(o) is not ndarray or o.dtype != dtype:
                raise TypeError(f"{self.name}: output {pname} must be a {dtype} device array")
            shapes.append(o.shape)
        shape = _np.broadcast_shapes(*shapes) if shapes else ()
        if not outs:
            outs = [ndarray(_np.empty(shape, dtype)) for dtype, _ in self.out_params]
        with _np.errstate(all="ignore"):
            exec(self._code, ns)
        for (dtype, pname), o in zip(self.out_params, outs):
            if o.shape != shape:
                raise ValueError(f"{self.name}: output {pname} has shape {o.shape}, not {shape}")
            o._a[...] = ns[pname]
        _log.append(("launch", None, self.name))
        return outs[0] if n_out == 1 else tuple(outs)
