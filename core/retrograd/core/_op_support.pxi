# What every generated op uses: argument unwrapping, device checks, graph
# recording (collect_next_edges / set_history), view bookkeeping and the
# array helpers that generated kernels call. Part of abi.pyx.

import traceback as _traceback


cdef inline object _arg_array(object x):
    # A non-Tensor argument of a Tensor parameter: Python scalars stay scalars
    # (NumPy's weak promotion: float32 tensor * 2.0 stays float32); anything
    # else becomes an array without copying.
    if type(x) is float or type(x) is int or type(x) is bool or type(x) is ndarray:
        return x
    if _cupy_ndarray is not None and type(x) is _cupy_ndarray:
        return x
    if isinstance(x, (complex, np.generic)):
        return x
    return np.asarray(x)


cdef inline Device _dev2(Tensor a, Tensor b):
    if a is None:
        return b._device if b is not None else _CPU
    if b is None or b._device is a._device:
        return a._device
    if b._array.ndim == 0 and b._device is _CPU:
        return a._device
    if a._array.ndim == 0 and a._device is _CPU:
        return b._device
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, "
        f"{a._device} and {b._device}! Move them with .to(device) first.")


cdef inline Device _dev3(Tensor a, Tensor b, Tensor c):
    return _dev2(_dev_carrier(a, b), c)


cdef inline Tensor _dev_carrier(Tensor a, Tensor b):
    _dev2(a, b)
    return a if a is not None else b


cdef inline Node _edge_fn(Tensor t):
    # collect_next_edges, one input at a time: the node this input's gradient
    # flows into (its grad_fn, or a leaf's AccumulateGrad), or None.
    if t is None:
        return None
    if t._grad_fn is not None:
        return t._grad_fn
    if t._requires_grad:
        return t.grad_accumulator()
    return None


cdef inline int _edge_nr(Tensor t):
    return t._output_nr if t is not None else 0


cdef inline void _set_edges1(Node node, Node f0, int n0):
    # set_next_edges for one input, without building a tuple (hot path).
    node._fn0 = f0
    node._nr0 = n0
    node._num_edges = 1
    node.topo_nr = f0.topo_nr + 1 if f0 is not None else 0


cdef inline void _set_edges2(Node node, Node f0, int n0, Node f1, int n1):
    cdef uint64_t topo = 0
    node._fn0 = f0
    node._nr0 = n0
    node._fn1 = f1
    node._nr1 = n1
    node._num_edges = 2
    if f0 is not None:
        topo = f0.topo_nr + 1
    if f1 is not None and f1.topo_nr >= topo:
        topo = f1.topo_nr + 1
    node.topo_nr = topo


cdef inline bint _needs(Tensor t):
    return t is not None and (t._grad_fn is not None or t._requires_grad)


cdef inline bint _record(object out):
    # Only floating (and complex) results carry gradients.
    cdef str k = out.dtype.kind
    return k == 'f' or k == 'c'


cdef inline void _finish_node(Node node, object out, Device dev):
    node.seq_nr = rg_next_sequence_nr()
    # Input 0's metadata, inline (see Node): what add_input_metadata does,
    # minus the call.
    node._meta0 = _intern_meta(out, dev)
    node._num_inputs = 1
    if rg_anomaly_mode:
        node.extras().anomaly_trace = "".join(_traceback.format_stack()[:-1])


cdef inline void _mark_view(Tensor result, Tensor base, object out):
    # A view shares memory and the version counter with its base (the root
    # base, as in PyTorch: views of views point at the original).
    if base is None:
        return
    result._base = base._base if base._base is not None else base
    result._version_counter = base._version_counter


cdef inline void _maybe_mark_view(Tensor result, Tensor base, object out, object a):
    if base is None:
        return
    if type(out) is ndarray and out.base is not None and np.may_share_memory(out, a):
        _mark_view(result, base, out)


cdef object _call_forward_grad_slot(str op, tuple inputs, tuple outputs, object attrs):
    _forward_grad_slot(op, inputs, outputs, attrs)


# ---------------------------------------------------------------------------
# Kernels: array code that the `kernel:` expressions of derivatives.yaml call.

