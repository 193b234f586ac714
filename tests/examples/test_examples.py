"""Smoke tests of examples/: each example's main() runs (with a small size
where it has one) and its result means something."""
from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load(name: str):
    """Import examples/<name>.py as a module (examples/ is not a package)."""
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_has_a_main_and_a_smoke_test():
    names = {p.stem for p in EXAMPLES.glob("*.py")}
    assert names == {"mlp", "cnn", "custom_function", "newton_fit", "forward_jacobian", "profile_step",
                     "checkpoint_mlp", "optimizer_in_backward"}
    for name in names:
        assert "def main(" in (EXAMPLES / f"{name}.py").read_text()
        assert f"def test_{name}" in pathlib.Path(__file__).read_text()


def test_mlp():
    res = load("mlp").main(epochs=3)
    losses = [loss for loss, _ in res["history"]]
    assert losses[-1] < 0.7 * losses[0]
    assert res["history"][-1][1] > 0.8                       # test accuracy
    assert res["restored_diff"] == 0.0


def test_mlp_runs_as_a_script():
    proc = subprocess.run([sys.executable, str(EXAMPLES / "mlp.py")], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "epoch 5:" in proc.stdout and "restored model, largest output difference: 0.0" in proc.stdout


def test_cnn():
    res = load("cnn").main(epochs=1, n_train=1000, n_test=300)
    assert np.mean(res["losses"][-5:]) < 0.7 * np.mean(res["losses"][:5])
    assert res["accuracies"][-1] > res["accuracies"][0] + 0.2


def test_custom_function():
    res = load("custom_function").main()
    assert res["gradcheck"] and res["gradgradcheck"]
    assert res["grad_error"] < 1e-12
    assert res["clamped"] == [0.5, 0.5, 0.5]


def test_newton_fit():
    pytest.importorskip("scipy")
    mod = load("newton_fit")
    results = mod.main()
    for method, res in results.items():
        assert res.success, (method, res.message)
        np.testing.assert_allclose(res.x, mod.TRUE, atol=0.02)
    np.testing.assert_allclose(results["trust-ncg"].x, results["Newton-CG"].x, atol=1e-6)


@pytest.mark.requires("retrograd-forward-ad")
def test_forward_jacobian():
    res = load("forward_jacobian").main()
    assert res["forward"].shape == (50, 3)
    np.testing.assert_allclose(res["forward"], res["reverse"], rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(res["forward"], res["manual"])


def test_profile_step(tmp_path):
    pytest.importorskip("retrograd.profiler")
    res = load("profile_step").main(str(tmp_path / "t.json"))
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    names = {e.get("name") for e in events if e.get("ph") == "X"}
    assert {"forward", "backward", "optimizer.step"} <= names
    # the schedule recorded 2 of the 4 steps
    assert sum(name.startswith("ProfilerStep#") for name in names if name) == 2
    assert len(res["events"]) > 10


def test_checkpoint_mlp():
    res = load("checkpoint_mlp").main(depth=8, width=64, batch=32, segments=4)
    assert res["checkpoint_bytes"] < res["plain_bytes"] / 2
    assert res["max_grad_diff"] == 0.0


def test_optimizer_in_backward():
    res = load("optimizer_in_backward").main(steps=20)
    assert res["losses"][-1] < 0.5 * res["losses"][0]
    assert res["grads_left"] == 0
    assert res["max_weight_diff"] < 1e-12


def _code_lines(path):
    # lines that are neither blank, comments nor part of the module docstring
    text = path.read_text()
    body = text.split('"""', 2)[2] if text.startswith('"""') else text
    return [line for line in body.splitlines() if line.strip() and not line.strip().startswith("#")]


@pytest.mark.oracle
def test_mlp_torch_twin_and_line_counts():
    pytest.importorskip("torch")
    twin = EXAMPLES / "torch_twins" / "mlp_torch.py"
    spec = importlib.util.spec_from_file_location("_example_mlp_torch", twin)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    res = module.main(epochs=2)
    assert res["history"][-1][0] < res["history"][0][0] and res["restored_diff"] == 0.0
    # the retrograd program is no longer than its torch twin, beyond a line or two
    assert len(_code_lines(EXAMPLES / "mlp.py")) <= len(_code_lines(twin)) + 2
