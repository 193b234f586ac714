# retrograd-core's ABI layer: the ONE header other distributions cimport.
# Implemented by abi.pyx: its classes and these functions, nothing else (the
# implementation is the private module _ops; docs/design.md, "Core's modules").
#
# Rules (why: docs/design.md, "The ABI"; how to bump: README, "The ABI:
# bumping it and the golden file"):
# 1. Within an ABI major, free function signatures are frozen (add a `_v2`
#    rather than change one); class fields and cdef methods are append-only.
#    Bump RG_ABI_MINOR for every addition, RG_ABI_MAJOR for anything else.
# 2. No other distribution subclasses a class declared here: appending a
#    field to a base silently corrupts a foreign subclass's fields, and a new
#    method shifts its vtable. Concrete node types live in core.
# 3. Every consumer compares, at import and before using any core type or
#    function, core's running (major, minor) with the pair it was compiled
#    against (the constants below) and raises ImportError naming both:
#    import_core() below, the first statement of its compiled module.
#    Cython's own size check only warns.
# 4. tests/abi/abi_golden.json records this layer, with the contract of
#    every slot and function (the comment above it); tests fail on a
#    removal or a change, a changed contract included, and on an addition
#    without a minor bump.
#
# Fields are private to core unless the comment says "ABI": consumers read
# and write only those, and only as documented.

from libc.stdint cimport uint64_t, int64_t
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer

cdef enum:
    RG_ABI_MAJOR = 1
    RG_ABI_MINOR = 8

# Device codes. A device is (type, index); virtual CPU devices (cpu:1, ...)
# are CPU arrays whose graph nodes run on their own engine worker thread.
cdef enum:
    RG_DEV_CPU = 0
    RG_DEV_CUDA = 1


cdef class VersionCounter:
    # Shared by a tensor, its views and its detach()es; bumped by every
    # in-place change. ABI: read `version`.
    cdef public Py_ssize_t version
    cdef dict _anomaly_traces           # anomaly mode: {version before an in-place op: its traceback}, or None


cdef class Device:
    # ABI: `type` (RG_DEV_*), `index` (-1 means the default device).
    cdef readonly int type
    cdef readonly int index
    cdef int key(self)     # one small int per device; engine queue index


cdef class Edge:
    # (node, input_nr): where a gradient flows. ABI: both fields.
    cdef readonly Node function
    cdef readonly int input_nr


cdef class InputMetadata:
    # What the engine knows of one input of a node (one output of the forward
    # op): the shape, dtype and device of the gradient it must receive.
    cdef readonly tuple shape
    cdef readonly object dtype
    cdef readonly Device device
    cdef readonly bint is_cupy
    # ABI 1.4: the CUDA stream (a cupy.cuda.Stream) that was current when the
    # forward op made this output; its backward runs there (the engine's
    # stream semantics, as torch's). None for CPU arrays. Read only.
    cdef readonly object stream


cdef class Tensor:
    # Invariant: `_array` is a numpy.ndarray or cupy.ndarray, never a copy
    # of the user's array. A leaf has `_grad_fn is None`.
    cdef readonly object _array         # ABI: the data
    cdef Device _device                 # ABI
    cdef bint _requires_grad            # leaves only; a non-leaf requires grad iff it has a grad_fn
    cdef Node _grad_fn                  # ABI
    cdef int _output_nr                 # ABI: which output of _grad_fn this is
    cdef object _grad                   # Tensor or None
    cdef VersionCounter _version_counter
    cdef object _grad_accumulator       # weakref to this leaf's AccumulateGrad
    cdef Edge _edge_cache               # gradient edge of a non-leaf, built on first use
    cdef list _hooks                    # tensor hooks registered before a grad_fn exists (leaves)
    cdef list _post_acc_hooks           # post-accumulate-grad hooks (leaves)
    cdef bint _retains_grad
    cdef Tensor _base                   # the tensor this is a view of, or None
    cdef object _fw_grads               # forward-grad slot storage (forward_ad)
    cdef bint _is_inference
    cdef object _name                   # debugging name (Node errors), or None
    cdef object __weakref__
    cdef Py_ssize_t _view_version       # views: the version when their grad_fn was last derived from the base

    cdef Edge gradient_edge(self)
    cdef Node grad_accumulator(self)
    cdef bint needs_grad(self)
    cdef _set_requires_grad(self, bint value)


