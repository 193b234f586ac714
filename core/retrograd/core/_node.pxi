# Graph structure: Edge, InputMetadata, Node and its hooks, and
# AccumulateGrad: the classes of abi.pxd. Part of abi.pyx; what they share
# with the ops (GraphRoot, Error/DelayedError, accumulation) is _ops's
# _graph_support.pxi.
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

from retrograd.core._ops cimport (
    _input_metadata, _accumulate_grad, _check_post_acc_result, _unwrap_grad, _wrap_grad_value,
    _new_edge, _rg_trace_active, _rg_trace_event,
)
from retrograd.core._ops import RemovableHandle  # no-cython-lint


cdef inline int _trace_break(str what, object obj) except -1:
    # Data-dependent Python on a tensor (item(), bool(), ...) and hooks added
    # from Python break a trace: the tracing slot hears of them (abi.pxd).
    if _rg_trace_active():
        _rg_trace_event(RG_TRACE_BREAK, what, (obj,), (), None)
    return 0


cdef inline int _trace_new(object t) except -1:
    # A tensor made by Tensor(...): the tracing slot hears of it (abi.pxd's
    # RG_TRACE_NEW, ABI 1.6), as of those core's _rg_wrap makes.
    if _rg_trace_active():
        _rg_trace_event(RG_TRACE_NEW, "", (), (t,), None)
    return 0

import collections as _collections
import threading as _threading
import weakref as _weakref
import itertools as _itertools

# (looked up once: a fresh leaf's first use weakly refers to its accumulator,
# Tensor.grad_accumulator in _tensor.pxi)
cdef object _new_weakref = _weakref.ref



# Tensor._backward_hooks and _post_accumulate_grad_hooks (torch's): an
# OrderedDict {handle id: hook} in registration order, None before any hook
# was registered. A new dict on each read (core keeps the hooks in its own
# lists): hooks are registered and removed through register_hook /
# register_post_accumulate_grad_hook and their handles.
cdef inline object _hooks_snapshot(list hooks):
    return None if hooks is None else _collections.OrderedDict(hooks)


cdef inline object _output_hooks_snapshot(Node fn, Py_ssize_t output_nr):
    # a non-leaf's hooks are kept by its grad_fn, tagged with the forward
    # output they belong to. Unlike torch's, a non-leaf whose hooks were all
    # removed reads None, not an empty dict: the node keeps no record of
    # hooks removed.
    cdef list hooks = fn.tensor_pre_hooks()
    if not hooks:
        return None
    mine = [(h[0], h[2]) for h in hooks if h[1] == output_nr]
    return _collections.OrderedDict(mine) if mine else None

@cython.freelist(64)
@cython.final
cdef class Edge:
    """Where a gradient flows: input ``input_nr`` of node ``function``.

    A node's edges say where each gradient it computes goes next; an Edge
    unpacks and indexes as the pair ``(function, input_nr)``, the form
    ``Node.next_functions`` lists. torch's ``GradientEdge``
    (``torch.autograd.graph.get_gradient_edge``).

    Parameters
    ----------
    function : Node
        The node that receives the gradient.
    input_nr : int
        Which of that node's inputs it is (the output number of the forward
        op that made the tensor).

    Attributes
    ----------
    function : Node
        The node that receives the gradient.
    input_nr : int
        Which of its inputs.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1., 2.], requires_grad=True)
    >>> y = (x * 3).sum()
    >>> edge = y.grad_fn.next_edges[0]
    >>> edge.function.name(), edge.input_nr
    ('MulBackward0', 0)
    >>> fn, nr = edge
    >>> fn is y.grad_fn.next_functions[0][0]
    True
    """

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