cdef object _norm_dims(object dim, int ndim):
    # torch's dim argument (None, int, or a sequence) as a NumPy axis.
    # A 0-d tensor accepts dim 0 / -1 (torch's rule); NumPy has no axis there.
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        seen = set()
        for d in dim:
            w = _wrap_dim(d, ndim)
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
        return None if ndim == 0 else tuple(sorted(seen))
    d = _wrap_dim(dim, ndim)
    return None if ndim == 0 else d


cdef object k_scale(object other, object alpha):
    # other * alpha for add/sub's alpha. Python scalars stay Python scalars
    # (NumPy's weak promotion: float32 + 1.5 * 2 stays float32).
    if type(other) is float or type(other) is int or type(other) is bool:
        return other * alpha
    return np.multiply(other, alpha)


cdef object k_sum(object a, object dim, bint keepdim, object dtype):
    # np.add.reduce is np.sum without its Python-level dispatch (~1.5 us a
    # call on small arrays); integer and bool inputs keep np.sum's promotion.
    if type(a) is ndarray and a.ndim > 0 and a.dtype.kind in "fc":
        return np.add.reduce(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=dtype)
    return np.sum(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=dtype)


cdef object k_mean(object a, object dim, bint keepdim, object dtype):
    # As np.mean (pairwise sum, then one division in the input's float type)
    # without its Python-level overhead; other dtypes go through np.mean.
    cdef Py_ssize_t count = 1
    if type(a) is ndarray and a.ndim > 0 and dtype is None and a.dtype.kind == "f" \
            and a.dtype.itemsize >= 4:
        axis = _norm_dims(dim, a.ndim)
        if axis is None:
            count = a.size
        elif isinstance(axis, tuple):
            for ax in axis:
                count *= a.shape[ax]
        else:
            count = a.shape[axis]
        return np.true_divide(np.add.reduce(a, axis=axis, keepdims=keepdim), count)
    return np.mean(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=dtype)


cdef inline object _shape_of(object a):
    return a.shape if type(a) is ndarray else np.shape(a)


cdef inline object _dtype_of(object a):
    return a.dtype if type(a) is ndarray else np.result_type(a)


cdef object k_transpose(object a, object d0, object d1):
    cdef int w0 = _wrap_dim(d0, a.ndim), w1 = _wrap_dim(d1, a.ndim)    # validates 0-d dims too
    if a.ndim == 0:
        return a
    return np.swapaxes(a, w0, w1)


cdef object k_permute(object a, object dims):
    if len(dims) != a.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
            f"of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, a.ndim) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(a, wrapped)


cdef object k_reshape(object a, object shape):
    try:
        return np.reshape(a, shape)
    except ValueError:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {a.size}") from None


cdef object k_view(object a, object shape):
    out = k_reshape(a, shape)
    if out.size and not np.may_share_memory(out, a):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return out


cdef object k_expand(object a, object shape):
    # torch's expand: -1 keeps a dimension; new leading dimensions may be added.
    shape = tuple(shape)
    cdef int lead = len(shape) - a.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({a.ndim})")
    target = tuple(a.shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(shape))
    try:
        return np.broadcast_to(a, target)
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor must match the existing size at non-singleton "
            f"dimensions: cannot expand shape {tuple(a.shape)} to {shape}") from None


cdef object k_broadcast_to(object a, object shape):
    try:
        return np.broadcast_to(a, tuple(shape))
    except ValueError:
        raise RuntimeError(f"cannot broadcast shape {tuple(a.shape)} to {tuple(shape)}") from None


