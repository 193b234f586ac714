# What a node returns: validating its gradients against the next nodes'
# metadata, accumulating them into input buffers, evaluating a node (with
# anomaly checks) and consuming it. Part of _engine.pyx, included in place.

cdef int _validate_outputs(Node owner, tuple roots, list grads, Node node,
                           Py_ssize_t batch=-1) except -1:
    # Each gradient must match the input it flows into: a broadcast shape is
    # summed back (this is how broadcasting ops need no reduction of their
    # own), a different dtype is cast, anything else is an error.
    # The gradients flow along `owner`'s next edges or, for the roots of a
    # backward (owner None), along `roots`: flat (node, input_nr) pairs.
    cdef Py_ssize_t i, n = len(grads)
    cdef Node fn
    cdef int nr
    cdef tuple mshape
    cdef object mdtype
    cdef InputMetadata meta
    for i in range(n):
        g = grads[i]
        if g is None:
            continue
        x = rg_next_fn(owner, i) if owner is not None else roots[2 * i]
        if x is None:
            grads[i] = None
            continue
        if type(g) is not ndarray and isinstance(g, np.generic):
            # NumPy turns 0-d results into scalars; a gradient is an array
            # (hooks wrap it in a Tensor, whose data must be an ndarray).
            g = np.asarray(g)
        fn = <Node>x
        nr = rg_next_nr(owner, i) if owner is not None else roots[2 * i + 1]
        meta = fn._meta0 if nr == 0 else fn.metadata_of(nr)
        mshape = meta.shape
        if batch >= 0:
            # A batched graph task's gradients carry the batch as their first dim.
            mshape = (batch,) + mshape
        mdtype = meta.dtype
        mdevice = meta.device
        if type(g) is ndarray:
            # Fast path: compare dims and dtype at C level, no tuple built
            # (builtin dtypes are singletons, so identity usually decides).
            if not _same_shape(<cnp.ndarray>g, mshape):
                g = _fix_shape(g, mshape, node, i, batch >= 0)
            if <object>cnp.PyArray_DESCR(<cnp.ndarray>g) is not mdtype and g.dtype != mdtype:
                _check_grad_dtype(g.dtype, mdtype, node, i)
                g = g.astype(mdtype)
            if meta.is_cupy:
                g = _array_to_input_device(g, meta, node, i)
        else:
            shape = g.shape
            if shape != mshape:
                g = _fix_shape(g, mshape, node, i, batch >= 0)
            dt = g.dtype
            if dt is not mdtype and dt != mdtype:
                _check_grad_dtype(dt, mdtype, node, i)
                if isinstance(g, Tensor):
                    g = g.to(mdtype)
                else:
                    g = g.astype(mdtype)
            if not isinstance(g, Tensor) and (type(g) is not ndarray) != meta.is_cupy:
                g = _array_to_input_device(g, meta, node, i)
            if isinstance(g, Tensor) and (<Tensor>g)._device is not mdevice:
                # Only Tensors (create_graph) know their device. As in PyTorch, a
                # 0-d gradient moves; anything else means a wrong backward formula.
                if (<Tensor>g)._array.ndim == 0:
                    g = g.to(mdevice)
                else:
                    raise RuntimeError(
                        f"Function {node.name() if node is not None else 'backward'} returned an invalid "
                        f"gradient at index {i} - expected device {mdevice} but got "
                        f"{(<Tensor>g)._device}")
        grads[i] = g
    return 0


cdef int _check_grad_dtype(object gdt, object mdt, Node node, Py_ssize_t i) except -1:
    # torch's validate_outputs: a floating gradient is cast to the dtype of
    # the input it flows into, and so is an integer or bool one for a real
    # input; a complex gradient for a real input, or a non-floating one for
    # a complex input, would lose (or invent) an imaginary part: an error.
    cdef str gk = gdt.kind, mk = mdt.kind
    if gk == "f" or (gk in "iub" and mk != "c") or (gk == "c" and mk == "c"):
        return 0
    raise RuntimeError(
        f"Function {node.name() if node is not None else 'backward'} returned an invalid gradient "
        f"at index {i} - expected dtype {mdt} but got {gdt}: a gradient must be real for a real "
        "input and floating or complex for a complex input")


