"""The one-pass C loops of _elementwise_loops.pyx (maximum/minimum backward,
softplus, sigmoid and silu forward and backward) give what their ufunc formulas give, bit for
bit where the formula's ufuncs are the loop's libm calls, and what PyTorch
gives; inputs the loops do not take (views, broadcasting, mixed dtypes,
non-Python beta) still go through the ufunc formulas."""
import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")

DTYPES = [np.float32, np.float64]


def _specials(dtype):
    # ties (finite and infinite), NaNs, signed zeros, infinities, both orders
    a = np.array([1.0, 2.0, 3.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 5.0, np.nan, np.inf, -2.5, 7.0],
                 dtype=dtype)
    b = np.array([1.0, 3.0, 2.0, -0.0, 0.0, np.inf, 0.0, 1.0, np.nan, np.nan, 4.0, -2.5, -7.0],
                 dtype=dtype)
    return a, b


def _max_min_reference(g, a, b, is_max):
    # torch's formula with NumPy: ties split, strict losers get 0
    lose = (a < b) if is_max else (a > b)
    return np.where(a == b, g / 2, np.where(lose, 0, g)).astype(g.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_max_min_backward_both_inputs_ties_nans_infs(dtype, op):
    a0, b0 = _specials(dtype)
    g0 = np.linspace(-3, 3, a0.size).astype(dtype)
    a, b = rg.tensor(a0, requires_grad=True), rg.tensor(b0, requires_grad=True)
    ga, gb = rg.autograd.grad(getattr(rg, op)(a, b), [a, b], rg.tensor(g0))
    is_max = op == "maximum"
    for got, ref in ((ga, _max_min_reference(g0, a0, b0, is_max)),
                     (gb, _max_min_reference(g0, b0, a0, is_max))):
        got = values(got)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, ref)
    at, bt = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    ta, tb = torch.autograd.grad(getattr(torch, op)(at, bt), [at, bt], torch.tensor(g0))
    np.testing.assert_array_equal(values(ga), ta.numpy())
    np.testing.assert_array_equal(values(gb), tb.numpy())


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_max_min_backward_non_finite_grad_is_masked_not_multiplied(op):
    # a loser gets exactly 0 even from an inf/nan gradient (torch's masked_fill)
    a0 = np.array([1.0, 3.0, 1.0, 3.0])
    b0 = np.array([2.0, 2.0, 2.0, 2.0])
    g0 = np.array([np.inf, np.inf, np.nan, np.nan])
    a = rg.tensor(a0, requires_grad=True)
    (ga,) = rg.autograd.grad(getattr(rg, op)(a, rg.tensor(b0)), [a], rg.tensor(g0))
    at = torch.tensor(a0, requires_grad=True)
    (ta,) = torch.autograd.grad(getattr(torch, op)(at, torch.tensor(b0)), [at], torch.tensor(g0))
    np.testing.assert_array_equal(values(ga), ta.numpy())


@pytest.mark.parametrize("case", ["broadcast", "view", "mixed_dtype", "scalar_other"])
def test_max_min_backward_inputs_the_loop_does_not_take(case):
    rng = np.random.default_rng(0)
    a0 = np.round(rng.standard_normal((4, 6)), 1)
    b0 = np.round(rng.standard_normal((4, 6)), 1)
    b0[0, :3] = a0[0, :3]                           # ties
    if case == "broadcast":
        b0 = b0[:1]
    a_in = rg.tensor(a0, requires_grad=True)
    a_used = a_in[:, ::2] if case == "view" else a_in
    b_used = b0[:, ::2] if case == "view" else b0
    if case == "mixed_dtype":
        b_used = b_used.astype(np.float32)
    b_rg = 0.3 if case == "scalar_other" else rg.tensor(b_used)
    out = rg.maximum(a_used, b_rg)
    g0 = rng.standard_normal(np.shape(out))
    (ga,) = rg.autograd.grad(out, [a_in], rg.tensor(g0))
    at = torch.tensor(a0, requires_grad=True)
    at_used = at[:, ::2] if case == "view" else at
    bt = torch.tensor(0.3, dtype=torch.float64) if case == "scalar_other" else torch.tensor(b_used)
    (ta,) = torch.autograd.grad(torch.maximum(at_used, bt), [at], torch.tensor(g0))
    np.testing.assert_array_equal(values(ga), ta.numpy())


