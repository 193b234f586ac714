# One-pass C loops for elementwise kernels and backward formulas whose NumPy
# form takes several ufunc calls (each costs a dispatch): maximum/minimum's
# backward, softplus forward and backward, sigmoid and silu forward and
# backward (their exp stays NumPy's, one ufunc call, so values are unchanged);
# and the forward of add, sub, mul, div and neg, where the ufunc's dispatch
# is most of the op's cost.
#
# On (16,) arrays a ufunc call costs ~0.5 us of dispatch, a loop over them a
# few ns: a formula of 4-6 ufunc calls is then several times the op's own
# bookkeeping. Each loop here computes exactly what its ufunc formula in
# _op_support.pxi / _formula_helpers.pxi computes (same operations, same
# order, same dtype), and runs only where that is easy to guarantee: NumPy
# arrays (never CuPy), one float dtype (float32 or float64), one shape, C
# order, aligned, native byte order (_loop_typenum). Everything else
# (broadcasting, mixed dtypes, views, '>f8' data, misaligned buffers)
# returns None and the caller falls back to its ufunc formula.
#
# Must never change a result the ufunc formula would give (ties, NaNs,
# thresholds, dtypes). Declared in _elementwise_loops.pxd; the array checks
# and the fused float type are _loop_support.pxd's.

cimport numpy as _cnp
import numpy as np
from retrograd.core._loop_support cimport (
    _real, _loop_typenum, _loop_same, _loop_scalar, _loop_empty_like,
)

# aliased: exp, expm1 and log1p are also this module's ops
from libc.math cimport exp as _c_exp, expf as _c_expf, expm1 as _c_expm1, expm1f as _c_expm1f
from libc.math cimport log1p as _c_log1p, log1pf as _c_log1pf, fabs as _c_fabs, fabsf as _c_fabsf

_cnp.import_array()


# --- maximum / minimum backward ---------------------------------------------

cdef void _max_min_grad_loop(_real* g, _real* a, _real* b, _real* r, Py_ssize_t n,
                             bint is_max) noexcept nogil:
    # torch: a tie gets grad / 2, a strict loser 0, anything else (the winner,
    # or a NaN on either side) the whole grad
    cdef Py_ssize_t i
    for i in range(n):
        if a[i] == b[i]:
            r[i] = g[i] * <_real>0.5
        elif (a[i] < b[i]) if is_max else (a[i] > b[i]):
            r[i] = 0
        else:
            r[i] = g[i]


cdef object _loop_max_min_backward(object grad, object a, object b, bint is_max):
    # the gradient of a in maximum(a, b) (is_max) or minimum(a, b); None
    # where the loop does not apply
    cdef int t = _loop_typenum(grad)
    if t < 0 or not _loop_same(grad, a, t) or not _loop_same(grad, b, t):
        return None
    cdef _cnp.ndarray r = _loop_empty_like(grad)
    cdef Py_ssize_t n = _cnp.PyArray_SIZE(r)
    if t == _cnp.NPY_DOUBLE:
        _max_min_grad_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>grad),
                           <double*>_cnp.PyArray_DATA(<_cnp.ndarray>a),
                           <double*>_cnp.PyArray_DATA(<_cnp.ndarray>b),
                           <double*>_cnp.PyArray_DATA(r), n, is_max)
    else:
        _max_min_grad_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>grad),
                           <float*>_cnp.PyArray_DATA(<_cnp.ndarray>a),
                           <float*>_cnp.PyArray_DATA(<_cnp.ndarray>b),
                           <float*>_cnp.PyArray_DATA(r), n, is_max)
    return r


# --- softplus ----------------------------------------------------------------

cdef inline double _logaddexp0(double x) noexcept nogil:
    # NumPy's npy_logaddexp(0, x), operation for operation (so the loop's
    # values are the ufunc's, bit for bit)
    if x == 0:
        return 0.693147180559945309417232121458176568
    cdef double tmp = -x
    if tmp > 0:
        return _c_log1p(_c_exp(x))
    if tmp <= 0:
        return x + _c_log1p(_c_exp(tmp))
    return tmp                          # NaN


cdef inline float _logaddexp0f(float x) noexcept nogil:
    # npy_logaddexpf(0, x)
    if x == 0:
        return <float>0.693147180559945309417232121458176568
    cdef float tmp = -x
    if tmp > 0:
        return _c_log1pf(_c_expf(x))
    if tmp <= 0:
        return x + _c_log1pf(_c_expf(tmp))
    return tmp


