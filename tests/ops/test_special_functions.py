"""torch's special functions (issue 41): lgamma, digamma, polygamma, mvlgamma,
i0, igamma and igammac, with their methods and in-place forms, against torch
2.13 and SciPy over wide grids (float64 and float32), their gradients (by
gradcheck and against torch's, first and second order), the poles, infinities
and NaNs torch gives, and the errors torch raises. (The registry's checks of
the same ops run from tests/ops/op_samples_special.py; the device branch is
tests/cuda/test_cuda_special_functions.py.)"""
import numpy as np
import pytest

import retrograd as rg
from retrograd.core import abi
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")
special = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(2024)
# negative non-integers, the region around the poles, large and tiny values
GRID = np.concatenate([RNG.uniform(-30.0, 30.0, 3000), RNG.uniform(0.0, 12.0, 1000),
                       10.0 ** RNG.uniform(-12.0, 15.0, 1000), -(10.0 ** RNG.uniform(-12.0, 2.5, 1000))])
GRID = GRID[np.abs(GRID - np.round(GRID)) > 1e-9]
POS = GRID[GRID > 0]
# poles, signed zeros, infinities, NaN, extremes
EDGES = np.array([0.0, -0.0, -1.0, -2.0, -7.0, 1.0, 2.0, 0.5, -0.5, -2.5, np.inf, -np.inf, np.nan,
                  1e308, -1e3 - 0.5, 1e-300, -1e-300, 5e-324, 171.5, 1e17, 1e18])
BESSEL = np.concatenate([RNG.uniform(-30.0, 30.0, 2000), RNG.uniform(-720.0, 720.0, 1000),
                         [0.0, -0.0, 8.0, -8.0, 1e-300, 709.0, 713.0, 714.0, np.inf, -np.inf, np.nan]])


def _t(a):
    return torch.from_numpy(np.asarray(a))


def _same(ours, ref, rtol, atol=0.0):
    """Values close, and NaN / inf exactly where the reference has them."""
    ours, ref = np.asarray(ours), np.asarray(ref)
    assert ours.shape == ref.shape and ours.dtype == ref.dtype, (ours.shape, ours.dtype, ref.shape, ref.dtype)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_array_equal(np.isposinf(ours), np.isposinf(ref))
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(ref))
    fin = np.isfinite(ref)
    np.testing.assert_allclose(ours[fin], ref[fin], rtol=rtol, atol=atol)


# --- values, float64 -----------------------------------------------------------------

@pytest.mark.parametrize("name,scipy_name", [("lgamma", "gammaln"), ("digamma", "digamma")])
def test_gamma_family_vs_torch_and_scipy(name, scipy_name):
    ours = values(getattr(rg, name)(rg.tensor(GRID)))
    # torch's lgamma and the C library's round differently in the last bit;
    # near the roots of lgamma (x ~ -2.457) and digamma (x ~ 1.4616) only
    # an absolute tolerance means something
    _same(ours, getattr(torch, name)(_t(GRID)).numpy(), rtol=1e-13, atol=1e-15)
    _same(ours, getattr(special, scipy_name)(GRID), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gamma_family_edges_are_torchs(name):
    # +inf at the poles of lgamma; digamma: -inf at +0, +inf at -0, nan at
    # the negative integers and -inf, the reflection formula elsewhere
    _same(values(getattr(rg, name)(rg.tensor(EDGES))), getattr(torch, name)(_t(EDGES)).numpy(), rtol=1e-14)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 6, 9])
def test_polygamma_vs_torch(n):
    x = GRID[GRID > -200.0]     # (the zeta series walks up from x one term at a time, as torch's)
    _same(values(rg.polygamma(n, rg.tensor(x))), torch.polygamma(n, _t(x)).numpy(), rtol=1e-13)
    e = EDGES[~(EDGES < -1e3)]
    _same(values(rg.polygamma(n, rg.tensor(e))), torch.polygamma(n, _t(e)).numpy(), rtol=1e-13)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_polygamma_vs_scipy(n):
    # torch's trigamma (n = 1) stops its asymptotic series early: within
    # 5e-10 of the exact value, and retrograd gives torch's; n >= 2 (the
    # Hurwitz zeta function) agrees with SciPy to the last bits
    rtol = 1e-9 if n == 1 else 1e-12
    _same(values(rg.polygamma(n, rg.tensor(POS))), special.polygamma(n, POS), rtol=rtol, atol=1e-300)


