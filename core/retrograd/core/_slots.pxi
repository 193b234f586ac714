# The slots other distributions fill (see abi.pxd). Part of _ops.pyx.
# Core never imports the engine, forward_ad or the profiler at module load:
# each registers itself here when imported. An empty slot is a NULL pointer,
# so the hot path pays one branch.

from retrograd.core._fp_errstate cimport _fp_quiet_enter, _fp_quiet_exit


cdef rg_engine_execute_fn _engine_slot = NULL
cdef rg_forward_grad_fn _forward_grad_slot = NULL
cdef rg_op_enter_fn _op_enter_slot = NULL
cdef rg_op_exit_fn _op_exit_slot = NULL
cdef rg_trace_fn _trace_slot = NULL


cdef int _rg_register_engine(rg_engine_execute_fn fn) except -1:
    global _engine_slot
    _engine_slot = fn
    return 0


cdef int _rg_register_forward_grad(rg_forward_grad_fn fn) except -1:
    global _forward_grad_slot
    _forward_grad_slot = fn
    return 0


cdef int _rg_register_op_events(rg_op_enter_fn enter, rg_op_exit_fn exit) except -1:
    global _op_enter_slot, _op_exit_slot
    _op_enter_slot = enter
    _op_exit_slot = exit
    return 0


cdef int _rg_register_trace(rg_trace_fn fn) except -1:
    global _trace_slot
    _trace_slot = fn
    return 0


cdef bint _rg_trace_active() noexcept nogil:
    return _trace_slot != NULL


cdef int _rg_trace_event(int kind, str op, tuple inputs, tuple outputs, object attrs) except -1:
    # Callers outside _ops (abi's Tensor methods) check _rg_trace_active()
    # first; the slot is checked again here, as it may have just emptied.
    if _trace_slot != NULL:
        _trace_slot(kind, op, inputs, outputs, attrs)
    return 0


# The Python function of each op (what a tracer calls to run it again),
# looked up by name in this module once; None for an op without one.
cdef dict _trace_replays = {}


cdef int _trace_op(str name, tuple inputs, tuple outputs) except -1:
    fn = _trace_replays.get(name, _trace_replays)
    if fn is _trace_replays:
        fn = globals().get(name)
        if not callable(fn):
            fn = None
        _trace_replays[name] = fn
    if _trace_slot != NULL:
        _trace_slot(RG_TRACE_OP, name, inputs, outputs, fn)
    return 0


# The kinds core's Python-level code reports (abi.pxd's values, for _creation
# and _autograd)
_TRACE_RANDOM = RG_TRACE_RANDOM
_TRACE_FACTORY = RG_TRACE_FACTORY


def _trace_python_event(int kind, str op, tuple inputs, tuple outputs, attrs):
    """Report `kind` to the tracing slot if it is filled (core's Python-level
    code: the random factories); a no-op otherwise."""
    if _trace_slot != NULL:
        _trace_slot(kind, op, inputs, outputs, attrs)


def _trace_slot_filled():
    """Whether the tracing slot is filled (core's Python-level code asks before
    building what it would report)."""
    return _trace_slot != NULL


def _slot_status():
    """Which slots are filled: {'engine': bool, 'forward_grad': bool, 'op_events': bool, 'trace': bool}."""
    return {
        "engine": _engine_slot != NULL,
        "forward_grad": _forward_grad_slot != NULL,
        "op_events": _op_enter_slot != NULL,
        "trace": _trace_slot != NULL,
    }


ENGINE_DISTRIBUTION = "retrograd-engine"


cdef rg_engine_execute_fn _get_engine() except NULL:
    # The engine registers itself on import. Import it lazily the first time a
    # backward runs, so `import retrograd.core` stays light and works alone.
    if _engine_slot == NULL:
        try:
            import retrograd.engine  # noqa: F401  (registers the slot)
        except ImportError as exc:
            raise RuntimeError(
                "running backward needs the autograd engine, which is not installed: "
                f"install the '{ENGINE_DISTRIBUTION}' distribution "
                f"(pip install {ENGINE_DISTRIBUTION}, or pip install retrograd). "
                f"Import failed with: {exc}"
            ) from exc
        if _engine_slot == NULL:
            raise RuntimeError(
                f"'{ENGINE_DISTRIBUTION}' imported but did not register its executor; "
                "reinstall it so that it matches retrograd-core"
            )
    return _engine_slot


cdef object _engine_execute(tuple roots, tuple grads, bint keep_graph, bint create_graph,
                            tuple inputs, bint accumulate_grad):
    cdef rg_engine_execute_fn fn = _get_engine()
    # the backward formulas run with NumPy's floating-point warnings off, as
    # torch's are silent (one errstate switch per backward, not per node)
    tok = _fp_quiet_enter()
    try:
        return fn(roots, grads, keep_graph, create_graph, inputs, accumulate_grad)
    finally:
        _fp_quiet_exit(tok)
