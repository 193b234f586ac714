"""Streams, as PyTorch's engine uses them: a backward op runs on its forward's
stream; a gradient crossing streams makes the consumer wait for the producer
(an event, never a host synchronize); gradients meeting in one input buffer
are summed on the consumer's stream; at the end the caller's stream waits
for the leaves' streams. On the CPU stand-in the waits are read from its
record (cupy.cuda._log); on a real GPU, test_cuda_streams_gpu.py checks
the values with a slow producer kernel."""
import numpy as np
import pytest

from _cuda import host, require_cuda

cp = require_cuda()

import retrograd as rg  # noqa: E402

FAKE = getattr(cp, "_FAKE", False)
needs_log = pytest.mark.skipif(not FAKE, reason="reads the CPU stand-in's record of records and waits")


def _same(a, b):
    return a.ptr == b.ptr and a.device_id == b.device_id


@pytest.fixture
def log():
    if not FAKE:
        return None
    cp.cuda._log.clear()
    yield cp.cuda._log
    cp.cuda._log.clear()


def _waits(log):
    # (waiting stream, stream the awaited event was recorded on)
    return [(s, e.stream) for verb, s, e in log if verb == "wait_event"]


def test_metadata_records_the_current_stream():
    s = rg.cuda.Stream()
    x = rg.ones(3, device="cuda", requires_grad=True)
    with rg.cuda.stream(s):
        y = x * 2
    z = y + 1
    assert _same(y.grad_fn.input_metadata[0].stream, s.cupy_stream)
    assert _same(z.grad_fn.input_metadata[0].stream, cp.cuda.get_current_stream())
    assert rg.ones(2, requires_grad=True).mul(2).grad_fn.input_metadata[0].stream is None


def test_backward_op_runs_on_its_forward_stream():
    seen = {}

    class Probe(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            seen["stream"] = cp.cuda.get_current_stream()
            return g

    s = rg.cuda.Stream()
    x = rg.ones(3, device="cuda", requires_grad=True)
    with rg.cuda.stream(s):
        y = Probe.apply(x)
    y.sum().backward()                  # called on the default stream
    assert _same(seen["stream"], s.cupy_stream)
    assert not _same(cp.cuda.get_current_stream(), s.cupy_stream)   # restored afterwards
    np.testing.assert_array_equal(host(x.grad), np.ones(3))


@needs_log
def test_one_stream_needs_no_events(log):
    x = rg.randn(4, device="cuda", requires_grad=True)
    (x.sin() * x).sum().backward()
    assert not [e for e in log if e[0] in ("record", "wait_event", "synchronize")]


@needs_log
def test_two_streams_meeting_in_one_buffer(log):
    s1, s2 = rg.cuda.Stream(), rg.cuda.Stream()
    default = cp.cuda.get_current_stream()
    x = rg.tensor(np.arange(4.0), device="cuda", requires_grad=True)
    with rg.cuda.stream(s1):
        a = x * 2                       # x's AccumulateGrad is made here: its stream is s1
    with rg.cuda.stream(s2):
        b = x * 3
    loss = (a + b).sum()                # on the default stream
    log.clear()
    loss.backward()
    waits = _waits(log)
    # the add's gradient (default stream) reaches both products' streams
    assert any(_same(w, s1.cupy_stream) and _same(p, default) for w, p in waits)
    assert any(_same(w, s2.cupy_stream) and _same(p, default) for w, p in waits)
    # s2's gradient for x is consumed on x's stream, s1
    assert any(_same(w, s1.cupy_stream) and _same(p, s2.cupy_stream) for w, p in waits)
    # and the caller's stream waits for the leaf's at the end, after everything else
    assert _same(waits[-1][0], default) and _same(waits[-1][1], s1.cupy_stream)
    # no host synchronize anywhere
    assert not [e for e in log if e[0] == "synchronize"]
    np.testing.assert_array_equal(host(x.grad), np.full(4, 5.0))


@needs_log
def test_autograd_grad_captures_sync_with_the_caller(log):
    s = rg.cuda.Stream()
    x = rg.ones(3, device="cuda", requires_grad=True)
    with rg.cuda.stream(s):
        y = (x * x).sum()
    log.clear()
    (g,) = rg.autograd.grad(y, x)
    waits = _waits(log)
    default = cp.cuda.get_current_stream()
    # root gradient: made on the caller's stream, consumed on s
    assert _same(waits[0][0], s.cupy_stream) and _same(waits[0][1], default)
    # the captured gradient was made on s: the caller waits for it
    assert _same(waits[-1][0], default) and _same(waits[-1][1], s.cupy_stream)
    np.testing.assert_array_equal(host(g), np.full(3, 2.0))


@needs_log
def test_final_callbacks_run_after_the_caller_waited(log):
    s = rg.cuda.Stream()
    x = rg.ones(2, device="cuda", requires_grad=True)
    with rg.cuda.stream(s):
        y = (x * 4).sum()
    order = []

    def prehook(grads):
        rg.autograd.graph.queue_callback(lambda: order.append(len(_waits(log))))
    y.grad_fn.register_prehook(prehook)
    log.clear()
    y.backward()
    assert order and order[0] == len(_waits(log))      # no wait came after the callback
    assert _same(_waits(log)[-1][0], cp.cuda.get_current_stream())
