"""GroupNorm and InstanceNorm1d/2d/3d (and F.group_norm / F.instance_norm)
against torch 2.13: values, gradients, running statistics, state dicts,
reprs and errors."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(7)


def _pair(shape, scale=1.0):
    x = RNG.standard_normal(shape) * scale + 0.3
    return rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


def _close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), rtol=rtol, atol=atol)


def _backward_both(ya, yb):
    seed = RNG.standard_normal(tuple(ya.shape))
    ya.backward(rg.tensor(seed))
    yb.backward(torch.tensor(seed))


def _copy_params(mr, mt):
    mr.load_state_dict({k: rg.tensor(v.detach().numpy().copy()) for k, v in mt.state_dict().items()})


@pytest.mark.parametrize("shape, groups", [((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((2, 4), 4), ((1, 6, 2, 2, 2), 1)])
def test_group_norm_as_torch(shape, groups):
    a, b = _pair(shape)
    C = shape[1]
    w = RNG.standard_normal(C)
    bias = RNG.standard_normal(C)
    wa, wb = rg.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ba, bb = rg.tensor(bias, requires_grad=True), torch.tensor(bias, requires_grad=True)
    ya, yb = F.group_norm(a, groups, wa, ba, eps=1e-3), TF.group_norm(b, groups, wb, bb, eps=1e-3)
    _close(ya, yb)
    _backward_both(ya, yb)
    for x, y in ((a, b), (wa, wb), (ba, bb)):
        _close(x.grad, y.grad)


def test_group_norm_gradcheck():
    x = rg.tensor(RNG.standard_normal((2, 4, 3)), requires_grad=True)
    w = rg.tensor(RNG.standard_normal(4), requires_grad=True)
    assert rg.autograd.gradcheck(lambda x, w: F.group_norm(x, 2, w, None), (x, w))


def test_group_norm_module_as_torch():
    mr, mt = rg.nn.GroupNorm(2, 4, eps=1e-4), torch.nn.GroupNorm(2, 4, eps=1e-4).double()
    with torch.no_grad():
        mt.weight.normal_()
        mt.bias.normal_()
    _copy_params(mr, mt)
    a, b = _pair((3, 4, 5))
    ya, yb = mr(a), mt(b)
    _close(ya, yb)
    _backward_both(ya, yb)
    _close(mr.weight.grad, mt.weight.grad)
    _close(mr.bias.grad, mt.bias.grad)
    _close(a.grad, b.grad)
    assert repr(mr) == repr(mt)
    assert list(mr.state_dict()) == list(mt.state_dict())
    no_affine = rg.nn.GroupNorm(1, 3, affine=False)
    assert no_affine.weight is None and list(no_affine.state_dict()) == []
    assert repr(rg.nn.GroupNorm(2, 4, bias=False)) == repr(torch.nn.GroupNorm(2, 4, bias=False))


@pytest.mark.float32_default
def test_group_norm_module_default_dtype_float32():
    m = rg.nn.GroupNorm(2, 4)
    assert m.weight.dtype == np.float32
    assert m(rg.randn(2, 4, 3)).dtype == np.float32


def test_group_norm_errors_as_torch():
    cases = [
        (lambda lib, f: f.group_norm(lib.ones(2, 6, 3), 4), RuntimeError, "divisible by num_groups"),
        (lambda lib, f: f.group_norm(lib.ones(2, 6, 3), 3, lib.ones(5)), RuntimeError, "weight to be a vector"),
        (lambda lib, f: f.group_norm(lib.ones(1, 3), 3), ValueError, "more than 1 value per channel"),
        (lambda lib, f: f.group_norm(lib.ones(3), 3), RuntimeError, "at least 2 dimensions"),
        (lambda lib, f: f.group_norm(lib.ones(2, 6, dtype=lib.int64), 3), NotImplementedError, "not implemented"),
    ]
    for call, exc, msg in cases:
        with pytest.raises(exc):
            call(torch, TF)
        with pytest.raises(exc, match=msg):
            call(rg, F)
    for lib in (torch, rg):
        with pytest.raises(ValueError, match="must be divisible by num_groups"):
            lib.nn.GroupNorm(3, 4)


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 2, 3), (2, 2, 2, 2, 3)])
def test_instance_norm_functional_running_stats_as_torch(shape):
    a, b = _pair(shape)
    C = shape[1]
    rm_r, rv_r = rg.tensor(np.linspace(-1, 1, C)), rg.tensor(np.linspace(0.5, 2, C))
    rm_t, rv_t = torch.tensor(np.linspace(-1, 1, C)), torch.tensor(np.linspace(0.5, 2, C))
    w = RNG.standard_normal(C)
    wa, wb = rg.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ya = F.instance_norm(a, rm_r, rv_r, wa, None, True, 0.3, 1e-4)
    yb = TF.instance_norm(b, rm_t, rv_t, wb, None, True, 0.3, 1e-4)
    _close(ya, yb)
    _close(rm_r, rm_t)
    _close(rv_r, rv_t)
    _backward_both(ya, yb)
    _close(a.grad, b.grad)
    _close(wa.grad, wb.grad)
    # with the running statistics instead of the input's
    ya = F.instance_norm(a, rm_r, rv_r, use_input_stats=False)
    yb = TF.instance_norm(b, rm_t, rv_t, use_input_stats=False)
    _close(ya, yb)


def test_instance_norm_gradcheck():
    x = rg.tensor(RNG.standard_normal((2, 3, 4)), requires_grad=True)
    b = rg.tensor(RNG.standard_normal(3), requires_grad=True)
    assert rg.autograd.gradcheck(lambda x, b: F.instance_norm(x, bias=b), (x, b))
    assert rg.autograd.gradgradcheck(lambda x: F.instance_norm(x), (x,))


@pytest.mark.parametrize("cls, shape", [("InstanceNorm1d", (3, 2, 5)), ("InstanceNorm1d", (2, 5)),
                                        ("InstanceNorm2d", (2, 3, 3, 4)), ("InstanceNorm2d", (3, 3, 4)),
                                        ("InstanceNorm3d", (2, 2, 2, 3, 2))])
@pytest.mark.parametrize("affine, track", [(False, False), (True, True), (True, False), (False, True)])
def test_instance_norm_modules_as_torch(cls, shape, affine, track):
    C = shape[-4] if cls == "InstanceNorm3d" else shape[-3] if cls == "InstanceNorm2d" else shape[-2]
    mr = getattr(rg.nn, cls)(C, affine=affine, track_running_stats=track, momentum=0.2)
    mt = getattr(torch.nn, cls)(C, affine=affine, track_running_stats=track, momentum=0.2).double()
    if affine:
        with torch.no_grad():
            mt.weight.normal_()
            mt.bias.normal_()
    _copy_params(mr, mt)
    assert list(mr.state_dict()) == list(mt.state_dict())
    assert repr(mr) == repr(mt)
    for _ in range(2):
        a, b = _pair(shape, 2.0)
        ya, yb = mr(a), mt(b)
        _close(ya, yb)
        _backward_both(ya, yb)
        _close(a.grad, b.grad)
    for k, v in mt.state_dict().items():
        _close(mr.state_dict()[k], v)
    if affine:
        _close(mr.weight.grad, mt.weight.grad)
        _close(mr.bias.grad, mt.bias.grad)
    mr.eval()
    mt.eval()
    a, b = _pair(shape)
    _close(mr(a), mt(b))


def test_instance_norm_module_errors_and_warnings_as_torch():
    for lib in (torch, rg):
        with pytest.raises(ValueError, match="expected 2D or 3D input"):
            lib.nn.InstanceNorm1d(3)(lib.ones(2, 3, 4, 5))
        with pytest.raises(ValueError, match="expected 4D or 5D input"):
            lib.nn.InstanceNorm3d(3)(lib.ones(2, 3, 4))
        with pytest.raises(ValueError, match="to match num_features"):
            lib.nn.InstanceNorm1d(4, affine=True)(lib.ones(2, 3, 4))
        with pytest.warns(UserWarning, match="does not match num_features"):
            lib.nn.InstanceNorm1d(4)(lib.randn(2, 3, 4))
        with pytest.raises(ValueError, match="more than 1 spatial element"):
            lib.nn.InstanceNorm1d(3)(lib.ones(2, 3, 1))
    for lib, f in ((torch, TF), (rg, F)):
        with pytest.raises(RuntimeError, match="use_input_stats is false"):
            f.instance_norm(lib.ones(2, 3, 4), use_input_stats=False)
        with pytest.raises(RuntimeError, match="running_mean should contain 6 elements not 8"):
            f.instance_norm(lib.ones(2, 3, 4), lib.zeros(4), lib.ones(4))


def test_instance_norm_old_checkpoint_running_stats_refused_as_torch():
    # a state dict without version metadata (before torch 0.4) that holds
    # running statistics for a module that tracks none
    state = {"running_mean": np.zeros(3), "running_var": np.ones(3)}
    for lib in (torch, rg):
        m = lib.nn.InstanceNorm1d(3)
        with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
            m.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
