"""export_memory_timeline (new): CSV columns, monotone times, categories,
and the PNG when matplotlib is installed."""
import csv
import importlib.util
import os

import numpy as np
import pytest

import retrograd as rg


def _train_step():
    w = rg.tensor(np.ones((64, 64)), requires_grad=True)
    x = rg.tensor(np.ones((8, 64)))
    with rg.profiler.profile(profile_memory=True) as prof:
        h = (x @ w).tanh()
        loss = (h * h).sum()
        loss.backward()
    return prof, w


def test_csv_columns_and_monotone_times(tmp_path):
    prof, _ = _train_step()
    path = tmp_path / "mem.csv"
    written = prof.export_memory_timeline(str(path))
    assert written[0] == str(path)
    with open(path) as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["time_ns", "saved_tensors", "gradients", "other", "total"]
    data = [[int(v) for v in r] for r in rows[1:]]
    times = [r[0] for r in data]
    assert times == sorted(times) and times[0] == 0
    for r in data:
        assert r[4] == r[1] + r[2] + r[3]
        assert min(r[1:]) >= 0
    # activations are held during the forward, gradients appear in the backward
    assert max(r[1] for r in data) >= 8 * 64 * 8
    assert max(r[2] for r in data) >= 8 * 64 * 8
    first_grad = next(i for i, r in enumerate(data) if r[2] > 0)
    assert data[first_grad - 1][1] > 0


def test_png_when_matplotlib_is_installed(tmp_path):
    prof, _ = _train_step()
    written = prof.export_memory_timeline(str(tmp_path / "mem.csv"))
    if importlib.util.find_spec("matplotlib") is None:
        assert written == (str(tmp_path / "mem.csv"),)
        assert not os.path.exists(tmp_path / "mem.png")
    else:
        assert written[1] == str(tmp_path / "mem.png")
        with open(written[1], "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_needs_profile_memory(tmp_path):
    with rg.profiler.profile() as prof:
        rg.tensor(np.ones(2)) * 2
    with pytest.raises(RuntimeError, match="profile_memory=True"):
        prof.export_memory_timeline(str(tmp_path / "m.csv"))
