"""The numba backend: elementwise runs fused into compiled loops, cached on
disk (skipped without numba, the retrograd-compile[numba] extra)."""
import inspect
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import retrograd as rg

pytest.importorskip("numba", reason="needs numba (pip install 'retrograd-compile[numba]')")


@pytest.fixture(autouse=True)
def _fused_whenever_they_agree(monkeypatch):
    # These tests check the loops themselves: keep them in use even where
    # the replayed programs time faster (test_compile_fusion_choice.py
    # checks the timed choice).
    monkeypatch.setenv("RG_COMPILE_FUSION", "always")


def _by_numba(program, n):
    """Whether ``program`` runs at least ``n`` ops in numba's loops (not
    replayed by the numpy backend's NumPy loops)."""
    return program.fused_by == "numba" and program.fused_ops >= n

def _chain(x, w):
    y = x
    for _ in range(12):
        y = (y * 1.01).sin() + 0.5 * w
    return (y.tanh() - y).exp().sum()


def _assert_chain_matches_eager(f, a):
    x, w = rg.tensor(a, requires_grad=True), rg.tensor(a[::-1].copy(), requires_grad=True)
    f(x, w).backward()
    x2, w2 = rg.tensor(a, requires_grad=True), rg.tensor(a[::-1].copy(), requires_grad=True)
    _chain(x2, w2).backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-10)


def test_fused_chain_matches_eager_values_and_gradients(tmp_path, monkeypatch):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    f = rg.compile(_chain, backend="numba", fullgraph=True)
    for seed in range(3):
        _assert_chain_matches_eager(f, np.random.default_rng(seed).standard_normal(16))
    assert f.wait(timeout=300)
    entry = next(iter(f._cache.values()))
    assert _by_numba(entry.fwd, 30) and _by_numba(entry.bwd, 30)
    # the fused programs in use give eager's gradients too
    _assert_chain_matches_eager(f, np.linspace(-1, 1, 16))
    assert list(tmp_path.glob("rg_fused_*.py"))           # the loops, on disk


def test_a_second_process_loads_the_loops_from_disk(tmp_path):
    code = ("import time, numpy as np, retrograd as rg\n"
            "import retrograd.compile\n"
            "import numba\n"
            f"exec({inspect.getsource(_chain)!r})\n"
            "f = rg.compile(_chain, backend='numba')\n"
            "a = np.linspace(0.1, 1, 16)\n"
            "t = time.perf_counter()\n"
            "f(rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)).backward()\n"
            "assert f.wait(timeout=300)\n"
            "e = next(iter(f._cache.values()))\n"
            "assert e.fwd.fused_by == e.bwd.fused_by == 'numba', (e.fwd.fused_by, e.bwd.fused_by)\n"
            "assert e.fwd.fused_ops >= 30 and e.bwd.fused_ops >= 30, (e.fwd.fused_ops, e.bwd.fused_ops)\n"
            "print(time.perf_counter() - t)\n")
    env = {**os.environ, "RG_COMPILE_CACHE": str(tmp_path)}
    first = float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()[-1])
    second = float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                  capture_output=True, text=True).stdout.split()[-1])
    assert second < first


def _fresh_chain(x):
    # a loop body of its own: its fused chunks are not in any earlier cache
    y = x
    for _ in range(40):
        y = (y * 1.03).cos() - 0.25
    return y.sum()


def test_calls_before_the_loops_are_ready_run_the_numpy_programs(tmp_path, monkeypatch):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    f = rg.compile(_fresh_chain, backend="numba")
    a = np.linspace(-2, 2, 16)
    x = rg.tensor(a, requires_grad=True)
    y = f(x)                             # the first call: numpy programs, verified
    entry = next(iter(f._cache.values()))
    first_fwd = y.grad_fn                # its backward stays paired with this forward
    assert f.wait(timeout=300)
    assert _by_numba(entry.fwd, 30) and _by_numba(entry.bwd, 30)
    assert first_fwd is y.grad_fn
    y.backward()                         # a forward of the old pair, backward after the switch
    x2 = rg.tensor(a, requires_grad=True)
    _fresh_chain(x2).backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-10)
    x3 = rg.tensor(a, requires_grad=True)
    f(x3).backward()                     # the fused pair
    np.testing.assert_allclose(x3.grad.numpy(), x2.grad.numpy(), rtol=1e-10)


def test_wait_without_fusion_returns_at_once():
    f = rg.compile(lambda x: (x * 2).sum(), backend="numpy")
    f(rg.ones(3, requires_grad=True)).backward()
    assert f.wait(timeout=0) is True
    assert next(iter(f._cache.values())).fusing is None


