# Shape and indexing ops that make copies (flip, roll, repeat, tile, pad,
# index_select, masked_fill, take_along_dim, tril, triu), written in terms of
# table ops as those of _composites_shape.pxi (which lists every shape
# composite in SHAPE_COMPOSITES). Part of _ops.pyx.

from retrograd.core._arg_checks cimport _wrap_dim, _int_arg, _check_int_list, _type_name


def flip(input, dims):
    """Reverse the order of the elements along ``dims``: a copy, as torch's.

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    dims : int or sequence of int
        The dimension(s) to reverse.

    Returns
    -------
    Tensor
        A new tensor.

    Raises
    ------
    IndexError
        If a dimension is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([[1, 2], [3, 4]])
    >>> rg.flip(x, 0)
    tensor([[3, 4],
            [1, 2]])
    >>> rg.flip(x, (0, 1))
    tensor([[4, 3],
            [2, 1]])
    """
    cdef Tensor t = _as_tensor_arg(input)
    cdef int nd = t._array.ndim
    _check_int_list(_dims_tuple(dims), "dims", "flip")
    ws = set()
    for d in _dims_tuple(dims):
        w = _wrap_dim(d, nd)
        if w in ws:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        ws.add(w)
    if nd == 0 or not ws:
        return _op_clone(t)
    index = tuple(slice(None, None, -1) if i in ws else slice(None) for i in range(nd))
    return _op_clone(_op_getitem(t, index))


def roll(input, shifts, dims=None):
    """Shift the elements cyclically along ``dims``; those pushed off one end come back at the other.

    Without ``dims`` the tensor is flattened, rolled and reshaped back.

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    shifts : int or sequence of int
        The shift for each dimension of ``dims`` (positive moves toward
        higher indices).
    dims : int or sequence of int, optional
        The dimensions to roll (default: the flattened tensor).

    Returns
    -------
    Tensor
        A new tensor.

    Raises
    ------
    RuntimeError
        If ``shifts`` and ``dims`` differ in length.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.roll(rg.tensor([1, 2, 3, 4]), 1)
    tensor([4, 1, 2, 3])
    >>> rg.roll(rg.tensor([[1, 2], [3, 4]]), -1, dims=1)
    tensor([[2, 1],
            [4, 3]])
    """
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
        if not shape:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        w = _wrap_dim(d, len(shape))
        n = shape[w] if shape else 1
        s = _int_arg(s, "shifts", "roll")
        if n == 0 or s % n == 0 or not shape:
            continue
        # one integer-array index per dim (a permutation: no repeats, so its
        # backward is a plain scatter)
        idx = _shape_constant(np.roll(np.arange(n), s), t)
        out = _op_getitem(out, (slice(None),) * w + (idx,))
    return _op_clone(out) if out is t else out


def repeat(input, *sizes):
    """Tile the tensor ``sizes[i]`` times along each dimension ``i``: torch's ``Tensor.repeat``.

    Extra leading sizes add new dimensions. Unlike :func:`retrograd.expand`
    this copies the data. (NumPy's ``repeat``, which repeats each element,
    is ``repeat_interleave`` in torch.)

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    *sizes : int or sequence of int
        The number of copies along each dimension; at least as many as the
        input has dimensions.

    Returns
    -------
    Tensor
        A new tensor.

    Raises
    ------
    RuntimeError
        For fewer sizes than dimensions, or negative sizes.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1, 2])
    >>> rg.repeat(x, 2)
    tensor([1, 2, 1, 2])
    >>> rg.repeat(x, 2, 1)
    tensor([[1, 2],
            [1, 2]])
    """
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
    """Tile the tensor ``dims[i]`` times along each dimension ``i``; missing leading counts are 1.

    Like :func:`retrograd.repeat`, but ``dims`` may be shorter than the
    number of dimensions (NumPy's ``tile``).

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    dims : sequence of int
        The number of copies along each (trailing) dimension.

    Returns
    -------
    Tensor
        A new tensor.

    Raises
    ------
    RuntimeError
        For negative counts.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.tile(rg.tensor([[1, 2]]), (2,))
    tensor([[1, 2, 1, 2]])
    """
    cdef Tensor t = _as_tensor_arg(input)
    dims = tuple(_dims_tuple(dims))
    nd = t._array.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(t, dims)


