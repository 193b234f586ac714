"""Float64 sin, cos, tanh, exp, log, expm1 and log1p for the fused loops
(_fusion.py): numba functions that LLVM inlines into the loop.

Why: ``math.sin`` and friends compile to calls into the C library's libm,
one opaque scalar call per element. LLVM can at best repeat the call per
lane in a vectorised loop (this llvmlite has no vector math library), and
the loop spills its registers around every call. These are straight-line
float and integer arithmetic (range reduction, a minimax polynomial, the
rebuild) with selects rather than branches, so the loop that inlines them
can be vectorised: exp and tanh then run 1.6 to 3.4 times faster than libm's.
In a loop LLVM leaves scalar, glibc's latency-tuned exp, sin and cos are
faster than these (tanh still wins).

sin and cos call libm for |x| > 2**23 (a rarely taken branch): any call
keeps LLVM from vectorising the loop, so for now they only pay off where it
would not vectorise anyway. An inline Payne-Hanek reduction would lift it.

Accuracy: each is within 1 ulp of the exact result (so within 2 ulp of
NumPy's), and exact on the special values (±0, ±inf, nan, subnormals,
overflow and underflow); tests/compile/test_vecmath.py checks it, with and
without FMA (the polynomials use llvm.fmuladd).

The polynomial coefficients are minimax (Remez) fits made with mpmath at 60
digits on each reduced interval, weighted for the error of the final
result; each says its fit's error. The methods are the textbook ones (Cody
and Waite's reduction, Estrin's scheme, the atanh series of fdlibm's log),
written from the mathematics.
"""
from __future__ import annotations

import math

import llvmlite.binding as llvm_binding
import numba
from llvmlite import ir
from numba import _helperlib, types
from numba.core import cgutils
from numba.extending import intrinsic

# forceinline: LLVM's alwaysinline. Each function is compiled once and
# inlined where called; numba's own inline="always" re-types the body at
# every call site (a 100-call chain: 84 s to compile, against 3 s).
_opts = dict(forceinline=True, nogil=True, error_model="numpy")


# -- bit-level helpers, emitted as single LLVM instructions -----------------

