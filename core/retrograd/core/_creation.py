"""Tensor factories: tensor, as_tensor, from_numpy, zeros, ones, ... (NumPy dtypes and defaults).

Random factories draw from one NumPy Generator, reseeded by manual_seed.
"""
from __future__ import annotations

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core.abi import Tensor

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange",
           "linspace", "eye", "zeros_like", "ones_like", "full_like", "empty_like", "rand",
           "randn", "manual_seed", "get_rng", "is_tensor"]

# Created on first use: importing numpy.random is ~20 ms, most of what
# `import retrograd` adds to `import numpy` (benchmarks/footprint.py).
_rng = None


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed retrograd's random generator (rand, randn, dropout)."""
    global _rng
    _rng = np.random.default_rng(seed)
    return _rng


def get_rng() -> np.random.Generator:
    global _rng
    if _rng is None:
        _rng = np.random.default_rng()
    return _rng


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def _dtype(dtype):
    return None if dtype is None else np.dtype(dtype)


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _make(array, device, requires_grad):
    dev = _abi.device(device)
    if dev.type_name == "cuda":
        try:
            import cupy
        except ImportError:
            raise RuntimeError(f"cannot create a tensor on {dev}: CUDA tensors need CuPy (pip install "
                               "cupy-cuda12x or the build for your CUDA) and a GPU") from None
        with cupy.cuda.Device(dev.index):
            array = cupy.asarray(array)
    return _abi._wrap(array, dev, requires_grad)


def _is_cupy(a) -> bool:
    return type(a).__module__.split(".")[0] == "cupy" and type(a).__name__ == "ndarray"


def _cuda_device_of(a):
    return _abi.device(f"cuda:{a.device.id}")


def tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (``torch.tensor``), with NumPy's dtype rules.

    ``data`` may be a Tensor or a CuPy array: the copy stays on its device
    unless ``device`` says otherwise, as in torch."""
    if isinstance(data, Tensor):
        if device is None:
            device = data.device
        data = data._array
    if _is_cupy(data):
        if device is None:
            device = _cuda_device_of(data)
        if _abi.device(device).type_name == "cuda":
            import cupy
            dev = _abi.device(device)
            with cupy.cuda.Device(dev.index):
                arr = cupy.array(data, dtype=_dtype(dtype), copy=True)
            return _abi._wrap(arr, dev, requires_grad)
        data = data.get()                      # to the host, then as any host data
    arr = np.array(data, dtype=_dtype(dtype), copy=True)
    if arr.dtype == object:
        raise TypeError("tensor(): data must be numeric (got an object array)")
    return _make(arr, device, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """A tensor sharing ``data``'s memory when it is already an array of that
    dtype on that device (a NumPy array, or a CuPy array for a CUDA tensor)."""
    if isinstance(data, Tensor):
        if device is not None and _abi.device(device) != data.device:
            data = data.to(device)
        return data if dtype is None or data.dtype == np.dtype(dtype) else data.to(dtype)
    if _is_cupy(data):
        dev = _cuda_device_of(data)
        if device is None or _abi.device(device) == dev:
            arr = data if dtype is None or data.dtype == np.dtype(dtype) else data.astype(dtype)
            return _abi._wrap(arr, dev, False)
        return tensor(data, dtype=dtype, device=device)
    return _make(np.asarray(data, dtype=_dtype(dtype)), device, False)


def from_numpy(array) -> Tensor:
    """A tensor sharing ``array``'s memory (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return _abi._wrap(array)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(np.zeros(_shape(size), dtype=_dtype(dtype) or np.float64), device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(np.ones(_shape(size), dtype=_dtype(dtype) or np.float64), device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(np.empty(_shape(size), dtype=_dtype(dtype) or np.float64), device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(np.full(tuple(size) if not isinstance(size, int) else (size,), fill_value,
                         dtype=_dtype(dtype)), device, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    arr = np.arange(start, step=step, dtype=_dtype(dtype)) if end is None else \
        np.arange(start, end, step, dtype=_dtype(dtype))
    return _make(arr, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(np.linspace(start, end, steps, dtype=_dtype(dtype)), device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _make(np.eye(n, m, dtype=_dtype(dtype) or np.float64), device, requires_grad)


def _like(fn, t, dtype, device, requires_grad, *args):
    arr = t._array if isinstance(t, Tensor) else np.asarray(t)
    dev = device if device is not None else (t.device if isinstance(t, Tensor) else None)
    return _make(fn(np.asarray(arr) if not isinstance(arr, np.ndarray) else arr, *args,
                    dtype=_dtype(dtype)), dev, requires_grad)


def zeros_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(np.zeros_like, t, dtype, device, requires_grad)


def ones_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(np.ones_like, t, dtype, device, requires_grad)


def empty_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(np.empty_like, t, dtype, device, requires_grad)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    arr = t._array if isinstance(t, Tensor) else np.asarray(t)
    return _make(np.full_like(arr, fill_value, dtype=_dtype(dtype)),
                 device if device is not None else getattr(t, "device", None), requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    g = generator or get_rng()
    dt = _dtype(dtype) or np.dtype(np.float64)
    return _make(g.random(_shape(size)).astype(dt, copy=False), device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    g = generator or get_rng()
    dt = _dtype(dtype) or np.dtype(np.float64)
    return _make(g.standard_normal(_shape(size)).astype(dt, copy=False), device, requires_grad)
