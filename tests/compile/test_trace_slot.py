"""Core's tracing slot (abi.pxd, ABI 1.5 and 1.6) as retrograd-compile's
callback hears it: every op with its arguments and Python function, in-place
ops as one step, random factories, composites, the data-dependent Python that
breaks a trace, and the tensors core makes; only the tracing thread's
events."""
import threading

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.compile import _tracer

OP, INPLACE_BEGIN, INPLACE, RANDOM, BREAK, COMPOSITE_BEGIN, COMPOSITE_END, NEW = range(8)


class Log:
    def __init__(self):
        self.events = []

    def event(self, kind, op, inputs, outputs, attrs):
        self.events.append((kind, op, inputs, outputs, attrs))


def trace(fn, new=False):
    """The events of running fn traced (RG_TRACE_NEW ones only with new=True)."""
    log = Log()
    _tracer.begin(log)
    try:
        fn()
    finally:
        _tracer.end()
    return [e for e in log.events if new or e[0] != NEW]


def test_new_tensors_are_reported_but_not_detach_or_results_with_grad_fn():
    w = rg.ones(2, requires_grad=True)
    made = {}

    def body():
        made["tensor"] = rg.tensor([1.0, 2.0])
        made["zeros"] = rg.zeros(3)
        made["ctor"] = rg.Tensor([4.0])
        made["detached"] = w.detach()
        made["with_grad_fn"] = w * 2
        made["no_grad_fn"] = made["tensor"] * 2
    ev = trace(body, new=True)
    reported = [outputs[0] for kind, _, _, outputs, _ in ev if kind == NEW]
    for key in ("tensor", "zeros", "ctor", "no_grad_fn"):
        assert any(t is made[key] for t in reported), key
    for key in ("detached", "with_grad_fn"):
        assert not any(t is made[key] for t in reported), key
    # outside a trace nothing is reported
    assert trace(lambda: None, new=True) == []


def test_ops_report_args_outputs_and_a_replayable_function():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    ev = trace(lambda: (x * 2.5).sum(dim=0))
    assert [(k, op) for k, op, *_ in ev] == [(OP, "mul"), (OP, "sum")]
    kind, op, inputs, outputs, fn = ev[0]
    assert inputs[0] is x and inputs[1] == 2.5 and len(outputs) == 1
    with rg.no_grad():
        np.testing.assert_allclose(fn(*inputs).numpy(), outputs[0].detach().numpy())
    assert ev[1][2][1:] == (0, False, None)            # sum(self, dim, keepdim, dtype)


def test_inplace_is_one_step_with_its_out_of_place_function():
    y = rg.ones(3) * 2
    ev = trace(lambda: y.add_(1))
    kinds = [k for k, *_ in ev]
    assert kinds[0] == INPLACE_BEGIN and kinds[-1] == INPLACE
    assert ev[-1][1] == "add_" and ev[-1][3] == (y,)
    res = ev[-1][4](rg.ones(3) * 2, *ev[-1][2][1:])
    np.testing.assert_allclose(res.numpy(), y.numpy())


def test_random_factories_report_a_redraw():
    ev = trace(lambda: rg.rand(4))
    # (the factory is a composite op: its begin and end come around the draw)
    assert [(k, op) for k, op, *_ in ev] == [(COMPOSITE_BEGIN, "aten::rand"), (RANDOM, "rand"),
                                            (COMPOSITE_END, "aten::rand")]
    kind, op, inputs, outputs, redraw = ev[1]
    rg.manual_seed(1)
    a = redraw()
    rg.manual_seed(1)
    np.testing.assert_array_equal(a.numpy(), rg.rand(4).numpy())


def test_composites_begin_and_end_around_their_ops():
    x = rg.ones(2, 3)
    w = rg.ones(4, 3)
    ev = trace(lambda: F.linear(x, w))
    assert ev[0][:2] == (COMPOSITE_BEGIN, "aten::linear")
    assert ev[-1][0] == COMPOSITE_END and OP in [k for k, *_ in ev[1:-1]]


@pytest.mark.parametrize("what,act", [
    ("item", lambda t: t.sum().item()),
    ("__bool__", lambda t: bool(t.sum())),
    ("numpy", lambda t: t.numpy()),
    ("__array__", lambda t: np.asarray(t)),
    ("__iter__", lambda t: list(t)),
    ("tolist", lambda t: t.tolist()),
    ("retain_grad", lambda t: (t * 1).retain_grad()),
])
def test_data_dependent_python_is_reported(what, act):
    t = rg.ones(3)
    if what == "retain_grad":
        t.requires_grad_(True)
    ev = trace(lambda: act(t))
    assert (BREAK, what) in [(k, op) for k, op, *_ in ev]


def test_backward_without_create_graph_is_a_break():
    x = rg.ones(2, requires_grad=True)
    ev = trace(lambda: (x * 2).sum().backward())
    assert (BREAK, "backward") in [(k, op) for k, op, *_ in ev]
    ev = trace(lambda: rg.autograd.grad((x * 2).sum(), x, create_graph=True))
    assert BREAK not in [k for k, *_ in ev]


def test_other_threads_ops_are_not_reported_and_slot_empties():
    from retrograd.core import abi
    log = Log()
    _tracer.begin(log)
    try:
        assert abi._slot_status()["trace"]
        th = threading.Thread(target=lambda: rg.ones(2) * 3)
        th.start()
        th.join()
    finally:
        _tracer.end()
    assert log.events == []
    assert not abi._slot_status()["trace"]
