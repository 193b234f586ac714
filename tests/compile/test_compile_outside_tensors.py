"""Tensors a compiled function reads from outside its arguments.

One that existed before the trace (a closure's or a global's weight that
does not require grad) is compiled and read at each call; rebinding the
closure variable or global retraces; a changed shape retraces. One the
function makes from NumPy data during the call would be baked in: that key
runs eagerly and stays right when the data changes."""
import warnings

import numpy as np
import pytest

import retrograd as rg

GLOBAL_W = rg.tensor(np.arange(6.0).reshape(2, 3) / 10)


def _x(seed=0, n=3, requires_grad=True):
    return rg.tensor(np.random.default_rng(seed).standard_normal(n), requires_grad=requires_grad)


def _grad_of(f, x):
    x = x.detach().requires_grad_(True)
    f(x).backward()
    return x.grad.numpy()


def test_closure_constant_compiles_and_is_read_at_each_call():
    w = rg.tensor(np.random.default_rng(1).standard_normal((4, 3)))

    def model(x):
        return (w @ x).tanh().pow(2).sum()

    f = rg.compile(model, fullgraph=True)
    x = _x()
    np.testing.assert_allclose(f(x).item(), model(x).item(), rtol=1e-12)
    assert f.cache_info() == {"compiled": 1, "eager": 0}
    np.testing.assert_allclose(_grad_of(f, x), _grad_of(model, x), rtol=1e-12)
    with rg.no_grad():
        w.mul_(3.0)                          # an in-place change is seen by the next call
    np.testing.assert_allclose(f(x).item(), model(x).item(), rtol=1e-12)
    np.testing.assert_allclose(_grad_of(f, x), _grad_of(model, x), rtol=1e-12)
    assert f.cache_info() == {"compiled": 1, "eager": 0}


def test_rebinding_a_closure_variable_retraces():
    w = rg.ones(3)

    def model(x):
        return (w * x).sum()

    f = rg.compile(model)
    x = _x()
    assert f(x).item() == pytest.approx(x.sum().item())
    w = rg.full((3,), 2.0)                   # noqa: F841 (the closure's cell now holds another tensor)
    assert f(x).item() == pytest.approx(2 * x.sum().item())
    w = rg.ones(4)                           # noqa: F841 (another shape: retraced, and fails as eager does)
    with pytest.raises(RuntimeError):
        f(x)


def test_rebinding_a_global_retraces():
    global GLOBAL_W
    old = GLOBAL_W

    def model(x):
        return (GLOBAL_W @ x).sum()

    f = rg.compile(model, fullgraph=True)
    x = _x()
    try:
        np.testing.assert_allclose(f(x).item(), model(x).item(), rtol=1e-12)
        GLOBAL_W = -old
        np.testing.assert_allclose(f(x).item(), model(x).item(), rtol=1e-12)
        assert f(x).item() == pytest.approx(-(old @ x).sum().item())
    finally:
        GLOBAL_W = old


def test_reset_forgets_every_key_for_tensors_reached_by_attribute():
    class Holder:
        pass

    h = Holder()
    h.w = rg.ones(3)

    def model(x):
        return (h.w * x).sum()

    f = rg.compile(model)
    x = _x()
    f(x)
    h.w = rg.full((3,), 5.0)
    f.reset()
    assert f.cache_info() == {"compiled": 0, "eager": 0}
    assert f(x).item() == pytest.approx(5 * x.sum().item())


def test_a_tensor_made_inside_from_numpy_data_is_not_baked_in():
    data = np.array([1.0, 2.0, 3.0])

    def model(x):
        return (rg.tensor(data) * x).sum()     # data is re-read on each eager call

    f = rg.compile(model)
    x = _x()
    with pytest.warns(RuntimeWarning, match="made inside the function"):
        f(x)
    data[:] = [10.0, 20.0, 30.0]
    np.testing.assert_allclose(f(x).item(), model(x).item(), rtol=1e-12)
    np.testing.assert_allclose(_grad_of(f, x), data)
    assert f.cache_info() == {"compiled": 0, "eager": 1}


def test_a_leaf_requiring_grad_made_inside_is_not_lifted():
    data = np.array([1.0, 2.0, 3.0])

    def model(x):
        w = rg.tensor(data, requires_grad=True)
        return (w * x).sum()

    f = rg.compile(model)
    x = _x()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f(x)
    data[:] = 7.0
    np.testing.assert_allclose(f(x).item(), 7.0 * x.sum().item(), rtol=1e-12)


def test_hessian_vector_product_with_closure_weights_compiles():
    rng = np.random.default_rng(3)
    w = rg.tensor(rng.standard_normal((5, 5)))
    v = rg.tensor(rng.standard_normal(5))

    def hvp(x):
        (g,) = rg.autograd.grad((rg.tanh(w @ x) ** 2).sum(), (x,), create_graph=True)
        (hv,) = rg.autograd.grad(g, (x,), (v,), create_graph=True)
        return hv

    f = rg.compile(hvp, fullgraph=True)
    for seed in (0, 1):
        x = _x(seed, 5)
        np.testing.assert_allclose(f(x).detach().numpy(), hvp(_x(seed, 5)).detach().numpy(), rtol=1e-10)
    assert f.cache_info() == {"compiled": 1, "eager": 0}


def test_factories_inside_compile_and_make_fresh_tensors_per_call():
    def model(x):
        h = rg.zeros(3)
        h[1] = 2.0                            # in place on the factory's (fresh) tensor
        e = rg.eye(3)[0] + rg.arange(3.0) + rg.ones_like(x) + rg.full((3,), 0.5)
        return ((h + e) * x).sum()

    f = rg.compile(model, fullgraph=True)
    for seed in range(3):
        x = _x(seed)
        np.testing.assert_allclose(f(x).item(), model(x).item(), rtol=1e-12)
        np.testing.assert_allclose(_grad_of(f, x), _grad_of(model, x), rtol=1e-12)
    assert f.cache_info() == {"compiled": 1, "eager": 0}


def test_implicit_gradient_of_a_scalar_inside_is_not_a_baked_constant():
    def slope(x):
        (g,) = rg.autograd.grad((x ** 3).sum(), (x,), create_graph=True)
        return g

    f = rg.compile(slope, fullgraph=True)
    for seed in (0, 1):
        x = _x(seed)
        np.testing.assert_allclose(f(x).detach().numpy(), 3 * x.detach().numpy() ** 2, rtol=1e-12)
    assert f.cache_info() == {"compiled": 1, "eager": 0}



def test_a_weight_changed_in_place_in_requires_grad_or_dtype_retraces():
    # The weight stays the same object, so only its metadata tells that the
    # programs are stale. Reused, they would give no gradient for a weight
    # that now requires grad, and a float64 result where eager's is float32.
    w = rg.tensor(np.arange(3.0) + 1)
    f = rg.compile(lambda x: x + w * 2)
    x = rg.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    f(x)
    f(x)

    w.requires_grad_(True)
    f(x).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 2.0, 2.0])

    w.data = rg.tensor(np.arange(3, dtype=np.float32))
    w.requires_grad_(False)
    y = f(x)
    want = x + w * 2
    assert y.dtype == want.dtype == rg.float32
    np.testing.assert_allclose(y.detach().numpy(), want.detach().numpy())

    w.data = rg.tensor(np.arange(4.0, dtype=np.float32))
    with pytest.raises(RuntimeError):
        f(x)          # (3,) against (4,): eager's error, not a stale program's result
