"""rg.compile with CUDA tensors: the programs run CuPy's kernels, and the
cupy backend fuses elementwise runs into cupy.ElementwiseKernels. Each
compiled call is compared with the same function run eagerly (on a GPU, or
on the CPU stand-in tests/cuda/fake_cupy, whose ElementwiseKernel runs the
kernel's C++ over whole arrays and logs each launch)."""
import numpy as np
import pytest

import retrograd as rg
from _cuda import assert_on_cuda, host, require_cuda

cp = require_cuda()
pytest.importorskip("retrograd.compile", reason="needs retrograd-compile")


def _chain(x, y):
    z = x
    for _ in range(5):
        z = (z * y).sin() + 0.5 * z
    return (z.tanh() * x.sum()).sum()


def _leaves(*arrays, dtype=np.float64):
    return [rg.tensor(a.astype(dtype), device="cuda", requires_grad=True) for a in arrays]


def _fused_launches():
    from cupy.cuda import _log
    return [e for e in _log if e[0] == "launch" and str(e[2]).startswith("rg_fused_")]


def _tolerance(dtype):
    return {"rtol": 2e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("backend", ["auto", "cupy", "numpy"])
def test_compiled_cuda_chain_matches_eager(backend, dtype):
    f = rg.compile(_chain, backend=backend)
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.1, 1.0, 32), rng.uniform(-1.0, 2.0, 32)
    for _ in range(3):           # the trace's call, then calls of the programs
        x, y = _leaves(a, b, dtype=dtype)
        out = f(x, y)
        out.backward()
        f.wait()
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    assert f.cache_info() == {"compiled": 1, "eager": 0}
    ex, ey = _leaves(a, b, dtype=dtype)
    want = _chain(ex, ey)
    want.backward()
    assert_on_cuda(out, "the compiled result")
    assert_on_cuda(x.grad, "the compiled gradient")
    assert out.dtype == want.dtype and x.grad.dtype == ex.grad.dtype
    tol = _tolerance(dtype)
    np.testing.assert_allclose(host(out), host(want), **tol)
    np.testing.assert_allclose(host(x.grad), host(ex.grad), **tol)
    np.testing.assert_allclose(host(y.grad), host(ey.grad), **tol)


@pytest.mark.skipif(not getattr(cp, "_FAKE", False), reason="reads the stand-in's launch log")
def test_cupy_backend_runs_fused_kernels_and_numpy_backend_does_not():
    from cupy.cuda import _log
    rng = np.random.default_rng(2)
    a, b = rng.uniform(0.1, 1.0, 16), rng.uniform(-1.0, 2.0, 16)
    for backend, fused in (("cupy", True), ("numpy", False)):
        f = rg.compile(_chain, backend=backend)
        f(*_leaves(a, b)).backward()
        assert f.wait()
        _log.clear()
        f(*_leaves(a, b)).backward()
        launches = _fused_launches()
        assert bool(launches) is fused, backend
        if fused:
            # the forward's one run and the backward's runs: a few launches
            # stand for the 80-odd elementwise ops
            assert len(launches) <= 6


def test_mlp_step_with_matmul_relu_and_sums_matches_eager():
    rng = np.random.default_rng(3)
    w1, w2 = rng.standard_normal((8, 16)) * 0.3, rng.standard_normal((16, 4)) * 0.3
    xs = rng.standard_normal((5, 8))

    def loss(x, w1, w2):
        h = (x @ w1).relu()
        o = (h @ w2).tanh()
        return (o * o).mean() + (w1 * w1).sum() * 1e-3

    f = rg.compile(loss)
    for _ in range(2):
        x, p1, p2 = _leaves(xs, w1, w2)
        out = f(x, p1, p2)
        out.backward()
        f.wait()
    ex, e1, e2 = _leaves(xs, w1, w2)
    want = loss(ex, e1, e2)
    want.backward()
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    np.testing.assert_allclose(host(out), host(want), rtol=1e-10)
    for got, ref in ((p1, e1), (p2, e2), (x, ex)):
        np.testing.assert_allclose(host(got.grad), host(ref.grad), rtol=1e-9, atol=1e-12)


def test_double_backward_and_hooks_through_the_compiled_cuda_node():
    def f(x):
        return (x.sin() * x * 3.0).sum()

    g = rg.compile(f)
    a = np.linspace(-1.0, 1.0, 12)
    g(*_leaves(a))               # the trace
    (x,) = _leaves(a)
    seen = []
    x.register_hook(lambda grad: seen.append(host(grad)))
    (gx,) = rg.autograd.grad(g(x), x, create_graph=True)
    (ggx,) = rg.autograd.grad(gx.sum(), x)
    (ex,) = _leaves(a)
    (egx,) = rg.autograd.grad(f(ex), ex, create_graph=True)
    (eggx,) = rg.autograd.grad(egx.sum(), ex)
    np.testing.assert_allclose(host(gx), host(egx), rtol=1e-12)
    np.testing.assert_allclose(host(ggx), host(eggx), rtol=1e-12)
    assert len(seen) == 2            # the first grad and the second
    np.testing.assert_allclose(seen[0], host(egx), rtol=1e-12)


def test_tracing_leaves_the_engine_device_threads_on():
    # the traced backward runs on the tracing thread; the engine's setting
    # is restored after the trace
    assert rg.autograd.is_multithreading_enabled()
    f = rg.compile(lambda x: (x.exp() * 2.0).sum())
    f(*_leaves(np.linspace(0.0, 1.0, 8))).backward()
    assert rg.autograd.is_multithreading_enabled()
    assert f.cache_info() == {"compiled": 1, "eager": 0}


def test_random_ops_draw_at_each_call_on_the_device():
    f = rg.compile(lambda x: (rg.nn.functional.dropout(x.exp(), p=0.5) * 2.0).sum())
    x = _leaves(np.zeros(4096))[0]
    values = {float(host(f(x))) for _ in range(3)}
    assert len(values) == 3          # a new mask at each call, not the trace's
    assert f.cache_info() == {"compiled": 1, "eager": 0}


def test_create_graph_through_a_compiled_cuda_dropout_replays_its_mask():
    # the mask is drawn on the host and moved to the device; a create_graph
    # backward recomputes the forward with the mask the call drew
    f = rg.compile(lambda x: (rg.nn.functional.dropout(x.exp(), p=0.5) * 2.0).sum())
    f(_leaves(np.zeros(64))[0])          # the trace
    x = _leaves(np.zeros(64))[0]
    (gx,) = rg.autograd.grad(f(x), x, create_graph=True)
    (ggx,) = rg.autograd.grad(gx.sum(), x)
    assert_on_cuda(gx)
    g = host(gx)
    assert set(np.unique(g)) <= {0.0, 4.0} and 0 < np.count_nonzero(g) < 64
    np.testing.assert_array_equal(host(ggx), g)