def test_a_program_that_draws_random_values_is_fused_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))

    def noisy(x):
        y = x * rg.rand(16)
        for _ in range(40):
            y = (y * 1.02).sin() + 0.1
        return y.sum()
    f = rg.compile(noisy, backend="numba")
    f(rg.ones(16, requires_grad=True)).backward()
    entry = next(iter(f._cache.values()))
    assert entry.fusing is None and _by_numba(entry.fwd, 30)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_while_loops_compile_in_the_background(tmp_path, monkeypatch):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    f = rg.compile(_fresh_chain, backend="numba")
    a = np.linspace(-1, 1, 16)
    f(rg.tensor(a, requires_grad=True)).backward()
    x2 = rg.tensor(a, requires_grad=True)
    _fresh_chain(x2).backward()
    want = x2.grad.numpy()
    pid = os.fork()                      # most likely while a loop compiles
    if pid == 0:
        code = 1
        try:
            done = f.wait(timeout=120)
            x = rg.tensor(a, requires_grad=True)
            f(x).backward()
            entry = next(iter(f._cache.values()))
            code = 0 if done and entry.fwd.fused_by == "numba" and np.allclose(x.grad.numpy(), want) else 3
        finally:
            os._exit(code)
    deadline = time.monotonic() + 180
    while True:
        done_pid, status = os.waitpid(pid, os.WNOHANG)
        if done_pid:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            pytest.fail("the forked child hung")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0
    assert f.wait(timeout=120)


def _two_d(x, w):
    # fused runs on a (4, 8) value; the backward reads saved values as rows
    # of the forward's blocks, some in fused loops and some in NumPy calls
    # (matmul's backward, an axis sum), and one saved value is also a result
    y = x
    for _ in range(6):
        y = (y * 1.1).sin() + 0.25
    mid = y
    for _ in range(6):
        y = (y * 0.9).tanh() - 0.5
    return (y @ w).sum(1).exp().sum(), mid


def test_saved_values_in_blocks_match_eager(tmp_path, monkeypatch):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    f = rg.compile(_two_d, backend="numba", fullgraph=True)
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 8)), rng.standard_normal((8, 3)) * 0.3
    f(rg.tensor(a, requires_grad=True), rg.tensor(b, requires_grad=True))
    assert f.wait(timeout=300)
    entry = next(iter(f._cache.values()))
    assert _by_numba(entry.fwd, 20) and entry.fwd.packed_outs
    for seed in range(2):
        a = np.random.default_rng(seed).standard_normal((4, 8))
        x, w = rg.tensor(a, requires_grad=True), rg.tensor(b, requires_grad=True)
        out, mid = f(x, w)
        (out + mid.sum()).backward()
        x2, w2 = rg.tensor(a, requires_grad=True), rg.tensor(b, requires_grad=True)
        out2, mid2 = _two_d(x2, w2)
        (out2 + mid2.sum()).backward()
        np.testing.assert_allclose(out.detach().numpy(), out2.detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(mid.detach().numpy(), mid2.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-9)
        np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-9)
        with rg.no_grad():
            mid.add_(1.0)                # a result of its own: the saved rows are unaffected
        x3 = rg.tensor(a, requires_grad=True)
        f(x3, rg.tensor(b))[0].backward()
        x4 = rg.tensor(a, requires_grad=True)
        _two_d(x4, rg.tensor(b))[0].backward()
        np.testing.assert_allclose(x3.grad.numpy(), x4.grad.numpy(), rtol=1e-9)


def _scaled_by_sum(x):
    # a 0-d operand (x.sum()) broadcast in every fused op, and sum's backward
    # expanding a 0-d gradient: both are read once per loop
    y = x
    for _ in range(20):
        y = (y * x.sum()).sin() * 0.5 + 0.1
    return y.sum()


def _written_in_place(x):
    y = x.clone()                        # (a copy a loop could make)
    y.mul_(2.0)                          # written in place: the clone stays a NumPy call
    z = y
    for _ in range(20):
        z = (z * 1.01).sin() + 0.5
    return z.sum() + y.sum()


def _assert_scalar_fn_matches_eager(f, fn, a):
    # the compiled f against eager fn: the scalar result and the gradient
    x = rg.tensor(a, requires_grad=True)
    out = f(x)
    out.backward()
    x2 = rg.tensor(a, requires_grad=True)
    want = fn(x2)
    want.backward()
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn", [_scaled_by_sum, _written_in_place])
def test_broadcast_scalars_and_in_place_writes_fuse_correctly(fn, tmp_path, monkeypatch):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    f = rg.compile(fn, backend="numba")
    f(rg.tensor(np.linspace(-1, 1, 16), requires_grad=True)).backward()
    assert f.wait(timeout=300)
    entry = next(iter(f._cache.values()))
    assert _by_numba(entry.fwd, 30) and _by_numba(entry.bwd, 30)
    for seed in range(3):
        _assert_scalar_fn_matches_eager(f, fn, np.random.default_rng(seed).standard_normal(16))


