# retrograd.core._kernels_elementwise: see the module. Private to core: abi (the
# generated ops, formula helpers) cimports these.

cdef object k_sigmoid(object a)
cdef object k_relu(object a)
cdef object _erf_f64(object x)
cdef object _erf_series(object s, double smax)
cpdef object k_erf(object a)
cpdef object k_erfc(object a)
cpdef object k_erfinv(object a)
cdef object k_rsqrt(object a)
cdef object k_reciprocal(object a)
cdef object k_gelu(object a, object approximate)
cdef object k_silu(object a)
cdef object k_softplus(object a, object beta, object threshold)
cdef object k_clamp(object a, object lo, object hi)
cdef object k_lerp(object a, object end, object weight)
cdef object k_fill(object a, object value)
