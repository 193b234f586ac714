# What the generated JVP functions (_codegen/gen_jvp.py) and the in-place
# paths need from core for forward-mode AD. Part of abi.pyx.
#
# The forward-grad slot (abi.pxd) is filled by retrograd-forward-ad only
# while a dual level is active, so `_forward_grad_slot != NULL` is also "a
# dual level is active": every check below costs one branch on a C global
# when forward AD is off.
#
# Tangents themselves live in Tensor._fw_grads, which only retrograd-forward-ad
# reads and writes. Core stores them in one more place: a node records the
# tangents of the tensors it saved (NodeExtras.fw_grads, keyed by the id of
# the saved array), so that a saved tensor rebuilt during a create_graph
# backward carries its tangents and forward-over-reverse sees them (PyTorch's
# SavedVariable keeps fw_grad_ for the same reason).


cdef object _fw_array(object p):
    return (<Tensor>p)._array if type(p) is Tensor else _arg_array(p)


cdef Device _fw_device(object p):
    return (<Tensor>p)._device if type(p) is Tensor else _device_of_array(p)


cdef object _fw_zeros(object p):
    # A zero tangent for primal `p`, where a formula needs one as a value. A
    # Python scalar's is 0.0, which keeps NumPy's weak promotion (a float32
    # op with a Python float stays float32).
    if type(p) is float or type(p) is int or type(p) is bool:
        return 0.0
    cdef object a = _fw_array(p)
    if type(a) is ndarray:
        return rg_wrap(k_zeros_like(a), _fw_device(p))
    return rg_wrap(np.zeros(np.shape(a), dtype=_dtype_of(a)) if _cupy_ndarray is None
                   or type(a) is not _cupy_ndarray else _cupy.zeros_like(a), _fw_device(p))


cdef inline void _fw_attach_saved(Node owner, Tensor t, object data):
    # A saved tensor rebuilt for a create_graph backward gets the tangents
    # its original had when the node saved it.
    cdef NodeExtras x = owner._extra
    if x is not None and x.fw_grads is not None:
        t._fw_grads = (<dict>x.fw_grads).get(id(data))


cdef int _fw_inplace_done(Tensor self, Tensor res) except -1:
    # `res` (computed out of place, with tangents) has just been written into
    # `self`: move its tangents into self's (see retrograd-forward-ad).
    _forward_grad_slot("_inplace", (self, res), (self,), None)
    return 0


cdef Tensor _fw_inplace_untracked(Tensor self, object fn, tuple args, str name):
    # An in-place op with nothing to record while a dual level is active: run
    # it out of place (so its JVP runs), write the value back, then the tangent.
    cdef Tensor res = <Tensor>fn(self, *args)
    _copy_back(self, res, name)
    self._version_counter.version += 1
    _fw_inplace_done(self, res)
    return self


cdef class _FunctionJvp:
    """A custom Function's JVP, in the forward-grad slot's protocol
    (args, tangents, outputs) -> tangents: runs ``Function.jvp`` with
    ``ctx.saved_tensors`` set to what ``save_for_forward`` got."""
    cdef object cls
    cdef _FunctionBase ctx

    def __call__(self, tuple args, list tans, tuple outputs):
        cdef Py_ssize_t i
        grads = list(tans)
        if self.ctx.materialize_grads:
            for i in range(len(args)):
                if grads[i] is None and type(args[i]) is Tensor:
                    grads[i] = _fw_zeros(args[i])
        jvp = self.cls.jvp
        res = jvp(self.ctx, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) != len(outputs):
            raise RuntimeError(
                f"function {self.cls.__name__}.jvp returned an incorrect number of gradients "
                f"(expected {len(outputs)}, got {len(res)})")
        for i in range(len(res)):
            r = res[i]
            if r is not None and type(r) is not Tensor:
                raise TypeError(
                    f"function {self.cls.__name__}.jvp must return Tensors or None, but output "
                    f"{i} is {type(r).__name__}")
            if r is not None and type(outputs[i]) is Tensor and \
                    tuple((<Tensor>r)._array.shape) != tuple((<Tensor>outputs[i])._array.shape):
                raise RuntimeError(
                    f"Function {self.cls.__name__}.jvp returned an invalid tangent at index {i} - "
                    f"got {list((<Tensor>r)._array.shape)} but expected shape "
                    f"{list((<Tensor>outputs[i])._array.shape)}")
        return res


cdef int _fw_function(object cls, _FunctionBase ctx, tuple args, object result) except -1:
    # After a custom Function's forward, with a dual level active.
    cdef _FunctionJvp j = _FunctionJvp.__new__(_FunctionJvp)
    j.cls = cls
    j.ctx = ctx
    outs = result if isinstance(result, tuple) else (result,)
    _forward_grad_slot(cls.__name__, args, tuple(outs), j)
    return 0
