"""rg.compile's behaviour: guards and retracing, the cache, graph breaks,
randomness, in-place ops, the CompiledFunctionBackward node (hooks,
retain_graph, grad, inputs=, create_graph), threads and buffers."""
import gc
import threading
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.compile
from retrograd.compile.exc import Unsupported


def _x(*shape, seed=0, requires_grad=True, dtype=np.float64):
    a = np.random.default_rng(seed).uniform(0.5, 1.5, shape).astype(dtype)
    return rg.tensor(a, requires_grad=requires_grad)


def _chain(x, y):
    return ((x * y).sin() + x.exp() / y).tanh().sum()


def test_rg_compile_is_the_module_and_is_callable():
    assert rg.compile is retrograd.compile or callable(rg.compile)
    f = rg.compile(_chain)
    assert f.__name__ == "_chain" and f.__wrapped__ is _chain
    g = rg.compile(fullgraph=True)(_chain)
    assert g.__name__ == "_chain"


def test_values_and_gradients_match_eager_and_node_is_compiled():
    f = rg.compile(_chain)
    for call in range(3):
        x, y = _x(5), _x(5, seed=1)
        out = f(x, y)
        if call:
            assert out.grad_fn.name() == "CompiledFunctionBackward"
        out.backward()
        x2, y2 = _x(5), _x(5, seed=1)
        ref = _chain(x2, y2)
        ref.backward()
        np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(y.grad.numpy(), y2.grad.numpy(), rtol=1e-12)
    assert f.cache_info() == {"compiled": 1, "eager": 0}


def test_guards_retrace_on_shape_dtype_requires_grad_and_values():
    calls = []

    def fn(x, k):
        calls.append(1)
        return x * k

    f = rg.compile(fn)
    f(_x(3), 2.0)
    traced = len(calls)                         # the trace (and its check against eager)
    f(_x(3), 2.0)
    assert len(calls) == traced                 # then the program: fn's body does not run
    for call in [lambda: f(_x(4), 2.0),                           # shape
                 lambda: f(_x(3, dtype=np.float32), 2.0),         # dtype
                 lambda: f(_x(3, requires_grad=False), 2.0),      # requires_grad
                 lambda: f(_x(3), 3.0)]:                          # a non-tensor argument, by value
        n = len(calls)
        call()
        assert len(calls) > n
    out = f(_x(3), 3.0)
    np.testing.assert_allclose(out.detach().numpy(), _x(3).detach().numpy() * 3.0)
    n = len(calls)
    with rg.no_grad():
        f(_x(3), 2.0)                           # grad mode
    assert len(calls) > n
    assert f.cache_info()["compiled"] == 6


