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
        _accumulate(z, index, g)


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


# --- shape and indexing (issue 3) ---
# Python's builtins by their full name: the table's ops (sum, max, min, abs,
# round, ...) are module-level functions of this module and shadow them.
import builtins as _bi

cdef object k_cat(list arrs, object dim):
    for i, a in enumerate(arrs):
        if np.ndim(a) == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    cdef int d = _wrap_dim(dim, np.ndim(arrs[0]))
    try:
        return np.concatenate(arrs, axis=d)
    except ValueError as exc:
        raise RuntimeError(f"cat(): Sizes of tensors must match except in dimension {d}: {exc}. "
                           "Reshape or pad the inputs first.") from None


cdef object k_stack(list arrs, object dim):
    shape0 = np.shape(arrs[0])
    for i, a in enumerate(arrs):
        if np.shape(a) != shape0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape0)} at "
                               f"entry 0 and {list(np.shape(a))} at entry {i}")
    cdef int d = _wrap_dim(dim, len(shape0) + 1)
    return np.stack(arrs, axis=d)


cdef object k_diagonal(object a, object offset, object dim1, object dim2):
    # A writable view (np.diagonal's is read-only): the diagonal of the two
    # dims moved last, as one axis whose stride is the sum of theirs.
    cdef int nd = np.ndim(a)
    if nd < 2:
        raise RuntimeError(f"diagonal(): expected a tensor with at least 2 dimensions, got {nd}")
    cdef int d1 = _wrap_dim(dim1, nd), d2 = _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    cdef Py_ssize_t off = offset
    b = np.moveaxis(a, (d1, d2), (-2, -1))
    b = b[..., :, off:] if off >= 0 else b[..., -off:, :]
    n = _bi.max(_bi.min(b.shape[-2], b.shape[-1]), 0)
    if type(b) is ndarray:
        return np.lib.stride_tricks.as_strided(
            b, b.shape[:-2] + (n,), b.strides[:-2] + (b.strides[-2] + b.strides[-1],))
    return np.diagonal(a, off, d1, d2)                     # CuPy: its own diagonal view


cdef object k_diagonal_backward(object g, object shape, object dtype, object offset, object dim1,
                                object dim2):
    z = np.zeros(shape, dtype=dtype) if type(g) is ndarray or isinstance(g, np.generic) \
        else np.zeros_like(g, dtype=dtype, shape=shape)
    k_diagonal(z, offset, dim1, dim2)[...] = g
    return z


cdef tuple _scatter_coords(object index, int d):
    # The full coordinates of each position of `index` along dim d (the
    # index's values) and the other dims (their positions): an advanced index.
    cdef int nd = index.ndim
    coords = []
    for i in range(nd):
        if i == d:
            coords.append(index)
        else:
            sh = [1] * nd
            sh[i] = index.shape[i]
            coords.append(np.arange(index.shape[i]).reshape(sh))
    return tuple(coords)


cdef object _check_gather_index(str op, object a, object index, int d, object other=None):
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")
    cdef int nd = np.ndim(a)
    if index.ndim != _bi.max(nd, 1) and not (nd == 0 and index.ndim == 0):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor "
                           f"({op}: index has {index.ndim}, input {nd})")
    for i in range(index.ndim):
        if nd and i != d and index.shape[i] > a.shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} "
                               f"to be smaller than self {list(a.shape)} apart from dimension {d}")
        if other is not None and index.shape[i] > np.shape(other)[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} "
                               f"to be smaller than src {list(np.shape(other))}")
    if index.size and nd:
        lo, hi = index.min(), index.max()
        if lo < -a.shape[d] or hi >= a.shape[d]:
            raise RuntimeError(f"{op}(): index {hi if hi >= a.shape[d] else lo} is out of bounds for "
                               f"dimension {d} with size {a.shape[d]}")


cdef object k_gather(object a, object dim, object index):
    index = _ensure_array(np.asarray(index)) if not hasattr(index, "ndim") else index
    cdef int nd = np.ndim(a)
    cdef int d = _wrap_dim(dim, nd)
    _check_gather_index("gather", a, index, d)
    if nd == 0:
        return np.asarray(a)[()] * np.ones(index.shape, dtype=np.result_type(a))
    return a[_scatter_coords(index, d)]


