# Running one node: its tensor, pre- and post-hooks around apply (see
# core's Note [Hook order]). Part of _engine.pyx, included in place.

# ---------------------------------------------------------------------------
# Running one node

cdef inline object _wrap_for_hook(object g, Node node, int input_nr):
    # Hooks see Tensors; in plain backward the engine moves ndarrays.
    if g is None or isinstance(g, Tensor):
        return g
    if input_nr < node._num_inputs:
        return rg_wrap(g, node.metadata_of(input_nr).device)
    return rg_wrap(g, rg_cpu_device())


cdef inline object _wrap_output_for_hook(object g, Node node, int i):
    # An output of `node` flows into its i-th next edge, whose input metadata
    # says the device.
    if g is None or isinstance(g, Tensor):
        return g
    if i < node._num_edges and rg_next_fn(node, i) is not None:
        return _wrap_for_hook(g, rg_next_fn(node, i), rg_next_nr(node, i))
    return rg_wrap(g, rg_cpu_device())


cdef str _hook_name(object fn):
    # torch names a hook by its __name__ ('<unknown>' for a partial or a
    # callable object) in the errors about what it returned.
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


cdef object _check_hook_value(object fn, object res, object orig, bint create_graph):
    # One gradient a hook returned in place of `orig` (the Tensor it was
    # given, or None): torch's check_single_result. A hook may not change
    # the dtype, device or shape of a gradient: a cast here would hide a bug
    # in the hook (torch refuses it too). Returns what the engine carries on.
    cdef Tensor r, o
    if res is None:
        return None
    if orig is None:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' can't replace a None gradient with a non-None value; "
            "return None (or nothing) for a gradient that is None")
    if not isinstance(res, Tensor):
        raise TypeError(
            f"expected Variable, but hook returned '{type(res).__name__}': hook "
            f"'{_hook_name(fn)}' must return a Tensor (or None to keep the gradient)")
    r = <Tensor>res
    o = <Tensor>orig
    if r._array.dtype != o._array.dtype:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has changed the type of value (was {o._array.dtype} got "
            f"{r._array.dtype}); a gradient hook must return a gradient of the dtype it received "
            f"(cast inside the hook's computation, not its result)")
    if r._device is not o._device:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has changed the type of value (was {o._device} tensor got "
            f"{r._device} tensor); a gradient hook must return a gradient on the device it received")
    if r._array.shape != o._array.shape:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has changed the size of value (was {list(o._array.shape)} "
            f"got {list(r._array.shape)}); a gradient hook must return a gradient of the shape it "
            "received")
    if create_graph:
        return r
    return r._array


cdef list _check_hook_values(object fn, object res, tuple origs, bint create_graph, bint batched):
    # A node hook's result: a tuple of one gradient (or None) per gradient it
    # was given (torch's check_result), each checked as above.
    cdef Py_ssize_t i, n = len(origs)
    if batched and isinstance(res, Tensor):
        res = (res,)             # (_call_hook_per_sample stacks a lone Tensor as is)
    if not isinstance(res, tuple):
        raise TypeError(
            f"expected tuple, but hook returned '{type(res).__name__}': hook '{_hook_name(fn)}' "
            "must return a tuple with one gradient (or None) per gradient it received, or None")
    if len(res) != n:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got {len(res)}, "
            f"but expected {n})")
    return [_check_hook_value(fn, res[i], origs[i], create_graph) for i in range(n)]


cdef list _call_tensor_pre_hooks(Node node, list inputs, bint create_graph, Py_ssize_t batch=-1):
    # See core's Note [Hook order]: tensor hooks, then retains-grad hooks.
    # batch >= 0: a batched backward, where hooks see one element at a time
    # (see Note [Batched gradients]).
    cdef list hooks = node.tensor_pre_hooks()
    cdef dict rg_hooks = rg_node_retains_grad_hooks(node)
    cdef int nr
    if hooks:
        for h in list(hooks):
            nr = h[1]
            g = inputs[nr]
            if g is None:
                # torch calls a tensor's hook even when no gradient reached it
                # this time (a backward that returned None): with None
                _check_hook_value(h[2], h[2](None), None, create_graph)
                continue
            gw = _wrap_for_hook(g, node, nr)
            if batch >= 0:
                res = _call_hook_per_sample(h[2], (gw,), batch)
            else:
                res = h[2](gw)
            if res is not None:
                inputs[nr] = _check_hook_value(h[2], res, gw, create_graph)
    if rg_hooks:
        for nr, fn in list(rg_hooks.items()):
            g = inputs[nr]
            if g is not None:
                if batch >= 0:
                    _refuse_batched_retain_grad(node, nr)
                fn(_wrap_for_hook(g, node, nr))
    return inputs


cdef list _call_pre_hooks(Node node, list inputs, bint create_graph, Py_ssize_t batch=-1):
    cdef list hooks = rg_node_pre_hooks(node)
    if not hooks:
        return inputs
    for h in list(hooks):
        grads = tuple([_wrap_for_hook(g, node, i) for i, g in enumerate(inputs)])
        res = _call_hook_per_sample(h[1], (grads,), batch) if batch >= 0 else h[1](grads)
        if res is not None:
            inputs = _check_hook_values(h[1], res, grads, create_graph, batch >= 0)
    return inputs


cdef list _call_post_hooks(Node node, list outputs, list inputs, bint create_graph,
                           Py_ssize_t batch=-1):
    for h in list(rg_node_post_hooks(node)):
        grad_inputs = tuple([_wrap_output_for_hook(g, node, i) for i, g in enumerate(outputs)])
        grad_outputs = tuple([_wrap_for_hook(g, node, i) for i, g in enumerate(inputs)])
        if batch >= 0:
            res = _call_hook_per_sample(h[1], (grad_inputs, grad_outputs), batch)
        else:
            res = h[1](grad_inputs, grad_outputs)
        if res is not None:
            outputs = _check_hook_values(h[1], res, grad_inputs, create_graph, batch >= 0)
    return outputs


cdef list _call_function(GraphTask gt, Node node, list inputs, bint profiled=False):
    cdef list outputs
    cdef list inputs_copy = None
    cdef bint post = False
    if rg_node_has_extras(node) or type(node) is AccumulateGrad:
        inputs = _call_tensor_pre_hooks(node, inputs, gt.create_graph, gt.batch_size)
        inputs = _call_pre_hooks(node, inputs, gt.create_graph, gt.batch_size)
        post = bool(rg_node_post_hooks(node))
        if post:
            inputs_copy = list(inputs)
    if gt.batch_size >= 0 and rg_node_batching(node) != RG_BATCH_SAFE:
        outputs = _apply_batched(gt, node, inputs)
    elif profiled:
        outputs = _apply_profiled(node, inputs, gt.create_graph)     # see _profiled.pxi
    else:
        outputs = node.apply(inputs, gt.create_graph)
    if len(outputs) != node._num_edges:
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {node._num_edges}, got {len(outputs)})")
    if not (gt.root_validated and node is gt.graph_root):
        # (A GraphRoot hands on the root gradients _execute validated
        # against the same edges: checking them again is one pass per root.)
        _validate_outputs(node, None, outputs, node, gt.batch_size)
    if post:
        outputs = _call_post_hooks(node, outputs, inputs_copy, gt.create_graph, gt.batch_size)
        _validate_outputs(node, None, outputs, node, gt.batch_size)
    return outputs
