# In-place ops: the `_`-suffixed methods and augmented operators. Part of _ops.pyx.
#
# Without a graph to record, an in-place op is NumPy's `out=` ufunc on the
# tensor's own array plus a version bump. With one, the op runs out of place
# on a snapshot of the tensor's old value (so a node that saves `self` keeps
# the value it needs), the result is copied into the tensor's array, and the
# tensor's history is rebased onto the new node (PyTorch's rebase_history).
#
# Must never: modify a leaf that requires grad (or a view of one) while
# recording, or change a tensor's shape or dtype.

from retrograd.core._arg_checks cimport _unwrap_index
from retrograd.core._array_module cimport _ensure_array, _cupy
from retrograd.core._fp_errstate cimport _fp_kernel_enter, _fp_kernel_exit


cdef int _check_inplace(Tensor self) except -1:
    if self._is_inference and not rg_tls_inference_mode:
        # Checked in every grad mode, as torch does: an inference tensor has
        # no version counter that saved tensors could have recorded.
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed. "
            "Make a clone() of it (outside inference_mode) to get a normal tensor, and update that.")
    if type(self._array) is ndarray and not _cnp.PyArray_ISWRITEABLE(<_cnp.ndarray>self._array):
        _raise_unwritable(self)
    if rg_anomaly_mode:
        _record_inplace_trace(self._version_counter)    # see _anomaly.pxi
    if not rg_tls_grad_enabled:
        return 0
    if self._base is not None and isinstance(self._grad_fn, _FunctionBase):
        if type(self._name) is tuple:
            _handle_view_on_rebase(self, False)     # one of several view outputs
        _raise_custom_function_view(self)
    if self._grad_fn is None and self._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation. "
            "Do it under `with retrograd.no_grad():` (e.g. an optimizer step), or work on a "
            "clone() of the tensor.")
    if self._base is not None and self._name is not None and (self.needs_grad() or self._base.needs_grad()):
        # torch's check_inplace order: how the view was made (inference or
        # no_grad mode, a multi-output op) is judged before its base's leafness
        _handle_view_on_rebase(self, False)
    if self._base is not None and self._base._grad_fn is None and self._base._requires_grad:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation. "
            "Do it under `with retrograd.no_grad():`, or work on a clone().")
    return 0


cdef int _raise_unwritable(Tensor self) except -1:
    # An expanded tensor (NumPy's broadcast_to: read-only, stride 0) or a
    # read-only array: refuse before NumPy does, with torch's error class.
    arr = self._array
    for n, st in zip(arr.shape, arr.strides):
        if st == 0 and n > 1:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")
    raise RuntimeError(
        "unsupported operation: the tensor's memory is read-only (it wraps a NumPy array that is "
        "not writeable). Please clone() the tensor before performing the operation.")


# While tracing (the tracing slot, abi.pxd), each in-place entry point is one
# step for the tracer: a begin (the ops inside are reported too, and ignored
# by a tracer that records the step) and an end naming the out-of-place
# function whose result is self's new value.

cdef Tensor _inplace_binary(Tensor self, object other, object op, object ufunc, str name):
    if _trace_slot == NULL:
        return _inplace_binary_untraced(self, other, op, ufunc, name)
    _rg_trace_event(RG_TRACE_INPLACE_BEGIN, name, (self, other), (), None)
    _inplace_binary_untraced(self, other, op, ufunc, name)
    _rg_trace_event(RG_TRACE_INPLACE, name, (self, other), (self,), op)
    return self


cdef Tensor _inplace_binary_untraced(Tensor self, object other, object op, object ufunc, str name):
    if _op_enter_slot == NULL:
        return _inplace_binary_run(self, other, op, ufunc, name)
    # Profiled: one event for the in-place op as torch names it (aten::add_),
    # whatever ran inside it (see _op_events.pxi).
    tok = _op_event_enter("aten::" + name, (self, other))
    _inplace_binary_run(self, other, op, ufunc, name)
    _op_event_exit(tok, None)
    return self


