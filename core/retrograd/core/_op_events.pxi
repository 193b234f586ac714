# The op-event slot, seen from the code that reports events: generated and
# hand-written ops (through the inline helpers below) and the engine
# (through the rg_op_event_* free functions of abi.pxd). Part of _ops.pyx.
#
# The profiler (retrograd-profiler) fills the slot only while a profile is
# active, so an op or node pays one branch on a C global when none is. These
# helpers must never be called unless that branch found the slot filled
# (_rg_op_event_enter/exit check it themselves: the engine cannot see core's
# globals).

cdef rg_op_outputs_fn _op_outputs_slot = NULL


cdef int _rg_register_op_outputs(rg_op_outputs_fn fn) except -1:
    global _op_outputs_slot
    _op_outputs_slot = fn
    return 0


cdef inline object _op_event_enter(str name, tuple inputs):
    # Hand-written ops: the sequence number the op's node will get, if any
    # (the thread's next one), as the generated ops pass it.
    return _op_enter_slot(name, rg_tls_sequence_nr, inputs)


cdef inline int _op_event_exit(object tok, object outputs) except -1:
    # Outputs first (profile_memory counts what they allocated), then the end.
    # Each slot is checked again: running the outputs callback may run Python
    # code (a __del__) during which another thread ends the profile.
    if _op_outputs_slot != NULL:
        _op_outputs_slot(tok, outputs)
    if _op_exit_slot != NULL:
        _op_exit_slot(tok)
    return 0


# In-place operators reach _inplace_call under their dunder names.
_INPLACE_OPERATOR_EVENTS = {"__ifloordiv__": "aten::floor_divide_", "__imod__": "aten::remainder_"}


cdef bint _rg_op_events_active() noexcept nogil:
    return _op_enter_slot != NULL


cdef object _rg_op_event_enter(str name, uint64_t sequence_nr, tuple inputs):
    if _op_enter_slot == NULL:
        return None
    return _op_enter_slot(name, sequence_nr, inputs)


cdef int _rg_op_event_exit(object token, object outputs) except -1:
    # The profile may have ended while the event ran (another thread left
    # it): the slot is then empty and the event is dropped.
    if _op_exit_slot == NULL:
        return 0
    return _op_event_exit(token, outputs)


# Composite ops (written in Python in terms of other ops: nn.functional.linear,
# cross_entropy, einsum, the linalg functions, ...) report one event of their
# own around their children, as torch's profiler shows aten::linear around
# aten::matmul. With no profile active the wrapper costs one C branch and a
# call.

@cython.final
cdef class _CompositeOp:
    """A composite op: calls the wrapped function, inside an op event named
    ``aten::<name>`` while a profile records (see ``composite_op``)."""
    cdef object fn
    cdef str event
    cdef int ac_cpu                     # autocast policies (Note [Autocast]); 0: not listed
    cdef int ac_cuda
    cdef dict __dict__                  # functools.update_wrapper: __name__, __doc__, __wrapped__

    def __call__(self, *args, **kwargs):
        if rg_tls_autocast and (self.ac_cpu or self.ac_cuda):
            # a listed composite under autocast (Note [Autocast]): run on the
            # cast arguments, with autocast off inside (so this same call
            # then takes the path below)
            target = _ac_target(self.ac_cpu, self.ac_cuda, args + tuple(kwargs.values()), self.event[6:])
            if target is not None:
                return _autocast_run(self, args, kwargs, target)
        if _op_enter_slot == NULL:
            if _trace_slot == NULL:
                return self.fn(*args, **kwargs)
            return self._traced(args, kwargs)
        if _trace_slot != NULL:
            return self._traced(args, kwargs)
        tok = _op_event_enter(self.event, args)
        try:
            out = self.fn(*args, **kwargs)
        except BaseException:
            _op_event_exit(tok, None)
            raise
        _op_event_exit(tok, out if type(out) is tuple else (out,))
        return out

    def _traced(self, tuple args, dict kwargs):
        # Tracing (abi.pxd, RG_TRACE_COMPOSITE_*): begin and end around the
        # composite (inside its profiler event, if one records).
        _rg_trace_event(RG_TRACE_COMPOSITE_BEGIN, self.event, args, (), None)
        tok = _op_event_enter(self.event, args) if _op_enter_slot != NULL else None
        try:
            out = self.fn(*args, **kwargs)
        except BaseException:
            if tok is not None:
                _op_event_exit(tok, None)
            _rg_trace_event(RG_TRACE_COMPOSITE_END, self.event, args, (), None)
            raise
        if tok is not None:
            _op_event_exit(tok, out if type(out) is tuple else (out,))
        _rg_trace_event(RG_TRACE_COMPOSITE_END, self.event, args,
                        out if type(out) is tuple else (out,), None)
        return out

    def __get__(self, obj, objtype):
        # used as a method (a class attribute), it binds like a function
        if obj is None:
            return self
        import types
        return types.MethodType(self, obj)

    def __repr__(self):
        return f"<composite op {getattr(self, '__qualname__', self.event)}>"


def composite_op(str name):
    """Decorator: the function is a composite op named ``aten::<name>`` in
    profiles (torch's name for it)."""
    import functools

    def wrap(fn):
        cdef _CompositeOp op = _CompositeOp.__new__(_CompositeOp)
        op.fn = fn
        op.event = "aten::" + name
        op.ac_cpu, op.ac_cuda = _autocast_policy(name)
        functools.update_wrapper(op, fn)
        return op
    return wrap
