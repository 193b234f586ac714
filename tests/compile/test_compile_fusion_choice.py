"""The numba backend keeps its fused loops only where they run faster than
the replayed programs they replace (timed on the worker thread, after the
loops agreed with them); RG_COMPILE_FUSION=always keeps any that agree."""
import time

import numpy as np
import pytest

import retrograd as rg
from retrograd.compile import _function

pytest.importorskip("numba", reason="needs numba (pip install 'retrograd-compile[numba]')")


class _Slow:
    """A program stand-in that takes ``seconds`` a call."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.calls = 0

    def __call__(self, *arrays):
        self.calls += 1
        end = time.perf_counter() + self.seconds
        while time.perf_counter() < end:
            pass
        return (np.zeros(()),)


def test_faster_compares_the_best_runs_of_both_pairs():
    fast, slow = (_Slow(0.0002), _Slow(0.0002)), (_Slow(0.002), _Slow(0.002))
    arrays, gouts = [np.ones(3)], [np.ones(())]
    assert _function._faster(fast, slow, arrays, gouts, 1)
    assert not _function._faster(slow, fast, arrays, gouts, 1)
    # both programs of each pair ran (the backward on the forward's values)
    assert fast[1].calls == fast[0].calls > 0 and slow[1].calls == slow[0].calls > 0


def test_faster_stays_within_its_time_budget():
    new, ref = (_Slow(0.02), None), (_Slow(0.02), None)
    _function._faster(new, ref, [np.ones(3)], None, 1, budget=0.05, rounds=7)
    # rounds of 40 ms: the second passes the 50 ms budget
    assert new[0].calls == ref[0].calls == 2


def _chain(x):
    y = x
    for _ in range(40):
        y = (y * 1.01).sin() + 0.5
    return y.exp().sum()


@pytest.mark.parametrize("fused_wins", [True, False])
def test_the_timed_choice_decides_which_programs_run(tmp_path, monkeypatch, fused_wins):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("RG_COMPILE_FUSION", raising=False)
    monkeypatch.setattr(_function, "_faster", lambda *args, **kw: fused_wins)
    f = rg.compile(_chain, backend="numba")
    a = np.linspace(-1, 1, 16)
    x = rg.tensor(a, requires_grad=True)
    f(x).backward()
    assert f.wait(timeout=300)
    entry = next(iter(f._cache.values()))
    want = "numba" if fused_wins else "replay"
    assert entry.fwd.fused_by == want and entry.bwd.fused_by == want
    # either way the gradients are eager's
    x2 = rg.tensor(a, requires_grad=True)
    f(x2).backward()
    x3 = rg.tensor(a, requires_grad=True)
    _chain(x3).backward()
    np.testing.assert_allclose(x2.grad.numpy(), x3.grad.numpy(), rtol=1e-10)


def test_always_keeps_the_loops_without_timing_them(tmp_path, monkeypatch):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    monkeypatch.setenv("RG_COMPILE_FUSION", "always")

    def never(*args, **kw):
        raise AssertionError("timed although RG_COMPILE_FUSION=always")

    monkeypatch.setattr(_function, "_faster", never)
    f = rg.compile(_chain, backend="numba")
    f(rg.tensor(np.linspace(-1, 1, 16), requires_grad=True)).backward()
    assert f.wait(timeout=300)
    entry = next(iter(f._cache.values()))
    assert entry.fwd.fused_by == "numba"