cdef Tensor _inplace_binary_run(Tensor self, object other, object op, object ufunc, str name):
    cdef Tensor t_other = <Tensor>other if isinstance(other, Tensor) else None
    cdef Tensor snap, res
    _check_inplace(self)
    recording = rg_tls_grad_enabled and (self.needs_grad() or _needs(t_other)) and _record_op(self._array)
    if not recording:
        if _forward_grad_slot != NULL:
            return _fw_inplace_untracked(self, op, (other,), name)
        b = t_other._array if t_other is not None else _arg_array(other)
        if t_other is not None:
            _dev2(self, t_other)
        fpq = _fp_kernel_enter()          # silent, as every kernel (_op_support.pxi)
        try:
            ufunc(self._array, b, out=self._array, casting="same_kind")
        except (TypeError, ValueError) as exc:
            raise RuntimeError(f"{name}: {exc}") from None
        finally:
            _fp_kernel_exit(fpq)
        self._version_counter.version += 1
        return self
    return _inplace_record(self, op, (other,), name, _needs(t_other))


cdef Tensor _snapshot(Tensor self):
    # The tensor's current value and history, in memory of its own: the op
    # may save it, and its memory is about to be overwritten.
    cdef Tensor snap, hist
    cdef tuple geo
    if self._base is not None and self._base.needs_grad() and self._name is None:
        # A view's old value as a view of its base's current history (as
        # torch's CopySlices, which hands the op's gradient straight to the
        # base): the view's own earlier grad_fn -- and any hook on it -- is
        # not part of the new graph.
        _current_grad_fn(self)
        geo = _view_geometry(self, self._base, "in-place")
        hist = <Tensor>_op__as_strided(self._base, geo[0], geo[1], geo[2])
        snap = _rg_wrap_with_grad_fn(self._array.copy(), self._device, hist._grad_fn,
                                     hist._output_nr)
    elif _current_grad_fn(self) is not None:
        snap = _rg_wrap_with_grad_fn(self._array.copy(), self._device, _current_grad_fn(self),
                                     self._output_nr)
    else:
        snap = _rg_wrap(self._array.copy(), self._device)
    snap._requires_grad = self._requires_grad
    if _forward_grad_slot != NULL:
        _forward_grad_slot("_snapshot", (self,), (snap,), None)
    if _trace_slot != NULL:
        _trace_slot(RG_TRACE_OP, "_snapshot", (self,), (snap,), None)
    return snap


cdef Tensor _commit_inplace(Tensor self, Tensor res, str name):
    # `res` (computed out of place, with history) is self's new value: write
    # it into self's memory, bump the version, and rebase history -- self's
    # own, or, for a view, its base's (see _copy_slices.pxi).
    if self._base is not None and self._name is not None:
        _handle_view_on_rebase(self, False)     # before anything is written
    if self._base is not None and (self._base.needs_grad() or res.needs_grad()):
        _copy_slices(self, res, name)
    else:
        _copy_back(self, res, name)
        self._version_counter.version += 1
        _rebase_history(self, res)
    if _forward_grad_slot != NULL:
        _fw_inplace_done(self, res)
    return self


cdef _rebase_history(Tensor self, Tensor res):
    cdef object old_fn = self._grad_fn
    cdef object hook
    self._grad_fn = res._grad_fn
    self._output_nr = res._output_nr
    self._edge_cache = None
    if self._retains_grad and old_fn is not None:
        # The retains-grad hook follows the tensor to its new grad_fn.
        hooks = (<Node>old_fn)._extra.retains_grad_hooks if (<Node>old_fn)._extra is not None else None
        if hooks is not None:
            hooks.pop(self._output_nr, None)
        _install_retains_grad_hook(self)


# --- the general path: every generated `<op>_` method (derivatives.yaml's
# `inplace:` key) ---------------------------------------------------------------

