"""Shared by tests/cuda: CuPy and a CUDA device, or a module-level skip.

These tests run on a real GPU when CuPy sees one, and on the CPU stand-in
tests/cuda/fake_cupy when it is first on sys.path (``nox -s fake_cuda``):
the stand-in keeps CuPy's rules (no implicit host conversion, no mixing with
NumPy arrays, 0-d reductions), so device-generic code is checked on every
CI run, and the real GPU run, when a machine has one, is the proof.
"""
import numpy as np
import pytest


def require_cuda():
    try:
        import cupy
    except ImportError:
        pytest.skip("CuPy is not installed", allow_module_level=True)
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:                        # no driver, no device
        pytest.skip(f"no CUDA device: {exc}", allow_module_level=True)
    if n < 1:
        pytest.skip("no CUDA device", allow_module_level=True)
    return cupy


def host(t):
    """A tensor's values as a NumPy array (a copy from the device)."""
    import cupy
    a = t._array
    return cupy.asnumpy(a) if type(a) is cupy.ndarray else np.asarray(a)


def assert_on_cuda(t, what="tensor"):
    import cupy
    assert str(t.device).startswith("cuda"), f"{what} is on {t.device}, expected cuda"
    assert type(t._array) is cupy.ndarray, f"{what} holds a {type(t._array)}, expected cupy.ndarray"
