"""RMSNorm, LocalResponseNorm and CrossMapLRN2d (and their functions)
against torch 2.13: values, gradients, reprs and errors."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(11)


def _pair(shape):
    x = RNG.standard_normal(shape)
    return rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


def _close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), rtol=rtol, atol=atol)


def _backward_both(ya, yb):
    seed = RNG.standard_normal(tuple(ya.shape))
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))


@pytest.mark.parametrize("shape, ns, eps", [((2, 3, 4), (4,), None), ((2, 3, 4), (3, 4), 1e-3), ((5,), [5], 0.1)])
def test_rms_norm_as_torch(shape, ns, eps):
    a, b = _pair(shape)
    w = RNG.standard_normal(ns)
    wa, wb = rg.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ya, yb = F.rms_norm(a, ns, wa, eps), TF.rms_norm(b, ns, wb, eps)
    _close(ya, yb)
    _backward_both(ya, yb)
    _close(a.grad, b.grad)
    _close(wa.grad, wb.grad)


@pytest.mark.float32_default
def test_rms_norm_default_eps_is_the_dtypes_epsilon():
    x = np.array([[1e-4, -2e-4, 3e-4]], dtype=np.float32)
    ya = F.rms_norm(rg.tensor(x), (3,))
    yb = TF.rms_norm(torch.tensor(x), (3,))
    assert ya.dtype == np.float32
    np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-6)


def test_rms_norm_gradcheck():
    x = rg.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    w = rg.tensor(RNG.standard_normal(4), requires_grad=True)
    assert rg.autograd.gradcheck(lambda x, w: F.rms_norm(x, (4,), w, 1e-5), (x, w))
    assert rg.autograd.gradgradcheck(lambda x, w: F.rms_norm(x, (4,), w, 1e-5), (x, w))


def test_rms_norm_module_as_torch():
    mr, mt = rg.nn.RMSNorm([2, 3], eps=1e-4), torch.nn.RMSNorm([2, 3], eps=1e-4).double()
    with torch.no_grad():
        mt.weight.normal_()
    mr.load_state_dict({"weight": rg.tensor(mt.weight.detach().numpy().copy())})
    a, b = _pair((4, 2, 3))
    ya, yb = mr(a), mt(b)
    _close(ya, yb)
    _backward_both(ya, yb)
    _close(mr.weight.grad, mt.weight.grad)
    _close(a.grad, b.grad)
    assert repr(mr) == repr(mt)
    assert repr(rg.nn.RMSNorm(3)) == repr(torch.nn.RMSNorm(3))
    assert rg.nn.RMSNorm(3, elementwise_affine=False).weight is None


def test_rms_norm_errors_as_torch():
    for lib, f in ((torch, TF), (rg, F)):
        with pytest.raises(RuntimeError, match="expected input with shape"):
            f.rms_norm(lib.ones(2, 3), (4,))
        with pytest.raises(RuntimeError, match="same shape as normalized_shape"):
            f.rms_norm(lib.ones(2, 3), (3,), lib.ones(4))
        with pytest.raises(NotImplementedError):
            f.rms_norm(lib.arange(3), (3,))
        with pytest.raises(TypeError, match="must be tuple of ints"):
            f.rms_norm(lib.ones(2, 3), 3)


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 6, 3, 2), (1, 4, 2, 2, 3)])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_local_response_norm_as_torch(shape, size):
    a, b = _pair(shape)
    ya = F.local_response_norm(a, size, alpha=0.3, beta=0.6, k=1.5)
    yb = TF.local_response_norm(b, size, alpha=0.3, beta=0.6, k=1.5)
    _close(ya, yb)
    _backward_both(ya, yb)
    _close(a.grad, b.grad)


def test_local_response_norm_gradcheck_and_module():
    x = rg.tensor(RNG.standard_normal((2, 4, 3)), requires_grad=True)
    assert rg.autograd.gradcheck(lambda x: F.local_response_norm(x, 3, alpha=0.5), (x,))
    mr, mt = rg.nn.LocalResponseNorm(3, k=2.0), torch.nn.LocalResponseNorm(3, k=2.0)
    a, b = _pair((2, 4, 3, 3))
    _close(mr(a), mt(b))
    assert repr(mr) == repr(mt)
    for lib in (torch, rg):
        with pytest.raises(ValueError, match="3D or higher"):
            lib.nn.LocalResponseNorm(2)(lib.ones(2, 3))
        empty = lib.ones(0, 3, 2)
        assert lib.nn.LocalResponseNorm(2)(empty).shape == (0, 3, 2)


@pytest.mark.parametrize("C, size", [(5, 3), (7, 2), (3, 5), (8, 4)])
def test_cross_map_lrn2d_values_as_torch(C, size):
    a, b = _pair((2, C, 2, 3))
    mr = rg.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.0)
    mt = torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.0)
    _close(mr(a), mt(b))
    assert repr(mr) == repr(mt)


def test_cross_map_lrn2d_gradient():
    # torch's backward is hand-written (Lua Torch's); ours differentiates the
    # forward exactly: check it numerically
    x = rg.tensor(RNG.standard_normal((1, 5, 2, 2)), requires_grad=True)
    assert rg.autograd.gradcheck(lambda x: rg.nn.CrossMapLRN2d(3, alpha=0.5)(x), (x,))
    for lib in (torch, rg):
        with pytest.raises(ValueError, match="Expected input to be 4D"):
            lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4))
