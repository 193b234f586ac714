# What the graph classes of abi (_node.pxi) and the ops share: edges and
# interned input metadata, hook handles, GraphRoot, the accumulation of a
# leaf's gradient (AccumulateGrad's apply), CopyBackwards and the Error
# nodes. Part of _ops.pyx.

from retrograd.core._array_module cimport _ensure_array, _cupy, _cupy_ndarray

import threading as _threading
import weakref as _weakref
import itertools as _itertools

cdef object _handle_ids = _itertools.count()
cdef tuple _last_shape = ()
cdef InputMetadata _last_meta = None


cdef tuple _checked_edges(tuple edges):
    # Edges that came from Python: _flatten_edges trusts its input (a cast,
    # no check), so a wrong entry here would crash in C. A (node, input_nr)
    # pair is accepted as torch accepts one wherever it takes an edge.
    cdef list out = []
    for i, x in enumerate(edges):
        if x is None or isinstance(x, Edge):
            out.append(x)
        elif (isinstance(x, tuple) and len(x) == 2 and (x[0] is None or isinstance(x[0], Node))
              and isinstance(x[1], int)):
            out.append(None if x[0] is None else Edge(x[0], x[1]))
        else:
            raise TypeError(f"next_edges[{i}] is a {type(x).__name__}: each edge must be an Edge, a "
                            "(Node, input_nr) pair such as an entry of grad_fn.next_functions, or None")
    return tuple(out)


cdef tuple _flatten_edges(tuple edges):
    # A tuple of Edge (or None) as the flat (fn, nr) pairs set_next_edges takes.
    cdef list flat = []
    for x in edges:
        if x is None:
            flat.append(None)
            flat.append(0)
        else:
            flat.append((<Edge>x).function)
            flat.append((<Edge>x).input_nr)
    return tuple(flat)


cdef inline InputMetadata _new_meta(object array, Device device):
    cdef InputMetadata m = InputMetadata.__new__(InputMetadata)
    m.shape = _intern_shape(array.shape)
    m.dtype = array.dtype
    m.device = device
    m.is_cupy = type(array) is not ndarray
    # torch's InputMetadata records the current stream of the output's
    # device: the engine runs the node's backward on it and makes
    # gradients made on other streams wait (engine/_streams.pxi)
    m.stream = _cupy.cuda.get_current_stream() if m.is_cupy else None
    return m


cdef inline InputMetadata _intern_meta(object array, Device device):
    # Input metadata is immutable, and consecutive ops mostly produce the same
    # shape, dtype and device: share the last InputMetadata when it matches
    # (one object for a whole chain instead of one per node).
    global _last_meta
    cdef InputMetadata m = _last_meta
    cdef bint is_cupy = type(array) is not ndarray
    if m is not None and m.device is device and m.is_cupy == is_cupy:
        if not is_cupy:
            # ndarray: dtype and shape read in C (no attribute lookups, no
            # shape tuple built), as this runs once per recorded op.
            if (<object>_cnp.PyArray_DESCR(<_cnp.ndarray>array) is m.dtype
                    and _dims_are(<_cnp.ndarray>array, m.shape)):
                return m
        elif m.dtype is array.dtype and m.shape == array.shape and _same_stream(m.stream,
                                                                                _cupy.cuda.get_current_stream()):
            return m
    m = _new_meta(array, device)
    _last_meta = m
    return m


cdef inline bint _same_stream(object a, object b):
    # CuPy may hand out distinct Stream objects for one stream: compare handles
    return a is b or (a is not None and b is not None and a.ptr == b.ptr and a.device_id == b.device_id)


cdef InputMetadata _input_metadata(object array, Device device, bint interned):
    # For Node.add_input_metadata (abi): the ops inline _intern_meta.
    return _intern_meta(array, device) if interned else _new_meta(array, device)


cdef inline bint _dims_are(_cnp.ndarray a, tuple shape):
    cdef int nd = _cnp.PyArray_NDIM(a), k
    if nd != len(shape):
        return False
    for k in range(nd):
        if _cnp.PyArray_DIMS(a)[k] != <_cnp.npy_intp>shape[k]:
            return False
    return True


