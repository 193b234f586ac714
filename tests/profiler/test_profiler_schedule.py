"""schedule(), prof.step() and on_trace_ready: the same actions, cycles and
recorded steps as torch.profiler for the same loop."""
import warnings

import numpy as np
import pytest

import retrograd as rg

CONFIGS = [
    dict(wait=1, warmup=1, active=2, repeat=1),
    dict(wait=1, warmup=1, active=2, repeat=2),
    dict(wait=0, warmup=1, active=1, repeat=0),
    dict(wait=2, warmup=1, active=3, repeat=2, skip_first=3),
    dict(wait=5, warmup=1, active=1, repeat=1, skip_first=2, skip_first_wait=1),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_schedule_actions_match_torch(torch, cfg):
    ours = rg.profiler.schedule(**cfg)
    theirs = torch.profiler.schedule(**cfg)
    for step in range(40):
        assert ours(step).name == theirs(step).name, step


def _run(profiler_mod, make_tensor, cfg, steps):
    """The loop of a training script; returns [(step_num at on_trace_ready, recorded step names, ops)]."""
    cycles = []

    def ready(prof):
        names = [e.name for e in prof.events()]
        cycles.append((prof.step_num,
                       sum(1 for n in names if n == "ProfilerStep*"),
                       sum(1 for n in names if n == "aten::mul")))

    x = make_tensor()
    with profiler_mod.profile(schedule=profiler_mod.schedule(**cfg), on_trace_ready=ready) as prof:
        for _ in range(steps):
            x * 2
            prof.step()
    return cycles


@pytest.mark.parametrize("cfg", CONFIGS[:4], ids=str)
@pytest.mark.parametrize("steps", [3, 8, 12])
def test_on_trace_ready_cycles_match_torch(torch, cfg, steps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _run(rg.profiler, lambda: rg.tensor(np.ones(3), requires_grad=True), cfg, steps)
        theirs = _run(torch.profiler, lambda: torch.ones(3, requires_grad=True), cfg, steps)
    assert ours == theirs


def test_without_schedule_everything_is_one_cycle():
    calls = []
    x = rg.tensor(np.ones(2))
    with rg.profiler.profile(on_trace_ready=calls.append) as prof:
        for _ in range(3):
            x + 1
            prof.step()
    assert calls == [prof]
    assert [e.name for e in prof.events()] == ["aten::add"] * 3     # no ProfilerStep ranges


def test_start_stop_without_context_manager():
    prof = rg.profiler.profile()
    x = rg.tensor(np.ones(2))
    prof.start()
    x * 3
    prof.stop()
    x * 4                          # after stop: not recorded
    assert [e.name for e in prof.events()] == ["aten::mul"]


def test_schedule_arguments_are_checked():
    with pytest.raises(ValueError, match="active=0"):
        rg.profiler.schedule(wait=1, warmup=1, active=0)
    with pytest.raises(AssertionError):              # torch raises AssertionError
        rg.profiler.schedule(wait=-1, warmup=1, active=1)
    with pytest.raises(TypeError, match="wait must be an int"):
        rg.profiler.schedule(wait=1.5, warmup=1, active=1)
    with pytest.warns(UserWarning, match="warmup"):
        rg.profiler.schedule(wait=1, warmup=0, active=1)


def test_results_before_any_cycle_raise():
    prof = rg.profiler.profile(schedule=rg.profiler.schedule(wait=5, warmup=1, active=1))
    with prof:
        with pytest.raises(RuntimeError, match="no results yet"):
            prof.events()


def test_start_stop_step_misuse_raises():
    prof = rg.profiler.profile()
    with pytest.raises(RuntimeError, match="not running"):
        prof.stop()
    with pytest.raises(RuntimeError, match="not running"):
        prof.step()
    prof.start()
    with pytest.raises(RuntimeError, match="already running"):
        prof.start()
    rg.tensor(np.ones(2)) * 2
    prof.stop()
    with pytest.raises(RuntimeError, match="not running"):
        prof.stop()                     # a second stop keeps the results
    assert [e.name for e in prof.events()] == ["aten::mul"]


def test_record_function_args_reach_the_event(tmp_path):
    import json
    with rg.profiler.profile() as prof:
        with rg.profiler.record_function("load", "batch=3"):
            pass
    (ev,) = prof.events()
    assert ev.user_args == "batch=3"
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    data = json.loads((tmp_path / "t.json").read_text())
    (x,) = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert x["args"]["Record function args"] == "batch=3"
