# cython: language_level=3
# retrograd.core._kernels_elementwise: the kernels of the elementwise ops
# (derivatives.yaml's `kernel:` code for sigmoid, relu, erf, softplus,
# clamp, ...), declared in _kernels_elementwise.pxd. Arrays in, arrays out.

cimport numpy as _cnp
import numpy as np
from numpy import ndarray
from retrograd.core._dtype_rules import DtypeRuntimeError
from retrograd.core._array_module cimport _arr, _is_cupy, _cupy_ndarray
from retrograd.core._dtype_rules cimport (
    k_float, k_float_only, k_real, k_real_float, _kind_of, _is_bf16, k_opmath, k_bf16_like,
)
from retrograd.core._arg_checks cimport _dtype_of
from retrograd.core._elementwise_loops cimport _loop_softplus, _loop_sigmoid

_cnp.import_array()


# --- elementwise ops -------------------------------------------------------------

cdef object k_sigmoid(object a):
    # Stable for large |a|: exp never overflows. 1/(1+e) where a >= 0,
    # e/(1+e) elsewhere, the latter as r*e in place (two ufunc calls fewer
    # than a where of both branches: this is most of sigmoid's cost on small
    # arrays, and silu and softplus's backward use it too).
    r = _loop_sigmoid(a, 0)             # the same values, one ufunc call
    if r is not None:
        return r
    if _is_bf16(a):                     # in float32, rounded once (Note [bfloat16 kernels])
        return k_bf16_like(k_sigmoid(k_opmath(a)), a)
    cdef int kind = _kind_of(a)
    if kind == 99:
        # complex: 1 / (1 + exp(-z)), as torch (|z| would drop the imaginary part)
        return np.reciprocal(np.add(1, np.exp(np.negative(a))))
    if kind == 105:
        a = k_float(a)                  # uint8's -x would wrap
        r = _loop_sigmoid(a, 0)
        if r is not None:
            return r
    e = np.exp(np.negative(np.abs(a)))
    r = np.divide(1, 1 + e)
    if type(r) is not ndarray and not _is_cupy(r):    # 0-d input: NumPy gave a scalar
        r = np.asarray(r)
    if _is_cupy(r):                     # CuPy's ufuncs take no where=
        r = np.where(np.less(a, 0), r * e, r)
    else:
        np.multiply(r, e, out=r, where=np.less(a, 0))
    if type(a) is ndarray and _cnp.PyArray_DESCR(<_cnp.ndarray>a) == _cnp.PyArray_DESCR(<_cnp.ndarray>r):
        return r
    return r.astype(np.result_type(a, np.float16), copy=False)


cdef object k_relu(object a):
    cdef int kind = _kind_of(a)
    if kind == 99:
        k_real(a, "relu")
    if kind == 105 and _arr(a).dtype == np.bool_:
        raise DtypeRuntimeError("relu(): Boolean inputs not supported for relu (as in torch); "
                                "convert the input first, e.g. x.float()")
    return np.maximum(a, 0).astype(np.result_type(a), copy=False)


cdef inline object _float_type(object a):
    # the floating type a float op computes in: float inputs keep theirs
    # (bfloat16 too: NumPy would promote it with float16 to float32),
    # integers and bools go to float64 (NumPy's rule for np.exp(int))
    if _is_bf16(a):
        return a.dtype
    return np.result_type(a, np.float16)


# c_n = 2^n / (1*3*...*(2n+1)): erf(x) = 2/sqrt(pi) exp(-x^2) x sum_n c_n x^(2n)
_ERF_SERIES = np.cumprod(np.concatenate([[1.0], 2.0 / (2.0 * np.arange(1, 80) + 1.0)]))