cdef object k_scatter_add(object a, object dim, object index, object src):
    index = _ensure_array(np.asarray(index)) if not hasattr(index, "ndim") else index
    cdef int nd = np.ndim(a)
    cdef int d = _wrap_dim(dim, nd)
    _check_gather_index("scatter_add", a, index, d, src if np.ndim(src) else None)
    out = np.array(a, copy=True, dtype=np.result_type(a)) if type(a) is not ndarray or nd == 0 \
        else a.copy()
    if index.size == 0 or nd == 0:
        return out
    part = src[tuple(slice(0, s) for s in index.shape)] if np.ndim(src) else \
        np.broadcast_to(src, index.shape)
    coords = _scatter_coords(index, d)
    if type(out) is ndarray and out.dtype.kind == "f":
        # np.add.at is slow; the flat positions and one bincount are not.
        # `out` is a fresh copy: a pass over all of it costs no more.
        coords = tuple(np.where(c < 0, c + a.shape[i], c) if i == d else c
                       for i, c in enumerate(coords))
        lin = np.ravel_multi_index(np.broadcast_arrays(*coords), out.shape).ravel()
        flat = out.reshape(-1)
        flat += np.bincount(lin, weights=np.asarray(part, dtype=np.float64).ravel(),
                            minlength=out.size)
        return out
    np.add.at(out, coords, part)
    return out


cdef object _accumulate(object z, object index, object g):
    # z[index] += g where `index` (advanced) may repeat positions: np.add.at's
    # semantics, without its cost (np.add.at is ~10-50x slower than the
    # vectorized paths below).
    if type(z) is not ndarray or z.size == 0:
        np.add.at(z, index, g)
        return
    comps = index if isinstance(index, tuple) else (index,)
    adv = []
    for i, c in enumerate(comps):
        if not (c is None or c is Ellipsis or isinstance(c, (int, slice, np.integer))):
            adv.append(i)
    # Boolean masks select each position at most once: plain += is exact.
    if _bi.all(isinstance(comps[i], ndarray) and comps[i].dtype == np.bool_ for i in adv):
        z[index] += g
        return
    # One integer array on one axis, every other component a full slice:
    # sort the positions and sum runs of equal ones (a segment sum).
    if len(adv) == 1 and z.dtype.kind in "fc":
        full = True
        for i, c in enumerate(comps):
            if i != adv[0] and not (c is Ellipsis or (isinstance(c, slice) and c == slice(None))):
                full = False
        if full and _bi.sum(1 for c in comps if c is Ellipsis) <= 1:
            k = adv[0]
            if Ellipsis in comps[:k]:
                k += z.ndim - len(comps)          # the dims the Ellipsis stands for, minus itself
            arr = np.asarray(comps[adv[0]])
            if arr.dtype.kind in "iu":
                _segment_add(z, k, arr, g)
                return
    # Integer arrays on the leading dims (x[rows, cols], as in picking the
    # target logits): their flat positions are one integer array on one axis.
    if len(adv) == len(comps) > 1 and z.dtype.kind in "fc" and z.flags.c_contiguous:
        arrs = [np.asarray(c) for c in comps]
        if _bi.all(a.dtype.kind in "iu" for a in arrs):
            lead = z.shape[:len(arrs)]
            arrs = [np.where(a < 0, a + lead[i], a) for i, a in enumerate(arrs)]
            lin = np.ravel_multi_index(tuple(np.broadcast_arrays(*arrs)), lead)
            _segment_add(z.reshape((-1,) + z.shape[len(arrs):]), 0, lin, g)
            return
    np.add.at(z, index, g)


cdef void _segment_add(object z, int k, object arr, object g):
    # z[(:,)*k + (arr,)] += g, repeats accumulated. No repeats (a
    # permutation: roll, pad): a plain fancy +=. Repeats: one np.bincount over
    # (position, column) pairs, ~2x faster than np.add.at on large inputs;
    # small ones stay with np.add.at (its fixed cost is lower).
    cdef Py_ssize_t n = z.shape[k], r = 1
    flat = arr.ravel().astype(np.intp, copy=False)
    if flat.size == 0:
        return
    flat = np.where(flat < 0, flat + n, flat)
    rest = z.shape[:k] + z.shape[k + 1:]
    for s in rest:
        r *= s
    g = np.broadcast_to(g, z.shape[:k] + arr.shape + z.shape[k + 1:])
    gm = np.moveaxis(g, tuple(range(k, k + arr.ndim)), tuple(range(arr.ndim))).reshape((flat.size,) + rest)
    zm = np.moveaxis(z, k, 0)                          # a view: writes land in z
    if np.bincount(flat, minlength=n).max() <= 1:
        zm[flat] += gm
    elif z.dtype.kind == "f" and flat.size * r > 65536:
        lin = flat if r == 1 else (flat[:, None] * r + np.arange(r)).ravel()
        acc = np.bincount(lin, weights=gm.reshape(-1).astype(np.float64, copy=False), minlength=n * r)
        zm += acc.reshape(zm.shape)
    else:
        np.add.at(zm, flat, gm)
