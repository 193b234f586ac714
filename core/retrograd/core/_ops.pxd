# Core's implementation module _ops: the ops of derivatives.yaml with all
# they share (argument handling, graph recording, saved tensors, in-place
# and view bookkeeping, formula helpers, custom Functions, forward-AD
# support) and the per-thread autograd state the ops read (grad, inference
# and anomaly mode, the sequence counter, saved-tensor hooks). Private to
# core: no other distribution cimports it (they have abi.pxd).
#
# abi and _ops import each other, by design (docs/design.md, "Core's
# modules"): abi's classes are the ABI, and their methods (Tensor.add,
# AccumulateGrad.apply, ...) call the ops declared here; the ops make and
# read abi's classes and call abi's functions, as any consumer of abi.pxd
# does. Cython resolves both directions when the modules load (abi exports
# its functions before it imports _ops's); `import retrograd.core` always
# loads abi first. This header declares only what abi calls.
#
# Every Node subclass here (the generated backward nodes included) says
# @cython.trashcan(True) itself: Node's, set in abi.pyx, is not seen from
# another module, and without it freeing a long chain of nodes recurses
# once per node until the C stack overflows.

from libc.stdint cimport uint64_t
from retrograd.core.abi cimport (
    VersionCounter, Device, Edge, InputMetadata, Tensor, NodeExtras, Node, AccumulateGrad,
    SavedVariable, rg_engine_execute_fn, rg_forward_grad_fn, rg_op_enter_fn, rg_op_exit_fn,
    rg_op_outputs_fn, rg_engine_execute_batched_fn, rg_next_fn, rg_next_nr,
    rg_zeros_like_metadata, rg_forward_grads, rg_set_forward_grads, rg_bump_version,
    rg_view_base, rg_node_has_extras, rg_node_pre_hooks, rg_node_post_hooks,
    rg_node_retains_grad_hooks, rg_node_anomaly_trace, rg_node_metadata,
    rg_node_saved_forward_grads, rg_same_dims, RG_ABI_MAJOR, RG_ABI_MINOR, RG_DEV_CPU,
    RG_DEV_CUDA, RG_ANOMALY_ENABLED, RG_ANOMALY_CHECK_NAN, RG_ANOMALY_CHECK_INF, RG_BATCH_LOOP,
    RG_BATCH_SAFE, RG_BATCH_RULE, rg_trace_fn, RG_TRACE_OP, RG_TRACE_INPLACE_BEGIN,
    RG_TRACE_INPLACE, RG_TRACE_RANDOM, RG_TRACE_BREAK, RG_TRACE_COMPOSITE_BEGIN,
    RG_TRACE_COMPOSITE_END, RG_TRACE_NEW, RG_TRACE_FACTORY, RG_TRACE_FUNCTION
)

# -- abi.pxd's functions: abi's entry points (_abi_exports.pxi) call these,
#    the implementations, named as the function with a leading underscore
cdef int _rg_register_engine(rg_engine_execute_fn fn) except -1
cdef int _rg_register_forward_grad(rg_forward_grad_fn fn) except -1
cdef int _rg_register_op_events(rg_op_enter_fn enter, rg_op_exit_fn exit) except -1
cdef Tensor _rg_wrap(object array, Device device)
cdef Tensor _rg_wrap_with_grad_fn(object array, Device device, Node grad_fn, int output_nr)
cdef bint _rg_grad_enabled() noexcept nogil
cdef void _rg_set_grad_enabled(bint enabled) noexcept nogil
cdef uint64_t _rg_next_sequence_nr() noexcept nogil
cdef bint _rg_anomaly_enabled() noexcept nogil
cdef Device _rg_cpu_device()
cdef int _rg_num_virtual_cpu_devices() noexcept
cdef object _rg_sum_to(object array, tuple shape)
cdef int _rg_anomaly_flags() noexcept nogil
cdef void _rg_set_anomaly_flags(int flags) noexcept nogil
cdef void* _rg_exchange_current_node(void* node) noexcept nogil
cdef int _rg_register_op_outputs(rg_op_outputs_fn fn) except -1
cdef bint _rg_op_events_active() noexcept nogil
cdef object _rg_op_event_enter(str name, uint64_t sequence_nr, tuple inputs)
cdef int _rg_op_event_exit(object token, object outputs) except -1
cdef int _rg_register_engine_batched(rg_engine_execute_batched_fn fn) except -1
cdef int _rg_node_batching(Node node) except -1
cdef list _rg_apply_batched(Node node, list grads, bint create_graph)
cdef bint _rg_op_batched(str op) except -1
cdef Node _rg_graph_root(tuple roots, tuple grads)
cdef int _rg_set_view_of(Tensor view, Tensor base) except -1
cdef object _rg_saved_tensors_hooks_state()
cdef int _rg_set_saved_tensors_hooks_state(object state) except -1
cdef bint _rg_inference_mode() noexcept nogil
cdef int _rg_register_trace(rg_trace_fn fn) except -1
cdef list _rg_array_function(str name, tuple inputs, list outputs, Device device,
                             tuple differentiable, tuple saved_outputs, tuple saved,
                             object backward, object state)
