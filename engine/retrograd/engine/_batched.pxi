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
#   without a batching rule does the same). A few hot nodes whose formula
#   is not batch-safe as written have a batching rule below instead
#   (matmul, mm, sum, mean, reshape, view, transpose, permute, expand,
#   broadcast_to), like PyTorch's batching rules for its vmap.
#   Hooks on tensors and nodes see one batch element's gradients at a time,
#   shaped as in an ordinary backward, as under torch's vmap: the engine
#   calls a hook once per element and stacks what it returns (torch traces
#   it once on a BatchedTensor, so a hook with side effects runs B times
#   here and once there). retain_grad() cannot store a batched gradient and
#   raises, as torch does.

cdef object _batch_safe_types = None
cdef dict _batching_rules = None      # node type -> rule(node, grad, create_graph) -> list


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
        _init_batching_rules(_core_abi)
    return type(node) in <frozenset>_batch_safe_types


cdef int _init_batching_rules(object core_abi) except -1:
    global _batching_rules
    _batching_rules = {
        core_abi.MatmulBackward0: _matmul_rule,
        core_abi.MmBackward0: _mm_rule,
        core_abi.SumBackward0: _sum_rule,
        core_abi.MeanBackward0: _mean_rule,
        core_abi.ReshapeBackward0: _reshape_rule,
        core_abi.ViewBackward0: _reshape_rule,
        core_abi.TransposeBackward0: _transpose_rule,
        core_abi.PermuteBackward0: _permute_rule,
        core_abi.ExpandBackward0: _sum_to_rule,
        core_abi.BroadcastToBackward0: _sum_to_rule,
    }
    return 0


def batching_rule_node_types():
    """The node classes that run once on a whole batch through a batching
    rule of the engine (see Note [Batched gradients])."""
    if _batch_safe_types is None:
        _is_batch_safe(None)
    return frozenset(_batching_rules)


def batch_safe_node_types():
    """The node classes that run once on a whole batch of gradients (see
    Note [Batched gradients]); every other node loops over the batch."""
    if _batch_safe_types is None:
        _is_batch_safe(None)
    return _batch_safe_types


cdef list _apply_batched(GraphTask gt, Node node, list inputs):
    # A batching rule if the node has one; otherwise the vmap fallback: one
    # apply per batch element, each result summed to its input's (unbatched)
    # shape, then all stacked along a new first dim.
    cdef Py_ssize_t b, i, n = node._num_edges
    rule = _batching_rules.get(type(node))
    if rule is not None and len(inputs) == 1 and inputs[0] is not None:
        return rule(node, inputs[0], gt.create_graph)
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


# ---------------------------------------------------------------------------
# Batching rules: the node's formula rewritten for a gradient with a leading
# batch dim. Broadcast dims they leave are summed by _fix_batched_shape.

cdef object _operand(object saved, bint create_graph):
    # saved tensors as the formulas see them: Tensors when the backward
    # records a graph, their arrays otherwise
    return saved if create_graph else (<Tensor>saved)._array


cdef object _mT(object x):
    return x.transpose(-1, -2) if isinstance(x, Tensor) else x.swapaxes(-1, -2)


