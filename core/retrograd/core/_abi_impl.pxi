# What the ABI 1.3 functions of abi.pxd do (their rules are there; abi's
# entry points, _abi_exports.pxi, call these). Part of _ops.pyx. Each wraps
# what core's own code does, so that the engine, forward_ad and the profiler
# never reach into core's private names.

from retrograd.core._fp_errstate cimport _fp_quiet_enter, _fp_quiet_exit


cdef rg_engine_execute_batched_fn _engine_batched_slot = NULL


cdef int _rg_register_engine_batched(rg_engine_execute_batched_fn fn) except -1:
    global _engine_batched_slot
    _engine_batched_slot = fn
    return 0


def _run_batched_backward(tuple roots, tuple grads, bint keep_graph, bint create_graph,
                          tuple inputs, Py_ssize_t batch_size):
    """Hand a validated batched backward to the engine's batched slot (see
    _autograd.py's grad(..., is_grads_batched=True))."""
    if _trace_slot != NULL:
        _trace_slot(RG_TRACE_BREAK, "grad", roots, (), None)     # see _run_backward
    _get_engine()                       # imports the engine, which fills both slots
    if _engine_batched_slot == NULL:
        raise RuntimeError(
            f"grad(..., is_grads_batched=True) needs a {ENGINE_DISTRIBUTION} that supports "
            f"batched backward (core ABI 1.3 or newer); upgrade it "
            f"(pip install -U {ENGINE_DISTRIBUTION})")
    tok = _fp_quiet_enter()
    try:
        return _engine_batched_slot(roots, grads, keep_graph, create_graph, inputs, batch_size)
    finally:
        _fp_quiet_exit(tok)


cdef int _rg_node_batching(Node node) except -1:
    return _node_batching(node)


cdef list _rg_apply_batched(Node node, list grads, bint create_graph):
    cdef list out = _apply_batching_formulas(node, grads, create_graph)
    if out is None:
        raise TypeError(f"{node.name()} has no batching formulas (_rg_node_batching says "
                        f"how to run it in a batched backward)")
    return out


cdef bint _rg_op_batched(str op) except -1:
    return op in _BATCH_SAFE_OPS


cdef Node _rg_graph_root(tuple roots, tuple grads):
    return _make_graph_root(roots, grads)


cdef int _rg_set_view_of(Tensor view, Tensor base) except -1:
    _mark_view(view, base, view._array)
    return 0


cdef object _rg_saved_tensors_hooks_state():
    # (the C count of the thread's stack: no thread-local dict look-up for
    # the empty stack, the state of nearly every backward)
    if rg_tls_saved_hooks == 0:
        return ()
    return tuple(_hooks_stack())


cdef int _rg_set_saved_tensors_hooks_state(object state) except -1:
    global rg_tls_saved_hooks
    _saved_hooks_tls.stack = list(state)
    rg_tls_saved_hooks = len(state)
    return 0


def _node_batching_kind(Node node):
    """'safe', 'rule' or 'loop': _rg_node_batching's answer, for tests."""
    return ("loop", "safe", "rule")[_rg_node_batching(node)]
