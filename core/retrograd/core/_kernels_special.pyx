# cython: language_level=3, boundscheck=False, wraparound=False
# retrograd.core._kernels_special: the kernels of torch's special functions
# (lgamma, digamma, polygamma, mvlgamma, i0 and its derivative i1, igamma,
# igammac), declared in _kernels_special.pxd. Arrays in, arrays out: C loops
# over float64 copies on the CPU (no SciPy: core needs NumPy alone), CuPy's
# cupyx.scipy.special on the device.
#
# The algorithms are the ones torch's CPU kernels use (from the Cephes Math
# Library, and SciPy's igam/igamc for the incomplete gamma functions; the
# Cephes library is 3-clause BSD, Copyright (c) 2018 Steven Moshier), so that
# values agree with torch to the last bits, poles included. Two departures:
# near x ~ a the incomplete gamma functions use their series or continued
# fraction (with enough terms) where torch uses Temme's uniform expansion,
# whose torch port multiplies by a float-precision pi and is off by ~2e-9
# there (these agree with SciPy to ~1e-14); and the loops take as many terms
# as convergence needs where torch stops at 2000 (a above ~1e4).

cimport numpy as _cnp
import numpy as np
from numpy import ndarray
from libc.math cimport (lgamma, lgammaf, exp, expf, log, log1p, expm1, sqrt, sin, sinf, tan, floor, trunc,
                        modf, fabs, fmin, pow, copysign, isinf, isnan, INFINITY, NAN)
from retrograd.core._dtype_rules import DtypeNotImplementedError
from retrograd.core._array_module cimport _arr, _is_cupy, _xp
from retrograd.core._dtype_rules cimport k_float, k_real, k_default_float, _kind_of, _dtype_str
from retrograd.core._arg_checks cimport _int_arg, _type_name

_cnp.import_array()


# --- scalar functions (C, no GIL) -------------------------------------------------
# Each follows the algorithm torch's CPU kernel uses (Cephes's, and SciPy's
# for the incomplete gamma function), so that values agree with torch to the
# last few bits, poles and overflows included. `f32` marks a float32 (or
# float16) input: torch computes those in float, and where that changes more
# than the rounding (sin(pi x) near a negative integer, exp overflowing past
# 88.7) the float step is taken in float here too.

cdef double _MACHEP = 1.11022302462515654042e-16
cdef double _PI = 3.14159265358979323846

# asymptotic series of digamma, in 1/x^2 (Cephes's psi)
cdef double[7] _PSI_A = [8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
                         -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
                         8.33333333333333333333e-2]

# Euler-Maclaurin coefficients of the Hurwitz zeta function: (2k)! / B_2k
cdef double[12] _ZETA_A = [12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18]

# Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x)
# on [8, inf) (Cephes's i0), the same for I1
cdef double[30] _I0_A = [
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1]
cdef double[25] _I0_B = [
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1]
cdef double[29] _I1_A = [
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1]
cdef double[25] _I1_B = [
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1]

# Lanczos approximation (Boost's, g = 6.0246800407767296) of Gamma(x) exp(x - g - 1/2) / (x + g - 1/2)^(x - 1/2):
# numerator and denominator, highest power first
cdef double[13] _LANCZOS_NUM = [
    0.006061842346248906525783753964555936883222, 0.5098416655656676188125178644804694509993,
    19.51992788247617482847860966235652136208, 449.9445569063168119446858607650988409623,
    6955.999602515376140356310115515198987526, 75999.29304014542649875303443598909137092,
    601859.6171681098786670226533699352302507, 3481712.15498064590882071018964774556468,
    14605578.08768506808414169982791359218571, 43338889.32467613834773723740590533316085,
    86363131.28813859145546927288977868422342, 103794043.1163445451906271053616070238554,
    56906521.91347156388090791033559122686859]
cdef double[13] _LANCZOS_DEN = [1.0, 66.0, 1925.0, 32670.0, 357423.0, 2637558.0, 13339535.0, 45995730.0,
                                105258076.0, 150917976.0, 120543840.0, 39916800.0, 0.0]
cdef double _LANCZOS_G = 6.024680040776729583740234375


