# Saving tensors for backward and unpacking them (the hot path of every
# op that saves inputs or outputs), with torch's errors for a modified,
# released or detached saved tensor. Part of _ops.pyx (the SavedVariable
# class is abi's, _saved.pxi).

cdef object _sv_unpack_hooked(SavedVariable self, Node owner, bint as_tensor):
    # Saved under saved_tensors_hooks: no version check (the hooks may
    # store anything; PyTorch checks only that pack did not modify it).
    cdef Tensor t
    cdef Tensor r = _call_unpack_hook(self._unpack_hook, self._packed)
    if not as_tensor:
        return r._array
    if self._leaf is not None:
        if self._leaf._array is r._array:
            return self._leaf
        t = _rg_wrap_with_grad_fn(r._array, r._device, self._leaf.grad_accumulator(), 0)
    elif self._is_output:
        t = _rg_wrap_with_grad_fn(r._array, r._device, owner, self._output_nr)
    elif self._grad_fn is not None:
        t = _rg_wrap_with_grad_fn(r._array, r._device, self._grad_fn, self._output_nr)
    else:
        t = _rg_wrap(r._array, r._device)
    t._version_counter = r._version_counter
    return t


cdef inline SavedVariable _save_tensor(Tensor t, bint is_output):
    cdef SavedVariable sv = SavedVariable.__new__(SavedVariable)
    if t._is_inference and not rg_tls_inference_mode:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. To work around you can make a clone "
            "to get a normal tensor and use it in autograd.")
    sv._data = t._array
    sv._version_counter = t._version_counter
    sv._saved_version = t._version_counter.version
    sv._device = t._device
    sv._was_defined = True
    sv._requires_grad = t._grad_fn is not None or t._requires_grad
    if is_output:
        sv._is_output = True
        sv._output_nr = t._output_nr
    elif t._grad_fn is not None:
        sv._grad_fn = t._grad_fn
        sv._output_nr = t._output_nr
        if not rg_tls_saved_hooks:
            # torch's saved_original: a tensor that is not an output of the
            # node is kept as itself (no cycle), so that unpacking returns the
            # very object saved. `_leaf` holds it (the slot of leaves).
            sv._leaf = t
    elif t._requires_grad or not rg_tls_saved_hooks:
        sv._leaf = t
    if rg_tls_saved_hooks:
        p = <_PackedSaved>_pack_saved(t)
        sv._data = None
        sv._packed = p.packed
        sv._unpack_hook = p.unpack_hook
    return sv


cdef object _raise_modified(SavedVariable sv, Node owner):
    producer = ""
    if sv._is_output:
        producer = f", which is output {sv._output_nr} of {owner.name()}"
    elif sv._grad_fn is not None:
        producer = f", which is output {sv._output_nr} of {sv._grad_fn.name()}"
    elif sv._leaf is not None and sv._leaf._requires_grad:
        producer = ", which is a leaf tensor"
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{sv._data.dtype} tensor of shape {tuple(sv._data.shape)}]{producer}, saved by "
        f"{owner.name()}, is at version {sv._version_counter.version}; expected version "
        f"{sv._saved_version} instead. Hint: the in-place change happened after the forward op that "
        "saved it; use an out-of-place op (or .clone() before modifying), and enable anomaly "
        "detection (retrograd.autograd.set_detect_anomaly(True)) to find the operation that "
        "failed to compute its gradient."
        + _inplace_trace_note(sv._version_counter, sv._saved_version))


# ---------------------------------------------------------------------------
# Inline saved tensors of generated nodes (see gen_ops.py): the data, the
# shared version counter and the version at save time live in three fields of
# the node. A saved input is rebuilt as a Tensor from the node's next edge for
# that input (the very (grad_fn, output_nr) the input had, or the leaf behind
# an AccumulateGrad); a saved output from the node itself. `vc` is None for a
# value that was not a Tensor (a Python scalar, an array): it stays raw.

cdef inline int _check_saveable(Tensor t) except -1:
    if t._is_inference and not rg_tls_inference_mode:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. To work around you can make a clone "
            "to get a normal tensor and use it in autograd.")
    return 0


cdef inline object _unpack_input(Node owner, object data, VersionCounter vc, Py_ssize_t ver,
                                 int edge_index, bint as_tensor):
    cdef Edge e
    cdef Tensor t
    if vc is None:
        return data
    if isinstance(data, Tensor):
        # the saved original (see gen_ops.py)
        t = <Tensor>data
        if vc.version != ver:
            _raise_modified_inline(owner, t._array, vc, ver, edge_index)
        if t._grad_fn is None and not t._requires_grad:
            x = rg_next_fn(owner, edge_index)
            if x is not None and type(x) is not AccumulateGrad:
                _raise_detached()   # it had a history when saved: detach_() took it
        return t if as_tensor else t._array
    if type(data) is _PackedSaved:
        return _unpack_hooked_input(owner, <_PackedSaved>data, edge_index, as_tensor)
    if vc.version != ver:
        _raise_modified_inline(owner, data, vc, ver, edge_index)
    if _detached_outputs is not None:
        _check_not_detached(owner, edge_index)
    if not as_tensor:
        return data
    x = rg_next_fn(owner, edge_index)
    if x is None:
        t = _rg_wrap(data, owner._meta0.device)
    else:
        if type(x) is AccumulateGrad:
            return (<AccumulateGrad>x).variable
        t = _rg_wrap_with_grad_fn(data, owner._meta0.device, <Node>x, rg_next_nr(owner, edge_index))
    t._version_counter = vc
    _fw_attach_saved(owner, t, data)
    return t


