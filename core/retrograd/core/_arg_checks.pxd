# retrograd.core._arg_checks: torch's argument rules for the ints, dims and
# operands of an op, with torch's exception classes and words (see the
# module). Private to core.

cimport numpy as _cnp
from retrograd.core._array_module cimport _numpy, _is_cupy

cdef int _wrap_dim(object dim, int ndim) except? -1
cdef object _int_arg(object v, str arg, str fn=*)
cdef object _check_int_list(object seq, str arg, str fn)
cdef object _bool_arg(object v, str arg, str fn)
cdef object _overflow_error(object v)
cdef str _type_name(object v)
cdef object _norm_dims(object dim, int ndim)
cdef object _unwrap_index(object index)


cdef inline object _shape_of(object a):
    return a.shape if type(a) is _cnp.ndarray else _numpy.shape(a)


cdef inline object _dtype_of(object a):
    return a.dtype if type(a) is _cnp.ndarray else _numpy.result_type(a)


cdef inline void _matrix_operands(str fn, object a, object b, str name_a, str name_b) except *:
    # torch's matmul/mm/bmm/dot/outer take tensors only: a Python number (kept
    # as a scalar by _arg_array) would otherwise reach NumPy's matmul.
    if type(a) is not _cnp.ndarray and not _is_cupy(a):
        raise TypeError(f"{fn}(): argument '{name_a}' (position 1) must be Tensor, not {_type_name(a)}")
    if type(b) is not _cnp.ndarray and not _is_cupy(b):
        raise TypeError(f"{fn}(): argument '{name_b}' (position 2) must be Tensor, not {_type_name(b)}")
