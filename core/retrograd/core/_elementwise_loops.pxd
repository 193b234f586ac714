# retrograd.core._elementwise_loops: one-pass C loops for elementwise
# kernels and backward formulas (see the module for when each applies).
# Private to core: the op library cimports these; no other distribution may.
# Each returns None where its loop does not apply (the caller then runs its
# ufunc formula), and otherwise exactly what that formula gives.

cdef enum:                      # _loop_arith's op
    _ARITH_ADD = 0
    _ARITH_SUB = 1
    _ARITH_MUL = 2
    _ARITH_DIV = 3

cdef object _loop_max_min_backward(object grad, object a, object b, bint is_max)
cdef object _loop_softplus(object a, object beta, object threshold)
cdef object _loop_softplus_backward(object grad, object x, object y, object beta, object threshold)
cdef object _loop_sigmoid(object a, int mode)
cdef object _loop_silu_backward(object grad, object x)
cdef object _loop_sigmoid_backward(object grad, object y)
cdef object _loop_arith(object a, object b, int op, object alpha=*)
cdef object _loop_neg(object a)
