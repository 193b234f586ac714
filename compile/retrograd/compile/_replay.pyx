# cython: language_level=3
# The numpy backend's fused runs: a run of float64 or float32 elementwise
# steps (the runs the numba backend compiles into loops, _fusion.py, where
# they are float64) replayed here by calling NumPy's own inner loops, one
# after another, without a ufunc call per step.
#
# Why: on small arrays a ufunc call is almost all overhead (about 350 ns to
# find the loop, check the arguments and set up the iteration, for 10-50 ns
# of arithmetic on 16 values). The inner loop a ufunc would pick for
# float64 arguments is the function in its type table whose signature is
# all float64 (float32 likewise; NumPy's legacy loops, the same machine code
# a call runs);
# this calls it directly on contiguous rows, or with stride 0 for a 0-d
# value or a constant. Each chunk's values are NumPy's, bit for bit (tested
# per ufunc in tests/compile/test_replay.py), and the program builder still
# checks the whole program against eager before a guard key uses it.
#
# A chunk has _fusion.chunk_function's contract: chunk(*arrays, out[, total])
# with the values it must keep written as rows of `out` (a chunk that keeps
# one value also takes a 1-d `out`, the value itself). The values it need
# not keep go to rows of a scratch block, reused from call to call.
#
# Must never: run on an array whose dtype, size or layout differs from what
# the chunk was built for (checked at each call: a TypeError or ValueError,
# never a read out of bounds).

cimport numpy as cnp
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy

import numpy as np

from retrograd.compile import _kernels

cnp.import_array()
cnp.import_ufunc()

cdef enum:
    K_ARRAY = 0          # an argument, whole (C-contiguous, the chunk's size)
    K_ROW = 1            # row `row` of an argument block
    K_SCALAR = 2         # a 0-d argument (read with stride 0)
    K_BLOCK_SCALAR = 3   # element [row, 0] of an argument block of 0-d values
    K_CONST = 4          # constant number `arg` (stride 0)
    K_OUT = 5            # row `row` of the output block
    K_TMP = 6            # row `row` of the scratch block

cdef struct Src:
    int kind
    int arg
    Py_ssize_t row

cdef struct Op:
    cnp.PyUFuncGenericFunction fn
    void* data
    int nin              # 1 or 2; 0: a copy of ins[0]
    Src ins[2]
    Src res              # K_OUT or K_TMP

# what an argument is to the chunk (all its uses agree)
cdef enum:
    A_WHOLE = 1
    A_BLOCK = 2
    A_SCALAR = 4
    A_ROWS = 8           # (a block) some use reads a whole row


cdef int _find_loop(cnp.ufunc uf, Op* op, int typenum) except -1:
    # the ufunc's inner loop whose arguments are all of type `typenum`
    cdef int i, k, n = uf.nargs
    for i in range(uf.ntypes):
        for k in range(n):
            if <int>uf.types[i * n + k] != typenum:
                break
        else:
            op.fn = uf.functions[i]
            op.data = uf.data[i]
            return 0
    raise ValueError(f"{uf.__name__} has no {_NAMES[typenum]} loop")


