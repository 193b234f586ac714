"""The numba backend: elementwise runs fused into compiled loops, cached on
disk (skipped without numba, the retrograd-compile[numba] extra)."""
import subprocess
import sys

import numpy as np
import pytest

import retrograd as rg

pytest.importorskip("numba", reason="needs numba (pip install 'retrograd-compile[numba]')")


def _chain(x, w):
    y = x
    for _ in range(12):
        y = (y * 1.01).sin() + 0.5 * w
    return (y.tanh() - y).exp().sum()


def test_fused_chain_matches_eager_values_and_gradients(tmp_path, monkeypatch):
    monkeypatch.setenv("RG_COMPILE_CACHE", str(tmp_path))
    f = rg.compile(_chain, backend="numba", fullgraph=True)
    for seed in range(3):
        a = np.random.default_rng(seed).standard_normal(16)
        x, w = rg.tensor(a, requires_grad=True), rg.tensor(a[::-1].copy(), requires_grad=True)
        f(x, w).backward()
        x2, w2 = rg.tensor(a, requires_grad=True), rg.tensor(a[::-1].copy(), requires_grad=True)
        _chain(x2, w2).backward()
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-10)
    entry = next(iter(f._cache.values()))
    assert entry.fwd.fused_ops >= 30 and entry.bwd.fused_ops >= 30
    assert list(tmp_path.glob("rg_fused_*.py"))           # the loops, on disk


def test_a_second_process_loads_the_loops_from_disk(tmp_path):
    code = ("import time, numpy as np, retrograd as rg\n"
            "import retrograd.compile\n"
            "import numba\n"
            f"exec({__import__('inspect').getsource(_chain)!r})\n"
            "f = rg.compile(_chain, backend='numba')\n"
            "a = np.linspace(0.1, 1, 16)\n"
            "t = time.perf_counter()\n"
            "f(rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)).backward()\n"
            "e = next(iter(f._cache.values()))\n"
            "assert e.fwd.fused_ops >= 30 and e.bwd.fused_ops >= 30, (e.fwd.fused_ops, e.bwd.fused_ops)\n"
            "print(time.perf_counter() - t)\n")
    env = {**__import__("os").environ, "RG_COMPILE_CACHE": str(tmp_path)}
    first = float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()[-1])
    second = float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                  capture_output=True, text=True).stdout.split()[-1])
    assert second < first
