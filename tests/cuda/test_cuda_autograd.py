"""Autograd on CUDA tensors (CuPy arrays): the engine's device worker,
accumulation, moves between devices, higher order, custom Functions, hooks,
saved-tensor hooks, gradcheck, forward AD, nn.functional and errors, each
compared with the same computation on the CPU."""
import threading

import numpy as np
import pytest

from _cuda import assert_on_cuda, host, require_cuda

cp = require_cuda()

import retrograd as rg  # noqa: E402
import retrograd.nn.functional as F  # noqa: E402


def _pair(a, requires_grad=True):
    """The same leaf values on the CPU and on the GPU."""
    return (rg.tensor(a, requires_grad=requires_grad),
            rg.tensor(a, device="cuda", requires_grad=requires_grad))


def _close(gpu, cpu, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(host(gpu), np.asarray(cpu._array), rtol=rtol, atol=atol)


RNG = np.random.default_rng(0)


# --- tensors on the device ---------------------------------------------------------

def test_creation_and_moves():
    a = RNG.standard_normal((3, 4))
    t = rg.tensor(a, device="cuda")
    assert_on_cuda(t)
    assert t.device == rg.device("cuda:0") and str(t.device) == "cuda:0"
    assert t.dtype == np.float64 and t.shape == (3, 4)
    np.testing.assert_array_equal(host(t), a)
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    assert t.to("cpu").device == rg.device("cpu")
    assert_on_cuda(rg.tensor(a).cuda())
    assert_on_cuda(rg.tensor(a).to("cuda:0", np.float32))
    assert rg.tensor(a).to("cuda:0", np.float32).dtype == np.float32
    for make in (rg.zeros, rg.ones, rg.randn, rg.rand, rg.empty):
        assert_on_cuda(make(2, 3, device="cuda"), make.__name__)
    # a CuPy array: as_tensor shares it, tensor copies it, both stay on the device
    c = cp.arange(6.0)
    shared = rg.as_tensor(c)
    assert_on_cuda(shared)
    assert shared._array is c
    copied = rg.tensor(c)
    assert_on_cuda(copied)
    assert copied._array is not c
    np.testing.assert_array_equal(host(copied), np.arange(6.0))
    # torch.tensor(cuda tensor) stays on its device
    assert_on_cuda(rg.tensor(t))
    assert rg.tensor(t, device="cpu").device == rg.device("cpu")


def test_scalars_and_conversions():
    t = rg.tensor([[1.5, 2.0]], device="cuda")
    assert t.tolist() == [[1.5, 2.0]]
    assert rg.tensor([2.5], device="cuda").item() == 2.5
    with pytest.raises(TypeError, match="cuda"):
        t.numpy()
    np.testing.assert_array_equal(t.numpy(force=True), [[1.5, 2.0]])
    assert "device='cuda:0'" in repr(t)


def test_ops_on_two_devices_raise():
    a = rg.randn(3, device="cuda")
    b = rg.randn(3)
    with pytest.raises(RuntimeError, match="same device"):
        a + b
    with pytest.raises(RuntimeError, match="same device"):
        rg.matmul(rg.randn(2, 2, device="cuda"), rg.randn(2, 2))


def test_zero_dim_cpu_tensor_joins_a_cuda_op():
    # as torch: a 0-d CPU tensor acts as a scalar in a CUDA op, and gets its gradient on the CPU
    a_c, a_g = _pair(RNG.standard_normal(4))
    s_c, s_g = rg.tensor(1.5, requires_grad=True), rg.tensor(1.5, requires_grad=True)   # both on the CPU
    y_g = a_g * s_g
    assert_on_cuda(y_g)
    (a_c * s_c).sum().backward()
    y_g.sum().backward()
    _close(a_g.grad, a_c.grad)
    assert s_g.grad.device == rg.device("cpu")
    np.testing.assert_allclose(np.asarray(s_g.grad._array), np.asarray(s_c.grad._array), rtol=1e-12)


# --- backward ------------------------------------------------------------------------

def test_backward_accumulates_on_the_device():
    a = RNG.standard_normal((5, 3))
    x_c, x_g = _pair(a)
    for _ in range(2):                       # the second backward accumulates into .grad
        (x_c.sin() * x_c).sum().backward()
        (x_g.sin() * x_g).sum().backward()
    assert_on_cuda(x_g.grad, "x.grad")
    _close(x_g.grad, x_c.grad)


def test_fan_in_sums_on_the_device():
    x_c, x_g = _pair(RNG.standard_normal(16).astype(np.float32))
    for x in (x_c, x_g):
        y = sum((x * float(k)).exp() for k in range(1, 5))
        y.sum().backward()
    assert x_g.grad.dtype == np.float32
    _close(x_g.grad, x_c.grad, rtol=1e-5, atol=1e-6)


def test_nodes_run_on_the_device_worker():
    # torch's engine: CUDA nodes run on the device's worker thread, CPU nodes on the caller's
    caller = threading.get_ident()
    seen = {}
    xg = rg.randn(3, device="cuda", requires_grad=True)
    xc = rg.randn(3, requires_grad=True)
    xg.register_hook(lambda g: seen.update(cuda=threading.get_ident()))
    xc.register_hook(lambda g: seen.update(cpu=threading.get_ident()))
    ((xg * 2).sum().cpu() + (xc * 3).sum()).backward()
    assert seen["cpu"] == caller
    assert seen["cuda"] != caller
    np.testing.assert_array_equal(host(xg.grad), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(xc.grad.numpy(), [3.0, 3.0, 3.0])


def test_gradient_flows_across_devices():
    a = RNG.standard_normal((4, 4))
    x_c, x_g = _pair(a)
    # cpu leaf -> cuda -> cpu, and cuda leaf -> cpu -> cuda
    y = (x_c.cuda().tanh() @ x_c.cuda()).cpu().sum()
    y.backward()
    ref = rg.tensor(a, requires_grad=True)
    (ref.tanh() @ ref).sum().backward()
    np.testing.assert_allclose(x_c.grad.numpy(), ref.grad.numpy(), rtol=1e-10)
    assert x_c.grad.device == rg.device("cpu")
    ((x_g.cpu().exp()).cuda() * x_g).sum().backward()
    assert_on_cuda(x_g.grad)
    np.testing.assert_allclose(host(x_g.grad), np.exp(a) * (a + 1), rtol=1e-10)


def test_grad_retain_graph_and_inputs():
    x_c, x_g = _pair(RNG.standard_normal(6))
    w_c, w_g = _pair(RNG.standard_normal(6))
    gx = []
    for x, w in ((x_c, w_c), (x_g, w_g)):
        y = (x * w).exp().sum()
        gx += rg.autograd.grad(y, x, retain_graph=True)
        y.backward(inputs=[w])
    assert_on_cuda(gx[1])
    _close(gx[1], gx[0])
    _close(w_g.grad, w_c.grad)
    assert x_g.grad is None


def test_retain_grad_and_hooks():
    x_c, x_g = _pair(RNG.standard_normal(5))
    hs = []
    for x in (x_c, x_g):
        h = x * 3
        h.retain_grad()
        h.register_hook(lambda g: g * 2)
        (h ** 2).sum().backward()
        hs.append(h)
    assert_on_cuda(hs[1].grad)
    _close(hs[1].grad, hs[0].grad)
    _close(x_g.grad, x_c.grad)


def test_double_backward():
    x_c, x_g = _pair(RNG.standard_normal(5))
    out = []
    for x in (x_c, x_g):
        g, = rg.autograd.grad((x ** 3).sin().sum(), x, create_graph=True)
        g2, = rg.autograd.grad(g.sum(), x)
        out.append(g2)
    assert_on_cuda(out[1])
    _close(out[1], out[0])


def test_custom_function():
    class Cube(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

    x_c, x_g = _pair(RNG.standard_normal(4))
    for x in (x_c, x_g):
        Cube.apply(x).sum().backward()
    assert_on_cuda(x_g.grad)
    _close(x_g.grad, x_c.grad)


def test_gradcheck_and_gradgradcheck_on_cuda():
    x = rg.tensor(RNG.standard_normal((3, 3)), device="cuda", requires_grad=True)
    f = lambda a: (a @ a).tanh()          # noqa: E731
    assert rg.autograd.gradcheck(f, (x,))
    assert rg.autograd.gradcheck(f, (x,), fast_mode=True)
    assert rg.autograd.gradgradcheck(f, (x,))


def test_save_on_cpu():
    a = RNG.standard_normal(8)
    x_c, x_g = _pair(a)
    packed = []

    def pack(t):
        packed.append(type(t._array))
        return t
    with rg.autograd.graph.save_on_cpu():
        y_g = (x_g.exp() * x_g).sum()
    y_g.backward()
    (x_c.exp() * x_c).sum().backward()
    assert_on_cuda(x_g.grad)
    _close(x_g.grad, x_c.grad)
    with rg.autograd.graph.save_on_cpu(pin_memory=True):
        y_g = (x_g.sin() * x_g).sum()
    x_g.grad = None
    y_g.backward()
    np.testing.assert_allclose(host(x_g.grad), np.cos(a) * a + np.sin(a), rtol=1e-12)


def test_checkpoint():
    from retrograd.utils.checkpoint import checkpoint
    x_c, x_g = _pair(RNG.standard_normal((4, 4)))
    for x in (x_c, x_g):
        checkpoint(lambda t: (t @ t).relu().sum(), x, use_reentrant=False).backward()
    _close(x_g.grad, x_c.grad)


def test_forward_ad():
    fwAD = pytest.importorskip("retrograd.forward_ad")
    a, d = RNG.standard_normal(5), RNG.standard_normal(5)
    with fwAD.dual_level():
        x = fwAD.make_dual(rg.tensor(a, device="cuda"), rg.tensor(d, device="cuda"))
        y = (x.sin() * x).exp()
        p, t = fwAD.unpack_dual(y)
    assert_on_cuda(p)
    assert_on_cuda(t, "tangent")
    ya = np.exp(np.sin(a) * a)
    np.testing.assert_allclose(host(t), ya * (np.cos(a) * a + np.sin(a)) * d, rtol=1e-10)


def test_functional_jvp_and_jacobian():
    x = rg.tensor(RNG.standard_normal(3), device="cuda")
    jac = rg.autograd.functional.jacobian(lambda t: t.exp() * t.sum(), x)
    assert_on_cuda(jac)
    xc = rg.tensor(host(x))
    jc = rg.autograd.functional.jacobian(lambda t: t.exp() * t.sum(), xc)
    _close(jac, jc)


def test_profiler_with_cuda_activity():
    prof_mod = pytest.importorskip("retrograd.profiler")
    x = rg.randn(8, 8, device="cuda", requires_grad=True)
    with pytest.warns(UserWarning, match="CPU-side"):
        with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU, prof_mod.ProfilerActivity.CUDA]) as p:
            (x @ x).relu().sum().backward()
    names = {e.key for e in p.key_averages()}
    assert "aten::matmul" in names and any("MatmulBackward0" in n for n in names)


# --- nn.functional ---------------------------------------------------------------------

def _same_on_both(fn, *arrays, rtol=1e-9, atol=1e-11):
    pairs = [_pair(a) if a.dtype.kind == "f" else (rg.tensor(a), rg.tensor(a, device="cuda")) for a in arrays]
    outs = []
    for side in (0, 1):
        args = [p[side] for p in pairs]
        y = fn(*args)
        y.sum().backward()
        outs.append((y, [a.grad for a in args if a.requires_grad]))
    (yc, gc), (yg, gg) = outs
    assert_on_cuda(yg)
    _close(yg, yc, rtol, atol)
    for a, b in zip(gg, gc):
        assert_on_cuda(a, "gradient")
        _close(a, b, rtol, atol)


def test_conv2d_paths():
    x = RNG.standard_normal((2, 4, 9, 9))
    w = RNG.standard_normal((6, 4, 3, 3))
    b = RNG.standard_normal(6)
    _same_on_both(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, b)
    _same_on_both(lambda x, w: F.conv2d(x, w, stride=2, dilation=2, padding=2), x, w)
    _same_on_both(lambda x, w: F.conv2d(x, w, groups=2), x, RNG.standard_normal((6, 2, 3, 3)))
    _same_on_both(lambda x, w: F.conv1d(x, w, padding=1), RNG.standard_normal((2, 4, 11)),
                  RNG.standard_normal((5, 4, 3)))


def test_pools():
    x = RNG.standard_normal((2, 3, 8, 8))
    _same_on_both(lambda x: F.max_pool2d(x, 2), x)
    _same_on_both(lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), x)
    _same_on_both(lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False), x)
    relu = np.maximum(x, 0)                  # ties of zeros: the first maximum gets the gradient
    _same_on_both(lambda x: F.max_pool2d(x, 2), relu)