cdef class Chunk:
    """One replayed chunk (see the module's comment)."""
    cdef Op* ops
    cdef int n_ops
    cdef int n_arrays
    cdef int n_out
    cdef int n_tmp
    cdef double* consts       # 8 bytes each (a float32 chunk's hold a float)
    cdef int typenum          # NPY_DOUBLE or NPY_FLOAT: every array's
    cdef Py_ssize_t itemsize
    cdef bint has_sum
    cdef Src sum_src
    cdef int* roles           # per argument: A_* bits
    cdef Py_ssize_t* min_rows # per block argument: the rows it must have
    cdef char** base          # per argument, set at each call (under the GIL)
    cdef Py_ssize_t* rstride
    cdef object _tmp          # the scratch block, reused
    cdef bint _busy
    cdef Op add               # np.add's inner loop of the chunk's type (the sum)

    def __cinit__(self):
        self.ops = NULL
        self.consts = NULL
        self.roles = NULL
        self.min_rows = NULL
        self.base = NULL
        self.rstride = NULL

    def __dealloc__(self):
        free(self.ops)
        free(self.consts)
        free(self.roles)
        free(self.min_rows)
        free(self.base)
        free(self.rstride)

    def __init__(self, list ops, list inputs, list ndims, list outputs, dtype=np.float64):
        cdef int j, k, n_consts = 0
        cdef Op* op
        dt = np.dtype(dtype)
        if dt != np.float64 and dt != np.float32:
            raise ValueError(f"a replayed chunk runs float64 or float32 values, not {dt}")
        self.typenum = cnp.NPY_DOUBLE if dt == np.float64 else cnp.NPY_FLOAT
        self.itemsize = dt.itemsize
        self.n_arrays = len(ndims)
        self.n_out = len(outputs)
        self.has_sum = bool(ops) and ops[-1][0] == "sum"
        body = ops[:-1] if self.has_sum else ops
        self.n_ops = len(body)
        self.ops = <Op*>calloc(max(self.n_ops, 1), sizeof(Op))
        self.roles = <int*>calloc(max(self.n_arrays, 1), sizeof(int))
        self.min_rows = <Py_ssize_t*>calloc(max(self.n_arrays, 1), sizeof(Py_ssize_t))
        self.base = <char**>calloc(max(self.n_arrays, 1), sizeof(char*))
        self.rstride = <Py_ssize_t*>calloc(max(self.n_arrays, 1), sizeof(Py_ssize_t))
        for _fn, operands in ops:
            n_consts += sum(1 for kind, _ in operands if kind == "c")
        self.consts = <double*>calloc(max(n_consts, 1), sizeof(double))
        if (self.ops == NULL or self.roles == NULL or self.min_rows == NULL or self.base == NULL
                or self.rstride == NULL or self.consts == NULL):
            raise MemoryError()
        # where each op's value lives: its output row, or a scratch row
        # free again after its last use
        out_row = {j: k for k, j in enumerate(outputs)}
        last = {}
        for j, (_fn, operands) in enumerate(ops):
            for kind, v in operands:
                if kind == "t":
                    last[v] = j
        where = {}
        free_rows, n_tmp = [], 0
        ends_at = {}
        n_consts = 0

        def source(kind, v):
            # (kind, arg, row) of an operand
            nonlocal n_consts
            if kind == "t":
                if v not in where:
                    raise ValueError(f"op value {v} is read before it is made")
                return where[v]
            if kind == "c":
                if self.typenum == cnp.NPY_FLOAT:
                    (<float*>&self.consts[n_consts])[0] = <float>float(v)
                else:
                    self.consts[n_consts] = float(v)
                n_consts += 1
                return (K_CONST, n_consts - 1, 0)
            if not 0 <= v < len(inputs):
                raise ValueError(f"no input {v}")
            a, row = inputs[v]
            if not 0 <= a < len(ndims):
                raise ValueError(f"input {v}: no argument {a}")
            if row is None:
                kind, row, role, nd_ok = K_ARRAY, 0, A_WHOLE, ndims[a] >= 1
            elif row == "s":
                kind, row, role, nd_ok = K_SCALAR, 0, A_SCALAR, ndims[a] == 0
            elif type(row) is tuple:
                kind, row, role, nd_ok = K_BLOCK_SCALAR, row[1], A_BLOCK, ndims[a] == 2
            else:
                kind, role, nd_ok = K_ROW, A_BLOCK | A_ROWS, ndims[a] == 2
            if not nd_ok:
                raise ValueError(f"input {v}: {inputs[v][1]!r} of an argument of {ndims[a]} dims")
            self.roles[a] |= role
            if role & A_BLOCK:
                self.min_rows[a] = max(self.min_rows[a], row + 1)
            return (kind, a, row)

        for j, (fn, operands) in enumerate(body):
            op = &self.ops[j]
            for k, (kind, v) in enumerate(operands):
                op.ins[k].kind, op.ins[k].arg, op.ins[k].row = source(kind, v)
            if fn is _kernels._copy_into:
                if len(operands) != 1:
                    raise ValueError("a copy has one operand")
                op.nin = 0
            elif isinstance(fn, np.ufunc) and fn.signature is None and fn.nout == 1 \
                    and fn.nin == len(operands) <= 2:
                _find_loop(fn, op, self.typenum)
                op.nin = fn.nin
            else:
                raise ValueError(f"cannot replay {fn!r}")
            for v in [v for kind, v in operands if kind == "t"]:
                if last.get(v) == j and v not in out_row:
                    ends_at.setdefault(j, []).append(where[v][2])
            if j in out_row:
                where[j] = (K_OUT, 0, out_row[j])
            else:
                row = free_rows.pop() if free_rows else None
                if row is None:
                    row = n_tmp
                    n_tmp += 1
                where[j] = (K_TMP, 0, row)
            op.res.kind, op.res.arg, op.res.row = where[j]
            # (a row is free after the op that reads it last has run)
            free_rows.extend(ends_at.pop(j, ()))
        if self.has_sum:
            ((kind, v),) = ops[-1][1]
            self.sum_src.kind, self.sum_src.arg, self.sum_src.row = source(kind, v)
        self.n_tmp = n_tmp
        self._tmp = None
        self._busy = False
        _find_loop(np.add, &self.add, self.typenum)

    cdef inline char* _ptr(self, Src* s, char* out, Py_ssize_t ostride, char* tmp,
                           Py_ssize_t tstride, cnp.npy_intp* step):
        if s.kind == K_ARRAY:
            step[0] = self.itemsize
            return self.base[s.arg]
        if s.kind == K_ROW:
            step[0] = self.itemsize
            return self.base[s.arg] + s.row * self.rstride[s.arg]
        if s.kind == K_SCALAR:
            step[0] = 0
            return self.base[s.arg]
        if s.kind == K_BLOCK_SCALAR:
            step[0] = 0
            return self.base[s.arg] + s.row * self.rstride[s.arg]
        if s.kind == K_CONST:
            step[0] = 0
            return <char*>&self.consts[s.arg]
        step[0] = self.itemsize
        if s.kind == K_OUT:
            return out + s.row * ostride
        return tmp + s.row * tstride

    def __call__(self, *args):
        cdef Py_ssize_t n, k, j
        cdef cnp.ndarray a, outa, tmpa = None
        cdef cnp.npy_intp size, i
        cdef char* outp
        cdef char* tmpp = NULL
        cdef Py_ssize_t ostride, tstride = 0
        cdef char* argv[3]
        cdef cnp.npy_intp steps[3]
        cdef Op* op
        cdef double v
        cdef char* d
        cdef Py_ssize_t isz = self.itemsize
        cdef cnp.npy_intp one = 1
        cdef int tn = self.typenum
        n = self.n_arrays
        if len(args) != n + 1 + self.has_sum:
            raise TypeError(f"a replayed chunk takes {n + 1 + self.has_sum} arrays, got {len(args)}")
        outa = _checked(args[n], "the output block", tn)
        if not cnp.PyArray_IS_C_CONTIGUOUS(outa) or not (
                cnp.PyArray_NDIM(outa) == 2 and cnp.PyArray_DIMS(outa)[0] == self.n_out
                or cnp.PyArray_NDIM(outa) == 1 and self.n_out == 1):
            raise ValueError(f"the output block must be a C-contiguous ({self.n_out}, size) array"
                             + (" or (size,) array" if self.n_out == 1 else ""))
        # (a chunk keeping one value may write it into a 1-d array of its own)
        size = cnp.PyArray_DIMS(outa)[cnp.PyArray_NDIM(outa) - 1]
        outp = <char*>cnp.PyArray_DATA(outa)
        ostride = size * isz
        keep = []
        for k in range(n):
            a = _checked(args[k], None, tn, False, k)
            r = self.roles[k]
            if not (r & A_BLOCK) and not (cnp.PyArray_ISALIGNED(a) and (
                    cnp.PyArray_IS_C_CONTIGUOUS(a) or not r & A_WHOLE)):
                # an argument in another layout (a guard key does not fix
                # strides): its values in C order, as numba's loops read them
                a = np.array(a, order="C")
                keep.append(a)
            if r & A_WHOLE and (cnp.PyArray_SIZE(a) != size or cnp.PyArray_NDIM(a) == 0):
                raise ValueError(f"argument {k} must have {size} values")
            if r & A_SCALAR and cnp.PyArray_NDIM(a) != 0:
                raise ValueError(f"argument {k} must be 0-d")
            if r & A_BLOCK:
                if cnp.PyArray_NDIM(a) != 2 or not cnp.PyArray_IS_C_CONTIGUOUS(a) \
                        or not cnp.PyArray_ISALIGNED(a) \
                        or cnp.PyArray_DIMS(a)[0] < self.min_rows[k] or cnp.PyArray_DIMS(a)[1] < 1:
                    raise ValueError(f"argument {k} must be a C-contiguous block of at least "
                                     f"{self.min_rows[k]} rows")
                # (a row read whole has the chunk's size; a block of 0-d
                # values is read at column 0)
                if cnp.PyArray_DIMS(a)[1] != size and r & A_ROWS:
                    raise ValueError(f"argument {k}: rows of {cnp.PyArray_DIMS(a)[1]} values, "
                                     f"not {size}")
                self.rstride[k] = cnp.PyArray_STRIDES(a)[0]
            self.base[k] = <char*>cnp.PyArray_DATA(a)
        busy = self._busy
        if self.n_tmp:
            tmp = self._tmp
            if busy or tmp is None or (<cnp.ndarray>tmp).shape[1] != size:
                tmp = np.empty((self.n_tmp, size), _NAMES[tn])
                if not busy:
                    self._tmp = tmp
            tmpa = <cnp.ndarray>tmp
            tmpp = <char*>cnp.PyArray_DATA(tmpa)
            tstride = size * isz
        self._busy = True
        try:
            for j in range(self.n_ops):
                op = &self.ops[j]
                argv[0] = self._ptr(&op.ins[0], outp, ostride, tmpp, tstride, &steps[0])
                if op.nin == 0:
                    d = self._ptr(&op.res, outp, ostride, tmpp, tstride, &steps[1])
                    if steps[0] != 0:
                        if d != argv[0]:
                            memcpy(d, argv[0], size * isz)
                    elif tn == cnp.NPY_FLOAT:
                        for i in range(size):
                            (<float*>d)[i] = (<float*>argv[0])[0]
                    else:
                        v = (<double*>argv[0])[0]
                        for i in range(size):
                            (<double*>d)[i] = v
                    continue
                if op.nin == 2:
                    argv[1] = self._ptr(&op.ins[1], outp, ostride, tmpp, tstride, &steps[1])
                argv[op.nin] = self._ptr(&op.res, outp, ostride, tmpp, tstride, &steps[op.nin])
                op.fn(argv, &size, steps, op.data)
            if self.has_sum:
                total = _checked(args[n + 1], "the total", tn)
                if cnp.PyArray_NDIM(<cnp.ndarray>total) != 0:
                    raise ValueError("the total must be a 0-d array")
                argv[0] = self._ptr(&self.sum_src, outp, ostride, tmpp, tstride, &steps[0])
                if steps[0] != 0 and 0 < size <= _ONE_INNER_CALL and _SUM_LIKE_NUMPY:
                    # (add.reduce's own loop, without its call: about 1 us)
                    _inner_sum(&self.add, argv[0], size, tn,
                               <char*>cnp.PyArray_DATA(<cnp.ndarray>total))
                    return None
                if steps[0] == 0:
                    # (one value, broadcast: a view of it alone, then filled)
                    values = cnp.PyArray_SimpleNewFromData(1, &one, tn, argv[0])
                    values = np.full(size, values[0], _NAMES[tn])
                else:
                    values = cnp.PyArray_SimpleNewFromData(1, &size, tn, argv[0])
                # (NumPy's own sum: its pairwise order, not a running total;
                # quiet, as a program of chunks alone does not turn NumPy's
                # warnings off around it)
                with np.errstate(all="ignore"):
                    np.add.reduce(values, 0, None, total)
        finally:
            self._busy = busy
        return None