cdef object _array_to_input_device(object g, InputMetadata meta, Node node, Py_ssize_t i):
    # A gradient array on the host for a CUDA input, or on a GPU for a CPU
    # input: as in PyTorch, a 0-d gradient (a 0-d CPU tensor that joined a
    # CUDA op) moves; anything else means a wrong backward formula.
    if g.ndim != 0:
        raise RuntimeError(
            f"Function {node.name() if node is not None else 'backward'} returned an invalid gradient "
            f"at index {i} - expected device {meta.device} but got "
            f"{'cpu' if type(g) is ndarray else 'cuda'}")
    if meta.is_cupy:
        import cupy
        with cupy.cuda.Device(meta.device.index if meta.device.index >= 0 else 0):
            return cupy.asarray(g)
    return g.get()


cdef inline bint _same_shape(cnp.ndarray a, tuple shape):
    cdef int nd = cnp.PyArray_NDIM(a), k
    cdef cnp.npy_intp* dims
    if nd != len(shape):
        return False
    dims = cnp.PyArray_DIMS(a)
    for k in range(nd):
        if dims[k] != <cnp.npy_intp>shape[k]:
            return False
    return True


cdef object _fix_shape(object g, tuple mshape, Node node, Py_ssize_t i, bint batched=False):
    shape = tuple(g.shape)
    if batched:
        return _fix_batched_shape(g, mshape, node, i)
    if _expandable(mshape, shape):
        return rg_sum_to(g, mshape)
    raise RuntimeError(
        f"Function {node.name() if node is not None else 'backward'} returned an invalid "
        f"gradient at index {i} - got {list(shape)} but expected shape compatible with "
        f"{list(mshape)}")


cdef bint _expandable(tuple shape, tuple target):
    cdef Py_ssize_t n = len(shape), m = len(target), i
    if n > m:
        return False
    for i in range(n):
        s = shape[n - 1 - i]
        if s != target[m - 1 - i] and s != 1:
            return False
    return True


# Gradients of small tensors are summed by a plain loop: for a few dozen
# elements, NumPy's ufunc dispatch (`old += g`) costs ~20x the additions
# themselves, and fan-in (a tensor used by many ops) sums one gradient per
# use. Larger arrays keep NumPy's loops, which release the GIL.
cdef enum:
    _SMALL_ADD = 4096


ctypedef fused _real:
    float
    double


cdef inline void _add_loop(_real* a, const _real* b, Py_ssize_t n) noexcept:
    cdef Py_ssize_t i
    for i in range(n):
        a[i] += b[i]


cdef inline bint _add_small_inplace(cnp.ndarray old, cnp.ndarray g) noexcept:
    # old += g for C-contiguous, aligned, native float32/float64 arrays of
    # the same dtype and shape (the caller checked both); False: not done.
    cdef Py_ssize_t n = cnp.PyArray_SIZE(old)
    cdef int t
    if (n > _SMALL_ADD or not cnp.PyArray_IS_C_CONTIGUOUS(old) or not cnp.PyArray_IS_C_CONTIGUOUS(g)
            or not cnp.PyArray_ISALIGNED(old) or not cnp.PyArray_ISALIGNED(g)
            or not cnp.PyArray_ISNOTSWAPPED(old) or not cnp.PyArray_ISNOTSWAPPED(g)):
        return False
    t = cnp.PyArray_TYPE(old)
    if t == cnp.NPY_DOUBLE:
        _add_loop(<double*>cnp.PyArray_DATA(old), <double*>cnp.PyArray_DATA(g), n)
        return True
    if t == cnp.NPY_FLOAT:
        _add_loop(<float*>cnp.PyArray_DATA(old), <float*>cnp.PyArray_DATA(g), n)
        return True
    return False


cdef inline void _accumulate(list buf, int pos, object g, bint create_graph) except *:
    # PyTorch's InputBuffer::add: sum gradients arriving at one input,
    # in place when the buffered array is ours alone. An undefined gradient
    # (a backward that returned None there) adds nothing.
    if g is None:
        return
    old = buf[pos]
    if old is None:
        buf[pos] = g
        return
    if create_graph:
        buf[pos] = old + g
        return
    # References: the buffer and `old`. More means someone else can see it.
    # (Checked at C level: .flags, .dtype and .shape would each build an
    # object, a third of a small accumulation's cost.)
    if (type(old) is ndarray and type(g) is ndarray and Py_REFCNT(old) <= 2
            and cnp.PyArray_BASE(<cnp.ndarray>old) == NULL
            and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>old)
            and cnp.PyArray_DESCR(<cnp.ndarray>old) == cnp.PyArray_DESCR(<cnp.ndarray>g)
            and rg_same_dims(old, g)):
        if not _add_small_inplace(<cnp.ndarray>old, <cnp.ndarray>g):
            old += g
    else:
        s = old + g
        buf[pos] = np.asarray(s) if isinstance(s, np.generic) else s    # 0-d + 0-d is a scalar