cdef inline double _chbevl(double x, const double* c, int n) noexcept nogil:
    # Clenshaw's recurrence for sum' c_i T_i(x/2), c[0] the highest order
    cdef double b0 = c[0]
    cdef double b1 = 0.0
    cdef double b2 = 0.0
    cdef int i
    for i in range(1, n):
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c[i]
    return 0.5 * (b0 - b2)


cdef inline double _polevl(double x, const double* c, int n) noexcept nogil:
    # c[0] x^n + ... + c[n], by Horner's rule
    cdef double r = c[0]
    cdef int i
    for i in range(1, n + 1):
        r = r * x + c[i]
    return r


cdef double _lgamma(double x, bint f32) noexcept nogil:
    # the C library's, as torch (lgammaf for float)
    if f32:
        return lgammaf(<float>x)
    return lgamma(x)


cdef double _digamma(double x) noexcept nogil:
    # +-inf at +-0 (the sign of the zero decides), nan at negative integers,
    # reflection below 0 (with tan of the fractional part: tan(pi x) loses
    # digits for large |x|), recurrence up to 10, then the asymptotic series
    cdef double q, r, result = 0.0, z
    if x == 0.0:
        return copysign(INFINITY, -x)
    if x < 0.0:
        if x == trunc(x):
            return NAN
        r = modf(x, &q)
        return _digamma(1.0 - x) - _PI / tan(_PI * r)
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    if x == 10.0:
        return result + 2.25175258906672110764
    z = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        z = z * _polevl(z, _PSI_A, 6)
    return result + log(x) - 0.5 / x - z


cdef double _trigamma(double x, bint f32) noexcept nogil:
    # torch's: the reflection pi^2 / sin^2(pi x) below 1/2 (finite, if huge, at
    # negative integers where sin(pi x) rounds to a tiny nonzero number), six
    # steps of the recurrence, then four terms of the asymptotic series
    cdef double sign = 1.0, result = 0.0, s, ixx
    cdef float sf
    cdef int _step
    if x < 0.5:
        sign = -1.0
        if f32:
            sf = sinf(<float>(<float>_PI * <float>x))
            s = sf
        else:
            s = sin(_PI * x)
        result -= (_PI * _PI) / (s * s)
        x = 1.0 - x
    for _step in range(6):
        result += 1.0 / (x * x)
        x += 1.0
    ixx = 1.0 / (x * x)
    result += (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6.0 - ixx * (1.0 / 30.0 - ixx * (1.0 / 42.0)))) / x
    return sign * result


cdef double _zeta(double x, double q) noexcept nogil:
    # Hurwitz zeta sum_k (q + k)^-x (Cephes's): direct sum until the terms are
    # negligible or past 9 terms and q + k > 9, then Euler-Maclaurin
    cdef double a, b, k, s, t, w
    cdef int i
    if x == 1.0:
        return INFINITY
    if x < 1.0:
        return NAN
    if q <= 0.0:
        if q == floor(q):
            return INFINITY
        if x != floor(x):
            return NAN
    s = pow(q, -x)
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = pow(a, -x)
        s += b
        if -_MACHEP * s < b < _MACHEP * s:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a = 1.0
    k = 0.0
    for i in range(12):
        a *= x + k
        b /= w
        t = a * b / _ZETA_A[i]
        s = s + t
        t = fabs(t / s)
        if t < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


cdef double _polygamma(long n, double x, bint f32) noexcept nogil:
    # n = 0: digamma; 1: trigamma; else (-1)^(n+1) n! zeta(n + 1, x), with
    # n! as exp(lgamma(n + 1)) as torch (so the rounding matches)
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x, f32)
    return (1.0 if n % 2 else -1.0) * exp(lgamma(n + 1.0)) * _zeta(n + 1.0, x)


cdef double _expf_overflows(double x) noexcept nogil:
    # 1 where float's exp(x) is inf (x past ~88.72), else 0
    return 1.0 if isinf(expf(<float>x)) and not isinf(x) else 0.0


cdef double _i0(double x, bint f32) noexcept nogil:
    x = fabs(x)
    if x <= 8.0:
        return exp(x) * _chbevl(x / 2.0 - 2.0, _I0_A, 30)
    if f32 and _expf_overflows(x) != 0.0:
        return INFINITY
    return exp(x) * _chbevl(32.0 / x - 2.0, _I0_B, 25) / sqrt(x)