def test_cache_size_then_eager_with_one_warning():
    f = rg.compile(lambda x: x * 2, cache_size=2)
    f(_x(1))
    f(_x(2))
    with pytest.warns(RuntimeWarning, match="cache_size=2"):
        out = f(_x(3))
    np.testing.assert_allclose(out.detach().numpy(), _x(3).detach().numpy() * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(_x(4))                                # warned once only


@pytest.mark.parametrize("what,body", [
    ("Tensor.__bool__()", lambda x: x * 2 if x.sum() > 0 else x),
    ("Tensor.item()", lambda x: x * x.sum().item()),
    ("Tensor.numpy()", lambda x: x * float(x.detach().numpy().sum())),
    ("Tensor.__array__()", lambda x: x * float(np.asarray(x.detach()).sum())),
    ("Tensor.__iter__()", lambda x: sum(t for t in x)),
    ("Tensor.tolist()", lambda x: x * sum(x.detach().tolist())),
    ("Tensor.register_hook()", lambda x: (x * 2).register_hook(lambda g: g) and x * 3),
])
def test_graph_breaks(what, body):
    with pytest.raises(Unsupported) as info:
        rg.compile(body, fullgraph=True)(_x(3))
    assert info.value.what == what
    assert "test_compile_api.py" in info.value.where
    assert isinstance(info.value, RuntimeError)
    f = rg.compile(body)
    with pytest.warns(RuntimeWarning, match="graph break"):
        out = f(_x(3))
    ref = body(_x(3))
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
    out2 = f(_x(3))                              # that key runs eagerly from now on
    np.testing.assert_allclose(out2.detach().numpy(), ref.detach().numpy())
    assert f.cache_info() == {"compiled": 0, "eager": 1}


def test_custom_function_is_inlined_under_fullgraph():
    # (more cases: test_compile_custom_functions.py)
    class Double(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = _x(2)
    y = rg.compile(lambda x: Double.apply(x).sum(), fullgraph=True)(x)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(x.shape, 2.0))


def test_inplace_on_intermediates_and_refusal_on_inputs():
    def fn(x):
        y = x * 2
        y.add_(1)
        y.mul_(x)
        y[0] = 5.0
        return y.exp().sum()

    f = rg.compile(fn, fullgraph=True)
    for _ in range(2):
        x = _x(3)
        out = f(x)
        out.backward()
        x2 = _x(3)
        ref = fn(x2)
        ref.backward()
        np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
    assert f.cache_info()["compiled"] == 1

    # an input that does not require grad: written back (test_compile_mutation.py)
    def on_input(x):
        x.add_(1)
        return x * 2

    g = rg.compile(on_input, fullgraph=True)
    x = _x(3, requires_grad=False)
    out = g(x)
    np.testing.assert_allclose(x.numpy(), _x(3).detach().numpy() + 1)    # added once
    np.testing.assert_allclose(out.numpy(), x.numpy() * 2)

    # one that requires grad (changed under no_grad, as an optimizer step
    # does) is refused: the node's inputs must not change under it
    def on_param(x):
        with rg.no_grad():
            x.add_(1)
        return x * 2

    with pytest.raises(Unsupported, match="in-place add_ on a tensor from outside"):
        rg.compile(on_param, fullgraph=True)(_x(3))
    g = rg.compile(on_param)
    x = _x(3)
    with pytest.warns(RuntimeWarning, match="graph break"):
        out = g(x)
    np.testing.assert_allclose(x.detach().numpy(), _x(3).detach().numpy() + 1)    # added once
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy() * 2)


def test_views_of_intermediates():
    def fn(x):
        y = (x * 3).reshape(2, 3)
        return (y.t()[1:] * y[0, 1:]).sum() + y.transpose(0, 1).sum(0).mean()

    f = rg.compile(fn, fullgraph=True)
    for _ in range(2):
        x = _x(6)
        f(x).backward()
        x2 = _x(6)
        fn(x2).backward()
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)


def test_random_ops_draw_at_run_time():
    import retrograd.nn.functional as F

    def fn(x):
        return F.dropout(x, 0.5) + rg.rand(x.shape) + rg.randn_like(x)

    f = rg.compile(fn, fullgraph=True)
    x = _x(200, requires_grad=False)
    rg.manual_seed(0)
    a = f(x)
    rg.manual_seed(0)
    ref = fn(x)
    np.testing.assert_allclose(a.numpy(), ref.numpy())           # the trace run is eager
    rg.manual_seed(0)
    b = f(x)
    np.testing.assert_allclose(b.numpy(), ref.numpy())           # the program draws the same
    c = f(x)
    assert not np.allclose(b.numpy(), c.numpy())                 # and draws anew each call
    assert f.cache_info() == {"compiled": 1, "eager": 0}


def test_create_graph_through_a_compiled_dropout_uses_the_calls_mask():
    # the second-order backward recomputes the forward from the inputs and
    # the values the call drew (it draws nothing itself)
    import retrograd.nn.functional as F

    def fn(x):
        return (F.dropout(x.sin(), 0.5) * x).sum()

    f = rg.compile(fn, fullgraph=True)
    f(_x(50))                                    # the trace
    x = _x(50)
    rg.manual_seed(7)
    (gx,) = rg.autograd.grad(f(x), x, create_graph=True)
    (ggx,) = rg.autograd.grad(gx.sum(), x)
    ex = _x(50)
    rg.manual_seed(7)
    (egx,) = rg.autograd.grad(fn(ex), ex, create_graph=True)
    (eggx,) = rg.autograd.grad(egx.sum(), ex)
    np.testing.assert_allclose(gx.detach().numpy(), egx.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ggx.numpy(), eggx.numpy(), rtol=1e-12)


