"""Complex inputs never lose their imaginary part silently: every op either
computes torch's complex result or, where torch does not define the op for
complex tensors, raises torch's exception class (NotImplementedError or
RuntimeError, each also a TypeError) naming the op and the dtype. NumPy
alone orders complex numbers lexicographically (max, relu, clamp,
comparisons), takes |z| (sigmoid's stable form), or casts to float (erf)."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

Z = np.array([1 + 2j, -0.5 + 0.25j, 0.3 - 1j, -2 - 0.1j, 0.0 + 0j, 3.0 - 0j])


def _lib_call(lib, name, args, kwargs):
    mod, fmod = (torch, TF) if lib == "torch" else (rg, F)
    fn = getattr(mod, name, None) or getattr(fmod, name)
    conv = (lambda a: torch.tensor(a.copy())) if lib == "torch" else rg.tensor
    args = [conv(a) if isinstance(a, np.ndarray) else a for a in args]
    out = fn(*args, **kwargs)
    return out[0] if isinstance(out, tuple) else out


# ops torch computes for complex input, with their complex values
COMPUTED = [
    ("exp", (Z,), {}), ("log", (Z,), {}), ("sin", (Z,), {}), ("cos", (Z,), {}), ("tanh", (Z,), {}),
    ("sigmoid", (Z,), {}), ("silu", (Z,), {}), ("sqrt", (Z,), {}), ("rsqrt", (Z[:4],), {}),
    ("reciprocal", (Z[:4],), {}), ("tan", (Z,), {}), ("asin", (Z,), {}), ("acos", (Z,), {}),
    ("atan", (Z,), {}), ("sinh", (Z,), {}), ("cosh", (Z,), {}), ("log2", (Z[:4],), {}),
    ("log10", (Z[:4],), {}), ("log1p", (Z,), {}), ("expm1", (Z,), {}), ("square", (Z,), {}),
    ("neg", (Z,), {}), ("abs", (Z,), {}), ("add", (Z, Z[::-1]), {}), ("mul", (Z, Z[::-1]), {}),
    ("div", (Z, Z[::-1] + 1), {}), ("pow", (Z, 2.0), {}), ("sum", (Z,), {}), ("mean", (Z,), {}),
    ("prod", (Z,), {}), ("cumsum", (Z, 0), {}), ("cumprod", (Z, 0), {}), ("norm", (Z,), {}),
    ("norm", (Z,), {"p": 1}), ("eq", (Z, Z[::-1]), {}), ("where", (Z.real > 0, Z, Z[::-1]), {}),
    ("dot", (Z, Z[::-1]), {}), ("outer", (Z[:3], Z[3:]), {}), ("matmul", (Z[:4].reshape(2, 2), Z[2:].reshape(2, 2)), {}),
    ("var", (Z,), {}), ("std", (Z,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", COMPUTED, ids=[c[0] + str(i) for i, c in enumerate(COMPUTED)])
def test_complex_results_match_torch(name, args, kwargs):
    ref = _lib_call("torch", name, args, kwargs)
    got = _lib_call("rg", name, args, kwargs)
    assert str(np.asarray(got).dtype) == str(ref.dtype).replace("torch.", "")
    np.testing.assert_allclose(np.asarray(got), ref.numpy(), rtol=1e-12, atol=1e-14)


def test_sigmoid_and_silu_keep_the_imaginary_part():
    z = np.array([1 + 2j])
    s = np.asarray(rg.sigmoid(rg.tensor(z)))
    np.testing.assert_allclose(s, 1 / (1 + np.exp(-z)), rtol=1e-15)
    assert s.imag[0] != 0
    np.testing.assert_allclose(np.asarray(F.silu(rg.tensor(z))), z / (1 + np.exp(-z)), rtol=1e-15)


# ops torch refuses for complex input, with the class it raises
REFUSED = [
    ("relu", (Z,), {}), ("logsigmoid", (Z,), {}), ("gelu", (Z,), {}), ("softplus", (Z,), {}),
    ("erf", (Z,), {}), ("floor", (Z,), {}), ("ceil", (Z,), {}), ("round", (Z,), {}), ("trunc", (Z,), {}),
    ("sign", (Z,), {}), ("atan2", (Z, Z), {}), ("maximum", (Z, Z), {}), ("minimum", (Z, Z), {}),
    ("clamp", (Z,), {"min": 0.0}), ("amax", (Z,), {}), ("amin", (Z,), {}), ("max", (Z,), {}),
    ("min", (Z,), {}), ("argmax", (Z,), {}), ("argmin", (Z,), {}), ("softmax", (Z, 0), {}),
    ("log_softmax", (Z, 0), {}), ("floor_divide", (Z, Z), {}), ("remainder", (Z, Z), {}),
    ("lt", (Z, Z), {}), ("le", (Z, Z), {}), ("gt", (Z, Z), {}), ("ge", (Z, Z), {}),
    ("maximum", (Z.real, Z), {}), ("lt", (Z.real, Z), {}),
]


@pytest.mark.parametrize("name,args,kwargs", REFUSED, ids=[c[0] + str(i) for i, c in enumerate(REFUSED)])
def test_complex_refused_as_torch(name, args, kwargs):
    with pytest.raises((NotImplementedError, RuntimeError)) as tinfo:
        _lib_call("torch", name, args, kwargs)
    with pytest.raises(TypeError) as info:
        _lib_call("rg", name, args, kwargs)
    # torch's class (NotImplementedError is a RuntimeError: the closest one)
    assert isinstance(info.value, type(tinfo.value))
    msg = str(info.value)
    assert "complex" in msg and "complex128" in msg


def test_complex_python_scalar_is_refused_too():
    x = rg.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="maximum"):
        rg.maximum(x, 1j)
    with pytest.raises(TypeError, match="clamp"):
        rg.clamp(x, min=1j)


def test_norm_of_complex_is_real():
    got = rg.norm(rg.tensor(Z))
    ref = torch.norm(torch.tensor(Z))
    assert got.dtype == np.float64 and ref.dtype == torch.float64
    np.testing.assert_allclose(np.asarray(got), ref.numpy(), rtol=1e-15)


def test_complex64_names_its_dtype():
    with pytest.raises(TypeError, match="complex64"):
        rg.relu(rg.tensor(Z.astype(np.complex64)))


@pytest.mark.parametrize("make", [
    lambda: rg.tensor(Z, requires_grad=True) * rg.tensor(Z[::-1].copy()),
    lambda: rg.exp(rg.tensor(Z, requires_grad=True)),
    lambda: rg.tensor(Z.real.copy(), requires_grad=True) * 1j,
    lambda: rg.tensor(Z.real.copy(), requires_grad=True).to(rg.complex128),
], ids=["mul", "exp", "real_times_1j", "to_complex"])
def test_complex_gradients_are_refused_not_wrong(make):
    # torch's complex gradients are conjugate (Wirtinger) derivatives, which
    # the backward formulas do not compute (mul's would miss the conj): an op
    # that would record a complex result refuses instead of recording it
    with pytest.raises(RuntimeError, match="complex"):
        make()


@pytest.mark.parametrize("op", [
    lambda t, m: m.cat([t, t]),
    lambda t, m: t.sum(),
    lambda t, m: t.reshape(-1)[1:],
    lambda t, m: t.transpose(0, -1) if t.ndim > 1 else -t,
    lambda t, m: m.stack([t, t]).mean(),
    lambda t, m: t.clone(),
], ids=["cat", "sum", "view", "transpose", "stack_mean", "clone"])
def test_linear_ops_keep_right_complex_gradients(op):
    # a linear op with real coefficients has the same gradient with or
    # without conjugation, so it records complex results, as torch
    torch = pytest.importorskip("torch")
    z = rg.tensor(Z, requires_grad=True)
    tz = torch.tensor(Z, requires_grad=True)
    y, ty = op(z, rg), op(tz, torch)
    g = np.asarray(y.detach()) * (1 - 2j) + 0.5j
    (gz,) = rg.autograd.grad(y, z, grad_outputs=rg.tensor(g))
    (tgz,) = torch.autograd.grad(ty, tz, grad_outputs=torch.tensor(g))
    np.testing.assert_allclose(np.asarray(gz), tgz.numpy(), rtol=1e-14)


def test_complex_in_place_with_grad_is_refused():
    z = rg.tensor(Z, requires_grad=True)
    with rg.no_grad():
        rg.tensor(Z).add_(z)                        # no graph: fine
    with pytest.raises(RuntimeError, match="complex"):
        rg.tensor(Z).add_(z)


def test_complex_ops_without_grad_still_compute():
    z = rg.tensor(Z)
    np.testing.assert_allclose(np.asarray(z * z), Z * Z)
    with rg.no_grad():
        zz = rg.tensor(Z, requires_grad=True)
        np.testing.assert_allclose(np.asarray(rg.exp(zz)), np.exp(Z))


@pytest.mark.parametrize("lib", ["rg", "torch"])
def test_backward_of_a_complex_scalar_needs_a_gradient(lib):
    # torch creates the implicit gradient (1) only for real scalars: for a
    # complex one the caller must say which gradient they mean
    mod = torch if lib == "torch" else rg
    z = mod.tensor(np.array([1 + 2j, 3 - 1j]), requires_grad=True)
    s = z.sum()
    with pytest.raises(RuntimeError, match="implicitly created only for real scalar outputs"):
        s.backward()
    s.backward(mod.tensor(np.array(1 + 0j)))
    np.testing.assert_array_equal(np.asarray(z.grad.numpy() if lib == "torch" else z.grad), [1, 1])
