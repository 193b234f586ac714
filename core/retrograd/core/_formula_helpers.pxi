# Named helpers for backward formulas that need more than an expression
# (shared/DESIGN.md: "a formula that needs more than an expression calls a
# named helper in one hand-written module"). Part of abi.pyx.
#
# Each helper is written ONCE against a namespace `ns` of primitives and runs
# in two modes: with `A` (plain ndarrays: backward without create_graph) and
# with `T` (differentiable Tensor ops: create_graph=True, so the backward
# itself is recorded and higher-order gradients work). The generator passes
# the namespace; formulas never branch on the mode themselves.


class _ArrayNS:
    """Primitives over ndarrays (backward without create_graph)."""
    matmul = staticmethod(np.matmul)
    log = staticmethod(np.log)

    @staticmethod
    def mT(x):
        return np.swapaxes(x, -1, -2)

    @staticmethod
    def reshape(x, shape):
        return np.reshape(x, shape)

    @staticmethod
    def expand(x, shape):
        return _a_expand(x, tuple(shape))

    @staticmethod
    def sum_to(x, shape):
        return rg_sum_to(x, tuple(shape))

    @staticmethod
    def where(cond, a, b):
        return np.where(cond, a, b)

    @staticmethod
    def mask(x):
        # a constant (never differentiated) view of a condition
        return x

    @staticmethod
    def data(x):
        return x

    @staticmethod
    def zeros_like(x, shape=None):
        return np.zeros_like(x, shape=shape)


class _TensorNS:
    """Primitives over Tensors that record the graph (create_graph=True)."""

    @staticmethod
    def matmul(a, b):
        return _op_matmul(a, b)

    @staticmethod
    def log(x):
        return _op_log(x)

    @staticmethod
    def mT(x):
        return _op_transpose(x, -1, -2)

    @staticmethod
    def reshape(x, shape):
        return _op_reshape(x, tuple(shape))

    @staticmethod
    def expand(x, shape):
        return _op_expand(x, tuple(shape))

    @staticmethod
    def sum_to(x, shape):
        return rg_sum_to(x, tuple(shape))

    @staticmethod
    def where(cond, a, b):
        return _op_where(cond, a, b)

    @staticmethod
    def mask(x):
        return x

    @staticmethod
    def data(x):
        return x._array if isinstance(x, Tensor) else x

    @staticmethod
    def zeros_like(x, shape=None):
        # a constant: its value never depends on x
        if isinstance(x, Tensor):
            return rg_wrap(np.zeros_like((<Tensor>x)._array, shape=shape), (<Tensor>x)._device)
        return np.zeros_like(x, shape=shape)


A = _ArrayNS
T = _TensorNS


cdef object _a_expand(object x, tuple shape):
    # Broadcast a gradient to `shape` (sum/mean backward). np.broadcast_to is
    # Python-level (~3 us a call); for small results a filled copy is cheaper
    # and as good. Large results stay a broadcast view: no memory is spent.
    cdef Py_ssize_t size = 1
    if type(x) is not ndarray and isinstance(x, np.generic):
        x = np.asarray(x)                  # 0-d arithmetic gives NumPy scalars
    if type(x) is ndarray:
        for s in shape:
            size *= s
        if size <= 4096:
            out = np.empty(shape, dtype=x.dtype)
            out[...] = x
            return out
    return np.broadcast_to(x, shape)


def _reduced_shape(tuple shape, dim, bint keepdim):
    # The shape of grad of a reduction over `dim`, with the reduced dims kept.
    cdef int n = len(shape)
    if keepdim:
        return None
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return (1,) * n
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    wrapped = {_wrap_dim(d, n) for d in dims}
    return tuple(1 if i in wrapped else shape[i] for i in range(n))


def sum_backward(ns, grad, tuple shape, dim, bint keepdim):
    kept = _reduced_shape(shape, dim, keepdim)
    if kept is not None:
        grad = ns.reshape(grad, kept)
    return ns.expand(grad, shape)


def mean_backward(ns, grad, tuple shape, dim, bint keepdim):
    cdef int n = len(shape)
    count = 1
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        for s in shape:
            count *= s
    elif n > 0:                 # a 0-d tensor reduced over dim 0 / -1 has one element
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        for d in {_wrap_dim(d, n) for d in dims}:
            count *= shape[d]
    return sum_backward(ns, grad / count, shape, dim, keepdim)


def matmul_backward(ns, grad, a, b, int which):
    """Gradient of matmul(a, b) w.r.t. a (which=0) or b (which=1), with torch's
    1-D promotion rules and batch broadcasting."""
    cdef int na = a.ndim, nb = b.ndim
    if na == 1 and nb == 1:                         # dot product: grad is 0-d
        return grad * (b if which == 0 else a)
    if which == 0:
        if nb == 1:                                 # (..., n, k) @ (k,) -> (..., n)
            return ns.reshape(grad, tuple(grad.shape) + (1,)) * b
        if na == 1:                                 # (k,) @ (..., k, m) -> (..., m)
            g = ns.matmul(b, ns.reshape(grad, tuple(grad.shape) + (1,)))
            return ns.sum_to(ns.reshape(g, tuple(g.shape[:-1])), tuple(a.shape))
        return ns.sum_to(ns.matmul(grad, ns.mT(b)), tuple(a.shape))
    else:
        if na == 1:                                 # (k,) @ (..., k, m): grad (..., m)
            g = ns.reshape(a, (a.shape[0], 1)) * ns.reshape(grad, tuple(grad.shape[:-1]) + (1, grad.shape[-1]))
            return ns.sum_to(g, tuple(b.shape))
        if nb == 1:                                 # (..., n, k) @ (k,): grad (..., n)
            g = ns.matmul(ns.mT(a), ns.reshape(grad, tuple(grad.shape) + (1,)))
            return ns.sum_to(ns.reshape(g, tuple(g.shape[:-1])), tuple(b.shape))
        return ns.sum_to(ns.matmul(ns.mT(a), grad), tuple(b.shape))


