# Graph structure: Edge, InputMetadata, Node and its hooks, GraphRoot,
# AccumulateGrad, Error/DelayedError. Part of abi.pyx.
#
# Note [Hook order] (PyTorch's documented order, which the engine follows):
#   1. tensor pre-hooks (Tensor.register_hook on the tensor this input is),
#   2. retains-grad hooks (Tensor.retain_grad; always after 1),
#   3. node pre-hooks (Node.register_prehook),
#   4. the node runs,
#   5. node post-hooks (Node.register_hook).
# For a leaf the "node" is its AccumulateGrad, whose tensor pre-hooks are
# read from the tensor itself (the accumulator is only weakly held by the
# tensor and may be rebuilt).

from retrograd.core._array_module cimport _ensure_array, _cupy, _cupy_ndarray
import threading as _threading
import weakref as _weakref
import itertools as _itertools

cdef object _handle_ids = _itertools.count()


@cython.freelist(64)
@cython.final
cdef class Edge:
    """Where a gradient flows: ``(function, input_nr)``."""

    def __init__(self, Node function, int input_nr):
        self.function = function
        self.input_nr = input_nr

    def __iter__(self):
        return iter((self.function, self.input_nr))

    def __getitem__(self, i):
        return (self.function, self.input_nr)[i]

    def __len__(self):
        return 2

    def __repr__(self):
        return f"Edge({self.function!r}, {self.input_nr})"

    def __eq__(self, other):
        if isinstance(other, Edge):
            return self.function is (<Edge>other).function and self.input_nr == (<Edge>other).input_nr
        return NotImplemented

    def __hash__(self):
        return hash((id(self.function), self.input_nr))


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


cdef inline Edge _new_edge(Node fn, int nr):
    cdef Edge e = Edge.__new__(Edge)
    e.function = fn
    e.input_nr = nr
    return e


@cython.freelist(64)
@cython.final
@cython.no_gc
cdef class InputMetadata:
    """Shape, dtype and device of the gradient a node input must receive."""

    def __repr__(self):
        return f"InputMetadata(shape={self.shape}, dtype={self.dtype}, device={self.device})"


cdef inline InputMetadata _new_meta(object array, Device device):
    cdef InputMetadata m = InputMetadata.__new__(InputMetadata)
    m.shape = _intern_shape(array.shape)
    m.dtype = array.dtype
    m.device = device
    m.is_cupy = type(array) is not ndarray
    return m


cdef tuple _last_shape = ()
cdef InputMetadata _last_meta = None


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
        elif m.dtype is array.dtype and m.shape == array.shape:
            return m
    m = _new_meta(array, device)
    _last_meta = m
    return m


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


@cython.final
cdef class NodeExtras:
    """Hooks, metadata and anomaly trace of a node (most nodes have none)."""
    pass


cdef object rg_zeros_like_metadata(InputMetadata meta):
    # (also used by the engine to materialize an undefined gradient)
    if meta.is_cupy:
        import cupy
        return cupy.zeros(meta.shape, dtype=meta.dtype)
    return np.zeros(meta.shape, dtype=meta.dtype)


class RemovableHandle:
    """Returned by every hook registration; ``remove()`` unregisters the hook."""

    __slots__ = ("_owner_ref", "_kind", "id", "__weakref__")

    def __init__(self, owner, kind):
        self._owner_ref = _weakref.ref(owner)
        self._kind = kind
        self.id = next(_handle_ids)

    def remove(self):
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


