"""rg.gradient (torch.gradient), rg.set_default_device / rg.get_default_device
and rg.thread_safe_generator, against torch."""
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd.core import _creation

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

R = np.random.default_rng(0)


def _coords(n, seed):
    return np.cumsum(np.random.default_rng(seed).random(n) + 0.5)


# (input shape, keyword arguments as NumPy/Python values; a list of arrays is a list of coordinate tensors)
GRADIENT_CASES = [
    ((6,), {}),
    ((6,), {"edge_order": 2}),
    ((4, 5), {}),
    ((4, 5), {"spacing": 0.5, "edge_order": 2}),
    ((4, 5), {"spacing": [2.0, 0.25]}),
    ((4, 5), {"spacing": 3, "dim": -1}),
    ((4, 5), {"spacing": [1.5], "dim": 0, "edge_order": 2}),
    ((3, 4, 5), {"dim": [2, 0]}),
    ((3, 4, 5), {"spacing": 2.0, "dim": (1, 2), "edge_order": 2}),
    ((4, 5), {"spacing": [_coords(4, 1), _coords(5, 2)]}),
    ((4, 5), {"spacing": [_coords(5, 3)], "dim": 1, "edge_order": 2}),
    ((3, 4, 5), {"spacing": [_coords(3, 4), _coords(5, 5)], "dim": [0, 2], "edge_order": 2}),
    ((2, 5), {"dim": 0}),
]


def _kw(lib, kw):
    out = dict(kw)
    if isinstance(kw.get("spacing"), list) and isinstance(kw["spacing"][0], np.ndarray):
        out["spacing"] = [lib.tensor(c) for c in kw["spacing"]]
    return out


@pytest.mark.parametrize("shape,kw", GRADIENT_CASES)
def test_gradient_values_and_gradients_match_torch(shape, kw):
    x = R.standard_normal(shape)
    xt, xr = torch.tensor(x, requires_grad=True), rg.tensor(x, requires_grad=True)
    out_t, out_r = torch.gradient(xt, **_kw(torch, kw)), rg.gradient(xr, **_kw(rg, kw))
    assert isinstance(out_r, tuple) and len(out_r) == len(out_t)
    for a, b in zip(out_t, out_r):
        assert b.dtype == np.float64 and tuple(b.shape) == tuple(a.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12, atol=1e-12)
    seeds = [R.standard_normal(shape) for _ in out_t]
    (gt,) = torch.autograd.grad(list(out_t), [xt], [torch.tensor(s) for s in seeds])
    (gr,) = rg.autograd.grad(list(out_r), [xr], [rg.tensor(s) for s in seeds])
    np.testing.assert_allclose(gr.numpy(), gt.numpy(), rtol=1e-12, atol=1e-12)


def test_gradient_flows_to_the_coordinates_and_passes_gradcheck():
    x = R.standard_normal((4, 5))
    c = _coords(5, 6)
    xt, ct = torch.tensor(x, requires_grad=True), torch.tensor(c, requires_grad=True)
    xr, cr = rg.tensor(x, requires_grad=True), rg.tensor(c, requires_grad=True)
    for order in (1, 2):
        (gt,) = torch.gradient(xt, spacing=[ct], dim=1, edge_order=order)
        (gr,) = rg.gradient(xr, spacing=[cr], dim=1, edge_order=order)
        seed = R.standard_normal((4, 5))
        a = torch.autograd.grad(gt, [xt, ct], torch.tensor(seed))
        b = rg.autograd.grad(gr, [xr, cr], rg.tensor(seed))
        for u, v in zip(a, b):
            np.testing.assert_allclose(v.numpy(), u.numpy(), rtol=1e-10, atol=1e-12)
    assert rg.autograd.gradcheck(lambda t: rg.gradient(t, spacing=0.7, edge_order=2), (xr,))


