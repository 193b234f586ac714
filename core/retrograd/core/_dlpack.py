"""DLPack: zero-copy exchange of arrays with NumPy, CuPy, torch, JAX, ...

``Tensor.__dlpack__``/``__dlpack_device__`` export (in _tensor.pxi; the
umbrella's ``retrograd.utils.dlpack.to_dlpack`` hands out that capsule);
``from_dlpack`` imports. The work is done by the array libraries' own
DLPack support for export and CuPy's for importing CUDA memory: a tensor is
a NumPy or CuPy array plus autograd state. Host capsules are read here
(ctypes), so that imported memory is writable on every supported NumPy.
"""
from __future__ import annotations

import ctypes

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core.abi import Tensor

__all__ = ["from_dlpack"]

# DLDeviceType codes (dlpack.h) that retrograd can hold
_DL_CPU = 1
_DL_CUDA = 2
_DL_CUDA_HOST = 3          # pinned host memory: readable by the CPU
_DL_CUDA_MANAGED = 13      # unified memory: CuPy reads it as device memory
_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI",
                 10: "ROCm", 11: "ROCm host", 13: "CUDA managed", 14: "oneAPI", 15: "WebGPU", 16: "Hexagon"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor)))]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    pass


_DLManagedTensorVersioned._fields_ = [
    ("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]

_FLAG_READ_ONLY = 1        # DLPACK_FLAG_BITMASK_READ_ONLY
# capsule name -> (struct, the name a consumer gives it once imported)
_CAPSULES = {b"dltensor": (_DLManagedTensor, b"used_dltensor"),
             b"dltensor_versioned": (_DLManagedTensorVersioned, b"used_dltensor_versioned")}

# DLDataTypeCode -> NumPy's typestr kind
_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}


def _capsule_api():
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype, api.PyCapsule_GetName.argtypes = ctypes.c_char_p, [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.restype, api.PyCapsule_SetName.argtypes = ctypes.c_int, [ctypes.py_object,
                                                                                    ctypes.c_char_p]
    return api


class _CapsuleOwner:
    """Owns the memory of a consumed capsule: the array made from it keeps
    this object as its base, and the producer's deleter runs when the last
    view of it is gone. Reading capsules here rather than with
    ``np.from_dlpack`` keeps the result writable as in torch: NumPy before
    2.2 marks every imported array read-only, and every NumPy marks arrays
    from legacy capsules so. Memory the producer flags read-only stays so."""

    def __init__(self, managed, interface):
        self._managed = managed
        self.__array_interface__ = interface

    def __del__(self):
        managed, self._managed = self._managed, None
        if managed and managed.contents.deleter:
            managed.contents.deleter(managed)


def _from_capsule(capsule):
    # Read a capsule's DLManagedTensor(Versioned), take over its deleter
    # (renaming the capsule "used_..." tells the producer's capsule
    # destructor not to run it too), and return (device, host array or None)
    api = _capsule_api()
    name = api.PyCapsule_GetName(capsule)
    if name not in _CAPSULES:
        raise BufferError(f"from_dlpack() takes an unconsumed DLPack capsule named 'dltensor' or "
                          f"'dltensor_versioned', got one named {name.decode(errors='replace')!r} (an imported "
                          "capsule is renamed 'used_...': a capsule can be imported once)")
    struct, used_name = _CAPSULES[name]
    managed = ctypes.cast(api.PyCapsule_GetPointer(capsule, name), ctypes.POINTER(struct))
    read_only = struct is _DLManagedTensorVersioned and bool(managed.contents.flags & _FLAG_READ_ONLY)
    t = managed.contents.dl_tensor
    device = (int(t.device.device_type), int(t.device.device_id))
    if device[0] not in (_DL_CPU, _DL_CUDA_HOST):
        return device, None             # device memory: CuPy's import takes the capsule itself
    kind = _KINDS.get(t.dtype.code)
    if kind is None or t.dtype.lanes != 1:
        raise BufferError(f"from_dlpack(): DLPack dtype code {t.dtype.code} with {t.dtype.bits} bits and "
                          f"{t.dtype.lanes} lanes has no NumPy dtype")
    itemsize = t.dtype.bits // 8
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i] * itemsize for i in range(t.ndim))
    interface = {"version": 3, "shape": shape, "strides": strides, "typestr": f"|{kind}{itemsize}",
                 "data": ((t.data or 0) + t.byte_offset, read_only)}
    api.PyCapsule_SetName(capsule, used_name)
    return device, np.asarray(_CapsuleOwner(managed, interface))


