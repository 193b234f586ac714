# Core ABI entries newer than the oldest core this engine supports (the
# floor of its retrograd-core requirement, ABI 1.1). Part of _engine.pyx.
#
# They are looked up at import in core's exported C API (`__pyx_capi__`, the
# same capsules a cimport resolves) instead of being cimported, so the engine
# still compiles against the 1.1 headers (tests/abi/headers, `nox -s
# old_headers`) and runs on a 1.1 core without the features they serve; on a
# newer core it uses them. Each is NULL when the running core lacks it, and
# every caller tests that first.
#
#   ABI 1.2: rg_exchange_current_node (anomaly mode: parents of nodes made by
#            a create_graph backward); rg_op_events_active, rg_op_event_enter,
#            rg_op_event_exit (profiler node events).

from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer

ctypedef void* (*_exchange_current_node_t)(void*) noexcept nogil
ctypedef bint (*_op_events_active_t)() noexcept nogil
ctypedef object (*_op_event_enter_t)(str, uint64_t, tuple)
ctypedef int (*_op_event_exit_t)(object, object) except -1


cdef void* _core_capi(str name) except? NULL:
    import retrograd.core.abi as _core_abi
    cap = getattr(_core_abi, "__pyx_capi__", {}).get(name)
    if cap is None:
        return NULL
    return PyCapsule_GetPointer(cap, PyCapsule_GetName(cap))


cdef _exchange_current_node_t rg_exchange_current_node = \
    <_exchange_current_node_t>_core_capi("rg_exchange_current_node")
cdef _op_events_active_t _op_events_active_fn = <_op_events_active_t>_core_capi("rg_op_events_active")
cdef _op_event_enter_t rg_op_event_enter = <_op_event_enter_t>_core_capi("rg_op_event_enter")
cdef _op_event_exit_t rg_op_event_exit = <_op_event_exit_t>_core_capi("rg_op_event_exit")


cdef inline bint rg_op_events_active() noexcept nogil:
    return _op_events_active_fn != NULL and _op_events_active_fn()