cdef object _matmul_grads(Node node, object g, object a, object b):
    # torch's 1-D promotion rules, as core's matmul_backward, with g of shape
    # (B,) + the output's shape.
    cdef bint need_a = rg_next_fn(node, 0) is not None
    cdef bint need_b = rg_next_fn(node, 1) is not None
    ga = gb = None
    B = g.shape[0]
    if a.ndim == 1 and b.ndim == 1:                 # dot: g is (B,)
        g2 = g.reshape((B, 1))
        ga = g2 * b if need_a else None
        gb = g2 * a if need_b else None
    elif b.ndim == 1:                               # (..., n, k) @ (k,): g (B, ..., n)
        gcol = g.reshape(tuple(g.shape) + (1,))
        ga = gcol * b if need_a else None
        if need_b and a.ndim == 2:
            gb = g @ a                              # one (B, n) @ (n, k) product
        elif need_b:
            gb = _mT(a) @ gcol
            gb = gb.reshape(tuple(gb.shape[:-1]))
    elif a.ndim == 1:                               # (k,) @ (..., k, m): g (B, ..., m)
        if need_a and b.ndim == 2:
            ga = g @ _mT(b)                         # one (B, m) @ (m, k) product
        elif need_a:
            ga = b @ g.reshape(tuple(g.shape) + (1,))
            ga = ga.reshape(tuple(ga.shape[:-1]))
        if need_b:
            gb = a.reshape((a.shape[0], 1)) * g.reshape(tuple(g.shape[:-1]) + (1, g.shape[-1]))
    else:
        ga = g @ _mT(b) if need_a else None
        gb = _mT(a) @ g if need_b else None
    return [ga, gb]


def _matmul_rule(Node node, g, bint create_graph):
    return _matmul_grads(node, g, _operand(node._saved_self, create_graph),
                         _operand(node._saved_other, create_graph))


def _mm_rule(Node node, g, bint create_graph):
    return _matmul_grads(node, g, _operand(node._saved_self, create_graph),
                         _operand(node._saved_mat2, create_graph))


cdef object _expand_reduced(object g, tuple shape, object dim, bint keepdim):
    # sum_backward with a leading batch dim: put the reduced dims back as
    # size 1 (unless keepdim kept them), then broadcast to (B,) + shape.
    cdef Py_ssize_t n = len(shape)
    B = g.shape[0]
    if not keepdim:
        if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0) or n == 0:
            kept = (1,) * n
        else:
            dims = dim if isinstance(dim, (tuple, list)) else (dim,)
            reduced = {d % n for d in dims}
            kept = tuple(1 if k in reduced else shape[k] for k in range(n))
        g = g.reshape((B,) + kept)
    target = (B,) + shape
    if isinstance(g, Tensor):
        return g.expand(*target)
    return np.broadcast_to(g, target)


def _sum_rule(Node node, g, bint create_graph):
    return [_expand_reduced(g, tuple(node._saved_self_shape), node._saved_dim,
                            node._saved_keepdim)]


def _mean_rule(Node node, g, bint create_graph):
    shape = tuple(node._saved_self_shape)
    dim = node._saved_dim
    cdef Py_ssize_t n = len(shape)
    count = 1
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        for s in shape:
            count *= s
    elif n > 0:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        for d in {d % n for d in dims}:
            count *= shape[d]
    return [_expand_reduced(g / count, shape, dim, node._saved_keepdim)]


def _reshape_rule(Node node, g, bint create_graph):
    shape = (g.shape[0],) + tuple(node._saved_self_shape)
    if isinstance(g, Tensor):
        from retrograd.core import abi as _core_abi
        return [_core_abi.reshape(g, shape)]
    return [g.reshape(shape)]


def _transpose_rule(Node node, g, bint create_graph):
    n = g.ndim - 1                      # the input's ndim
    if n == 0:                          # transpose of a 0-d tensor is the identity
        return [g]
    d0 = node._saved_dim0 % n + 1       # past the batch dim
    d1 = node._saved_dim1 % n + 1
    if isinstance(g, Tensor):
        from retrograd.core import abi as _core_abi
        return [_core_abi.transpose(g, d0, d1)]
    return [g.swapaxes(d0, d1)]


def _permute_rule(Node node, g, bint create_graph):
    n = node._saved_self_ndim
    dims = [d % n for d in node._saved_dims] if n else []
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d] = i
    perm = (0,) + tuple(i + 1 for i in inverse)
    if isinstance(g, Tensor):
        from retrograd.core import abi as _core_abi
        return [_core_abi.permute(g, perm)]
    return [g.transpose(perm)]


def _sum_to_rule(Node node, g, bint create_graph):
    # expand's backward is sum_to the input's shape, which the engine's
    # batched shape fix does (keeping the batch dim)
    return [g]