def test_losses():
    x = RNG.standard_normal((6, 5))
    t = np.array([0, 4, 2, 2, 1, 3])
    _same_on_both(lambda x, t: F.cross_entropy(x, t), x, t)
    _same_on_both(lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1, ignore_index=2), x, t)
    w = RNG.uniform(0.5, 2, 5)             # class weights (constants, as torch requires)
    _same_on_both(lambda x, t: F.cross_entropy(x, t, weight=rg.tensor(w, device=x.device)), x, t)
    _same_on_both(lambda x, t: F.cross_entropy(x, t, weight=rg.tensor(w, device=x.device), label_smoothing=0.2),
                  x, t)
    _same_on_both(lambda x, p: F.cross_entropy(x, p), x, RNG.dirichlet(np.ones(5), 6))
    _same_on_both(lambda x, t: F.nll_loss(F.log_softmax(x, 1), t, reduction="sum"), x, t)
    _same_on_both(lambda x, y: F.mse_loss(x, y), x, RNG.standard_normal((6, 5)))
    _same_on_both(lambda x, y: F.binary_cross_entropy_with_logits(x, y), x, RNG.uniform(size=(6, 5)))


def test_layer_norm_linear_embedding_softmax():
    x = RNG.standard_normal((4, 6))
    _same_on_both(lambda x, w, b: F.layer_norm(x, (6,), w, b), x, RNG.standard_normal(6), RNG.standard_normal(6))
    _same_on_both(lambda x, w, b: F.linear(x, w, b), x, RNG.standard_normal((3, 6)), RNG.standard_normal(3))
    _same_on_both(lambda i, w: F.embedding(i, w, padding_idx=1), np.array([[0, 1, 3], [3, 3, 2]]),
                  RNG.standard_normal((4, 5)))
    _same_on_both(lambda x: F.softmax(x, 1) * F.log_softmax(x, 0), x)
    _same_on_both(lambda x: F.gelu(x) + F.silu(x) + F.softplus(x) + F.relu(x), x)