cdef double _i1(double x0, bint f32) noexcept nogil:
    cdef double x = fabs(x0), out
    if x <= 8.0:
        out = exp(x) * x * _chbevl(x / 2.0 - 2.0, _I1_A, 29)
    elif f32 and _expf_overflows(x) != 0.0:
        out = INFINITY
    else:
        out = exp(x) * _chbevl(32.0 / x - 2.0, _I1_B, 25) / sqrt(x)
    return -out if x0 < 0.0 else out


# --- the regularized incomplete gamma functions (SciPy's igam / igamc) --------------

cdef double _ratevl(double x, const double* num, int m, const double* den, int n) noexcept nogil:
    # num(x) / den(x), coefficients highest power first; for |x| > 1 as
    # polynomials in 1/x (no overflow)
    cdef double y, np_, dp
    cdef int i
    if fabs(x) > 1.0:
        y = 1.0 / x
        np_ = num[m]
        for i in range(m - 1, -1, -1):
            np_ = np_ * y + num[i]
        dp = den[n]
        for i in range(n - 1, -1, -1):
            dp = dp * y + den[i]
        return pow(x, n - m) * np_ / dp
    np_ = num[0]
    for i in range(1, m + 1):
        np_ = np_ * x + num[i]
    dp = den[0]
    for i in range(1, n + 1):
        dp = dp * x + den[i]
    return np_ / dp


cdef double _igam_fac(double a, double x) noexcept nogil:
    # x^a exp(-x) / Gamma(a), through the Lanczos sum where a ~ x (the direct
    # form would cancel there)
    cdef double ax, fac, res, num
    if fabs(a - x) > 0.4 * fabs(a):
        ax = a * log(x) - x - lgamma(a)
        if ax < -7.09782712893383996843e2:
            return 0.0
        return exp(ax)
    fac = a + _LANCZOS_G - 0.5
    res = sqrt(fac / 2.718281828459045) / _ratevl(a, _LANCZOS_NUM, 12, _LANCZOS_DEN, 12)
    if a < 200.0 and x < 200.0:
        res *= exp(a - x) * pow(x / fac, a)
    else:
        num = (x - a - _LANCZOS_G + 0.5) / fac
        res *= exp(a * (log1p(num) - num) + x * (0.5 - _LANCZOS_G) / fac)
    return res


cdef inline long _max_iter(double a) noexcept nogil:
    # torch's 2000, or more where a is large: near x ~ a the series and the
    # continued fraction need a few sqrt(a) terms
    return 2000 + <long>(40.0 * sqrt(fmin(a, 1.0e10)))


cdef double _igam_series(double a, double x) noexcept nogil:
    # P(a, x) = x^a e^-x / Gamma(a + 1) * sum_k x^k / ((a+1)...(a+k)) (DLMF 8.11.4)
    cdef double ax = _igam_fac(a, x), r = a, c = 1.0, ans = 1.0
    cdef long _step
    if ax == 0.0:
        return 0.0
    for _step in range(_max_iter(a)):
        r += 1.0
        c *= x / r
        ans += c
        if c <= _MACHEP * ans:
            break
    return ans * ax / a


cdef double _igamc_series(double a, double x) noexcept nogil:
    # Q(a, x) for small x (DLMF 8.7.3), without the cancellation of 1 - P
    cdef double fac = 1.0, total = 0.0, term, logx
    cdef int n
    for n in range(1, 2000):
        fac *= -x / n
        term = fac / (a + n)
        total += term
        if fabs(term) <= _MACHEP * fabs(total):
            break
    logx = log(x)
    term = -expm1(a * logx - lgamma(1.0 + a))
    return term - exp(a * logx - lgamma(a)) * total


