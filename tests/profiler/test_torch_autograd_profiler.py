"""Behaviours from torch's test/test_autograd.py, translated: the profiler tests of part b
(tests/fidelity/test_torch_autograd_b1.py lists what was translated in part and what was excluded).
"""
import json

import pytest

import retrograd as rg
from retrograd.profiler import FunctionEventAvg, ProfilerActivity, profile, record_function


def test_profiler_chrome_trace_is_valid_json(tmp_path):
    a, b = rg.ones(1), rg.ones(1)
    with profile() as prof:
        rg.add(a, b)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    with open(path) as fh:
        trace = json.load(fh)
    assert "aten::add" in [ev.get("name") for ev in trace["traceEvents"]]


def test_profiler_top_level_events_follow_program_order():
    x = rg.randn(10, 10)
    with profile() as prof:
        x * 2 + 4
    tops = [ev.name for ev in prof.events() if ev.cpu_parent is None]
    assert tops == ["aten::mul", "aten::add"]


def test_profiler_backward_nodes_share_their_forward_ops_sequence_numbers():
    with profile() as prof:
        a = rg.randn(10, 10, requires_grad=True)
        b = rg.randn(10, 10, requires_grad=True)
        (a + b).sum().backward()
    fwd = {}
    bwd = {}
    for ev in prof.events():
        if ev.name in ("aten::add", "aten::sum"):
            assert ev.name not in fwd
            fwd[ev.name] = ev.sequence_nr
        elif ev.name in ("AddBackward0", "SumBackward0"):
            assert ev.name not in bwd
            bwd[ev.name] = ev.sequence_nr
    assert fwd["aten::add"] >= 0 and fwd["aten::sum"] >= 0
    assert fwd["aten::add"] != fwd["aten::sum"]
    assert bwd == {"AddBackward0": fwd["aten::add"], "SumBackward0": fwd["aten::sum"]}


def test_record_function_range_is_counted_once():
    x = rg.randn(10, 10)
    with profile() as prof:
        with record_function("foo"):
            x * 2 + 4
    hits = [ev for ev in prof.events() if "foo" in ev.name]
    assert hits and hits[0].count == 1


def test_event_list_str_is_its_table():
    x = rg.randn(1024)
    with profile() as prof:
        rg.einsum("i->", x)
    events = prof.events()
    assert str(events) == events.table()


def test_function_event_avg_adding_itself_doubles_its_totals():
    x = rg.ones(4)
    with profile() as prof:
        x.exp()
        x.exp()
    first, second = [ev for ev in prof.events() if ev.name == "aten::exp"]
    avg = FunctionEventAvg()
    avg.add(first)
    avg.add(second)
    avg.add(avg)
    assert avg.key == "aten::exp"
    assert avg.count == 4
    total = first.cpu_time_total + second.cpu_time_total
    assert avg.cpu_time_total == pytest.approx(2 * total)
    assert avg.self_cpu_time_total == pytest.approx(2 * (first.self_cpu_time_total + second.self_cpu_time_total))
    assert avg.cpu_time == pytest.approx(avg.cpu_time_total / 4)
    assert avg.device_time_total == 0


def test_profiler_records_input_shapes_of_linear_layers():
    first, second = rg.nn.Linear(20, 30), rg.nn.Linear(30, 40)
    batch = rg.randn(128, 20)
    with profile(record_shapes=True) as prof:
        second(first(batch))
    got = [ev.input_shapes for ev in prof.events() if ev.name == "aten::linear"]
    assert got == [[[128, 20], [30, 20], [30]], [[128, 30], [40, 30], [40]]]


def test_cpu_only_profile_table_mentions_cpu_but_not_cuda():
    layer = rg.nn.Linear(20, 30)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        layer(rg.randn(128, 20))
    text = prof.key_averages().table().lower()
    assert "cpu" in text
    assert "cuda" not in text


def _memory_by_key(prof):
    return {row.key: row.cpu_memory_usage for row in prof.key_averages(group_by_input_shape=True)}


def test_memory_profiler_charges_an_allocation_to_its_user_scope():
    with profile(profile_memory=True, record_shapes=True) as prof:
        with record_function("user_alloc"):
            kept = rg.rand(10, 10)
    del kept
    usage = _memory_by_key(prof)
    assert usage.get("aten::rand", 0) > 0
    assert usage.get("user_alloc", 0) > 0


def test_memory_profiler_charges_a_free_to_its_user_scope():
    base = rg.ones(10, 10)
    with profile(profile_memory=True) as prof:
        with record_function("user_alloc"):
            made = base.exp()
        with record_function("user_free"):
            del made
    usage = _memory_by_key(prof)
    assert usage["user_alloc"] > 0
    assert usage.get("user_free", 0) < 0


def test_record_function_ranges_nest_around_the_ops_they_enclose():
    x = rg.randn(10, 10)

    def step(t):
        with record_function("outer"):
            t = t * 2 + 4
            with record_function("inner"):
                t = t - 1
        return t / 1

    step(x)
    with profile() as prof:
        step(x)
    wanted = ["outer", "aten::mul", "aten::add", "inner", "aten::sub", "aten::div"]
    names = [ev.name for ev in prof.events()]
    pos = 0
    for name in names:
        if pos < len(wanted) and name == wanted[pos]:
            pos += 1
    assert pos == len(wanted), names


def test_record_function_as_a_decorator():
    @record_function("my_func")
    def plus(p, q):
        return p + q

    with profile() as prof:
        assert plus(1, 2) == 3
    assert "my_func" in [ev.name for ev in prof.events()]
    assert "my_func" in str(prof.key_averages())


def test_record_function_ranges_may_close_out_of_order():
    with profile() as prof:
        outer = record_function("outer")
        outer.__enter__()
        with record_function("inner"):
            outer.__exit__(None, None, None)
        with record_function("inner"):
            outer.__enter__()
        outer.__exit__(None, None, None)
    names = [ev.name for ev in prof.events()]
    assert names.count("outer") == 2
    assert names.count("inner") == 2
