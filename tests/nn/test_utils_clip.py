"""rg.nn.utils against torch.nn.utils: clip_grad_norm_ (every norm order,
mixed dtypes, the returned total norm, the non-finite error),
clip_grad_value_, get_total_norm / clip_grads_with_norm_, and
parameters_to_vector / vector_to_parameters."""
import math
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.nn import utils


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


SHAPES = [(3, 4), (5,), (), (2, 1, 3)]


def twin_params(torch, dtypes=("float64",) * 4, seed=0, scale=3.0, skip_grad=()):
    rng = np.random.default_rng(seed)
    rps, tps = [], []
    for i, (shape, dt) in enumerate(zip(SHAPES, dtypes)):
        v = rng.standard_normal(shape).astype(dt)
        g = (scale * rng.standard_normal(shape)).astype(dt)
        rp = rg.tensor(v, requires_grad=True)
        tp = torch.tensor(v, requires_grad=True)
        if i not in skip_grad:
            rp.grad = rg.tensor(g)
            tp.grad = torch.tensor(g)
        rps.append(rp)
        tps.append(tp)
    return rps, tps


def assert_grads(rps, tps, tol=1e-12):
    for rp, tp in zip(rps, tps):
        if tp.grad is None:
            assert rp.grad is None
            continue
        assert rp.grad.dtype == np.dtype(str(tp.grad.dtype).replace("torch.", ""))
        np.testing.assert_allclose(rp.grad.numpy(), tp.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.oracle
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, 0.5, math.inf, -math.inf, 0, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm):
    rps, tps = twin_params(torch, skip_grad=(2,))
    r_total = utils.clip_grad_norm_(rps, max_norm, norm_type=norm_type)
    t_total = torch.nn.utils.clip_grad_norm_(tps, max_norm, norm_type=norm_type)
    assert isinstance(r_total, rg.Tensor) and r_total.shape == ()
    np.testing.assert_allclose(r_total.item(), t_total.item(), rtol=1e-12, atol=1e-12)
    assert_grads(rps, tps)


@pytest.mark.oracle
def test_clip_grad_norm_float32_and_mixed_dtypes(torch):
    rps, tps = twin_params(torch, dtypes=("float32",) * 4)
    r_total = utils.clip_grad_norm_(rps, 1.0)
    t_total = torch.nn.utils.clip_grad_norm_(tps, 1.0)
    assert r_total.dtype == np.float32
    np.testing.assert_allclose(r_total.item(), t_total.item(), rtol=1e-6)
    assert_grads(rps, tps, tol=1e-6)
    rps, tps = twin_params(torch, dtypes=("float32", "float64", "float32", "float64"))
    r_total = utils.clip_grad_norm_(rps, 1.0)
    t_total = torch.nn.utils.clip_grad_norm_(tps, 1.0)
    assert str(r_total.dtype) == str(t_total.dtype).replace("torch.", "")
    np.testing.assert_allclose(r_total.item(), t_total.item(), rtol=1e-6)
    assert_grads(rps, tps, tol=1e-6)


@pytest.mark.oracle
def test_clip_grad_norm_single_tensor_empty_and_generators(torch):
    rps, tps = twin_params(torch)
    r = utils.clip_grad_norm_(rps[0], 0.1)
    t = torch.nn.utils.clip_grad_norm_(tps[0], 0.1)
    np.testing.assert_allclose(r.item(), t.item(), rtol=1e-12)
    assert_grads(rps[:1], tps[:1])
    assert utils.clip_grad_norm_([rg.ones(2, requires_grad=True)], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="empty generator"):
        utils.clip_grad_norm_((p for p in []), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        utils.clip_grad_norm_([], 1.0)       # an empty list is not warned about
    for foreach in (None, False, True):
        rps, tps = twin_params(torch)
        utils.clip_grad_norm_(rps, 1.0, foreach=foreach)
        torch.nn.utils.clip_grad_norm_(tps, 1.0, foreach=foreach)
        assert_grads(rps, tps)


@pytest.mark.oracle
def test_clip_grad_norm_nonfinite(torch):
    for lib, params in ((rg, None), (torch, None)):
        p = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        p.grad = lib.tensor([float("inf"), 1.0], dtype=lib.float64)
        with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is "
                                               "non-finite, so it cannot be clipped"):
            (utils if lib is rg else torch.nn.utils).clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    rp = rg.tensor([1.0, 2.0], requires_grad=True)
    rp.grad = rg.tensor([float("nan"), 1.0])
    tp = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    tp.grad = torch.tensor([float("nan"), 1.0], dtype=torch.float64)
    assert math.isnan(utils.clip_grad_norm_([rp], 1.0).item())
    torch.nn.utils.clip_grad_norm_([tp], 1.0)
    np.testing.assert_array_equal(rp.grad.numpy(), tp.grad.numpy())


