"""The distribution's contract with core: the op-event slot is filled only
while a profile records; profiles do not nest; the ABI is checked at import;
without retrograd-profiler, rg.profiler raises an ImportError naming it."""
import textwrap

import numpy as np
import pytest

import retrograd as rg
import retrograd.core as core
from retrograd.core.abi import _slot_status


def test_slot_filled_only_while_recording():
    assert not _slot_status()["op_events"]
    prof = rg.profiler.profile()
    assert not _slot_status()["op_events"]          # created, not started
    with prof:
        assert _slot_status()["op_events"]
    assert not _slot_status()["op_events"]


def test_slot_emptied_when_the_block_raises():
    with pytest.raises(ZeroDivisionError):
        with rg.profiler.profile():
            1 / 0
    assert not _slot_status()["op_events"]


def test_slot_empty_outside_active_schedule_steps():
    seen = []
    sched = rg.profiler.schedule(wait=1, warmup=1, active=1, repeat=1)
    with rg.profiler.profile(schedule=sched) as prof:
        for _ in range(4):
            seen.append(_slot_status()["op_events"])
            prof.step()
    assert seen == [False, False, True, False]
    assert not _slot_status()["op_events"]


def test_profiles_do_not_nest():
    with rg.profiler.profile():
        with pytest.raises(RuntimeError, match="do not nest"):
            with rg.profiler.profile():
                pass
    assert not _slot_status()["op_events"]
    with rg.profiler.profile() as prof:                # usable again afterwards
        rg.tensor(np.ones(2)) * 2
    assert [e.name for e in prof.events()] == ["aten::mul"]


def test_profile_arguments_are_checked():
    with pytest.raises(TypeError, match="ProfilerActivity"):
        rg.profiler.profile(activities=["cpu"])
    with pytest.raises(TypeError, match="record_shapes"):
        rg.profiler.profile(record_shapes=1)
    with pytest.raises(TypeError, match="schedule"):
        rg.profiler.profile(schedule=3)
    assert rg.profiler.ProfilerActivity.CPU in rg.profiler.supported_activities()


@pytest.mark.oracle
def test_profile_arguments_are_keyword_only_like_torch(torch):
    import inspect

    # a positional call raises in both, rather than setting whichever flag
    # sits in that position
    for mod in (rg, torch):
        CPU = mod.profiler.ProfilerActivity.CPU
        with pytest.raises(TypeError):
            mod.profiler.profile([CPU], True)
        with pytest.raises(TypeError):
            mod.profiler.profile([CPU])
    ours = inspect.signature(rg.profiler.profile).parameters
    theirs = inspect.signature(torch.profiler.profile).parameters
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in ours.values())
    # the options retrograd has, in torch's order and with torch's defaults
    assert list(ours) == [n for n in theirs if n in ours]
    for name, p in ours.items():
        assert p.default == theirs[name].default, name
    prof = rg.profiler.profile(activities=[rg.profiler.ProfilerActivity.CPU], record_shapes=True)
    assert prof.record_shapes is True and prof.profile_memory is False and prof.with_stack is False


def test_abi_check_names_both_versions():
    from retrograd.profiler._collector import BUILT_AGAINST
    assert BUILT_AGAINST == core.ABI_VERSION
    with pytest.raises(ImportError, match="retrograd-profiler was built against retrograd-core ABI 2.0"):
        core.check_abi("retrograd-profiler", (2, 0), core.ABI_VERSION)


def test_umbrella_exposes_the_subpackage():
    import retrograd.profiler
    assert rg.profiler is retrograd.profiler
    assert rg.profiler.__version__ == open(
        __file__.rsplit("/tests/", 1)[0] + "/profiler/VERSION").read().strip()


def test_import_error_names_the_distribution_when_absent(run_python):
    code = textwrap.dedent("""
        import sys
        import importlib.abc

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "retrograd.profiler" or name.startswith("retrograd.profiler."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Block())
        import numpy as np
        import retrograd as rg
        x = rg.tensor(np.ones(2), requires_grad=True)
        (x * 2).sum().backward()                  # everything else works
        assert x.grad.tolist() == [2.0, 2.0]
        try:
            rg.profiler.profile
        except ImportError as exc:
            print("IMPORT-ERROR:", exc)
        else:
            print("no error")
    """)
    res = run_python(code)
    assert res.returncode == 0, res.stderr
    assert "IMPORT-ERROR:" in res.stdout and "retrograd-profiler" in res.stdout, res.stdout


def test_profile_started_by_another_thread_during_an_op():
    # An op whose enter found the slot empty reaches its exit with the slot
    # filled (a profile started meanwhile): nothing is recorded, nothing breaks.
    import threading
    started = threading.Event()
    release = threading.Event()

    class Slow(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            started.set()
            release.wait(10)
            return a * 1.0

        @staticmethod
        def backward(ctx, g):
            return g

    x = rg.tensor(np.ones(3), requires_grad=True)
    out = []
    t = threading.Thread(target=lambda: out.append(Slow.apply(x)))
    t.start()
    started.wait(10)
    with rg.profiler.profile() as prof:
        release.set()
        t.join(10)
    assert out and out[0].shape == (3,)
    assert "Slow" not in [e.name for e in prof.events()]