cdef int _accumulate_on_stream(list buf, int pos, object g, bint create_graph, object producer,
                               Node consumer) except -1:
    # torch's InputBuffer::add with streams: the consumer's stream waits for
    # the producer's, and the sum is computed on the consumer's stream
    if g is None:
        return 0
    target = _input_stream(consumer, pos)
    if target is None:
        _accumulate(buf, pos, g, create_graph)
        return 0
    _wait_for(target, producer)
    import cupy
    with cupy.cuda.Device(target.device_id):
        with target:
            _accumulate(buf, pos, g, create_graph)
    return 0


cdef list _run_node(GraphTask gt, Node node, list inputs):
    # the node's backward (and the release of its saved variables), with the
    # op events of a recording profile
    cdef list outputs
    if gt.keep_graph:
        if rg_op_events_active():
            return _call_function_profiled(gt, node, inputs)     # see _profiled.pxi
        return _call_function(gt, node, inputs)
    _claim_node(node)                   # see Note [Consuming a node]
    try:
        if rg_op_events_active():
            outputs = _call_function_profiled(gt, node, inputs)
        else:
            outputs = _call_function(gt, node, inputs)
        node.release_variables()
    finally:
        _unclaim_node(node)
    return outputs


cdef int _evaluate_function(GraphTask gt, Node node, list inputs) except -1:
    # In anomaly mode the node is the thread's current node while it runs
    # and its gradients are summed into the next nodes' buffers (torch's
    # NodeGuard): nodes created meanwhile (create_graph) record it as parent.
    cdef void* prev_node
    if gt.anomaly_flags:
        prev_node = rg_exchange_current_node(<void*>node)
        try:
            return _evaluate_function_impl(gt, node, inputs)
        finally:
            rg_exchange_current_node(prev_node)
    return _evaluate_function_impl(gt, node, inputs)


cdef int _evaluate_function_impl(GraphTask gt, Node node, list inputs) except -1:
    cdef ExecInfo info
    cdef list outputs
    cdef Py_ssize_t i, n
    cdef Node nxt
    cdef PyObject* key
    cdef unordered_map[PyObjPtr, int].iterator it
    cdef bint ready
    cdef list buf
    cdef int nr
    if gt.exec_info:
        info = gt.exec_info.get(node)
        if info is None:
            return 0
        if not info.needed:
            inputs = _call_tensor_pre_hooks(node, inputs, gt.create_graph, gt.batch_size)
        if info.captures is not None:
            for cap in info.captures:
                gt.captured_vars[cap[1]] = inputs[cap[0]]
                _note_leaf_stream(gt, _input_stream(node, cap[0]))
        if not info.needed:
            return 0
    stream = _node_stream(node)
    if stream is None:
        outputs = _run_node(gt, node, inputs)
    else:
        if type(node) is AccumulateGrad:
            _note_leaf_stream(gt, stream)
        outputs = _run_on_stream(gt, node, inputs, stream)
    n = len(outputs)
    if n == 0:
        return 0
    if gt.anomaly_flags:
        _check_anomaly(gt, node, inputs, outputs)
    # See Note [Threading model]: nodes of this task running on other threads
    # may feed the same buffers.
    gt.lock()
    try:
        for i in range(n):
            nxt = rg_next_fn(node, i)
            if nxt is None:
                continue
            nr = rg_next_nr(node, i)
            key = <PyObject*>nxt
            it = gt.dependencies.find(key)
            if it == gt.dependencies.end():
                raise RuntimeError(f"dependency not found for {nxt.name()}")
            ready = False
            if deref(it).second == 1:
                gt.dependencies.erase(it)
                ready = True
            else:
                gt.dependencies[key] -= 1     # (deref(it).second -= 1 would decrement a copy)
            buf = gt.not_ready.get(nxt)
            if buf is None:
                if gt.exec_info:
                    info = gt.exec_info.get(nxt)
                    if info is None or not info.should_execute():
                        continue
                buf = [None] * (nxt._num_inputs if nxt._num_inputs > 0 else 1)
                if stream is None:
                    _accumulate(buf, nr, outputs[i], gt.create_graph)
                else:
                    _accumulate_on_stream(buf, nr, outputs[i], gt.create_graph, stream, nxt)
                if ready:
                    _push(_ready_queue(gt.cpu_ready_queue, _node_device(nxt)), gt, nxt, buf)
                else:
                    gt.not_ready[nxt] = buf
            else:
                if stream is None:
                    _accumulate(buf, nr, outputs[i], gt.create_graph)
                else:
                    _accumulate_on_stream(buf, nr, outputs[i], gt.create_graph, stream, nxt)
                if ready:
                    del gt.not_ready[nxt]
                    _push(_ready_queue(gt.cpu_ready_queue, _node_device(nxt)), gt, nxt, buf)
    finally:
        gt.unlock()
    return 0


