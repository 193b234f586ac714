# In-place ops on views of tensors in the graph: PyTorch's CopySlices, done
# with two table ops. Part of _ops.pyx.
#
# Note [CopySlices]
#   When view V of base B is modified in place to the value R (computed out
#   of place, with history), B's new value is "B with V's region replaced by
#   R": the op _view_scatter(B, R, geometry) (backward: grad with the region
#   zeroed to B, the region to R). B's history is rebased onto that node, so
#   gradients through B see the modification; V's history becomes
#   _as_strided(B, geometry), a view of the new B. Other views of B that were
#   made earlier get their grad_fn re-derived the same way the next time they
#   are used (_current_grad_fn), since their old history predates the change.
#   Geometry: V's offset in elements from B's first element, its shape and
#   its strides in bytes, as NumPy describes V within B's memory.
#
#   For a base that is not C-contiguous, the geometry is that of the view
#   within the base's C-contiguous copy (_view_geometry_strided).
#
# Must never: rebase a view whose memory does not lie inside its base's
# buffer (it raises instead), or run without a graph to record.

cdef tuple _view_geometry(Tensor view, Tensor base, str name):
    cdef object va = view._array, ba = base._array
    if type(va) is not ndarray or type(ba) is not ndarray or va.dtype != ba.dtype:
        raise RuntimeError(
            f"{name}: in-place modification of this view of a tensor that is part of the autograd graph "
            "is not supported (a device array, or a view with another dtype); clone() the base (or the "
            "view) first")
    if not ba.flags.c_contiguous:
        return _view_geometry_strided(va, ba, name)
    delta = va.__array_interface__["data"][0] - ba.__array_interface__["data"][0]
    if delta < 0 or delta % ba.itemsize:
        raise RuntimeError(f"{name}: the view does not lie inside its base's memory")
    return (delta // ba.itemsize, tuple(va.shape), tuple(va.strides))


cdef tuple _view_geometry_strided(object va, object ba, str name):
    # The base is not C-contiguous (roll's, einsum's or a transpose's
    # result): the geometry still describes the view within the base's
    # C-contiguous copy, which _view_scatter and _as_strided work on. Each
    # element's position in that copy is read off an int64 array laid out in
    # memory as the base is, holding 0, 1, 2, ... in C order; the positions
    # under the view must form a lattice (they do for every view op).
    cdef Py_ssize_t item = ba.itemsize, k
    if va.size == 0:
        return (0, tuple(va.shape), tuple(np.empty(va.shape, va.dtype).strides))
    bstr, vstr = ba.strides, va.strides
    if _builtins.any(st % item for st in bstr) or _builtins.any(st % item for st in vstr):
        raise RuntimeError(f"{name}: the view's strides are not whole elements of its base")
    lo = _builtins.sum(_builtins.min(0, st * (n - 1)) for st, n in zip(bstr, ba.shape))
    hi = _builtins.sum(_builtins.max(0, st * (n - 1)) for st, n in zip(bstr, ba.shape))
    start = va.__array_interface__["data"][0] - ba.__array_interface__["data"][0] - lo
    vlo = _builtins.sum(_builtins.min(0, st * (n - 1)) for st, n in zip(vstr, va.shape))
    vhi = _builtins.sum(_builtins.max(0, st * (n - 1)) for st, n in zip(vstr, va.shape))
    if start % item or start + vlo < 0 or start + vhi > hi - lo:
        raise RuntimeError(f"{name}: the view does not lie inside its base's memory")
    buf = np.empty((hi - lo) // item + 1, dtype=np.int64)
    as_strided = np.lib.stride_tricks.as_strided
    as_strided(buf[-lo // item:], ba.shape, tuple(st // item * 8 for st in bstr))[...] = \
        np.arange(ba.size, dtype=np.int64).reshape(ba.shape)
    pos = as_strided(buf[start // item:], va.shape, tuple(st // item * 8 for st in vstr))
    offset = int(pos.reshape(-1)[0])
    steps = []
    for k in range(va.ndim):
        if va.shape[k] > 1:
            steps.append(int(pos[(0,) * k + (1,) + (0,) * (va.ndim - k - 1)]) - offset)
        else:
            steps.append(0)
    lattice = np.full(va.shape, offset, dtype=np.int64)
    for k in range(va.ndim):
        shape_k = [1] * va.ndim
        shape_k[k] = va.shape[k]
        lattice = lattice + (np.arange(va.shape[k], dtype=np.int64) * steps[k]).reshape(shape_k)
    if not np.array_equal(lattice, pos):
        raise RuntimeError(f"{name}: in-place modification of this view of a tensor that is part of the "
                           "autograd graph is not supported; clone() the base (or the view) first")
    return (offset, tuple(va.shape), tuple(st * item for st in steps))


cdef Node _current_grad_fn(Tensor t):
    # A view's grad_fn, re-derived from its base if the base was modified in
    # place (through another view) since the view's history was recorded.
    cdef Tensor base = t._base
    cdef tuple geo
    if base is None or t._version_counter.version == t._view_version or base._grad_fn is None:
        return t._grad_fn
    if t._name is not None:
        _handle_view_on_rebase(t, True)
    geo = _view_geometry(t, base, "view")
    fresh = <Tensor>_op__as_strided(base, geo[0], geo[1], geo[2])
    _rebase_history(t, fresh)       # (retain_grad follows the view to its new grad_fn)
    t._view_version = t._version_counter.version
    return t._grad_fn


cdef int _copy_slices(Tensor view, Tensor res, str name) except -1:
    # See Note [CopySlices].
    cdef Tensor base = view._base
    cdef Tensor new_base, new_view
    cdef tuple geo = _view_geometry(view, base, name)
    new_base = <Tensor>_op__view_scatter(base, res, geo[0], geo[1], geo[2])
    _copy_back(view, res, name)
    view._version_counter.version += 1
    _rebase_history(base, new_base)
    new_view = <Tensor>_op__as_strided(base, geo[0], geo[1], geo[2])
    _rebase_history(view, new_view)
    view._view_version = view._version_counter.version
    return 0


cdef str _forward_label(Node fn):
    # How torch's view messages name a node: its forward (SliceBackward0 ->
    # Slice, a custom Function's FooBackward -> Foo).
    name = fn.name()
    i = name.rfind("Backward")
    return name[:i] if i > 0 else name


cdef int _handle_view_on_rebase(Tensor t, bint indirect) except -1:
    # torch's handle_view_on_rebase: a view that was not made the ordinary way
    # (see Note [View creation meta]) may not have its history rebased, either
    # because it is modified in place (indirect=False) or because its base or
    # a sibling view was (indirect=True, when its grad_fn is re-derived).
    cm = t._name
    if cm is None:
        return 0
    label = None
    nr = t._output_nr
    if type(cm) is tuple:
        cm, label, nr = cm
    fn = t._grad_fn
    if label is None and fn is not None:
        label = _forward_label(fn)
    modified = "its base or another view of its base has been" if indirect else "is being"
    if cm is _CM_INFERENCE_MODE or cm is _CM_NO_GRAD_MODE or label is None:
        prefix = ("A view was created in" if label is None
                  else f"Output {nr} of {label} is a view of a view which was created in")
        if cm is _CM_INFERENCE_MODE:
            msg = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {nr} of {label} is a view and {modified} modified inplace."
    if cm is _CM_MULTI_OUTPUT_NODE:
        msg += (" This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should "
                "replace the inplace operation by an out-of-place one.")
    elif cm is _CM_NO_GRAD_MODE:
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can "
                "clarify your code by moving both the view and the inplace either both inside the "
                "no_grad block (if you don't want the inplace to be tracked) or both outside (if "
                "you want the inplace to be tracked).")
    elif cm is _CM_INFERENCE_MODE:
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can "
                "clarify your code by moving both the view and the inplace either both inside the "
                "inference_mode block (if you don't want the inplace to be tracked) or both "
                "outside (if you want the inplace to be tracked).")
    else:
        msg += (" This view was created inside a custom Function (or because an input was "
                "returned as-is) and the autograd logic to handle view+inplace would override the "
                "custom backward associated with the custom Function, leading to incorrect "
                "gradients. This behavior is forbidden. You can fix this by cloning the output of "
                "the custom Function.")
    raise RuntimeError(msg)
