# Batched gradients (grad(..., is_grads_batched=True)). Part of _engine.pyx.
# Must never cost anything to an ordinary backward: everything here runs
# only when GraphTask.batch_size >= 0.
#
# Note [Batched gradients]
#   PyTorch vmaps the backward over the first dimension of grad_outputs. Here
#   the graph task runs once with every gradient shaped (B,) + the shape its
#   input expects. Nodes whose formulas are batch-safe by construction
#   (elementwise formulas that only broadcast against `grad`; declared with
#   `batched: true` in derivatives.yaml, plus GraphRoot, which passes its
#   gradients through) run once on the batched arrays, and the engine's
#   reduce-to-input-shape step keeps the leading batch dim. Every other node
#   falls back, inside its own evaluation, to one apply per batch element,
#   and the per-element results are stacked (PyTorch's vmap fallback for ops
#   without a batching rule does the same).

cdef object _batch_safe_types = None


cdef bint _is_batch_safe(Node node) except -1:
    global _batch_safe_types
    if _batch_safe_types is None:
        from retrograd.core import abi as _core_abi
        from retrograd.core import _generated_ops_info
        types = {_core_abi.GraphRoot}
        for info in _generated_ops_info.OPS.values():
            if info.get("batched") and info.get("node"):
                types.add(getattr(_core_abi, info["node"]))
        _batch_safe_types = frozenset(types)
    return type(node) in <frozenset>_batch_safe_types


def batch_safe_node_types():
    """The node classes that run once on a whole batch of gradients (see
    Note [Batched gradients]); every other node loops over the batch."""
    if _batch_safe_types is None:
        _is_batch_safe(None)
    return _batch_safe_types


cdef list _apply_per_sample(GraphTask gt, Node node, list inputs):
    # The vmap fallback: one apply per batch element, each result summed to
    # its input's (unbatched) shape, then all stacked along a new first dim.
    cdef Py_ssize_t b, i, n = node._num_edges
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
        from retrograd.core import abi as _core_abi, stack as _rg_stack
        filled = [g if g is not None else _core_abi._wrap(_zeros_like_any(like._array),
                                                          (<Tensor>like)._device)
                  for g in row]
        return _rg_stack(filled)
    filled = [g if g is not None else _zeros_like_any(like) for g in row]
    if type(like) is ndarray:
        return np.stack(filled)
    import importlib
    xp = importlib.import_module(type(like).__module__.split(".")[0])
    return xp.stack(filled)


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


def run_batched_backward(tuple roots, tuple grads, bint keep_graph, bint create_graph,
                         tuple inputs, Py_ssize_t batch_size):
    """Run one graph task whose gradients carry a leading batch dim of
    ``batch_size`` and return the captured gradients of ``inputs`` (what
    ``grad(..., is_grads_batched=True)`` calls; see Note [Batched gradients])."""
    if batch_size < 0:
        raise ValueError(f"batch_size must be >= 0, got {batch_size}")
    if not inputs:
        raise RuntimeError("a batched backward needs inputs: it only computes grad(), never .grad")
    return _execute_task(roots, grads, keep_graph, create_graph, inputs, False, batch_size)