def _softplus_inputs(dtype):
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(40) * 30, [0.0, -0.0, 19.9, 20.0, 20.1, -20.0, 1e-9,
                                                        -1e-9, 800.0, -800.0, np.inf, -np.inf, np.nan]])
    return x.astype(dtype)


def _softplus_ufunc(x, beta, threshold):
    # k_softplus's ufunc formula
    xb = x if beta == 1 else x * beta
    y = np.logaddexp(0, xb)
    if beta != 1:
        y = y / beta
    return np.where(xb > threshold, x, y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("beta,threshold", [(1, 20), (1.0, 20.0), (2.5, 10), (0.5, 3.7), (3, 20.2999990)])
def test_softplus_forward_is_the_ufunc_formula_bit_for_bit(dtype, beta, threshold):
    x = _softplus_inputs(dtype)
    with np.errstate(all="ignore"):
        ref = _softplus_ufunc(x, beta, threshold)
    got = values(rg.nn.functional.softplus(rg.tensor(x), beta=beta, threshold=threshold))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, ref)


def test_softplus_threshold_compares_in_the_input_dtype():
    # NumPy casts a Python threshold to float32 for a float32 input (NEP 50):
    # 2.0 is above 1.99999999 but not above float32(1.99999999) == 2.0, so
    # the log branch is taken
    x = np.array([2.0], dtype=np.float32)
    got = values(rg.nn.functional.softplus(rg.tensor(x), threshold=1.99999999))
    np.testing.assert_array_equal(got, np.logaddexp(np.float32(0), x))
    assert got[0] != x[0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("beta,threshold", [(1, 20), (2.5, 10), (0.5, 3.7)])
def test_softplus_forward_and_backward_match_torch(dtype, beta, threshold):
    x0 = _softplus_inputs(dtype)[:-3]               # finite inputs
    g0 = np.linspace(-2, 2, x0.size).astype(dtype)
    x = rg.tensor(x0, requires_grad=True)
    y = rg.nn.functional.softplus(x, beta=beta, threshold=threshold)
    (gx,) = rg.autograd.grad(y, [x], rg.tensor(g0))
    xt = torch.tensor(x0, requires_grad=True)
    yt = torch.nn.functional.softplus(xt, beta=beta, threshold=threshold)
    (tx,) = torch.autograd.grad(yt, [xt], torch.tensor(g0))
    rtol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(values(y), yt.detach().numpy(), rtol=rtol, atol=0)
    np.testing.assert_allclose(values(gx), tx.numpy(), rtol=rtol, atol=rtol * 1e-3)
    assert values(gx).dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_softplus_backward_is_the_ufunc_formula(dtype):
    # grad where x*beta > threshold, else -(grad * expm1(-(y*beta))); NumPy's
    # expm1 may be a SIMD routine (within 1 ulp of libm's), so ulp-close
    x0 = _softplus_inputs(dtype)
    beta, threshold = 2.0, 15.0
    g0 = np.linspace(-2, 2, x0.size).astype(dtype)
    x = rg.tensor(x0, requires_grad=True)
    y = rg.nn.functional.softplus(x, beta=beta, threshold=threshold)
    (gx,) = rg.autograd.grad(y, [x], rg.tensor(g0))
    y0 = values(y)
    with np.errstate(all="ignore"):
        ref = np.where(x0 * beta > threshold, g0, -(g0 * np.expm1(-(y0 * beta))))
    np.testing.assert_array_max_ulp(values(gx), ref.astype(dtype), maxulp=1)
    assert np.array_equal(np.isnan(values(gx)), np.isnan(ref))


@pytest.mark.parametrize("case", ["view", "beta_tensorlike", "negative_beta", "int_input"])
def test_softplus_inputs_the_loop_does_not_take(case):
    x0 = np.linspace(-5, 25, 24).reshape(4, 6)
    beta = -1.5 if case == "negative_beta" else 1
    if case == "beta_tensorlike":
        beta = np.float64(2.0)
    x = rg.tensor(x0, requires_grad=True)
    xu = x[:, ::2] if case == "view" else x
    if case == "int_input":
        # torch defines softplus for floating-point tensors only, and so does retrograd
        with pytest.raises(NotImplementedError):
            torch.nn.functional.softplus(torch.arange(-3, 30))
        with pytest.raises(NotImplementedError, match="softplus"):
            rg.nn.functional.softplus(rg.tensor(np.arange(-3, 30)))
        return
    y = rg.nn.functional.softplus(xu, beta=beta)
    g0 = np.linspace(-1, 1, np.size(values(y))).reshape(np.shape(y))
    (gx,) = rg.autograd.grad(y, [x], rg.tensor(g0))
    xt = torch.tensor(x0, requires_grad=True)
    xtu = xt[:, ::2] if case == "view" else xt
    yt = torch.nn.functional.softplus(xtu, beta=float(beta))
    (tx,) = torch.autograd.grad(yt, [xt], torch.tensor(g0))
    np.testing.assert_allclose(values(y), yt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(values(gx), tx.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("with_zero", [False, True])
def test_pow_tensor_exponent_gradient_with_and_without_zero_exponents(with_zero):
    # the where for zero exponents is skipped when there is none
    a0 = np.array([0.0, 0.5, 2.0, 3.0, 0.0, 1.5])
    p0 = np.array([0.7, 1.0, -1.3, 2.0, 1.5, 0.0 if with_zero else 0.25])
    if with_zero:
        p0[0] = 0.0
    a = rg.tensor(a0, requires_grad=True)
    (ga,) = rg.autograd.grad(rg.pow(a, rg.tensor(p0)), [a], rg.tensor(np.ones(6)))
    at = torch.tensor(a0, requires_grad=True)
    (ta,) = torch.autograd.grad(torch.pow(at, torch.tensor(p0)), [at], torch.ones(6, dtype=torch.float64))
    np.testing.assert_allclose(values(ga), ta.numpy(), rtol=1e-14)
    assert values(ga).dtype == np.float64


def _sigmoid_inputs(dtype):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(40) * 8, [0.0, -0.0, 1e-9, -1e-9, 30.0, -30.0, 800.0,
                                                       -800.0, np.inf, -np.inf, np.nan]])
    return x.astype(dtype)


def _sigmoid_ufunc(x):
    # k_sigmoid's ufunc formula
    e = np.exp(np.negative(np.abs(x)))
    r = np.divide(1, 1 + e)
    np.multiply(r, e, out=r, where=np.less(x, 0))
    return r


@pytest.mark.parametrize("dtype", DTYPES)
def test_sigmoid_and_silu_forward_are_the_ufunc_formula_bit_for_bit(dtype):
    x = _sigmoid_inputs(dtype)
    with np.errstate(all="ignore"):
        s = _sigmoid_ufunc(x)
        silu = x * s
    got = values(rg.sigmoid(rg.tensor(x)))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, s)
    got = values(rg.nn.functional.silu(rg.tensor(x)))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, silu)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sigmoid_and_silu_backward_are_the_ufunc_formula_bit_for_bit(dtype):
    x0 = _sigmoid_inputs(dtype)
    g0 = np.linspace(-2, 2, x0.size).astype(dtype)
    x = rg.tensor(x0, requires_grad=True)
    y = rg.sigmoid(x)
    (gx,) = rg.autograd.grad(y, [x], rg.tensor(g0))
    y0 = values(y)
    with np.errstate(all="ignore"):
        ref = g0 * (y0 * (1 - y0))
    assert values(gx).dtype == dtype
    np.testing.assert_array_equal(values(gx), ref)
    (gx,) = rg.autograd.grad(rg.nn.functional.silu(x), [x], rg.tensor(g0))
    with np.errstate(all="ignore"):
        s = _sigmoid_ufunc(x0)
        ref = g0 * (s * (1 + x0 * (1 - s)))
    assert values(gx).dtype == dtype
    np.testing.assert_array_equal(values(gx), ref)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sigmoid", "silu"])