@intrinsic
def _bits(typingctx, x):
    """The int64 holding float64 x's bits."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _float(typingctx, i):
    """The float64 whose bits are int64 i."""
    if i != types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _mla(typingctx, a, b, c):
    """a*b + c, fused into one FMA where the CPU has it (llvm.fmuladd): only
    in polynomials and corrections, whose accuracy holds either way."""
    if (a, b, c) != (types.float64,) * 3:
        return None

    def codegen(context, builder, sig, args):
        d = ir.DoubleType()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(d, [d, d, d]), "llvm.fmuladd.f64")
        return builder.call(fn, args)
    return types.float64(types.float64, types.float64, types.float64), codegen


def _libm_call(name):
    # float64 -> float64 C library function `name`, called under a name of
    # ours. Called as `sin` (or as numba's math.sin, the llvm.sin intrinsic)
    # it is known to LLVM, which then calls it for every lane of a
    # vectorised loop (it may be speculated) instead of only where needed.
    alias = f"retrograd_vecmath_{name}"
    if llvm_binding.address_of_symbol(alias) is None:
        # the C runtime's function, as numba itself binds it
        llvm_binding.add_symbol(alias, _helperlib.c_helpers[name])

    @intrinsic
    def call(typingctx, x):
        if x != types.float64:
            return None

        def codegen(context, builder, sig, args):
            d = ir.DoubleType()
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(d, [d]), alias)
            for a in ("readnone", "nounwind"):
                fn.attributes.add(a)
            return builder.call(fn, args)
        return types.float64(types.float64), codegen
    return call


_libm_sin = _libm_call("sin")
_libm_cos = _libm_call("cos")


# Adding 1.5 * 2**52 rounds a float of magnitude below 2**51 to an integer,
# which then sits in the low bits of the sum's mantissa: rint without a
# float-to-int conversion (no poison on nan or inf).
_SHIFT = 6755399441055744.0
_SHIFT_BITS = 0x4338000000000000
_TINY = 2.0 ** -27        # below it, sin x, tanh x round to x (x**3/3 < x ulp/2)


@numba.njit(**_opts)
def _two_sum_err(a, b, s):
    # s = fl(a + b): the exact a + b - s (Knuth's TwoSum, any magnitudes)
    bb = s - a
    return (a - (s - bb)) + (b - bb)


# -- sin, cos ----------------------------------------------------------------
# x = k pi/2 + r, |r| <= pi/4, with pi/2 = P1 + P2 + P3 + P4 (P1..P3 of 30
# significant bits, so k*Pi is exact for |k| < 2**23; P4 rounded). The
# reduction keeps r as hi + lo to about 2**-120 absolute; the nearest a
# double comes to a multiple of pi/2 is about 2**-61, so r is right to
# 2**-59 relative even there. Past |x| = 2**23 (k would need more bits) the
# C library's sin and cos take over (Payne-Hanek).
_TWO_OVER_PI = 0.6366197723675814
_P1 = 1.5707963276654482          # 0x1.921fb548p+0
_P2 = -8.705515692000731e-10      # -0x1.de973dc8p-31
_P3 = -3.503434396954818e-19      # -0x1.9d9cceb8p-62
_P4 = -1.1351118607522202e-28     # -0x1.1fc8f8cbb5bf7p-93
_TRIG_MAX = 8388608.0             # 2**23

# sin r = r + r**3 S(r**2) on |r| <= pi/4: fit error 2**-57.9 of sin r
_S0 = -0.1666666666666663
_S1 = 0.008333333333322118
_S2 = -0.0001984126982958945
_S3 = 2.7557313621353552e-06
_S4 = -2.5050747757655648e-08
_S5 = 1.5896229847023903e-10
# cos r = 1 - r**2/2 + r**4 C(r**2) on |r| <= pi/4: fit error 2**-64 of cos r
_C0 = 0.041666666666666595
_C1 = -0.0013888888888873056
_C2 = 2.4801587288851606e-05
_C3 = -2.755731417926722e-07
_C4 = 2.087570083786101e-09
_C5 = -1.1358536303415497e-11


@numba.njit(**_opts)
def _sincos(x, quadrant):
    # sin x for quadrant 0, cos x (= sin(x + pi/2)) for 1; |x| <= 2**23.
    # Latency first (a fused chain waits on each result): the reduced
    # argument r is left unnormalised, r + lo, and the error terms are
    # computed beside the main path, which is a few FMAs long.
    t = _mla(x, _TWO_OVER_PI, _SHIFT)
    k = t - _SHIFT
    q = _bits(t) + quadrant                  # its low 2 bits: k + quadrant mod 4
    a = _mla(-k, _P1, x)                     # exact (k*P1 exact, a fits 53 bits)
    b = k * _P2                              # exact
    h = _mla(-k, _P2, a)                     # = fl(a - b)
    c = k * _P3                              # exact
    r = _mla(-k, _P3, h)                     # = fl(h - c)
    # r + lo = x - k pi/2 to 2**-120 (|lo| about r's ulp at most). The
    # rounding errors of h and r by Fast2Sum: exact where |a| >= |b| (and
    # |h| >= |c|), and elsewhere because a, h are multiples of 2**-60 and
    # b, c below 2**-7: a - h and h - r then need no rounding either.
    lo = ((h - r) - c) + (((a - h) - b) - k * _P4)
    z = r * r
    # Estrin's scheme: shorter dependency chains than Horner's rule
    z2 = z * z
    ps = _mla(_mla(_mla(_S5, z, _S4), z2, _mla(_S3, z, _S2)), z2, _mla(_S1, z, _S0))
    pc = _mla(_mla(_mla(_C5, z, _C4), z2, _mla(_C3, z, _C2)), z2, _mla(_C1, z, _C0))
    hz = 0.5 * z
    # sin(r + lo) = sin r + lo cos r, cos r ~ 1 - z/2 here
    s = r + _mla(r * z, ps, _mla(-lo, hz, lo))
    # cos(r + lo) = cos r - lo sin r; 1 - hz's rounding error is added back
    w = 1.0 - hz
    co = w + (((1.0 - w) - hz) + _mla(z2, pc, -r * lo))
    v = co if q & 1 else s
    return -v if q & 2 else v


@numba.njit(**_opts)
def sin_near(x):
    """sin x for |x| <= 2**23, as :func:`sin` there, without its call into
    the C library (a loop of it vectorises); :func:`far` tells the rest."""
    v = _sincos(x, 0)
    return x if abs(x) < _TINY else v


@numba.njit(**_opts)
def cos_near(x):
    """cos x for |x| <= 2**23, as :func:`cos` there, without the call."""
    return _sincos(x, 1)


@numba.njit(**_opts)
def far(x):
    """Whether x is beyond sin_near's and cos_near's reach (|x| > 2**23,
    inf or nan)."""
    return not abs(x) <= _TRIG_MAX


@numba.njit(**_opts)
def sin(x):
    """sin x: Cody-Waite reduction by pi/2 in four parts, minimax polynomials
    for sin and cos on [-pi/4, pi/4], the quadrant chosen by selects. Within
    1 ulp for |x| <= 2**23; beyond (and for inf, nan) the C library's sin.
    sin(-0.0) is -0.0."""
    if not abs(x) <= _TRIG_MAX:              # rare: libm's own reduction
        return _libm_sin(x)
    v = _sincos(x, 0)
    return x if abs(x) < _TINY else v        # keeps -0.0 and subnormals


@numba.njit(**_opts)
def cos(x):
    """cos x: as sin (the same kernel, one quadrant on). Within 1 ulp for
    |x| <= 2**23; beyond (and for inf, nan) the C library's cos."""
    if not abs(x) <= _TRIG_MAX:
        return _libm_cos(x)
    return _sincos(x, 1)


