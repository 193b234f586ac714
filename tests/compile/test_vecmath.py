"""The fused loops' own sin, cos, tanh, exp, log, expm1 and log1p
(retrograd/compile/_vecmath.py) against NumPy: within 2 ulp everywhere, the
same on the special values (skipped without numba)."""
import functools

import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="needs numba (pip install 'retrograd-compile[numba]')")

from retrograd.compile import _vecmath as vm  # noqa: E402

NAMES = ("sin", "cos", "tanh", "exp", "log", "expm1", "log1p")
MAX_ULP = 2

# pi/2 * 2**300, rounded down (mpmath): nearest doubles to k pi/2, exactly
_PIO2_FIXED = 0x1921fb54442d18469898cc51701b839a252049c1114cf98e804177d4c76273644a29410f31c6
_FIXED_BITS = 300
# The k < 2**23 * 2/pi whose nearest double is nearest to k pi/2 (an
# exhaustive search over k, with the integer arithmetic of _near_pio2): the
# hardest arguments for the reduction, |x - k pi/2| from 2**-60.5 up.
_HARDEST_K = (29, 58, 116, 232, 464, 928, 1856, 204551, 1081409, 1, 3712, 409102, 2162818, 2,
              29327, 7424, 818204, 14479, 3, 4325636, 4880635, 58285, 263205, 33, 25)


@functools.lru_cache(maxsize=None)
def _loop(name):
    f = getattr(vm, name)

    @numba.njit(error_model="numpy")
    def run(x, out):
        for i in range(x.size):
            out[i] = f(x[i])
    return run


def _ours(name, x):
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty_like(x)
    _loop(name)(x, out)
    return out


def _numpy(name, x):
    with np.errstate(all="ignore"):
        return getattr(np, name)(np.asarray(x, dtype=np.float64))


def _ulps(got, ref):
    """|got - ref| in units of ref's spacing: 0 where both are the same
    (infs of one sign, nans), inf where only one is inf or nan."""
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    with np.errstate(all="ignore"):
        err = np.abs(got - ref) / np.spacing(np.abs(ref))
    err[same] = 0.0
    err[~np.isfinite(err)] = np.inf
    return err


def _assert_close(name, x):
    got, ref = _ours(name, x), _numpy(name, x)
    err = _ulps(got, ref)
    i = int(np.argmax(err))
    assert err[i] <= MAX_ULP, f"{name}({x[i]!r}) = {got[i]!r}, numpy: {ref[i]!r} ({err[i]} ulp)"
    return err.max()


def _random_floats(rng, n, emin, emax):
    # random mantissas and signs, exponents uniform in [emin, emax]
    mant = rng.integers(0, 1 << 52, n, dtype=np.uint64)
    expo = rng.integers(emin + 1023, emax + 1024, n).astype(np.uint64)
    sign = rng.integers(0, 2, n).astype(np.uint64)
    return ((sign << np.uint64(63)) | (expo << np.uint64(52)) | mant).view(np.float64)


def _near_pio2(ks):
    """The double nearest k pi/2 for each k > 0, and its two neighbours."""
    out = []
    for k in ks:
        v = int(k) * _PIO2_FIXED
        e = v.bit_length() - 1 - _FIXED_BITS          # k pi/2 in [2**e, 2**(e+1))
        sh = _FIXED_BITS + e - 52
        x = float((v + (1 << (sh - 1))) >> sh) * 2.0 ** (e - 52)
        out += [np.nextafter(x, 0.0), x, np.nextafter(x, np.inf)]
    return np.array(out)


# (a) dense sweeps of the ordinary ranges
SWEEPS = {
    "sin": [np.linspace(-20, 20, 400_001), np.linspace(-1e4, 1e4, 200_001)],
    "cos": [np.linspace(-20, 20, 400_001), np.linspace(-1e4, 1e4, 200_001)],
    "tanh": [np.linspace(-2, 2, 200_001), np.linspace(-25, 25, 200_001)],
    "exp": [np.linspace(-2, 2, 200_001), np.linspace(-746, 710, 400_001)],
    "log": [np.linspace(1e-3, 4, 400_001), np.geomspace(1e-320, 1e308, 200_001)],
    "expm1": [np.linspace(-2, 2, 400_001), np.linspace(-50, 710, 200_001),
              np.geomspace(1e-20, 1, 10_001) * np.repeat([1, -1], [5_001, 5_000])],
    "log1p": [np.linspace(-0.999, 4, 400_001), np.geomspace(1e-20, 1e300, 200_001),
              -np.geomspace(1e-20, 0.999999, 20_001)],
}

# (b) random bit patterns: exponents over the ranges that reach the
# polynomials, then over all finite doubles
EXPONENTS = {"sin": (-40, 25), "cos": (-40, 25), "tanh": (-40, 6), "exp": (-60, 10),
             "log": (-1074 + 52, 1023), "expm1": (-60, 10), "log1p": (-60, 10)}

# (c) special values: exactly NumPy's (value, sign of zero, nan)
_EDGE = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
         -2.2250738585072014e-308, 1e-310, 1.7976931348622732e308, -1.7976931348622732e308, 1.0, -1.0]
