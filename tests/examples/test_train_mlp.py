"""benchmarks/train_mlp.py: the retrograd and torch training loops see the
same initial parameters and batches, so their loss curves agree."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "train_mlp.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("_bench_train_mlp", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sampler_repeats_its_permutations(bench):
    a, b = bench.EpochPermutations(50, 0), bench.EpochPermutations(50, 0)
    first, second = list(a), list(a)
    assert sorted(first) == list(range(50)) and first != second      # a new order each epoch
    assert [first, second] == [list(b), list(b)]                     # the same sequence of orders


@pytest.mark.oracle
@pytest.mark.parametrize("optimizer, lr", [("adam", 1e-3), ("sgd", 0.05)])
def test_loss_curves_equal_torch(bench, optimizer, lr):
    pytest.importorskip("torch")
    cfg = dict(bench.DEFAULTS, n=400, epochs=2, optimizer=optimizer, lr=lr)
    _, rg_losses = bench.train("retrograd", cfg)
    _, torch_losses = bench.train("torch", cfg)
    assert len(rg_losses) == len(torch_losses) == 2 * 7
    assert rg_losses[-1] < rg_losses[0]
    assert np.max(np.abs(np.subtract(rg_losses, torch_losses))) <= 1e-6