# -- exp ---------------------------------------------------------------------
# x = k ln2 + r, |r| <= ln2/2, with ln2 = LN2_HI + LN2_LO (LN2_HI of 42
# bits: k*LN2_HI exact for |k| < 2**11); exp x = 2**k exp(r), 2**k set in
# the exponent field.
_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471805598903      # 0x1.62e42fefa38p-1
_LN2_LO = 5.497923018708371e-14
_EXP_HI = 710.0                   # exp(710) overflows
_EXP_LO = -746.0                  # exp(-746) underflows to 0
_HIGH26 = -(1 << 27)              # the sign, exponent and 26 leading bits
_TINY_EXPM1 = 2.0 ** -54
# expm1 r = r + r**2/2 + r**3 E(r) on |r| <= ln2/2: fit error 2**-61.7 of
# expm1 r (exp's error comes from its last rounding; expm1's cancellation
# where k = 1 magnifies the fit's error, hence the extra degree)
_E1 = 0.16666666666666677
_E2 = 0.04166666666666651
_E3 = 0.0083333333333217
_E4 = 0.0013888888888962305
_E5 = 0.0001984126988593966
_E6 = 2.4801587172629236e-05
_E7 = 2.7557244403556194e-06
_E8 = 2.755740259744598e-07
_E9 = 2.5108967711395734e-08
_E10 = 2.0875334073305523e-09


@numba.njit(**_opts)
def _exp_reduce(x):
    # x -> (r, lo, k): x = k ln2 + r + lo, |r| <= ln2/2
    t = _mla(x, _LOG2E, _SHIFT)
    k = t - _SHIFT
    hi = _mla(-k, _LN2_HI, x)                # exact
    r = _mla(-k, _LN2_LO, hi)
    return r, (hi - r) - k * _LN2_LO, _bits(t) - _SHIFT_BITS   # r + lo to 2**-97


@numba.njit(**_opts)
def _exp_m(x):
    # x -> (m, mlo, a, b, k): exp x = 2**k (m + mlo) = 2**k (a + b),
    # m = fl(a + b), a = fl(1 + r)
    r, lo, k = _exp_reduce(x)
    r2 = r * r
    r4 = r2 * r2
    # Q(r) = 1/2 + r E(r), Estrin's scheme to the end (the latency matters
    # more here than in expm1: Q's rounding weighs r**2/2 < 0.061 of exp r)
    q = _mla(_mla(_mla(_E10, r2, _mla(_E9, r, _E8)), r4,
                  _mla(_mla(_E7, r, _E6), r2, _mla(_E5, r, _E4))), r4,
             _mla(_mla(_E3, r, _E2), r2, _mla(_E1, r, 0.5)))
    a = 1.0 + r
    # the small terms first: 1 + r's rounding error, lo exp r, r**2 Q
    b = _mla(r2, q, _mla(lo, r, lo) + ((1.0 - a) + r))
    m = a + b
    return m, (a - m) + b, a, b, k


