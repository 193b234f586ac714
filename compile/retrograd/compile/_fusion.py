"""The numba backend: maximal runs of elementwise steps fused into compiled
loops (retrograd-compile[numba]).

A run is a sequence of consecutive steps whose verified NumPy kernel is a
ufunc listed in _SCALAR, on float64 arrays of the run's one shape (no
broadcasting) and scalar constants. It is cut into chunks of at most
CHUNK ops, so that numba's compile time grows linearly with the program.
Each chunk becomes one loop; the values used after it (or returned, or
saved) are written to arrays, the others stay in registers.

The transcendental functions are _vecmath.py's, straight-line code that
LLVM inlines and vectorises across the loop (the C library's are opaque
scalar calls): sin and cos in their fast form, which reaches |x| <= 2**23;
a loop that meets any other argument runs again with the C library's.

Chunks are named by their source's hash and written as modules to a cache
folder (``RG_COMPILE_CACHE``, default ``~/.cache/retrograd-compile``) with
numba's ``cache=True``: identical chunks (a long chain repeats a few) are
compiled once, and a second process loads them from disk.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading

import numpy as np

from retrograd.compile import _kernels

CHUNK = 48

# ufunc -> its scalar expression in a fused loop
_SCALAR = {
    np.add: "({0} + {1})", np.subtract: "({0} - {1})", np.multiply: "({0} * {1})",
    np.true_divide: "({0} / {1})", np.negative: "(-{0})", np.sin: "math.sin({0})",
    np.cos: "math.cos({0})", np.tanh: "_vm.tanh({0})", np.exp: "_vm.exp({0})",
    np.log: "_vm.log({0})", np.sqrt: "math.sqrt({0})", np.square: "({0} * {0})",
    np.absolute: "abs({0})", np.expm1: "_vm.expm1({0})", np.log1p: "_vm.log1p({0})",
    # copies: a small expand (a 0-d gradient broadcast by sum's backward),
    # clone
    _kernels._copy_into: "{0}",
}

# sin and cos where their argument is within vecmath's reduction (the loop
# notes any other, and is then run again with _SCALAR's)
_NEAR = {np.sin: "_vm.sin_near({0})", np.cos: "_vm.cos_near({0})"}

_digest: list = []
_options_set: list = []


def _vecmath_digest():
    """A hash of _vecmath.py, in each loop's source: a changed _vecmath.py
    makes new loops, where numba's cache would load the old machine code.
    None where it cannot be imported (it reaches into numba's internals:
    another numba version may lack them); the loops then call the C
    library's functions."""
    if not _digest:
        try:
            from retrograd.compile import _vecmath
            with open(_vecmath.__file__, "rb") as f:
                _digest.append(hashlib.sha256(f.read()).hexdigest()[:12])
        except Exception:
            _digest.append(None)
    return _digest[0]


def _libm_form(expr):
    # the C library's function for one of _vecmath's
    return expr.replace("_vm.", "math.")


def _vector_options():
    # LLVM vectorises a loop only if it can rule out overlap between the
    # arrays it reads and writes, at run time where it cannot prove it: by
    # default with at most 8 comparisons, and a chunk writes up to CHUNK
    # rows, each compared with every array it reads. The limits are LLVM's
    # process-wide options; raised, a loop over one of these blocks
    # vectorises (the checks cost a few ns a row per call).
    if not _options_set:
        _options_set.append(True)
        import llvmlite.binding as llvm
        from numba.core.compiler_lock import global_compiler_lock
        with global_compiler_lock:          # (no numba compile reads them meanwhile)
            llvm.set_option("retrograd-compile", "-runtime-memory-check-threshold=256")
            llvm.set_option("retrograd-compile", "-vectorize-memory-check-threshold=256")


# held while a loop is written, compiled or loaded (and across a fork:
# _background.py)
lock = threading.Lock()
_loaded: dict = {}


def available():
    """Whether numba can be imported (the ``numba`` extra)."""
    return importlib.util.find_spec("numba") is not None


