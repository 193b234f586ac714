# cython: language_level=3
# retrograd.core._array_module: NumPy or CuPy, per array (declared in
# _array_module.pxd, where the per-op tests _is_cupy and _xp are inline).
# Knows no Tensor: arrays in, arrays out.

cimport numpy as _cnp
import numpy as np

_numpy = np

try:                                    # CuPy is optional (GPU only)
    import cupy
    _cupy = cupy
    _cupy_ndarray = cupy.ndarray
except Exception:                       # ImportError, or a broken CUDA install
    _cupy = None
    _cupy_ndarray = None

_cnp.import_array()


cdef object _arr(object a):
    # np.asarray for Python values; ndarrays, NumPy scalars and CuPy arrays
    # pass through (np.asarray would copy a cupy array to the host, or fail)
    if type(a) is _cnp.ndarray or isinstance(a, np.generic):
        return a
    if _cupy_ndarray is not None and type(a) is _cupy_ndarray:
        return a
    return np.asarray(a)


cdef object _contig(object a):
    # np.ascontiguousarray, on a's device (NumPy's would copy to the host)
    return _xp(a).ascontiguousarray(a)


cdef object _on_device_of(object like, object a):
    # `a` (a host array or scalar a kernel computed from shapes) on like's device
    if _is_cupy(like) and type(a) is _cnp.ndarray:
        return _cupy.asarray(a)
    return a


cdef object _device_index(object index, object like):
    # An index for a CuPy array: its NumPy array and list components moved to
    # the device (CuPy does not index with host arrays)
    if not _is_cupy(like):
        return index
    if isinstance(index, tuple):
        return tuple(_cupy.asarray(i) if type(i) is _cnp.ndarray or isinstance(i, list) else i for i in index)
    if type(index) is _cnp.ndarray or isinstance(index, list):
        return _cupy.asarray(index)
    return index