cdef object _erf_f64(object x):
    # erf in float64 without scipy, accurate to a few ulp:
    # |x| <= 3: erf(x) = 2/sqrt(pi) exp(-x^2) x sum_n c_n x^(2n), a series of
    #           positive terms (no cancellation, unlike Taylor's), by Horner's
    #           rule with in-place ufuncs (two passes a term);
    # 3 < |x| < 6: 1 - erfc(x), erfc by its continued fraction
    #           erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))));
    # |x| >= 6: +-1 (erfc(6) ~ 2e-17 is below float64's resolution of 1).
    ax = np.abs(x)
    if ax.size == 0:
        return ax
    amax = float(np.nanmax(ax)) if not np.isnan(ax).all() else 0.0
    if amax <= 3.0:
        out = _erf_series(ax, amax)
    else:
        out = np.ones_like(ax)
        small = ax <= 3.0
        if small.any():
            s = ax[small]
            out[small] = _erf_series(s, float(s.max()))
        mid = (ax > 3.0) & (ax < 6.0)
        if mid.any():
            m = ax[mid]
            t = m.copy()
            for k in range(60, 0, -1):
                t = m + (0.5 * k) / t
            out[mid] = 1.0 - np.exp(-m * m) / (1.7724538509055160 * t)
    out = np.where(np.isnan(ax), ax, out)
    return np.copysign(out, x)


cdef object _erf_series(object s, double smax):
    # terms until c_n smax^(2n) is negligible (the count measured to reach
    # full float64 accuracy at |x| = 3)
    cdef int n = min(int(2 * smax * smax + 30), 79)
    s2 = np.array(s * s, dtype=np.float64)     # an array (0-d arithmetic gives scalars)
    p = np.full(s2.shape, _ERF_SERIES[n])
    for k in range(n - 1, -1, -1):
        np.multiply(p, s2, out=p)
        np.add(p, _ERF_SERIES[k], out=p)
    np.negative(s2, out=s2)
    np.exp(s2, out=s2)
    p *= s2
    p *= s
    p *= 1.1283791670955126
    return p


cpdef object k_erf(object a):
    a = _arr(k_float(k_real(a, "erf")))
    ft = _float_type(a)
    if _cupy_ndarray is not None and type(a) is _cupy_ndarray:
        import cupyx.scipy.special
        return cupyx.scipy.special.erf(a.astype(ft, copy=False))
    return np.asarray(_erf_f64(a.astype(np.float64))).astype(ft, copy=False)


cdef object _erfc_tail(object m):
    # erfc(m) for m > 3 by its continued fraction (as in _erf_f64), directly:
    # 1 - erf(m) would lose every digit there
    t = m.copy()
    for k in range(60, 0, -1):
        t = m + (0.5 * k) / t
    return np.exp(-m * m) / (1.7724538509055160 * t)


cpdef object k_erfc(object a):
    # 1 - erf(x) where erfc(|x|) >= erfc(3) ~ 2e-5 (a relative error below
    # 1e-11 in float64), the continued fraction beyond; erfc(-x) = 2 - erfc(x)
    a = _arr(k_float(k_real(a, "erfc")))
    ft = _float_type(a)
    if _cupy_ndarray is not None and type(a) is _cupy_ndarray:
        import cupyx.scipy.special
        return cupyx.scipy.special.erfc(a.astype(ft, copy=False))
    x = np.asarray(a, dtype=np.float64)
    ax = np.abs(x)
    out = np.array(1.0 - np.asarray(_erf_f64(np.minimum(ax, 3.0))), dtype=np.float64)
    big = ax > 3.0
    if big.any():
        out[big] = _erfc_tail(ax[big])
    out = np.where(x < 0, 2.0 - out, out)
    return np.asarray(np.where(np.isnan(x), x, out)).astype(ft, copy=False)


cpdef object k_erfinv(object a):
    # Winitzki's closed form (a relative error of ~2e-3) refined by Newton's
    # steps on erf (quadratic: four reach float64's resolution); erfinv(+-1)
    # is +-inf, nan outside [-1, 1]
    a = _arr(k_float(k_real(a, "erfinv")))
    ft = _float_type(a)
    if _cupy_ndarray is not None and type(a) is _cupy_ndarray:
        import cupyx.scipy.special
        return cupyx.scipy.special.erfinv(a.astype(ft, copy=False))
    y = np.asarray(a, dtype=np.float64)
    inside = np.abs(y) < 1.0
    yc = np.where(inside, y, 0.0)
    ln = np.log1p(-yc * yc)
    k = 2.0 / (np.pi * 0.147) + 0.5 * ln
    x = np.copysign(np.sqrt(np.sqrt(k * k - ln / 0.147) - k), yc)
    for _ in range(4):
        err = np.asarray(_erf_f64(x)) - yc
        x = x - err / (1.1283791670955126 * np.exp(-x * x))
    out = np.where(inside, x, np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), np.nan))
    return np.asarray(out).astype(ft, copy=False)