@cython.trashcan(True)
cdef class Node:
    """A backward function of the autograd graph (``grad_fn``).

    Created by ops while the forward runs; run by the engine. ``name()``,
    ``next_functions``, ``metadata``, ``register_hook``, ``register_prehook``
    and ``_sequence_nr()`` behave as in ``torch.autograd.graph.Node``.
    """

    cdef list apply(self, list grads, bint create_graph):
        raise NotImplementedError(f"{self.name()} does not implement apply")

    cdef void release_variables(self):
        self._released = True

    cdef void set_next_edges(self, tuple edges):
        # `edges`: flat (fn, nr) pairs. See abi.pxd for the inline layout.
        cdef uint64_t topo = 0
        cdef Py_ssize_t i, n = len(edges) // 2
        cdef Node fn
        self._num_edges = <int>n
        self._fn0 = <Node>edges[0] if n > 0 else None
        self._nr0 = <int>edges[1] if n > 0 else 0
        self._fn1 = <Node>edges[2] if n > 1 else None
        self._nr1 = <int>edges[3] if n > 1 else 0
        if n > 2:
            self.extras().more_edges = edges[4:]
        elif self._extra is not None:
            self._extra.more_edges = None
        for i in range(0, 2 * n, 2):
            x = edges[i]
            if x is not None:
                fn = <Node>x
                if fn.topo_nr >= topo:
                    topo = fn.topo_nr + 1
        self.topo_nr = topo

    cdef int add_input_metadata(self, object array, Device device) except -1:
        cdef InputMetadata m
        if self._num_inputs == 0:
            self._meta0 = _intern_meta(array, device)
        else:
            m = _new_meta(array, device)
            ex = self.extras()
            ex.more_metadata = (m,) if ex.more_metadata is None else ex.more_metadata + (m,)
        self._num_inputs += 1
        return 0

    cdef InputMetadata metadata_of(self, int i):
        cdef InputMetadata m
        if i == 0 and self._num_inputs > 0:
            return self._meta0
        if i <= 0 or i >= self._num_inputs:
            raise IndexError(f"{self.name()} has {self._num_inputs} inputs, no input {i}")
        return <InputMetadata>self._extra.more_metadata[i - 1]

    cdef NodeExtras extras(self):
        if self._extra is None:
            self._extra = NodeExtras.__new__(NodeExtras)
        return self._extra

    cdef list tensor_pre_hooks(self):
        return self._extra.tensor_pre_hooks if self._extra is not None else None

    cpdef str name(self):
        return type(self).__name__

    # -- Python API -------------------------------------------------------
    @property
    def next_functions(self):
        cdef int i
        return tuple((None, 0) if rg_next_fn(self, i) is None else (rg_next_fn(self, i), rg_next_nr(self, i))
                     for i in range(self._num_edges))

    @property
    def next_edges(self):
        """The edges as Edge objects (None where no gradient flows)."""
        cdef int i
        return tuple(None if rg_next_fn(self, i) is None else _new_edge(rg_next_fn(self, i), rg_next_nr(self, i))
                     for i in range(self._num_edges))

    @property
    def input_metadata(self):
        return tuple(self.metadata_of(i) for i in range(self._num_inputs))

    @property
    def metadata(self):
        cdef NodeExtras ex = self.extras()
        if ex.metadata is None:
            ex.metadata = {}
        return ex.metadata

    def _sequence_nr(self):
        return self.seq_nr

    def _topological_nr(self):
        return self.topo_nr

    @property
    def sequence_nr(self):
        return self.seq_nr

    @property
    def topological_nr(self):
        return self.topo_nr

    @property
    def num_inputs(self):
        return self._num_inputs

    def register_hook(self, fn, /):
        """Register ``fn(grad_inputs, grad_outputs)`` to run after this node.

        It may return a tuple replacing ``grad_inputs``."""
        if not callable(fn):
            raise TypeError(f"hook must be callable, got {type(fn).__name__}")
        h = RemovableHandle(self, "post")
        ex = self.extras()
        if ex.post_hooks is None:
            ex.post_hooks = []
        ex.post_hooks.append((h.id, fn))
        return h

    def register_prehook(self, fn, /):
        """Register ``fn(grad_outputs)`` to run before this node.

        It may return a tuple replacing ``grad_outputs``."""
        if not callable(fn):
            raise TypeError(f"hook must be callable, got {type(fn).__name__}")
        h = RemovableHandle(self, "pre")
        ex = self.extras()
        if ex.pre_hooks is None:
            ex.pre_hooks = []
        ex.pre_hooks.append((h.id, fn))
        return h

    def _register_tensor_pre_hook(self, int input_nr, fn):
        h = RemovableHandle(self, "tensor_pre")
        ex = self.extras()
        if ex.tensor_pre_hooks is None:
            ex.tensor_pre_hooks = []
        ex.tensor_pre_hooks.append((h.id, input_nr, fn))
        return h

    def release_saved_variables(self):
        """Free the arrays this node saved for backward (as after a backward without retain_graph)."""
        self.release_variables()

    def __call__(self, *grads):
        cdef list gl
        # torch: one gradient (a Tensor or None) per node input, else TypeError
        # (a node without input metadata, an Error made by hand, takes any).
        if len(grads) != self._num_inputs and self._num_inputs > 0:
            raise TypeError(
                f"expected {self._num_inputs} arguments, got {len(grads)} instead: calling "
                f"{self.name()} takes one gradient (a Tensor or None) per input of the node")
        for i, g in enumerate(grads):
            if g is not None and not isinstance(g, (Tensor, ndarray)):
                raise TypeError(
                    f"argument {i} is not a Variable: calling {self.name()} takes Tensors (or "
                    f"None), got {type(g).__name__}")
        gl = [_unwrap_grad(g, False) for g in grads]
        out = self.apply(gl, False)
        return tuple(None if g is None else _wrap_grad_value(g) for g in out)

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def name_(self):
        return self.name()


cdef object _wrap_grad_value(object g):
    if g is None or isinstance(g, Tensor):
        return g
    return rg_wrap(g, _CPU)


cdef object _unwrap_grad(object g, bint create_graph):
    if g is None:
        return None
    if create_graph:
        if isinstance(g, Tensor):
            return g
        return rg_wrap(_ensure_array(g), _CPU)
    if isinstance(g, Tensor):
        return (<Tensor>g)._array
    return _ensure_array(g)


