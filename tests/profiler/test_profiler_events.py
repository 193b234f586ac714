"""What a profile records: ops (torch's names, input shapes and types,
sequence numbers), record_function ranges (nesting, self vs total time),
Python stacks, the bytes outputs allocate; and that every op that builds a
graph node reports an event."""
import os
import sys
import threading
import time

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.core.abi import _peek_sequence_nr

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ops"))
from op_samples import OP_DB  # noqa: E402
from _arrays import values  # noqa: E402


def leaf(*shape, dtype=np.float64):
    return rg.tensor(np.random.default_rng(0).standard_normal(shape).astype(dtype), requires_grad=True)


def ops_of(prof):
    return [e for e in prof.events() if e.name.startswith("aten::")]


def test_ops_recorded_with_torch_names_shapes_and_types(torch):
    x = leaf(3, 4, dtype=np.float32)
    with rg.profiler.profile(record_shapes=True) as prof:
        (x * 2).sin().sum()
    tx = torch.randn(3, 4, requires_grad=True)
    with torch.profiler.profile(record_shapes=True) as tprof:
        (tx * 2).sin().sum()
    ours = {e.name: e for e in ops_of(prof)}
    theirs = {e.name: e for e in tprof.events() if e.name in ("aten::mul", "aten::sin")}
    for name in ("aten::mul", "aten::sin"):
        assert ours[name].input_shapes == theirs[name].input_shapes, name
        assert ours[name].count == 1
    assert ours["aten::mul"].input_types == ["float", "Scalar"]
    assert ours["aten::sum"].input_shapes[0] == [3, 4]
    assert ours["aten::sin"].thread == threading.get_native_id()
    # start and end in ns on one monotonic clock (time.monotonic_ns's), in order
    evs = ops_of(prof)
    assert all(e.start_ns <= e.end_ns for e in evs)
    assert [e.start_ns for e in evs] == sorted(e.start_ns for e in evs)
    assert evs[-1].end_ns <= time.monotonic_ns()
    assert ours["aten::sin"].time_range.start == ours["aten::sin"].start_ns / 1000


def test_input_shapes_empty_without_record_shapes():
    x = leaf(2, 2)
    with rg.profiler.profile() as prof:
        x.exp()
    (ev,) = ops_of(prof)
    assert ev.input_shapes == []


def test_sequence_numbers_are_the_created_nodes(torch):
    x = leaf(3)
    with rg.profiler.profile() as prof:
        a = x * 2
        b = a.exp()
        c = b.sum()
    seq = {e.name: e.sequence_nr for e in ops_of(prof)}
    assert seq["aten::mul"] == a.grad_fn._sequence_nr()
    assert seq["aten::exp"] == b.grad_fn._sequence_nr()
    assert seq["aten::sum"] == c.grad_fn._sequence_nr()
    # As torch: with grad mode off an op has no sequence number (-1); an op
    # that records nothing in grad mode carries the thread's next number.
    with rg.profiler.profile() as prof:
        with rg.no_grad():
            x * 3
    tx = torch.ones(3, requires_grad=True)
    with torch.profiler.profile() as tprof:
        with torch.no_grad():
            tx * 3
    assert ops_of(prof)[0].sequence_nr == -1
    assert [e.sequence_nr for e in tprof.events() if e.name == "aten::mul"][0] == -1
    plain = rg.tensor(np.ones(3))
    before = _peek_sequence_nr()
    with rg.profiler.profile() as prof:
        plain * 3
    assert ops_of(prof)[0].sequence_nr == before


def test_record_function_nesting_self_and_total_times():
    x = leaf(50, 50)
    with rg.profiler.profile() as prof:
        with rg.profiler.record_function("outer"):
            time.sleep(0.002)
            with rg.profiler.record_function("inner"):
                time.sleep(0.003)
                x @ x
            x + x
    ev = {e.name: e for e in prof.events()}
    outer, inner = ev["outer"], ev["inner"]
    mm, add = ev["aten::matmul"], ev["aten::add"]
    assert inner.cpu_parent is outer and mm.cpu_parent is inner and add.cpu_parent is outer
    assert outer.is_user_annotation and not mm.is_user_annotation
    assert outer.cpu_time_total >= 5000 and inner.cpu_time_total >= 3000
    assert inner.self_cpu_time_total == pytest.approx(inner.cpu_time_total - mm.cpu_time_total)
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - inner.cpu_time_total - add.cpu_time_total)
    assert outer.self_cpu_time_total >= 2000
    assert inner.time_range.start >= outer.time_range.start
    assert inner.time_range.end <= outer.time_range.end
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["outer"].cpu_time_total == pytest.approx(outer.cpu_time_total)
    assert avg["inner"].self_cpu_time_total == pytest.approx(inner.self_cpu_time_total)


