# retrograd.core._kernels_special: see the module. Private to core: abi (the
# generated ops, formula helpers) cimports these.

cpdef object k_lgamma(object a)
cpdef object k_digamma(object a)
cpdef object k_polygamma(object n, object a)
cpdef object k_i0(object a)
cpdef object k_i1(object a)
cpdef object k_mvlgamma(object a, object p)
cpdef object k_multi_polygamma(object a, object n, object p)
cpdef object k_igamma(object a, object x)
cpdef object k_igammac(object a, object x)
cpdef object k_not_implemented(object t, object what)