def test_closure_parameters_are_inputs_of_the_node():
    w = _x(3, 3, seed=4)
    b = _x(3, seed=5)

    def model(x):
        return (w @ x + b).tanh().pow(2).sum()

    f = rg.compile(model, fullgraph=True)
    for _ in range(2):
        w.grad = None
        b.grad = None
        f(_x(3)).backward()
        gw, gb = w.grad.numpy().copy(), b.grad.numpy().copy()
        w.grad = None
        b.grad = None
        model(_x(3)).backward()
        np.testing.assert_allclose(gw, w.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(gb, b.grad.numpy(), rtol=1e-12)
    with rg.no_grad():
        w.mul_(2)                                 # read at each call, not baked in
    np.testing.assert_allclose(f(_x(3)).item(), model(_x(3)).item(), rtol=1e-12)


def test_hooks_retain_graph_grad_and_inputs():
    f = rg.compile(lambda x, y: (x * y).exp() * 2, fullgraph=True)
    f(_x(3), _x(3, seed=1))
    x, y = _x(3), _x(3, seed=1)
    out = f(x, y)
    seen = []
    out.register_hook(lambda g: seen.append("out") or g * 2)
    x.register_hook(lambda g: seen.append("x"))
    s = out.sum()
    s.backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    s.backward(inputs=[y])
    np.testing.assert_allclose(x.grad.numpy(), g1)               # inputs=[y]: x untouched
    assert seen == ["out", "x", "out"]
    x2, y2 = _x(3), _x(3, seed=1)
    ref = (x2 * y2).exp() * 2
    (gx,) = rg.autograd.grad((ref * 2).sum(), x2)
    np.testing.assert_allclose(g1, gx.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="second time"):
        s2 = f(x, y).sum()
        s2.backward()
        s2.backward()


def test_create_graph_gives_second_order():
    def fn(x):
        return (x.sin() * x).pow(3).sum()

    f = rg.compile(fn, fullgraph=True)
    f(_x(4))
    x = _x(4)
    (g,) = rg.autograd.grad(f(x), x, create_graph=True)
    (h,) = rg.autograd.grad(g.sum(), x)
    x2 = _x(4)
    (g2,) = rg.autograd.grad(fn(x2), x2, create_graph=True)
    (h2,) = rg.autograd.grad(g2.sum(), x2)
    np.testing.assert_allclose(g.detach().numpy(), g2.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), h2.numpy(), rtol=1e-12)


def test_two_threads_call_one_compiled_function():
    f = rg.compile(_chain)
    errors = []

    def work(seed):
        try:
            for i in range(200):
                x, y = _x(8, seed=seed), _x(8, seed=seed + 1)
                out = f(x, y)
                out.backward()
                x2, y2 = _x(8, seed=seed), _x(8, seed=seed + 1)
                _chain(x2, y2).backward()
                np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
        except Exception as exc:         # reported by the main thread
            errors.append(exc)

    ts = [threading.Thread(target=work, args=(s,)) for s in (0, 10)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert f.cache_info()["compiled"] >= 1


def test_no_buffer_leak_over_10000_calls():
    f = rg.compile(_chain)
    x, y = _x(16), _x(16, seed=1)
    f(x, y).backward()
    gc.collect()

    def live():
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, (np.ndarray, rg.Tensor)))

    before = live()
    for _ in range(10000):
        f(x, y).backward()
    after = live()
    assert after - before < 20
    entry = next(iter(f._cache.values()))
    assert len(entry.fwd._pool) <= 4 and len(entry.bwd._pool) <= 4


def test_unknown_backend_and_bad_arguments():
    with pytest.raises(ValueError, match="unknown backend"):
        rg.compile(_chain, backend="tvm")
    with pytest.raises(TypeError, match="callable"):
        rg.compile(3)
    with pytest.raises(ValueError, match="cache_size"):
        rg.compile(_chain, cache_size=-1)


