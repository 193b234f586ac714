# Batched gradients (grad(..., is_grads_batched=True)). Part of _engine.pyx.
# Must never cost anything to an ordinary backward: everything here runs
# only when GraphTask.batch_size >= 0.
#
# Note [Batched gradients]
#   PyTorch vmaps the backward over the first dimension of grad_outputs. Here
#   the graph task runs once with every gradient shaped (B,) + the shape its
#   input expects. How each node runs is the derivatives table's to say
#   (core's rg_node_batching; the engine knows no op): a node whose formulas
#   only broadcast against `grad` (`batched: true`, and GraphRoot, which
#   passes its gradients through) runs once on the batched arrays, and the
#   engine's reduce-to-input-shape step keeps the leading batch dim; a node
#   with batching formulas (`batched: {input: formula}`: matmul, mm, sum,
#   mean, reshape, view, transpose, permute, expand, broadcast_to, like
#   PyTorch's batching rules for its vmap) runs those through
#   rg_apply_batched. Every other node falls back, inside its own
#   evaluation, to one apply per batch element, and the per-element results
#   are stacked (PyTorch's vmap fallback for ops without a batching rule
#   does the same).
#   Hooks on tensors and nodes see one batch element's gradients at a time,
#   shaped as in an ordinary backward, as under torch's vmap: the engine
#   calls a hook once per element and stacks what it returns (torch traces
#   it once on a BatchedTensor, so a hook with side effects runs B times
#   here and once there). retain_grad() cannot store a batched gradient and
#   raises, as torch does.

cdef list _apply_batched(GraphTask gt, Node node, list inputs):
    # The node's batching formulas if the table gives it some (core runs
    # them); otherwise the vmap fallback: one apply per batch element, each
    # result summed to its input's (unbatched) shape, then all stacked along
    # a new first dim.
    cdef Py_ssize_t b, i, n = node._num_edges
    if rg_node_batching(node) == RG_BATCH_RULE and len(inputs) == 1 and inputs[0] is not None:
        return rg_apply_batched(node, inputs, gt.create_graph)
    cdef list rows = [[] for _ in range(n)]
    cdef list outs
    for b in range(gt.batch_size):
        outs = node.apply([None if g is None else g[b, ...] for g in inputs], gt.create_graph)
        if len(outs) != n:
            raise RuntimeError(
                f"function {node.name()} returned an incorrect number of gradients "
                f"(expected {n}, got {len(outs)})")
        _validate_outputs(node, None, outs, node)
        for i in range(n):
            rows[i].append(outs[i])
    return [_stack_rows(node, i, rows[i], gt.create_graph) for i in range(n)]


cdef object _stack_rows(Node node, Py_ssize_t i, list row, bint create_graph):
    cdef InputMetadata meta
    like = None
    for g in row:
        if g is not None:
            like = g
            break
    if like is None:
        return None
    if isinstance(like, Tensor):
        from retrograd.core import stack as _rg_stack
        filled = [g if g is not None else rg_wrap(_zeros_like_any((<Tensor>like)._array),
                                                  (<Tensor>like)._device)
                  for g in row]
        return _rg_stack(filled)
    filled = [g if g is not None else _zeros_like_any(like) for g in row]
    if type(like) is ndarray:
        return np.stack(filled)
    import importlib
    xp = importlib.import_module(type(like).__module__.split(".")[0])
    return xp.stack(filled)


cdef object _sample_of(object a, Py_ssize_t b):
    # Batch element b of a hook argument: a Tensor, None, or a tuple of them.
    if a is None:
        return None
    if isinstance(a, tuple):
        return tuple([_sample_of(x, b) for x in a])
    return a[b]


