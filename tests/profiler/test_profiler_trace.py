"""export_chrome_trace: a Trace Event Format file in torch's layout that
Perfetto and chrome://tracing open: it parses, every event has the fields
its phase requires, args use torch's names, and each fwdbwd flow has both
ends on existing slices."""
import gzip
import json

import numpy as np
import pytest

import retrograd as rg

REQUIRED = {
    "X": {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"},
    "M": {"ph", "name", "pid", "tid", "ts", "args"},
    "s": {"ph", "id", "pid", "tid", "ts", "cat", "name"},
    "f": {"ph", "id", "pid", "tid", "ts", "cat", "name", "bp"},
    "i": {"ph", "cat", "s", "name", "pid", "tid", "ts", "args"},
}


def _program(mod, make):
    x = make()
    with mod.profiler.profile(record_shapes=True, profile_memory=True) as prof:
        with mod.profiler.record_function("model"):
            y = (x * 2).sin().sum()
        y.backward()
    return prof


@pytest.fixture
def traces(tmp_path, torch):
    ours = _program(rg, lambda: rg.tensor(np.ones((3, 4), np.float32), requires_grad=True))
    theirs = _program(torch, lambda: torch.ones(3, 4, requires_grad=True))
    ours.export_chrome_trace(str(tmp_path / "rg.json"))
    theirs.export_chrome_trace(str(tmp_path / "torch.json"))
    with open(tmp_path / "rg.json") as f:
        a = json.load(f)
    with open(tmp_path / "torch.json") as f:
        b = json.load(f)
    return a, b


def test_trace_parses_and_every_event_has_its_fields(traces):
    data, _ = traces
    assert isinstance(data["traceEvents"], list) and data["traceEvents"]
    assert data["displayTimeUnit"] == "ms"
    for ev in data["traceEvents"]:
        assert ev["ph"] in REQUIRED, ev
        missing = REQUIRED[ev["ph"]] - set(ev)
        assert not missing, (ev, missing)
        assert isinstance(ev["ts"], (int, float))
        if ev["ph"] == "X":
            assert ev["dur"] >= 0 and isinstance(ev["args"], dict)


def test_trace_layout_is_torchs(traces):
    ours, theirs = traces
    assert set(ours) >= {"schemaVersion", "traceEvents", "displayTimeUnit", "baseTimeNanoseconds",
                         "record_shapes", "profile_memory", "traceName", "deviceProperties"}
    assert {e["ph"] for e in ours["traceEvents"]} <= {e["ph"] for e in theirs["traceEvents"]}
    meta = lambda d: {e["name"] for e in d["traceEvents"] if e["ph"] == "M"}     # noqa: E731
    assert meta(ours) >= {"process_name", "process_labels", "thread_name", "thread_sort_index"}
    assert meta(ours) <= meta(theirs)
    cats = lambda d: {e.get("cat") for e in d["traceEvents"] if e["ph"] == "X"}  # noqa: E731
    assert cats(ours) <= cats(theirs)
    by_name = lambda d: {e["name"]: e for e in reversed(d["traceEvents"]) if e["ph"] == "X"}  # noqa: E731
    o, t = by_name(ours), by_name(theirs)
    for name in ("aten::mul", "aten::sin", "SinBackward0", "MulBackward0", "model"):
        assert o[name]["cat"] == t[name]["cat"], name
        assert set(o[name]["args"]) <= set(t[name]["args"]), name
    for name in ("aten::mul", "aten::sin", "SinBackward0"):
        for key in ("Sequence number", "Input Dims", "Input type", "Fwd thread id"):
            assert key in o[name]["args"], (name, key)
    assert o["aten::sin"]["args"]["Input Dims"] == t["aten::sin"]["args"]["Input Dims"] == [[3, 4]]
    assert o["aten::sin"]["args"]["Input type"] == t["aten::sin"]["args"]["Input type"] == ["float"]
    assert (o["SinBackward0"]["args"]["Sequence number"] == o["aten::sin"]["args"]["Sequence number"])
    mem = [e for e in ours["traceEvents"] if e["name"] == "[memory]"]
    assert mem and all(set(e["args"]) <= set(
        next(x for x in theirs["traceEvents"] if x["name"] == "[memory]")["args"]) | {"Ev Idx"}
        for e in mem)


def test_every_flow_has_both_ends_on_slices(traces):
    data, _ = traces
    evs = data["traceEvents"]
    slices = [e for e in evs if e["ph"] == "X"]
    starts = {e["id"]: e for e in evs if e["ph"] == "s"}
    ends = {e["id"]: e for e in evs if e["ph"] == "f"}
    assert starts and set(starts) == set(ends)
    for fid, s in starts.items():
        f = ends[fid]
        assert s["cat"] == f["cat"] == "fwdbwd" and f["bp"] == "e"
        src = [x for x in slices if x["tid"] == s["tid"] and x["ts"] == s["ts"]]
        dst = [x for x in slices if x["tid"] == f["tid"] and x["ts"] == f["ts"]]
        assert src and dst, fid
        fwd = next(x for x in src if x["name"].startswith("aten::"))
        bwd = next(x for x in dst if x["name"].endswith("Backward0"))
        assert fwd["args"]["Sequence number"] == bwd["args"]["Sequence number"]
        assert s["ts"] <= f["ts"]
    assert {next(x["name"] for x in slices if x["tid"] == ends[i]["tid"] and x["ts"] == ends[i]["ts"]
                 and x["name"].endswith("Backward0")) for i in ends} == \
        {"SumBackward0", "SinBackward0", "MulBackward0"}


def test_thread_names_and_complete_events_per_thread(virtual_cpu_devices, tmp_path):
    x = rg.tensor(np.ones(3), requires_grad=True)
    with rg.profiler.profile() as prof:
        y = (x.to("cpu:1") * 3.0).to("cpu").sum()
        y.backward()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    names = {e["tid"]: e["args"]["name"] for e in data["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    tids = {e["tid"] for e in data["traceEvents"] if e["ph"] == "X"}
    assert tids <= set(names) and len(tids) == 2
    assert any("retrograd-engine-device-1" in n for n in names.values())
    flows = [e for e in data["traceEvents"] if e["ph"] in "sf"]
    assert {e["tid"] for e in flows} == tids     # a flow crosses to the worker's thread


def test_gzip_and_steps_keep_their_names(tmp_path):
    x = rg.tensor(np.ones(2))
    path = tmp_path / "t.json.gz"
    sched = rg.profiler.schedule(wait=0, warmup=1, active=2, repeat=1)
    export = lambda p: p.export_chrome_trace(str(path))        # noqa: E731
    with rg.profiler.profile(schedule=sched, on_trace_ready=export) as prof:
        for _ in range(4):
            x + 1
            prof.step()
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    steps = sorted(e["name"] for e in data["traceEvents"] if e["name"].startswith("ProfilerStep"))
    assert steps == ["ProfilerStep#1", "ProfilerStep#2"]


def test_tensorboard_trace_handler_writes_one_trace_per_cycle(tmp_path):
    handler = rg.profiler.tensorboard_trace_handler(str(tmp_path / "log"), worker_name="w0")
    sched = rg.profiler.schedule(wait=0, warmup=1, active=1, repeat=2)
    x = rg.tensor(np.ones(2))
    with rg.profiler.profile(schedule=sched, on_trace_ready=handler) as prof:
        for _ in range(5):
            x * 2
            prof.step()
    files = sorted((tmp_path / "log").iterdir())
    assert len(files) == 2
    for f in files:
        assert f.name.startswith("w0.") and f.name.endswith(".pt.trace.json")
        names = [e["name"] for e in json.loads(f.read_text())["traceEvents"] if e["ph"] == "X"]
        assert "aten::mul" in names