def test_idle_compiler_leaves_the_slot_empty():
    from retrograd.core import abi
    f = rg.compile(_chain)
    f(_x(2), _x(2))
    assert not abi._slot_status()["trace"]


def test_forward_ad_tangents_run_eagerly_and_agree():
    fwAD = pytest.importorskip("retrograd.forward_ad", reason="needs retrograd-forward-ad")

    def fn(x):
        return (x.sin() * x).exp()

    f = rg.compile(fn)
    f(_x(3, requires_grad=False))                 # compiled for plain calls
    v = _x(3, seed=2, requires_grad=False)
    with fwAD.dual_level():
        out = f(fwAD.make_dual(_x(3, requires_grad=False), v))
        ref = fn(fwAD.make_dual(_x(3, requires_grad=False), v))
        t, tr = fwAD.unpack_dual(out).tangent, fwAD.unpack_dual(ref).tangent
    np.testing.assert_allclose(t.numpy(), tr.numpy(), rtol=1e-12)
    assert f.cache_info() == {"compiled": 1, "eager": 0}


def test_first_call_compiles_without_touching_the_callers_tensors():
    # The trace (and its own backward) runs on copies: a hook already on an
    # input sees only the caller's backward, and the first call's result is
    # the compiled node's.
    seen = []
    x = _x(3)
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    f = rg.compile(lambda x: (x * x).sum())
    out = f(x)
    assert seen == [] and out.grad_fn.name() == "CompiledFunctionBackward"
    out.backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], 2 * x.detach().numpy())
    assert x.grad is not None and np.allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_outputs_without_gradient_and_multiple_outputs():
    f = rg.compile(lambda x: (x.sin(), x.cos() * 2, (x > 1).sum()))
    for _ in range(2):
        x = _x(4)
        a, b, c = f(x)
        assert not c.requires_grad and c.dtype.kind == "i"
        a.sum().backward()                        # b gets no gradient
        np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-12)


def test_masks_made_outside_the_ops_are_not_baked_in():
    # leaky_relu's mask is computed on the input's array (not an op): a
    # program would bake the first call's signs in, so the key runs eagerly
    import retrograd.nn.functional as F

    def fn(x):
        return F.leaky_relu(x, 0.1).sum()

    f = rg.compile(fn)
    a = np.array([-1.0, 2.0, -3.0, 4.0])
    with pytest.warns(RuntimeWarning, match="a value computed outside the ops"):
        f(rg.tensor(a, requires_grad=True))
    for b in (-a, a):
        x = rg.tensor(b, requires_grad=True)
        f(x).backward()
        np.testing.assert_allclose(x.grad.numpy(), np.where(b > 0, 1.0, 0.1))
    assert f.cache_info() == {"compiled": 0, "eager": 1}


def test_relu_backward_multiplies_by_its_mask_without_casting_it():
    # relu's backward is grad * (result > 0) cast to the dtype: the numpy
    # program multiplies by the boolean mask directly (one pass fewer)
    def model(x):
        return ((x * 3.0).relu() * x).sum()

    f = rg.compile(model, backend="numpy", fullgraph=True)
    for seed in (0, 1, 2):
        a = np.random.default_rng(seed).standard_normal(50)     # both signs: the mask matters
        xs = [rg.tensor(a, requires_grad=True) for _ in range(2)]
        f(xs[0]).backward()
        model(xs[1]).backward()
        np.testing.assert_allclose(xs[0].grad.numpy(), xs[1].grad.numpy(), rtol=1e-12)
    (entry,) = f._cache.values()
    names = [st.name for st in entry.bwd.steps]
    assert "mul" in names and "_to_dtype" not in names