def test_record_function_as_decorator_and_recursion():
    @rg.profiler.record_function("fib")
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    with rg.profiler.profile() as prof:
        assert fib(5) == 5
    fibs = [e for e in prof.events() if e.name == "fib"]
    assert len(fibs) == 15                     # calls of fib(5)
    depth = max(_depth(e) for e in fibs)
    assert depth == 4                          # fib(5) -> ... -> fib(1): nested 5 deep
    assert prof.key_averages()[0].count == 15


def _depth(e):
    d = 0
    while e.cpu_parent is not None:
        e, d = e.cpu_parent, d + 1
    return d


def test_record_function_outside_a_profile_records_nothing():
    with rg.profiler.record_function("alone"):
        pass
    with rg.profiler.profile() as prof:
        pass
    assert len(prof.events()) == 0


def test_record_function_rejects_bad_arguments():
    with pytest.raises(TypeError, match="name must be a str"):
        rg.profiler.record_function(3)
    rf = rg.profiler.record_function("x")
    with pytest.raises(RuntimeError, match="without a matching __enter__"):
        rf.__exit__(None, None, None)


def test_profile_memory_bytes_equal_the_outputs_nbytes():
    x = leaf(7, 5)
    with rg.profiler.profile(profile_memory=True) as prof:
        y = x.exp()
        z = x.to(np.float32)
        v = y.view(35)            # a view allocates nothing
        s = y.sum()
    ev = {e.name: e for e in ops_of(prof)}
    assert ev["aten::exp"].cpu_memory_usage == values(y).nbytes == 7 * 5 * 8
    assert ev["aten::_to_dtype"].cpu_memory_usage == values(z).nbytes == 7 * 5 * 4
    assert ev["aten::view"].cpu_memory_usage == 0
    assert ev["aten::sum"].cpu_memory_usage == values(s).nbytes
    del v
    with rg.profiler.profile() as prof:
        x.exp()
    assert ops_of(prof)[0].cpu_memory_usage == 0          # not measured without profile_memory


def test_memory_sums_up_the_tree():
    x = leaf(4, 4)
    with rg.profiler.profile(profile_memory=True) as prof:
        with rg.profiler.record_function("block"):
            kept = [x.exp(), x.sin()]
        with rg.profiler.record_function("dropped"):
            x.cos()
    block = next(e for e in prof.events() if e.name == "block")
    assert block.cpu_memory_usage == 2 * 4 * 4 * 8
    assert block.self_cpu_memory_usage == 0
    # a result freed at once inside the range: its free is charged there too,
    # so the range holds nothing at its end (as torch counts)
    dropped = next(e for e in prof.events() if e.name == "dropped")
    assert dropped.cpu_memory_usage == 0
    assert dropped.self_cpu_memory_usage == -4 * 4 * 8
    assert len(kept) == 2


def test_with_stack_records_the_callers_frames():
    x = leaf(2)
    with rg.profiler.profile(with_stack=True) as prof:
        x.exp()
    (ev,) = ops_of(prof)
    assert any(__file__ in frame and "test_with_stack_records_the_callers_frames" in frame
               for frame in ev.stack)
    assert not any("retrograd/profiler" in frame for frame in ev.stack)
    with rg.profiler.profile() as prof:
        x.exp()
    assert ops_of(prof)[0].stack == []


