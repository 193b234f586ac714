# Named helpers for backward formulas that need more than an expression
# (a formula that needs more than an expression calls a named helper here,
# in one hand-written module, rather than growing the table). Part of _ops.pyx.
#
# Each helper is written ONCE against a namespace `ns` of primitives and runs
# in two modes: with `A` (plain ndarrays: backward without create_graph) and
# with `T` (differentiable Tensor ops: create_graph=True, so the backward
# itself is recorded and higher-order gradients work). The generator passes
# the namespace; formulas never branch on the mode themselves.

from retrograd.core._arg_checks cimport _wrap_dim
from retrograd.core._array_module cimport _cupy_ndarray
from retrograd.core._kernels_core cimport k_sum, k_index_backward
from retrograd.core._kernels_nn cimport (
    k_conv2d, k_conv2d_input_grad, k_conv2d_weight_grad, k_max_pool2d_backward_fast,
    _max_pool_index, k_avg_pool2d, k_avg_pool2d_backward,
)
from retrograd.core._kernels_shape cimport k_view_scatter, k_diagonal_backward, k_scatter_add


cdef Tensor _constant_zeros(object zeros, Device device):
    # Zeros a create_graph formula starts from (a gradient's base, an absent
    # gradient): a constant whose value never depends on the inputs. A
    # tracer hears it as a factory (RG_TRACE_FACTORY, abi.pxd), so a compiled
    # program makes fresh zeros per call rather than refusing to bake them.
    cdef Tensor t = _rg_wrap(zeros, device)
    if _trace_slot != NULL:
        _trace_slot(RG_TRACE_FACTORY, "zeros", (), (t,), _functools.partial(_remake_zeros, zeros, device))
    return t


def _remake_zeros(proto, device):
    # (zeros_like of the trace-time zeros: NumPy or CuPy, like them)
    return _rg_wrap(np.zeros_like(proto), device)


cdef object _shape_constant(object arr, Tensor like):
    # An array a composite hands an op that it made from shapes and Python
    # arguments alone (roll's and pad's indices, tril's mask, pad's fill).
    # Eagerly the array as it is. While a tracer listens, a tensor on
    # `like`'s device that it hears as a factory (RG_TRACE_FACTORY): a
    # compiled program then makes it per call, where a bare array would be a
    # value it cannot prove constant (and would refuse to bake in).
    if _trace_slot == NULL:
        return arr
    if like._device.type == RG_DEV_CUDA:
        arr = _to_device_array(arr, like._device)
    cdef Tensor t = _rg_wrap(arr, like._device)
    _trace_slot(RG_TRACE_FACTORY, "constant", (), (t,), _functools.partial(_remake_constant, arr, like._device))
    return t


def _remake_constant(proto, device):
    # (a copy of the trace-time constant on its device: the program's own,
    # per call)
    return _rg_wrap(k_to_device(proto, device), device)


cdef extern from "numpy/arrayobject.h":
    _cnp.npy_intp _rg_count_nonzero "PyArray_CountNonzero" (_cnp.ndarray) except -1


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
        return _rg_sum_to(x, tuple(shape))

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
    def nograd(x):
        # (see _TensorNS.nograd)
        return x

    @staticmethod
    def zeros_like(x, shape=None):
        return np.zeros_like(x, shape=shape)

    @staticmethod
    def transpose(x, dim0, dim1):
        return np.swapaxes(x, dim0, dim1)

    @staticmethod
    def permute(x, dims):
        return np.transpose(x, tuple(dims))


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
        return _rg_sum_to(x, tuple(shape))

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
    def nograd(x):
        # x's value as a tensor without history, for the comparisons a mask
        # is made of: on it they are ops, which a tracer records (rg.compile
        # replays the mask per call), where on data(x) they would be NumPy's
        # and the mask a constant to it
        return x.detach() if isinstance(x, Tensor) else x

    @staticmethod
    def zeros_like(x, shape=None):
        # a constant: its value never depends on x
        if isinstance(x, Tensor):
            return _constant_zeros(np.zeros_like((<Tensor>x)._array, shape=shape), (<Tensor>x)._device)
        return np.zeros_like(x, shape=shape)

    @staticmethod
    def transpose(x, dim0, dim1):
        return _op_transpose(x, dim0, dim1)

    @staticmethod
    def permute(x, dims):
        return _op_permute(x, tuple(dims))


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
    # A full reduction's 0-d gradient expands as it is: no reshape node in a
    # create_graph graph (torch's sum_backward is grad.expand(sizes)).
    if kept is not None and not (getattr(grad, "ndim", 0) == 0 and _builtins.all(k == 1 for k in kept)):
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
    if count == 0:
        # an empty reduced dim: the gradient is empty, no division by zero
        return sum_backward(ns, grad, shape, dim, keepdim)
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
    if ns is A:                     # (the same, without the namespace's Python calls)
        r = grad * (exponent * self ** (exponent - 1))
        zero = np.equal(exponent, 0)
        if type(r) is ndarray and type(zero) is ndarray and not _rg_count_nonzero(zero):
            return r                # no zero exponent: the where would copy r
        return np.where(zero, 0.0, r)
    zero = ns.mask(ns.nograd(exponent) == 0)
    return ns.where(zero, 0.0, grad * (exponent * self ** (exponent - 1)))