cdef bint _rg_saved_tensors_hooks_active() noexcept nogil

# _slots.pxi: the tracing slot, for abi's Tensor and Node methods
cdef bint _rg_trace_active() noexcept nogil
cdef int _rg_trace_event(int kind, str op, tuple inputs, tuple outputs, object attrs) except -1

# -- what the methods of abi's classes call, by the file that defines it
# _devices.pxi
cdef Device _parse_device(object spec)

# _graph_support.pxi
cdef InputMetadata _input_metadata(object array, Device device, bint interned)
cdef int _accumulate_grad(Tensor v, object g, bint create_graph) except -1
cdef int _check_post_acc_result(object fn, object res) except -1
cdef AccumulateGrad _make_accumulate_grad(Tensor v)
cdef object _raise_released(Node node)
cdef object _unwrap_grad(object g, bint create_graph)
cdef object _wrap_grad_value(object g)

# _saved_support.pxi
cdef object _note_detached(Node fn, int output_nr)
cdef int _raise_detached() except -1
cdef object _raise_modified(SavedVariable sv, Node owner)
cdef object _sv_unpack_hooked(SavedVariable self, Node owner, bint as_tensor)

# _tensor_args.pxi
cdef object _install_retains_grad_hook(Tensor t)
cdef Tensor _detach_as(Tensor self, type cls)
cdef Tensor _make_subclass(object cls, object data, bint require_grad)
cdef bint _any_needs_grad(object args, object kwargs)
cdef object _arrays_of(object x)
cdef Tensor _as_tensor_arg(object x, str where=*)
cdef object _convert_dtype(Tensor t, object dt)
cdef object _deepcopy_array(object arr, dict memo)
cdef bint _is_device_string(str s)
cdef bint _is_dtype_name(str s)
cdef object _op_add2(object a, object b)
cdef object _op_sub2(object a, object b)
cdef tuple _shape_args(tuple args)
cpdef object _dtype_arg(object dtype, str fn)

# _inplace.pxi
cdef int _check_inplace(Tensor self) except -1
cdef Tensor _commit_inplace(Tensor self, Tensor res, str name)
cdef Tensor _inplace_binary(Tensor self, object other, object op, object ufunc, str name)
cdef Tensor _inplace_call(Tensor self, object fn, tuple args, str name)
cdef Tensor _snapshot(Tensor self)
cdef int _tensor_setitem(Tensor self, object index, object value) except -1

# _copy_slices.pxi
cdef Node _current_grad_fn(Tensor t)

# _ufunc.pxi
cdef object _array_ufunc(object ufunc, str method, tuple inputs, dict kwargs)

# _jvp_support.pxi
cdef Tensor _fw_inplace_untracked(Tensor self, object fn, tuple args, str name)

include "_generated_ops_decls.pxi"    # generated: the op functions (_op_<name>) Tensor's methods call


# -- shared inline helpers

cdef inline VersionCounter _new_vc():
    cdef VersionCounter vc = VersionCounter.__new__(VersionCounter)
    vc.version = 0
    return vc


cdef inline Edge _new_edge(Node fn, int nr):
    cdef Edge e = Edge.__new__(Edge)
    e.function = fn
    e.input_nr = nr
    return e


cdef inline bint _needs(Tensor t):
    # A view requires grad whenever its base does, as torch's
    # DifferentiableViewMeta::requires_grad: a view whose base joined the
    # graph through an in-place op on another view (before its grad_fn is
    # re-derived), or one made under no_grad of a tensor that requires grad.
    # An inference tensor never joins a graph, even with requires_grad set
    # (torch: it has no autograd dispatch keys): ops on it record nothing.
    return t is not None and (t._grad_fn is not None or (t._requires_grad and not t._is_inference) or
                              (t._base is not None and (t._base._grad_fn is not None or
                                                        t._base._requires_grad)))


cdef inline void _fw_attach_saved(Node owner, Tensor t, object data):
    # A saved tensor rebuilt for a create_graph backward gets the tangents
    # its original had when the node saved it.
    cdef NodeExtras x = owner._extra
    if x is not None and x.fw_grads is not None:
        t._fw_grads = (<dict>x.fw_grads).get(id(data))
