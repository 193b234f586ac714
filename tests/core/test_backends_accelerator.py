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


def test_onnx_is_importable_and_export_refuses_clearly():
    import retrograd.onnx
    assert hasattr(torch.onnx, "export") and hasattr(torch.onnx, "is_in_onnx_export")
    assert rg.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="cannot export ONNX"):
        retrograd.onnx.export(rg.nn.Linear(2, 2), rg.zeros(1, 2), "m.onnx")


@pytest.mark.float32_default
def test_finfo_and_iinfo_as_torch():
    for rd, td in [(rg.float32, torch.float32), (rg.float64, torch.float64), (rg.float16, torch.float16)]:
        a, b = rg.finfo(rd), torch.finfo(td)
        for attr in ("eps", "max", "min", "tiny", "smallest_normal", "resolution", "bits"):
            assert float(getattr(a, attr)) == pytest.approx(float(getattr(b, attr)), rel=1e-3)   # (float16 rounds resolution), (rd, attr)
    assert rg.finfo().bits == torch.finfo().bits == 32
    for rd, td in [(rg.int8, torch.int8), (rg.uint8, torch.uint8), (rg.int64, torch.int64)]:
        assert (rg.iinfo(rd).min, rg.iinfo(rd).max, rg.iinfo(rd).bits) == \
               (torch.iinfo(td).min, torch.iinfo(td).max, torch.iinfo(td).bits)
    for call in (lambda L: L.finfo(L.int64), lambda L: L.iinfo(L.float32), lambda L: L.iinfo(L.bool)):
        with pytest.raises(TypeError):
            call(torch)
        with pytest.raises(TypeError):
            call(rg)


def test_bfloat16_through_ml_dtypes_or_a_clear_error():
    import importlib.util
    if importlib.util.find_spec("ml_dtypes") is None:
        with pytest.raises(AttributeError, match="ml_dtypes"):
            rg.bfloat16
        assert not hasattr(rg, "bfloat16")
    else:
        import ml_dtypes
        assert rg.bfloat16 == ml_dtypes.bfloat16
        x = rg.tensor([1.5, 2.0], dtype=rg.bfloat16)
        assert x.dtype == rg.bfloat16 and (x + x).dtype == rg.bfloat16
