# Shape and indexing ops written in terms of table ops: each is a
# few recorded primitives (reshape, permute, getitem, cat, where, gather), so
# their backward and double backward come from those. Part of _ops.pyx.
#
# Views: flatten/squeeze/unsqueeze go through reshape (a view whenever NumPy
# can reshape without copying, always for size-1 dims), narrow/split/chunk
# through basic getitem (always a view), movedim/swapaxes through
# permute/transpose (always a view); they share the base's version counter.

from retrograd.core._arg_checks cimport _wrap_dim, _int_arg, _check_int_list, _type_name


SHAPE_COMPOSITES = (
    "flatten", "squeeze", "unsqueeze", "swapaxes", "swapdims", "movedim", "moveaxis",
    "concatenate", "concat", "split", "chunk", "flip", "roll", "repeat", "tile", "pad",
    "index_select", "masked_fill", "take_along_dim", "narrow", "tril", "triu", "unbind",
)


cdef tuple _dims_tuple(object dims):
    if isinstance(dims, (list, tuple)):
        return tuple(dims)
    return (dims,)


def flatten(input, start_dim=0, end_dim=-1):
    """torch.flatten: merge dims start_dim..end_dim (a view when possible)."""
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    cdef int nd = len(shape)
    cdef int s = _wrap_dim(start_dim, nd), e = _wrap_dim(end_dim, nd)     # checked for 0-d too
    if nd == 0:
        return _op_reshape(t, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return t
    n = 1
    for x in shape[s:e + 1]:
        n *= x
    return _op_reshape(t, shape[:s] + (n,) + shape[e + 1:])


def squeeze(input, dim=None):
    """torch.squeeze: drop size-1 dims (all, or those of `dim`, an int or a
    tuple; a listed dim whose size is not 1 is kept, as in torch)."""
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    cdef int nd = len(shape)
    if dim is None:
        dims = {i for i in range(nd) if shape[i] == 1}
    else:
        dims = {_wrap_dim(d, nd) for d in _dims_tuple(dim)}
    return _op_reshape(t, tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1)))


def unsqueeze(input, dim):
    """torch.unsqueeze: a size-1 dim inserted at `dim` (a view)."""
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    cdef int d = _wrap_dim(dim, len(shape) + 1)
    return _op_reshape(t, shape[:d] + (1,) + shape[d:])


def swapaxes(input, axis0, axis1):
    """torch.swapaxes (= transpose; a view)."""
    return _op_transpose(input, axis0, axis1)


def swapdims(input, dim0, dim1):
    """torch.swapdims (= transpose; a view)."""
    return _op_transpose(input, dim0, dim1)


def movedim(input, source, destination):
    """torch.movedim: dims `source` moved to `destination` (a view)."""
    cdef Tensor t = _as_tensor_arg(input)
    cdef int nd = t._array.ndim
    src = _dims_tuple(source)
    dst = _dims_tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) "
                           f"should contain the same number of dims as destination ({list(dst)} dims)")
    ws = [_wrap_dim(d, nd) for d in src]
    wd = [_wrap_dim(d, nd) for d in dst]
    if len(set(ws)) != len(ws):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(wd)) != len(wd):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    if nd == 0:
        return _op_permute(t, ())
    order = [None] * nd
    for s, d in zip(ws, wd):
        order[d] = s
    rest = iter([i for i in range(nd) if i not in ws])
    order = [o if o is not None else next(rest) for o in order]
    return _op_permute(t, tuple(order))


moveaxis = movedim


def concatenate(tensors, dim=0, *, axis=None):
    """torch.concatenate (alias of cat; `axis=` as torch accepts)."""
    return _op_cat(tensors, dim if axis is None else axis)


def concat(tensors, dim=0):
    """torch.concat (alias of cat)."""
    return _op_cat(tensors, dim)


def narrow(input, dim, start, length):
    """torch.narrow: `length` elements of `dim` from `start` (a view)."""
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    if len(shape) == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    cdef int d = _wrap_dim(dim, len(shape))
    size = shape[d]
    start = _int_arg(start, "start", "narrow")
    length = _int_arg(length, "length", "narrow")
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _op_getitem(t, (slice(None),) * d + (slice(start, start + length),))