_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input, pad, mode="constant", value=None):
    """Pad a tensor: torch's ``nn.functional.pad``.

    ``pad`` lists (before, after) amounts from the *last* dimension backwards:
    ``(left, right)`` pads the last dimension, ``(left, right, top, bottom)``
    the last two. Modes: ``'constant'`` (``value``, default 0; negative
    amounts crop), ``'reflect'`` (mirror without repeating the edge),
    ``'replicate'`` (repeat the edge) and ``'circular'`` (wrap around).

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    pad : sequence of int
        An even number of amounts, at most two per dimension.
    mode : str, optional
        ``'constant'`` (default), ``'reflect'``, ``'replicate'`` or
        ``'circular'``.
    value : number, optional
        The fill value of ``'constant'`` mode (default 0).

    Returns
    -------
    Tensor
        The padded tensor.

    Raises
    ------
    RuntimeError
        For an odd or too long ``pad``, a ``value`` with another mode, or
        amounts the mode cannot do.
    NotImplementedError
        For an unknown mode.
    TypeError
        If ``pad`` is not a sequence of ints.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([[1.0, 2.0, 3.0]])
    >>> rg.pad(x, (1, 2))
    tensor([[0., 1., 2., 3., 0., 0.]])
    >>> rg.pad(x, (2, 1), mode='reflect')
    tensor([[3., 2., 1., 2., 3., 2.]])
    """
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
                    parts.append(_shape_constant(np.full_like(out._array, fill, shape=tuple(sh)), out))
                parts.append(out)
                if r:
                    sh[d] = r
                    parts.append(_shape_constant(np.full_like(out._array, fill, shape=tuple(sh)), out))
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
            idx = _shape_constant(np.pad(np.arange(n), (l, r), mode=_PAD_MODES[mode]), out)
            out = _op_getitem(out, (slice(None),) * d + (idx,))
    return _op_clone(out) if out is t else out


def index_select(input, dim, index):
    """The entries at positions ``index`` along ``dim``: a copy.

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    dim : int
        The dimension to index.
    index : Tensor
        A 1-d int64 (or int32) tensor of positions; they may repeat.

    Returns
    -------
    Tensor
        A new tensor whose size along ``dim`` is ``len(index)``.

    Raises
    ------
    IndexError
        If ``index`` is not 1-d, or a position is out of range.
    RuntimeError
        If ``index`` is not an integer tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([[1, 2], [3, 4], [5, 6]])
    >>> rg.index_select(x, 0, rg.tensor([2, 0]))
    tensor([[5, 6],
            [1, 2]])
    """
    cdef Tensor t = _as_tensor_arg(input)
    idx = (<Tensor>index)._array if isinstance(index, Tensor) else \
        _index_array(index, "index_select(): argument 'index'")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError(f"index_select(): Expected dtype int32 or int64 for index, got {idx.dtype}")
    nd = t._array.ndim
    d = _wrap_dim(dim, nd)
    if nd == 0 and idx.size > 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    n = t._array.shape[d] if nd else 1
    flat = idx.reshape(-1)
    if nd and n == 0 and flat.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive (the input's dim "
                           f"{d} is empty, so no index is valid)")
    if type(flat) is ndarray and flat.size:
        # (NumPy would read a negative position from the end; a device
        # array is not read on the host: a positive one out of range still
        # raises there)
        bad = (flat < 0) | (flat >= n)
        if bad.any():
            # (torch's classes: IndexError along dim 0, RuntimeError along another)
            raise (IndexError if d == 0 else RuntimeError)(
                f"index out of range in self: index_select() got index {int(flat[bad][0])} for "
                f"dimension {d} of size {n}; positions must lie in [0, {n - 1}]")
    if _trace_slot != NULL and isinstance(index, Tensor):
        # rg.compile: index by the index tensor, so that the program reads
        # each call's positions (the array would be baked in). The check
        # above runs at trace time only: a later call's negative position
        # is moved out of range, so that indexing raises IndexError for it.
        ix = index if idx.ndim == 1 else _op_reshape(index, (-1,))
        flat = _op_where(_op_lt(ix, 0), n, ix)
    if nd == 0:
        return _op_getitem(_op_reshape(t, (1,)), (flat,))
    return _op_getitem(t, (slice(None),) * d + (flat,))


def masked_fill(input, mask, value):
    """``input`` with ``value`` where the bool ``mask`` is True: a copy.

    ``mask`` broadcasts to ``input``'s shape. ``value`` is a number or a 0-d
    tensor; as a tensor that requires grad, it gets the sum of the gradient
    over the masked positions. ``input`` gets the gradient elsewhere.

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    mask : Tensor
        A bool tensor, broadcastable to ``input``.
    value : number or Tensor
        The fill value.

    Returns
    -------
    Tensor
        A new tensor.

    Raises
    ------
    RuntimeError
        If ``mask`` is not bool or does not broadcast, or ``value`` is a
        tensor with dimensions.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, -2.0, 3.0])
    >>> rg.masked_fill(x, x < 0, 0.0)
    tensor([1., 0., 3.])
    """
    cdef Tensor t = _as_tensor_arg(input)
    m = (<Tensor>mask)._array if isinstance(mask, Tensor) else \
        _index_array(mask, "masked_fill(): argument 'mask'")
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {m.dtype}")
    try:
        np.broadcast_shapes(m.shape, t._array.shape)     # out of place, the input broadcasts too (torch)
        fits = True
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"masked_fill: the shape of the mask {list(m.shape)} must be broadcastable "
                           f"to the shape of the input {list(t._array.shape)}")
    if isinstance(value, Tensor):
        if (<Tensor>value)._array.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                               f"with {(<Tensor>value)._array.ndim} dimension(s).")
        v = value if (<Tensor>value)._array.dtype == t._array.dtype else value.to(t._array.dtype)
    else:
        v = _fill_scalar(value, t._array.dtype)
    # (the mask tensor itself where there is one: a compiled program then
    # reads each call's mask)
    return _op_where(mask if isinstance(mask, Tensor) else m, v, t)


