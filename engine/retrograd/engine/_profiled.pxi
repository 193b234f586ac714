# Node events for the profiler (retrograd-profiler). Part of _engine.pyx.
#
# When a profile is active (core's op-event slot is filled), each node the
# engine runs reports two nested events, as torch's engine does:
# "autograd::engine::evaluate_function: <name>" around the node's whole
# evaluation (hooks, apply, checks) and "<name>" around its apply, both with
# the node's sequence number (torch's -1, UINT64_MAX here, for AccumulateGrad,
# which no forward op creates), on the thread that runs the node. Must never
# be reached when no profile is active: _evaluate_function tests
# rg_op_events_active() once per node, and only this path asks _call_function
# for the apply event.

from libc.stdint cimport UINT64_MAX


cdef inline uint64_t _event_sequence_nr(Node node):
    return UINT64_MAX if type(node) is AccumulateGrad else node.seq_nr


cdef list _call_function_profiled(GraphTask gt, Node node, list inputs):
    cdef list outputs
    tok = rg_op_event_enter("autograd::engine::evaluate_function: " + node.name(),
                            _event_sequence_nr(node), None)
    try:
        outputs = _call_function(gt, node, inputs, True)
    finally:
        # Also when the node raised, as torch's RecordFunction ends: the
        # profiler tracks which evaluate_function is open on each thread.
        rg_op_event_exit(tok, None)
    return outputs


cdef list _apply_profiled(Node node, list inputs, bint create_graph):
    cdef list outputs = None
    tok = rg_op_event_enter(node.name(), _event_sequence_nr(node), tuple(inputs))
    try:
        outputs = node.apply(inputs, create_graph)
    finally:
        rg_op_event_exit(tok, tuple(outputs) if outputs is not None else None)
    return outputs