def _host_capsule(ext_tensor):
    # The producer's capsule for host memory: versioned (DLPack 1.x, which
    # carries the read-only flag) where the producer speaks it
    try:
        return ext_tensor.__dlpack__(max_version=(1, 0))
    except TypeError:                   # a producer older than the max_version keyword
        return ext_tensor.__dlpack__()


class _Capsule:
    """A legacy capsule of device memory dressed as a producer object, which
    is what CuPy's from_dlpack takes."""

    def __init__(self, capsule, device):
        self._capsule = capsule
        self._device = device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing the memory of another library's array, through DLPack.

    ``ext_tensor`` is anything with ``__dlpack__`` and ``__dlpack_device__``
    (a NumPy or CuPy array, a torch or JAX array, another retrograd tensor)
    or a legacy DLPack capsule (``torch.utils.dlpack.to_dlpack``). Nothing is
    copied: writes through either side show in the other. The result is a
    leaf that does not require grad, on the CPU for host memory and on
    ``cuda:<id>`` for CUDA memory (which needs CuPy). torch's
    ``torch.from_dlpack``.

    Parameters
    ----------
    ext_tensor : object
        The array to import, or a DLPack capsule (imported at most once).

    Returns
    -------
    Tensor
        A new leaf tensor over the same memory.

    Raises
    ------
    TypeError
        For an object that speaks no DLPack.
    RuntimeError
        For a tensor that requires grad (export ``t.detach()``), CUDA
        memory without CuPy, or memory of a device retrograd cannot hold.
    BufferError
        When the producer cannot export (for example a dtype NumPy has no
        counterpart for, or a capsule already imported).

    Examples
    --------
    >>> import numpy as np
    >>> import retrograd as rg
    >>> a = np.arange(3.0)
    >>> t = rg.from_dlpack(a)
    >>> t[0] = 10.0
    >>> a
    array([10.,  1.,  2.])
    >>> b = np.from_dlpack(rg.tensor([1.0, 2.0]))
    >>> b
    array([1., 2.], dtype=float32)
    """
    if type(ext_tensor).__name__ == "PyCapsule":
        device, host = _from_capsule(ext_tensor)
        if host is not None:
            return _abi._wrap(host, _abi.device("cpu"), False)
        ext_tensor = _Capsule(ext_tensor, device)
    if not (hasattr(ext_tensor, "__dlpack__") and hasattr(ext_tensor, "__dlpack_device__")):
        raise TypeError(f"from_dlpack() takes an object with __dlpack__ and __dlpack_device__ (a NumPy, CuPy, "
                        f"torch or JAX array) or a DLPack capsule, not {type(ext_tensor).__name__}")
    device_type, device_id = (int(v) for v in ext_tensor.__dlpack_device__())
    if device_type in (_DL_CPU, _DL_CUDA_HOST):
        _, host = _from_capsule(_host_capsule(ext_tensor))
        return _abi._wrap(host, _abi.device("cpu"), False)
    if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        try:
            import cupy
        except ImportError:
            raise RuntimeError("from_dlpack(): the array is in CUDA memory, which needs CuPy: install the "
                               "cupy-cuda12x (or cupy-cuda11x) package that matches your CUDA driver") from None
        with cupy.cuda.Device(device_id):
            array = cupy.from_dlpack(ext_tensor)
        return _abi._wrap(array, _abi.device(f"cuda:{device_id}"), False)
    name = _DEVICE_NAMES.get(device_type, f"device type {device_type}")
    raise RuntimeError(f"from_dlpack(): the array lives in {name} memory; retrograd holds CPU and CUDA "
                       "memory only. Copy it to the CPU in its own library first")