cdef void _softplus_loop(_real* x, _real* y, Py_ssize_t n, _real beta, bint scaled,
                         _real threshold) noexcept nogil:
    # k_softplus: y = x where x*beta > threshold, else logaddexp(0, x*beta)/beta
    cdef Py_ssize_t i
    cdef _real xb, v
    for i in range(n):
        xb = x[i] * beta if scaled else x[i]
        if xb > threshold:
            y[i] = x[i]
            continue
        if _real is double:
            v = _logaddexp0(xb)
        else:
            v = _logaddexp0f(xb)
        y[i] = v / beta if scaled else v


cdef object _loop_softplus(object a, object beta, object threshold):
    cdef int t = _loop_typenum(a)
    if t < 0 or not _loop_scalar(beta) or not _loop_scalar(threshold) or not beta > 0:
        return None
    cdef _cnp.ndarray r = _loop_empty_like(a)
    cdef Py_ssize_t n = _cnp.PyArray_SIZE(r)
    cdef double db = beta, dt = threshold
    cdef bint scaled = not (beta == 1)
    if t == _cnp.NPY_DOUBLE:
        _softplus_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>a), <double*>_cnp.PyArray_DATA(r),
                       n, db, scaled, dt)
    else:
        _softplus_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>a), <float*>_cnp.PyArray_DATA(r),
                       n, <float>db, scaled, <float>dt)
    return r


cdef void _softplus_grad_loop(_real* g, _real* x, _real* y, _real* r, Py_ssize_t n, _real beta,
                              bint scaled, _real threshold) noexcept nogil:
    # _a_softplus_backward: grad where x*beta > threshold, else
    # -(grad * expm1(-(y*beta))), i.e. grad * sigmoid(x*beta) from the output
    cdef Py_ssize_t i
    cdef _real xb, yb
    for i in range(n):
        xb = x[i] * beta if scaled else x[i]
        if xb > threshold:
            r[i] = g[i]
            continue
        yb = y[i] * beta if scaled else y[i]
        if _real is double:
            r[i] = -(g[i] * _c_expm1(-yb))
        else:
            r[i] = -(g[i] * _c_expm1f(-yb))


cdef object _loop_softplus_backward(object grad, object x, object y, object beta, object threshold):
    cdef int t = _loop_typenum(grad)
    if (t < 0 or not _loop_same(grad, x, t) or not _loop_same(grad, y, t)
            or not _loop_scalar(beta) or not _loop_scalar(threshold) or not beta > 0):
        return None
    cdef _cnp.ndarray r = _loop_empty_like(grad)
    cdef Py_ssize_t n = _cnp.PyArray_SIZE(r)
    cdef double db = beta, dt = threshold
    cdef bint scaled = not (beta == 1)
    if t == _cnp.NPY_DOUBLE:
        _softplus_grad_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>grad),
                            <double*>_cnp.PyArray_DATA(<_cnp.ndarray>x),
                            <double*>_cnp.PyArray_DATA(<_cnp.ndarray>y),
                            <double*>_cnp.PyArray_DATA(r), n, db, scaled, dt)
    else:
        _softplus_grad_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>grad),
                            <float*>_cnp.PyArray_DATA(<_cnp.ndarray>x),
                            <float*>_cnp.PyArray_DATA(<_cnp.ndarray>y),
                            <float*>_cnp.PyArray_DATA(r), n, <float>db, scaled, <float>dt)
    return r


# --- sigmoid / silu ----------------------------------------------------------
# k_sigmoid's ufunc steps: e = exp(-|x|); r = 1/(1+e), times e where x < 0.
# The exp stays np.exp (NumPy's SIMD exp is not libm's to the ulp); the rest
# is the same IEEE arithmetic in the same order, in the array's dtype.