def fusible(kern, out, operand_arrays, replay=False):
    """Whether a verified kernel can join a fused run: numba's loops take
    float64 and the functions of _SCALAR; the numpy backend's replayed runs
    (``replay``, _replay.pyx) float32 too, and any ufunc of one or two
    operands with a loop of that dtype."""
    if kern is None or kern.kw or not kern.out or not isinstance(out, np.ndarray):
        return False
    if out.dtype not in _dtypes(replay):
        return False
    if kern.fn not in _SCALAR and not (replay and _replayable(kern.fn, out.dtype)):
        return False
    for a in operand_arrays:
        if isinstance(a, np.ndarray):
            # the run's shape, or 0-d (read once, broadcast)
            if (a.ndim and a.shape != out.shape) or a.dtype != out.dtype:
                return False
        elif not isinstance(a, (float, int)):
            return False
    return True


def full_sum(kern, out, operand_arrays, replay=False):
    """Whether a verified kernel is a sum of a float64 array (float32 too
    where ``replay``) of at least one dimension over all its dims to 0-d: a
    fused loop can end with it."""
    if kern is None or kern.fn is not _kernels.add_reduce or kern.kw.get("keepdims"):
        return False
    if not isinstance(out, np.ndarray) or out.ndim != 0 or out.dtype not in _dtypes(replay):
        return False
    (a,) = operand_arrays
    if not isinstance(a, np.ndarray) or a.dtype != out.dtype or a.ndim == 0:
        return False
    axis = kern.kw.get("axis")
    return axis is None or sorted(np.atleast_1d(axis) % a.ndim) == list(range(a.ndim))


def _dtypes(replay):
    # numba's loops are float64's; NumPy has float32 loops to replay too
    return (np.float64, np.float32) if replay else (np.float64,)


def _replayable(fn, dtype):
    # an elementwise ufunc of one or two operands and one result with a
    # loop whose arguments are all of `dtype` (what _replay.pyx calls); not
    # a generalized ufunc (matmul: its loops take core dimensions)
    if not isinstance(fn, np.ufunc) or fn.signature is not None or fn.nout != 1 \
            or fn.nin not in (1, 2):
        return False
    c = np.dtype(dtype).char
    return f"{c * fn.nin}->{c}" in fn.types


def _literal(v):
    v = float(v)
    if v != v:
        return "math.nan"
    if v in (float("inf"), float("-inf")):
        return "math.inf" if v > 0 else "(-math.inf)"
    return repr(v)