cdef object k_matmul(object a, object b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{np.ndim(a)}D and {np.ndim(b)}D")
    try:
        return np.matmul(a, b)
    except ValueError as exc:
        raise RuntimeError(f"matmul: shapes {np.shape(a)} and {np.shape(b)} cannot be multiplied ({exc})") from None


cdef object k_sigmoid(object a):
    # Stable for large |a|: exp never overflows.
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(np.result_type(a, np.float16), copy=False)


cdef object k_relu(object a):
    return np.maximum(a, 0).astype(np.result_type(a), copy=False)


cdef object k_getitem(object a, object index):
    return a[_unwrap_index(index)]


cdef object k_index_backward(object g, object shape, object dtype, object index):
    # zeros on g's device: np.zeros_like dispatches to CuPy for a cupy g
    z = np.zeros(shape, dtype=dtype) if type(g) is ndarray or isinstance(g, np.generic) \
        else np.zeros_like(g, dtype=dtype, shape=shape)
    _add_at(z, _unwrap_index(index), g)
    return z


cdef object _add_at(object z, object index, object g):
    # Basic indexing never repeats an element: plain assignment-add is exact.
    # Advanced (integer array) indices may repeat: np.add.at accumulates them.
    if _is_basic_index(index):
        z[index] += g
    else:
        np.add.at(z, index, g)


cdef bint _is_basic_index(object index):
    if isinstance(index, tuple):
        for i in index:
            if not (i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer))):
                return False
        return True
    return index is None or index is Ellipsis or isinstance(index, (int, slice, np.integer))


cdef object k_to_dtype(object a, object dtype):
    return a.astype(dtype)


cdef object k_clone(object a):
    return a.copy()


cdef object rg_sum_to(object g, tuple shape):
    """Sum ``g`` down to ``shape`` (the inverse of broadcasting)."""
    if isinstance(g, Tensor):
        return _t_sum_to(<Tensor>g, shape)
    gshape = g.shape
    if gshape == shape:
        return g
    cdef int lead = len(gshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"sum_to: gradient of shape {gshape} cannot be reduced to {shape}")
    axes = list(range(lead))
    for i in range(len(shape)):
        if shape[i] == 1 and gshape[lead + i] != 1:
            axes.append(lead + i)
        elif shape[i] != gshape[lead + i]:
            raise RuntimeError(f"sum_to: gradient of shape {gshape} cannot be reduced to {shape}")
    if axes:
        g = g.sum(axis=tuple(axes), keepdims=True)
    if lead:
        g = g.reshape(shape)
    return g


cdef Tensor _t_sum_to(Tensor g, tuple shape):
    gshape = g._array.shape
    if gshape == shape:
        return g
    cdef int lead = len(gshape) - len(shape)
    axes = list(range(lead))
    for i in range(len(shape)):
        if shape[i] == 1 and gshape[lead + i] != 1:
            axes.append(lead + i)
    out = g
    if axes:
        out = _op_sum(out, tuple(axes), True, None)
    if lead:
        out = _op_reshape(out, shape)
    return out


cdef bint _expandable_to(tuple shape, tuple target):
    # Whether `shape` broadcasts to `target` (so a gradient of shape `target`
    # can be summed back to `shape`).
    cdef Py_ssize_t n = len(shape), m = len(target)
    if n > m:
        return False
    for i in range(n):
        s = shape[n - 1 - i]
        t = target[m - 1 - i]
        if s != t and s != 1:
            return False
    return True


def sum_to(g, shape):
    """Sum an array or tensor down to ``shape`` (the inverse of broadcasting)."""
    return rg_sum_to(g, tuple(shape))


def _expandable(shape, target):
    return _expandable_to(tuple(shape), tuple(target))


# --- elementwise ops (issue 3) ---------------------------------------------------

cdef inline object _float_type(object a):
    # the floating type a float op computes in: float inputs keep theirs,
    # integers and bools go to float64 (NumPy's rule for np.exp(int))
    return np.result_type(a, np.float16)


# c_n = 2^n / (1*3*...*(2n+1)): erf(x) = 2/sqrt(pi) exp(-x^2) x sum_n c_n x^(2n)
_ERF_SERIES = np.cumprod(np.concatenate([[1.0], 2.0 / (2.0 * np.arange(1, 80) + 1.0)]))


