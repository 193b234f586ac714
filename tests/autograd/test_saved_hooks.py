"""Saved-tensor hooks, save_on_cpu, disable_saved_tensors_hooks,
increment_version and saved_tensors_report, compared with torch."""
from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import retrograd as rg

graph = rg.autograd.graph


def _logging_hooks(lib, log):
    def pack(x):
        log.append(("pack", tuple(x.shape)))
        return x

    def unpack(x):
        log.append(("unpack", tuple(x.shape)))
        return x
    return lib.autograd.graph.saved_tensors_hooks(pack, unpack)


def _small_graph(lib, log):
    a = lib.ones(2, requires_grad=True)
    b = lib.full((3, 1), 2.0, requires_grad=True)
    with _logging_hooks(lib, log):
        e = (a * b).exp().sum()
    return a, b, e


def test_pack_unpack_calls_and_order_match_torch():
    logs = {}
    grads = {}
    for lib in (rg, torch):
        log = []
        a, b, e = _small_graph(lib, log)
        n_pack = len(log)
        e.backward()
        logs[lib.__name__] = (log[:n_pack], log[n_pack:])
        grads[lib.__name__] = (np.asarray(a.grad), np.asarray(b.grad))
    assert logs["retrograd"] == logs["torch"]
    # x*y saves both inputs (other first), exp saves its result
    assert logs["torch"][0] == [("pack", (3, 1)), ("pack", (2,)), ("pack", (3, 2))]
    for g, tg in zip(grads["retrograd"], grads["torch"]):
        np.testing.assert_allclose(g, tg.numpy() if hasattr(tg, "numpy") else tg)


def test_each_saved_tensor_unpacked_once_per_backward_like_torch():
    # div uses `other` in both formulas: still one unpack per saved tensor
    logs = {}
    for lib in (rg, torch):
        log = []
        a = lib.ones(2, requires_grad=True)
        b = lib.full((3, 1), 2.0, requires_grad=True)
        with _logging_hooks(lib, log):
            y = a / b
        del log[:]
        y.sum().backward()
        logs[lib.__name__] = list(log)
    assert logs["retrograd"] == logs["torch"] == [("unpack", (3, 1)), ("unpack", (2,))]


def test_only_needed_saves_are_packed_like_torch():
    logs = {}
    for lib in (rg, torch):
        log = []
        a = lib.ones(2, requires_grad=True)
        b = lib.full((3, 1), 2.0, requires_grad=True)
        with _logging_hooks(lib, log):
            lib.mul(a.detach(), b)
            lib.mul(a, 2.0)            # a Python scalar is never packed
        logs[lib.__name__] = list(log)
    assert logs["retrograd"] == logs["torch"] == [("pack", (2,))]


def test_pack_gets_the_tensor_and_grads_flow_through_unpacked_values():
    seen = []
    a = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda x: seen.append(x) or ("box", x.detach()),
                                   lambda p: p[1]):
        y = (a * a).sin()
    assert seen[0] is a
    y.sum().backward()
    ta = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    (ta * ta).sin().sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())


def test_packing_runs_under_no_grad():
    modes = []
    a = rg.ones(2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda x: modes.append(rg.is_grad_enabled()) or x, lambda x: x):
        a.exp()
    assert modes == [False] and rg.is_grad_enabled()