cdef class NodeExtras:
    # What few nodes have, kept out of Node so that the common node stays
    # small (a graph may hold millions) and the engine checks one field.
    # Consumers reach the fields only through the rg_node_* accessors below.
    cdef list pre_hooks                 # node pre-hooks: (handle_id, fn(grad_outputs))
    cdef list post_hooks                # node post-hooks: (handle_id, fn(grad_inputs, grad_outputs))
    cdef list tensor_pre_hooks          # (handle_id, input_nr, fn(grad))
    cdef dict retains_grad_hooks        # input_nr -> fn(grad)
    cdef dict metadata
    cdef object anomaly_trace           # forward traceback (anomaly mode), or None
    cdef tuple more_metadata            # InputMetadata of node inputs 1.., or None
    cdef tuple more_edges               # flat (fn, nr) pairs of next edges 2.., or None
    cdef dict fw_grads                  # forward AD: {id(saved array): its tensor's _fw_grads}, or None


cdef class Node:
    # Invariant: a node's apply never runs concurrently with itself inside one
    # graph task; AccumulateGrad also locks across graph tasks.
    #
    # Next edges: edge i, (rg_next_fn(n, i), rg_next_nr(n, i)), receives the
    # gradient for the forward op's i-th input (fn None where that input needs
    # no gradient). Edges 0 and 1 are stored inline (`_fn0/_nr0`,
    # `_fn1/_nr1`), edges 2.. as flat pairs in `_extra.more_edges`: nearly
    # every op has one or two inputs, and a graph may hold millions of nodes,
    # so a tuple (or Edge objects) per node would cost an allocation and ~60
    # bytes. For the same reason input 0's metadata is one shared, immutable
    # InputMetadata (`_meta0`; equal metadata is interned), and the rest of
    # the inputs' is in `_extra.more_metadata`; see Node.metadata_of().
    cdef Node _fn0                      # ABI (read through rg_next_fn)
    cdef Node _fn1                      # ABI
    cdef InputMetadata _meta0           # ABI: input 0's metadata, or None (no inputs)
    cdef NodeExtras _extra              # hooks, metadata dict, anomaly trace, edges and metadata past the first; or None
    cdef uint64_t seq_nr                # ABI
    cdef uint64_t topo_nr               # ABI: greater than every child's
    cdef int _num_edges                 # ABI: number of next edges
    cdef int _num_inputs                # ABI: number of node inputs
    cdef unsigned short _nr0            # ABI (read through rg_next_nr)
    cdef unsigned short _nr1            # ABI
    cdef char _released                 # saved variables were freed
    cdef object __weakref__

    # ABI: run the node. `grads` holds one gradient per node input: an
    # ndarray (plain backward) or a Tensor (create_graph), or None. Returns
    # one gradient (or None) per next edge.
    cdef list apply(self, list grads, bint create_graph)
    cdef void release_variables(self)
    cdef void set_next_edges(self, tuple edges)   # flat (fn, nr) pairs; also sets topo_nr
    cdef int add_input_metadata(self, object array, Device device) except -1
    cdef InputMetadata metadata_of(self, int i)
    cdef NodeExtras extras(self)        # created on first use
    cdef list tensor_pre_hooks(self)    # list of (handle_id, input_nr, fn), or None
    cpdef str name(self)


# The node edge i of `n` leads to (None: no gradient flows there), and
# which input of that node it feeds. 0 <= i < n._num_edges.
cdef inline Node rg_next_fn(Node n, int i):
    if i == 0:
        return n._fn0
    if i == 1:
        return n._fn1
    return <Node>n._extra.more_edges[2 * (i - 2)]


# (see rg_next_fn)
cdef inline int rg_next_nr(Node n, int i):
    if i == 0:
        return n._nr0
    if i == 1:
        return n._nr1
    return <int>n._extra.more_edges[2 * (i - 2) + 1]