def test_dropout_on_cuda_is_seeded_like_the_cpu():
    a = RNG.standard_normal((5, 7))
    x_c, x_g = _pair(a)
    rg.manual_seed(3)
    y_c = F.dropout(x_c, 0.4)
    rg.manual_seed(3)
    y_g = F.dropout(x_g, 0.4)
    assert_on_cuda(y_g)
    _close(y_g, y_c)
    y_g.sum().backward()
    y_c.sum().backward()
    _close(x_g.grad, x_c.grad)


def test_indexing_and_setitem():
    a = RNG.standard_normal((5, 4))
    x_c, x_g = _pair(a)
    for x in (x_c, x_g):
        idx = rg.tensor([0, 0, 3]) if x is x_c else rg.tensor([0, 0, 3], device="cuda")
        y = x[idx].sum() + x[x > 0].sum() + x[[1, 1], [2, 2]].sum() + x[1:, ::2].sum()
        h = x * 1.0
        h[0] = h[1] * 2
        h[:, 1] += 1
        (y + (h ** 2).sum()).backward()
    _close(x_g.grad, x_c.grad)


def test_numpy_protocols_on_cuda_tensors():
    x = rg.tensor(RNG.standard_normal(4), device="cuda", requires_grad=True)
    y = np.exp(x)
    assert isinstance(y, rg.Tensor) and y.grad_fn is not None
    assert_on_cuda(y)
    z = np.sum(np.concatenate([y, x]), axis=0)
    z.backward()
    np.testing.assert_allclose(host(x.grad), np.exp(host(x.detach())) + 1, rtol=1e-12)


def test_linalg_errors_on_cuda():
    # CuPy's solvers return nan/inf for singular input unless asked to check;
    # retrograd asks, and raises LinAlgError as torch does on CUDA
    singular = rg.tensor(np.ones((3, 3)), device="cuda")
    with pytest.raises(rg.linalg.LinAlgError, match="singular"):
        rg.linalg.inv(singular)
    with pytest.raises(rg.linalg.LinAlgError, match="singular"):
        rg.linalg.solve(singular, rg.tensor(np.ones(3), device="cuda"))
    with pytest.raises(rg.linalg.LinAlgError, match="positive-definite"):
        rg.linalg.cholesky(rg.tensor(-np.eye(3), device="cuda"))
    ok = rg.tensor(np.eye(3) * 2, device="cuda")
    np.testing.assert_allclose(host(rg.linalg.inv(ok)), np.eye(3) / 2)