cdef bint _any_arg_needs(tuple args):
    for a in args:
        if isinstance(a, Tensor) and _needs(<Tensor>a):
            return True
    return False


cdef Tensor _inplace_call(Tensor self, object fn, tuple args, str name):
    if _trace_slot == NULL:
        return _inplace_call_untraced(self, fn, args, name)
    _rg_trace_event(RG_TRACE_INPLACE_BEGIN, name, (self,) + args, (), None)
    _inplace_call_untraced(self, fn, args, name)
    _rg_trace_event(RG_TRACE_INPLACE, name, (self,) + args, (self,), fn)
    return self


cdef Tensor _inplace_call_untraced(Tensor self, object fn, tuple args, str name):
    if _op_enter_slot == NULL:
        return _inplace_call_run(self, fn, args, name)
    tok = _op_event_enter(_INPLACE_OPERATOR_EVENTS.get(name) or "aten::" + name,    # as _inplace_binary
                          (self,) + args)
    _inplace_call_run(self, fn, args, name)
    _op_event_exit(tok, None)
    return self


cdef Tensor _inplace_call_run(Tensor self, object fn, tuple args, str name):
    """self.<name>(*args): fn(self, *args) written back into self.

    One mechanism for unary ops (exp_), ops with extra arguments (clamp_(min,
    max), lerp_(end, weight)) and binary ones (floor_divide_): the out-of-place
    op computes the value (so values and gradients are the twin's by
    construction), then the result is cast back into self's array; while
    recording, the op runs on a snapshot and self's history is rebased onto
    its node."""
    cdef Tensor res
    cdef bint others = _any_arg_needs(args)
    _check_inplace(self)
    if rg_tls_grad_enabled and (self.needs_grad() or others) and _record_op(self._array):
        return _inplace_record(self, fn, args, name, others)
    if _forward_grad_slot != NULL:
        return _fw_inplace_untracked(self, fn, args, name)
    res = <Tensor>fn(self, *args)
    _copy_back(self, res, name)
    self._version_counter.version += 1
    return self


cdef int _copy_back(Tensor self, Tensor res, str name) except -1:
    if res._array.shape != self._array.shape:
        raise RuntimeError(
            f"{name}: output with shape {tuple(self._array.shape)} doesn't match the broadcast "
            f"shape {tuple(res._array.shape)}")
    try:
        np.copyto(self._array, res._array, casting="same_kind")
    except TypeError:
        raise RuntimeError(f"{name}: result type {res._array.dtype} can't be cast to the desired "
                           f"output type {self._array.dtype}; use the out-of-place op, or "
                           f"convert the tensor first (.to(dtype))") from None
    return 0


cdef Tensor _inplace_record(Tensor self, object fn, tuple args, str name, bint others):
    # The op runs out of place on a snapshot of self's old value (a node that
    # saves `self` keeps the value it needs); the result is then committed
    # into self's memory and history (for a view: its base's, see
    # _copy_slices.pxi).
    return _commit_inplace(self, <Tensor>fn(_snapshot(self), *args), name)


def _copy_value(self, src):
    # copy_'s out-of-place twin: src broadcast and cast to self. Written as
    # where(False, self, src) so that self stays in the graph with a zero
    # gradient (torch's CopyBackwards keeps an edge to self) and the JVP is
    # src's tangent, without 0 * self (a nan/inf in self must not leak).
    cdef Tensor t = <Tensor>self
    cdef Tensor s = <Tensor>src if isinstance(src, Tensor) else _rg_wrap(_ensure_array(_arg_array(src)), t._device)
    if s._array.dtype != t._array.dtype:
        s = s.to(t._array.dtype)
    if s._device is not t._device:
        s = s.to(t._device)
    keep = _rg_wrap(np.zeros(t._array.shape, dtype=bool) if type(t._array) is ndarray
                    else _cupy.zeros(t._array.shape, dtype=bool), t._device)
    return _op_where(keep, t, s)