cdef object k_rsqrt(object a):
    return np.reciprocal(np.sqrt(k_float(a)))


cdef object k_reciprocal(object a):
    # np.reciprocal of an integer is integer division (1/2 == 0); torch's
    # reciprocal of an integer is a float, as 1 / a is.
    return np.reciprocal(k_float(a))


cdef object k_gelu(object a, object approximate):
    k_real_float(a, "gelu")
    if _is_bf16(a):                     # in float32, rounded once (Note [bfloat16 kernels])
        return k_bf16_like(k_gelu(k_opmath(a), approximate), a)
    if approximate == "none":
        return a * 0.5 * (1.0 + k_erf(a * 0.7071067811865476))
    if approximate == "tanh":
        inner = 0.7978845608028654 * (a + 0.044715 * (a * a * a))
        return 0.5 * a * (1.0 + np.tanh(inner))
    raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")


cdef object k_silu(object a):
    r = _loop_sigmoid(a, 1)             # the same values, one ufunc call
    if r is not None:
        return r
    k_float_only(a, "silu")             # (complex: z * sigmoid(z), as torch)
    if _is_bf16(a):
        return k_bf16_like(k_silu(k_opmath(a)), a)
    return a * k_sigmoid(a)


cdef object k_softplus(object a, object beta, object threshold):
    # torch's formula: x where x*beta > threshold, else log1p(exp(x*beta))/beta
    # (the minimum keeps exp from overflowing where the other branch is taken)
    # log1p(exp(xb)) is computed as logaddexp(0, xb), which never overflows
    # (one ufunc call instead of minimum, exp and log1p).
    r = _loop_softplus(a, beta, threshold)      # the same values in one pass
    if r is not None:
        return r
    k_real_float(a, "softplus")
    if _is_bf16(a):
        return k_bf16_like(k_softplus(k_opmath(a), beta, threshold), a)
    xb = a if beta == 1 else a * beta
    y = np.logaddexp(0, xb)
    if beta != 1:
        y = y / beta
    y = np.where(xb > threshold, a, y)
    if type(a) is ndarray and _cnp.PyArray_DESCR(<_cnp.ndarray>a) == _cnp.PyArray_DESCR(<_cnp.ndarray>y):
        return y
    return y.astype(_float_type(xb), copy=False)


cdef object k_clamp(object a, object lo, object hi):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    k_real(a, "clamp")
    if lo is not None:
        k_real(lo, "clamp")
    if hi is not None:
        k_real(hi, "clamp")
    # torch's order: min(max(x, lo), hi), so lo > hi gives hi everywhere
    out = a if lo is None else np.maximum(a, lo)
    return out if hi is None else np.minimum(out, hi)


cdef object k_lerp(object a, object end, object weight):
    if _kind_of(a) == 105 and hasattr(end, "dtype") and _dtype_of(end) != _dtype_of(a):
        # torch checks that start and end agree before it looks for a kernel
        raise DtypeRuntimeError(f"lerp(): expected dtype {_dtype_of(a)} for `end` but got dtype "
                                f"{_dtype_of(end)}; convert both to one floating point dtype first")
    k_float_only(a, "lerp")
    if _is_bf16(a) or _is_bf16(end) or _is_bf16(weight):
        return k_bf16_like(k_lerp(k_opmath(a), k_opmath(end), k_opmath(weight)), a, end)
    # torch's formula: exact at weight 0 and weight 1
    d = np.subtract(end, a)
    return np.where(np.abs(weight) < 0.5, a + weight * d, end - d * (1 - weight))


cdef object k_fill(object a, object value):
    v = value if _is_cupy(value) else np.asarray(value)
    if v.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{v.ndim} dimensions.")
    out = np.empty_like(a)
    out[...] = v
    return out