def split(tensor, split_size_or_sections, dim=0):
    """torch.split: pieces of `split_size` (the last may be smaller), or of the
    listed sizes; a tuple of views."""
    cdef Tensor t = _as_tensor_arg(tensor)
    shape = t._array.shape
    if len(shape) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    cdef int d = _wrap_dim(dim, len(shape))
    size = shape[d]
    if isinstance(split_size_or_sections, Tensor) and (<Tensor>split_size_or_sections)._array.ndim == 0:
        split_size_or_sections = _int_arg(split_size_or_sections, "split_size", "split")
    if isinstance(split_size_or_sections, (int, np.integer)) and not isinstance(split_size_or_sections, bool):
        step = _int_arg(split_size_or_sections, "split_size", "split")
        if step < 0 or (step == 0 and size > 0):
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if size == 0:
            sizes = [0]
        else:
            sizes = [step] * (size // step) + ([size % step] if size % step else [])
    elif isinstance(split_size_or_sections, (list, tuple)):
        sizes = [_int_arg(s, "split_size", "split_with_sizes") for s in split_size_or_sections]
        if _builtins.sum(sizes) != size or _builtins.any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input "
                               f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    else:
        raise TypeError(f"split(): argument 'split_size' must be int or a list of ints, not "
                        f"{_type_name(split_size_or_sections)}")
    out = []
    start = 0
    lead = (slice(None),) * d
    for s in sizes:
        out.append(_op_getitem(t, lead + (slice(start, start + s),)))
        start += s
    if rg_tls_grad_enabled:
        # One op with several view outputs in torch: none of them may be
        # modified in place (Note [View creation meta]).
        _mark_multi_output_views(out, "Split" if isinstance(split_size_or_sections, (int, np.integer))
                                 else "SplitWithSizes")
    return tuple(out)


cdef _mark_multi_output_views(list outs, str label):
    cdef Tensor piece
    cdef Py_ssize_t i
    for i in range(len(outs)):
        piece = <Tensor>outs[i]
        if piece._base is not None and piece._name is not _CM_INFERENCE_MODE:
            piece._name = (_CM_MULTI_OUTPUT_NODE, label, i)


# unbind is a composite, not a table entry: the generator's entries have a
# fixed number of results, and unbind has as many as the size of `dim`.
# Each piece is a basic-getitem view (its backward is getitem's), marked as
# one of several views of one op, as torch's UnbindBackward0 outputs are.
def unbind(input, dim=0):
    """torch.unbind: the slices of ``input`` along ``dim``, each without
    that dim, as a tuple of views."""
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    if len(shape) == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions; unbind needs at least "
                         "a 1-dimensional tensor")
    cdef int d = _wrap_dim(dim, len(shape))
    lead = (slice(None),) * d
    out = [_op_getitem(t, lead + (i,)) for i in range(shape[d])]
    if rg_tls_grad_enabled:
        _mark_multi_output_views(out, "Unbind")
    return tuple(out)


def chunk(input, chunks, dim=0):
    """torch.chunk: at most `chunks` pieces of equal size (ceil), the last
    possibly smaller; views."""
    cdef Tensor t = _as_tensor_arg(input)
    chunks = _int_arg(chunks, "chunks", "chunk")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    if t._array.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    size = t._array.shape[_wrap_dim(dim, t._array.ndim)]
    if size == 0:
        # torch: an empty dim gives `chunks` empty pieces (split would give one)
        return split(t, [0] * chunks, dim)
    step = -(-size // chunks)
    return split(t, step, dim)


def flip(input, dims):
    """torch.flip: reverse the order along `dims` (a copy, as torch's)."""
    cdef Tensor t = _as_tensor_arg(input)
    cdef int nd = t._array.ndim
    _check_int_list(_dims_tuple(dims), "dims", "flip")
    ws = {_wrap_dim(d, nd) for d in _dims_tuple(dims)}
    if nd == 0 or not ws:
        return _op_clone(t)
    index = tuple(slice(None, None, -1) if i in ws else slice(None) for i in range(nd))
    return _op_clone(_op_getitem(t, index))


def roll(input, shifts, dims=None):
    """torch.roll: shift elements along dims cyclically (flattened when dims
    is None)."""
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    sh = _dims_tuple(shifts)
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"roll: shifts must be a single int when dims is not given, got {shifts}")
        return _op_reshape(roll(flatten(t), sh, 0), shape)
    ds = _dims_tuple(dims)
    if len(sh) != len(ds):
        raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(sh)}, dims: {len(ds)}")
    out = t
    for s, d in zip(sh, ds):
        w = _wrap_dim(d, len(shape))
        n = shape[w] if shape else 1
        s = _int_arg(s, "shifts", "roll")
        if n == 0 or s % n == 0 or not shape:
            continue
        # one integer-array index per dim (a permutation: no repeats, so its
        # backward is a plain scatter)
        idx = np.roll(np.arange(n), s)
        out = _op_getitem(out, (slice(None),) * w + (idx,))
    return _op_clone(out) if out is t else out