cdef int _tensor_setitem(Tensor self, object index, object value) except -1:
    if _trace_slot == NULL:
        return _tensor_setitem_untraced(self, index, value)
    _rg_trace_event(RG_TRACE_INPLACE_BEGIN, "__setitem__", (self, index, value), (), None)
    _tensor_setitem_untraced(self, index, value)
    _rg_trace_event(RG_TRACE_INPLACE, "__setitem__", (self, index, value), (self,), _index_put)
    return 0


cdef int _tensor_setitem_untraced(Tensor self, object index, object value) except -1:
    # Tensor.__setitem__: an in-place index_put_ (tracked when self needs grad).
    cdef Tensor t_value = <Tensor>value if isinstance(value, Tensor) else None
    cdef object tok = None
    if type(value) is list or type(value) is tuple:
        # torch's TypeError (Note [Non-Tensor arguments]); a NumPy array is taken
        raise TypeError(f"can't assign a {type(value).__name__} to a tensor; make one with rg.tensor(...) "
                        "(or assign a NumPy array)")
    if _op_enter_slot != NULL:
        tok = _op_event_enter("aten::index_put_", (self, index, value))    # see _op_events.pxi
    _check_inplace(self)
    if rg_tls_grad_enabled and (self.needs_grad() or _needs(t_value)
                                or (self._base is not None and self._base.needs_grad())):
        # Tracked: the out-of-place index_put is self's new value (and,
        # for a view, its base's: see _copy_slices.pxi).
        _commit_inplace(self, <Tensor>_op__index_put(_snapshot(self), index, value), "__setitem__")
        if tok is not None:
            _op_event_exit(tok, None)
        return 0
    if _forward_grad_slot != NULL:
        _fw_inplace_untracked(self, _index_put, (index, value), "__setitem__")
        return 0
    try:
        self._array[_unwrap_index(index)] = t_value._array if t_value is not None else _arg_array(value)
    except ValueError as exc:
        if "broadcast" in str(exc) or "shape mismatch" in str(exc):
            raise RuntimeError(f"{exc} (the value must broadcast to the indexed shape, as in torch)") from None
        raise
    self._version_counter.version += 1
    if tok is not None:
        _op_event_exit(tok, None)
    return 0


# --- in-place view ops (t_, squeeze_, unsqueeze_, transpose_, swapaxes_,
# as_strided_): they change what `self` looks at, not the data. `self` takes
# the array and the history of the view op's result (TBackward on top of
# self's own history, as torch's), and its version is bumped (torch's), so a
# node that saved the old `self` refuses to run. A view stays a view of the
# same base: a later in-place write through it reaches the base through its
# geometry (Note [CopySlices]).

def _inplace_view(Tensor self, str name, object fn, tuple args):
    """``self`` becomes ``fn(self, *args)``, a view of it: torch's in-place view ops (``Tensor.t_``, ...)."""
    cdef Tensor out
    if _trace_slot != NULL:
        raise RuntimeError(f"{name}() changes the tensor it is called on into a view of itself, which rg.compile "
                           f"cannot trace; use the out-of-place form ({name[:-1]}) and the result")
    if self._is_inference and not rg_tls_inference_mode:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed. "
            "Make a clone() of it (outside inference_mode) to get a normal tensor, and update that.")
    if rg_tls_grad_enabled:
        if self._grad_fn is None and self._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation. "
                "Do it under `with retrograd.no_grad():`, or work on a clone() of the tensor.")
        if self._base is not None and self._base._grad_fn is None and self._base._requires_grad:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation. "
                "Do it under `with retrograd.no_grad():`, or work on a clone().")
    out = <Tensor>fn(self, *args)
    self._array = out._array
    self._version_counter.version += 1
    if out._grad_fn is not None or self._grad_fn is not None:
        _rebase_history(self, out)
    if self._base is not None:
        self._view_version = self._version_counter.version
    if _forward_grad_slot != NULL:
        _fw_inplace_done(self, out)
    return self
