# The functions of abi.pxd (their contracts are there). Part of abi.pyx.
#
# abi holds the classes of abi.pxd and these entry points, nothing else: each
# hands its call to the implementation in _ops (named as the function with a
# leading underscore), where the ops that share its state call it directly.
# A test checks that every function of abi.pxd is defined here and that each
# _rg_* of _ops.pxd matches its signature.

from retrograd.core._ops cimport (
    _rg_exchange_current_node,
    _rg_register_engine, _rg_register_forward_grad, _rg_register_op_events, _rg_wrap,
    _rg_wrap_with_grad_fn, _rg_grad_enabled, _rg_set_grad_enabled, _rg_next_sequence_nr,
    _rg_anomaly_enabled, _rg_cpu_device, _rg_num_virtual_cpu_devices, _rg_sum_to,
    _rg_anomaly_flags, _rg_set_anomaly_flags, _rg_register_op_outputs, _rg_op_events_active,
    _rg_op_event_enter, _rg_op_event_exit, _rg_register_engine_batched, _rg_node_batching,
    _rg_apply_batched, _rg_op_batched, _rg_graph_root, _rg_set_view_of,
    _rg_saved_tensors_hooks_state, _rg_set_saved_tensors_hooks_state, _rg_register_trace,
    _rg_array_function, _rg_saved_tensors_hooks_active,
)


cdef int rg_register_engine(rg_engine_execute_fn fn) except -1:
    return _rg_register_engine(fn)


cdef int rg_register_forward_grad(rg_forward_grad_fn fn) except -1:
    return _rg_register_forward_grad(fn)


cdef int rg_register_op_events(rg_op_enter_fn enter, rg_op_exit_fn exit) except -1:
    return _rg_register_op_events(enter, exit)


cdef Tensor rg_wrap(object array, Device device):
    return _rg_wrap(array, device)


cdef Tensor rg_wrap_with_grad_fn(object array, Device device, Node grad_fn, int output_nr):
    return _rg_wrap_with_grad_fn(array, device, grad_fn, output_nr)


cdef bint rg_grad_enabled() noexcept nogil:
    return _rg_grad_enabled()


cdef void rg_set_grad_enabled(bint enabled) noexcept nogil:
    _rg_set_grad_enabled(enabled)


cdef uint64_t rg_next_sequence_nr() noexcept nogil:
    return _rg_next_sequence_nr()


cdef bint rg_anomaly_enabled() noexcept nogil:
    return _rg_anomaly_enabled()


cdef Device rg_cpu_device():
    return _rg_cpu_device()


cdef int rg_num_virtual_cpu_devices() noexcept:
    return _rg_num_virtual_cpu_devices()


cdef object rg_sum_to(object array, tuple shape):
    return _rg_sum_to(array, shape)


cdef int rg_anomaly_flags() noexcept nogil:
    return _rg_anomaly_flags()


cdef void rg_set_anomaly_flags(int flags) noexcept nogil:
    _rg_set_anomaly_flags(flags)


cdef void* rg_exchange_current_node(void* node) noexcept nogil:
    return _rg_exchange_current_node(node)


cdef int rg_register_op_outputs(rg_op_outputs_fn fn) except -1:
    return _rg_register_op_outputs(fn)


cdef bint rg_op_events_active() noexcept nogil:
    return _rg_op_events_active()


cdef object rg_op_event_enter(str name, uint64_t sequence_nr, tuple inputs):
    return _rg_op_event_enter(name, sequence_nr, inputs)


cdef int rg_op_event_exit(object token, object outputs) except -1:
    return _rg_op_event_exit(token, outputs)


cdef int rg_register_engine_batched(rg_engine_execute_batched_fn fn) except -1:
    return _rg_register_engine_batched(fn)


cdef int rg_node_batching(Node node) except -1:
    return _rg_node_batching(node)


cdef list rg_apply_batched(Node node, list grads, bint create_graph):
    return _rg_apply_batched(node, grads, create_graph)


cdef bint rg_op_batched(str op) except -1:
    return _rg_op_batched(op)


cdef Node rg_graph_root(tuple roots, tuple grads):
    return _rg_graph_root(roots, grads)


cdef int rg_set_view_of(Tensor view, Tensor base) except -1:
    return _rg_set_view_of(view, base)


cdef object rg_saved_tensors_hooks_state():
    return _rg_saved_tensors_hooks_state()


cdef int rg_set_saved_tensors_hooks_state(object state) except -1:
    return _rg_set_saved_tensors_hooks_state(state)


cdef bint rg_same_dims(object a, object b) noexcept:
    cdef int nd = _cnp.PyArray_NDIM(<_cnp.ndarray>a), k
    cdef _cnp.npy_intp* da
    cdef _cnp.npy_intp* db
    if nd != _cnp.PyArray_NDIM(<_cnp.ndarray>b):
        return False
    da = _cnp.PyArray_DIMS(<_cnp.ndarray>a)
    db = _cnp.PyArray_DIMS(<_cnp.ndarray>b)
    for k in range(nd):
        if da[k] != db[k]:
            return False
    return True


cdef int rg_register_trace(rg_trace_fn fn) except -1:
    return _rg_register_trace(fn)


cdef list rg_array_function(str name, tuple inputs, list outputs, Device device,
                            tuple differentiable, tuple saved_outputs, tuple saved,
                            object backward, object state):
    return _rg_array_function(name, inputs, outputs, device, differentiable, saved_outputs,
                              saved, backward, state)


cdef bint rg_saved_tensors_hooks_active() noexcept nogil:
    return _rg_saved_tensors_hooks_active()
