# What every C loop module of core shares (a header only, no module):
# the float types the loops are written for, and the checks that an array
# can be indexed as a plain C array. Inline, so each loop module compiles
# its own copy: these run once per op on the hot path.

cimport numpy as _cnp

ctypedef fused _real:
    float
    double


cdef inline int _loop_typenum(object x):
    # NPY_DOUBLE / NPY_FLOAT for a NumPy float array the loops can index as
    # a plain C array, else -1. The type number alone says nothing of the
    # layout: a '>f8' array is NPY_DOUBLE too (its bytes are swapped), a view
    # at an odd byte offset of a buffer is misaligned, a strided or reversed
    # view is not C-contiguous. One flags test covers contiguity and
    # alignment (what a C loop needs of every array it reads or writes
    # through a pointer); the byte order is the descriptor's.
    cdef int flags = _cnp.NPY_ARRAY_C_CONTIGUOUS | _cnp.NPY_ARRAY_ALIGNED
    if type(x) is not _cnp.ndarray:
        return -1
    if (_cnp.PyArray_FLAGS(<_cnp.ndarray>x) & flags) != flags:
        return -1
    if not _cnp.PyArray_ISNOTSWAPPED(<_cnp.ndarray>x):
        return -1
    cdef int t = _cnp.PyArray_TYPE(<_cnp.ndarray>x)
    return t if t == _cnp.NPY_DOUBLE or t == _cnp.NPY_FLOAT else -1


cdef inline bint _loop_same(object x, object y, int typenum):
    # y is a C-contiguous array of x's float dtype and shape
    if _loop_typenum(y) != typenum:
        return False
    cdef int nd = _cnp.PyArray_NDIM(<_cnp.ndarray>x)
    if _cnp.PyArray_NDIM(<_cnp.ndarray>y) != nd:
        return False
    cdef _cnp.npy_intp* dx = _cnp.PyArray_DIMS(<_cnp.ndarray>x)
    cdef _cnp.npy_intp* dy = _cnp.PyArray_DIMS(<_cnp.ndarray>y)
    cdef int i
    for i in range(nd):
        if dx[i] != dy[i]:
            return False
    return True


cdef inline bint _loop_scalar(object v):
    # a Python number NumPy would cast to the array's dtype (NEP 50 weak
    # scalar), which a C cast reproduces: floats, and ints a double holds.
    # (softplus also wants beta > 0: then no step of the ufunc formula can
    # overflow or divide by zero, so the loop owes no floating-point warning.)
    if type(v) is float:
        return True
    return type(v) is int and -(1 << 53) <= v <= (1 << 53)


cdef inline _cnp.ndarray _loop_empty_like(object x):
    return <_cnp.ndarray>_cnp.PyArray_EMPTY(_cnp.PyArray_NDIM(<_cnp.ndarray>x),
                                            _cnp.PyArray_DIMS(<_cnp.ndarray>x),
                                            _cnp.PyArray_TYPE(<_cnp.ndarray>x), 0)
