"""nn.DataParallel and torch.nn.parallel's replicate / scatter / parallel_apply /
gather / data_parallel over virtual CPU devices: outputs and parameter (and
input) gradients equal to the plain module's, uneven and tiny batches, other
dims, structured inputs and outputs, buffers, no_grad, the single-device and
no-device cases, and the errors."""
import collections
import copy
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.parallel as par


def _net():
    rg.manual_seed(0)
    return rg.nn.Sequential(rg.nn.Linear(3, 5), rg.nn.Tanh(), rg.nn.Linear(5, 2))


def _grads(module):
    return {n: p.grad.numpy().copy() for n, p in module.named_parameters()}


@pytest.mark.parametrize("batch", [6, 5, 2])
def test_outputs_and_gradients_equal_the_plain_module(virtual_cpu_devices, batch):
    net, ref = _net(), _net()
    dp = rg.nn.parallel.DataParallel(net)
    assert dp.device_ids == [0, 1, 2] and dp.output_device == 0 and dp.dim == 0
    data = np.random.default_rng(batch).standard_normal((batch, 3))
    x, xr = rg.tensor(data, requires_grad=True), rg.tensor(data, requires_grad=True)
    y = dp(x)
    yr = ref(xr)
    assert y.device == rg.device("cpu") and y.shape == yr.shape
    np.testing.assert_allclose(y.detach().numpy(), yr.detach().numpy(), rtol=1e-12, atol=1e-14)
    seed = rg.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
    y.backward(seed)
    yr.backward(seed)
    ours, want = _grads(net), _grads(ref)
    assert ours.keys() == want.keys()
    for name in want:
        np.testing.assert_allclose(ours[name], want[name], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), xr.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_training_steps_match(virtual_cpu_devices):
    net, ref = _net(), _net()
    dp = par.DataParallel(net, device_ids=["cpu", "cpu:1", "cpu:2"])
    opt, opt_ref = rg.optim.SGD(net.parameters(), lr=0.1), rg.optim.SGD(ref.parameters(), lr=0.1)
    rng = np.random.default_rng(3)
    for _ in range(3):
        x, t = rg.tensor(rng.standard_normal((8, 3))), rg.tensor(rng.standard_normal((8, 2)))
        for model, o in ((dp, opt), (ref, opt_ref)):
            o.zero_grad()
            rg.nn.functional.mse_loss(model(x), t).backward()
            o.step()
    for (name, p), q in zip(net.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-14, err_msg=name)


def test_other_dim_and_output_device(virtual_cpu_devices):
    net = rg.nn.Linear(4, 3)
    dp = par.DataParallel(net, device_ids=[0, 2], output_device="cpu:1", dim=1)
    assert dp.device_ids == [0, 2] and dp.output_device == 1
    x = rg.randn(2, 5, 4)
    y = dp(x)
    assert y.device == rg.device("cpu:1")
    np.testing.assert_allclose(y.cpu().detach().numpy(), net(x).detach().numpy(), rtol=1e-12)