_NAMES = {cnp.NPY_DOUBLE: "float64", cnp.NPY_FLOAT: "float32"}
# The most values NumPy's add.reduce hands its inner loop in one call (its
# default buffer size): above it the chunk calls add.reduce itself.
cdef cnp.npy_intp _ONE_INNER_CALL = 8192


cdef void _inner_sum(Op* add, char* data, cnp.npy_intp size, int tn, char* out) noexcept:
    # What np.add.reduce does with a contiguous 1-d array of up to
    # _ONE_INNER_CALL values: the output starts at add's identity, then one
    # call of add's loop in its reduce form (output as first operand, stride
    # 0), which adds NumPy's pairwise sum of the values to it.
    cdef char* argv[3]
    cdef cnp.npy_intp steps[3]
    if tn == cnp.NPY_FLOAT:
        (<float*>out)[0] = 0
        steps[1] = sizeof(float)
    else:
        (<double*>out)[0] = 0
        steps[1] = sizeof(double)
    argv[0], argv[1], argv[2] = out, data, out
    steps[0], steps[2] = 0, 0
    add.fn(argv, &size, steps, add.data)


cdef bint _probe_sum() except -1:
    # Whether _inner_sum gives np.add.reduce's values bit for bit on this
    # NumPy (checked at import, on sizes that take each path of its pairwise
    # sum, signed zeros included): if not, chunks call add.reduce.
    cdef Op add
    cdef cnp.ndarray x, got
    rng = np.random.default_rng(0)
    for tn, name in ((cnp.NPY_DOUBLE, "float64"), (cnp.NPY_FLOAT, "float32")):
        _find_loop(np.add, &add, tn)
        for n in (1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 127, 128, 129, 255, 1000, 4097, 8192):
            for zeros in (False, True):
                x = np.full(n, -0.0, name) if zeros else \
                    (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 7, n)).astype(name)
                got = np.empty((), name)
                _inner_sum(&add, <char*>cnp.PyArray_DATA(x), n, tn, <char*>cnp.PyArray_DATA(got))
                want = np.add.reduce(x)
                if not (got[()] == want and np.signbit(got[()]) == np.signbit(want)):
                    return False
    return True