def pow_backward_exponent(ns, grad, self, exponent, result):
    # d/dp x**p = x**p * log(x), defined as 0 where x == 0 and p >= 0 (torch's
    # rule: the limit from the right), avoiding log(0) = -inf.
    if grad is None or isinstance(exponent, (int, float)):
        # No (or a zero) tangent: a Python exponent is a constant. Used by the
        # forward formula, where log(self < 0) must not turn 0 into nan.
        return 0.0
    sd = ns.nograd(self)
    ed = ns.nograd(exponent)
    zero = ns.mask((sd == 0) & (ed >= 0))
    safe = ns.where(zero, 1.0, self)
    return ns.where(zero, 0.0, grad * result * ns.log(safe))


def index_backward(ns, grad, tuple shape, dtype, index):
    if ns is A:
        return k_index_backward(grad, shape, dtype, index)
    return _op__index_backward(grad, shape, dtype, index)


cdef object _a_relu_mask(object x):
    # relu's gradient mask on its result: torch's threshold_backward passes
    # the gradient where NOT result <= 0, so a NaN passes it too. The result
    # is >= 0 or NaN, where that is result != 0 (one ufunc call).
    # A bool mask: `grad * mask` keeps grad's float dtype, and skips the float
    # copy of the mask (one array of the layer's size less at peak).
    return x != 0


cdef object _t_relu_mask(object x):
    # As ops (ne, then the cast), not on the array: a create_graph backward
    # is what rg.compile traces as the backward program, and a mask made on
    # the array would look like a constant to it.
    cdef Tensor t = <Tensor>x
    return _op__to_dtype(_op_ne(t, 0), t._array.dtype)


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


# --- in-place on views and __setitem__ (see _copy_slices.pxi) ---

def as_strided_backward(ns, grad, tuple shape, dtype, offset, vshape, strides):
    # The gradient of a view, placed back into zeros of its base's shape;
    # where the view's elements overlap (as_strided with a stride 0, or
    # windows that share elements) each base element gets the sum of the
    # gradients of the elements that alias it, as in torch.
    if _geometry_overlaps(vshape, strides):
        return _as_strided_backward_overlapping(ns, grad, shape, dtype, offset, vshape, strides)
    if ns is A:
        return k_view_scatter(np.zeros(shape, dtype=dtype), grad, offset, vshape, strides)
    return _op__view_scatter(_constant_zeros(np.zeros(shape, dtype=dtype), (<Tensor>grad)._device),
                             grad, offset, vshape, strides)


cdef bint _geometry_overlaps(tuple vshape, tuple strides):
    # Whether two positions of a strided view can be one element: the dims of
    # size > 1 sorted by stride must each step past all the earlier ones'
    # extent (a sufficient test of no overlap, exact for every view op's
    # geometry).
    dims = sorted((_builtins.abs(st), n) for n, st in zip(vshape, strides) if n > 1)
    cdef Py_ssize_t extent = 0
    for st, n in dims:
        if st == 0 or st <= extent:
            return True
        extent += st * (n - 1)
    return False