cdef class AccumulateGrad(Node):
    # The node behind a leaf: accumulates into `variable.grad`. ABI: read
    # `variable` (the leaf; strong reference, the leaf holds this weakly).
    cdef readonly Tensor variable
    cdef object _lock


cdef class SavedVariable:
    # A tensor saved for backward: its data and version at save time. An
    # output is saved without its grad_fn (no reference cycle); unpack()
    # rebuilds it from the node that owns it.
    cdef object _data
    cdef VersionCounter _version_counter
    cdef Py_ssize_t _saved_version
    cdef Tensor _leaf                   # leaves: the tensor itself
    cdef Node _grad_fn                  # inputs that are non-leaves
    cdef int _output_nr
    cdef bint _is_output
    cdef bint _requires_grad
    cdef Device _device
    cdef bint _was_defined
    cdef object _packed                 # saved-tensor hooks' packed value
    cdef object _unpack_hook
    cdef object unpack(self, Node owner, bint as_tensor)
    cdef void reset(self)


# ---------------------------------------------------------------------------
# Slots: how optional distributions plug into core without core importing
# them. Each is a C global in core; an empty slot costs one branch.
#
# Every slot type and function below has its contract in the comment right
# above it: what it receives, returns and may do. The golden file records
# the contracts (tests/abi/abi_golden.py): a change of meaning under an
# unchanged signature is a new slot or function (or a new major), never a
# silent minor change. A contract whose meaning changed since ABI 1.0 says
# `(semantics N)`.

# Engine slot: run a backward. roots: tuple of Edge; grads: tuple (one per
# root, arrays or Tensors); inputs: tuple of Edge whose gradients to capture
# (autograd.grad) or to restrict accumulation to (backward(inputs=)).
# Returns the captured gradients (a list) or None.
ctypedef object (*rg_engine_execute_fn)(tuple roots, tuple grads, bint keep_graph,
                                        bint create_graph, tuple inputs,
                                        bint accumulate_grad) except *

# Forward-grad slot (forward_ad), (semantics 2). Called after an op's
# forward when a dual level is active, with the op name, its arguments
# exactly as the op got them (tensors and plain values), its outputs, and
# `attrs`: the op's JVP, a callable (args, tangents, outputs) -> tuple of
# output tangents (or None when all are zero), where `tangents` has one entry
# per argument (a Tensor or None; a list of them for a tensor-list
# argument). Core also calls it with op "_inplace", args (self, res),
# outputs (self,) and attrs None after `res` (computed out of place) was
# written into `self` by an in-place op, and with op "_snapshot", args
# (self,), outputs (copy,) when it copies a tensor before an in-place op.
# The consumer registers it only while a level is active
# (rg_register_forward_grad(NULL) empties the slot). Semantics 1 (ABI 1.1)
# passed no JVP in `attrs` and made no "_inplace"/"_snapshot" calls; ABI 1.2
# changed that without a new slot, before contracts were recorded.
ctypedef int (*rg_forward_grad_fn)(str op, tuple inputs, tuple outputs,
                                   object attrs) except -1

# Op-event slot (profiler): enter(name, sequence_nr, inputs) runs before an
# op (or a composite, or a node the engine runs) and returns a token that
# exit(token) receives after it, also when it raised.
ctypedef object (*rg_op_enter_fn)(str name, uint64_t sequence_nr, tuple inputs) except *
ctypedef int (*rg_op_exit_fn)(object token) except -1

# Fill a slot (NULL empties it). The last registration wins; core calls the
# slot on whichever thread runs the op or the backward.
cdef int rg_register_engine(rg_engine_execute_fn fn) except -1
cdef int rg_register_forward_grad(rg_forward_grad_fn fn) except -1
cdef int rg_register_op_events(rg_op_enter_fn enter, rg_op_exit_fn exit) except -1


# ---------------------------------------------------------------------------
# Free functions (frozen signatures within an ABI major).