def test_structured_inputs_and_outputs(virtual_cpu_devices):
    Pair = collections.namedtuple("Pair", "a b")

    class Net(rg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = rg.nn.Linear(2, 2)

        def forward(self, x, extra, scale=1.0, *, aux):
            assert extra == "tag"                  # non-tensor arguments are repeated for each replica
            return {"out": self.lin(x) * scale, "pair": Pair(x.sum(1), aux * 2), "none": None}

    net = Net()
    dp = par.DataParallel(net, device_ids=[0, 1])
    x, aux = rg.randn(4, 2), rg.randn(4, 3)
    out = dp(x, "tag", scale=3.0, aux=aux)
    np.testing.assert_allclose(out["out"].detach().numpy(), (net.lin(x) * 3.0).detach().numpy(), rtol=1e-12)
    assert isinstance(out["pair"], Pair) and out["none"] is None
    np.testing.assert_allclose(out["pair"].b.numpy(), (aux * 2).numpy())


def test_scalar_outputs_become_a_vector(virtual_cpu_devices):
    class Loss(rg.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = rg.nn.Parameter(rg.ones(2))

        def forward(self, x):
            return (x * self.w).sum()

    m = Loss()
    dp = par.DataParallel(m)
    x = rg.arange(12.0).reshape(6, 2)
    with pytest.warns(UserWarning, match="all input tensors were scalars"):
        y = dp(x)
    assert y.shape == (3,)
    np.testing.assert_allclose(y.detach().numpy(), [6.0, 22.0, 38.0])
    y.sum().backward()
    np.testing.assert_allclose(m.w.grad.numpy(), x.sum(0).numpy())


def test_buffers_follow_the_first_replica(virtual_cpu_devices):
    net = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.BatchNorm1d(4))
    ref = copy.deepcopy(net)
    dp = par.DataParallel(net)
    x = rg.randn(9, 3)
    y = dp(x)
    # each replica normalises its own chunk with its own statistics
    expected = rg.cat([copy.deepcopy(ref)(x[i:i + 3]) for i in (0, 3, 6)])
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    # in-place buffer updates by the replica on device_ids[0] reach the module, the others are dropped
    ref(x[:3])
    np.testing.assert_allclose(net[1].running_mean.numpy(), ref[1].running_mean.numpy(), rtol=1e-12)
    assert int(net[1].num_batches_tracked) == 1


def test_no_grad_forward(virtual_cpu_devices):
    net = _net()
    dp = par.DataParallel(net)
    with rg.no_grad():
        y = dp(rg.randn(6, 3))
    assert not y.requires_grad and y.grad_fn is None


def test_single_device_calls_the_module(virtual_cpu_devices):
    net = _net()
    dp = par.DataParallel(net, device_ids=[1])
    assert net[0].weight.device == rg.device("cpu:1")        # moved to device_ids[0], as torch
    x = rg.randn(4, 3, device="cpu:1")
    y = dp(x)
    assert y.device == rg.device("cpu:1") and y.grad_fn is not None
    np.testing.assert_allclose(y.detach().numpy(), net(x).detach().numpy())


def test_without_devices_it_is_the_module():
    prev = rg.num_virtual_cpu_devices()
    rg.set_virtual_cpu_devices(0)
    try:
        if rg.cuda.is_available():
            pytest.skip("a CUDA device is available")
        net = _net()
        dp = par.DataParallel(net, device_ids=[0, 1])
        assert dp.device_ids == [] and dp.module is net
        x = rg.randn(3, 3)
        np.testing.assert_allclose(dp(x).detach().numpy(), net(x).detach().numpy())
        with pytest.raises(RuntimeError, match="device type could not be determined"):
            par.data_parallel(net, x)
    finally:
        rg.set_virtual_cpu_devices(prev)


def test_replicate(virtual_cpu_devices):
    net = _net()
    net[2].weight.requires_grad_(False)
    reps = par.replicate(net, [0, 1, 2])
    assert len(reps) == 3 and all(list(r.parameters()) == [] for r in reps)
    assert [r[0].weight.device for r in reps] == [rg.device("cpu"), rg.device("cpu:1"), rg.device("cpu:2")]
    assert reps[1][0].weight.grad_fn is not None and not reps[1][2].weight.requires_grad
    assert type(reps[1]) is rg.nn.Sequential and type(reps[1][1]) is rg.nn.Tanh
    np.testing.assert_allclose(reps[2][0].weight.detach().numpy(), net[0].weight.detach().numpy())
    detached = par.replicate(net, [0, 1], detach=True)
    assert detached[1][0].weight.grad_fn is None
    assert par.replicate(net, []) == []
    # the original module is untouched
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_scatter_and_gather(virtual_cpu_devices):
    x = rg.arange(10.0, requires_grad=True)
    parts = par.scatter(x, [0, 1, 2])
    assert [p.shape for p in parts] == [(4,), (4,), (2,)]
    assert [str(p.device) for p in parts] == ["cpu", "cpu:1", "cpu:2"]
    back = par.gather([p * (i + 1) for i, p in enumerate(parts)], -1)
    back.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 1, 1, 2, 2, 2, 2, 3, 3])
    assert par.scatter({"k": 5}, [0, 1]) == [{"k": 5}, {"k": 5}]
    with pytest.raises(ValueError, match="same number of keys"):
        par.gather([{"a": rg.ones(1)}, {"a": rg.ones(1), "b": rg.ones(1)}], 0)
    with pytest.raises(RuntimeError, match="at least a 1-dimensional"):
        par.scatter(rg.tensor(1.0), [0, 1])


@pytest.mark.oracle
def test_scatter_pieces_are_torch_chunks(virtual_cpu_devices):
    torch = pytest.importorskip("torch")
    for n in (0, 1, 5, 7, 9):
        for k in (1, 2, 3):
            ours = [p.shape[0] for p in par.scatter(rg.zeros(n, 2), list(range(k)))]
            assert ours == [c.shape[0] for c in torch.zeros(n, 2).chunk(k)], (n, k)


def test_parallel_apply(virtual_cpu_devices):
    reps = par.replicate(rg.nn.Identity(), [0, 1])
    outs = par.parallel_apply(reps, [(rg.ones(1),), rg.zeros(1, device="cpu:1")], None, ["cpu", 1])
    assert [str(o.device) for o in outs] == ["cpu", "cpu:1"]
    with pytest.raises(AssertionError, match="number of inputs"):
        par.parallel_apply(reps, [rg.ones(1)])

    class Boom(rg.nn.Module):
        def forward(self, x):
            raise KeyError("no such key")

    with pytest.raises(KeyError, match="in replica 0 on device cpu"):
        par.parallel_apply([Boom(), Boom()], [rg.ones(1), rg.ones(1)])
    with pytest.raises(RuntimeError, match="no tensor input was found"):
        par.parallel_apply([Boom(), Boom()], [1, 2])


def test_data_parallel_function(virtual_cpu_devices):
    net, ref = _net(), _net()
    x = rg.randn(5, 3)
    y = par.data_parallel(net, x, [0, 1], output_device=1)
    assert y.device == rg.device("cpu:1")
    np.testing.assert_allclose(y.cpu().detach().numpy(), ref(x).detach().numpy(), rtol=1e-12)
    y.sum().backward()
    ref(x).sum().backward()
    for name, g in _grads(ref).items():
        np.testing.assert_allclose(_grads(net)[name], g, rtol=1e-12, atol=1e-14)


def test_errors(virtual_cpu_devices):
    net = _net()
    dp = par.DataParallel(net, device_ids=[1, 2])
    with pytest.raises(RuntimeError, match=r"on device cpu:1 \(device_ids\[0\]\) but found one of them on device: cpu"):
        dp(rg.randn(4, 3))
    with pytest.raises(RuntimeError, match="device_ids\\[0\\]"):
        par.data_parallel(net, rg.randn(4, 3), [1, 2])
    if not rg.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            par.DataParallel(net, device_ids=["cuda:0", "cuda:1"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        par.DataParallel(_net())(rg.randn(3, 3))       # no warning on an ordinary call