SPECIALS = {
    "sin": _EDGE + [2.0 ** -27, -(2.0 ** -27), 1e300, -1e300],
    "cos": _EDGE + [2.0 ** -27, 1e300],
    "tanh": _EDGE + [2.0 ** -27, 19.061547465398498, 20.0, 40.0, 1e300, -1e300],
    "exp": _EDGE + [709.782712893384, np.nextafter(709.782712893384, np.inf), 709.0,
                    -745.1332191019411, -745.1332191019412, -708.3964185322641, 710.0, -746.0, 1e300, -1e300],
    "log": _EDGE + [-1e-300, np.nextafter(1.0, 0.0), np.nextafter(1.0, 2.0)],
    "expm1": _EDGE + [709.782712893384, np.nextafter(709.782712893384, np.inf), -40.0, -38.0, 1e300, -1e300],
    "log1p": _EDGE + [-1.0 + 2.0 ** -53, np.nextafter(-1.0, -2.0), -2.0, 1e300],
}

# (d) around the thresholds of each method (and, for sin and cos, near the
# multiples of pi/2)
THRESHOLDS = {
    "sin": [2.0 ** 23, -(2.0 ** 23), 2.0 ** -27, np.pi / 4, 3 * np.pi / 4],
    "cos": [2.0 ** 23, -(2.0 ** 23), 2.0 ** -27, np.pi / 4, 3 * np.pi / 4],
    "tanh": [0.625, -0.625, 2.0 ** -27, 19.06, 20.0],
    "exp": [709.782712893384, -708.3964185322641, -745.1332191019412, np.log(2) / 2, 0.0],
    "log": [np.sqrt(0.5), np.sqrt(2.0), 1.0, 2.2250738585072014e-308],
    "expm1": [np.log(2) / 2, -np.log(2) / 2, 1.5 * np.log(2), 709.782712893384, -40.0, 2.0 ** -54],
    "log1p": [np.sqrt(0.5) - 1, np.sqrt(2.0) - 1, -0.5, 1.0, 2.0 ** -54],
}


@pytest.mark.parametrize("name", NAMES)
def test_dense_sweeps(name):
    _assert_close(name, np.concatenate(SWEEPS[name]))


@pytest.mark.parametrize("name", NAMES)
def test_random_bit_patterns(name):
    rng = np.random.default_rng(NAMES.index(name))
    emin, emax = EXPONENTS[name]
    x = _random_floats(rng, 200_000, emin, emax)
    if name == "log":
        x = np.abs(x)
    elif name == "log1p":
        x = x[x > -1.0]
    _assert_close(name, x)
    every = rng.integers(0, 2 ** 63, 200_000, dtype=np.int64).view(np.float64)
    _assert_close(name, np.concatenate([every, -every])[np.isfinite(np.concatenate([every, -every]))])


@pytest.mark.parametrize("name", NAMES)
def test_special_values(name):
    x = np.array(SPECIALS[name], dtype=np.float64)
    got, ref = _ours(name, x), _numpy(name, x)
    for xi, g, r in zip(x, got, ref):
        if np.isnan(r):
            assert np.isnan(g), f"{name}({xi!r}) = {g!r}, numpy: nan"
        else:
            assert g == r and np.signbit(g) == np.signbit(r), f"{name}({xi!r}) = {g!r}, numpy: {r!r}"


@pytest.mark.parametrize("name", NAMES)
def test_near_thresholds(name):
    t = np.array(THRESHOLDS[name])
    steps = np.arange(-64, 65)
    x = [t]
    for v in t:                         # the doubles a few ulp either side
        x.append(v + steps * np.spacing(v) if v else steps * 5e-324)
    x = np.concatenate(x)
    if name in ("sin", "cos"):
        rng = np.random.default_rng(7)
        ks = list(_HARDEST_K) + list(range(1, 2000)) + list(rng.integers(2000, 5_340_353, 2000))
        near = _near_pio2(ks)
        x = np.concatenate([x, near, -near])
    elif name == "log":
        x = np.abs(x)
    _assert_close(name, x)


def test_hardest_reductions_are_within_one_ulp():
    # the closest approaches of doubles to multiples of pi/2 below 2**23:
    # the result is about x - k pi/2 itself, all of whose bits come from
    # the reduction's 2**-120
    x = _near_pio2(_HARDEST_K)
    for name in ("sin", "cos"):
        assert _ulps(_ours(name, x), _numpy(name, x)).max() <= 1


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_near_forms_are_the_full_ones_within_reach_and_far_tells_the_rest(name):
    rng = np.random.default_rng(7)
    x = np.r_[rng.uniform(-2.0 ** 23, 2.0 ** 23, 5000), rng.uniform(-4, 4, 5000), 0.0, -0.0,
              2.0 ** 23, -(2.0 ** 23), 5e-324]
    np.testing.assert_array_equal(_ours(name + "_near", x), _ours(name, x))
    outside = np.array([np.nextafter(2.0 ** 23, np.inf), -1e300, np.inf, -np.inf, np.nan])
    assert not _ours("far", x).any()
    assert _ours("far", outside).all()