def test_polygamma_poles_are_torchs():
    # trigamma at the negative integers: torch's reflection uses sin(pi x),
    # which rounds to a tiny non-zero number there: huge but finite values
    x = np.array([-1.0, -2.0, -3.0, -10.0, 0.0, -0.0])
    for dt, tdt in ((np.float64, torch.float64), (np.float32, torch.float32)):
        for n in (1, 2, 3):
            ref = torch.polygamma(n, torch.tensor(x, dtype=tdt)).numpy()
            _same(values(rg.polygamma(n, rg.tensor(x.astype(dt)))), ref, rtol=1e-6 if dt == np.float32 else 1e-13)
    assert np.isfinite(values(rg.polygamma(1, rg.tensor([-1.0])))).all()


@pytest.mark.parametrize("name,scipy_fn", [("i0", special.i0), ("_i1", special.i1)])
def test_bessel_vs_torch_and_scipy(name, scipy_fn):
    ours = values(getattr(abi, name)(rg.tensor(BESSEL)))
    tfn = torch.i0 if name == "i0" else torch.special.i1
    _same(ours, tfn(_t(BESSEL)).numpy(), rtol=1e-14)
    fin = np.isfinite(BESSEL)
    _same(ours[fin], scipy_fn(BESSEL[fin]), rtol=1e-14)


def test_i0_edges():
    # even, 1 at 0, inf where exp overflows, nan at +-inf (torch's exp(x) / sqrt(x))
    out = values(rg.i0(rg.tensor([0.0, 3.0, -3.0, 720.0, np.inf, -np.inf])))
    assert out[0] == 1.0 and out[1] == out[2] and np.isinf(out[3]) and np.isnan(out[4:]).all()


def _igamma_grid():
    a = 10.0 ** RNG.uniform(-3.0, 3.0, 4000)
    x = a * 10.0 ** RNG.uniform(-2.0, 1.5, 4000)
    a = np.concatenate([a, 10.0 ** RNG.uniform(-3.0, 2.0, 2000)])
    x = np.concatenate([x, 10.0 ** RNG.uniform(-4.0, 3.0, 2000)])
    return a, x


def _temme_region(a, x):
    # where torch (and SciPy) switch to Temme's uniform expansion: torch's
    # port of it is off by up to ~2e-9 (it uses a float pi there)
    r = np.abs(x - a) / a
    return ((a > 20) & (a < 200) & (r < 0.3)) | ((a > 200) & (r < 4.5 / np.sqrt(a)))


@pytest.mark.parametrize("name,scipy_fn", [("igamma", special.gammainc), ("igammac", special.gammaincc)])
def test_incomplete_gamma_vs_torch_and_scipy(name, scipy_fn):
    a, x = _igamma_grid()
    ours = values(getattr(rg, name)(rg.tensor(a), rg.tensor(x)))
    ref = scipy_fn(a, x)
    big = ref > 1e-250          # (a tiny value carries the rounding of a*log(x) ~ 1e3 in its exponent)
    np.testing.assert_allclose(ours[big], ref[big], rtol=2e-12)
    np.testing.assert_allclose(ours[~big], ref[~big], rtol=1e-10, atol=1e-300)
    tref = getattr(torch, name)(_t(a), _t(x)).numpy()
    temme = _temme_region(a, x)
    assert temme.sum() > 50
    np.testing.assert_allclose(ours[~temme & big], tref[~temme & big], rtol=2e-12)
    np.testing.assert_allclose(ours[temme], tref[temme], rtol=5e-9)
    np.testing.assert_allclose(values(rg.igamma(rg.tensor(a), rg.tensor(x)))
                               + values(rg.igammac(rg.tensor(a), rg.tensor(x))), 1.0, rtol=1e-13)