cdef inline object _unpack_output(Node owner, object data, VersionCounter vc, Py_ssize_t ver,
                                  bint as_tensor):
    cdef Tensor t
    if type(data) is _PackedSaved:
        return _unpack_hooked_output(owner, <_PackedSaved>data, as_tensor)
    if vc.version != ver:
        _raise_modified_inline(owner, data, vc, ver, -1)
    if not as_tensor:
        return data
    t = _rg_wrap_with_grad_fn(data, owner._meta0.device, owner, 0)
    t._version_counter = vc
    _fw_attach_saved(owner, t, data)
    return t


cdef object _unpack_output_nr(Node owner, object data, VersionCounter vc, Py_ssize_t ver,
                              int output_nr, int position, bint as_tensor):
    # Result `position` of an op with several results (gen_multi.py), saved
    # by its own node: `output_nr` is its input number on the node, or -1 for
    # a result that carries no gradient (max's indices: a plain tensor).
    cdef Tensor t
    cdef Tensor r
    if type(data) is _PackedSaved:
        r = _call_unpack(<_PackedSaved>data)
        if not as_tensor:
            return r._array
        data, vc = r._array, r._version_counter
    else:
        if vc.version != ver:
            _raise_modified_inline(owner, data, vc, ver, -1 - position)
        if not as_tensor:
            return data
    if output_nr < 0:
        t = _rg_wrap(data, owner._meta0.device)
    else:
        t = _rg_wrap_with_grad_fn(data, owner._meta0.device, owner, output_nr)
    t._version_counter = vc
    _fw_attach_saved(owner, t, data)
    return t


cdef object _raise_modified_inline(Node owner, object data, VersionCounter vc, Py_ssize_t ver,
                                   int edge_index):
    producer = ""
    if edge_index < 0:
        # (-1 - k: the owner's own result k)
        producer = f", which is output {-1 - edge_index} of {owner.name()}"
    else:
        fn = rg_next_fn(owner, edge_index)
        if fn is not None:
            producer = (", which is a leaf tensor" if type(fn) is AccumulateGrad
                        else f", which is output {rg_next_nr(owner, edge_index)} of {fn.name()}")
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{data.dtype} tensor of shape {tuple(data.shape)}]{producer}, saved by "
        f"{owner.name()}, is at version {vc.version}; expected version {ver} instead. Hint: the "
        "in-place change happened after the forward op that saved it; use an out-of-place op "
        "(or .clone() before modifying), and enable anomaly detection "
        "(retrograd.autograd.set_detect_anomaly(True)) to find the operation that failed to "
        "compute its gradient." + _inplace_trace_note(vc, ver))


# Saved under saved_tensors_hooks (see _saved_hooks.pxi): the unpack hook's
# tensor gets the saved tensor's place in the graph (the node's next edge for
# an input, the node itself for its output), as PyTorch's SavedVariable does.
# No version check: what the hooks stored is theirs to keep consistent.

cdef object _unpack_hooked_input(Node owner, _PackedSaved p, int edge_index, bint as_tensor):
    cdef Tensor r = _call_unpack(p)
    cdef Tensor t
    cdef Tensor leaf
    if not as_tensor:
        return r._array
    x = rg_next_fn(owner, edge_index)
    if x is None:
        t = _rg_wrap(r._array, r._device)
    elif type(x) is AccumulateGrad:
        leaf = (<AccumulateGrad>x).variable
        if leaf._array is r._array:
            return leaf
        # other data for a leaf: a non-leaf whose gradient flows into the leaf
        t = _rg_wrap_with_grad_fn(r._array, r._device, <Node>x, 0)
    else:
        t = _rg_wrap_with_grad_fn(r._array, r._device, <Node>x, rg_next_nr(owner, edge_index))
    t._version_counter = r._version_counter
    return t


cdef object _unpack_hooked_output(Node owner, _PackedSaved p, bint as_tensor):
    cdef Tensor r = _call_unpack(p)
    cdef Tensor t
    if not as_tensor:
        return r._array
    t = _rg_wrap_with_grad_fn(r._array, r._device, owner, 0)
    t._version_counter = r._version_counter
    return t


# ---------------------------------------------------------------------------
# detach_() of a tensor that a node saved (torch: "Trying to use a saved
# tensor that has been detached in-place"). A custom Function keeps the saved
# tensor itself and sees its grad_fn gone; a generated node keeps only the
# tensor's (grad_fn, output_nr) edge, so detach_() notes that pair here, weakly
# keyed by the node (it is forgotten with the graph). Empty until the first
# detach_() of a non-leaf: unpacking then costs one global check.

cdef object _detached_outputs = None     # WeakKeyDictionary: Node -> set of output_nr


cdef object _note_detached(Node fn, int output_nr):
    global _detached_outputs
    if _detached_outputs is None:
        _detached_outputs = _weakref.WeakKeyDictionary()
    nrs = _detached_outputs.get(fn)
    if nrs is None:
        _detached_outputs[fn] = {output_nr}
    else:
        nrs.add(output_nr)


cdef int _check_not_detached(Node owner, int edge_index) except -1:
    x = rg_next_fn(owner, edge_index)
    if x is None or type(x) is AccumulateGrad:
        return 0
    nrs = _detached_outputs.get(x)
    if nrs is not None and rg_next_nr(owner, edge_index) in nrs:
        _raise_detached()
    return 0


cdef int _raise_detached() except -1:
    raise RuntimeError(
        "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
        "This is not supported, please use out-of-place `.detach()` instead")