@cython.freelist(64)
@cython.final
@cython.no_gc
cdef class InputMetadata:
    """Shape, dtype and device of the gradient a node input must receive.

    Recorded for each output of the forward op when its node is made; the
    engine checks every incoming gradient against it (a hook that returns a
    gradient of another shape is an error) and makes zeros of it for an
    output that got no gradient. torch's ``InputMetadata``.

    Attributes
    ----------
    shape : tuple of int
        The shape of the forward output, so of its gradient.
    dtype : numpy.dtype
        Its dtype.
    device : Device
        Its device.
    is_cupy : bool
        Whether it is a CuPy (CUDA) array.
    stream : cupy.cuda.Stream or None
        For a CUDA array, the stream that was current when the forward op
        made it: the engine runs the node's backward on that stream, as
        torch's does. None on the CPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.ones(2, 3, requires_grad=True)
    >>> meta = (x * 2).grad_fn.input_metadata[0]
    >>> meta
    InputMetadata(shape=(2, 3), dtype=float32, device=cpu)
    >>> meta.shape, meta.is_cupy, meta.stream
    ((2, 3), False, None)
    """

    def __repr__(self):
        return f"InputMetadata(shape={self.shape}, dtype={self.dtype}, device={self.device})"


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


@cython.trashcan(True)
cdef class Node:
    """A backward function of the autograd graph (``grad_fn``).

    Created by ops while the forward runs; run by the engine. ``name()``,
    ``next_functions``, ``metadata``, ``register_hook``, ``register_prehook``
    and ``_sequence_nr()`` behave as in ``torch.autograd.graph.Node``.
    Calling a node with one gradient per input runs its backward formula
    alone and returns the gradients of its forward's inputs: a tuple, or the
    gradient alone where the node has one next edge (as in torch).

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1., 2.], requires_grad=True)
    >>> y = (x * 3).sum()
    >>> y.grad_fn
    <SumBackward0 object at 0x...>
    >>> y.grad_fn.next_functions
    ((<MulBackward0 object at 0x...>, 0),)
    >>> mul = y.grad_fn.next_functions[0][0]
    >>> mul(rg.ones(2))
    (tensor([3., 3.]), None)
    >>> (x ** 2).grad_fn(rg.ones(2))
    tensor([2., 4.])
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
            self._meta0 = _input_metadata(array, device, True)
        else:
            m = _input_metadata(array, device, False)
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
        """The node's name, as torch names it (``MulBackward0``).

        Returns
        -------
        str

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor(2., requires_grad=True)
        >>> (x * x).grad_fn.name()
        'MulBackward0'
        """
        return type(self).__name__

    # -- Python API -------------------------------------------------------
    @property
    def next_functions(self):
        """``(node, input_nr)`` for each input of the forward op, ``(None, 0)`` where no gradient flows."""
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
        """An :class:`InputMetadata` per node input: the shape, dtype and device each gradient must have."""
        return tuple(self.metadata_of(i) for i in range(self._num_inputs))

    @property
    def metadata(self):
        """A dict for the user's own data about this node (empty until written; anomaly mode keeps the forward
        traceback here)."""
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
        """The order this node was made in on its thread: of two ready nodes the engine runs the later first."""
        return self.seq_nr

    @property
    def topological_nr(self):
        """The length of the longest path from this node to a leaf's AccumulateGrad (0 for that node)."""
        return self.topo_nr

    @property
    def num_inputs(self):
        """How many gradients the node takes: the number of outputs of its forward op."""
        return self._num_inputs

    def register_hook(self, fn, /):
        """Register ``fn(grad_inputs, grad_outputs)`` to run after this node.

        ``grad_outputs`` are the gradients the node received (one per input
        of the node, i.e. per output of the forward op) and ``grad_inputs``
        those it computed (one per input of the forward op). The hook may
        return a tuple replacing ``grad_inputs``, or None to keep them.
        torch's ``Node.register_hook``.

        Parameters
        ----------
        fn : callable
            ``fn(grad_inputs, grad_outputs) -> tuple or None``.

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` unregisters the hook.

        Raises
        ------
        TypeError
            ``fn`` is not callable.

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> y = (x * 3).sum()
        >>> mul = y.grad_fn.next_functions[0][0]
        >>> handle = mul.register_hook(lambda gi, go: (gi[0] * 10, gi[1]))
        >>> y.backward()
        >>> x.grad
        tensor([30., 30.])
        >>> handle.remove()
        """
        _trace_break("Node.register_hook", self)
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

        ``grad_outputs`` are the gradients the node is about to take. The
        hook may return a tuple replacing them, or None to keep them.
        torch's ``Node.register_prehook``.

        Parameters
        ----------
        fn : callable
            ``fn(grad_outputs) -> tuple or None``.

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` unregisters the hook.

        Raises
        ------
        TypeError
            ``fn`` is not callable.

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> y = (x * 3).sum()
        >>> handle = y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        >>> y.backward()
        >>> x.grad
        tensor([6., 6.])
        >>> handle.remove()
        """
        _trace_break("Node.register_prehook", self)
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

    # -- reading the hooks (read-only) -----------------------------------
    # torch's Python Node has no way to list its hooks; these private
    # methods let Python tools (rg.autograd.graph.to_dot) read what the
    # engine will run without reaching into NodeExtras. Each returns a new
    # tuple in registration order (empty when there are none): changing it
    # changes nothing; register and remove hooks through the handles.
    def _pre_hooks(self):
        """The ``fn(grad_outputs)`` of ``register_prehook``, as a tuple."""
        cdef list hooks = self._extra.pre_hooks if self._extra is not None else None
        return tuple(h[1] for h in hooks) if hooks else ()

    def _hooks(self):
        """The ``fn(grad_inputs, grad_outputs)`` of ``register_hook``, as a tuple."""
        cdef list hooks = self._extra.post_hooks if self._extra is not None else None
        return tuple(h[1] for h in hooks) if hooks else ()

    def _tensor_pre_hooks(self):
        """``(input_nr, fn)`` for each ``Tensor.register_hook`` on a tensor whose
        gradient arrives at node input ``input_nr`` (the forward op's output of
        that number). For an AccumulateGrad, the hooks of its leaf (input 0)."""
        cdef list hooks = self.tensor_pre_hooks()
        return tuple((h[1], h[2]) for h in hooks) if hooks else ()

    def _retains_grad_hooks(self):
        """``(input_nr, hook)`` for each output of the forward op that
        ``retain_grad()`` was called on, by input number; the hook stores the
        gradient arriving at that input as the tensor's ``.grad``."""
        cdef dict hooks = self._extra.retains_grad_hooks if self._extra is not None else None
        return tuple(sorted(hooks.items())) if hooks else ()      # input numbers are unique

    def release_saved_variables(self) -> None:
        """Free the arrays this node saved for backward (as after a backward without retain_graph).

        A later backward through the node raises RuntimeError ("Trying to
        backward through the graph a second time").

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor([1., 2.], requires_grad=True)
        >>> y = (x * x).sum()
        >>> y.grad_fn.next_functions[0][0].release_saved_variables()
        >>> y.backward()
        Traceback (most recent call last):
            ...
        RuntimeError: Trying to backward through the graph a second time ...
        """
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
        # torch: a node with one next edge returns its gradient bare
        if len(out) == 1:
            return None if out[0] is None else _wrap_grad_value(out[0])
        return tuple(None if g is None else _wrap_grad_value(g) for g in out)

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def name_(self):
        """The node's name, as :meth:`name` (the form some torch code calls).

        Returns
        -------
        str

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor(2., requires_grad=True)
        >>> (x + 1).grad_fn.name_()
        'AddBackward0'
        """
        return self.name()


cdef class AccumulateGrad(Node):
    """Accumulates the incoming gradient into a leaf's ``.grad``.

    Every leaf that requires grad has one (made when an op first uses it);
    it is where a backward's gradients end. torch's ``AccumulateGrad``.

    Attributes
    ----------
    variable : Tensor
        The leaf whose ``.grad`` it accumulates into.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1., 2.], requires_grad=True)
    >>> y = (w * 2).sum()
    >>> acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    >>> acc.name(), acc.variable is w
    ('AccumulateGrad', True)
    """
    # Its apply takes a lock: two graph tasks on different threads may reach
    # the same leaf at once, and the read-modify-write of ``.grad`` must not
    # interleave (numpy releases the GIL inside large additions).

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
        """The leaf, as :attr:`variable` (the name some torch code reads)."""
        return self.variable