def test_incomplete_gamma_edges_are_torchs():
    a = np.array([0.0, 1.0, 2.0, -1.0, np.inf, np.nan, 1.0, 0.0, 2.0, 3.0, 1.0, np.inf, 0.0, 1e-300, 5.0])
    x = np.array([1.0, 0.0, 2.0, 1.0, 1.0, 1.0, np.inf, 0.0, -1.0, np.nan, np.nan, np.inf, 0.0, 1.0, 1e-300])
    for name in ("igamma", "igammac"):
        _same(values(getattr(rg, name)(rg.tensor(a), rg.tensor(x))),
              getattr(torch, name)(_t(a), _t(x)).numpy(), rtol=1e-14)


@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_mvlgamma_vs_torch(p):
    x = RNG.uniform((p - 1) / 2 + 0.01, 40.0, 500)
    _same(values(rg.mvlgamma(rg.tensor(x), p)), torch.mvlgamma(_t(x), p).numpy(), rtol=1e-13, atol=1e-14)
    _same(values(rg.mvlgamma(rg.tensor(x), p)), np.array([special.multigammaln(v, p) for v in x]),
          rtol=1e-12, atol=1e-13)


def test_mvlgamma_below_its_domain_is_torchs():
    # torch 2.13 no longer refuses x <= (p - 1) / 2: the sum of lgamma values
    # (inf at their poles), not an error
    x = np.array([0.5, 0.9, -0.9, -2.5, 1.0, np.nan])
    for p in (2, 3, 4):
        _same(values(rg.mvlgamma(rg.tensor(x), p)), torch.mvlgamma(_t(x), p).numpy(), rtol=1e-13)


# --- float32 and dtypes ------------------------------------------------------------------

F32 = np.concatenate([RNG.uniform(-20.0, 20.0, 2000), 10.0 ** RNG.uniform(-6.0, 6.0, 500)]).astype(np.float32)
F32 = F32[np.abs(F32 - np.round(F32)) > 1e-3]


