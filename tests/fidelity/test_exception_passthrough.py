"""An exception raised inside a hook or a custom Function's backward reaches
the caller of backward() as the very same object, its args untouched (as in
torch); which node it came from is said in a note, never in the message."""
import sys
import threading

import numpy as np
import pytest

import retrograd as rg


class _Boom(Exception):
    pass


class _Raises(rg.autograd.Function):
    exc = None

    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        raise _Raises.exc


def _leaf():
    return rg.tensor(np.ones(3), requires_grad=True)


def _notes(exc):
    return getattr(exc, "__notes__", [])


@pytest.mark.parametrize("exc", [ValueError("boom", 3), KeyError("k"), _Boom(),
                                 RuntimeError("plain message"), OSError(2, "no such file")])
def test_function_backward_exception_is_the_same_object(exc):
    _Raises.exc = exc
    args = exc.args
    text = str(exc)
    with pytest.raises(type(exc)) as ei:
        _Raises.apply(_leaf()).sum().backward()
    assert ei.value is exc
    assert ei.value.args == args
    assert str(ei.value) == text
    if sys.version_info >= (3, 11):
        assert any("_RaisesBackward" in n for n in _notes(ei.value))


def test_tensor_hook_exception_passes_unchanged():
    exc = ValueError("from the hook")
    x = _leaf()
    y = x * 2

    def hook(g):
        raise exc
    y.register_hook(hook)
    with pytest.raises(ValueError) as ei:
        y.sum().backward()
    assert ei.value is exc and ei.value.args == ("from the hook",)
    if sys.version_info >= (3, 11):
        assert any("MulBackward0" in n for n in _notes(ei.value))


@pytest.mark.parametrize("register", ["register_hook", "register_prehook"])
def test_node_hook_exception_passes_unchanged(register):
    exc = TypeError("node hook said no")
    x = _leaf()
    y = x * x

    def hook(*args):
        raise exc
    getattr(y.grad_fn, register)(hook)
    with pytest.raises(TypeError) as ei:
        y.sum().backward()
    assert ei.value is exc and ei.value.args == ("node hook said no",)


def test_post_accumulate_grad_hook_exception_passes_unchanged():
    exc = ArithmeticError("acc hook")
    x = _leaf()
    x.register_post_accumulate_grad_hook(lambda t: (_ for _ in ()).throw(exc))
    with pytest.raises(ArithmeticError) as ei:
        (x * 2).sum().backward()
    assert ei.value is exc and ei.value.args == ("acc hook",)


def test_exception_on_device_worker_passes_unchanged(virtual_cpu_devices):
    exc = ValueError("on cpu:1", 7)
    _Raises.exc = exc
    x = rg.tensor(np.ones(3), requires_grad=True)
    y = _Raises.apply(x.to("cpu:1"))
    with pytest.raises(ValueError) as ei:
        y.sum().backward()
    assert ei.value is exc and ei.value.args == ("on cpu:1", 7)
    assert threading.current_thread() is threading.main_thread()


def test_exception_in_anomaly_mode_keeps_args_and_notes_forward_trace():
    exc = ValueError("anomalous")
    _Raises.exc = exc
    with pytest.warns(UserWarning, match="Error detected in _RaisesBackward"):
        with rg.autograd.detect_anomaly():
            y = _Raises.apply(_leaf())
            with pytest.raises(ValueError) as ei:
                y.sum().backward()
    assert ei.value is exc and ei.value.args == ("anomalous",)
    if sys.version_info >= (3, 11):
        assert any("forward call" in n for n in _notes(ei.value))


def test_same_exception_raised_twice_gets_one_note():
    exc = ValueError("again")
    _Raises.exc = exc
    for _ in range(2):
        with pytest.raises(ValueError):
            _Raises.apply(_leaf()).sum().backward()
    assert exc.args == ("again",)
    if sys.version_info >= (3, 11):
        assert len(_notes(exc)) == 1


def test_anomaly_trace_goes_to_stderr_when_warnings_are_errors(run_python):
    # torch: the "Error detected in ..." warning cannot be issued as an
    # exception (the node's own error wins); it is written to stderr instead.
    code = r'''
import warnings
import numpy as np
import retrograd as rg

class Bad(rg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2
    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom", 3)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    mode = rg.autograd.detect_anomaly()
warnings.simplefilter("error")
with mode:
    y = Bad.apply(rg.tensor(np.ones(2), requires_grad=True))
    try:
        y.sum().backward()
    except ValueError as e:
        print("caught", e.args)
'''
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert "caught ('boom', 3)" in r.stdout
    assert "UserWarning: Error detected in BadBackward. Traceback of forward call" in r.stderr
    assert 'File "<string>", line 19' in r.stderr     # the forward call (y = Bad.apply(...))