def repeat(input, *sizes):
    """torch's Tensor.repeat: tile the tensor sizes[i] times along dim i
    (leading sizes add new dims)."""
    cdef Tensor t = _as_tensor_arg(input)
    reps = _shape_args(sizes)
    _check_int_list(reps, "repeats", "repeat")
    reps = tuple(_int_arg(r, "repeats", "repeat") for r in reps)
    shape = t._array.shape
    if len(reps) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    if _builtins.any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(reps)}")
    shape = (1,) * (len(reps) - len(shape)) + tuple(shape)
    inter = []
    big = []
    final = []
    for r, s in zip(reps, shape):
        inter += [1, s]
        big += [r, s]
        final.append(r * s)
    # (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...), then merged:
    # one copy, and the backward sums the repeats (expand's sum_to).
    x = _op_reshape(t, tuple(inter))
    x = _op_expand(x, tuple(big))
    return _op_reshape(x, tuple(final))


def tile(input, dims):
    """torch.tile: repeat, with missing leading dims taken as 1."""
    cdef Tensor t = _as_tensor_arg(input)
    dims = tuple(_dims_tuple(dims))
    nd = t._array.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(t, dims)


_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: `pad` lists (left, right) pairs from the LAST
    dim backwards. Modes 'constant' (value, default 0; negative pads crop),
    'reflect', 'replicate' and 'circular'."""
    cdef Tensor t = _as_tensor_arg(input)
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' must be a tuple of ints, not {_type_name(pad)}")
    pad = tuple(_int_arg(p, "pad", "pad") for p in pad)
    nd = t._array.ndim
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension {nd}")
    out = t
    if mode == "constant":
        fill = 0 if value is None else value
        for i in range(len(pad) // 2):
            d = nd - 1 - i
            l, r = pad[2 * i], pad[2 * i + 1]
            if l < 0 or r < 0:
                size = out._array.shape[d]
                cl, cr = _builtins.max(-l, 0), _builtins.max(-r, 0)
                if cl + cr > size:
                    raise RuntimeError(f"pad: negative padding ({l}, {r}) removes more than dim {d}'s "
                                       f"size {size}")
                out = narrow(out, d, cl, size - cl - cr)
                l, r = _builtins.max(l, 0), _builtins.max(r, 0)
            if l or r:
                parts = []
                sh = list(out._array.shape)
                if l:
                    sh[d] = l
                    parts.append(np.full_like(out._array, fill, shape=tuple(sh)))
                parts.append(out)
                if r:
                    sh[d] = r
                    parts.append(np.full_like(out._array, fill, shape=tuple(sh)))
                out = _op_cat(parts, d)
        return _op_clone(out) if out is t else out
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"pad: mode {mode!r} is not supported; use 'constant', 'reflect', "
                                  "'replicate' or 'circular'")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        l, r = pad[2 * i], pad[2 * i + 1]
        n = out._array.shape[d]
        if mode == "reflect" and (l >= n or r >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({l}, {r}) at dimension {d} of input "
                               f"{list(out._array.shape)}")
        if l < 0 or r < 0:
            raise RuntimeError(f"pad: negative padding is only supported in 'constant' mode, got ({l}, {r})")
        if n == 0 and (l or r):
            raise RuntimeError(f"pad: cannot pad an empty dim {d} in mode {mode!r}")
        if l or r:
            # which source element each output position reads: an integer
            # index (repeats accumulate in the backward)
            idx = np.pad(np.arange(n), (l, r), mode=_PAD_MODES[mode])
            out = _op_getitem(out, (slice(None),) * d + (idx,))
    return _op_clone(out) if out is t else out


def index_select(input, dim, index):
    """torch.index_select: the entries of `index` (a vector) along `dim`."""
    cdef Tensor t = _as_tensor_arg(input)
    idx = (<Tensor>index)._array if isinstance(index, Tensor) else \
        _checked_asarray(index, "index_select(): argument 'index'")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError(f"index_select(): Expected dtype int32 or int64 for index, got {idx.dtype}")
    nd = t._array.ndim
    d = _wrap_dim(dim, nd)
    idx = idx.reshape(-1)
    if nd and t._array.shape[d] == 0 and idx.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive (the input's dim "
                           f"{d} is empty, so no index is valid)")
    if nd == 0:
        return _op_getitem(_op_reshape(t, (1,)), (idx,))
    return _op_getitem(t, (slice(None),) * d + (idx,))


def masked_fill(input, mask, value):
    """torch.masked_fill: `value` (a scalar or a 0-d tensor, which then gets
    a gradient) where the boolean `mask` (broadcast to input) is True."""
    cdef Tensor t = _as_tensor_arg(input)
    m = (<Tensor>mask)._array if isinstance(mask, Tensor) else \
        _checked_asarray(mask, "masked_fill(): argument 'mask'")
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {m.dtype}")
    if np.broadcast_shapes(m.shape, t._array.shape) != t._array.shape:
        raise RuntimeError(f"masked_fill: the shape of the mask {list(m.shape)} must be broadcastable "
                           f"to the shape of the input {list(t._array.shape)}")
    if isinstance(value, Tensor):
        if (<Tensor>value)._array.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                               f"with {(<Tensor>value)._array.ndim} dimension(s).")
        v = value if (<Tensor>value)._array.dtype == t._array.dtype else value.to(t._array.dtype)
    else:
        v = np.asarray(value, dtype=t._array.dtype)    # the input's dtype, as torch
    return _op_where(m, v, t)


def take_along_dim(input, indices, dim=None):
    """torch.take_along_dim: gather with input and indices broadcast over the
    other dims (flattened input when dim is None)."""
    cdef Tensor t = _as_tensor_arg(input)
    idx = (<Tensor>indices)._array if isinstance(indices, Tensor) else \
        _checked_asarray(indices, "take_along_dim(): argument 'indices'")
    if dim is None:
        return _op_gather(flatten(t), 0, idx.reshape(-1))
    nd = t._array.ndim
    if idx.ndim != nd:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {nd} dimensions for input, and {idx.ndim} "
                           "dimensions for indices")
    d = _wrap_dim(dim, nd)
    ts = list(t._array.shape)
    isz = list(idx.shape)
    ts[d] = isz[d] = 1
    b = list(np.broadcast_shapes(tuple(ts), tuple(isz)))
    tb = b[:]
    tb[d] = t._array.shape[d]
    ib = b[:]
    ib[d] = idx.shape[d]
    x = t if tuple(tb) == t._array.shape else _op_expand(t, tuple(tb))
    return _op_gather(x, d, np.broadcast_to(idx, tuple(ib)))


cdef object _tri(str op, object input, object diagonal, bint lower):
    cdef Tensor t = _as_tensor_arg(input)
    if t._array.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    n, m = t._array.shape[-2:]
    k = _int_arg(diagonal, "diagonal", op)
    keep = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    # where, not a multiply: inf/nan above (below) the diagonal become 0
    return _op_where(keep, t, np.zeros((), dtype=t._array.dtype))


def tril(input, diagonal=0):
    """torch.tril: the lower triangle (on and below diagonal k), zeros above."""
    return _tri("tril", input, diagonal, True)


def triu(input, diagonal=0):
    """torch.triu: the upper triangle (on and above diagonal k), zeros below."""
    return _tri("triu", input, diagonal, False)