def pow_backward_self(ns, grad, self, exponent):
    # d/dx x**p = p * x**(p-1), defined as 0 where p == 0 (torch's rule, so
    # x = 0, p = 0 gives 0 rather than nan).
    if grad is None:                # no tangent (forward formula)
        return 0.0
    if isinstance(exponent, (int, float, np.generic)):
        if exponent == 0:
            # zeros of the broadcast shape, also where self is inf or nan
            return ns.zeros_like(grad, np.broadcast_shapes(np.shape(ns.data(grad)),
                                                           np.shape(ns.data(self))))
        return grad * (exponent * self ** (exponent - 1))
    zero = ns.mask(ns.data(exponent) == 0)
    return ns.where(zero, 0.0, grad * (exponent * self ** (exponent - 1)))


def pow_backward_exponent(ns, grad, self, exponent, result):
    # d/dp x**p = x**p * log(x), defined as 0 where x == 0 and p >= 0 (torch's
    # rule: the limit from the right), avoiding log(0) = -inf.
    if grad is None or isinstance(exponent, (int, float)):
        # No (or a zero) tangent: a Python exponent is a constant. Used by the
        # forward formula, where log(self < 0) must not turn 0 into nan.
        return 0.0
    sd = ns.data(self)
    ed = ns.data(exponent)
    zero = ns.mask((sd == 0) & (ed >= 0))
    safe = ns.where(zero, 1.0, self)
    return ns.where(zero, 0.0, grad * result * ns.log(safe))


def index_backward(ns, grad, tuple shape, dtype, index):
    if ns is A:
        return k_index_backward(grad, shape, dtype, index)
    return _op__index_backward(grad, shape, dtype, index)


cdef object _a_positive(object x):
    return (x > 0).astype(x.dtype)


cdef object _t_positive(object x):
    cdef Tensor t = <Tensor>x
    return rg_wrap((t._array > 0).astype(t._array.dtype), t._device)


cdef object _a_to_device(object g, Device device):
    if device.type == RG_DEV_CUDA:
        import cupy
        with cupy.cuda.Device(device.index if device.index >= 0 else 0):
            return cupy.asarray(g)
    if _cupy_ndarray is not None and type(g) is _cupy_ndarray:
        return g.get()
    return g


def inverse_permutation(dims, int ndim):
    cdef list inv = [0] * ndim
    for i, d in enumerate(dims):
        inv[_wrap_dim(d, ndim)] = i
    return tuple(inv)


# --- elementwise ops (issue 3) ---------------------------------------------------

cdef object _op_zeros_like(object x):
    # zeros shaped like a gradient: a constant in both modes
    if isinstance(x, Tensor):
        return rg_wrap(np.zeros_like((<Tensor>x)._array), (<Tensor>x)._device)
    return np.zeros_like(x)


cdef object _ns_erf(object ns, object x):
    return k_erf(x) if ns is A else _op_erf(x)


cdef object _ns_exp(object ns, object x):
    return np.exp(x) if ns is A else _op_exp(x)


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


def softplus_backward(ns, grad, self, beta, threshold):
    # where x*beta > threshold the forward is x itself (gradient 1)
    z = _ns_sigmoid(ns, self * beta)
    above = ns.mask(ns.data(self) * beta > threshold)
    return ns.where(above, grad, grad * z)


def clamp_backward(ns, grad, self, min, max):
    # gradient flows where min <= x <= max (torch's clamp_backward)
    x = ns.data(self)
    if min is None:
        keep = x <= ns.data(max)
    elif max is None:
        keep = x >= ns.data(min)
    else:
        keep = (x >= ns.data(min)) & (x <= ns.data(max))
    return ns.where(ns.mask(keep), grad, 0.0)


def clamp_bound_backward(ns, grad, self, min, max, int which):
    # torch's clamp_backward_min_max: min gets the gradient where x < min
    # (and min < max); max where x > max, or everywhere max < min wins
    x = ns.data(self)
    if which == 0:
        keep = x < ns.data(min)
        if max is not None:
            keep = keep & (ns.data(min) < ns.data(max))
    else:
        keep = x > ns.data(max)
        if min is not None:
            keep = keep | (ns.data(max) < ns.data(min))
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


def max_min_backward(ns, grad, self, other, bint is_max, int which):
    # torch: the larger (smaller) input gets the gradient, ties split it half/half
    a = ns.data(self)
    b = ns.data(other)
    wins = (a > b) if is_max else (a < b)
    if which == 1:
        wins = (b > a) if is_max else (b < a)
    tie = ns.mask(a == b)
    return ns.where(tie, grad / 2, ns.where(ns.mask(wins), grad, 0.0))


def max_min_jvp(self_p, self_t, other_p, other_t, bint is_max):
    # torch: other_t + where(self == other, 0.5, self wins) * (self_t - other_t)
    a = T.data(self_p)
    b = T.data(other_p)
    wins = (a > b) if is_max else (a < b)
    return _op_where(a == b, (self_t + other_t) / 2, _op_where(wins, self_t, other_t))


def fill_jvp(result, value_t):
    return _op_zeros_like(result) + value_t