# A new leaf Tensor around `array` (a numpy or cupy ndarray) on `device`,
# without a copy.
cdef Tensor rg_wrap(object array, Device device)
# A new non-leaf Tensor: output `output_nr` of `grad_fn`.
cdef Tensor rg_wrap_with_grad_fn(object array, Device device, Node grad_fn, int output_nr)
# This thread's grad mode (no_grad / enable_grad), read and set.
cdef bint rg_grad_enabled() noexcept nogil
cdef void rg_set_grad_enabled(bint enabled) noexcept nogil
# The next sequence number of a node (process-wide, increasing).
cdef uint64_t rg_next_sequence_nr() noexcept nogil
# Whether this thread is in anomaly mode (detect_anomaly).
cdef bint rg_anomaly_enabled() noexcept nogil
# The CPU device (cpu, index -1), shared.
cdef Device rg_cpu_device()
# How many virtual CPU devices (cpu:1, ...) are configured.
cdef int rg_num_virtual_cpu_devices() noexcept
# A zero array of the shape, dtype and device `meta` describes.
cdef object rg_zeros_like_metadata(InputMetadata meta)
# `array` summed over its broadcast dims down to `shape` (a gradient
# reduced to its input's shape); `array` itself when they already agree.
cdef object rg_sum_to(object array, tuple shape)

# Anomaly mode (thread-local): the calling thread's state as RG_ANOMALY_*
# bits (0 when off), which the engine records per graph task and sets on the
# device workers that run its nodes.
cdef enum:
    RG_ANOMALY_ENABLED = 1
    RG_ANOMALY_CHECK_NAN = 2
    RG_ANOMALY_CHECK_INF = 4

# Anomaly mode (thread-local): the calling thread's RG_ANOMALY_* bits, read
# and set.
cdef int rg_anomaly_flags() noexcept nogil
cdef void rg_set_anomaly_flags(int flags) noexcept nogil

# Anomaly mode: the engine sets the node it runs on this thread (borrowed;
# NULL outside apply) so that nodes created meanwhile (create_graph) know
# their parent. Returns the previous value, which the engine restores.
cdef void* rg_exchange_current_node(void* node) noexcept nogil

# Op-event slot, continued (profiler; see _op_events.pxi): the outputs
# callback receives an op's outputs just before its exit (profile_memory).
ctypedef int (*rg_op_outputs_fn)(object token, object outputs) except -1
cdef int rg_register_op_outputs(rg_op_outputs_fn fn) except -1

# Node events (the engine reports each node it runs): rg_op_events_active()
# says whether a profile records, and only then does the engine call
# rg_op_event_enter (sequence_nr: the node's, UINT64_MAX for AccumulateGrad;
# inputs: the gradients, or None) and rg_op_event_exit (outputs: the node's
# gradients, or None).
cdef bint rg_op_events_active() noexcept nogil
cdef object rg_op_event_enter(str name, uint64_t sequence_nr, tuple inputs)
cdef int rg_op_event_exit(object token, object outputs) except -1


# ---------------------------------------------------------------------------
# ABI 1.3: accessors. What other distributions need of core's objects, with
# the rule for each; nothing else of core's is theirs to touch (the seam test,
# tests/abi/test_seam.py, fails on any other use).

# The handshake. Every consumer calls it first thing at import (its module
# body's first statement): it raises ImportError, naming both versions and
# what to do, unless the running core has this header's major and at least
# its minor. Only compile-time constants are compiled in, so it is safe on
# any core.
cdef inline int import_core(str consumer) except -1:
    import retrograd.core
    retrograd.core.check_abi(consumer, (RG_ABI_MAJOR, RG_ABI_MINOR), retrograd.core.ABI_VERSION)
    return 0


# Looking up a core function newer than the consumer's floor at run time:
# the address of exported function `name` if its capsule's signature (the C
# signature Cython records, as in tests/abi/abi_golden.json "functions") is
# `signature`; NULL if this core has no such function; ImportError if it has
# one of another signature (calling through it would corrupt the stack).
cdef inline void* rg_core_function(str name, str signature) except? NULL:
    import retrograd.core.abi as core_abi
    cap = getattr(core_abi, "__pyx_capi__", {}).get(name)
    if cap is None:
        return NULL
    found = (<bytes>PyCapsule_GetName(cap)).decode()
    if found != signature:
        raise ImportError(f"retrograd-core's {name} has the C signature {found!r}, not "
                          f"{signature!r} as this extension was compiled for: rebuild it "
                          "against the installed retrograd-core")
    return PyCapsule_GetPointer(cap, PyCapsule_GetName(cap))