cdef double _igamc_cf(double a, double x) noexcept nogil:
    # Q(a, x) for x > a by Legendre's continued fraction (DLMF 8.9.2)
    cdef double ax = _igam_fac(a, x), y, z, c, yc, r, t, ans
    cdef double pk, pkm1, pkm2, qk, qkm1, qkm2
    cdef long _step
    if ax == 0.0:
        return 0.0
    y = 1.0 - a
    z = x + y + 1.0
    c = 0.0
    pkm2 = 1.0
    qkm2 = x
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    for _step in range(_max_iter(a)):
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        if qk != 0.0:
            r = pk / qk
            t = fabs((ans - r) / r)
            ans = r
        else:
            t = 1.0
        pkm2 = pkm1
        pkm1 = pk
        qkm2 = qkm1
        qkm1 = qk
        if fabs(pk) > 4.503599627370496e15:
            pkm2 *= 2.22044604925031308085e-16
            pkm1 *= 2.22044604925031308085e-16
            qkm2 *= 2.22044604925031308085e-16
            qkm1 *= 2.22044604925031308085e-16
        if t <= _MACHEP:
            break
    return ans * ax


cdef inline bint _near_transition(double a, double x) noexcept nogil:
    # where torch (and SciPy) switch to Temme's uniform asymptotic expansion;
    # here the series (x < a) or the continued fraction (x >= a), with enough
    # terms, give the same values
    cdef double r = fabs(x - a) / a
    return (20.0 < a < 200.0 and r < 0.3) or (a > 200.0 and r < 4.5 / sqrt(a))


cdef double _igammac(double a, double x) noexcept nogil:
    if isnan(a) or isnan(x) or x < 0.0 or a < 0.0:
        return NAN
    if a == 0.0:
        return 0.0 if x > 0.0 else NAN
    if x == 0.0:
        return 1.0
    if isinf(a):
        return NAN if isinf(x) else 1.0
    if isinf(x):
        return 0.0
    if _near_transition(a, x):
        return _igamc_cf(a, x) if x >= a else 1.0 - _igam_series(a, x)
    if x > 1.1:
        return 1.0 - _igam_series(a, x) if x < a else _igamc_cf(a, x)
    if x <= 0.5:
        return 1.0 - _igam_series(a, x) if -0.4 / log(x) < a else _igamc_series(a, x)
    return 1.0 - _igam_series(a, x) if x * 1.1 < a else _igamc_series(a, x)


cdef double _igamma(double a, double x) noexcept nogil:
    if isnan(a) or isnan(x) or x < 0.0 or a < 0.0:
        return NAN
    if a == 0.0:
        return 1.0 if x > 0.0 else NAN
    if x == 0.0:
        return 0.0
    if isinf(a):
        return NAN if isinf(x) else 0.0
    if isinf(x):
        return 1.0
    if _near_transition(a, x):
        return 1.0 - _igamc_cf(a, x) if x >= a else _igam_series(a, x)
    if x > 1.0 and x > a:
        return 1.0 - _igammac(a, x)
    return _igam_series(a, x)


# --- array kernels ----------------------------------------------------------------

cdef enum _Unary:
    _LGAMMA = 0
    _POLYGAMMA = 1
    _I0 = 2
    _I1 = 3


cdef object _float_input(object a, str name):
    # the array a special function computes on: integers and bools in the
    # default float dtype (as torch), complex refused (torch has no complex
    # kernels for these)
    return _arr(k_float(k_real(_arr(a), name)))


cdef inline bint _is_f32(object dt):
    # float32, float16, bfloat16: torch computes these in float
    return dt.itemsize <= 4


cdef object _unary_loop(object a, int which, long n):
    # which(x) element by element, in float64, then back to a's dtype
    dt = a.dtype
    x = np.asarray(a, dtype=np.float64, order="C")
    out = np.empty(x.shape, dtype=np.float64)
    cdef const double[::1] xv = x.reshape(-1)
    cdef double[::1] ov = out.reshape(-1)
    cdef bint f32 = _is_f32(dt)
    cdef Py_ssize_t i, m = xv.shape[0]
    with nogil:
        if which == _LGAMMA:
            for i in range(m):
                ov[i] = _lgamma(xv[i], f32)
        elif which == _POLYGAMMA:
            for i in range(m):
                ov[i] = _polygamma(n, xv[i], f32)
        elif which == _I0:
            for i in range(m):
                ov[i] = _i0(xv[i], f32)
        else:
            for i in range(m):
                ov[i] = _i1(xv[i], f32)
    return out.astype(dt, copy=False)


cdef object _cupy_special():
    import cupyx.scipy.special
    return cupyx.scipy.special