def test_sigmoid_and_silu_match_torch(dtype, op):
    x0 = _sigmoid_inputs(dtype)[:-1]               # no NaN
    g0 = np.linspace(-2, 2, x0.size).astype(dtype)
    f = rg.sigmoid if op == "sigmoid" else rg.nn.functional.silu
    tf = torch.sigmoid if op == "sigmoid" else torch.nn.functional.silu
    x = rg.tensor(x0, requires_grad=True)
    y = f(x)
    (gx,) = rg.autograd.grad(y, [x], rg.tensor(g0))
    xt = torch.tensor(x0, requires_grad=True)
    yt = tf(xt)
    (tx,) = torch.autograd.grad(yt, [xt], torch.tensor(g0))
    rtol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(values(y), yt.detach().numpy(), rtol=rtol, atol=1e-30)
    # y * (1 - y) loses a few float32 bits where y is near 1 (torch rounds
    # its own way there)
    np.testing.assert_allclose(values(gx), tx.numpy(), rtol=10 * rtol, atol=1e-30)


@pytest.mark.parametrize("case", ["view", "broadcast_grad", "float16", "zero_d", "create_graph"])
@pytest.mark.parametrize("op", ["sigmoid", "silu"])
def test_sigmoid_and_silu_inputs_the_loop_does_not_take(case, op):
    dtype = np.float16 if case == "float16" else np.float64
    x0 = np.linspace(-6, 6, 24).reshape(4, 6).astype(dtype)
    if case == "zero_d":
        x0 = np.array(-0.75, dtype=dtype)
    f = rg.sigmoid if op == "sigmoid" else rg.nn.functional.silu
    tf = torch.sigmoid if op == "sigmoid" else torch.nn.functional.silu
    x = rg.tensor(x0, requires_grad=True)
    xu = x[:, ::2] if case == "view" else x
    y = f(xu)
    shape = np.shape(values(y))
    g0 = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape).astype(dtype)
    if case == "broadcast_grad":
        y = y * rg.tensor(np.ones((2, 1, 1), dtype=dtype))       # grad of y is summed, (2,4,6)->(4,6)
        g0 = np.linspace(-1, 1, 48).reshape(2, 4, 6)
    (gx,) = rg.autograd.grad(y, [x], rg.tensor(g0), create_graph=case == "create_graph")
    xt = torch.tensor(x0, requires_grad=True)
    xtu = xt[:, ::2] if case == "view" else xt
    yt = tf(xtu)
    if case == "broadcast_grad":
        yt = yt * torch.ones((2, 1, 1), dtype=xt.dtype)
    (tx,) = torch.autograd.grad(yt, [xt], torch.tensor(g0), create_graph=case == "create_graph")
    tol = 2e-3 if dtype == np.float16 else 1e-12
    np.testing.assert_allclose(values(gx), tx.detach().numpy(), rtol=tol, atol=tol)
    if case == "create_graph":
        (ggx,) = rg.autograd.grad(gx.sum(), [x])
        (tgx,) = torch.autograd.grad(tx.sum(), [xt])
        np.testing.assert_allclose(values(ggx), tgx.numpy(), rtol=1e-12, atol=1e-12)