@cython.final
cdef class GraphRoot(Node):
    """The root of a backward with several outputs: hands each its gradient."""
    cdef tuple _grads

    cdef list apply(self, list grads, bint create_graph):
        return list(self._grads)


cdef GraphRoot _make_graph_root(tuple edges, tuple grads):
    cdef GraphRoot r = GraphRoot.__new__(GraphRoot)
    r.set_next_edges(_flatten_edges(edges))
    r._grads = grads
    r.seq_nr = 0xFFFFFFFFFFFFFFFF
    return r


cdef class AccumulateGrad(Node):
    """Accumulates the incoming gradient into a leaf's ``.grad``.

    Its apply takes a lock: two graph tasks on different threads may reach
    the same leaf at once, and the read-modify-write of ``.grad`` must not
    interleave (numpy releases the GIL inside large additions).
    """

    cdef list tensor_pre_hooks(self):
        # See Note [Hook order]: a leaf's hooks live on the tensor.
        cdef Tensor v = self.variable
        cdef list hooks = v._hooks
        if hooks is None or not hooks:
            return None
        return [(h[0], 0, h[1]) for h in hooks]

    cdef list apply(self, list grads, bint create_graph):
        cdef object g = grads[0]
        cdef Tensor v = self.variable
        if g is None or not v._requires_grad:
            return []
        # Drop the buffer's reference: then only the local `g` holds the
        # array, unless someone else (a user's gradient, another buffer, a
        # hook that kept it) does, and then it must not be adopted as .grad.
        del grads[0]
        grads.append(None)
        with self._lock:
            _accumulate_grad(v, g, create_graph)
            if v._post_acc_hooks:
                for h in list(v._post_acc_hooks):
                    _check_post_acc_result(h[1], h[1](v))
        return []

    @property
    def variable_(self):
        return self.variable


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


cdef int _accumulate_grad(Tensor v, object g, bint create_graph) except -1:
    cdef Tensor old = <Tensor>v._grad if v._grad is not None else None
    if not create_graph:
        if old is None:
            # Adopt the incoming array when nothing else can see it: only
            # apply's local `g` holds it (`g` is borrowed here, so that is a
            # count of 1), it owns its memory, and it is writable with the
            # leaf's dtype and shape. Otherwise copy: a later in-place
            # accumulation must never write into an array someone kept.
            if (Py_REFCNT(g) <= 1 and type(g) is ndarray and (<object>g).base is None
                    and g.flags.writeable and g.dtype == v._array.dtype
                    and g.shape == v._array.shape):
                v._grad = rg_wrap(g, v._device)
            else:
                v._grad = rg_wrap(_copy_as(g, v._array), v._device)
        else:
            a = old._array
            if (type(a) is not ndarray or a.flags.writeable) and a.base is None and old._grad_fn is None:
                a += g
                old._version_counter.version += 1
            else:
                v._grad = rg_wrap(_copy_as(a + g, v._array), v._device)
    else:
        gt = <Tensor>g if isinstance(g, Tensor) else rg_wrap(g, v._device)
        if old is None:
            v._grad = _copy_with_graph(gt, v) if rg_tls_grad_enabled and _needs(gt) \
                else _detached_copy(gt)
        else:
            v._grad = _op_add2(old, gt)
    return 0


@cython.final
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
    out = rg_wrap_with_grad_fn(arr, g._device, node, 0)
    if _forward_grad_slot != NULL:
        _forward_grad_slot("clone", (g,), (out,), None)
    return out


cdef object _copy_as(object g, object like):
    if type(like) is ndarray:
        return np.array(g, dtype=like.dtype, copy=True)
    return _cupy.array(g, dtype=like.dtype, copy=True)     # CuPy: g is on like's device


cdef Tensor _detached_copy(Tensor t):
    return rg_wrap(t._array.copy(), t._device)


cdef AccumulateGrad _make_accumulate_grad(Tensor v):
    cdef AccumulateGrad acc = AccumulateGrad.__new__(AccumulateGrad)
    acc.variable = v
    acc._lock = _threading.Lock()
    acc._num_edges = 0
    acc.seq_nr = 0xFFFFFFFFFFFFFFFF   # PyTorch: UINT64_MAX, run as soon as ready
    acc.topo_nr = 0
    acc.add_input_metadata(v._array, v._device)
    return acc


cdef class Error(Node):
    """A node whose backward raises RuntimeError with its message."""
    cdef readonly str msg

    def __init__(self, str msg, tuple next_edges=()):
        self.msg = msg
        self.set_next_edges(_flatten_edges(next_edges))

    cdef list apply(self, list grads, bint create_graph):
        raise RuntimeError(self.msg)


@cython.final
cdef class DelayedError(Error):
    """Passes gradients through in forward position but raises its message if a
    backward reaches it (PyTorch's DelayedError: an error deferred until the
    gradient is actually needed)."""
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