cdef object _fill_scalar(object value, object dtype):
    # A fill value in the input's dtype, as torch's: a Python scalar of its
    # kind, which where keeps in that dtype (NumPy's rule for Python
    # scalars) and which a compiled program holds as a plain value, not an
    # array constant. What Python cannot convert, NumPy casts.
    kind = dtype.kind
    if value is None or isinstance(value, (str, bytes, list, tuple)):
        raise TypeError(f"masked_fill(): argument 'value' must be a number or a 0-d Tensor, not "
                        f"{type(value).__name__}")
    try:
        return bool(value) if kind == "b" else int(value) if kind in "iu" else \
            complex(value) if kind == "c" else float(value)
    except (TypeError, ValueError, OverflowError):
        return np.asarray(value, dtype=dtype)


def take_along_dim(input, indices, dim=None):
    """Pick values along ``dim`` at ``indices``, which broadcast against ``input`` elsewhere.

    The partner of ``argmax(..., keepdim=True)`` and ``argsort``: like
    :func:`retrograd.gather`, but ``input`` and ``indices`` broadcast over the
    other dimensions. Without ``dim``, ``input`` is flattened.

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    indices : Tensor
        Integer positions, with as many dimensions as ``input``.
    dim : int, optional
        The dimension to index (default: the flattened input).

    Returns
    -------
    Tensor
        The picked values.

    Raises
    ------
    RuntimeError
        If the numbers of dimensions differ.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([[10.0, 30.0, 20.0], [5.0, 1.0, 7.0]])
    >>> idx = rg.argmax(x, dim=1, keepdim=True)
    >>> rg.take_along_dim(x, idx, dim=1)
    tensor([[30.],
            [ 7.]])
    """
    cdef Tensor t = _as_tensor_arg(input)
    idx = (<Tensor>indices)._array if isinstance(indices, Tensor) else \
        _index_array(indices, "take_along_dim(): argument 'indices'")
    if dim is None:
        # (no position counts from the end here, as in torch; rg.compile
        # reads the index tensor itself, as below)
        if _trace_slot != NULL and isinstance(indices, Tensor):
            return _op_gather(flatten(t), 0, _op_reshape(indices, (-1,)))
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
    n = t._array.shape[d]
    # A negative position counts from the end, as torch's; gather, which
    # reads only positions in range, takes the rest.
    if _trace_slot != NULL and isinstance(indices, Tensor):
        # rg.compile: by ops on the index tensor, so that the program reads
        # each call's positions (the array would be baked in)
        ix = _op_where(_op_lt(indices, 0), _op_add(indices, n, 1), indices)
        return _op_gather(x, d, ix if tuple(ib) == tuple(idx.shape) else _op_expand(ix, tuple(ib)))
    if idx.size:
        idx = np.where(idx < 0, idx + n, idx)
    return _op_gather(x, d, np.broadcast_to(idx, tuple(ib)))


cdef object _tri(str op, object input, object diagonal, bint lower):
    cdef Tensor t = _as_tensor_arg(input)
    if t._array.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    n, m = t._array.shape[-2:]
    k = _int_arg(diagonal, "diagonal", op)
    keep = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    # where, not a multiply: inf/nan above (below) the diagonal become 0
    return _op_where(_shape_constant(keep, t), t,
                     _shape_constant(np.zeros((), dtype=t._array.dtype), t))


def tril(input, diagonal=0):
    """The lower triangle of each matrix (the last two dimensions); zeros above it.

    Keeps the elements on and below diagonal ``diagonal`` (0 the main one,
    positive above it, negative below). A copy.

    Parameters
    ----------
    input : Tensor or array_like
        The input, at least 2-d.
    diagonal : int, optional
        Which diagonal bounds the triangle (default 0).

    Returns
    -------
    Tensor
        A new tensor of ``input``'s shape.

    Raises
    ------
    RuntimeError
        If ``input`` has fewer than 2 dimensions.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.ones(3, 3)
    >>> rg.tril(x)
    tensor([[1., 0., 0.],
            [1., 1., 0.],
            [1., 1., 1.]])
    """
    return _tri("tril", input, diagonal, True)


def triu(input, diagonal=0):
    """The upper triangle of each matrix (the last two dimensions); zeros below it.

    Keeps the elements on and above diagonal ``diagonal`` (0 the main one,
    positive above it, negative below). A copy.

    Parameters
    ----------
    input : Tensor or array_like
        The input, at least 2-d.
    diagonal : int, optional
        Which diagonal bounds the triangle (default 0).

    Returns
    -------
    Tensor
        A new tensor of ``input``'s shape.

    Raises
    ------
    RuntimeError
        If ``input`` has fewer than 2 dimensions.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.ones(3, 3)
    >>> rg.triu(x, diagonal=1)
    tensor([[0., 1., 1.],
            [0., 0., 1.],
            [0., 0., 0.]])
    """
    return _tri("triu", input, diagonal, False)
