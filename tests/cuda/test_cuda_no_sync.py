"""No host synchronization in the hot path: a training step on CUDA (forward,
loss, backward, optimizer step) must never read device memory from the
host, since each read waits for every queued kernel. The CPU stand-in
records each host read (get, item, bool, float, ...) in cupy.cuda._log; a
read that is asked for (loss.item()) is the only one allowed."""
import numpy as np
import pytest

from _cuda import require_cuda

cp = require_cuda()

import retrograd as rg  # noqa: E402
import retrograd.nn.functional as F  # noqa: E402

pytestmark = pytest.mark.skipif(not getattr(cp, "_FAKE", False),
                                reason="counts the host reads the CPU stand-in records")


def _host_reads(fn):
    cp.cuda._log.clear()
    fn()
    reads = [what for verb, _, what in cp.cuda._log if verb == "host_read"]
    cp.cuda._log.clear()
    return reads


def _model(dtype):
    rg.manual_seed(0)
    return rg.nn.Sequential(rg.nn.Linear(8, 16, dtype=dtype), rg.nn.ReLU(), rg.nn.Linear(16, 16, dtype=dtype),
                            rg.nn.GELU(), rg.nn.Linear(16, 4, dtype=dtype)).to("cuda")


@pytest.mark.parametrize("opt", [lambda p: rg.optim.SGD(p, lr=0.1, momentum=0.9),
                                 lambda p: rg.optim.Adam(p, lr=1e-3), lambda p: rg.optim.AdamW(p, lr=1e-3)],
                         ids=["sgd", "adam", "adamw"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mlp_training_step(opt, dtype):
    model = _model(dtype)
    optimizer = opt(model.parameters())
    x = rg.randn(32, 8, device="cuda", dtype=dtype)
    y = rg.randint(0, 4, (32,), device="cuda")

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    step()                              # first step: optimizer state is created
    assert _host_reads(step) == []
    # asking for the loss is one read, the one asked for
    assert _host_reads(lambda: F.cross_entropy(model(x), y).item()) == ["item"]


def test_conv_step():
    rg.manual_seed(0)
    model = rg.nn.Sequential(rg.nn.Conv2d(1, 4, 3, padding=1), rg.nn.ReLU(), rg.nn.MaxPool2d(2),
                             rg.nn.Flatten(), rg.nn.Linear(4 * 4 * 4, 3)).to("cuda")
    optimizer = rg.optim.SGD(model.parameters(), lr=0.1)
    x = rg.randn(5, 1, 8, 8, device="cuda")
    y = rg.randint(0, 3, (5,), device="cuda")

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    step()
    assert _host_reads(step) == []


def test_elementwise_chain_and_grad_modes():
    x = rg.randn(64, device="cuda", requires_grad=True)

    def run():
        y = x
        for _ in range(20):
            y = (y.tanh() * 1.01 + y.sigmoid()).relu()
        y.sum().backward()
        with rg.no_grad():
            x.sub_(0.1 * x.grad)
        x.grad = None
    assert _host_reads(run) == []


def test_branch_free_loss_forms_match_the_cpu():
    # every target ignored: torch's NaN loss with zero gradients, computed
    # on the device without reading the weight sum on the host
    logits = np.random.default_rng(0).standard_normal((4, 3))
    target = np.full(4, -100)
    results = []
    for device in ("cpu", "cuda"):
        x = rg.tensor(logits, device=device, requires_grad=True)
        loss = F.cross_entropy(x, rg.tensor(target, device=device))
        loss.backward()
        results.append((loss.item(), x.grad.cpu().numpy()))
    assert np.isnan(results[0][0]) and np.isnan(results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    np.testing.assert_array_equal(results[1][1], np.zeros((4, 3)))


def test_out_of_range_target_poisons_the_cuda_loss():
    # the CPU raises torch's IndexError; the device cannot without a host
    # read, and gives NaN instead of a silently wrong value
    x = rg.randn(3, 4, device="cuda", requires_grad=True)
    loss = F.cross_entropy(x, rg.tensor([0, 7, 1], device="cuda"))
    assert _host_reads(lambda: loss.backward()) == []
    assert np.isnan(loss.item())
    assert np.isnan(x.grad.cpu().numpy()[1]).all()
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(rg.randn(3, 4), rg.tensor([0, 7, 1]))


def test_max_pool_backward_with_nan_and_ties_on_the_device():
    a = np.array([[[[1.0, 1.0, 0.0, 2.0], [0.0, np.nan, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0], [0.0, 0.0, 0.0, 0.0]]]])
    grads = []
    for device in ("cpu", "cuda"):
        x = rg.tensor(a, device=device, requires_grad=True)
        y = F.max_pool2d(x, 2)
        y.backward(rg.ones_like(y))
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