cdef inline tuple _intern_shape(tuple shape):
    # Chains of ops produce the same shape over and over; sharing one tuple
    # instead of keeping a copy per node saves ~60 bytes a node.
    global _last_shape
    if shape == _last_shape:
        return _last_shape
    _last_shape = shape
    return shape


class RemovableHandle:
    """Returned by every hook registration of a tensor or node; ``remove()`` unregisters the hook.

    It holds its owner weakly (a handle kept around does not keep a graph
    alive) and works as a context manager that removes the hook on exit.
    The hooks of ``rg.nn.Module`` and ``rg.optim.Optimizer`` return
    ``retrograd.utils.hooks.RemovableHandle``, torch's class for those.

    Parameters
    ----------
    owner : Tensor or Node
        What the hook was registered on.
    kind : str
        Which of its hook lists: ``"tensor"``, ``"post_acc"``, ``"pre"``,
        ``"post"`` or ``"tensor_pre"``.

    Attributes
    ----------
    id : int
        The hook's number, unique in the process.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1., 2.], requires_grad=True)
    >>> handle = x.register_hook(lambda g: g * 10)
    >>> (x * 1).sum().backward()
    >>> x.grad
    tensor([10., 10.])
    >>> handle.remove()
    >>> x.grad = None
    >>> (x * 1).sum().backward()
    >>> x.grad
    tensor([1., 1.])
    """

    __slots__ = ("_owner_ref", "_kind", "id", "__weakref__")

    def __init__(self, owner, kind):
        self._owner_ref = _weakref.ref(owner)
        self._kind = kind
        self.id = next(_handle_ids)

    def remove(self) -> None:
        """Unregister the hook; removing twice, or after the owner died, does nothing.

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor(1., requires_grad=True)
        >>> with x.register_hook(lambda g: g * 2):
        ...     (x * 3).backward()
        >>> x.grad
        tensor(6.)
        """
        owner = self._owner_ref()
        if owner is not None:
            _remove_hook(owner, self._kind, self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


cdef _remove_hook(owner, str kind, hid):
    cdef list hooks
    cdef NodeExtras ex
    if kind == "tensor":
        hooks = (<Tensor>owner)._hooks
    elif kind == "post_acc":
        hooks = (<Tensor>owner)._post_acc_hooks
    else:
        ex = (<Node>owner)._extra
        if ex is None:
            return
        if kind == "pre":
            hooks = ex.pre_hooks
        elif kind == "post":
            hooks = ex.post_hooks
        elif kind == "tensor_pre":
            hooks = ex.tensor_pre_hooks
        else:
            return
    if hooks is None:
        return
    for i in range(len(hooks)):
        if hooks[i][0] == hid:
            del hooks[i]
            return


cdef object _wrap_grad_value(object g):
    if g is None or isinstance(g, Tensor):
        return g
    return _rg_wrap(g, _CPU)


cdef object _unwrap_grad(object g, bint create_graph):
    if g is None:
        return None
    if create_graph:
        if isinstance(g, Tensor):
            return g
        return _rg_wrap(_ensure_array(g), _CPU)
    if isinstance(g, Tensor):
        return (<Tensor>g)._array
    return _ensure_array(g)


@cython.final
@cython.trashcan(True)
cdef class GraphRoot(Node):
    """The root of a backward with several outputs: hands each its gradient.

    ``backward((y1, y2), (g1, g2))`` starts the engine at one node whose
    edges lead to each output's grad_fn and which returns the given
    gradients: torch's GraphRoot. The engine makes it; users meet it in
    hooks and the profiler, and can make one to run a graph by hand.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.GraphRoot().name()
    'GraphRoot'
    """
    cdef tuple _grads

    cdef list apply(self, list grads, bint create_graph):
        return list(self._grads)


cdef GraphRoot _make_graph_root(tuple edges, tuple grads):
    cdef GraphRoot r = GraphRoot.__new__(GraphRoot)
    r.set_next_edges(_flatten_edges(edges))
    r._grads = grads
    r.seq_nr = 0xFFFFFFFFFFFFFFFF
    return r


cdef int _check_post_acc_result(object fn, object res) except -1:
    # torch: a post-accumulate-grad hook works on the tensor (its .grad) in
    # place; a returned value would be silently dropped, so it is refused.
    if res is None:
        return 0
    name = getattr(fn, "__name__", None)
    name = name if isinstance(name, str) else "<unknown>"
    if not isinstance(res, Tensor):
        raise TypeError(
            f"expected Variable, but hook returned '{type(res).__name__}': post accumulate grad "
            f"hook '{name}' must return None (it may modify the tensor's .grad in place)")
    raise RuntimeError(
        f"Tensor post accumulate grad hooks should return None. Hook '{name}' returned a Tensor; "
        "modify the tensor's .grad in place instead")


cdef inline bint _adoptable(object g, object like):
    # a NumPy array that owns its memory and is writable, with `like`'s
    # dtype and shape (read in C: no attribute lookups, on every leaf's
    # first gradient of a backward); CuPy arrays are copied
    if type(g) is not ndarray or type(like) is not ndarray:
        return False
    cdef _cnp.ndarray a = <_cnp.ndarray>g
    if _cnp.PyArray_BASE(a) != NULL or not _cnp.PyArray_ISWRITEABLE(a):
        return False
    # (builtin dtypes are singletons: identity is the common case of equality)
    if _cnp.PyArray_DESCR(a) != _cnp.PyArray_DESCR(<_cnp.ndarray>like) and \
            <object>_cnp.PyArray_DESCR(a) != <object>_cnp.PyArray_DESCR(<_cnp.ndarray>like):
        return False
    return rg_same_dims(g, like)


cdef int _accumulate_grad(Tensor v, object g, bint create_graph) except -1:
    cdef Tensor old = <Tensor>v._grad if v._grad is not None else None
    if not create_graph:
        if old is None:
            # Adopt the incoming array when nothing else can see it: only
            # apply's local `g` holds it (`g` is borrowed here, so that is a
            # count of 1), it owns its memory, and it is writable with the
            # leaf's dtype and shape. Otherwise copy: a later in-place
            # accumulation must never write into an array someone kept.
            if Py_REFCNT(g) <= 1 and _adoptable(g, v._array):
                v._grad = _rg_wrap(g, v._device)
            else:
                v._grad = _rg_wrap(_copy_as(g, v._array), v._device)
        else:
            a = old._array
            if (type(a) is not ndarray or a.flags.writeable) and a.base is None and old._grad_fn is None:
                a += g
                old._version_counter.version += 1
            else:
                v._grad = _rg_wrap(_copy_as(a + g, v._array), v._device)
    else:
        gt = <Tensor>g if isinstance(g, Tensor) else _rg_wrap(g, v._device)
        if old is None:
            v._grad = _copy_with_graph(gt, v) if rg_tls_grad_enabled and _needs(gt) \
                else _detached_copy(gt)
        else:
            v._grad = _op_add2(old, gt)
    return 0


@cython.final
@cython.trashcan(True)
cdef class CopyBackwards(Node):
    """Backward of a copy into a fresh tensor (torch's CopyBackwards, what
    AccumulateGrad records when create_graph stores a first gradient): the
    gradient goes to the source (edge 1); edge 0, the empty destination, is
    not in the graph."""

    cdef list apply(self, list grads, bint create_graph):
        return [None, grads[0]]


cdef Tensor _copy_with_graph(Tensor g, Tensor like):
    # torch's clone_obey_contract: new_empty_strided(...).copy_(grad), so the
    # stored .grad's grad_fn is CopyBackwards(None, <grad's own grad_fn>).
    cdef CopyBackwards node = CopyBackwards.__new__(CopyBackwards)
    cdef Tensor out
    _set_edges2(node, None, 0, _edge_fn(g), _edge_nr(g))
    arr = _copy_as(g._array, like._array)
    _finish_node(node, arr, g._device)
    out = _rg_wrap_with_grad_fn(arr, g._device, node, 0)
    if _forward_grad_slot != NULL:
        _forward_grad_slot("clone", (g,), (out,), None)
    return out


cdef object _copy_as(object g, object like):
    if type(like) is ndarray:
        return np.array(g, dtype=like.dtype, copy=True)
    return _cupy.array(g, dtype=like.dtype, copy=True)     # CuPy: g is on like's device


cdef Tensor _detached_copy(Tensor t):
    return _rg_wrap(t._array.copy(), t._device)


# (looked up once: a fresh leaf's first use makes its accumulator)
cdef object _new_lock = _threading.Lock


cdef AccumulateGrad _make_accumulate_grad(Tensor v):
    cdef AccumulateGrad acc = AccumulateGrad.__new__(AccumulateGrad)
    acc.variable = v
    acc._lock = _new_lock()
    acc._num_edges = 0
    acc.seq_nr = 0xFFFFFFFFFFFFFFFF   # PyTorch: UINT64_MAX, run as soon as ready
    acc.topo_nr = 0
    acc.add_input_metadata(v._array, v._device)
    return acc


@cython.trashcan(True)
cdef class Error(Node):
    """A node whose backward raises RuntimeError with its message.

    Put in a graph where a gradient must not flow (a function that is not
    differentiable, an op whose derivative is not implemented): the forward
    runs, and only a backward that reaches the node fails, naming what went
    wrong. torch's ``Error`` node.

    Parameters
    ----------
    msg : str
        The message of the RuntimeError its backward raises.
    next_edges : tuple
        Where the node's gradients would flow: one ``Edge`` (or a
        ``(node, input_nr)`` pair, or None) per input of the forward op.

    Attributes
    ----------
    msg : str
        The message its backward raises.

    Raises
    ------
    TypeError
        An entry of ``next_edges`` is not an Edge, a ``(Node, int)`` pair or
        None.

    Examples
    --------
    >>> import retrograd as rg
    >>> err = rg.Error("the derivative of my_op is not implemented")
    >>> err.msg
    'the derivative of my_op is not implemented'
    >>> err()
    Traceback (most recent call last):
        ...
    RuntimeError: the derivative of my_op is not implemented
    """
    cdef readonly str msg

    def __init__(self, str msg, tuple next_edges=()):
        self.msg = msg
        self.set_next_edges(_flatten_edges(_checked_edges(next_edges)))

    cdef list apply(self, list grads, bint create_graph):
        raise RuntimeError(self.msg)


@cython.final
@cython.trashcan(True)
cdef class DelayedError(Error):
    """An Error node for an error deferred until a gradient needs it.

    PyTorch's DelayedError: the forward succeeds and the node sits in the
    graph; only a backward that reaches it raises its message. (retrograd's
    own ``once_differentiable`` gives its outputs an :class:`Error` node
    directly; DelayedError is the class for graphs built by hand.)

    Parameters
    ----------
    msg : str
        The message of the RuntimeError raised when a backward reaches it.
    next_edges : tuple
        As :class:`Error`'s.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1., 2.], requires_grad=True)
    >>> node = rg.DelayedError("trying to differentiate twice a once_differentiable function",
    ...                        (x.grad_fn,))
    >>> node.next_functions
    ((None, 0),)
    >>> node(rg.ones(2))
    Traceback (most recent call last):
        ...
    RuntimeError: trying to differentiate twice a once_differentiable function
    """
    pass


cdef object _raise_released(Node node):
    raise RuntimeError(
        f"Trying to backward through the graph a second time (or directly access saved "
        f"tensors after they have already been freed): {node.name()} already freed its saved "
        "tensors. Saved intermediate values of the graph are freed when you call .backward() "
        "or autograd.grad(). Specify retain_graph=True if you need to backward through the "
        "graph a second time or if you need to access saved tensors after calling backward."
    )


cdef bint _index_is_advanced(object index):
    # Whether indexing with `index` is advanced (an array, list or Tensor in
    # it, bool masks included), where torch saves the index tensors; basic
    # indexing (ints, slices, None, Ellipsis) is a view that saves nothing.
    if isinstance(index, tuple):
        for i in index:
            if isinstance(i, (ndarray, list, Tensor)) or (
                    _cupy_ndarray is not None and isinstance(i, _cupy_ndarray)):
                return True
        return False
    return isinstance(index, (ndarray, list, Tensor)) or (
        _cupy_ndarray is not None and isinstance(index, _cupy_ndarray))