def test_gradient_dtypes_match_torch():
    xi = np.arange(20).reshape(4, 5) ** 2
    for kw in ({}, {"spacing": 2}, {"edge_order": 2}):
        for a, b in zip(torch.gradient(torch.tensor(xi), **kw), rg.gradient(rg.tensor(xi), **kw)):
            assert b.dtype == np.float64                        # the test suite's default dtype
            np.testing.assert_allclose(b.numpy(), a.numpy().astype(np.float64), rtol=1e-6)
    x32 = R.standard_normal((4, 3)).astype(np.float32)
    c64 = _coords(4, 7)
    for order in (1, 2):
        (a,) = torch.gradient(torch.tensor(x32), spacing=[torch.tensor(c64)], dim=0, edge_order=order)
        (b,) = rg.gradient(rg.tensor(x32), spacing=[rg.tensor(c64)], dim=0, edge_order=order)
        assert a.dtype == torch.float64 and b.dtype == np.float64
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6)
    z = R.standard_normal(5) + 1j * R.standard_normal(5)
    (a,) = torch.gradient(torch.tensor(z), spacing=0.5)
    (b,) = rg.gradient(rg.tensor(z), spacing=0.5)
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)
    assert rg.gradient(rg.tensor(1.0)) == () == torch.gradient(torch.tensor(1.0))


@pytest.mark.parametrize("kw,cls,piece", [
    ({"edge_order": 3}, RuntimeError, "only supports edge_order=1 and edge_order=2"),
    ({"spacing": [1.0]}, RuntimeError, "a list of length equal to 'self.dim\\(\\) = 2'"),
    ({"spacing": [1.0, 2.0], "dim": 1}, RuntimeError, "spacing and dim arguments to have the same length"),
    ({"dim": [1, -1]}, RuntimeError, "dim 1 appears multiple times in the list of dims"),
    ({"dim": 2}, IndexError, "Dimension out of range"),
    ({"dim": [0], "edge_order": 2}, RuntimeError, "each dimension size to be at least edge_order\\+1"),
    ({"spacing": "coords2d"}, RuntimeError, "each element of spacing to have one dimension"),
    ({"spacing": "one tensor"}, TypeError, "spacing"),
])
def test_gradient_errors_as_torch(kw, cls, piece):
    x = np.zeros((2, 5))
    for lib in (torch, rg):
        args = dict(kw)
        if kw.get("spacing") == "coords2d":
            args["spacing"] = [lib.ones(2, 1), lib.ones(5)]
        elif kw.get("spacing") == "one tensor":
            args["spacing"] = lib.arange(5.0)
        with pytest.raises(cls, match=piece):
            lib.gradient(lib.tensor(x), **args)
    with pytest.raises(RuntimeError, match="does not support uint8"):
        rg.gradient(rg.tensor(np.ones(4, dtype=np.uint8)))
    with pytest.raises(TypeError):
        rg.gradient(rg.zeros(4), 2.0)                         # spacing is keyword-only, as torch's


# --- the default device --------------------------------------------------------------------------------

@pytest.fixture
def one_virtual_device():
    rg.set_virtual_cpu_devices(1)
    yield rg.device("cpu:1")
    rg.set_default_device(None)
    rg.set_virtual_cpu_devices(0)


def test_factories_use_the_default_device(one_virtual_device):
    dev = one_virtual_device
    assert rg.get_default_device() == "cpu"
    rg.set_default_device("cpu:1")
    assert rg.get_default_device() is dev
    cpu_tensor = rg.tensor([1.0, 2.0], device="cpu")
    made = {
        "zeros": rg.zeros(2), "ones": rg.ones(2, 3), "empty": rg.empty(2), "full": rg.full((2,), 1.5),
        "rand": rg.rand(2), "randn": rg.randn(2), "randint": rg.randint(0, 5, (3,)), "randperm": rg.randperm(4),
        "arange": rg.arange(4), "linspace": rg.linspace(0, 1, 3), "logspace": rg.logspace(0, 1, 3),
        "eye": rg.eye(2), "tensor": rg.tensor([1.0]), "tensor of a tensor": rg.tensor(cpu_tensor),
        "as_tensor": rg.as_tensor(np.ones(2)), "as_tensor of a tensor": rg.as_tensor(cpu_tensor),
        "scalar_tensor": rg.scalar_tensor(2.0), "hann_window": rg.hann_window(4),
        "tril_indices": rg.tril_indices(3, 3), "empty_strided": rg.empty_strided((2, 2), (2, 1)),
        "a layer's parameters": rg.nn.Linear(2, 2).weight,
    }
    for name, t in made.items():
        assert t.device is dev, name
    # not affected, as in torch: from_numpy and the *_like functions; an explicit device wins
    kept = {"from_numpy": rg.from_numpy(np.ones(2)), "zeros_like": rg.zeros_like(cpu_tensor),
            "rand_like": rg.rand_like(cpu_tensor), "explicit": rg.zeros(2, device="cpu")}
    for name, t in kept.items():
        assert t.device == "cpu", name
    rg.set_default_device(None)
    assert rg.zeros(1).device == "cpu" and rg.get_default_device() == "cpu"


