"""Reentrant backwards (see the engine's Note [Reentrant backwards]): a backward
started inside a hook or a node runs on the same thread one level deeper, and
past MAX_REENTRANT_DEPTH nested levels continues on a pool thread, so depth
never overflows the C stack or Python's recursion limit."""
import threading

import numpy as np
import pytest

import retrograd as rg
import retrograd.engine as engine


def leaf(data):
    return rg.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


def test_max_reentrant_depth_default_is_60():
    assert engine.get_max_reentrant_depth() == 60


def test_set_max_reentrant_depth_validates():
    with pytest.raises(ValueError):
        engine.set_max_reentrant_depth(0)
    assert engine.get_max_reentrant_depth() == 60


@pytest.fixture
def max_depth():
    prev = engine.get_max_reentrant_depth()
    yield engine.set_max_reentrant_depth
    engine.set_max_reentrant_depth(prev)


def test_backward_inside_a_tensor_hook():
    inner_x = leaf([1.0, 2.0])
    seen = {}

    def hook(g):
        # Grad mode is off inside a plain backward (as in torch): enable it
        # to record the inner graph.
        assert not rg.is_grad_enabled()
        with rg.enable_grad():
            (inner_x * inner_x * 5.0).sum().backward()
        seen["thread"] = threading.get_ident()
        seen["inner_grad"] = inner_x.grad.numpy().copy()
        return g * 2.0

    x = leaf([3.0, 4.0])
    y = x * 3.0
    y.register_hook(hook)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])
    np.testing.assert_array_equal(seen["inner_grad"], [10.0, 20.0])
    assert seen["thread"] == threading.get_ident()


def test_grad_inside_a_node_prehook():
    x = leaf([1.0, 2.0, 3.0])
    y = x.sin()
    out = (y * 2.0).sum()
    captured = []

    def prehook(grad_outputs):
        with rg.enable_grad():
            z = leaf([2.0])
            captured.append(rg.autograd.grad((z * z * z).sum(), z)[0])

    y.grad_fn.register_prehook(prehook)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.cos([1.0, 2.0, 3.0]))
    assert float(captured[0][0]) == 12.0


def test_reentrant_backward_through_the_same_leaf():
    # The inner backward accumulates into the leaf the outer one also reaches.
    x = leaf([1.0, 2.0])

    def hook(g):
        with rg.enable_grad():
            (x * 10.0).sum().backward()

    y = x * 1.0
    y.register_hook(hook)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [11.0, 11.0])


def test_reentrant_backward_on_a_device_worker(virtual_cpu_devices):
    seen = {}
    inner_x = leaf([1.0, 2.0])

    def hook(g):
        seen["outer_thread"] = threading.get_ident()
        with rg.enable_grad():
            inner = inner_x.to("cpu:1") * 4.0
            inner.register_hook(lambda gg: seen.__setitem__("inner_thread", threading.get_ident()))
            inner.sum().backward()
        return None

    x = leaf([1.0, 2.0])
    y = x.to("cpu:1") * 2.0
    y.register_hook(hook)
    y.sum().backward()
    worker = engine.device_threads()[1].ident
    assert seen["outer_thread"] == worker
    assert seen["inner_thread"] == worker
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(inner_x.grad.numpy(), [4.0, 4.0])


def _nested(depth, threads, order):
    """A graph whose hook runs a backward of a graph built the same way, ``depth`` levels deep."""
    x = leaf([1.0, 2.0])
    y = x * 3.0

    def hook(g):
        threads.append(threading.get_ident())
        if depth > 0:
            with rg.enable_grad():
                z, zx = _nested(depth - 1, threads, order)
                z.sum().backward()
                np.testing.assert_array_equal(zx.grad.numpy(), [3.0, 3.0])
        order.append(depth)

    y.register_hook(hook)
    return y, x


def test_nested_reentrant_backwards_stay_on_one_thread_below_the_limit():
    threads, order = [], []
    y, x = _nested(20, threads, order)
    y.sum().backward()
    assert set(threads) == {threading.get_ident()}
    assert order == list(range(21))            # innermost finishes first
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_past_the_limit_work_moves_to_pool_threads(max_depth):
    max_depth(4)
    threads, order = [], []
    y, x = _nested(20, threads, order)
    y.sum().backward()
    # `threads` lists the thread of each level, outermost (20) first. The
    # caller runs the top-level backward plus 4 nested ones (levels 20..16);
    # the 5th nested backward moves to a pool thread, which again nests 4
    # deep before handing over: groups of 5 levels per thread.
    distinct = list(dict.fromkeys(threads))
    assert distinct[0] == threading.get_ident()
    assert [distinct.index(t) for t in threads] == [i // 5 for i in range(21)]
    assert order == list(range(21))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_error_deep_in_a_pool_thread_reaches_the_caller(max_depth):
    max_depth(2)

    class DeepError(Exception):
        pass

    def make(depth):
        x = leaf([1.0])
        y = x * 2.0

        def hook(g):
            if depth == 0:
                raise DeepError("deepest level failed")
            with rg.enable_grad():
                make(depth - 1).sum().backward()

        y.register_hook(hook)
        return y

    with pytest.raises(DeepError, match="deepest level failed") as info:
        make(10).sum().backward()
    assert info.value.args == ("deepest level failed",)       # untouched, as torch
    assert any("MulBackward0" in n for n in info.value.__notes__)
    # And the engine still works on this thread.
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


DEEP_SNIPPET = """
    import sys, threading
    import numpy as np
    import retrograd as rg
    import retrograd.engine as engine
    assert sys.getrecursionlimit() == 1000, sys.getrecursionlimit()
    assert engine.get_max_reentrant_depth() == 60
    N = {depth}
    threads = set()
    calls = [0]

    def make(depth):
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3.0
        def hook(g):
            calls[0] += 1
            threads.add(threading.get_ident())
            if depth > 0:
                with rg.enable_grad():
                    z, zx = make(depth - 1)
                    z.sum().backward()
                    assert zx.grad.tolist() == [3.0, 3.0]
        y.register_hook(hook)
        return y, x

    y, x = make(N)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert calls[0] == N + 1, calls
    print("THREADS", len(threads))
"""


def test_reentrant_depth_beyond_recursion_limit(run_python):
    # 1500 nested backwards: each level costs several Python frames, so on
    # one thread this would exceed the default recursion limit (1000) many
    # times over.
    res = run_python(DEEP_SNIPPET.format(depth=1500))
    assert res.returncode == 0, res.stderr[-3000:]
    n_threads = int(res.stdout.split("THREADS")[1].split()[0])
    # 61 levels per thread (the first one plus 60 nested), as in PyTorch.
    assert n_threads == -(-1501 // 61)


def test_reentrant_depth_beyond_recursion_limit_without_multithreading(run_python):
    res = run_python(DEEP_SNIPPET.format(depth=1500).replace(
        "N = ", "rg.autograd.set_multithreading_enabled(False)\n    N = "))
    assert res.returncode == 0, res.stderr[-3000:]