# Batched backward (grad(..., is_grads_batched=True)): a second engine slot.
# Every gradient carries a leading batch dim of `batch_size` (> 0); returns
# the captured gradients of `inputs` (never accumulates into .grad).
ctypedef object (*rg_engine_execute_batched_fn)(tuple roots, tuple grads, bint keep_graph,
                                                bint create_graph, tuple inputs,
                                                Py_ssize_t batch_size) except *
cdef int rg_register_engine_batched(rg_engine_execute_batched_fn fn) except -1

# How a node runs in a batched backward: RG_BATCH_SAFE, its apply takes the
# batched gradients as they are (its formulas only broadcast against grad);
# RG_BATCH_RULE, rg_apply_batched runs its batching formulas; RG_BATCH_LOOP,
# the engine applies it once per batch element and stacks the results.
cdef enum:
    RG_BATCH_LOOP = 0
    RG_BATCH_SAFE = 1
    RG_BATCH_RULE = 2

# How `node` runs in a batched backward: one of RG_BATCH_* above.
cdef int rg_node_batching(Node node) except -1
# RG_BATCH_RULE nodes only: `grads` as for Node.apply, each with the batch
# dim in front; returns one batched gradient (or None) per next edge, broadcast
# dims left for the engine to sum away (keeping the batch dim).
cdef list rg_apply_batched(Node node, list grads, bint create_graph)
# Whether op's forward (JVP) formula only broadcasts tangents against its
# primals (the table's `batched: true`): forward AD runs a batched level's
# tangents through it once instead of once per batch element.
cdef bint rg_op_batched(str op) except -1

# The GraphRoot node a backward starts from: one input per root edge,
# passing `grads` (one per root) through unchanged. Its next edges are `roots`.
cdef Node rg_graph_root(tuple roots, tuple grads)

# Make `view` a view of `base` for autograd (shared version counter, _base
# set to base's root), as core's own view ops do; view's array must already
# share base's memory.
cdef int rg_set_view_of(Tensor view, Tensor base) except -1

# This thread's saved-tensor hook stack as an opaque value, and setting it
# back: the engine restores the caller's stack after running user code on
# a thread (hooks entered inside a backward do not outlive it).
cdef object rg_saved_tensors_hooks_state()
cdef int rg_set_saved_tensors_hooks_state(object state) except -1


# Tensor: tangent storage (forward AD only), read and set. A dict {level
# key: tangent Tensor} or None; forward_ad owns its contents, core only
# carries it (and drops it with the tensor).
cdef inline object rg_forward_grads(Tensor t):
    return t._fw_grads
cdef inline void rg_set_forward_grads(Tensor t, object grads):
    t._fw_grads = grads


# Tensor: record an in-place write to t's data made outside an op (forward
# AD writing a tangent in place): bumps the version counter t shares with
# its views and detach()es, so saved copies of it are known stale.
cdef inline void rg_bump_version(Tensor t):
    t._version_counter.version += 1


# Tensor: the tensor `t` is a view of (its root base), or None. Read only.
cdef inline Tensor rg_view_base(Tensor t):
    return t._base


# Node extras, read only (the engine). rg_node_has_extras: whether the node
# has any (nearly every node has none: one test before the others). The
# others return None when the node has none: pre_hooks, (handle_id,
# fn(grad_outputs) -> new grad_outputs or None) in registration order;
# post_hooks, (handle_id, fn(grad_inputs, grad_outputs) -> new grad_inputs
# or None); retains_grad_hooks, {input_nr: fn(grad)} storing .grad of the
# non-leaf whose gradient arrives at that input (run after the tensor
# pre-hooks); anomaly_trace, the forward's traceback recorded in anomaly
# mode (a list of formatted frames); metadata, the user's Node.metadata.
cdef inline bint rg_node_has_extras(Node n) noexcept:
    return n._extra is not None