def test_torch_agrees_on_which_factories_follow_the_default():
    # torch's side of the test above, on its meta device
    cpu_tensor = torch.ones(2)
    torch.set_default_device("meta")
    try:
        assert torch.as_tensor(cpu_tensor).device.type == "meta"
        assert torch.tensor(cpu_tensor.tolist()).device.type == "meta"
        assert torch.from_numpy(np.ones(2)).device.type == "cpu"
        assert torch.zeros_like(cpu_tensor).device.type == "cpu"
    finally:
        torch.set_default_device(None)


def test_the_default_device_is_per_thread(one_virtual_device):
    rg.set_default_device("cpu:1")
    seen = []
    worker = threading.Thread(target=lambda: seen.append((rg.zeros(1).device, rg.get_default_device())))
    worker.start()
    worker.join()
    assert seen == [(rg.device("cpu"), rg.device("cpu"))]
    assert rg.zeros(1).device is one_virtual_device


def test_device_context_hooks(one_virtual_device):
    # what `with rg.device(d):` runs (Device.__enter__ / __exit__): d is the default inside, the old one after
    _creation._enter_device_context(one_virtual_device)
    try:
        assert rg.ones(1).device is one_virtual_device
        _creation._enter_device_context("cpu")
        assert rg.ones(1).device == "cpu"
        _creation._exit_device_context()
        assert rg.get_default_device() is one_virtual_device
    finally:
        _creation._exit_device_context()
    assert rg.get_default_device() == "cpu"


def test_cuda_default_device_fails_as_a_factory_does():
    try:
        rg.zeros(1, device="cuda")
        expected = None
    except Exception as exc:        # no CuPy or no GPU here: the factory's error
        expected = exc
    if expected is None:
        rg.set_default_device("cuda")
        try:
            assert rg.zeros(1).device == "cuda:0"
        finally:
            rg.set_default_device(None)
        return
    with pytest.raises(type(expected)) as info:
        rg.set_default_device("cuda")
    assert str(info.value) == str(expected)
    assert rg.get_default_device() == "cpu"
    with pytest.raises(RuntimeError, match="virtual CPU device"):
        rg.set_default_device("cpu:7")
    with pytest.raises(ValueError, match="unknown device type"):
        rg.set_default_device("bogus")


# --- thread_safe_generator -----------------------------------------------------------------------------

def test_thread_safe_generator_is_none_outside_thread_workers(monkeypatch):
    from retrograd.utils.data import _worker
    assert rg.thread_safe_generator() is None and torch.thread_safe_generator() is None
    monkeypatch.setattr(_worker, "_worker_info", _worker.WorkerInfo(id=0, num_workers=1, seed=0, dataset=None))
    assert rg.thread_safe_generator() is None                 # a worker process: None, as torch's

    class _Rng:
        torch_generator = np.random.default_rng(0)
    threaded = _worker.WorkerInfo(id=0, num_workers=1, seed=0, dataset=None, rng=_Rng(), worker_method="thread")
    monkeypatch.setattr(_worker, "_worker_info", threaded)
    assert rg.thread_safe_generator() is _Rng.torch_generator