cdef void _neg_abs_loop(_real* x, _real* r, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if _real is double:
            r[i] = -_c_fabs(x[i])
        else:
            r[i] = -_c_fabsf(x[i])


cdef void _sigmoid_loop(_real* x, _real* e, _real* r, Py_ssize_t n, int mode) noexcept nogil:
    # mode 0: r = sigmoid(x); 1: r = x * sigmoid(x) (silu); e = exp(-|x|)
    # (r may be e)
    cdef Py_ssize_t i
    cdef _real v
    for i in range(n):
        v = <_real>1 / (<_real>1 + e[i])
        if x[i] < 0:
            v = v * e[i]
        r[i] = x[i] * v if mode == 1 else v


cdef void _silu_grad_loop(_real* g, _real* x, _real* s, _real* r, Py_ssize_t n) noexcept nogil:
    # silu_backward: grad * (s * (1 + x * (1 - s))), s = sigmoid(x) (r may be s)
    cdef Py_ssize_t i
    for i in range(n):
        r[i] = g[i] * (s[i] * (<_real>1 + x[i] * (<_real>1 - s[i])))


cdef void _sigmoid_grad_loop(_real* g, _real* y, _real* r, Py_ssize_t n) noexcept nogil:
    # sigmoid's backward: grad * (result * (1 - result))
    cdef Py_ssize_t i
    for i in range(n):
        r[i] = g[i] * (y[i] * (<_real>1 - y[i]))


cdef object _loop_sigmoid(object a, int mode):
    # sigmoid(a) (mode 0) or silu(a) (mode 1) of a C-contiguous float32/64
    # NumPy array, in a new array; None where the loop does not apply
    cdef int t = _loop_typenum(a)
    if t < 0:
        return None
    cdef _cnp.ndarray r = _loop_empty_like(a)
    cdef Py_ssize_t n = _cnp.PyArray_SIZE(r)
    if t == _cnp.NPY_DOUBLE:
        _neg_abs_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>a), <double*>_cnp.PyArray_DATA(r), n)
    else:
        _neg_abs_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>a), <float*>_cnp.PyArray_DATA(r), n)
    np.exp(r, out=r)
    if t == _cnp.NPY_DOUBLE:
        _sigmoid_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>a), <double*>_cnp.PyArray_DATA(r),
                      <double*>_cnp.PyArray_DATA(r), n, mode)
    else:
        _sigmoid_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>a), <float*>_cnp.PyArray_DATA(r),
                      <float*>_cnp.PyArray_DATA(r), n, mode)
    return r


cdef object _loop_silu_backward(object grad, object x):
    cdef int t = _loop_typenum(grad)
    if t < 0 or not _loop_same(grad, x, t):
        return None
    cdef _cnp.ndarray s = <_cnp.ndarray>_loop_sigmoid(x, 0)
    cdef Py_ssize_t n = _cnp.PyArray_SIZE(s)
    if t == _cnp.NPY_DOUBLE:
        _silu_grad_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>grad),
                        <double*>_cnp.PyArray_DATA(<_cnp.ndarray>x),
                        <double*>_cnp.PyArray_DATA(s), <double*>_cnp.PyArray_DATA(s), n)
    else:
        _silu_grad_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>grad),
                        <float*>_cnp.PyArray_DATA(<_cnp.ndarray>x),
                        <float*>_cnp.PyArray_DATA(s), <float*>_cnp.PyArray_DATA(s), n)
    return s


cdef object _loop_sigmoid_backward(object grad, object y):
    cdef int t = _loop_typenum(grad)
    if t < 0 or not _loop_same(grad, y, t):
        return None
    cdef _cnp.ndarray r = _loop_empty_like(grad)
    cdef Py_ssize_t n = _cnp.PyArray_SIZE(r)
    if t == _cnp.NPY_DOUBLE:
        _sigmoid_grad_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>grad),
                           <double*>_cnp.PyArray_DATA(<_cnp.ndarray>y), <double*>_cnp.PyArray_DATA(r), n)
    else:
        _sigmoid_grad_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>grad),
                           <float*>_cnp.PyArray_DATA(<_cnp.ndarray>y), <float*>_cnp.PyArray_DATA(r), n)
    return r


# --- add, sub, mul, div, neg -------------------------------------------------
# The arithmetic of every chain of small ops: a ufunc call on (16,) arrays
# costs ~0.35 us of dispatch (more with a Python scalar operand, which it
# converts), the loop ~0.05 us. IEEE arithmetic is exactly rounded, so one C
# operation per element is the ufunc's result bit for bit (no FMA: each
# element is a single operation); a Python scalar is cast to the array's
# dtype first, as NumPy casts a weak scalar (NEP 50). The loops also owe no
# floating-point warning (1e308 * 10 is inf in silence, as in torch).

# NumPy releases the GIL for a ufunc loop over this many elements or more
# (NPY_BEGIN_THREADS_THRESHOLDED); so do the loops
cdef Py_ssize_t _LOOP_NOGIL_SIZE = 500