@numba.njit(**_opts)
def exp(x):
    """exp x: reduction by ln2 (two parts), a minimax polynomial on
    [-ln2/2, ln2/2], 2**k set in the exponent bits. Within 1 ulp; overflows
    to inf past 709.78 and underflows through the subnormals to 0 as NumPy
    does; exp(nan) is nan."""
    _, _, a, b, k = _exp_m(x)
    # 2**k = 2**kc 2**adj, kc a normal exponent; 2**adj (k = 1024 just below
    # overflow, k < -1022 for subnormal results) joins the last addition,
    # so the one multiplication by 2**kc makes the one rounding.
    kc = 1023 if k > 1023 else k
    kc = -1022 if kc < -1022 else kc
    adj = _float((k - kc + 1023) << 52)
    v = _mla(b, adj, a * adj) * _float((kc + 1023) << 52)
    # |x| past the thresholds (inf too) last, as selects: the reduction
    # above is garbage there, but nan passes (its compares are false)
    v = math.inf if x > _EXP_HI else v
    return 0.0 if x < _EXP_LO else v


@numba.njit(**_opts)
def expm1(x):
    """exp x - 1: the reduction of exp, then 2**k - 1 + 2**k expm1(r), summed
    exactly but for one rounding at the end (no cancellation near 0 or for
    k = 1). Within 1 ulp; expm1(-0.0) is -0.0, inf past 709.78, -1 below
    -38."""
    xc = _EXP_HI if x > _EXP_HI else x
    xc = -40.0 if xc < -40.0 else xc         # expm1 is -1 to the last bit there
    r, lo, k = _exp_reduce(xc)
    r2 = r * r
    r4 = r2 * r2
    e = _mla(_mla(_mla(_E10, r, _E9), r2, _mla(_E8, r, _E7)), r4,
             _mla(_mla(_E6, r, _E5), r2, _mla(_E4, r, _E3)))
    e = _mla(e, r2, _mla(_E2, r, _E1))
    # expm1(r + lo) = r + r**2/2 + p: the polynomial's roundings weigh |r|**3
    p = _mla(r2 * r, e, _mla(lo, r, lo))
    # expm1 x = 2**k - 1 + 2**k (r + r**2/2 + ...): the three leading terms
    # summed exactly, r**2/2 too (r = rh + rl, rh of 26 bits), so that the
    # cancellation where k = 1 and r < 0 magnifies no rounding error.
    # In halves, h = 2**(k-1): 2**1024 (k = 1024 just below overflow) fits.
    h = _float((k + 1022) << 52)
    a = h - 0.5
    ae = (h - a) - 0.5                       # 0 but where k > 53
    b = h * r                                # exact
    s = a + b
    e = _two_sum_err(a, b, s) + ae
    rh = _float(_bits(r) & _HIGH26)
    c = (0.5 * h) * (rh * rh)                # exact
    s2 = s + c
    e += _two_sum_err(s, c, s2)
    p = _mla(0.5 * (r - rh), r + rh, p)      # + r**2/2 - rh**2/2
    v = (s2 + _mla(h, p, e)) * 2.0
    # expm1 x rounds to x below 2**-54 (and the halves above underflow for
    # subnormal x); -0.0 stays -0.0
    return x if abs(x) < _TINY_EXPM1 else v


# -- tanh --------------------------------------------------------------------
# tanh x = x + x**3 T(x**2) on |x| < 0.625: fit error 2**-56.4 of tanh x
_TANH_SMALL = 0.625
_T0 = -0.33333333333332854
_T1 = 0.13333333333262087
_T2 = -0.053968253931265815
_T3 = 0.021869487576059794
_T4 = -0.008863221002249176
_T5 = 0.003591989171168991
_T6 = -0.001454958866053467
_T7 = 0.0005863165054326314
_T8 = -0.00022856414724377571
_T9 = 7.714430018938743e-05
_T10 = -1.6072539671997965e-05


@numba.njit(**_opts)
def tanh(x):
    """tanh x: an odd minimax polynomial for |x| < 0.625; above, 1 - 2/(E + 1)
    with E = exp(2|x|) carried as hi + lo and the roundings of E + 1 and of
    1 - q fed back, so that only the division's rounding is left. The two
    are picked by a select. Within 1 ulp; tanh(x) = x for tiny x (sign of
    zero kept), ±1 for |x| > 19.1, nan for nan."""
    ax = abs(x)
    z = x * x
    z2 = z * z
    z4 = z2 * z2
    p = _mla(_mla(_mla(_mla(_T10, z, _T9), z2, _mla(_T8, z, _T7)), z4,
                  _mla(_mla(_T6, z, _T5), z2, _mla(_T4, z, _T3))), z2 * z,
             _mla(_mla(_T2, z, _T1), z, _T0))
    small = _mla(x * z, p, x)
    # |tanh x| rounds to 1 past 19.1; the clamp keeps 2**k in one factor
    m, mlo, _, _, k = _exp_m(40.0 if ax > 20.0 else 2.0 * ax)
    scale = _float((k + 1023) << 52)
    e = m * scale
    d = e + 1.0                              # E >= 1: Fast2Sum
    de = ((e - d) + 1.0) + mlo * scale       # E + 1 = d + de
    q = 2.0 / d                              # 2/(d + de) = q - q**2 de/2
    w = 1.0 - q                              # q <= 0.45 here: Fast2Sum
    big = w + (((1.0 - w) - q) + 0.5 * q * q * de)
    v = small if ax < _TANH_SMALL else math.copysign(big, x)
    return x if ax < _TINY else v