cdef int _claim_node(Node node) except -1:
    # Wait (without the GIL) while another thread consumes `node`; this
    # thread's own claim (a reentrant backward inside the node) does not
    # block it.
    cdef unsigned long me = PyThread_get_thread_ident()
    cdef size_t i
    cdef bint busy = True
    cdef unsigned int pause = 20            # us; doubled up to 1 ms (rare, brief waits)
    while busy:
        busy = False
        for i in range(_consumed_nodes.size()):
            if _consumed_nodes[i] == <PyObject*>node and _consumed_by[i] != me:
                busy = True
                break
        if busy:
            with nogil:
                usleep(pause)
            if pause < 1000:
                pause *= 2
    _consumed_nodes.push_back(<PyObject*>node)
    _consumed_by.push_back(me)
    return 0


cdef void _unclaim_node(Node node) noexcept:
    cdef unsigned long me = PyThread_get_thread_ident()
    cdef size_t i = _consumed_nodes.size()
    while i > 0:
        i -= 1
        if _consumed_nodes[i] == <PyObject*>node and _consumed_by[i] == me:
            _consumed_nodes[i] = _consumed_nodes.back()
            _consumed_by[i] = _consumed_by.back()
            _consumed_nodes.pop_back()
            _consumed_by.pop_back()
            return


cdef int _check_anomaly(GraphTask gt, Node node, list inputs, list outputs) except -1:
    # PyTorch's anomaly check (engine.cpp, evaluate_function): a node that
    # returns NaN (or, with check_inf, infinite) gradients fails the backward.
    # New: the message shows what the node received and returned.
    cdef bint nan = (gt.anomaly_flags & RG_ANOMALY_CHECK_NAN) != 0
    cdef bint inf = (gt.anomaly_flags & RG_ANOMALY_CHECK_INF) != 0
    if not nan and not inf:
        return 0
    for i, g in enumerate(outputs):
        if g is None:
            continue
        arr = (<Tensor>g)._array if isinstance(g, Tensor) else g
        if arr.dtype.kind not in "fc":
            continue
        what = None
        if nan and bool(np.isnan(arr).any()):
            what = "nan"
        elif inf and bool(np.isinf(arr).any()):
            what = "inf"
        if what is not None:
            raise RuntimeError(
                f"Function '{node.name()}' returned {what} values in its {i}th output.\n"
                f"  gradients it received: {_describe_grads(inputs)}\n"
                f"  gradients it returned: {_describe_grads(outputs)}")
    return 0


cdef str _describe_grads(list grads):
    # "[0] float64 shape (3,): min 0.5, max inf, 1 nan", one entry per gradient.
    parts = []
    for i, g in enumerate(grads):
        if g is None:
            parts.append(f"[{i}] None")
            continue
        arr = (<Tensor>g)._array if isinstance(g, Tensor) else g
        parts.append(f"[{i}] {_describe_array(arr)}")
    return "; ".join(parts) if parts else "none"


cdef str _describe_array(object arr):
    import warnings
    desc = f"{arr.dtype} shape {tuple(arr.shape)}"
    if arr.size == 0:
        return desc + ": empty"
    if arr.dtype.kind not in "fciub":
        return desc
    vals = abs(arr) if arr.dtype.kind == "c" else arr      # (complex: magnitudes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # all-NaN arrays
        if arr.dtype.kind in "fc":
            lo, hi = vals.min(), vals.max()
            nnan = int(np.count_nonzero(np.isnan(vals)))
            if nnan:
                lo, hi = np.nanmin(vals), np.nanmax(vals)
            desc += f": min {lo}, max {hi}" + (f", {nnan} nan" if nnan else "")
        else:
            desc += f": min {vals.min()}, max {vals.max()}"
    return desc + (" (of |values|)" if arr.dtype.kind == "c" else "")
