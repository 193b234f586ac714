# retrograd.core._array_module: which array module (NumPy or CuPy) an
# array belongs to, and the array-level helpers every kernel uses to stay on
# its inputs' device. Private to core. One place knows whether CuPy is here:
# `_cupy` and `_cupy_ndarray` below (None without a usable CuPy).

cimport numpy as _cnp

cdef object _numpy             # the numpy module
cdef object _cupy              # the cupy module, or None
cdef object _cupy_ndarray      # cupy.ndarray, or None

cdef object _arr(object a)
cdef object _contig(object a)
cdef object _on_device_of(object like, object a)
cdef object _device_index(object index, object like)


cdef inline bint _is_cupy(object a):
    return _cupy_ndarray is not None and type(a) is _cupy_ndarray


cdef inline object _xp(object a):
    # The array module of `a`: CuPy for a device array, else NumPy. Arrays a
    # kernel creates (zeros, empty, arange) come from it, so they live on
    # the same device as the kernel's inputs (NumPy's creation functions
    # always make host arrays, and CuPy refuses to mix them with its own).
    return _cupy if _cupy_ndarray is not None and type(a) is _cupy_ndarray else _numpy


cdef inline object _ensure_array(object out):
    # NumPy returns scalars from 0-d computations; a Tensor always holds an array.
    if type(out) is _cnp.ndarray:
        return out
    if _cupy_ndarray is not None and type(out) is _cupy_ndarray:
        return out
    return _numpy.asarray(out)