@pytest.mark.oracle
def test_total_norm_and_clip_with_norm_match_torch(torch):
    rps, tps = twin_params(torch)
    r = utils.get_total_norm([p.grad for p in rps], 3.0)
    t = torch.nn.utils.get_total_norm([p.grad for p in tps], 3.0)
    np.testing.assert_allclose(r.item(), t.item(), rtol=1e-12)
    utils.clip_grads_with_norm_(rps, 2.0, r)
    torch.nn.utils.clip_grads_with_norm_(tps, 2.0, t)
    assert_grads(rps, tps)


@pytest.mark.oracle
@pytest.mark.parametrize("clip", [0.5, 2, 100.0])
def test_clip_grad_value_matches_torch(torch, clip):
    rps, tps = twin_params(torch, skip_grad=(1,))
    assert utils.clip_grad_value_(rps, clip) is None
    torch.nn.utils.clip_grad_value_(tps, clip)
    assert_grads(rps, tps)
    rps, tps = twin_params(torch)
    utils.clip_grad_value_(rps[0], clip)
    torch.nn.utils.clip_grad_value_(tps[0], clip)
    assert_grads(rps[:1], tps[:1])


@pytest.mark.oracle
def test_parameters_to_vector_and_back_match_torch(torch):
    rps, tps = twin_params(torch)
    rv = utils.parameters_to_vector(rps)
    tv = torch.nn.utils.parameters_to_vector(tps)
    np.testing.assert_array_equal(rv.detach().numpy(), tv.detach().numpy())
    # differentiable, as torch's
    (rv * rg.arange(rv.shape[0], dtype=rg.float64)).sum().backward()
    (tv * torch.arange(tv.shape[0], dtype=torch.float64)).sum().backward()
    for rp, tp in zip(rps, tps):
        np.testing.assert_array_equal(rp.grad.numpy(), tp.grad.numpy())
    new = np.linspace(-1.0, 1.0, rv.shape[0])
    ids = [id(p) for p in rps]
    utils.vector_to_parameters(rg.tensor(new), rps)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tps)
    assert [id(p) for p in rps] == ids
    for rp, tp in zip(rps, tps):
        assert rp.shape == tuple(tp.shape) and rp.is_leaf and rp.requires_grad
        np.testing.assert_array_equal(rp.detach().numpy(), tp.detach().numpy())
    with pytest.raises(TypeError, match="expected rg.Tensor, but got: ndarray"):
        utils.vector_to_parameters(new, rps)
    with pytest.raises(TypeError):
        torch.nn.utils.vector_to_parameters(new, tps)


def test_parameters_to_vector_refuses_mixed_devices(virtual_cpu_devices):
    a = rg.ones(2)
    b = rg.ones(2, device="cpu:1")
    with pytest.raises(TypeError, match="Found two parameters on different devices"):
        utils.parameters_to_vector([a, b])
    with pytest.raises(TypeError, match="Found two parameters on different devices"):
        utils.vector_to_parameters(rg.ones(4), [a, b])


def test_module_parameters_round_trip():
    m = rg.nn.Module()
    m.w = rg.nn.Parameter(rg.ones(2, 2))
    m.b = rg.nn.Parameter(rg.zeros(2))
    vec = utils.parameters_to_vector(m.parameters())
    assert vec.shape == (6,) and vec.grad_fn is not None
    utils.vector_to_parameters(rg.arange(6, dtype=rg.float64), m.parameters())
    assert m.w.tolist() == [[0.0, 1.0], [2.0, 3.0]] and m.b.tolist() == [4.0, 5.0]
    assert isinstance(m.w, rg.nn.Parameter)
