"""The lazy modules against torch: shapes inferred at the first call, the
class they become, initialization, reprs, state dicts loaded before the first
call, dtype conversion of the placeholders, outputs and gradients after the
parameters are copied from torch, errors."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.oracle

nn, tnn = rg.nn, torch.nn
RNG = np.random.default_rng(5)


def _sd_to_rg(sd):
    return {k: rg.tensor(v.detach().numpy()) for k, v in sd.items()}


CASES = [
    ("LazyLinear", (3,), {}, (4, 5), "Linear"),
    ("LazyLinear", (2,), {"bias": False}, (5,), "Linear"),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7), "Conv1d"),
    ("LazyConv1d", (4, 3), {"groups": 2}, (4, 7), "Conv1d"),
    ("LazyConv2d", (4, 3), {"stride": 2, "bias": False}, (2, 2, 6, 6), "Conv2d"),
    ("LazyConv3d", (2, 2), {}, (1, 3, 4, 4, 4), "Conv3d"),
    ("LazyConvTranspose1d", (3, 2), {"stride": 2}, (2, 4, 5), "ConvTranspose1d"),
    ("LazyConvTranspose2d", (3, 3), {"padding": 1}, (1, 2, 4, 4), "ConvTranspose2d"),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 2, 3, 3, 3), "ConvTranspose3d"),
    ("LazyBatchNorm1d", (), {}, (4, 3), "BatchNorm1d"),
    ("LazyBatchNorm2d", (), {"momentum": None}, (4, 3, 2, 2), "BatchNorm2d"),
    ("LazyBatchNorm3d", (), {"affine": False}, (2, 3, 2, 2, 2), "BatchNorm3d"),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5), "InstanceNorm1d"),
    ("LazyInstanceNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 4), "InstanceNorm2d"),
    ("LazyInstanceNorm3d", (), {}, (2, 3, 2, 3, 2), "InstanceNorm3d"),
]


def _needs(name):
    if not hasattr(nn, name):
        pytest.skip(f"rg.nn.{name}: its base class is not in rg.nn yet")


@pytest.mark.parametrize("name,args,kw,shape,becomes", CASES)
def test_lazy_module_becomes_its_class_and_matches_torch(name, args, kw, shape, becomes):
    _needs(name)
    m, mt = getattr(nn, name)(*args, **kw), getattr(tnn, name)(*args, **kw, dtype=torch.float64)
    assert repr(m) == repr(mt)
    assert m.has_uninitialized_params() and mt.has_uninitialized_params()
    assert isinstance(m, nn.modules.lazy.LazyModuleMixin)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in mt.named_parameters()]
    a = RNG.standard_normal(shape)
    x, xt = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    m(x)
    mt(xt)
    assert type(m) is getattr(nn, becomes) and type(mt) is getattr(tnn, becomes)
    assert repr(m) == repr(mt)
    assert not m.has_uninitialized_params() if hasattr(m, "has_uninitialized_params") else True
    assert not m._forward_pre_hooks
    sd, sdt = m.state_dict(), mt.state_dict()
    assert list(sd) == list(sdt)
    assert all(tuple(sd[k].shape) == tuple(sdt[k].shape) for k in sd)
    assert all(sd[k].dtype == np.float64 for k in sd if k != "num_batches_tracked")
    # the same numbers: copy torch's state, compare outputs and gradients
    m.load_state_dict(_sd_to_rg(mt.state_dict()))
    x.grad = None
    xt.grad = None
    y, yt = m(x), mt(xt)
    np.testing.assert_allclose(np.asarray(y.detach()), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = RNG.standard_normal(tuple(yt.shape))
    y.backward(rg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(np.asarray(x.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-11)
    for (n, p), (_, pt) in zip(m.named_parameters(), mt.named_parameters()):
        np.testing.assert_allclose(np.asarray(p.grad), pt.grad.numpy(), rtol=1e-10, atol=1e-11, err_msg=n)


def test_initialization_follows_the_ordinary_class():
    rg.manual_seed(0)
    m = nn.LazyLinear(200)
    m(rg.ones(1, 50))
    bound = 1 / np.sqrt(50)
    w = np.asarray(m.weight.detach())
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    bn = nn.LazyBatchNorm1d()
    bn(rg.randn(4, 3))
    assert bn.weight.tolist() == [1.0] * 3 and bn.num_batches_tracked.item() == 1
    assert bn.running_mean.shape == (3,) and type(bn.running_var) is nn.Buffer
    c = nn.LazyConv2d(3, 2)
    c(rg.ones(1, 4, 3, 3))
    assert c.in_channels == 4 and c.weight.shape == (3, 4, 2, 2) and c.bias.shape == (3,)


def test_lazy_norm_defaults_are_torch_s():
    for name in ("LazyInstanceNorm1d", "LazyBatchNorm2d"):
        m, mt = getattr(nn, name)(), getattr(tnn, name)()
        assert (m.affine, m.track_running_stats) == (mt.affine, mt.track_running_stats) == (True, True)
        assert [n for n, _ in m.named_buffers()] == [n for n, _ in mt.named_buffers()]
        assert list(m.state_dict()) == list(mt.state_dict())


def test_state_dict_loads_into_an_uninitialized_module():
    src = nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())
    assert not m.has_uninitialized_params() and type(m) is nn.LazyLinear and m.in_features == 0
    np.testing.assert_array_equal(np.asarray(m.weight.detach()), np.asarray(src.weight.detach()))
    x = rg.randn(2, 5)
    np.testing.assert_allclose(np.asarray(m(x).detach()), np.asarray(src(x).detach()))
    assert type(m) is nn.Linear and m.in_features == 5
    # the loaded shape must fit the first input
    m2 = nn.LazyLinear(3)
    m2.load_state_dict(src.state_dict())
    with pytest.raises(AssertionError, match="in_features inferred from input: 4"):
        m2(rg.randn(2, 4))
    # the same with torch
    mt = tnn.LazyLinear(3)
    mt.load_state_dict(tnn.Linear(5, 3).state_dict())
    assert mt.in_features == 0 and not mt.has_uninitialized_params()
    # a lazy state dict (saved before the first call) keeps the placeholders
    lazy_sd = nn.LazyLinear(3).state_dict()
    assert isinstance(lazy_sd["weight"], nn.UninitializedParameter)
    m3 = nn.LazyLinear(3)
    assert str(m3.load_state_dict(lazy_sd)) == "<All keys matched successfully>"
    assert m3.has_uninitialized_params()
    bn = nn.LazyBatchNorm1d()
    bn.load_state_dict(nn.BatchNorm1d(4).state_dict())
    assert bn.running_mean.shape == (4,) and bn.weight.shape == (4,)
    # an initialized module does not take a lazy state dict
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        nn.Linear(2, 3).load_state_dict(lazy_sd)


def test_dtype_conversion_before_the_first_call_keeps_placeholders():
    m = nn.LazyBatchNorm1d().double()
    mt = tnn.LazyBatchNorm1d().double()
    assert m.has_uninitialized_params() and mt.has_uninitialized_params()
    assert isinstance(m.running_mean, nn.UninitializedBuffer)
    m(rg.randn(3, 2, dtype=rg.float64))
    assert m.weight.dtype == np.float64 and m.running_mean.dtype == np.float64
    lin = nn.LazyLinear(2, dtype=rg.float32)
    lin(rg.randn(1, 3, dtype=rg.float32))
    assert lin.weight.dtype == np.float32


def test_errors_like_torch():
    for m, x in ((nn.LazyConv2d(2, 3), rg.ones(3, 5)), (tnn.LazyConv2d(2, 3), torch.ones(3, 5))):
        with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to LazyConv2d"):
            m(x)
    for m, x in ((nn.LazyConv1d(4, 3, groups=2), rg.ones(1, 3, 5)), (tnn.LazyConv1d(4, 3, groups=2),
                                                                       torch.ones(1, 3, 5))):
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            m(x)
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.LazyBatchNorm2d()(rg.ones(2, 3))

    class Broken(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.UninitializedParameter()

        def initialize_parameters(self, x):
            pass

        def forward(self, x):
            return x

    with pytest.raises(RuntimeError, match="module Broken has not been fully initialized"):
        Broken()(rg.ones(1))

    class NoInit(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def forward(self, x):
            return x

    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented for NoInit"):
        NoInit()(rg.ones(1))


def test_lazy_module_inside_a_model_trains():
    rg.manual_seed(1)
    net = nn.Sequential(nn.LazyConv1d(4, 3), nn.LazyBatchNorm1d(), nn.Flatten(), nn.LazyLinear(2))
    x = rg.randn(3, 2, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net(x)
    assert [type(m).__name__ for m in net] == ["Conv1d", "BatchNorm1d", "Flatten", "Linear"]
    params = list(net.parameters())
    assert [tuple(p.shape) for p in params] == [(4, 2, 3), (4,), (4,), (4,), (2, 16), (2,)]
    opt = rg.optim.SGD(params, lr=0.1)
    before = [np.asarray(p.detach()).copy() for p in params]
    net(x).pow(2).sum().backward()
    opt.step()
    assert all(p.grad is not None and not np.array_equal(np.asarray(p.detach()), b) for p, b in zip(params, before))