def _as_strided_backward_overlapping(ns, grad, tuple shape, dtype, offset, tuple vshape, tuple strides):
    item = np.dtype(dtype).itemsize
    idx = np.full(vshape, offset, dtype=np.int64)
    for d, (n, st) in enumerate(zip(vshape, strides)):
        idx = idx + (np.arange(n, dtype=np.int64) * (st // item)).reshape((n,) + (1,) * (len(vshape) - d - 1))
    size = 1
    for n in shape:
        size *= n
    if ns is A:
        xp = _xp(grad)
        out = xp.zeros(size, dtype=dtype)
        xp.add.at(out, xp.asarray(idx.reshape(-1)), grad.reshape(-1))
        return out.reshape(shape)
    cdef Device dev = (<Tensor>grad)._device
    zeros = np.zeros(size, dtype=dtype)
    idx = idx.reshape(-1)
    if dev.type == RG_DEV_CUDA:
        zeros, idx = _to_device_array(zeros, dev), _to_device_array(idx, dev)
    flat = _op_scatter_add(_constant_zeros(zeros, dev), 0, _rg_wrap(idx, dev), _op_reshape(grad, (-1,)))
    return _op_reshape(flat, shape)



# --- shape and indexing ---

def cat_backward(ns, grad, tuple shapes, dim):
    # One slice of grad per input along dim: views in array mode, getitem
    # (recorded) in tensor mode; both spelt grad[...].
    cdef int d = _wrap_dim(dim, grad.ndim)
    lead = (slice(None),) * d
    out = []
    cdef Py_ssize_t start = 0
    for s in shapes:
        if len(s) == 1 and s[0] == 0 and grad.ndim != 1:
            # a legacy empty input that k_cat skipped: an empty gradient
            out.append(grad.reshape(-1)[:0])
            continue
        out.append(grad[lead + (slice(start, start + s[d]),)])
        start += s[d]
    return out


def stack_backward(ns, grad, Py_ssize_t n, dim):
    cdef int d = _wrap_dim(dim, grad.ndim)
    lead = (slice(None),) * d
    return [grad[lead + (i,)] for i in range(n)]


def diagonal_backward(ns, grad, tuple shape, dtype, offset, dim1, dim2):
    if ns is A:
        return k_diagonal_backward(grad, shape, dtype, offset, dim1, dim2)
    return _op__diagonal_backward(grad, shape, dtype, offset, dim1, dim2)


def gather_backward(ns, grad, tuple shape, dtype, dim, index):
    # scatter_add into zeros of the input's shape; in tensor mode the zeros
    # are a constant and scatter_add's backward (gather) gives double backward.
    if ns is A:
        return k_scatter_add(np.zeros(shape, dtype=dtype) if type(grad) is ndarray
                             else np.zeros_like(grad, dtype=dtype, shape=shape), dim, index, grad)
    g = <Tensor>grad
    return _op_scatter_add(_constant_zeros(np.zeros_like(g._array, dtype=dtype, shape=shape), g._device),
                           dim, index, grad)


def scatter_add_jvp(ns, self_t, dim, index, src_t):
    # Linear in (self, src): scatter the src tangent onto the self tangent.
    if not isinstance(src_t, (Tensor, ndarray)):
        return self_t
    if not isinstance(self_t, (Tensor, ndarray)):
        return _op_scatter_add(np.zeros(np.shape(ns.data(index)), dtype=np.result_type(ns.data(src_t))),
                               dim, index, src_t)
    return _op_scatter_add(self_t, dim, index, src_t)



# --- nn.functional ---------------------------------------------------------

cdef inline bint _no_tangent(object t):
    # a missing (None) or constant-zero (Python number) tangent
    return t is None or isinstance(t, (int, float))


def softmax_backward(ns, grad, result, dim):
    # y * (g - sum(g * y, dim)); also softmax's JVP (the Jacobian is symmetric)
    if _no_tangent(grad):
        return 0.0
    gy = grad * result
    if ns is A:
        s = k_sum(gy, dim, True, None)
    else:
        s = _op_sum(gy, dim, True, None)
    return result * (grad - s)


def log_softmax_backward(ns, grad, result, dim):
    # g - exp(y) * sum(g, dim)
    if _no_tangent(grad):
        return 0.0
    if ns is A:
        return grad - np.exp(result) * k_sum(grad, dim, True, None)
    return grad - _op_exp(result) * _op_sum(grad, dim, True, None)


def log_softmax_jvp(ns, tangent, result, dim):
    # t - sum(softmax * t, dim)
    if _no_tangent(tangent):
        return 0.0
    if ns is A:
        return tangent - k_sum(np.exp(result) * tangent, dim, True, None)
    return tangent - _op_sum(_op_exp(result) * tangent, dim, True, None)


# Convolution: _conv2d(x, w), its input gradient _conv2d_input_grad(g, w) and
# its weight gradient _conv2d_weight_grad(x, g) are three bilinear table ops
# whose backward formulas are each other: double (and higher) backward of
# convolution works through the table.

def conv2d_fw(ns, x, w, stride, padding, dilation, groups):
    if ns is A:
        return k_conv2d(x, w, stride, padding, dilation, groups)
    return _op__conv2d(x, w, stride, padding, dilation, groups)


def conv2d_input_grad(ns, g, w, input_shape, stride, padding, dilation, groups):
    if ns is A:
        return k_conv2d_input_grad(g, w, input_shape, stride, padding, dilation, groups)
    return _op__conv2d_input_grad(g, w, input_shape, stride, padding, dilation, groups)


def conv2d_weight_grad(ns, x, g, weight_shape, stride, padding, dilation, groups):
    if ns is A:
        return k_conv2d_weight_grad(x, g, weight_shape, stride, padding, dilation, groups)
    return _op__conv2d_weight_grad(x, g, weight_shape, stride, padding, dilation, groups)


def conv2d_bias_grad(ns, g):
    # _conv2d_bias's bias: the sum of g (N, O, Ho, Wo) over all but channels
    if ns is A:
        return k_sum(g, (0, 2, 3), False, None)
    return _op_sum(g, (0, 2, 3), False, None)


def conv2d_bias_jvp(ns, b_t, result):
    # the bias tangent at every output pixel
    if ns is A:
        return np.broadcast_to(np.reshape(b_t, (-1, 1, 1)), np.shape(result)).copy()
    return _op_broadcast_to(_op_reshape(b_t, (-1, 1, 1)), tuple(result.shape))


def _bilinear_jvp(f, a_t, b_p, a_p, b_t):
    # d f(a, b) = f(a_t, b) + f(a, b_t) for f linear in each argument
    out = 0.0
    if not _no_tangent(a_t):
        out = f(a_t, b_p)
    if not _no_tangent(b_t):
        out = out + f(a_p, b_t)
    return out


def conv2d_jvp(ns, x_t, w_p, x_p, w_t, stride, padding, dilation, groups):
    return _bilinear_jvp(lambda a, b: conv2d_fw(ns, a, b, stride, padding, dilation, groups),
                         x_t, w_p, x_p, w_t)


def conv2d_input_grad_jvp(ns, g_t, w_p, g_p, w_t, input_shape, stride, padding, dilation, groups):
    return _bilinear_jvp(lambda a, b: conv2d_input_grad(ns, a, b, input_shape, stride, padding,
                                                        dilation, groups), g_t, w_p, g_p, w_t)


def conv2d_weight_grad_jvp(ns, x_t, g_p, x_p, g_t, weight_shape, stride, padding, dilation, groups):
    return _bilinear_jvp(lambda a, b: conv2d_weight_grad(ns, a, b, weight_shape, stride, padding,
                                                         dilation, groups), x_t, g_p, x_p, g_t)


def max_pool2d_backward(ns, grad, self, result, kernel_size, stride, padding, dilation, ceil_mode):
    if ns is A:
        return k_max_pool2d_backward_fast(grad, self, result, kernel_size, stride, padding, dilation,
                                          ceil_mode)
    # create_graph: the gradient scattered (scatter_add, whose backward
    # gathers: max_pool2d twice differentiable) to the positions an op
    # computes from self, so that a tracer records where they come from
    flat = _op_reshape(_op__max_pool2d_flat_index(self, kernel_size, stride, padding, dilation,
                                                  ceil_mode), (-1,))
    zeros = _op_reshape(_op_zeros_like(self), (-1,))
    return _op_reshape(_op_scatter_add(zeros, 0, flat, _op_reshape(grad, (-1,))), tuple(self.shape))


def max_pool2d_jvp(ns, tangent, self, kernel_size, stride, padding, dilation, ceil_mode):
    if _no_tangent(tangent):
        return 0.0
    idx = _max_pool_index(ns.data(self), kernel_size, stride, padding, dilation, ceil_mode)
    if ns is A:
        return tangent[idx]
    return _op_getitem(tangent, idx)


def avg_pool2d_fw(ns, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if ns is A:
        return k_avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _op_avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool2d_backward(ns, grad, shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    if ns is A:
        return k_avg_pool2d_backward(grad, shape, kernel_size, stride, padding, ceil_mode,
                                     count_include_pad, divisor_override)
    return _op__avg_pool2d_backward(grad, shape, kernel_size, stride, padding, ceil_mode,
                                    count_include_pad, divisor_override)
