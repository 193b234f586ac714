"""Node events: each node the engine runs is reported as torch's
"autograd::engine::evaluate_function: <node>" around "<node>", with the
sequence number of the forward op that created it, on the thread that ran
it (a virtual device's worker for its nodes)."""
import threading

import numpy as np

import retrograd as rg
import retrograd.engine as engine
from retrograd.profiler._events import FunctionEvent

PREFIX = "autograd::engine::evaluate_function: "


def leaf(data):
    return rg.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


def test_node_events_pair_and_link_to_forward_ops(torch):
    x = leaf([1.0, 2.0, 3.0])
    with rg.profiler.profile() as prof:
        y = (x * 2).sin().sum()
        y.backward()
    evs = prof.events()
    fwd = {e.name: e for e in evs if e.name.startswith("aten::")}
    applies = [e for e in evs if e.scope == 1]
    assert [e.name for e in applies] == ["SumBackward0", "SinBackward0", "MulBackward0", "AccumulateGrad"]
    for a in applies:
        outer = a.cpu_parent
        assert outer.name == PREFIX + a.name
        assert outer.sequence_nr == a.sequence_nr
        assert a.thread == threading.get_native_id()       # CPU nodes run on the caller
    seq = {a.name: a.sequence_nr for a in applies}
    assert seq["SumBackward0"] == fwd["aten::sum"].sequence_nr
    assert seq["SinBackward0"] == fwd["aten::sin"].sequence_nr
    assert seq["MulBackward0"] == fwd["aten::mul"].sequence_nr
    assert seq["AccumulateGrad"] == -1                     # no forward op creates it (torch: -1)
    # torch's engine reports the same node sequence with the same numbering
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.profiler.profile() as tprof:
        (tx * 2).sin().sum().backward()
    tnames = [e.name for e in tprof.events() if e.name.startswith(PREFIX)]
    tnames = [n.replace("torch::autograd::", "") for n in tnames]
    assert tnames == [PREFIX + a.name for a in applies]
    tseq = [e.sequence_nr for e in tprof.events() if e.name.startswith(PREFIX)]
    ours = [a.sequence_nr for a in applies]
    assert [s - ours[0] if s >= 0 else s for s in ours] == [s - tseq[0] if s >= 0 else s for s in tseq]


def test_node_events_record_gradient_shapes():
    x = leaf(np.ones((2, 3)))
    with rg.profiler.profile(record_shapes=True) as prof:
        (x * 2).sum().backward()
    applies = {e.name: e for e in prof.events() if e.scope == 1}
    assert applies["SumBackward0"].input_shapes == [[]]
    assert applies["MulBackward0"].input_shapes == [[2, 3]]
    assert applies["MulBackward0"].input_types == ["double"]


def test_device_nodes_run_on_the_device_worker(virtual_cpu_devices):
    x = leaf([1.0, 2.0, 3.0])
    with rg.profiler.profile() as prof:
        x1 = x.to("cpu:1")
        y = x1 * x1
        out = (y.to("cpu") * 2.0).sum()
        out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0, 12.0])
    worker = engine.device_threads()[1]
    caller = threading.get_native_id()
    assert worker.native_id != caller
    applies = [e for e in prof.events() if e.scope == 1]
    mul = next(e for e in applies if e.sequence_nr == y.grad_fn._sequence_nr())
    assert mul.name == "MulBackward0"
    assert mul.thread == worker.native_id
    assert mul.cpu_parent.thread == worker.native_id
    sum_ = next(e for e in applies if e.name == "SumBackward0")
    assert sum_.thread == caller
    fwd_mul = next(e for e in prof.events() if e.name == "aten::mul" and e.sequence_nr == mul.sequence_nr)
    assert fwd_mul.thread == caller           # forward on the user's thread, backward on the worker
    assert {e.thread for e in applies} == {caller, worker.native_id}


def test_create_graph_ops_nest_inside_their_node():
    x = leaf([1.0, 2.0])
    with rg.profiler.profile() as prof:
        y = (x * x).sum()
        (g,) = rg.autograd.grad(y, x, create_graph=True)
    mul_bwd = next(e for e in prof.events() if e.name == "MulBackward0")
    assert any(c.name.startswith("aten::") for c in mul_bwd.cpu_children)
    assert g.requires_grad


def test_failing_node_leaves_no_open_event():
    class Boom(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = leaf([1.0])
    with rg.profiler.profile() as prof:
        y = Boom.apply(x).sum()
        try:
            y.backward()
        except ValueError:
            pass
    names = [e.name for e in prof.events()]
    assert "autograd::engine::evaluate_function: SumBackward0" in names
    assert all(isinstance(e, FunctionEvent) and e.time_range.end >= e.time_range.start
               for e in prof.events())
    # the next profile starts clean: a later op is an op, not a stale backward apply
    with rg.profiler.profile() as prof:
        x * 2
    assert [e.scope for e in prof.events()] == [0]