cdef inline list rg_node_pre_hooks(Node n):
    return n._extra.pre_hooks if n._extra is not None else None
cdef inline list rg_node_post_hooks(Node n):
    return n._extra.post_hooks if n._extra is not None else None
cdef inline dict rg_node_retains_grad_hooks(Node n):
    return n._extra.retains_grad_hooks if n._extra is not None else None
cdef inline object rg_node_anomaly_trace(Node n):
    return n._extra.anomaly_trace if n._extra is not None else None
cdef inline dict rg_node_metadata(Node n):
    return n._extra.metadata if n._extra is not None else None


# Forward AD: the tangents of the tensors a node saved, {id(saved array):
# that tensor's forward grads}, for a create_graph backward (forward over
# reverse). Created on first use; forward_ad writes it, core reads it.
cdef inline dict rg_node_saved_forward_grads(Node n):
    cdef NodeExtras x = n.extras()
    if x.fw_grads is None:
        x.fw_grads = {}
    return x.fw_grads


# Whether two numpy.ndarrays (both must be exactly that type) have the same
# shape, compared in C without building shape tuples.
cdef bint rg_same_dims(object a, object b) noexcept


# ---------------------------------------------------------------------------
# ABI 1.5: the tracing slot (retrograd-compile records a function's ops once
# and replays them as a program).

# What a tracing-slot call reports (its `kind` argument).
cdef enum:
    RG_TRACE_OP = 0
    RG_TRACE_INPLACE_BEGIN = 1
    RG_TRACE_INPLACE = 2
    RG_TRACE_RANDOM = 3
    RG_TRACE_BREAK = 4
    RG_TRACE_COMPOSITE_BEGIN = 5
    RG_TRACE_COMPOSITE_END = 6

# Tracing slot (compile), (semantics 1). While filled, core calls it on the
# thread that runs the op; `kind` says what happened:
# RG_TRACE_OP, after an op of derivatives.yaml ran (views included): `op` its
# table name, `inputs` its arguments exactly as the op got them (tensors and
# plain values), `outputs` its results (a tuple of Tensors), `attrs` the op's
# Python function (calling it with `inputs` runs the op again), or None when
# the op has none. Also op "_snapshot", inputs (self,), outputs (copy,),
# attrs None, when an in-place op copies self's old value (for its backward).
# RG_TRACE_INPLACE_BEGIN, before an in-place op (`x.add_(y)`, `x += y`,
# `x[i] = v`, every generated `<op>_`): `op` its method name, `inputs`
# (self, *args), outputs (), attrs None; the ops it runs inside are reported
# too, and a tracer that records the in-place op as one step ignores them.
# RG_TRACE_INPLACE, after it: same `op` and `inputs`, outputs (self,), and
# `attrs` the out-of-place function whose result `attrs(*inputs)` is self's
# new value (self given its old value).
# RG_TRACE_RANDOM, after a random factory (rand, randn, randint, randperm,
# rand_like, randn_like) drew a tensor: `op` its name, inputs (), outputs
# (the tensor,), `attrs` a callable without arguments that draws a fresh
# tensor of the same shape, dtype and device from the same generator.
# RG_TRACE_BREAK, before data-dependent Python reads a tensor or the graph
# is changed from Python: `op` is "item", "tolist", "numpy", "__array__",
# "__bool__", "__iter__", "register_hook", "register_post_accumulate_grad_hook",
# "retain_grad", "Node.register_hook", "Node.register_prehook" or
# "autograd.Function:<class name>"; inputs (the tensor or node,), outputs
# (), attrs None. Also op "backward" or "grad", inputs the root edges, before
# a backward whose formulas run on arrays (backward(), or grad() without
# create_graph, or batched): only a create_graph grad() runs them as ops.
# Raising from the slot stops that action with the exception.
# RG_TRACE_COMPOSITE_BEGIN / RG_TRACE_COMPOSITE_END, around a composite op
# (`op` its torch name, "aten::linear"), whose inner ops are reported as
# RG_TRACE_OP; inputs the composite's positional arguments, outputs () at
# BEGIN and its results (a tuple) at END (() when it raised).
# The slot is a C global: a consumer that traces one thread ignores calls
# from the others. Registering NULL empties it.
ctypedef int (*rg_trace_fn)(int kind, str op, tuple inputs, tuple outputs,
                            object attrs) except -1