cdef object _erf_f64(object x):
    # erf in float64 without scipy, accurate to a few ulp:
    # |x| <= 3: erf(x) = 2/sqrt(pi) exp(-x^2) x sum_n c_n x^(2n), a series of
    #           positive terms (no cancellation, unlike Taylor's), by Horner's
    #           rule with in-place ufuncs (two passes a term);
    # 3 < |x| < 6: 1 - erfc(x), erfc by its continued fraction
    #           erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))));
    # |x| >= 6: +-1 (erfc(6) ~ 2e-17 is below float64's resolution of 1).
    ax = np.abs(x)
    if ax.size == 0:
        return ax
    amax = float(np.nanmax(ax)) if not np.isnan(ax).all() else 0.0
    if amax <= 3.0:
        out = _erf_series(ax, amax)
    else:
        out = np.ones_like(ax)
        small = ax <= 3.0
        if small.any():
            s = ax[small]
            out[small] = _erf_series(s, float(s.max()))
        mid = (ax > 3.0) & (ax < 6.0)
        if mid.any():
            m = ax[mid]
            t = m.copy()
            for k in range(60, 0, -1):
                t = m + (0.5 * k) / t
            out[mid] = 1.0 - np.exp(-m * m) / (1.7724538509055160 * t)
    out = np.where(np.isnan(ax), ax, out)
    return np.copysign(out, x)


cdef object _erf_series(object s, double smax):
    # terms until c_n smax^(2n) is negligible (the count measured to reach
    # full float64 accuracy at |x| = 3)
    cdef int n = min(int(2 * smax * smax + 30), 79)
    s2 = np.array(s * s, dtype=np.float64)     # an array (0-d arithmetic gives scalars)
    p = np.full(s2.shape, _ERF_SERIES[n])
    for k in range(n - 1, -1, -1):
        np.multiply(p, s2, out=p)
        np.add(p, _ERF_SERIES[k], out=p)
    np.negative(s2, out=s2)
    np.exp(s2, out=s2)
    p *= s2
    p *= s
    p *= 1.1283791670955126
    return p


cpdef object k_erf(object a):
    a = np.asarray(a)
    ft = _float_type(a)
    if _cupy_ndarray is not None and type(a) is _cupy_ndarray:
        import cupyx.scipy.special
        return cupyx.scipy.special.erf(a.astype(ft, copy=False))
    return np.asarray(_erf_f64(a.astype(np.float64))).astype(ft, copy=False)


cdef object k_rsqrt(object a):
    return np.reciprocal(np.sqrt(a))


cdef object k_reciprocal(object a):
    # np.reciprocal of an integer is integer division (1/2 == 0); torch's
    # reciprocal of an integer is a float, as 1 / a is.
    if np.asarray(a).dtype.kind in "iub":
        return np.true_divide(1.0, a)
    return np.reciprocal(a)


cdef object k_gelu(object a, object approximate):
    if approximate == "none":
        return a * 0.5 * (1.0 + k_erf(a * 0.7071067811865476))
    if approximate == "tanh":
        inner = 0.7978845608028654 * (a + 0.044715 * (a * a * a))
        return 0.5 * a * (1.0 + np.tanh(inner))
    raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")


cdef object k_silu(object a):
    return a * k_sigmoid(a)


cdef object k_softplus(object a, object beta, object threshold):
    # torch's formula: x where x*beta > threshold, else log1p(exp(x*beta))/beta
    # (the minimum keeps exp from overflowing where the other branch is taken)
    xb = a * beta
    return np.where(xb > threshold, a, np.log1p(np.exp(np.minimum(xb, threshold))) / beta) \
        .astype(_float_type(xb), copy=False)


cdef object k_clamp(object a, object lo, object hi):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    # torch's order: min(max(x, lo), hi), so lo > hi gives hi everywhere
    out = a if lo is None else np.maximum(a, lo)
    return out if hi is None else np.minimum(out, hi)


cdef object k_lerp(object a, object end, object weight):
    # torch's formula: exact at weight 0 and weight 1
    d = np.subtract(end, a)
    return np.where(np.abs(weight) < 0.5, a + weight * d, end - d * (1 - weight))


cdef object k_fill(object a, object value):
    v = np.asarray(value)
    if v.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{v.ndim} dimensions.")
    out = np.empty_like(a)
    out[...] = v
    return out