def test_custom_function_reports_its_class_name():
    class Double(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf(3)
    with rg.profiler.profile() as prof:
        y = Double.apply(x)
        y.sum().backward()
    ev = {}
    for e in prof.events():
        ev.setdefault(e.name, e)           # the first of each name
    assert ev["Double"].sequence_nr == y.grad_fn._sequence_nr()
    assert ev["aten::mul"].cpu_parent is ev["Double"]       # its forward, run inside
    assert ev["DoubleBackward"].sequence_nr == ev["Double"].sequence_nr
    assert ev["DoubleBackward"].scope == 1


def test_inplace_ops_report_torch_names():
    w = leaf(2, 3)
    with rg.profiler.profile() as prof:
        with rg.no_grad():
            w -= 0.1
            w[0] = 1.0
        y = w * 1.0
        y += w
        y.exp_()
    names = [e.name for e in prof.events() if e.cpu_parent is None]
    assert names == ["aten::sub_", "aten::index_put_", "aten::mul", "aten::add_", "aten::exp_"]
    add_ = next(e for e in prof.events() if e.name == "aten::add_")
    assert add_.sequence_nr == y.grad_fn._sequence_nr() - 1      # add_'s node, then exp_'s


def _reachable_new_nodes(outs, lo):
    seen, stack, found = set(), [o.grad_fn for o in outs if isinstance(o, rg.Tensor)], []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if n._sequence_nr() >= lo and n.name() != "AccumulateGrad":
            found.append(n)
        stack += [f for f, _ in n.next_functions]
    return found


def _assert_every_node_has_its_op(fn, label):
    lo = _peek_sequence_nr()
    with rg.profiler.profile() as prof:
        out = fn()
    outs = out if isinstance(out, (tuple, list)) else [out]
    seqs = {e.sequence_nr for e in prof.events() if not e.is_backward}
    nodes = _reachable_new_nodes(outs, lo)
    assert nodes, f"{label}: built no graph"
    missing = [n.name() for n in nodes if n._sequence_nr() not in seqs]
    assert not missing, f"{label}: nodes created by unreported ops: {missing}"


@pytest.mark.parametrize("info", [o for o in OP_DB if o.differentiable], ids=lambda o: o.name)
def test_every_registry_op_is_reported(info):
    for s in info.samples():
        args = [rg.tensor(a, requires_grad=a.dtype.kind == "f") if isinstance(a, np.ndarray) else a
                for a in s.args]
        if not any(isinstance(a, rg.Tensor) and a.requires_grad for a in args):
            continue
        _assert_every_node_has_its_op(lambda: info.op(*args, **s.kwargs), f"{info.name} {s!r}")


def _inplace(f):
    def run():
        t = leaf(3, 4) * 1.0
        f(t)
        return t
    return run


HAND_WRITTEN = {
    "getitem": lambda: leaf(3, 4)[1:, [0, 2]],
    "setitem": _inplace(lambda t: t.__setitem__((0, slice(None)), leaf(4))),
    "iadd": _inplace(lambda t: t.__iadd__(leaf(3, 4))),
    "mul_": _inplace(lambda t: t.mul_(leaf(3, 4))),
    "clamp_": _inplace(lambda t: t.clamp_(min=0)),
    "view_inplace": _inplace(lambda t: t[0].mul_(2)),
    "conv2d": lambda: F.conv2d(leaf(1, 2, 5, 5), leaf(3, 2, 3, 3), leaf(3)),
    "max_pool2d": lambda: F.max_pool2d(leaf(1, 2, 4, 4), 2),
    "cross_entropy": lambda: F.cross_entropy(leaf(4, 5), rg.tensor(np.array([0, 1, 2, 3]))),
    "layer_norm": lambda: F.layer_norm(leaf(4, 5), (5,)),
    "embedding": lambda: F.embedding(rg.tensor(np.array([0, 2])), leaf(4, 5)),
    "cat": lambda: rg.cat([leaf(2, 3), leaf(2, 3)]),
    "split": lambda: rg.split(leaf(4, 3), 2)[0],
    "einsum": lambda: rg.einsum("ij,jk->ik", leaf(2, 3), leaf(3, 4)),
    "max_dim": lambda: rg.max(leaf(3, 3), dim=0)[0],
    "np_ufunc": lambda: np.sin(leaf(2, 3)),
    "slogdet": lambda: rg.linalg.slogdet(leaf(3, 3))[1],
}


@pytest.mark.parametrize("label", sorted(HAND_WRITTEN))
def test_every_hand_written_path_is_reported(label):
    _assert_every_node_has_its_op(HAND_WRITTEN[label], label)


def test_composite_ops_report_an_event_around_their_children():
    # torch shows aten::linear around the ops it runs; so does retrograd
    import retrograd.nn.functional as F
    x = rg.randn(3, 4, requires_grad=True)
    w = rg.randn(5, 4, requires_grad=True)
    b = rg.randn(5, requires_grad=True)
    with rg.profiler.profile() as prof:
        y = F.linear(x, w, b)
        rg.einsum("ij,kj->ik", x, w)
        rg.linalg.vector_norm(x)
    evs = prof.events()
    names = [e.name for e in evs]
    for want in ("aten::linear", "aten::einsum", "aten::linalg_vector_norm"):
        assert names.count(want) == 1, (want, names)
    lin = next(e for e in evs if e.name == "aten::linear")
    kids = [e for e in evs if e.name != "aten::linear"
            and lin.time_range.start <= e.time_range.start and e.time_range.end <= lin.time_range.end]
    assert kids, "linear's primitives run inside its event"
    assert F.linear.__name__ == "linear" and "bias" in str(__import__("inspect").signature(F.linear))
    np.testing.assert_allclose(values(y.detach()), values(x.detach()) @ values(w.detach()).T
                               + values(b.detach()))
