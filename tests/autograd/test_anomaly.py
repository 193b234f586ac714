"""Anomaly mode: detect_anomaly / set_detect_anomaly against torch,
forward tracebacks on nodes, the NaN / Inf checks with their (new) gradient
ranges, errors that show the forward traceback, and (new) the traceback of
the in-place change that invalidated a saved tensor."""
import threading
import warnings

import numpy as np
import pytest
import torch

import retrograd as rg

# The NaN / Inf gradients these tests provoke make NumPy warn; that is expected.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:divide by zero encountered:RuntimeWarning")


@pytest.fixture(autouse=True)
def _anomaly_off():
    """Every test starts and ends with anomaly mode off (in both libraries)."""
    rg.set_anomaly_enabled(False)
    torch.set_anomaly_enabled(False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # "Anomaly Detection has been enabled"
        yield
    rg.set_anomaly_enabled(False)
    torch.set_anomaly_enabled(False)


def _state(lib):
    return (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())


# -- the switches -------------------------------------------------------------

@pytest.mark.parametrize("lib", [rg, torch], ids=["retrograd", "torch"])
def test_switch_sequence_matches_torch(lib):
    # The same sequence of switches, recorded in each library, must agree.
    seq = [_state(lib)]
    with lib.autograd.detect_anomaly():
        seq.append(_state(lib))
        with lib.autograd.detect_anomaly(check_nan=False):
            seq.append(_state(lib))
        seq.append(_state(lib))
    seq.append(_state(lib))
    lib.autograd.set_detect_anomaly(True, check_nan=False)
    seq.append(_state(lib))
    with lib.autograd.set_detect_anomaly(False):
        seq.append(_state(lib))
    seq.append(_state(lib))
    lib.autograd.set_detect_anomaly(False)
    seq.append(_state(lib))
    expected = [(False, True), (True, True), (True, False), (True, True), (False, True),
                (True, False), (False, True), (True, False), (False, True)]
    assert seq == expected


def test_detect_anomaly_warns_like_torch():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        rg.autograd.detect_anomaly()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        torch.autograd.detect_anomaly()


def test_detect_anomaly_as_decorator():
    @rg.autograd.detect_anomaly(check_inf=True)
    def flags():
        from retrograd.core import abi
        return (abi.is_anomaly_enabled(), abi.is_anomaly_check_nan_enabled(),
                abi.is_anomaly_check_inf_enabled())

    assert flags() == (True, True, True)
    assert not rg.is_anomaly_enabled()

    @rg.autograd.set_detect_anomaly(True, check_nan=False)
    def flags2():
        return _state(rg)

    assert not rg.is_anomaly_enabled()          # decorating does not switch it on
    assert flags2() == (True, False)
    assert _state(rg) == (False, True)


def test_detect_anomaly_decorates_generators():
    @rg.autograd.detect_anomaly()
    def gen():
        yield rg.is_anomaly_enabled()
        yield rg.is_anomaly_enabled()

    g = gen()
    assert next(g) is True
    assert not rg.is_anomaly_enabled()          # off between resumptions
    assert next(g) is True


def test_bad_arguments_raise_type_error():
    with pytest.raises(TypeError, match="mode must be a bool"):
        rg.autograd.set_detect_anomaly("yes")
    with pytest.raises(TypeError, match="check_nan must be a bool"):
        rg.autograd.detect_anomaly(check_nan=1)


def test_mode_is_thread_local():
    seen = {}

    def other():
        seen["other"] = rg.is_anomaly_enabled()

    with rg.autograd.detect_anomaly():
        t = threading.Thread(target=other)
        t.start()
        t.join()
        seen["main"] = rg.is_anomaly_enabled()
    assert seen == {"main": True, "other": False}


# -- forward tracebacks -------------------------------------------------------

def _make_mul(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0          # the line the trace must end with
    return y


@pytest.mark.parametrize("lib", [rg, torch], ids=["retrograd", "torch"])
def test_node_metadata_traceback_like_torch(lib):
    with lib.autograd.detect_anomaly():
        y = _make_mul(lib)
    tb = y.grad_fn.metadata["traceback_"]
    assert isinstance(tb, list) and all(isinstance(f, str) for f in tb)
    assert "_make_mul" in tb[-1] and "y = x * 2.0" in tb[-1]
    assert any("test_node_metadata_traceback_like_torch" in f for f in tb)


@pytest.mark.parametrize("lib", [rg, torch], ids=["retrograd", "torch"])
def test_no_traceback_when_off(lib):
    y = _make_mul(lib)
    assert "traceback_" not in y.grad_fn.metadata


# -- NaN and Inf checks -------------------------------------------------------

def _nan_backward(lib, **kw):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    with lib.autograd.detect_anomaly(**kw):
        y = x.sqrt() * 0.0          # SqrtBackward0 computes 0 / (2 * sqrt(0)) = nan
        y.sum().backward()


def _with_notes(exc):
    # The exception's own message, then the engine's notes (which node raised
    # it and, in anomaly mode, the forward call that created that node).
    return "\n".join([str(exc)] + list(getattr(exc, "__notes__", [])))


def test_nan_error_matches_torch_and_gives_ranges():
    with pytest.raises(RuntimeError) as t_err, pytest.warns(UserWarning, match="Error detected in SqrtBackward0"):
        _nan_backward(torch)
    with pytest.raises(RuntimeError) as r_err, pytest.warns(UserWarning, match="Error detected in SqrtBackward0"):
        _nan_backward(rg)
    torch_first = str(t_err.value).splitlines()[0]
    assert torch_first == "Function 'SqrtBackward0' returned nan values in its 0th output."
    msg = _with_notes(r_err.value)
    assert msg.splitlines()[0] == torch_first
    # New: what the node received (zeros) and returned (a nan and a zero).
    assert "gradients it received: [0] float64 shape (2,): min 0.0, max 0.0" in msg
    assert "gradients it returned: [0] float64 shape (2,): min 0.0, max 0.0, 1 nan" in msg
    # The forward call that created the node.
    assert "y = x.sqrt() * 0.0" in msg


@pytest.mark.parametrize("lib", [rg, torch], ids=["retrograd", "torch"])
def test_check_nan_false_lets_nan_through(lib):
    _nan_backward(lib, check_nan=False)


@pytest.mark.parametrize("lib", [rg, torch], ids=["retrograd", "torch"])
def test_nan_not_checked_when_off(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    (x.sqrt() * 0.0).sum().backward()
    assert np.isnan(np.asarray(x.grad.detach().numpy() if lib is torch else x.grad))[0]


def test_inf_checked_only_with_check_inf():
    x = rg.tensor([0.0, 4.0], requires_grad=True)
    with rg.autograd.detect_anomaly():
        x.sqrt().sum().backward()               # inf gradient: not checked by default (as torch)
    assert np.isinf(np.asarray(x.grad)[0])
    x.grad = None
    with rg.autograd.detect_anomaly(check_inf=True), pytest.warns(UserWarning):
        with pytest.raises(RuntimeError) as err:
            x.sqrt().sum().backward()
    msg = str(err.value)
    assert msg.splitlines()[0] == "Function 'SqrtBackward0' returned inf values in its 0th output."
    assert "gradients it returned: [0] float64 shape (2,): min 0.25, max inf" in msg
    with rg.autograd.set_detect_anomaly(True, check_nan=False, check_inf=True):
        with pytest.raises(RuntimeError, match="returned inf values"), pytest.warns(UserWarning):
            x.sqrt().sum().backward()


def test_nan_check_float32_and_create_graph():
    x = rg.tensor(np.array([0.0, 1.0], dtype=np.float32), requires_grad=True)
    with rg.autograd.detect_anomaly(), pytest.warns(UserWarning):
        y = (x.sqrt() * 0.0).sum()
        with pytest.raises(RuntimeError, match=r"(?s)SqrtBackward0' returned nan.*float32"):
            rg.autograd.grad(y, x, create_graph=True)


def test_nan_check_on_device_worker(virtual_cpu_devices):
    # The node runs on cpu:1's worker thread, whose own anomaly mode is off:
    # the graph task carries the caller's.
    x = rg.tensor([0.0, 1.0], requires_grad=True)
    with rg.autograd.detect_anomaly(), pytest.warns(UserWarning, match="Error detected in SqrtBackward0"):
        y = (x.to("cpu:1").sqrt() * 0.0).sum()
        with pytest.raises(RuntimeError, match="SqrtBackward0' returned nan values in its 0th output"):
            y.backward()


def test_device_worker_runs_nodes_in_the_callers_anomaly_mode(virtual_cpu_devices):
    # A hook of a node on cpu:1 runs on that device's worker thread: it sees
    # the anomaly mode of the thread that called backward, and the worker's
    # own mode is restored afterwards.
    seen = []
    x = rg.tensor([1.0, 2.0], requires_grad=True)

    def hook(g):
        seen.append((threading.get_ident() != main, rg.is_anomaly_enabled()))

    main = threading.get_ident()
    y = x.to("cpu:1") * 2.0
    y.register_hook(hook)
    with rg.autograd.detect_anomaly():
        y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert seen == [(True, True), (True, False)]


# -- errors in backward show the forward traceback ----------------------------

@pytest.mark.parametrize("lib", [rg, torch], ids=["retrograd", "torch"])
def test_hook_error_names_node_and_forward_trace(lib):
    def bad_hook(g):
        raise ValueError("bad hook")

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.detect_anomaly():
        y = x * 3.0                    # forward line
        z = y.exp()
        z.register_hook(bad_hook)      # runs when ExpBackward0 is evaluated
        with pytest.raises(ValueError, match="bad hook"), \
                pytest.warns(UserWarning, match="(?s)Error detected in ExpBackward0.*z = y.exp()"):
            z.sum().backward()


def test_error_message_contains_forward_trace():
    def bad_hook(g):
        raise ValueError("bad hook")

    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with rg.autograd.detect_anomaly():
        z = x.exp()                    # forward line
        z.register_hook(bad_hook)
        with pytest.raises(ValueError) as err, pytest.warns(UserWarning):
            z.sum().backward()
    assert err.value.args == ("bad hook",)          # the message is the hook's own (as torch)
    msg = _with_notes(err.value)
    assert "bad hook" in msg and "ExpBackward0" in msg
    assert "The forward call that created ExpBackward0 was:" in msg
    assert "z = x.exp()" in msg


def test_no_forward_trace_when_off():
    def bad_hook(g):
        raise ValueError("bad hook")

    x = rg.tensor([1.0, 2.0], requires_grad=True)
    z = x.exp()
    z.register_hook(bad_hook)
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # and no anomaly warning
        with pytest.raises(ValueError) as err:
            z.sum().backward()
    assert "forward call" not in str(err.value)


# -- saved tensors modified in place ------------------------------------------

def _modified_saved(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    c = b * b                          # saves b
    b.mul_(2.0)                        # the in-place change to report
    return c


@pytest.mark.parametrize("lib", [rg, torch], ids=["retrograd", "torch"])
def test_inplace_error_without_anomaly(lib):
    c = _modified_saved(lib)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as err:
        c.sum().backward()
    assert "b.mul_(2.0)" not in str(err.value)


def test_inplace_error_shows_the_inplace_traceback():
    with rg.autograd.detect_anomaly():
        c = _modified_saved(rg)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as err, \
                pytest.warns(UserWarning, match="Error detected in MulBackward0"):
            c.sum().backward()
    msg = _with_notes(err.value)
    assert "The in-place operation that modified it (version 0 -> 1)" in msg
    assert "b.mul_(2.0)" in msg and "_modified_saved" in msg
    # ... and the forward call that created the failing node.
    assert "c = b * b" in msg
    # torch raises the same error type there.
    with torch.autograd.detect_anomaly():
        c = _modified_saved(torch)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"), pytest.warns(UserWarning):
            c.sum().backward()


def test_inplace_traceback_of_the_first_change_after_the_save():
    with rg.autograd.detect_anomaly():
        a = rg.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1.0
        b += 1.0                       # before the save: not to blame
        c = b.exp()                    # saves its output, not b
        d = b * b                      # saves b at version 1
        b[0] = 5.0                     # first change after the save
        b += 2.0                       # second one
        with pytest.raises(RuntimeError) as err, pytest.warns(UserWarning):
            (c.sum() + d.sum()).backward()
    msg = str(err.value)
    assert "(version 1 -> 2)" in msg and "b[0] = 5.0" in msg
    assert "b += 2.0" not in msg.split("The in-place operation")[1].split("The forward call")[0]


def test_inplace_traceback_through_numpy_ufunc_out():
    with rg.autograd.detect_anomaly():
        a = rg.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1.0
        d = b * b
        with rg.no_grad():
            np.add(b, 1.0, out=b)      # in place through __array_ufunc__
        with pytest.raises(RuntimeError, match="modified by an inplace") as err, pytest.warns(UserWarning):
            d.sum().backward()
    assert "np.add(b, 1.0, out=b)" in str(err.value)


# -- nodes created by a backward (create_graph) know their parent, as torch ------------------

@pytest.mark.parametrize("lib", [rg, torch], ids=["retrograd", "torch"])
def test_double_backward_nodes_record_their_parent(lib):
    with lib.autograd.detect_anomaly():
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x.sin()).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        meta = g.grad_fn.metadata
        assert "traceback_" in meta and "parent_" in meta
        assert meta["parent_"].name() in ("MulBackward0", "SinBackward0")
        assert "parent_" not in y.grad_fn.metadata       # created by the forward


def test_error_in_double_backward_shows_the_inducing_forward():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with rg.autograd.detect_anomaly():
        y = (x * x).sum()        # the forward that induced g's nodes
        (g,) = rg.autograd.grad(y, x, create_graph=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="returned nan values") as info:
                g.backward(rg.tensor([np.nan, 1.0]))
    msg = _with_notes(info.value)
    assert "Traceback of forward call that induced the previous calculation (MulBackward0)" in msg
    assert "y = (x * x).sum()" in msg
    # torch's two warnings: the failing node's forward, then the one that induced it
    reports = [str(w.message) for w in caught if "Traceback of forward call" in str(w.message)]
    assert len(reports) == 2, reports
    assert "caused the error" in reports[0]
    assert "Previous calculation was induced by MulBackward0" in reports[1]
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.autograd.detect_anomaly():
        (tg,) = torch.autograd.grad((tx * tx).sum(), tx, create_graph=True)
        with warnings.catch_warnings(record=True) as tcaught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="returned nan values"):
                tg.backward(torch.tensor([float("nan"), 1.0]))
    treports = [str(w.message) for w in tcaught if "Traceback of forward call" in str(w.message)]
    assert len(treports) == 2 and "Previous calculation was induced by MulBackward0" in treports[1]