cdef void _arith_loop(_real* x, _real* y, _real* r, Py_ssize_t n, int op) noexcept nogil:
    cdef Py_ssize_t i
    if op == _ARITH_ADD:
        for i in range(n):
            r[i] = x[i] + y[i]
    elif op == _ARITH_SUB:
        for i in range(n):
            r[i] = x[i] - y[i]
    elif op == _ARITH_MUL:
        for i in range(n):
            r[i] = x[i] * y[i]
    else:
        for i in range(n):
            r[i] = x[i] / y[i]


cdef void _arith_scalar_loop(_real* x, _real s, _real* r, Py_ssize_t n, int op,
                             bint scalar_first) noexcept nogil:
    # x op s, or s op x where scalar_first
    cdef Py_ssize_t i
    if op == _ARITH_ADD:
        for i in range(n):
            r[i] = x[i] + s             # (addition commutes, bit for bit)
    elif op == _ARITH_MUL:
        for i in range(n):
            r[i] = x[i] * s
    elif op == _ARITH_SUB:
        if scalar_first:
            for i in range(n):
                r[i] = s - x[i]
        else:
            for i in range(n):
                r[i] = x[i] - s
    elif scalar_first:
        for i in range(n):
            r[i] = s / x[i]
    else:
        for i in range(n):
            r[i] = x[i] / s


cdef object _loop_arith(object a, object b, int op, object alpha=1):
    # a + b, a - b, a * b or a / b of C-contiguous float32/64 NumPy arrays of
    # one dtype and shape, or of one such array and a Python scalar, in a new
    # array; None where the loop does not apply (broadcasting, mixed dtypes,
    # other layouts, add/sub with alpha)
    cdef int t
    cdef bint scalar_first = False
    cdef object arr = a
    cdef object other = b
    cdef double s = 0
    if alpha is not 1 and not (type(alpha) is int and alpha == 1):
        return None
    if type(a) is not _cnp.ndarray:
        if type(b) is not _cnp.ndarray or not _loop_scalar(a):
            return None
        arr = b
        other = a
        scalar_first = True
    t = _loop_typenum(arr)
    if t < 0:
        return None
    if type(other) is _cnp.ndarray:
        if not _loop_same(arr, other, t):
            return None
    elif _loop_scalar(other):
        s = other
    else:
        return None
    cdef _cnp.ndarray r = _loop_empty_like(arr)
    cdef Py_ssize_t n = _cnp.PyArray_SIZE(r)
    cdef void* px = _cnp.PyArray_DATA(<_cnp.ndarray>arr)
    cdef void* pr = _cnp.PyArray_DATA(r)
    cdef void* py = NULL
    cdef float sf = <float>s            # NumPy's cast of the scalar to float32
    if type(other) is _cnp.ndarray:
        py = _cnp.PyArray_DATA(<_cnp.ndarray>other)
    if n >= _LOOP_NOGIL_SIZE:
        with nogil:
            _arith_dispatch(px, py, s, sf, pr, n, op, t, scalar_first)
    else:
        _arith_dispatch(px, py, s, sf, pr, n, op, t, scalar_first)
    return r


cdef inline void _arith_dispatch(void* px, void* py, double s, float sf, void* pr, Py_ssize_t n,
                                 int op, int t, bint scalar_first) noexcept nogil:
    if t == _cnp.NPY_DOUBLE:
        if py != NULL:
            _arith_loop(<double*>px, <double*>py, <double*>pr, n, op)
        else:
            _arith_scalar_loop(<double*>px, s, <double*>pr, n, op, scalar_first)
    elif py != NULL:
        _arith_loop(<float*>px, <float*>py, <float*>pr, n, op)
    else:
        _arith_scalar_loop(<float*>px, sf, <float*>pr, n, op, scalar_first)


cdef void _neg_loop(_real* x, _real* r, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        r[i] = -x[i]


cdef object _loop_neg(object a):
    # -a of a C-contiguous float32/64 NumPy array; None where the loop does
    # not apply
    cdef int t = _loop_typenum(a)
    if t < 0:
        return None
    cdef _cnp.ndarray r = _loop_empty_like(a)
    cdef Py_ssize_t n = _cnp.PyArray_SIZE(r)
    if t == _cnp.NPY_DOUBLE:
        _neg_loop(<double*>_cnp.PyArray_DATA(<_cnp.ndarray>a), <double*>_cnp.PyArray_DATA(r), n)
    else:
        _neg_loop(<float*>_cnp.PyArray_DATA(<_cnp.ndarray>a), <float*>_cnp.PyArray_DATA(r), n)
    return r