cdef int rg_register_trace(rg_trace_fn fn) except -1


# ---------------------------------------------------------------------------
# ABI 1.6: tensors made while tracing.

cdef enum:
    RG_TRACE_NEW = 7
    RG_TRACE_FACTORY = 8

# RG_TRACE_NEW, (semantics 1), reported to the tracing slot after core wraps
# an array in a new Tensor (rg.tensor, from_numpy, the factories, Tensor(),
# a gradient the engine makes, an op's result without grad_fn): `op` "",
# inputs (), outputs (the tensor,), attrs None. Not reported: detach() and
# .data, which share their source's array, and results that have a grad_fn
# (ops report those as RG_TRACE_OP). A tracer tells by it the tensors that
# existed before its trace began (read at each call) from those the traced
# code made from data the ops did not compute (which would be baked in).
# RG_TRACE_FACTORY, after a factory whose value depends on its Python
# arguments alone made a tensor that does not require grad (zeros, ones,
# full, empty, arange, linspace, eye, the *_like of these, and the implicit
# ones of a create_graph backward of a scalar): `op` its name, inputs (),
# outputs (the tensor,), `attrs` a callable without arguments that makes a
# fresh tensor of the same value, shape, dtype and device.


# ---------------------------------------------------------------------------
# ABI 1.7: array-function nodes (compile's CompiledFunctionBackward).

# Whether saved-tensor hooks (autograd.graph.saved_tensors_hooks) are active
# on this thread. An array-function node saves values out of their reach: a
# caller that would make one takes a path the hooks see while this is true.
cdef bint rg_saved_tensors_hooks_active() noexcept nogil

# Record `outputs` (a list of arrays on `device`, computed from `inputs`, a
# tuple of Tensors, by code core does not see) as the results of one node
# named `name`, and return them as Tensors, in order. When grad mode is on
# and an input requires grad, the node has one next edge per input (None
# where that input needs no gradient) and one node input per output; output
# i gets it as grad_fn when `differentiable` is None or differentiable[i] is
# true and its dtype is floating, and is a plain tensor otherwise; else no
# node is made and every result is a plain tensor. The node keeps `inputs`,
# `saved` (a tuple of the arrays its backward reads, or None; the node
# reports them among its saved values) and `state` until it is released.
# A backward through it first checks that no input, and no output whose
# index is in `saved_outputs` (a tuple of ints, or None), changed in place
# since (torch's error, naming `name`), then calls backward(state, saved,
# grads, create_graph, inputs) with `grads` a list of one gradient per
# output (an array, a Tensor under create_graph, or None where none
# arrived), which returns a list or tuple of one gradient per input (an
# array, or a Tensor under create_graph; None where there is none); a
# released node (a backward without retain_graph ran) raises torch's
# "backward through the graph a second time" instead. Making a node
# raises RuntimeError while saved-tensor hooks are active, or for an
# inference tensor input outside inference mode; TypeError for an input
# that is not a Tensor.
cdef list rg_array_function(str name, tuple inputs, list outputs, Device device,
                            tuple differentiable, tuple saved_outputs, tuple saved,
                            object backward, object state)


# ---------------------------------------------------------------------------
# ABI 1.8: the class of a custom Function, for the tracer.

cdef enum:
    RG_TRACE_FUNCTION = 9

# RG_TRACE_FUNCTION, (semantics 1), reported to the tracing slot right before
# the RG_TRACE_BREAK "autograd.Function:<class name>" of a custom Function's
# apply (extending.function_apply): `op` that same "autograd.Function:<class
# name>", inputs the arguments of apply, outputs (), `attrs` the class that
# apply runs. A tracer that records the Function's ops (inlines it) ignores
# the break that follows; one that knows only ABI 1.7 sees the break alone.