def _branch_sums(x):
    # each branch's fused run ends in a full sum, added up by the loop; the
    # keepdim sum and the axis sum stay NumPy reductions
    total = x.sum(dim=0, keepdim=True).sum() * 0.0
    for k in range(4):
        y = x
        for _ in range(8):
            y = (y * (1.0 + 0.01 * k)).tanh()
        total = total + y.sum() + y.sum(dim=1).mean()
    return total


def test_a_full_sum_ends_a_fused_loop(tmp_path, monkeypatch):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    f = rg.compile(_branch_sums, backend="numba")
    a = np.random.default_rng(5).standard_normal((3, 5))
    f(rg.tensor(a, requires_grad=True)).backward()
    assert f.wait(timeout=300)
    entry = next(iter(f._cache.values()))
    # one loop sum per branch, each into a 0-d array of its own
    assert len(re.findall(r"v\d+ = _c\d+\(\(\)", entry.fwd.source)) == 4
    for seed in range(3):
        _assert_scalar_fn_matches_eager(f, _branch_sums,
                                        np.random.default_rng(seed).standard_normal((3, 5)))


def _scalar_then_vector(x):
    # a run of 0-d ops (fused, one loop over one value), then a run over
    # (16,) that reads one of those 0-d values from its block
    s = x.sum()
    for _ in range(20):
        s = (s * 0.3).sin() + 0.25
    y = x
    for _ in range(20):
        y = (y * s).cos() + s
    return y.sum() + s


def test_runs_of_0d_values_fuse_and_feed_wider_loops(tmp_path, monkeypatch, assert_matches_eager):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    f = rg.compile(_scalar_then_vector, backend="numba", fullgraph=True)
    for seed in range(4):
        assert_matches_eager(f, _scalar_then_vector, np.random.default_rng(seed).standard_normal(16),
                             grad_rtol=1e-10)
        if seed == 0:
            assert f.wait(timeout=300)
            entry = next(iter(f._cache.values()))
            # the 0-d run alone is some 60 ops
            assert _by_numba(entry.fwd, 100) and _by_numba(entry.bwd, 100)


def _far_trig(x):
    # arguments past 2**23 in some elements (and nan in one): the loop's
    # fast sin and cos cannot reduce them, and the chunk runs again with
    # the C library's
    y = x
    for _ in range(6):
        y = (y * 1.0e8).sin() * (y * 3.0).cos() + y
    return y.sum()


def test_sin_and_cos_beyond_the_fast_reduction_match_eager(tmp_path, monkeypatch, assert_matches_eager):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    f = rg.compile(_far_trig, backend="numba", fullgraph=True)
    inputs = [np.linspace(-1e-9, 1e-9, 16),            # every argument near
              np.linspace(-2.0, 2.0, 16),              # some far
              np.r_[np.linspace(-1e-9, 1e-9, 15), np.nan]]
    for k in range(2):
        for a in inputs:
            assert_matches_eager(f, _far_trig, a, rtol=1e-9, grad_rtol=1e-9, atol=1e-9)
        if k == 0:
            assert f.wait(timeout=300)
            entry = next(iter(f._cache.values()))
            assert _by_numba(entry.fwd, 20) and _by_numba(entry.bwd, 20)


def test_without_vecmath_the_loops_call_the_c_library(tmp_path, monkeypatch):
    # _vecmath reaches into numba's internals: where it cannot be imported,
    # the loops are built with math.* and still match eager
    from retrograd.compile import _fusion
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    monkeypatch.setattr(_fusion, "_digest", [None])
    f = rg.compile(_chain, backend="numba", fullgraph=True)
    _assert_chain_matches_eager(f, np.random.default_rng(5).standard_normal(16))
    assert f.wait(timeout=300)
    entry = next(iter(f._cache.values()))
    assert _by_numba(entry.fwd, 30)
    _assert_chain_matches_eager(f, np.linspace(-1, 1, 16))
    sources = [p.read_text() for p in tmp_path.glob("rg_fused_*.py")]
    assert sources and all("_vm." not in s for s in sources)
    assert any("math.sin(" in s for s in sources) and any("math.tanh(" in s for s in sources)
