"""nn.BatchNorm3d against torch 2.13: training and eval outputs, gradients of
input, weight and bias, running statistics (momentum and cumulative), no
affine or no running stats, dtype, repr and the rank check."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(5)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("kw", [dict(), dict(momentum=None), dict(affine=False), dict(track_running_stats=False),
                                dict(eps=1e-3, momentum=0.3)])
def test_training_and_eval_as_torch(kw):
    ma, mt = rg.nn.BatchNorm3d(3, dtype=rg.float64, **kw), torch.nn.BatchNorm3d(3, dtype=torch.float64, **kw)
    assert repr(ma) == repr(mt)
    if ma.weight is not None:
        w, b = RNG.standard_normal(3), RNG.standard_normal(3)
        with rg.no_grad():
            ma.weight.copy_(rg.tensor(w))
            ma.bias.copy_(rg.tensor(b))
        with torch.no_grad():
            mt.weight.copy_(torch.tensor(w))
            mt.bias.copy_(torch.tensor(b))
    for _ in range(2):
        x = RNG.standard_normal((2, 3, 3, 4, 5)) * 2 + 1
        xa, xt = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yt = ma(xa), mt(xt)
        _close(ya.detach().numpy(), yt.detach().numpy())
        seed = RNG.standard_normal(x.shape)
        ya.backward(rg.tensor(seed))
        yt.backward(torch.tensor(seed))
        _close(xa.grad.numpy(), xt.grad.numpy())
        if ma.weight is not None:
            _close(ma.weight.grad.numpy(), mt.weight.grad.numpy())
            _close(ma.bias.grad.numpy(), mt.bias.grad.numpy())
    if ma.running_mean is not None:
        _close(ma.running_mean.numpy(), mt.running_mean.numpy())
        _close(ma.running_var.numpy(), mt.running_var.numpy())
        assert int(ma.num_batches_tracked) == int(mt.num_batches_tracked) == 2
    ma.eval()
    mt.eval()
    x = RNG.standard_normal((1, 3, 2, 2, 2))
    _close(ma(rg.tensor(x)).detach().numpy(), mt(torch.tensor(x)).detach().numpy())


@pytest.mark.float32_default
def test_default_dtype_and_state_dict_keys():
    m = rg.nn.BatchNorm3d(4)
    assert m.weight.dtype == rg.float32 and m.running_var.dtype == rg.float32
    assert m.num_batches_tracked.dtype == rg.int64
    assert list(m.state_dict()) == list(torch.nn.BatchNorm3d(4).state_dict())


def test_gradcheck():
    m = rg.nn.BatchNorm3d(2, dtype=rg.float64)
    x = rg.tensor(RNG.standard_normal((2, 2, 2, 2, 3)), requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: m(t), (x,))


def test_rank_errors_as_torch():
    for shape in ((2, 3, 4, 5), (3, 4, 5, 6, 7, 8)):
        with pytest.raises(ValueError, match="expected 5D input"):
            torch.nn.BatchNorm3d(3)(torch.zeros(shape))
        with pytest.raises(ValueError, match=f"expected 5D input \\(got {len(shape)}D input\\)"):
            rg.nn.BatchNorm3d(3)(rg.zeros(shape))
