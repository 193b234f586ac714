# Formula helpers for elementwise ops. Part of _ops.pyx, after
# _formula_helpers_linalg.pxi; formulas.py lists them (NS_HELPERS).

from retrograd.core._elementwise_loops cimport (
    _loop_max_min_backward, _loop_softplus_backward, _loop_silu_backward, _loop_sigmoid_backward,
)
from retrograd.core._kernels_elementwise cimport k_sigmoid, k_erf


# --- elementwise ops -------------------------------------------------------------

cdef object _op_zeros_like(object x):
    # zeros shaped like a gradient: a constant in both modes (a factory to a
    # tracer: a compiled program makes them afresh, see _constant_zeros)
    if isinstance(x, Tensor):
        return _constant_zeros(np.zeros_like((<Tensor>x)._array), (<Tensor>x)._device)
    return np.zeros_like(x)


cdef object _ns_erf(object ns, object x):
    return k_erf(x) if ns is A else _op_erf(x)


cdef object _ns_tanh(object ns, object x):
    return np.tanh(x) if ns is A else _op_tanh(x)


cdef object _ns_sigmoid(object ns, object x):
    return k_sigmoid(x) if ns is A else _op_sigmoid(x)


def gelu_backward(ns, grad, self, approximate):
    # torch's GeluBackward formulas (aten/src/ATen/native/cpu/Activation.cpp)
    if approximate == "tanh":
        x_sq = self * self
        inner = 0.7978845608028654 * (self + 0.044715 * (x_sq * self))
        t = _ns_tanh(ns, inner)
        left_derivative = 0.5 * (1 + t)
        right_derivative = (0.5 * self) * (1 - t * t) * (0.7978845608028654 * (1 + 3 * 0.044715 * x_sq))
        return grad * (left_derivative + right_derivative)
    cdf = 0.5 * (1 + _ns_erf(ns, self * 0.7071067811865476))
    pdf = _ns_exp(ns, -0.5 * (self * self)) * 0.3989422804014327
    return grad * (cdf + self * pdf)


def softplus_backward(ns, grad, self, result, beta, threshold):
    # where x*beta > threshold the forward is x itself (gradient 1)
    if ns is A:
        return _a_softplus_backward(grad, self, result, beta, threshold)
    z = _ns_sigmoid(ns, self * beta)
    above = ns.mask(ns.nograd(self) * beta > threshold)
    return ns.where(above, grad, grad * z)


cdef object _a_softplus_backward(object grad, object x, object y, object beta, object threshold):
    # Without create_graph, sigmoid(x*beta) comes from the output: y*beta =
    # log1p(exp(x*beta)), so sigmoid(x*beta) = 1 - exp(-y*beta) =
    # -expm1(-y*beta), exact for small y too (3 ufunc calls, not sigmoid's 7).
    # create_graph keeps the formula in x (differentiable in x alone).
    r = _loop_softplus_backward(grad, x, y, beta, threshold)    # the same, one pass
    if r is not None:
        return r
    xb = x if beta == 1 else x * beta
    yb = y if beta == 1 else y * beta
    gz = np.negative(np.multiply(grad, np.expm1(np.negative(yb))))
    return np.where(xb > threshold, grad, gz)


def sigmoid_backward(ns, grad, result):
    # d sigmoid = y * (1 - y), from the output
    if ns is A:
        r = _loop_sigmoid_backward(grad, result)        # the same, one pass
        if r is not None:
            return r
    return grad * (result * (1 - result))


def silu_backward(ns, grad, self):
    # torch's silu_backward: grad * s * (1 + x * (1 - s)), s = sigmoid(x),
    # with the sigmoid computed once.
    if ns is A:
        r = _loop_silu_backward(grad, self)             # the same, one pass
        if r is not None:
            return r
    s = _ns_sigmoid(ns, self)
    return grad * (s * (1 + self * (1 - s)))


def clamp_backward(ns, grad, self, min, max):
    # gradient flows where min <= x <= max (torch's clamp_backward)
    x = ns.nograd(self)
    if min is None:
        keep = x <= ns.nograd(max)
    elif max is None:
        keep = x >= ns.nograd(min)
    else:
        keep = (x >= ns.nograd(min)) & (x <= ns.nograd(max))
    return ns.where(ns.mask(keep), grad, 0.0)


def clamp_bound_backward(ns, grad, self, min, max, int which):
    # torch's clamp_backward_min_max: min gets the gradient where x < min
    # (and min < max); max where x > max, or everywhere max < min wins
    x = ns.nograd(self)
    if which == 0:
        keep = x < ns.nograd(min)
        if max is not None:
            keep = keep & (ns.nograd(min) < ns.nograd(max))
    else:
        keep = x > ns.nograd(max)
        if min is not None:
            keep = keep | (ns.nograd(max) < ns.nograd(min))
    return ns.where(ns.mask(keep), grad, 0.0)


def clamp_jvp(self_p, self_t, min_p, min_t, max_p, max_t):
    out = clamp_backward(T, self_t, self_p, min_p, max_p)
    if min_p is not None and not _is_zero(min_t):
        out = out + clamp_bound_backward(T, min_t, self_p, min_p, max_p, 0)
    if max_p is not None and not _is_zero(max_t):
        out = out + clamp_bound_backward(T, max_t, self_p, min_p, max_p, 1)
    return out


cdef bint _is_zero(object t):
    return t is None or (type(t) is float and t == 0.0) or (type(t) is int and t == 0)


def atan2_backward(ns, grad, self, other, int which):
    # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2); torch's gradient is 0 at
    # the origin (and wherever x^2 + y^2 underflows to 0), not 0/0
    d = self * self + other * other
    zero = ns.mask(ns.nograd(d) == 0)
    num = grad * other if which == 0 else -grad * self
    return ns.where(zero, 0.0, num / ns.where(zero, 1.0, d))


def max_min_backward(ns, grad, self, other, bint is_max, int which):
    # torch: the input that does not lose gets the gradient, ties split it
    # half/half. "Loses" is a strict comparison, so a NaN on either side
    # passes the whole gradient to both inputs, as torch's formula does.
    if ns is A:
        return _a_max_min_backward(grad, self, other, is_max, which)
    a = ns.nograd(self)
    b = ns.nograd(other)
    if which == 1:
        a, b = b, a
    keeps = ~((a < b) if is_max else (a > b))
    tie = ns.mask(a == b)
    return ns.where(tie, grad / 2, ns.where(ns.mask(keeps), grad, 0.0))


cdef object _a_max_min_backward(object grad, object a, object b, bint is_max, int which):
    # max_min_backward on arrays, two ufunc calls fewer: the mask computed
    # once, and the ties halved in place rather than by a second where.
    if which == 1:
        a, b = b, a
    r = _loop_max_min_backward(grad, a, b, is_max)     # the same, one pass
    if r is not None:
        return r
    r = np.where(np.less(a, b) if is_max else np.greater(a, b), 0.0, grad)
    if type(r) is not ndarray:          # CuPy: no where= in its ufuncs
        return np.where(np.equal(a, b), grad * 0.5, r)
    np.multiply(grad, 0.5, out=r, where=np.equal(a, b))
    return r


def max_min_jvp(self_p, self_t, other_p, other_t, bint is_max):
    # torch: other_t + where(self == other, 0.5, self wins) * (self_t - other_t)
    a = T.data(self_p)
    b = T.data(other_p)
    wins = (a > b) if is_max else (a < b)
    return _op_where(a == b, (self_t + other_t) / 2, _op_where(wins, self_t, other_t))


def fill_jvp(result, value_t):
    return _op_zeros_like(result) + value_t