# -- log, log1p --------------------------------------------------------------
# x = 2**k m, m in [sqrt(1/2), sqrt 2), f = m - 1, s = f/(2 + f):
# log m = 2 atanh s = 2s + s z L(z), z = s**2, and (fdlibm's arrangement)
# log(1 + f) = f - f**2/2 + s (f**2/2 + z L(z)), in which the rounding of s
# is multiplied by a small number.
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD
_MIN_NORMAL = 2.2250738585072014e-308
# L(z) on z <= 0.0295 (|s| <= 3 - 2 sqrt 2): fit error 2**-58.5 of log m
_L0 = 0.6666666666666734
_L1 = 0.39999999999414676
_L2 = 0.2857142874238834
_L3 = 0.22222198573102045
_L4 = 0.18183564330825977
_L5 = 0.1531405042181915
_L6 = 0.14795951096589904


@numba.njit(**_opts)
def _log1pf(f, kf, c):
    # k ln2 + log(1 + f) + c, c a small correction (|c| < 2**-52 |f|)
    s = f / (2.0 + f)
    z = s * s
    z2 = z * z
    R = z * _mla(_mla(_mla(_L6, z, _L5), z2, _mla(_L4, z, _L3)), z2 * z, _mla(_mla(_L2, z, _L1), z, _L0))
    hfsq = 0.5 * f * f
    return kf * _LN2_HI + (f - (hfsq - _mla(s, hfsq + R, _mla(kf, _LN2_LO, c))))


@numba.njit(**_opts)
def _split(x):
    # x > 0 normal -> (m - 1, k): x = 2**k m, m in [sqrt(1/2), sqrt 2)
    ix = _bits(x)
    k = (ix - _SQRT_HALF_BITS) >> 52
    return _float(ix - (k << 52)) - 1.0, k


@numba.njit(**_opts)
def _to_float(k):
    # int64 (|k| < 2**51) -> float64, without cvtsi2sd (no vector form on AVX2)
    return _float(k + _SHIFT_BITS) - _SHIFT


@numba.njit(**_opts)
def log(x):
    """log x: x = 2**k m, then the atanh series of m (minimax polynomial in
    s**2). Within 1 ulp; subnormals are scaled up first; log 0 = -inf,
    log of a negative is nan, log inf = inf."""
    sub = x < _MIN_NORMAL
    f, k = _split(x * 18014398509481984.0 if sub else x)    # 2**54
    v = _log1pf(f, _to_float(k - 54 if sub else k), 0.0)
    v = x if not x < math.inf else v         # inf, nan
    v = -math.inf if x == 0.0 else v
    return math.nan if x < 0.0 else v


@numba.njit(**_opts)
def log1p(x):
    """log(1 + x): as log of u = fl(1 + x), plus the rounding error of u
    (divided by u: first order). Within 1 ulp; log1p(-0.0) is -0.0, -1 gives
    -inf, below it nan."""
    u = 1.0 + x
    c = _two_sum_err(1.0, x, u)              # 1 + x = u + c exactly
    f, k = _split(u if u >= _MIN_NORMAL else 1.0)
    # log(u + c) = log u + c/u, c/u = c 2**-k/(1 + f) to second order in f
    # (c is 0 unless u > 1, and the term is below 2**-53 of the result)
    # (2**-k capped: past u = 2**1000 the term is far below the result's ulp)
    cs = c * _float((1023 - (1000 if k > 1000 else k)) << 52) * _mla(f, f, 1.0 - f)
    # where k = 0, f = x itself: exact, no correction
    f = x if k == 0 else f
    cs = 0.0 if k == 0 else cs
    v = _log1pf(f, _to_float(k), cs)
    v = x if not x < math.inf else v         # inf, nan
    v = x if x == 0.0 else v
    v = -math.inf if x == -1.0 else v
    return math.nan if x < -1.0 else v