cdef object _call_hook_per_sample(object fn, tuple args, Py_ssize_t batch):
    # A hook during a batched backward (see Note [Batched gradients]): one
    # call per batch element with that element's gradients; the results are
    # stacked back along the batch dim. A hook that returns None for an
    # element leaves that element's gradients (args[0]) as they were.
    cdef Py_ssize_t b, i, n
    cdef list results = []
    cdef bint changed = False
    for b in range(batch):
        sample = tuple([_sample_of(a, b) for a in args])
        res = fn(*sample)
        if res is None:
            res = sample[0]
        else:
            changed = True
        results.append(res)
    if not changed:
        return None
    first = results[0]
    if not isinstance(first, (tuple, list)):
        for res in results:
            if isinstance(res, (tuple, list)):
                raise RuntimeError("a hook returned a tuple for some batch elements and a Tensor "
                                   "for others in a batched backward (is_grads_batched=True)")
        return _stack_hook_row(results)
    n = len(first)
    for res in results:
        if not isinstance(res, (tuple, list)) or len(res) != n:
            raise RuntimeError("a hook returned gradients of different counts for different batch "
                               "elements in a batched backward (is_grads_batched=True)")
    return tuple([_stack_hook_row([res[i] for res in results]) for i in range(n)])


cdef object _stack_hook_row(list row):
    # Hooks return Tensors (or None, a zero gradient); stacked as a Tensor so
    # the caller unwraps it like any hook result. Under create_graph the
    # stack is recorded (the engine runs with grad mode on then).
    for g in row:
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"a backward hook must return a Tensor or None, got {type(g).__name__}")
    return _stack_rows(None, 0, row, False)


cdef int _refuse_batched_retain_grad(Node node, int nr) except -1:
    raise RuntimeError(
        f"retain_grad() cannot store the gradient of input {nr} of {node.name()} in a batched "
        f"backward (is_grads_batched=True): .grad would hold the whole batch. Compute that "
        f"gradient with grad(..., is_grads_batched=True) as one of its inputs instead, or "
        f"call .retain_grad() only for ordinary backward passes.")


cdef object _zeros_like_any(object a):
    if type(a) is ndarray:
        return np.zeros_like(a)
    return a * 0


cdef object _fix_batched_shape(object g, tuple mshape, Node node, Py_ssize_t i):
    # mshape is (B,) + the input's shape. Sum the broadcast dims away but
    # never the batch dim: the dims between the batch and the input's own
    # dims, and the input's size-1 dims that the gradient broadcast.
    shape = tuple(g.shape)
    cdef Py_ssize_t nd = len(shape), m = len(mshape), lead = nd - m, k
    if nd == 0 or lead < 0 or shape[0] != mshape[0]:
        raise RuntimeError(
            f"Function {node.name() if node is not None else 'backward'} returned an invalid "
            f"gradient at index {i} in a batched backward (is_grads_batched=True) - got "
            f"{list(shape)} but expected the batch size {mshape[0]} followed by a shape "
            f"compatible with {list(mshape[1:])}")
    axes = list(range(1, 1 + lead))
    for k in range(1, m):
        if mshape[k] == 1 and shape[lead + k] != 1:
            axes.append(lead + k)
        elif mshape[k] != shape[lead + k]:
            raise RuntimeError(
                f"Function {node.name() if node is not None else 'backward'} returned an invalid "
                f"gradient at index {i} - got {list(shape[1:])} but expected shape compatible "
                f"with {list(mshape[1:])} (batch size {mshape[0]})")
    if not axes:
        return g
    if isinstance(g, Tensor):
        return g.sum(dim=tuple(axes), keepdim=True).reshape(mshape)
    return g.sum(axis=tuple(axes), keepdims=True).reshape(mshape)


cdef object _execute_batched(tuple roots, tuple grads, bint keep_graph, bint create_graph,
                             tuple inputs, Py_ssize_t batch_size):
    # core's batched engine slot: one graph task whose gradients carry a
    # leading batch dim of `batch_size`; returns the captured gradients of
    # `inputs` (grad(..., is_grads_batched=True); see Note [Batched gradients]).
    if batch_size < 0:
        raise ValueError(f"batch_size must be >= 0, got {batch_size}")
    if not inputs:
        raise RuntimeError("a batched backward needs inputs: it only computes grad(), never .grad")
    return _execute_task(roots, grads, keep_graph, create_graph, inputs, False, batch_size)