def _close32(ours, ref):
    assert ours.dtype == np.float32 and ref.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(ref))
    fin = np.isfinite(ref)
    # (torch computes in float: a few ulp, more where a value crosses zero)
    np.testing.assert_allclose(ours[fin], ref[fin], rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("call", [
    lambda m, x: m.lgamma(x), lambda m, x: m.digamma(x), lambda m, x: m.polygamma(1, x),
    lambda m, x: m.polygamma(3, x), lambda m, x: m.i0(x / 4), lambda m, x: m.mvlgamma(x.abs() + 2, 3),
    lambda m, x: m.igamma(x.abs(), x.abs() * 0.7 + 0.1), lambda m, x: m.igammac(x.abs(), x.abs() * 1.3),
], ids=["lgamma", "digamma", "trigamma", "polygamma3", "i0", "mvlgamma", "igamma", "igammac"])
def test_float32_vs_torch(call):
    _close32(values(call(rg, rg.tensor(F32))), call(torch, _t(F32)).numpy())


def test_float32_overflow_and_poles_as_torch():
    # torch's float kernels: exp overflows past 88.72 (i0(89) is inf, though it
    # would fit in float32), trigamma's sin(pi x) in float at the negative integers
    x = np.array([85.0, 88.5, 88.8, 89.0, 90.0, -89.0], dtype=np.float32)
    np.testing.assert_array_equal(np.isinf(values(rg.i0(rg.tensor(x)))), np.isinf(torch.i0(_t(x)).numpy()))
    np.testing.assert_array_equal(np.isinf(values(abi._i1(rg.tensor(x)))),
                                  np.isinf(torch.special.i1(_t(x)).numpy()))
    neg = np.array([-1.0, -3.0, -10000000.0], dtype=np.float32)
    _close32(values(rg.polygamma(1, rg.tensor(neg))), torch.polygamma(1, _t(neg)).numpy())


@pytest.mark.float32_default
@pytest.mark.parametrize("name", ["lgamma", "digamma", "i0"])
def test_integer_and_bool_inputs_compute_in_the_default_float(name):
    for a in (np.array([1, 2, 5]), np.array([True, False]), np.array([3], dtype=np.uint8)):
        ours = getattr(rg, name)(rg.tensor(a))
        ref = getattr(torch, name)(_t(a)).numpy()
        assert ours.dtype == ref.dtype == np.float32
        _same(values(ours), ref, rtol=1e-6)
    out = rg.polygamma(2, rg.tensor([1, 2]))
    assert out.dtype == np.float32 and rg.mvlgamma(rg.tensor([2, 3]), 2).dtype == np.float32


def test_float16_keeps_its_dtype():
    x = np.array([0.5, 1.5, 3.0], dtype=np.float16)
    for fn in (rg.lgamma, rg.digamma, rg.i0, lambda t: rg.polygamma(1, t)):
        out = fn(rg.tensor(x))
        assert out.dtype == np.float16
    np.testing.assert_allclose(values(rg.lgamma(rg.tensor(x))).astype(float),
                               torch.lgamma(_t(x)).numpy().astype(float), rtol=2e-3)


def test_igamma_dtype_promotion():
    f32 = rg.tensor(np.array([1.0, 2.0], dtype=np.float32))
    f64 = rg.tensor(np.array([1.0, 2.0]))
    ints = rg.tensor(np.array([1, 2]))
    assert rg.igamma(f32, f64).dtype == np.float64
    assert rg.igamma(ints, f32).dtype == np.float32
    assert torch.igamma(_t(np.array([1, 2])), _t(values(f32))).dtype == torch.float32
    assert rg.igamma(f32, ints).dtype == np.float32
    # a Python number beside a tensor does not widen it (torch takes tensors only)
    assert rg.igamma(f32, 2.0).dtype == np.float32
    np.testing.assert_allclose(values(rg.igammac(f64, 2.0)), special.gammaincc([1.0, 2.0], 2.0), rtol=1e-14)


def test_shapes_broadcast_and_empty():
    a = rg.tensor(RNG.uniform(0.5, 3.0, (3, 1)))
    x = rg.tensor(RNG.uniform(0.5, 3.0, (1, 4)))
    assert rg.igamma(a, x).shape == (3, 4)
    assert rg.lgamma(rg.tensor(2.0)).shape == () and rg.polygamma(2, rg.tensor(2.0)).shape == ()
    assert rg.i0(rg.zeros(0, 3)).shape == (0, 3) and rg.mvlgamma(rg.zeros(2, 0) + 3, 2).shape == (2, 0)
    with pytest.raises(RuntimeError):
        rg.igamma(rg.ones(3), rg.ones(4))


# --- gradients ------------------------------------------------------------------------

X = np.array([0.3, 1.7, 4.2, -1.6, -2.3])
CASES = {
    "lgamma": (lambda m, x: m.lgamma(x), X),
    "digamma": (lambda m, x: m.digamma(x), X),
    "polygamma0": (lambda m, x: m.polygamma(0, x), X),
    "polygamma1": (lambda m, x: m.polygamma(1, x), X),
    "polygamma3": (lambda m, x: m.polygamma(3, x), X),
    "method_polygamma2": (lambda m, x: x.polygamma(2), X),
    "mvlgamma": (lambda m, x: m.mvlgamma(x, 3), np.array([1.2, 2.5, 7.0])),
    "i0": (lambda m, x: m.i0(x), np.array([0.0, 0.4, -3.0, 9.5, -12.0])),
    "igamma_other": (lambda m, x: m.igamma(m.tensor([0.5, 1.0, 2.0, 3.5], dtype=m.float64), x),
                     np.array([0.3, 1.0, 2.5, 6.0])),
    "igammac_other": (lambda m, x: m.igammac(m.tensor([0.5, 1.0, 2.0, 3.5], dtype=m.float64), x),
                      np.array([0.3, 1.0, 2.5, 6.0])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradcheck(case):
    fn, x = CASES[case]
    t = rg.tensor(x, requires_grad=True)
    assert rg.autograd.gradcheck(lambda v: fn(rg, v), (t,))
    assert rg.autograd.gradgradcheck(lambda v: fn(rg, v), (t,))


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradients_match_torch(case):
    fn, x = CASES[case]
    v = RNG.standard_normal(x.shape)
    t = rg.tensor(x, requires_grad=True)
    tt = torch.tensor(x, requires_grad=True)
    g, = rg.autograd.grad(fn(rg, t), t, grad_outputs=rg.tensor(v), create_graph=True)
    tg, = torch.autograd.grad(fn(torch, tt), tt, grad_outputs=_t(v), create_graph=True)
    np.testing.assert_allclose(values(g), tg.detach().numpy(), rtol=1e-10, atol=1e-12)
    gg, = rg.autograd.grad((g * g).sum(), t)
    tgg, = torch.autograd.grad((tg * tg).sum(), tt)
    np.testing.assert_allclose(values(gg), tgg.numpy(), rtol=1e-9, atol=1e-12)


def test_i0_second_derivative_at_zero():
    # I1'(0) = 1/2: i0's second derivative where I1(x) / x would be 0 / 0
    t = rg.tensor([0.0, 1e-200, -3.0], requires_grad=True)
    g, = rg.autograd.grad(rg.i0(t).sum(), t, create_graph=True)
    gg, = rg.autograd.grad(g.sum(), t)
    tt = torch.tensor([0.0, 1e-200, -3.0], dtype=torch.float64, requires_grad=True)
    tg, = torch.autograd.grad(torch.i0(tt).sum(), tt, create_graph=True)
    tgg, = torch.autograd.grad(tg.sum(), tt)
    np.testing.assert_allclose(values(gg), tgg.numpy(), rtol=1e-12)
    assert values(gg)[0] == 0.5


def test_grad_fn_names_are_torchs():
    x = rg.tensor([1.5, 2.5], requires_grad=True)
    a = rg.tensor([1.0, 2.0])
    names = {"lgamma": rg.lgamma(x), "digamma": rg.digamma(x), "polygamma": rg.polygamma(2, x),
             "mvlgamma": rg.mvlgamma(x, 2), "i0": rg.i0(x), "igamma": rg.igamma(a, x), "igammac": rg.igammac(a, x)}
    want = {"lgamma": "LgammaBackward0", "digamma": "DigammaBackward0", "polygamma": "PolygammaBackward0",
            "mvlgamma": "MvlgammaBackward0", "i0": "I0Backward0", "igamma": "IgammaBackward0",
            "igammac": "IgammacBackward0"}
    for k, out in names.items():
        assert out.grad_fn.name() == want[k], k
    y = x * 1.0
    y.polygamma_(1)
    assert y.grad_fn.name() == "PolygammaBackward1"


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_no_derivative_for_the_parameter(name):
    a = rg.tensor([2.0, 3.0], requires_grad=True)
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    ta = torch.tensor([2.0, 3.0], dtype=torch.float64, requires_grad=True)
    tx = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match=f"the derivative for '{name}: input' is not implemented"):
        getattr(torch, name)(ta, tx).sum().backward()
    with pytest.raises(NotImplementedError, match=f"the derivative for '{name}: input' is not implemented"):
        getattr(rg, name)(a, x).sum().backward()
    # detached, the other argument's gradient is torch's
    getattr(rg, name)(a.detach(), x).sum().backward()
    getattr(torch, name)(ta.detach(), tx).sum().backward()
    np.testing.assert_allclose(values(x.grad), tx.grad.numpy(), rtol=1e-13)


def test_forward_ad():
    fwAD = pytest.importorskip("retrograd.forward_ad")
    x = np.array([0.7, 1.9, 3.3])
    tan = np.array([1.0, -0.5, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(rg.tensor(x), rg.tensor(tan))
        got = {"lgamma": rg.lgamma(d), "polygamma": rg.polygamma(2, d), "mvlgamma": rg.mvlgamma(d, 2),
               "i0": rg.i0(d), "igamma": rg.igamma(rg.tensor([1.0, 2.0, 4.0]), d)}
        got = {k: values(fwAD.unpack_dual(v).tangent) for k, v in got.items()}
        with pytest.raises(NotImplementedError, match="igamma: input"):
            rg.igamma(d, rg.tensor([1.0, 2.0, 4.0]))
    tfw = torch.autograd.forward_ad
    with tfw.dual_level():
        d = tfw.make_dual(_t(x), _t(tan))
        want = {"lgamma": torch.lgamma(d), "polygamma": torch.polygamma(2, d), "mvlgamma": torch.mvlgamma(d, 2),
                "i0": torch.i0(d)}
        want = {k: tfw.unpack_dual(v).tangent.numpy() for k, v in want.items()}
    for k, w in want.items():
        np.testing.assert_allclose(got[k], w, rtol=1e-12, err_msg=k)
    # torch has no forward AD for igamma: the reverse-mode gradient is the reference
    xr = rg.tensor(x, requires_grad=True)
    g, = rg.autograd.grad(rg.igamma(rg.tensor([1.0, 2.0, 4.0]), xr), xr, grad_outputs=rg.tensor(tan))
    np.testing.assert_allclose(got["igamma"], values(g), rtol=1e-13)


# --- methods and in-place forms -------------------------------------------------------------

def test_torch_names_exist():
    for name in ("lgamma", "digamma", "polygamma", "mvlgamma", "i0", "igamma", "igammac", "i0_"):
        assert hasattr(torch, name) and callable(getattr(rg, name)), name
    for name in ("lgamma", "digamma", "polygamma", "mvlgamma", "i0", "igamma", "igammac"):
        assert hasattr(torch.Tensor, name) and hasattr(rg.Tensor, name), name
        assert hasattr(torch.Tensor, name + "_") and hasattr(rg.Tensor, name + "_"), name
    for name in ("lgamma_", "digamma_", "polygamma_", "igamma_", "igammac_"):
        assert hasattr(torch, name) == hasattr(rg, name), name


METHOD_CASES = [
    ("lgamma", (), lambda m, x: m.lgamma(x)),
    ("digamma", (), lambda m, x: m.digamma(x)),
    ("polygamma", (2,), lambda m, x: m.polygamma(2, x)),
    ("mvlgamma", (2,), lambda m, x: m.mvlgamma(x, 2)),
    ("i0", (), lambda m, x: m.i0(x)),
    ("igamma", ("other",), lambda m, x: m.igamma(x, x * 0.5 + 1)),
    ("igammac", ("other",), lambda m, x: m.igammac(x, x * 0.5 + 1)),
]


@pytest.mark.parametrize("name,args,fn", METHOD_CASES, ids=[c[0] for c in METHOD_CASES])
def test_methods_and_inplace(name, args, fn):
    x = np.array([0.8, 1.6, 3.5])

    def call(m, t, suffix):
        real = [t * 0.5 + 1 if a == "other" else a for a in args]
        return getattr(t, name + suffix)(*real)
    want = values(fn(rg, rg.tensor(x)))
    np.testing.assert_array_equal(values(call(rg, rg.tensor(x), "")), want)
    t = rg.tensor(x)
    version = t._version
    out = call(rg, t, "_")
    assert out is t and t._version == version + 1
    np.testing.assert_array_equal(values(t), want)
    tt = _t(x.copy())
    call(torch, tt, "_")
    np.testing.assert_allclose(values(t), tt.numpy(), rtol=1e-12)
    if name in ("igamma", "igammac"):
        return                  # (no derivative for self: test_no_derivative_for_the_parameter)
    # through autograd: in place on a non-leaf, the gradient is the out-of-place one's
    leaf = rg.tensor(x, requires_grad=True)
    y = leaf * 1.0
    call(rg, y, "_")
    y.sum().backward()
    leaf2 = rg.tensor(x, requires_grad=True)
    fn(rg, leaf2).sum().backward()
    np.testing.assert_allclose(values(leaf.grad), values(leaf2.grad), rtol=1e-14)


def test_i0_inplace_function():
    t = rg.tensor([0.5, -2.0])
    assert rg.i0_(t) is t
    np.testing.assert_allclose(values(t), torch.i0_(torch.tensor([0.5, -2.0], dtype=torch.float64)).numpy())


def test_inplace_on_integer_tensor_is_refused_as_torch():
    for call in (lambda m, t: t.lgamma_(), lambda m, t: t.polygamma_(1), lambda m, t: t.i0_(),
                 lambda m, t: t.mvlgamma_(1)):
        with pytest.raises(RuntimeError):
            call(torch, torch.tensor([1, 2]))
        with pytest.raises(RuntimeError):
            call(rg, rg.tensor([1, 2]))


# --- errors ------------------------------------------------------------------------

def _both(fn, exc, match):
    with pytest.raises(exc):
        fn(torch)
    with pytest.raises(exc, match=match):
        fn(rg)


def test_polygamma_errors():
    x = np.array([1.0, 2.0])
    _both(lambda m: m.polygamma(-1, m.tensor(x)), RuntimeError, "does not support negative n")
    _both(lambda m: m.tensor(x).polygamma(-2), RuntimeError, "does not support negative n")
    _both(lambda m: m.polygamma(1.5, m.tensor(x)), TypeError, "argument 'n' must be int, not float")
    _both(lambda m: m.polygamma(True, m.tensor(x)), TypeError, "must be int, not bool")
    _both(lambda m: m.polygamma(1, 2.0), TypeError, "argument 'input' .* must be Tensor, not float")
    # a 0-d integer tensor is an int, as in torch
    np.testing.assert_allclose(values(rg.polygamma(rg.tensor(2), rg.tensor(x))),
                               torch.polygamma(torch.tensor(2), _t(x)).numpy(), rtol=1e-14)


def test_mvlgamma_errors():
    x = np.array([3.0, 4.0])
    _both(lambda m: m.mvlgamma(m.tensor(x), 0), RuntimeError, "p has to be greater than or equal to 1")
    _both(lambda m: m.tensor(x).mvlgamma(-3), RuntimeError, "p has to be greater than or equal to 1")
    _both(lambda m: m.mvlgamma(m.tensor(x), 1.5), TypeError, "argument 'p' must be int")
    _both(lambda m: m.mvlgamma([3.0, 4.0], 2), TypeError, "must be Tensor")


@pytest.mark.parametrize("call", [
    lambda m, z: m.lgamma(z), lambda m, z: m.digamma(z), lambda m, z: m.polygamma(2, z), lambda m, z: m.i0(z),
    lambda m, z: m.igamma(z, z), lambda m, z: m.igammac(m.ones(2, dtype=m.float32), z),
], ids=["lgamma", "digamma", "polygamma", "i0", "igamma", "igammac"])
def test_complex_inputs_are_refused(call):
    z = np.array([1 + 1j, 2 - 1j], dtype=np.complex64)
    _both(lambda m: call(m, m.tensor(z) if m is rg else torch.from_numpy(z)), NotImplementedError,
          "not implemented for complex")


def test_two_integer_inputs_are_refused():
    a = np.array([1, 2])
    _both(lambda m: m.igamma(m.tensor(a) if m is rg else _t(a), m.tensor(a) if m is rg else _t(a)),
          NotImplementedError, "igamma_cpu\" not implemented for integer")
    _both(lambda m: m.igammac(m.tensor(a) if m is rg else _t(a), m.tensor(a) if m is rg else _t(a)),
          NotImplementedError, "igammac_cpu\" not implemented for integer")


def test_igamma_first_argument_must_be_a_tensor():
    _both(lambda m: m.igamma(1.0, m.tensor([1.0])), TypeError, "must be Tensor")
