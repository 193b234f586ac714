# Shape and indexing ops written in terms of table ops: each is a
# few recorded primitives (reshape, permute, getitem, cat, where, gather), so
# their backward and double backward come from those. Part of _ops.pyx.
#
# Views: flatten/squeeze/unsqueeze go through reshape (a view whenever NumPy
# can reshape without copying, always for size-1 dims), narrow/split/chunk
# through basic getitem (always a view), movedim/swapaxes through
# permute/transpose (always a view); they share the base's version counter.
# The composites that make copies (flip, roll, repeat, pad, ...) are in
# _composites_copy.pxi.

from retrograd.core._arg_checks cimport _wrap_dim, _int_arg, _check_int_list, _type_name


SHAPE_COMPOSITES = (
    "flatten", "squeeze", "unsqueeze", "swapaxes", "swapdims", "movedim", "moveaxis",
    "concatenate", "concat", "split", "chunk", "flip", "roll", "repeat", "tile", "pad",
    "index_select", "masked_fill", "take_along_dim", "narrow", "tril", "triu", "unbind",
    "select", "unflatten",
)


cdef tuple _dims_tuple(object dims):
    if isinstance(dims, (list, tuple)):
        return tuple(dims)
    return (dims,)


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dimensions ``start_dim`` to ``end_dim`` (both included) into one.

    A view when the memory layout allows (as :func:`retrograd.reshape`),
    else a copy. A 0-d input gives a 1-d tensor of one element.

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    start_dim : int, optional
        The first dimension to merge (default 0).
    end_dim : int, optional
        The last dimension to merge (default -1).

    Returns
    -------
    Tensor
        The flattened tensor.

    Raises
    ------
    RuntimeError
        If ``start_dim`` comes after ``end_dim``.
    IndexError
        If a dimension is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.zeros(2, 3, 4)
    >>> rg.flatten(x).shape
    (24,)
    >>> rg.flatten(x, start_dim=1).shape
    (2, 12)
    """
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
    """Remove dimensions of size 1: all of them, or those of ``dim``.

    A listed dimension whose size is not 1 is kept, as in torch. The result
    is a view.

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    dim : int or tuple of int, optional
        The dimension(s) to remove if their size is 1 (default: every size-1
        dimension).

    Returns
    -------
    Tensor
        A view without those dimensions.

    Raises
    ------
    IndexError
        If a dimension is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.zeros(1, 3, 1)
    >>> rg.squeeze(x).shape
    (3,)
    >>> rg.squeeze(x, 0).shape
    (3, 1)
    """
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    cdef int nd = len(shape)
    if dim is None:
        dims = {i for i in range(nd) if shape[i] == 1}
    else:
        dims = {_wrap_dim(d, nd) for d in _dims_tuple(dim)}
    return _op_reshape(t, tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1)))


def unsqueeze(input, dim):
    """Insert a dimension of size 1 at position ``dim``: a view.

    ``dim`` ranges over ``[-input.dim() - 1, input.dim()]``; a negative one
    counts from the end of the result.

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    dim : int
        Where the new dimension goes.

    Returns
    -------
    Tensor
        A view with one more dimension.

    Raises
    ------
    IndexError
        If ``dim`` is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0])
    >>> rg.unsqueeze(x, 0)
    tensor([[1., 2.]])
    >>> rg.unsqueeze(x, -1).shape
    (2, 1)
    """
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    cdef int d = _wrap_dim(dim, len(shape) + 1)
    return _op_reshape(t, shape[:d] + (1,) + shape[d:])


def swapaxes(input, axis0, axis1):
    """Swap two dimensions: NumPy's name for :func:`retrograd.transpose` (a view).

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    axis0 : int
        The first dimension.
    axis1 : int
        The second dimension.

    Returns
    -------
    Tensor
        A view with the two dimensions swapped.

    Raises
    ------
    IndexError
        If a dimension is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.swapaxes(rg.zeros(2, 3), 0, 1).shape
    (3, 2)
    """
    return _op_transpose(input, axis0, axis1)


def swapdims(input, dim0, dim1):
    """Swap two dimensions: another name for :func:`retrograd.transpose` (a view).

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    dim0 : int
        The first dimension.
    dim1 : int
        The second dimension.

    Returns
    -------
    Tensor
        A view with the two dimensions swapped.

    Raises
    ------
    IndexError
        If a dimension is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.swapdims(rg.zeros(2, 3, 4), 0, 2).shape
    (4, 3, 2)
    """
    return _op_transpose(input, dim0, dim1)


def movedim(input, source, destination):
    """Move dimensions ``source`` to positions ``destination``, keeping the others in order: a view.

    Parameters
    ----------
    input : Tensor or array_like
        The input.
    source : int or sequence of int
        The dimension(s) to move.
    destination : int or sequence of int
        Where they go, one per source dimension.

    Returns
    -------
    Tensor
        A view with the dimensions moved.

    Raises
    ------
    RuntimeError
        If ``source`` and ``destination`` differ in length or repeat a
        dimension.
    IndexError
        If a dimension is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.zeros(2, 3, 4)
    >>> rg.movedim(x, 0, -1).shape
    (3, 4, 2)
    >>> rg.movedim(x, (0, 1), (2, 0)).shape
    (3, 4, 2)
    """
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
    """Join tensors along an existing dimension: another name for :func:`retrograd.cat`.

    Parameters
    ----------
    tensors : sequence of Tensor
        The tensors to join.
    dim : int, optional
        The dimension to join along (default 0).
    axis : int, optional
        NumPy's name for ``dim``; overrides it when given.

    Returns
    -------
    Tensor
        The joined tensor.

    Raises
    ------
    RuntimeError
        If the list is empty or the shapes do not fit.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.concatenate([rg.tensor([1.0]), rg.tensor([2.0, 3.0])])
    tensor([1., 2., 3.])
    """
    return _op_cat(tensors, dim if axis is None else axis)


def concat(tensors, dim=0):
    """Join tensors along an existing dimension: another name for :func:`retrograd.cat`.

    Parameters
    ----------
    tensors : sequence of Tensor
        The tensors to join.
    dim : int, optional
        The dimension to join along (default 0).

    Returns
    -------
    Tensor
        The joined tensor.

    Raises
    ------
    RuntimeError
        If the list is empty or the shapes do not fit.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.concat([rg.zeros(1, 2), rg.ones(1, 2)], dim=0)
    tensor([[0., 0.],
            [1., 1.]])
    """
    return _op_cat(tensors, dim)


def narrow(input, dim, start, length):
    """The elements ``start`` to ``start + length`` (excluded) along ``dim``: a view.

    Parameters
    ----------
    input : Tensor or array_like
        The input (at least 1-d).
    dim : int
        The dimension to narrow.
    start : int
        The first index (negative counts from the end).
    length : int
        How many elements to keep.

    Returns
    -------
    Tensor
        A view sharing ``input``'s memory.

    Raises
    ------
    RuntimeError
        For a 0-d input, or if the range runs past the dimension's end.
    IndexError
        If ``start`` or ``dim`` is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.arange(6).reshape(2, 3)
    >>> rg.narrow(x, 1, 1, 2)
    tensor([[1, 2],
            [4, 5]])
    """
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


def select(input, dim, index):
    """The slice of ``input`` at ``index`` along ``dim``, without that dim: a view.

    ``rg.select(x, 1, 2)`` is ``x[:, 2]``; a 1-d input gives a 0-d view of
    one element, which an in-place op writes through to ``input``.

    Parameters
    ----------
    input : Tensor or array_like
        The input (at least 1-d).
    dim : int
        The dimension to index.
    index : int
        The position along ``dim`` (negative counts from the end).

    Returns
    -------
    Tensor
        A view sharing ``input``'s memory, with one dimension fewer.

    Raises
    ------
    IndexError
        For a 0-d input, or if ``dim`` or ``index`` is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.arange(6).reshape(2, 3)
    >>> rg.select(x, 1, 2)
    tensor([2, 5])
    >>> x.select(0, -1)
    tensor([3, 4, 5])
    """
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    if len(shape) == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    cdef int d = _wrap_dim(dim, len(shape))
    index = _int_arg(index, "index", "select")
    if index < -shape[d] or index >= shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size {tuple(shape)} "
                         f"at dimension {d}")
    return _op_getitem(t, (slice(None),) * d + (index,))


def unflatten(input, dim, sizes):
    """Split dimension ``dim`` into several of the given ``sizes``: a view.

    The inverse of :func:`flatten`; one entry of ``sizes`` may be -1 and is
    then inferred. The product of ``sizes`` must equal the size of ``dim``.

    Parameters
    ----------
    input : Tensor or array_like
        The input (at least 1-d).
    dim : int
        The dimension to split.
    sizes : sequence of int
        The sizes that replace it.

    Returns
    -------
    Tensor
        A view of ``input`` (a copy only where its memory layout does not
        allow one, as :func:`reshape`).

    Raises
    ------
    RuntimeError
        If ``sizes`` is empty or its product does not match.
    IndexError
        If ``dim`` is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.unflatten(rg.arange(6), 0, (2, 3))
    tensor([[0, 1, 2],
            [3, 4, 5]])
    >>> rg.zeros(4, 6).unflatten(1, (3, -1)).shape
    (4, 3, 2)
    """
    cdef Tensor t = _as_tensor_arg(input)
    shape = tuple(t._array.shape)
    cdef int d = _wrap_dim(dim, len(shape))
    if len(shape) == 0:
        raise IndexError("unflatten() cannot be applied to a 0-dim tensor.")
    if not isinstance(sizes, (list, tuple)):
        raise TypeError(f"unflatten(): argument 'sizes' must be tuple of ints, not {type(sizes).__name__}")
    _check_int_list(sizes, "sizes", "unflatten")
    sizes = tuple(int(n) for n in sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten: only one dimension can be inferred")
    known = 1
    for n in sizes:
        if n != -1:
            known *= n
    if -1 in sizes:
        if known == 0 or shape[d] % known:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of "
                               f"dim {dim} ({shape[d]}) in the input tensor")
        sizes = tuple(shape[d] // known if n == -1 else n for n in sizes)
    elif known != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of "
                           f"dim {dim} ({shape[d]}) in the input tensor")
    return _op_reshape(t, shape[:d] + sizes + shape[d + 1:])


def split(tensor, split_size_or_sections, dim=0):
    """Split a tensor along ``dim`` into pieces: views, as a tuple.

    With an int, pieces of that size (the last one may be smaller); with a
    list of ints, pieces of those sizes, which must add up to the dimension's
    size.

    Parameters
    ----------
    tensor : Tensor or array_like
        The input (at least 1-d).
    split_size_or_sections : int or sequence of int
        The size of each piece, or the list of sizes.
    dim : int, optional
        The dimension to split (default 0).

    Returns
    -------
    tuple of Tensor
        The pieces, views of ``tensor``.

    Raises
    ------
    RuntimeError
        For a 0-d input, a negative size, or sizes that do not add up.
    TypeError
        If the sizes are neither an int nor a list of ints.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.arange(5)
    >>> rg.split(x, 2)
    (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    >>> rg.split(x, [1, 4])
    (tensor([0]), tensor([1, 2, 3, 4]))
    """
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
        # One op with several view outputs in torch: one node for them all
        # (Note [Multi-output views]), and none of them may be modified in
        # place (Note [View creation meta]).
        if isinstance(split_size_or_sections, (int, np.integer)):
            _share_multi_view_node(out, t, SplitBackward0, d, False)
            _mark_multi_output_views(out, "Split")
        else:
            _share_multi_view_node(out, t, SplitWithSizesBackward0, d, False)
            _mark_multi_output_views(out, "SplitWithSizes")
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
# Each piece is a basic-getitem view; the pieces share one UnbindBackward0
# (Note [Multi-output views]).
def unbind(input, dim=0):
    """The slices of ``input`` along ``dim``, each without that dim, as a tuple of views.

    As torch.unbind; the gradient of each piece flows back to its slice.

    Parameters
    ----------
    input : Tensor
        The tensor to slice.
    dim : int, optional
        The dim to remove (default 0).

    Returns
    -------
    tuple of Tensor
        One view per entry of ``dim``.

    Raises
    ------
    IndexError
        If ``input`` is 0-dimensional.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.unbind(rg.tensor([[1, 2], [3, 4]]))
    (tensor([1, 2]), tensor([3, 4]))
    >>> rg.unbind(rg.tensor([[1, 2], [3, 4]]), 1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    cdef Tensor t = _as_tensor_arg(input)
    shape = t._array.shape
    if len(shape) == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions; unbind needs at least "
                         "a 1-dimensional tensor")
    cdef int d = _wrap_dim(dim, len(shape))
    lead = (slice(None),) * d
    out = [_op_getitem(t, lead + (i,)) for i in range(shape[d])]
    if rg_tls_grad_enabled:
        _share_multi_view_node(out, t, UnbindBackward0, d, True)
        _mark_multi_output_views(out, "Unbind")
    return tuple(out)


def chunk(input, chunks, dim=0):
    """Split a tensor along ``dim`` into at most ``chunks`` pieces of equal size: views.

    Each piece has ``ceil(size / chunks)`` elements along ``dim``, the last
    one possibly fewer; there may be fewer than ``chunks`` pieces.

    Parameters
    ----------
    input : Tensor or array_like
        The input (at least 1-d).
    chunks : int
        The number of pieces wanted, positive.
    dim : int, optional
        The dimension to split (default 0).

    Returns
    -------
    tuple of Tensor
        The pieces, views of ``input``.

    Raises
    ------
    RuntimeError
        If ``chunks`` is not positive, or for a 0-d input.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.chunk(rg.arange(5), 2)
    (tensor([0, 1, 2]), tensor([3, 4]))
    """
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