def test_create_graph_through_hooks_matches_torch():
    res = {}
    for lib in (rg, torch):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True) if lib is torch \
            else rg.tensor([0.5, 1.5], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            y = (x * x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        res[lib.__name__] = (np.asarray(g.detach()), np.asarray(gg))
    for r, t in zip(res["retrograd"], res["torch"]):
        np.testing.assert_allclose(r, t)


def test_saved_property_goes_through_unpack():
    log = []
    a = rg.ones(2, requires_grad=True)
    with _logging_hooks(rg, log):
        y = a.exp()
    del log[:]
    r = y.grad_fn._saved_result
    assert log == [("unpack", (2,))]
    np.testing.assert_allclose(r.detach().numpy(), np.exp(np.ones(2)))
    assert r.grad_fn is y.grad_fn


def test_nested_hooks_innermost_wins_and_restores():
    outer, inner = [], []
    a = rg.ones(2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda x: outer.append(1) or x, lambda x: x):
        a.exp()
        with graph.saved_tensors_hooks(lambda x: inner.append(1) or x, lambda x: x):
            a.exp()
            a.sin()
        a.cos()
    a.exp()
    assert (len(outer), len(inner)) == (2, 2)


def test_hooks_are_thread_local():
    calls = []
    done = []

    def other_thread():
        b = rg.ones(2, requires_grad=True)
        b.exp()
        done.append(True)

    a = rg.ones(2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda x: calls.append(threading.get_ident()) or x, lambda x: x):
        th = threading.Thread(target=other_thread)
        th.start()
        th.join()
        a.exp()
    assert done == [True]
    assert calls == [threading.get_ident()]


def test_unpack_returning_non_tensor_raises_type_error():
    for lib in (rg, torch):
        x = lib.ones(3, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1):
            y = x.exp()
        with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type int"):
            y.sum().backward()


def test_pack_modifying_input_in_place_raises():
    for lib in (rg, torch):
        x = lib.ones(3, requires_grad=True) * 1
        with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
                x * x


def test_version_check_follows_torch_with_and_without_hooks():
    for lib in (rg, torch):
        # without hooks: the in-place change is caught
        x = lib.ones(3, requires_grad=True) * 1
        y = x * x
        x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        # with hooks, torch cannot track what the hooks stored and does not check
        x = lib.ones(3, requires_grad=True) * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = x * x
        x.add_(1)
        y.sum().backward()


def test_backward_twice_after_release_still_raises():
    x = rg.ones(3, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_save_on_cpu_equals_no_hooks():
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((4, 5)), rng.standard_normal((5, 3))
    grads = []
    for hooked in (False, True):
        x = rg.tensor(xa, requires_grad=True)
        w = rg.tensor(wa, requires_grad=True)
        ctx = graph.save_on_cpu(pin_memory=False) if hooked else graph.saved_tensors_hooks(
            lambda t: t, lambda t: t)
        with ctx:
            loss = (rg.tanh(x @ w) * x.sum(1, keepdim=True)).exp().mean()
        loss.backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_save_on_cpu_keeps_numpy_arrays_without_copy():
    x = rg.ones(4, requires_grad=True)
    with graph.save_on_cpu():
        y = x.exp()
    rows = graph.saved_tensors_report(y).rows
    assert len(rows) == 1 and rows[0].name == "result"
    assert np.shares_memory(y.grad_fn._saved_result.detach().numpy(), y.detach().numpy())


def test_disable_saved_tensors_hooks():
    for lib in (rg, torch):
        g = lib.autograd.graph
        with g.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            with g.disable_saved_tensors_hooks("inner message"):
                with pytest.raises(RuntimeError, match="inner message"):
                    with g.save_on_cpu():
                        pass
            with pytest.raises(RuntimeError, match="no hooks here"):
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
        # entering it while hooks are active raises at once
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError, match="busy"):
                with g.disable_saved_tensors_hooks("busy"):
                    pass
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass


def test_disable_saved_tensors_hooks_is_thread_local():
    errors = []

    def other():
        try:
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        except RuntimeError as e:          # pragma: no cover - the failure case
            errors.append(e)

    with graph.disable_saved_tensors_hooks("disabled on main"):
        th = threading.Thread(target=other)
        th.start()
        th.join()
    assert errors == []


def test_hooks_on_custom_saved_variable_path():
    # SavedVariable (custom Functions) honours the hooks as inline saves do
    Function = getattr(rg.autograd, "Function", None)
    if Function is None:
        pytest.skip("rg.autograd.Function not available in this build")

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    log = []
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with _logging_hooks(rg, log):
        y = Cube.apply(x)
    assert ("pack", (2,)) in log
    y.sum().backward()
    assert ("unpack", (2,)) in log
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])