def test_compiled_calls_raise_no_floating_point_warnings_as_eager():
    # core runs every op with NumPy's errstate ignoring (torch never warns
    # for log(0) or 1/0); the programs do the same, whatever the user's
    # errstate, and leave it as it was
    import warnings

    f = rg.compile(lambda x: (x.log() / x).sum())
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        for _ in range(3):
            x = rg.tensor([0.0, -1.0, 2.0], requires_grad=True)
            out = f(x)
            out.backward()
        assert np.geterr()["divide"] == "raise"
    assert f.cache_info() == {"compiled": 1, "eager": 0}
    ex = rg.tensor([0.0, -1.0, 2.0], requires_grad=True)
    with np.errstate(all="ignore"):
        want = (ex.log() / ex).sum()
        want.backward()
    np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), ex.grad.numpy())


def test_results_saved_for_the_backward_are_version_checked():
    # tanh's backward reads its result: modified in place since, the
    # backward raises as eager does (it would read the new value)
    f = rg.compile(lambda x: x.tanh())
    for _ in range(3):
        x = _x(4)
        y = f(x)
        y.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    # unmodified, the result's gradient flows, and the result and its node
    # are freed with it (saving the result makes no reference cycle)
    import weakref
    x = _x(4)
    y = f(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 - np.tanh(x.detach().numpy()) ** 2, rtol=1e-12)
    gone = weakref.ref(y)
    gc.disable()
    try:
        del y
        assert gone() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_compiled_calls_are_as_quiet_as_eager_and_leave_errstate_as_it_was(backend):
    # log(0), log(-1) and 1/0, forward and backward: eager core never warns
    # (as torch); nor may the programs, and the caller's errstate is theirs
    if backend == "numba":
        pytest.importorskip("numba")
    f = rg.compile(lambda x: (x.log() / x).sum(), backend=backend)
    a = np.array([0.0, -1.0, 2.0])
    f(rg.tensor(a, requires_grad=True)).backward()          # the trace
    f.wait()
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(divide="raise", invalid="raise"):
            x = rg.tensor(a, requires_grad=True)
            y = f(x)
            y.backward()
            assert np.geterr()["divide"] == "raise"
    assert np.geterr() == before
    x2 = rg.tensor(a, requires_grad=True)
    with np.errstate(all="ignore"):
        (x2.log() / x2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())


def test_a_program_that_raises_hands_the_call_to_eager():
    # (the stand-in program raises where eager would not: the call still
    # gives eager's result and gradient, and the key stays compiled)
    def f(x):
        return (x.sin() * 2.0).sum()

    class Raising:
        def run(self, *arrays):
            raise IndexError("a program's own error")

    cf = rg.compile(f, backend="numpy")
    a = np.linspace(-1.0, 1.0, 5)
    cf(rg.tensor(a, requires_grad=True))
    entry = next(iter(cf._cache.values()))
    entry.progs = (Raising(), entry.progs[1])
    x, xe = rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
    out, want = cf(x), f(xe)
    out.backward()
    want.backward()
    assert out.item() == want.item()
    np.testing.assert_array_equal(x.grad.numpy(), xe.grad.numpy())
    assert cf.cache_info() == {"compiled": 1, "eager": 0}


def test_a_backward_that_fails_eagerly_fails_at_backward_not_at_the_call():
    # exp saves its result, which the function then modifies in place: eager
    # raises at backward(), and so must the compiled call (its trace's own
    # backward failed: the key runs eagerly, the forward returns)
    def f(x):
        y = x.exp()
        y.add_(1.0)
        return y
    cf = rg.compile(f, backend="numpy")
    with pytest.warns(RuntimeWarning, match="a backward that fails"):
        y = cf(rg.tensor(np.ones(3), requires_grad=True))
    np.testing.assert_allclose(y.detach().numpy(), np.e + 1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    assert cf.cache_info() == {"compiled": 0, "eager": 1}


def test_reset_forgets_every_compiled_functions_keys():
    f = rg.compile(lambda x: x * 2.0, backend="numpy")
    g = rg.compile(lambda x: x.sin(), backend="numpy")
    f(_x(3)), g(_x(3))
    assert f.cache_info()["compiled"] == g.cache_info()["compiled"] == 1
    rg.compile.reset()
    assert f.cache_info() == g.cache_info() == {"compiled": 0, "eager": 0}
    f(_x(3))
    assert f.cache_info()["compiled"] == 1