def _cache_dir():
    d = os.environ.get("RG_COMPILE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                           "retrograd-compile")
    os.makedirs(d, exist_ok=True)
    return d


_NJIT = "@numba.njit(cache=True, nogil=True, error_model='numpy', boundscheck=False)"


def _loop(name, args, ops, inputs, n_arrays, outputs, near, vm=True):
    """Source lines of one loop over the chunk (see chunk_function). near:
    sin and cos by vecmath's sin_near and cos_near, and the function
    returns whether an argument was beyond their reach."""
    blocks = {a for a, row in inputs if row is not None and row != "s"}
    scalars = {a for a, row in inputs if row == "s"}
    total = ops[-1][0] == "sum"
    lines = ["", "", _NJIT, f"def {name}({args}):"]
    if near:
        lines.append("    far = False")
    for k in range(n_arrays):
        if k not in blocks and k not in scalars:
            lines.append(f"    a{k}f = a{k}.ravel()")
    for k, (a, row) in enumerate(inputs):
        if row == "s":
            lines.append(f"    x{k} = a{a}[()]")
        elif type(row) is tuple:
            lines.append(f"    x{k} = a{a}[{row[1]}, 0]")
    if total:
        lines.append("    acc = 0.0")
    lines.append("    for q in range(out.shape[1]):")
    for k, (a, row) in enumerate(inputs):
        if row != "s" and type(row) is not tuple:
            lines.append(f"        x{k} = a{a}[{row}, q]" if row is not None else f"        x{k} = a{a}f[q]")
    for j, (fn, operands) in enumerate(ops):
        srcs = []
        for kind, v in operands:
            srcs.append(f"x{v}" if kind == "in" else f"t{v}" if kind == "t" else _literal(v))
        if fn == "sum":
            lines.append(f"        acc += {srcs[0]}")
        elif near and fn in _NEAR:
            lines.append(f"        t{j} = {_NEAR[fn].format(*srcs)}")
            lines.append(f"        far |= _vm.far({srcs[0]})")
        else:
            expr = _SCALAR[fn].format(*srcs)
            lines.append(f"        t{j} = {expr if vm else _libm_form(expr)}")
    for k, j in enumerate(outputs):
        lines.append(f"        out[{k}, q] = t{j}")
    if total:
        lines.append("    total[()] = acc")
    if near:
        lines.append("    return far")
    return lines


def chunk_function(ops, inputs, ndims, outputs):
    """The compiled loop of one chunk.

    ops: (ufunc, operands) per op, an operand being ("in", k) (the k-th
    input), ("t", j) (the j-th op's value) or ("c", float); the last op may
    be ("sum", [operand]), the sum of that value over the loop, which the
    loop writes into a 0-d array given after the output block. inputs: per
    input, (a, row): array argument ``a`` itself (row None), row ``row``
    of it (a 2-d block holding one value per row), its one value (row
    "s": a 0-d array broadcast against the chunk), or the one value of row
    r of a block of 0-d values (row ("s", r)). ``ndims``: the number of
    dimensions of each array argument (its compiled type). The loop takes the
    ``n_arrays`` array arguments, then the output block, a 2-d array whose
    row k receives the value of op ``outputs[k]``. The values are all of
    one size, C-contiguous: one block per chunk (and one argument per block
    read) is what keeps a call cheap, as numba's dispatch pays per array."""
    n_arrays = len(ndims)
    total = ops[-1][0] == "sum"
    _vector_options()
    args = ", ".join([f"a{k}" for k in range(n_arrays)] + ["out"] + (["total"] if total else []))
    vm = _vecmath_digest()
    near = vm is not None and any(fn in _NEAR for fn, _ in ops)
    lines = [f"# retrograd-compile fused loop (format 4, vecmath {vm})", "import math", "import numba",
             "from retrograd.compile import _vecmath as _vm" if vm else "", ""]
    if near:
        # sin and cos without the C library's call (the loop vectorises),
        # noting any argument beyond their reach; then, only if there was
        # one, the loop again with the C library's sin and cos
        lines += _loop("_near", args, ops, inputs, n_arrays, outputs, near=True)
        lines += _loop("_exact", args, ops, inputs, n_arrays, outputs, near=False)
        lines += ["", "", _NJIT, f"def fused({args}):", f"    if _near({args}):", f"        _exact({args})"]
    else:
        lines += _loop("fused", args, ops, inputs, n_arrays, outputs, near=False, vm=vm is not None)
    source = "\n".join(lines) + "\n"
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    with lock:
        fn = _loaded.get(digest)
        if fn is not None:
            return fn
        path = os.path.join(_cache_dir(), f"rg_fused_{digest}.py")
        if not os.path.exists(path):
            tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with open(tmp, "w") as f:
                f.write(source)
            os.replace(tmp, path)
        name = f"rg_fused_{digest}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        # importable by name: numba's disk cache finds the function's module so
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        fn = mod.fused
        # compiled (or loaded from numba's cache) now, not in the first call
        rows = {}
        for a, row in inputs:
            if row is not None and row != "s":
                r = row[1] if type(row) is tuple else row
                rows[a] = max(rows.get(a, 0), r + 1)
        fn(*[np.zeros((rows[k], 2)) if k in rows else np.zeros((2,) + (1,) * (nd - 1))
             if nd else np.zeros(()) for k, nd in enumerate(ndims)],
           np.zeros((len(outputs), 2)), *([np.zeros(())] if total else []))
        _loaded[digest] = fn
        return fn