cdef inline object _device_dtype(object dt):
    # CuPy's special functions have float32 and float64 loops only
    return np.dtype(np.float32) if _is_f32(dt) else np.dtype(np.float64)


cpdef object k_lgamma(object a):
    a = _float_input(a, "lgamma")
    if _is_cupy(a):
        return _cupy_special().gammaln(a.astype(_device_dtype(a.dtype))).astype(a.dtype, copy=False)
    return _unary_loop(a, _LGAMMA, 0)


cpdef object k_digamma(object a):
    a = _float_input(a, "digamma")
    if _is_cupy(a):
        return _cupy_special().digamma(a.astype(_device_dtype(a.dtype))).astype(a.dtype, copy=False)
    return _unary_loop(a, _POLYGAMMA, 0)


cdef long _order_arg(object n, str fn) except? -1:
    n = _int_arg(n, "n", fn)
    if n < 0:
        raise RuntimeError(f"{fn}(n, x) does not support negative n (got n = {n}); n is the order of the "
                           "derivative of digamma: 0 for digamma itself, 1 for trigamma, ...")
    return n


cdef object _cupy_polygamma(long n, object a):
    sp = _cupy_special()
    ad = a.astype(_device_dtype(a.dtype))
    if n == 0:
        r = sp.digamma(ad)
    else:
        r = sp.polygamma(_xp(ad).full_like(ad, n), ad)
    return r.astype(a.dtype, copy=False)


cpdef object k_polygamma(object n, object a):
    cdef long order = _order_arg(n, "polygamma")
    if type(a) is not ndarray and not _is_cupy(a):
        # torch.polygamma(n, 2.0): its input must be a tensor
        raise TypeError(f"polygamma(): argument 'input' (position 2) must be Tensor, not {_type_name(a)}")
    a = _float_input(a, "polygamma")
    if _is_cupy(a):
        return _cupy_polygamma(order, a)
    return _unary_loop(a, _POLYGAMMA, order)


cpdef object k_i0(object a):
    a = _float_input(a, "i0")
    if _is_cupy(a):
        return _cupy_special().i0(a.astype(_device_dtype(a.dtype))).astype(a.dtype, copy=False)
    return _unary_loop(a, _I0, 0)


cpdef object k_i1(object a):
    a = _float_input(a, "i1")
    if _is_cupy(a):
        return _cupy_special().i1(a.astype(_device_dtype(a.dtype))).astype(a.dtype, copy=False)
    return _unary_loop(a, _I1, 0)


# --- mvlgamma: sum_j lgamma(x - j/2) + p(p-1)/4 log(pi), j < p ----------------------

cdef long _dimension_arg(object p) except? -1:
    p = _int_arg(p, "p", "mvlgamma")
    if p < 1:
        raise RuntimeError(f"mvlgamma(): p has to be greater than or equal to 1 (got p = {p}); p is the "
                           "dimension of the multivariate gamma function")
    return p


cdef object _shifted_sum(object a, long p, long n, bint lgam):
    # sum over j < p of lgamma (lgam) or polygamma(n) at x + b_j, with torch's
    # shifts b_j = -(p-1)/2, ..., -1/2, 0 in that order, in a's dtype (float
    # inputs are shifted in float, as torch's arange of them is)
    dt = a.dtype
    x = np.asarray(a, dtype=np.float64, order="C")
    out = np.empty(x.shape, dtype=np.float64)
    cdef const double[::1] xv = x.reshape(-1)
    cdef double[::1] ov = out.reshape(-1)
    cdef bint f32 = _is_f32(dt)
    cdef Py_ssize_t i, m = xv.shape[0]
    cdef long j
    cdef double s, b, xs
    with nogil:
        for i in range(m):
            s = 0.0
            for j in range(p):
                b = -0.5 * (p - 1 - j)
                xs = <float>(<float>xv[i] + <float>b) if f32 else xv[i] + b
                s += _lgamma(xs, f32) if lgam else _polygamma(n, xs, f32)
            ov[i] = s
    return out


cdef object _cupy_shifted_sum(object a, long p, long n, bint lgam):
    sp = _cupy_special()
    ad = a.astype(_device_dtype(a.dtype))
    total = None
    for j in range(p):
        xs = ad + (-0.5 * (p - 1 - j))
        term = sp.gammaln(xs) if lgam else _cupy_polygamma(n, xs)
        total = term if total is None else total + term
    return total


