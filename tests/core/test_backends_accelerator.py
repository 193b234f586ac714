"""rg.backends and rg.accelerator: the names programs touch, as torch's, with
honest answers on a NumPy library (switches kept and without effect)."""
import importlib
import subprocess
import sys

import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("path, names", [
    ("backends.cudnn", ["benchmark", "deterministic", "enabled", "allow_tf32", "is_available", "version"]),
    ("backends.cuda", ["matmul", "is_built", "preferred_linalg_library"]),
    ("backends.mps", ["is_available", "is_built"]),
    ("backends.cpu", ["get_cpu_capability"]),
    ("accelerator", ["is_available", "current_accelerator", "device_count", "current_device_index",
                     "set_device_index", "synchronize"]),
])
def test_torchs_names_exist(path, names):
    ours = importlib.import_module(f"retrograd.{path}")
    theirs = importlib.import_module(f"torch.{path}")
    for name in names:
        assert hasattr(theirs, name), name
        assert hasattr(ours, name), name


def test_switches_are_settable_and_read_back():
    import retrograd.backends.cudnn as cudnn
    old = cudnn.benchmark, cudnn.deterministic, rg.backends.cuda.matmul.allow_tf32
    try:
        cudnn.benchmark = True
        cudnn.deterministic = True
        rg.backends.cuda.matmul.allow_tf32 = True
        assert rg.backends.cudnn.benchmark and rg.backends.cudnn.deterministic
        assert rg.backends.cuda.matmul.allow_tf32
    finally:
        cudnn.benchmark, cudnn.deterministic, rg.backends.cuda.matmul.allow_tf32 = old


def test_answers_without_an_accelerator():
    assert rg.backends.mps.is_available() is False
    assert rg.backends.cudnn.is_available() is False
    assert rg.accelerator.is_available() == rg.cuda.is_available()
    if not rg.cuda.is_available():
        assert rg.accelerator.current_accelerator() is None
        assert rg.accelerator.device_count() == 0
        rg.accelerator.synchronize()
        with pytest.raises(RuntimeError, match="no accelerator"):
            rg.accelerator.current_device_index()


def test_namespaces_load_lazily():
    code = ("import sys, retrograd as rg; assert 'retrograd.backends' not in sys.modules; "
            "assert 'retrograd.accelerator' not in sys.modules; rg.backends.mps.is_available(); "
            "assert 'retrograd.backends' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
