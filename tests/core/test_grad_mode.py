"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode as
context managers and decorators (also of generators), thread-local."""
import threading

import numpy as np
import pytest

import retrograd as rg


@pytest.fixture(autouse=True)
def _restore_modes():
    yield
    assert rg.is_grad_enabled() and not rg.is_inference_mode_enabled(), \
        "a test leaked a grad mode"


def leaf():
    return rg.tensor([1.0, 2.0], requires_grad=True)


def test_defaults():
    assert rg.is_grad_enabled() is True
    assert rg.is_inference_mode_enabled() is False
    assert rg.autograd.is_grad_enabled is rg.is_grad_enabled


def test_no_grad_context():
    x = leaf()
    with rg.no_grad():
        assert not rg.is_grad_enabled()
        y = x * 2
    assert rg.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_nesting_and_exceptions_restore_the_previous_mode():
    with rg.no_grad():
        with rg.enable_grad():
            assert rg.is_grad_enabled()
            assert (leaf() * 2).requires_grad
        assert not rg.is_grad_enabled()
        with rg.no_grad():
            pass
        assert not rg.is_grad_enabled()
    with pytest.raises(ValueError):
        with rg.no_grad():
            raise ValueError
    assert rg.is_grad_enabled()


@pytest.mark.parametrize("bare", [False, True])
def test_no_grad_decorator(bare):
    x = leaf()

    def f(a, k=1):
        return rg.is_grad_enabled(), a * k
    f = rg.no_grad(f) if bare else rg.no_grad()(f)
    enabled, y = f(x, k=3)
    assert not enabled and not y.requires_grad and y.tolist() == [3.0, 6.0]
    assert rg.is_grad_enabled()
    assert f.__name__ == "f"


@pytest.mark.parametrize("bare", [False, True])
def test_enable_grad_decorator(bare):
    def f():
        return rg.is_grad_enabled()
    f = rg.enable_grad(f) if bare else rg.enable_grad()(f)
    with rg.no_grad():
        assert f() is True
        assert not rg.is_grad_enabled()


def test_set_grad_enabled_as_function_context_and_decorator():
    rg.set_grad_enabled(False)
    try:
        assert not rg.is_grad_enabled()
    finally:
        rg.set_grad_enabled(True)
    assert rg.is_grad_enabled()
    with rg.set_grad_enabled(False):
        assert not rg.is_grad_enabled()
        with rg.set_grad_enabled(True):
            assert rg.is_grad_enabled()
        assert not rg.is_grad_enabled()
    assert rg.is_grad_enabled()

    @rg.set_grad_enabled(False)
    def f():
        return rg.is_grad_enabled()
    assert rg.is_grad_enabled()          # decorating does not change the mode
    assert f() is False and rg.is_grad_enabled()
    with pytest.raises(TypeError):
        rg.set_grad_enabled("yes")


def test_inference_mode():
    x = leaf()
    with rg.inference_mode():
        assert rg.is_inference_mode_enabled() and not rg.is_grad_enabled()
        t = rg.ones(2)
        y = x * 2
    assert t.is_inference() and not rg.ones(2).is_inference()
    assert not y.requires_grad
    with rg.inference_mode(False):
        assert not rg.is_inference_mode_enabled() and rg.is_grad_enabled()


def test_inference_mode_false_reenables_grad_as_torch():
    with rg.inference_mode():
        with rg.inference_mode(False):
            assert not rg.is_inference_mode_enabled()
            assert rg.is_grad_enabled()
        assert rg.is_inference_mode_enabled() and not rg.is_grad_enabled()
    with rg.no_grad():
        with rg.inference_mode(False):
            assert rg.is_grad_enabled()
        assert not rg.is_grad_enabled()


@pytest.mark.parametrize("bare", [False, True])
def test_inference_mode_decorator(bare):
    def f():
        return rg.is_inference_mode_enabled(), rg.ones(1).is_inference()
    f = rg.inference_mode(f) if bare else rg.inference_mode()(f)
    assert f() == (True, True)
    assert not rg.is_inference_mode_enabled()


def test_inference_tensors_outside_inference_mode():
    x = leaf()
    with rg.inference_mode():
        t = rg.ones(2)
    with pytest.raises(RuntimeError, match="saved for backward"):
        x * t
    with pytest.raises(RuntimeError, match="inference tensor"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        t.add_(1)
    with rg.no_grad():                   # also under no_grad, as torch
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
            t.mul_(2)
    assert t.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        t._version
    with rg.inference_mode():
        t.add_(1)                        # fine inside
    assert t.tolist() == [2.0, 2.0]
    assert not (t * 2).requires_grad


@pytest.mark.parametrize("mode, inside", [(rg.no_grad, False), (rg.enable_grad, True),
                                          (lambda: rg.set_grad_enabled(False), False)])
def test_generator_decorator(mode, inside):
    @mode()
    def gen(n):
        got = None
        for i in range(n):
            got = yield (i, rg.is_grad_enabled(), got)
        return "done"

    outer = not inside
    with rg.set_grad_enabled(outer):
        g = gen(3)
        assert next(g) == (0, inside, None)
        assert rg.is_grad_enabled() is outer          # restored between steps
        assert g.send("a") == (1, inside, "a")
        assert rg.is_grad_enabled() is outer
        assert next(g) == (2, inside, None)
        with pytest.raises(StopIteration) as stop:
            next(g)
        assert stop.value.value == "done"
        assert rg.is_grad_enabled() is outer


def test_generator_decorator_throw_and_close():
    log = []

    @rg.no_grad()
    def gen():
        try:
            yield 1
        except KeyError:
            log.append(("caught", rg.is_grad_enabled()))
            yield 2
        finally:
            log.append(("finally", rg.is_grad_enabled()))

    g = gen()
    assert next(g) == 1
    assert g.throw(KeyError()) == 2
    g.close()
    assert log == [("caught", False), ("finally", False)]
    assert rg.is_grad_enabled()


def test_grad_mode_decorating_a_class_is_deprecated():
    # torch 2.x still accepts it, with a FutureWarning
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
        make = rg.no_grad()(type("C", (), {}))
    assert type(make()).__name__ == "C"


@pytest.mark.parametrize("mode", [rg.no_grad, rg.inference_mode,
                                  lambda: rg.set_grad_enabled(False)])
def test_modes_are_thread_local(mode):
    x = leaf()
    seen = []

    def work():
        seen.append((rg.is_grad_enabled(), rg.is_inference_mode_enabled(),
                     (x * 2).requires_grad))
    with mode():
        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert not rg.is_grad_enabled()
    assert seen == [(True, False, True)]


def test_a_thread_changing_its_mode_does_not_affect_others():
    started, release = threading.Event(), threading.Event()

    def work():
        with rg.no_grad():
            started.set()
            release.wait(10)
    t = threading.Thread(target=work)
    t.start()
    started.wait(10)
    try:
        assert rg.is_grad_enabled()
        assert (leaf() * 2).requires_grad
    finally:
        release.set()
        t.join()


def test_no_grad_allows_inplace_on_leaves_and_keeps_them_leaves():
    x = leaf()
    with rg.no_grad():
        x.mul_(2)
        x += 1
        x **= 2
    assert x.tolist() == [9.0, 25.0] and x._version == 3
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    np.testing.assert_equal(x.detach().numpy(), [9.0, 25.0])
