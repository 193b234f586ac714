"""Elementwise ops beyond the registry's float samples: integer and
float16 inputs, ties of maximum/minimum, the zero-derivative ops, clamp's
bounds, erf's accuracy, operators, and NumPy's ufunc protocol on tensors."""
import math

import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")

UNARY = ["exp2", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "square", "reciprocal", "abs",
         "sign", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf", "floor", "ceil", "round",
         "trunc", "gelu", "silu", "softplus"]
FUNCTIONAL = {"gelu", "silu", "softplus"}


def _torch_unary(name):
    return getattr(torch.nn.functional, name) if name in FUNCTIONAL else getattr(torch, name)


@pytest.mark.float32_default        # (torch's default dtype: what integer inputs compute in)
@pytest.mark.parametrize("name", UNARY)
def test_integer_inputs_work_without_grad(name):
    a = np.array([[1, 2, 3], [4, 5, 7]])
    if name in FUNCTIONAL:
        # torch's activations refuse integers, and so do retrograd's
        with pytest.raises(NotImplementedError):
            _torch_unary(name)(torch.from_numpy(a))
        with pytest.raises(NotImplementedError, match=name):
            getattr(rg, name)(rg.tensor(a))
        return
    with np.errstate(invalid="ignore"):              # asin(2) is nan, as in torch
        out = getattr(rg, name)(rg.tensor(a))
    assert not out.requires_grad and out.grad_fn is None
    ref = _torch_unary(name)(torch.from_numpy(a)).numpy()
    np.testing.assert_allclose(values(out), ref, rtol=1e-6, equal_nan=True)
    # torch's dtypes: integers stay integers where the op keeps them
    # (square, abs, sign, floor...), float ops compute in float32
    assert out.dtype == ref.dtype


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "maximum", "minimum", "atan2"])
def test_integer_binary(name):
    a = np.array([7, -7, 5, -5, 0])
    b = np.array([2, 2, -3, -3, 4])
    out = getattr(rg, name)(rg.tensor(a), rg.tensor(b))
    ref = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_allclose(values(out), ref, rtol=1e-6)
    assert not out.requires_grad