def test_increment_version_like_torch():
    for lib in (rg, torch):
        x = lib.ones(3, requires_grad=True) * 1
        y = x.exp()
        v = y._version
        lib.autograd.graph.increment_version(y)
        assert y._version == v + 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        a, b = lib.ones(2), lib.zeros(2)
        lib.autograd.graph.increment_version([a, b])
        assert (a._version, b._version) == (1, 1)
        with pytest.raises(RuntimeError, match="Iterable\\[Tensor\\]"):
            lib.autograd.graph.increment_version(3)


def test_increment_version_shared_with_views_and_detach():
    x = rg.ones(4)
    d = x.detach()
    graph.increment_version(d)
    assert x._version == 1


def test_saved_tensors_report_counts_shared_memory_once():
    x = rg.tensor(np.ones((8, 16), dtype=np.float32), requires_grad=True)
    y = x * 2.0                   # saves nothing for self (grad of x*2 needs only 2)
    a = y.exp()                   # saves its result r1 (8*16*4 bytes)
    b = a * a                     # saves r1 twice (self and other)
    c = b.sin()                   # saves b (input)
    loss = c.sum()
    rep = graph.saved_tensors_report(loss)
    names = sorted((r.node, r.name) for r in rep.rows)
    assert names == sorted([("ExpBackward0", "result"), ("MulBackward0", "other"),
                            ("MulBackward0", "self"), ("SinBackward0", "self")])
    nbytes = 8 * 16 * 4
    assert all(r.nbytes == nbytes and r.dtype == np.float32 and r.shape == (8, 16) for r in rep.rows)
    assert rep.total_bytes == 2 * nbytes         # exp's result once, b once
    assert sum(r.shared for r in rep.rows) == 2
    text = str(rep)
    assert "ExpBackward0" in text and str(rep.total_bytes) in text
    loss.backward()
    assert graph.saved_tensors_report(loss).total_bytes == 0


def test_saved_tensors_report_views_of_one_buffer():
    base = rg.tensor(np.arange(24.0).reshape(4, 6), requires_grad=True)
    h = base * 1.0
    top, bottom = h[:2], h[1:]          # overlapping views of one buffer
    out = (top.sin().sum() + bottom.cos().sum())
    rep = graph.saved_tensors_report(out)
    sins = [r for r in rep.rows if r.node in ("SinBackward0", "CosBackward0")]
    assert len(sins) == 2
    assert rep.total_bytes == 4 * 6 * 8          # the whole buffer, not 2*6*8 + 3*6*8


def test_saved_tensors_report_rejects_non_tensor():
    with pytest.raises(TypeError):
        graph.saved_tensors_report(np.ones(3))


def test_saved_tensors_report_sees_tensors_packed_in_tuples():
    x = rg.tensor(np.ones((3, 4)), requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: ("cpu", t.detach().clone()), lambda p: p[1]):
        y = (x * x).exp()
    rep = graph.saved_tensors_report(y)
    assert sorted(r.name for r in rep.rows) == ["other", "result", "self"]
    # three clones: three distinct buffers
    assert rep.total_bytes == 3 * 3 * 4 * 8
    # an opaque packed object (no tensor in it) keeps nothing we can see
    with graph.saved_tensors_hooks(lambda t: object(), lambda p: x):
        z = x.exp()
    assert graph.saved_tensors_report(z).rows == []


def test_saved_tensors_report_lists_custom_function_saves():
    class Scale(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x

    x = rg.tensor(np.ones(4), requires_grad=True)
    w = rg.tensor(np.ones(4) * 2, requires_grad=True)
    y = Scale.apply(x, w)
    rows = [r for r in graph.saved_tensors_report(y).rows if r.node == "ScaleBackward"]
    assert [r.name for r in rows] == ["saved_tensors[0]", "saved_tensors[1]"]
    assert all(r.nbytes == 32 for r in rows)
    y.sum().backward()
    assert not [r for r in graph.saved_tensors_report(y).rows if r.node == "ScaleBackward"]
