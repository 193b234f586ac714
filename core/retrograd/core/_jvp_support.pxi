# What the generated JVP functions (_codegen/gen_jvp.py) and the in-place
# paths need from core for forward-mode AD. Part of _ops.pyx.
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

from retrograd.core._arg_checks cimport _dtype_of
from retrograd.core._array_module cimport _cupy, _cupy_ndarray
from retrograd.core._kernels_core cimport k_zeros_like


cdef object _fw_array(object p):
    return (<Tensor>p)._array if isinstance(p, Tensor) else _arg_array(p)


cdef Device _fw_device(object p):
    return (<Tensor>p)._device if isinstance(p, Tensor) else _device_of_array(p)


cdef object _fw_zeros(object p):
    # A zero tangent for primal `p`, where a formula needs one as a value. A
    # Python scalar's is 0.0, which keeps NumPy's weak promotion (a float32
    # op with a Python float stays float32).
    if type(p) is float or type(p) is int or type(p) is bool:
        return 0.0
    cdef object a = _fw_array(p)
    if type(a) is ndarray:
        return _rg_wrap(k_zeros_like(a), _fw_device(p))
    return _rg_wrap(np.zeros(np.shape(a), dtype=_dtype_of(a)) if _cupy_ndarray is None
                    or type(a) is not _cupy_ndarray else _cupy.zeros_like(a), _fw_device(p))


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
    ``ctx.saved_tensors`` set to what ``save_for_forward`` got, then checks
    what it returned as torch's _process_forward_mode_AD does."""
    cdef object cls
    cdef _FunctionBase ctx
    cdef tuple dirty        # what ctx.mark_dirty got
    cdef tuple nondiff      # what ctx.mark_non_differentiable got

    def __call__(self, tuple args, list tans, tuple outputs):
        cdef Py_ssize_t i, k
        cdef Tensor o, r, tan
        grads = list(tans)
        if self.ctx.materialize_grads:
            # zeros for a differentiable input without a tangent; an input of
            # an integer or bool dtype has none at all (None), as torch
            for i in range(len(args)):
                if grads[i] is None and isinstance(args[i], Tensor) and _record((<Tensor>args[i])._array):
                    grads[i] = _fw_zeros(args[i])
        versions = [(<Tensor>g)._version_counter.version if isinstance(g, Tensor) else None
                    for g in grads]
        jvp = self.cls.jvp
        res = jvp(self.ctx, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) != len(outputs):
            raise RuntimeError(
                f"Function's jvp returned an invalid number of forward gradients (expected "
                f"{len(outputs)} but got {len(res)})")
        for i in range(len(res)):
            x = res[i]
            if x is not None and not isinstance(x, Tensor):
                raise RuntimeError(
                    f"expected Variable or None (got {type(x).__name__}) for grad output {i}.")
            if not isinstance(outputs[i], Tensor):
                continue
            o = <Tensor>outputs[i]
            if _index_in(o, self.nondiff) >= 0 or not _record(o._array):
                if x is not None:
                    raise RuntimeError(
                        f"Function's jvp returned a gradient at position {i}, but  the "
                        "corresponding forward output is not a differentiable Tensor.You should "
                        "return None at that position instead.")
                continue
            if x is None:
                continue
            r = <Tensor>x
            if tuple(r._array.shape) != tuple(o._array.shape):
                raise RuntimeError(
                    "Trying to set a forward gradient that has a different size than that of the "
                    f"original Tensor, this is not supported. Tensor is of size "
                    f"{list(o._array.shape)} while the given forward gradient is of size "
                    f"{list(r._array.shape)}.")
            k = _index_in(o, args)
            if _index_in(o, self.dirty) >= 0:
                if k < 0:
                    raise RuntimeError(
                        "Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is "
                        "not an input, there is no need to pass it to mark_dirty().")
                tan = <Tensor>grads[k] if isinstance(grads[k], Tensor) else None
                if tan is None or not (r._array is tan._array and
                                       tan._version_counter.version != versions[k]):
                    raise RuntimeError(
                        "An inplace custom Function is not modifying the forward mode gradients "
                        "inplace. If the forward is modifying an input inplace, then the jvp "
                        "function must modify the corresponding gradient inplace.")
            elif o._base is not None and (k >= 0 or _index_in(o._base, args) >= 0 or
                                          _any_view_of(o._base, args)):
                # forward returned a view of an input (or an input as-is):
                # its tangent must be the same view of the input's tangent
                if r._base is None:
                    raise RuntimeError(
                        "A custom Function's forward is returning a view (or an input as-is) but "
                        "the jvp is not returning a view.")
        return res


cdef bint _any_view_of(Tensor base, tuple args):
    for a in args:
        if isinstance(a, Tensor) and (<Tensor>a)._base is base:
            return True
    return False


cdef int _fw_function(object cls, _FunctionBase ctx, tuple args, object result, tuple dirty,
                      tuple nondiff) except -1:
    # After a custom Function's forward, with a dual level active.
    cdef _FunctionJvp j = _FunctionJvp.__new__(_FunctionJvp)
    j.cls = cls
    j.ctx = ctx
    j.dirty = dirty
    j.nondiff = nondiff
    outs = result if isinstance(result, tuple) else (result,)
    _forward_grad_slot(cls.__name__, args, tuple(outs), j)
    return 0