@pytest.mark.parametrize("name", UNARY + ["clamp"])
def test_float16(name):
    x = np.array([0.25, 0.5, 0.75], dtype=np.float16)
    f = (lambda t: rg.clamp(t, 0.3, 0.6)) if name == "clamp" else getattr(rg, name)
    t = rg.tensor(x, requires_grad=True)
    out = f(t)
    assert out.dtype == np.float16
    out.sum().backward()
    assert t.grad.dtype == np.float16
    ref = f(rg.tensor(x.astype(np.float64)))
    np.testing.assert_allclose(values(out, dtype=np.float64), values(ref), rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round", "trunc", "floor_divide"])
def test_zero_derivative_ops_require_grad_and_give_zero(name):
    x = rg.tensor([-1.5, 0.25, 2.7], requires_grad=True)
    out = rg.floor_divide(x, 0.5) if name == "floor_divide" else getattr(rg, name)(x)
    assert out.requires_grad and out.grad_fn is not None
    g, = rg.autograd.grad(out.sum(), x)
    np.testing.assert_array_equal(values(g), np.zeros(3))


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_ties_split_the_gradient_like_torch(name):
    a = np.array([1.0, 2.0, 3.0, -1.0])
    b = np.array([1.0, 0.5, 3.0, 2.0])
    x, y = rg.tensor(a, requires_grad=True), rg.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    v = np.array([1.0, 2.0, 3.0, 4.0])
    gx, gy = rg.autograd.grad(getattr(rg, name)(x, y), [x, y], grad_outputs=rg.tensor(v))
    tgx, tgy = torch.autograd.grad(getattr(torch, name)(tx, ty), [tx, ty], grad_outputs=torch.tensor(v))
    np.testing.assert_array_equal(values(gx), tgx.numpy())
    np.testing.assert_array_equal(values(gy), tgy.numpy())


def test_clamp_bounds_and_clip_alias():
    x = rg.tensor([-2.0, 0.0, 0.5, 3.0], requires_grad=True)
    lo = rg.tensor([-1.0, -1.0, 1.0, 1.0], requires_grad=True)
    y = rg.clip(x, lo, 2.0)
    assert y.grad_fn.name() == "ClampBackward0"
    y.backward(rg.tensor([1.0, 2.0, 3.0, 4.0]))
    tx = torch.tensor([-2.0, 0.0, 0.5, 3.0], requires_grad=True)
    tlo = torch.tensor([-1.0, -1.0, 1.0, 1.0], requires_grad=True)
    torch.clamp(tx, tlo, torch.tensor(2.0, dtype=torch.float64)).backward(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(values(x.grad), tx.grad.numpy())
    np.testing.assert_array_equal(values(lo.grad), tlo.grad.numpy())
    np.testing.assert_array_equal(values(x.clip(max=0.1)), [-2.0, 0.0, 0.1, 0.1])
    with pytest.raises(RuntimeError, match="min"):
        rg.clamp(x)
    # the gradient passes where min <= x <= max, ends included (torch)
    z = rg.tensor([0.0, 1.0, 2.0], requires_grad=True)
    g, = rg.autograd.grad(rg.clamp(z, 0.0, 2.0).sum(), z)
    np.testing.assert_array_equal(values(g), [1.0, 1.0, 1.0])


def test_erf_accuracy_and_special_values():
    x = np.concatenate([np.linspace(-7, 7, 20001), [0.0, -0.0, 1e-300, 3.0, -3.0, 6.0, np.inf, -np.inf]])
    got = values(rg.erf(rg.tensor(x)))
    want = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(got, want, rtol=4e-15, atol=2e-15)
    assert np.isnan(values(rg.erf(rg.tensor([np.nan])))).all()
    assert rg.erf(rg.tensor(np.float32(0.5))).dtype == np.float32


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate"):
        rg.gelu(rg.tensor([1.0]), approximate="fast")


def test_floor_semantics_and_operators():
    a = np.array([7.5, -7.5, 5.0, -5.0])
    b = np.array([2.0, 2.0, -3.0, -3.0])
    x = rg.tensor(a, requires_grad=True)
    np.testing.assert_array_equal(values(x // 2.0), np.floor_divide(a, 2.0))
    np.testing.assert_array_equal(values(x % rg.tensor(b)), np.remainder(a, b))
    np.testing.assert_array_equal(values(10.0 // x), np.floor_divide(10.0, a))
    np.testing.assert_array_equal(values(10.0 % x), np.remainder(10.0, a))
    np.testing.assert_array_equal(values(b % x), np.remainder(b, a))
    np.testing.assert_array_equal(values(abs(x)), np.abs(a))
    assert abs(x).grad_fn.name() == "AbsBackward0"
    assert (10.0 % x).grad_fn.name() == "RemainderBackward0"
    np.testing.assert_array_equal(values(rg.tensor(a).__abs__()), np.abs(a))
    g, = rg.autograd.grad((3.0 % x).sum(), x)           # d/dy (c mod y) = -floor(c / y)
    np.testing.assert_array_equal(values(g), -np.floor_divide(3.0, a))


def test_lerp_and_true_divide_methods():
    a, b = rg.tensor([1.0, 2.0]), rg.tensor([3.0, 6.0])
    np.testing.assert_allclose(values(a.lerp(b, 0.25)), [1.5, 3.0])
    np.testing.assert_allclose(values(a.lerp(b, rg.tensor([0.0, 1.0]))), [1.0, 6.0])
    np.testing.assert_allclose(values(a.true_divide(b)), [1 / 3, 1 / 3])


# --- NumPy's ufunc protocol ------------------------------------------------------

UFUNCS = [
    (np.exp, "ExpBackward0"), (np.sqrt, "SqrtBackward0"), (np.log1p, "Log1PBackward0"),
    (np.abs, "AbsBackward0"), (np.negative, "NegBackward0"), (np.tanh, "TanhBackward0"),
    (np.arctan, "AtanBackward0"), (np.square, "SquareBackward0"), (np.floor, "FloorBackward0"),
]


@pytest.mark.parametrize("uf,node", UFUNCS, ids=[u.__name__ for u, _ in UFUNCS])
def test_unary_ufuncs_record_the_graph(uf, node):
    a = np.array([0.5, 1.5, 2.5])
    x = rg.tensor(a, requires_grad=True)
    y = uf(x)
    assert isinstance(y, rg.Tensor) and y.grad_fn.name() == node
    np.testing.assert_allclose(values(y), uf(a))
    y.sum().backward()
    assert x.grad is not None


@pytest.mark.parametrize("uf", [np.add, np.subtract, np.multiply, np.divide, np.power, np.maximum,
                                np.minimum, np.arctan2, np.floor_divide, np.remainder],
                         ids=lambda u: u.__name__)
def test_binary_ufuncs_either_side(uf):
    a = np.array([0.5, 1.5, 2.5])
    b = np.array([2.0, 1.0, 0.75])
    x = rg.tensor(b, requires_grad=True)
    for y, ref in [(uf(a, x), uf(a, b)), (uf(x, a), uf(b, a)), (uf(x, 2.0), uf(b, 2.0)),
                   (uf(np.float32(1.5), x), uf(np.float32(1.5), b))]:
        assert isinstance(y, rg.Tensor) and y.requires_grad
        np.testing.assert_allclose(values(y), ref, rtol=1e-15)
        assert y.dtype == ref.dtype


def test_ufunc_gradient_matches_op():
    a = np.array([0.5, 1.5, 2.5])
    x = rg.tensor(a, requires_grad=True)
    g1, = rg.autograd.grad(np.maximum(np.exp(x) * 2, 3.0).sum(), x)
    g2, = rg.autograd.grad(rg.maximum(rg.exp(x) * 2, 3.0).sum(), x)
    np.testing.assert_array_equal(values(g1), values(g2))


@pytest.mark.parametrize("call", [
    lambda x: np.add.reduce(x),
    lambda x: np.add.accumulate(x),
    lambda x: np.multiply.outer(x, x),
    lambda x: np.add.at(x, [0], 1.0),
    lambda x: np.exp(x, out=np.empty(3)),
    lambda x: np.exp(x, dtype=np.float32),
    lambda x: np.cbrt(x),
    lambda x: np.hypot(x, x),
], ids=["reduce", "accumulate", "outer", "at", "out", "dtype", "cbrt", "hypot"])
def test_ufuncs_without_counterpart_refuse_to_drop_the_graph(call):
    x = rg.tensor([0.5, 1.5, 2.5], requires_grad=True)
    with pytest.raises(TypeError, match="numpy\\.[a-z]+"):
        call(x)


def test_ufuncs_without_counterpart_raise_even_without_graph():
    # no silent fallback, whether or not a tensor requires grad
    a = np.array([0.5, 1.5, 2.5])
    x = rg.tensor(a)
    with pytest.raises(TypeError, match=r"numpy\.add\.reduce.*np\.asarray\(t\)"):
        np.add.reduce(x)
    with pytest.raises(TypeError, match=r"numpy\.cbrt has no retrograd counterpart"):
        np.cbrt(x)
    with rg.no_grad():
        y = rg.tensor(a, requires_grad=True)
        with pytest.raises(TypeError, match=r"numpy\.hypot"):
            np.hypot(y, y)
    np.testing.assert_allclose(np.cbrt(values(x)), np.cbrt(a))


def test_ufuncs_without_graph_compute_on_arrays():
    a = np.array([0.5, 1.5, 2.5])
    x = rg.tensor(a)
    assert np.isnan(x).dtype == np.bool_
    assert np.logical_and(np.isfinite(x), np.signbit(x)).dtype == np.bool_
    out = rg.zeros(3)
    v0 = out._version
    assert np.exp(x, out=out) is out and out._version == v0 + 1
    np.testing.assert_allclose(values(out), np.exp(a))
    # NumPy's meaning: integer reciprocal is integer division
    np.testing.assert_array_equal(values(np.reciprocal(rg.tensor(np.array([1, 2])))), [1, 0])


def test_array_still_gives_the_plain_array():
    a = np.array([0.5, 1.5])
    x = rg.from_numpy(a)
    assert values(x) is a
    assert type(np.array(x)) is np.ndarray


def test_bool_results_never_drop_a_graph():
    x = rg.tensor([0.5, np.nan], requires_grad=True)
    m = np.isnan(x)
    assert isinstance(m, rg.Tensor) and m.dtype == np.bool_ and not m.requires_grad
    np.testing.assert_array_equal(values(m), [False, True])
    assert np.less(x, 1.0).dtype == np.bool_