cdef bint _SUM_LIKE_NUMPY = _probe_sum()


cdef cnp.ndarray _checked(object x, str what, int typenum, bint aligned=True, Py_ssize_t k=-1):
    # (`what` None: "argument k", formatted only for the error)
    if (type(x) is not cnp.ndarray or cnp.PyArray_TYPE(<cnp.ndarray>x) != typenum
            or (aligned and not cnp.PyArray_ISALIGNED(<cnp.ndarray>x))) and what is None:
        what = f"argument {k}"
    if type(x) is not cnp.ndarray:
        raise TypeError(f"{what} must be a NumPy array, got {type(x).__name__}")
    if cnp.PyArray_TYPE(<cnp.ndarray>x) != typenum or (aligned and not cnp.PyArray_ISALIGNED(<cnp.ndarray>x)):
        raise TypeError(f"{what} must be an aligned {_NAMES[typenum]} array")
    return <cnp.ndarray>x


def chunk_function(ops, inputs, ndims, outputs, dtype=np.float64):
    """A replayed chunk: _fusion.chunk_function's contract (ops, inputs,
    ndims and outputs as there), run by NumPy's own inner loops; every
    array is of ``dtype`` (float64 or float32)."""
    return Chunk(list(ops), list(inputs), list(ndims), list(outputs), dtype)
