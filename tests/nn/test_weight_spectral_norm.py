"""The hook-based nn.utils.weight_norm / remove_weight_norm and
nn.utils.spectral_norm / remove_spectral_norm against torch 2.13."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(23)


def _close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), rtol=rtol, atol=atol)


def _pair(make_t, make_r):
    mt = make_t().double()
    mr = make_r()
    mr.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in mt.state_dict().items()})
    return mr, mt


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return fn(*args, **kwargs)


def test_the_functions_are_exported_as_torch():
    assert callable(rg.nn.utils.weight_norm) and callable(rg.nn.utils.spectral_norm)
    for name in ("weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "parametrize",
                 "parametrizations", "clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
                 "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters", "rnn"):
        assert name in rg.nn.utils.__all__ and name in torch.nn.utils.__all__
        assert hasattr(rg.nn.utils, name)


@pytest.mark.parametrize("dim", [0, 1, None, -2])
def test_weight_norm_hook_as_torch(dim):
    mr, mt = _pair(lambda: torch.nn.Conv1d(3, 4, 2), lambda: rg.nn.Conv1d(3, 4, 2))
    with pytest.warns(FutureWarning, match="deprecated"):
        rg.nn.utils.weight_norm(mr, dim=dim)
    _quiet(torch.nn.utils.weight_norm, mt, dim=dim)
    assert list(mr.state_dict()) == list(mt.state_dict())
    assert mr.weight_g.shape == tuple(mt.weight_g.shape)
    _close(mr.weight_g, mt.weight_g)
    for _ in range(2):
        x = RNG.standard_normal((2, 3, 5))
        ya, yb = mr(rg.tensor(x)), mt(torch.tensor(x))
        _close(ya, yb)
        ya.sum().backward()
        yb.sum().backward()
    _close(mr.weight_g.grad, mt.weight_g.grad)
    _close(mr.weight_v.grad, mt.weight_v.grad)
    with torch.no_grad():
        mt.weight_g.mul_(2.0)
    with rg.no_grad():
        mr.weight_g.mul_(2.0)
    rg.nn.utils.remove_weight_norm(mr)
    torch.nn.utils.remove_weight_norm(mt)
    assert list(mr.state_dict()) == list(mt.state_dict())
    assert isinstance(mr.weight, rg.nn.Parameter)
    _close(mr.weight, mt.weight)


def test_weight_norm_hook_errors_as_torch():
    for lib in (torch, rg):
        m = _quiet(lib.nn.utils.weight_norm, lib.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            _quiet(lib.nn.utils.weight_norm, m)
        with pytest.raises(ValueError, match="weight_norm of 'bias' not found"):
            lib.nn.utils.remove_weight_norm(m, "bias")
        with pytest.raises(IndexError, match="Dimension out of range"):
            _quiet(lib.nn.utils.weight_norm, lib.nn.Linear(2, 2), dim=2)


def test_weight_norm_gradcheck():
    from retrograd.nn.utils.parametrizations import _weight_norm
    g0 = rg.tensor(RNG.standard_normal((2, 1)), requires_grad=True)
    g1 = rg.tensor(RNG.standard_normal((1, 3)), requires_grad=True)
    g_all = rg.tensor(1.5, requires_grad=True)
    v = rg.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    for g, dim in ((g0, 0), (g1, 1), (g_all, -1)):
        assert rg.autograd.gradcheck(lambda g, v: _weight_norm(v, g, dim), (g, v))


def test_spectral_norm_hook_as_torch():
    mr, mt = _pair(lambda: torch.nn.Linear(4, 3), lambda: rg.nn.Linear(4, 3))
    rg.nn.utils.spectral_norm(mr, n_power_iterations=2)
    torch.nn.utils.spectral_norm(mt, n_power_iterations=2)
    assert list(mr.state_dict()) == list(mt.state_dict())
    assert isinstance(mr.weight, rg.Tensor) and not isinstance(mr.weight, rg.nn.Parameter)
    # u and v start at random: take torch's
    mr.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in mt.state_dict().items()})
    for _ in range(3):
        x = RNG.standard_normal((2, 4))
        ya, yb = mr(rg.tensor(x)), mt(torch.tensor(x))
        _close(ya, yb)
        ya.sum().backward()
        yb.sum().backward()
        _close(mr.weight_u, mt.weight_u)
        _close(mr.weight_v, mt.weight_v)
    _close(mr.weight_orig.grad, mt.weight_orig.grad)
    # eval: no power iteration
    mr.eval()
    mt.eval()
    u = mr.weight_u.numpy().copy()
    x = RNG.standard_normal((2, 4))
    _close(mr(rg.tensor(x)), mt(torch.tensor(x)))
    np.testing.assert_array_equal(mr.weight_u.numpy(), u)
    rg.nn.utils.remove_spectral_norm(mr)
    torch.nn.utils.remove_spectral_norm(mt)
    assert list(mr.state_dict()) == list(mt.state_dict())
    _close(mr.weight, mt.weight)


def test_spectral_norm_hook_on_a_conv_with_dim_as_torch():
    mr, mt = _pair(lambda: torch.nn.Conv2d(2, 3, 2), lambda: rg.nn.Conv2d(2, 3, 2))
    rg.nn.utils.spectral_norm(mr, dim=1)
    torch.nn.utils.spectral_norm(mt, dim=1)
    assert mr.weight_u.shape == tuple(mt.weight_u.shape) and mr.weight_v.shape == tuple(mt.weight_v.shape)
    mr.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in mt.state_dict().items()})
    x = RNG.standard_normal((1, 2, 4, 4))
    _close(mr(rg.tensor(x)), mt(torch.tensor(x)))


def test_spectral_norm_hook_errors_as_torch():
    for lib in (torch, rg):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(m)
        with pytest.raises(ValueError, match="spectral_norm of 'bias' not found"):
            lib.nn.utils.remove_spectral_norm(m, "bias")
        with pytest.raises(ValueError, match="n_power_iterations to be positive"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)
        with pytest.raises(ValueError, match="cannot be applied as parameter `bias` is None"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False), "bias")
