"""The cupy backend: maximal runs of elementwise steps of a CUDA program fused
into one ``cupy.ElementwiseKernel`` each.

On a GPU, a small op costs a kernel launch (microseconds) whatever its size,
so a run of n elementwise ops launched as one kernel saves n - 1 launches
and the round trips of its intermediate values through device memory.

A run is a sequence of consecutive steps whose verified kernel stands for a
NumPy ufunc listed in _C (or a copy), on float32 or float64 device arrays
of the run's one shape and dtype, 0-d device arrays (read once, broadcast)
and finite scalar constants. It is cut into chunks of at most CHUNK ops.
Each chunk is one kernel: the values used after it (or returned, or saved)
are its outputs, the others stay in registers.

CuPy compiles a kernel on its first launch (NVRTC) and keeps the binary in
its own disk cache (``CUPY_CACHE_DIR``), so a second process loads it; the
first launch happens on the background worker, in the check of the fused
programs (_background.py).
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import sys
import threading

import numpy as np

from retrograd.compile import _arrays, _kernels

CHUNK = 64

# the NumPy function a kernel stands for -> its C expression in a fused kernel
_C = {
    np.add: "({0} + {1})", np.subtract: "({0} - {1})", np.multiply: "({0} * {1})",
    np.true_divide: "({0} / {1})", np.negative: "(-{0})", np.sin: "sin({0})",
    np.cos: "cos({0})", np.tanh: "tanh({0})", np.exp: "exp({0})", np.log: "log({0})",
    np.sqrt: "sqrt({0})", np.square: "({0} * {0})", np.absolute: "fabs({0})",
    np.expm1: "expm1({0})", np.log1p: "log1p({0})",
    # copies: a small expand (a 0-d gradient broadcast by sum's backward), clone
    _kernels._copy_into: "{0}",
}
# the C type of a value (the overloads of CUDA's math functions follow it:
# float32 ops compute in single precision, as CuPy's own ufuncs do)
_CTYPE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}

_lock = threading.Lock()
_made: dict = {}


def available():
    """Whether CuPy can be imported."""
    return "cupy" in sys.modules or importlib.util.find_spec("cupy") is not None


def fusible(kern, out, operand_arrays):
    """Whether a verified kernel of a CUDA program can join a fused run."""
    if kern is None or kern.kw or not kern.out or kern.origin not in _C:
        return False
    if not _arrays.is_device(out) or out.dtype not in _CTYPE or out.ndim == 0:
        return False
    for a in operand_arrays:
        if _arrays.is_device(a):
            if (a.ndim and a.shape != out.shape) or a.dtype != out.dtype:
                return False
        elif not isinstance(a, (float, int)) or not math.isfinite(a):
            return False
    return True


def chunk_kernel(ops, n_inputs, dtype, outputs):
    """The fused kernel of one chunk.

    ops: (NumPy function, operands) per op, an operand being ("in", k) (the
    k-th input), ("t", j) (the j-th op's value) or ("c", float). The kernel
    takes the ``n_inputs`` inputs (arrays of the chunk's shape, or 0-d), then
    one output array per entry of ``outputs`` (the ops whose values it
    writes), all of ``dtype``; it returns the outputs (one, or a tuple)."""
    ct, name = _CTYPE[np.dtype(dtype)], np.dtype(dtype).name
    body = []
    for j, (fn, operands) in enumerate(ops):
        srcs = [f"x{v}" if kind == "in" else f"t{v}" if kind == "t" else f"{ct}({float(v)!r})"
                for kind, v in operands]
        body.append(f"{ct} t{j} = {_C[fn].format(*srcs)};")
    body += [f"y{k} = t{j};" for k, j in enumerate(outputs)]
    in_params = ", ".join(f"{name} x{k}" for k in range(n_inputs))
    out_params = ", ".join(f"{name} y{k}" for k in range(len(outputs)))
    operation = "\n".join(body)
    digest = hashlib.sha256(f"{in_params}|{out_params}|{operation}".encode()).hexdigest()[:24]
    with _lock:
        kern = _made.get(digest)
        if kern is None:
            import cupy
            kern = _made[digest] = cupy.ElementwiseKernel(in_params, out_params, operation,
                                                         f"rg_fused_{digest}")
    return kern
