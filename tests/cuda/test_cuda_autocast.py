"""rg.autocast("cuda"): torch's CUDA lists, which differ from the CPU's
(exp, softmax, sum, layer_norm to float32; addmv, einsum, the RNN cells to
float16), and binary_cross_entropy refused as torch refuses it. Runs on a GPU,
or on the CPU stand-in tests/cuda/fake_cupy."""
import numpy as np
import pytest

from _cuda import assert_on_cuda, host, require_cuda

cp = require_cuda()

pytestmark = pytest.mark.float32_default

import retrograd as rg  # noqa: E402
import retrograd.nn.functional as F  # noqa: E402


def _cuda(*shape, seed=0):
    return rg.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), device="cuda")


@pytest.mark.parametrize("name,fn,want", [
    ("matmul", lambda a, b: a @ b, "float16"),
    ("linear", lambda a, b: F.linear(a, b.T), "float16"),
    ("einsum", lambda a, b: rg.einsum("ij,jk->ik", a, b), "float16"),
    ("exp", lambda a, b: rg.exp(a), "float32"),
    ("softmax", lambda a, b: rg.softmax(a.half(), 1), "float32"),
    ("sum", lambda a, b: a.half().sum(), "float32"),
    ("layer_norm", lambda a, b: F.layer_norm(a.half(), (3,)), "float32"),
    ("mse_loss", lambda a, b: F.mse_loss(a.half(), a.half()), "float32"),
    ("relu", lambda a, b: F.relu(a), "float32"),        # unlisted: the input's dtype
])
def test_cuda_lists(name, fn, want):
    a, b = _cuda(2, 3), _cuda(3, 4, seed=1)
    with rg.autocast("cuda"):
        out = fn(a, b)
    assert str(out.dtype) == want, name
    assert_on_cuda(out)
    with rg.autocast("cuda", enabled=False):
        # off: the inputs' dtype (float16 where the case casts to half itself)
        assert str(fn(a, b).dtype) == ("float16" if name in ("softmax", "sum", "layer_norm", "mse_loss")
                                       else "float32")


def test_cuda_gradients_reach_float32_weights():
    w = _cuda(3, 4).requires_grad_()
    x = _cuda(2, 3, seed=2)
    with rg.autocast("cuda"):
        y = x @ w
        loss = y.float().pow(2).sum()
    assert y.dtype == np.float16
    loss.backward()
    assert w.grad.dtype == np.float32
    assert_on_cuda(w.grad, "the gradient")
    expect = host(x).T.astype(np.float64) @ (2 * host(y).astype(np.float64))
    np.testing.assert_allclose(host(w.grad), expect, rtol=1e-2, atol=1e-2)


def test_cuda_binary_cross_entropy_is_refused():
    p = _cuda(4).sigmoid()
    t = rg.tensor(np.array([0.0, 1.0, 1.0, 0.0], np.float32), device="cuda")
    with rg.autocast("cuda"):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, t)
        assert F.binary_cross_entropy_with_logits(p, t).dtype == np.float32


def test_cpu_tensors_follow_the_cpu_region_only():
    with rg.autocast("cuda"):
        assert (rg.ones(2, 2) @ rg.ones(2, 2)).dtype == np.float32
