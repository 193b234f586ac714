# retrograd.core._dtype_rules: what dtype an op computes in, and the
# dtypes torch refuses (see the module). Private to core.

cimport numpy as _cnp

cdef object k_float(object a)
cdef object k_default_float()
cdef object k_default_complex()
cdef str _dtype_str(object a)
cdef object k_float_only(object a, str name)
cdef object k_real(object a, str name, bint runtime=*)
cdef object k_int_divisor(object a, object b, str name)
cdef object k_no_bool(object a, str name)
cdef object k_integral(object a, str name)
cdef object k_square(object a)
cdef object k_real_float(object a, str name)
cpdef object k_sign(object a)
cdef object k_opmath(object a)
cdef object k_bf16_like(object r, object a, object b=*)
cdef object k_via_float32(object fn, object a, object b)


cdef inline bint _is_bf16_dtype(object dt):
    # ml_dtypes' bfloat16: floating-point, though NumPy files it under kind 'V'
    return dt.kind == 'V' and dt.name == "bfloat16"


cdef inline bint _is_floating_dtype(object dt):
    # torch's dtype.is_floating_point: NumPy's float kind, and bfloat16
    return dt.kind == 'f' or (dt.kind == 'V' and dt.name == "bfloat16")


cdef inline bint _is_bf16(object a):
    # a bfloat16 array (or NumPy scalar). NumPy numbers user dtypes after its
    # own: one C test tells the usual arrays apart, no attribute lookup.
    if type(a) is _cnp.ndarray:
        return _cnp.PyArray_ISUSERDEF(<_cnp.ndarray>a) and _is_bf16_dtype((<object>a).dtype)
    if type(a) is float or type(a) is int or type(a) is bool or type(a) is complex or a is None:
        return False
    dt = getattr(a, "dtype", None)
    return dt is not None and hasattr(dt, "kind") and _is_bf16_dtype(dt)


cdef inline int _kind_of(object a):
    # 'i' for a bool or integer array, 'c' for a complex one, 'f' else
    # (float arrays, bfloat16 ones, Python floats; Python ints and bools
    # count as 'i', Python complex numbers as 'c')
    cdef int t
    if type(a) is _cnp.ndarray:
        t = _cnp.PyArray_TYPE(<_cnp.ndarray>a)
        if t <= _cnp.NPY_ULONGLONG:            # NPY_BOOL .. NPY_ULONGLONG
            return 105
        if t == _cnp.NPY_CFLOAT or t == _cnp.NPY_CDOUBLE or t == _cnp.NPY_CLONGDOUBLE:
            return 99
        return 102
    if type(a) is float:
        return 102
    if type(a) is int or type(a) is bool:
        return 105
    if type(a) is complex:
        return 99
    k = getattr(getattr(a, "dtype", None), "kind", "f")        # CuPy arrays, NumPy scalars
    return 105 if k in "biu" else (99 if k == "c" else 102)