cpdef object k_mvlgamma(object a, object p):
    cdef long dim = _dimension_arg(p)
    a = _float_input(a, "mvlgamma")
    dt = a.dtype
    cdef double const = (<double>(dim * (dim - 1))) * log(_PI) * 0.25
    if _is_cupy(a):
        return (_cupy_shifted_sum(a, dim, 0, True) + const).astype(dt, copy=False)
    out = _shifted_sum(a, dim, 0, True)
    out += const
    return out.astype(dt, copy=False)


cpdef object k_multi_polygamma(object a, object n, object p):
    # sum_j polygamma(n, x + b_j): mvlgamma's derivative for n = 0, and its
    # own derivative one order up
    cdef long order = _order_arg(n, "polygamma")
    cdef long dim = _dimension_arg(p)
    a = _float_input(a, "mvlgamma")
    if _is_cupy(a):
        return _cupy_shifted_sum(a, dim, order, False).astype(a.dtype, copy=False)
    return _shifted_sum(a, dim, order, False).astype(a.dtype, copy=False)


# --- igamma / igammac ---------------------------------------------------------------

cdef object _float_like(object v, object other):
    # an integer or bool operand beside a float one: in the float one's dtype
    # (a Python int: a Python float, weak as in NumPy's promotion)
    if type(v) is int or type(v) is bool:
        return float(v)
    if hasattr(other, "dtype"):
        return v.astype(other.dtype)
    return v.astype(k_default_float())


cdef tuple _igamma_operands(object a, object x, str name):
    k_real(a, name)
    k_real(x, name)
    cdef bint ia = _kind_of(a) == 105, ix = _kind_of(x) == 105
    if ia and ix:
        raise DtypeNotImplementedError(
            f"\"{name}_cpu\" not implemented for integer or bool inputs (got {_dtype_str(a)} and "
            f"{_dtype_str(x)}), as in torch; convert one of them first, e.g. x.float()")
    if ia:
        a = _float_like(a, x)
    elif ix:
        x = _float_like(x, a)
    return a, x, np.result_type(a, x)


cdef object _binary_loop(object a, object x, object dt, bint upper):
    a64, x64 = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.empty(a64.shape, dtype=np.float64)
    cdef const double[::1] av = np.ascontiguousarray(a64).reshape(-1)
    cdef const double[::1] xv = np.ascontiguousarray(x64).reshape(-1)
    cdef double[::1] ov = out.reshape(-1)
    cdef Py_ssize_t i, m = av.shape[0]
    with nogil:
        if upper:
            for i in range(m):
                ov[i] = _igammac(av[i], xv[i])
        else:
            for i in range(m):
                ov[i] = _igamma(av[i], xv[i])
    return out.astype(dt, copy=False)


cdef object _igamma_kernel(object a, object x, bint upper):
    cdef str name = "igammac" if upper else "igamma"
    a, x, dt = _igamma_operands(a, x, name)
    if _is_cupy(a) or _is_cupy(x):
        sp = _cupy_special()
        dd = _device_dtype(dt)
        a = a.astype(dd) if _is_cupy(a) else dd.type(a)
        x = x.astype(dd) if _is_cupy(x) else dd.type(x)
        return (sp.gammaincc(a, x) if upper else sp.gammainc(a, x)).astype(dt, copy=False)
    return _binary_loop(a, x, dt, upper)


cpdef object k_igamma(object a, object x):
    return _igamma_kernel(a, x, False)


cpdef object k_igammac(object a, object x):
    return _igamma_kernel(a, x, True)


cpdef object k_not_implemented(object t, object what):
    # a derivative torch leaves unimplemented (igamma's for its input), for a
    # gradient or a tangent `t`: raise as torch does. A number is a structural
    # zero tangent (a JVP formula evaluated without one): it contributes 0.
    if type(t) is not ndarray and not _is_cupy(t) and t == 0:
        return np.zeros(())
    raise NotImplementedError(f"the derivative for '{what}' is not implemented (as in torch); detach that "
                              "argument to differentiate with respect to the others")
