# Batched backward formulas: the `batched:` formulas of derivatives.yaml.
# Part of _ops.pyx.
#
# A batched backward (grad(..., is_grads_batched=True)) runs the graph once
# with every gradient shaped (B,) + the shape its node input expects (see
# _rg_node_batching in abi.pxd). An entry whose ordinary formulas only
# broadcast against `grad` says `batched: true` and runs them as they are.
# An entry whose formulas would misread the leading batch dim (a reduction
# over "all dims", a reshape to the input's shape, a transpose counted from
# the front) gives one formula per input here instead; it receives the
# batched `grad` and returns the batched gradient (broadcast dims left in
# place: the engine sums them to the input's shape, keeping the batch dim).
# Every other node runs once per batch element (the vmap fallback).
#
# Like the formula helpers, each takes the namespace first: `A` (arrays) or
# `T` (Tensors, create_graph).

from retrograd.core._arg_checks cimport _wrap_dim


cdef object _batched_expand_reduced(ns, grad, tuple shape, dim, bint keepdim):
    # sum's backward with a leading batch dim: the reduced dims come back as
    # size 1 (unless keepdim kept them), then broadcast to (B,) + shape.
    cdef Py_ssize_t n = len(shape)
    B = grad.shape[0]
    if not keepdim:
        if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0) or n == 0:
            kept = (1,) * n
        else:
            dims = dim if isinstance(dim, (tuple, list)) else (dim,)
            reduced = {_wrap_dim(d, n) for d in dims}
            kept = tuple(1 if k in reduced else shape[k] for k in range(n))
        grad = ns.reshape(grad, (B,) + kept)
    return ns.expand(grad, (B,) + shape)


def sum_backward_batched(ns, grad, tuple self_shape, dim, bint keepdim):
    return _batched_expand_reduced(ns, grad, self_shape, dim, keepdim)


def mean_backward_batched(ns, grad, tuple self_shape, dim, bint keepdim):
    cdef Py_ssize_t n = len(self_shape)
    count = 1
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        for s in self_shape:
            count *= s
    elif n > 0:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        for d in {_wrap_dim(d, n) for d in dims}:
            count *= self_shape[d]
    if count:
        grad = grad / count
    return _batched_expand_reduced(ns, grad, self_shape, dim, keepdim)


def matmul_backward_batched(ns, grad, a, b, int which):
    """matmul_backward with grad shaped (B,) + the output's shape: the
    gradient of input `which` (0: a, 1: b), with torch's 1-D promotion
    rules. Where one operand is 2-D the batch folds into one product."""
    B = grad.shape[0]
    if a.ndim == 1 and b.ndim == 1:                 # dot: grad is (B,)
        g2 = ns.reshape(grad, (B, 1))
        return g2 * (b if which == 0 else a)
    if b.ndim == 1:                                 # (..., n, k) @ (k,): grad (B, ..., n)
        gcol = ns.reshape(grad, tuple(grad.shape) + (1,))
        if which == 0:
            return gcol * b
        if a.ndim == 2:
            return ns.matmul(grad, a)               # one (B, n) @ (n, k) product
        g = ns.matmul(ns.mT(a), gcol)
        return ns.reshape(g, tuple(g.shape[:-1]))
    if a.ndim == 1:                                 # (k,) @ (..., k, m): grad (B, ..., m)
        if which == 0:
            if b.ndim == 2:
                return ns.matmul(grad, ns.mT(b))    # one (B, m) @ (m, k) product
            g = ns.matmul(b, ns.reshape(grad, tuple(grad.shape) + (1,)))
            return ns.reshape(g, tuple(g.shape[:-1]))
        return (ns.reshape(a, (a.shape[0], 1))
                * ns.reshape(grad, tuple(grad.shape[:-1]) + (1, grad.shape[-1])))
    if which == 0:
        return ns.matmul(grad, ns.mT(b))
    return ns.matmul(ns.mT(a), grad)


def reshape_backward_batched(ns, grad, tuple self_shape):
    return ns.reshape(grad, (grad.shape[0],) + self_shape)


def transpose_backward_batched(ns, grad, int dim0, int dim1):
    cdef Py_ssize_t n = grad.ndim - 1                # the input's ndim
    if n == 0:                                       # a 0-d transpose is the identity
        return grad
    return ns.transpose(grad, _wrap_dim(dim0, n) + 1, _wrap_dim(dim1, n) + 1)


def permute_backward_batched(ns, grad, dims, int self_ndim):
    inverse = [0] * self_ndim
    for i, d in enumerate(dims):
        inverse[_wrap_dim(d, self_ndim)] = i
    return ns.permute(grad, (0,) + tuple(i + 1 for i in inverse))
