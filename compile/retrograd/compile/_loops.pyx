# cython: language_level=3, boundscheck=False, wraparound=False
# One-pass C loops for the numpy backend's kernels where NumPy's own call is
# slow for what it computes (_kernels.py picks them; the program builder
# still checks each against the traced value):
#
# - relu(x, out): np.maximum(x, 0, out=out). NumPy's maximum with a scalar
#   operand takes no SIMD loop: on a 128x512 float64 activation it runs
#   about 35 us, the vectorised loop about 8.
# - mask_mul(g, y, out): g * (y != 0) into out, relu's backward
#   (threshold_backward's mask on the result), one pass over g and y where
#   NumPy makes the bool mask, then multiplies by it with a cast per element.
#
# The loops are C (_loops.h, which says why), and compute exactly what
# their NumPy forms give, element for element. They run only on aligned,
# native, C-contiguous float32 or float64 arrays of one dtype and shape;
# anything else takes the NumPy form.

cimport numpy as cnp
import numpy as np

cnp.import_array()

cdef extern from "_loops.h" nogil:
    void rg_relu_f64(const double* x, double* r, Py_ssize_t n)
    void rg_relu_f32(const float* x, float* r, Py_ssize_t n)
    void rg_mask_mul_f64(const double* g, const double* y, double* r, Py_ssize_t n)
    void rg_mask_mul_f32(const float* g, const float* y, float* r, Py_ssize_t n)

# Above this many elements a loop runs without the GIL (as NumPy's do).
cdef Py_ssize_t _NOGIL_SIZE = 16384


cdef int _typenum(object a) except -2:
    # the loops' dtype of a plain ndarray they can run on, or -1
    if type(a) is not cnp.ndarray:
        return -1
    cdef cnp.ndarray arr = <cnp.ndarray>a
    cdef int t = cnp.PyArray_TYPE(arr)
    if t != cnp.NPY_DOUBLE and t != cnp.NPY_FLOAT:
        return -1
    if not cnp.PyArray_CHKFLAGS(arr, cnp.NPY_ARRAY_C_CONTIGUOUS | cnp.NPY_ARRAY_ALIGNED) \
            or not cnp.PyArray_ISNOTSWAPPED(arr):
        return -1
    return t


cdef bint _fits(object a, object like, int t) except -1:
    # `a` is an array of the loops' dtype `t`, of `like`'s shape
    if _typenum(a) != t:
        return False
    cdef int i, nd = cnp.PyArray_NDIM(<cnp.ndarray>a)
    if nd != cnp.PyArray_NDIM(<cnp.ndarray>like):
        return False
    for i in range(nd):
        if cnp.PyArray_DIMS(<cnp.ndarray>a)[i] != cnp.PyArray_DIMS(<cnp.ndarray>like)[i]:
            return False
    return True


cdef bint _writeable(object a) except -1:
    return cnp.PyArray_CHKFLAGS(<cnp.ndarray>a, cnp.NPY_ARRAY_WRITEABLE)


def relu(x, out):
    """``np.maximum(x, 0, out=out)``, in one vectorised pass where it can."""
    cdef int t = _typenum(x)
    cdef Py_ssize_t n
    if t < 0 or not _fits(out, x, t) or not _writeable(out):
        return np.maximum(x, 0, out=out)
    n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    cdef void* px = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* pr = cnp.PyArray_DATA(<cnp.ndarray>out)
    if t == cnp.NPY_DOUBLE:
        if n >= _NOGIL_SIZE:
            with nogil:
                rg_relu_f64(<double*>px, <double*>pr, n)
        else:
            rg_relu_f64(<double*>px, <double*>pr, n)
    elif n >= _NOGIL_SIZE:
        with nogil:
            rg_relu_f32(<float*>px, <float*>pr, n)
    else:
        rg_relu_f32(<float*>px, <float*>pr, n)
    return out


def mask_mul(g, y, out):
    """``np.multiply(g, y != 0, out=out)`` (relu's backward on its result
    ``y``), in one pass where it can."""
    cdef int t = _typenum(g)
    cdef Py_ssize_t n
    if t < 0 or not _fits(y, g, t) or not _fits(out, g, t) or not _writeable(out):
        return np.multiply(g, np.not_equal(y, 0), out=out)
    n = cnp.PyArray_SIZE(<cnp.ndarray>g)
    cdef void* pg = cnp.PyArray_DATA(<cnp.ndarray>g)
    cdef void* py = cnp.PyArray_DATA(<cnp.ndarray>y)
    cdef void* pr = cnp.PyArray_DATA(<cnp.ndarray>out)
    if t == cnp.NPY_DOUBLE:
        if n >= _NOGIL_SIZE:
            with nogil:
                rg_mask_mul_f64(<double*>pg, <double*>py, <double*>pr, n)
        else:
            rg_mask_mul_f64(<double*>pg, <double*>py, <double*>pr, n)
    elif n >= _NOGIL_SIZE:
        with nogil:
            rg_mask_mul_f32(<float*>pg, <float*>py, <float*>pr, n)
    else:
        rg_mask_mul_f32(<float*>pg, <float*>py, <float*>pr, n)
    return out
