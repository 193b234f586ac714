# Anomaly mode's records: the forward traceback of each node created, and the
# traceback of each in-place change of a tensor. Part of _ops.pyx.
#
# Everything here runs only while anomaly mode is on (the callers test the
# thread-local C flag `rg_anomaly_mode` first), so it may be slow; it must
# never be called on the hot path unconditionally.

# At most this many in-place tracebacks are kept per version counter (a
# tensor updated in place in a long loop must not grow without bound).
cdef enum:
    _MAX_INPLACE_TRACES = 16


cdef list _format_stack(int skip):
    # torch.fx.traceback.format_stack(): one string per frame, outermost
    # first, without the innermost `skip` frames.
    frames = _traceback.extract_stack()
    if skip:
        frames = frames[:-skip]
    return _traceback.format_list(frames)


cdef void _record_anomaly_trace(Node node) except *:
    # PyTorch's AnomalyMetadata::store_stack: the trace is kept on the node
    # and in node.metadata["traceback_"] (a list of strings, as in torch).
    cdef list stack = _format_stack(0)
    cdef NodeExtras ex = node.extras()
    ex.anomaly_trace = stack
    if ex.metadata is None:
        ex.metadata = {}
    ex.metadata["traceback_"] = stack
    if rg_tls_current_node != NULL:
        # created while the engine ran another node (a create_graph
        # backward): torch keeps that node as metadata["parent_"], and the
        # error report follows the chain ("... induced the previous calculation")
        ex.metadata["parent_"] = <Node>rg_tls_current_node


cdef void _record_inplace_trace(VersionCounter vc) except *:
    # Called just before an in-place change bumps `vc`: the version it is
    # about to leave is the key (a later failing save check finds the first
    # change after the version it saved).
    if vc._anomaly_traces is None:
        vc._anomaly_traces = {}
    elif len(vc._anomaly_traces) >= _MAX_INPLACE_TRACES and vc.version not in vc._anomaly_traces:
        del vc._anomaly_traces[next(iter(vc._anomaly_traces))]
    vc._anomaly_traces[vc.version] = "".join(_format_stack(0))


cdef str _inplace_trace_note(VersionCounter vc, Py_ssize_t saved_version):
    # The part of the "modified by an inplace operation" error that says
    # where the first in-place change after the save happened ("" when no
    # traceback was recorded: anomaly mode was off during that change).
    cdef dict traces = vc._anomaly_traces
    if not traces:
        return ""
    later = [v for v in traces if v >= saved_version]
    if not later:
        return ""
    v = min(later)
    return (f"\nThe in-place operation that modified it (version {v} -> {v + 1}) was called "
            f"from (anomaly mode traceback, most recent call last):\n{traces[v]}")
