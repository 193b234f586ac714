# Fast path of autograd.backward()/grad()'s argument checks. Part of _ops.pyx.
#
# _autograd.py's _make_grads and _root_edges check every (output, gradient)
# pair in Python: ~2 us a pair, as much as a cheap op's whole forward and
# backward, so a backward of many outputs (one per op) paid it once per op.
# This does the same checks at C level for the common call, where every
# output is a Tensor with a graph and every gradient a Tensor of exactly the
# output's shape, dtype (floating or complex) and device. Anything else
# returns None and _autograd.py runs its full checks, which raise the errors
# or convert the gradients; both paths give the same result.

def _fast_backward_args(tuple outputs, object grad_tensors, bint create_graph):
    """(root edges, gradients) for backward/grad, or None: take the checked path."""
    cdef Py_ssize_t i, n = len(outputs)
    cdef Tensor out, g
    cdef Edge e
    cdef object a, ga
    cdef char kind
    cdef tuple seq
    if grad_tensors is None and not create_graph:
        return _implicit_ones_args(outputs)
    if isinstance(grad_tensors, Tensor):
        seq = (grad_tensors,)
    elif type(grad_tensors) is list:
        seq = tuple(<list>grad_tensors)
    elif type(grad_tensors) is tuple:
        seq = <tuple>grad_tensors
    else:
        return None
    if len(seq) != n:
        return None
    cdef list roots = [None] * n
    cdef list grads = [None] * n
    for i in range(n):
        if not isinstance(outputs[i], Tensor) or not isinstance(seq[i], Tensor):
            return None
        out = <Tensor>outputs[i]
        g = <Tensor>seq[i]
        a = out._array
        ga = g._array
        if type(a) is not ndarray or type(ga) is not ndarray or g._device is not out._device:
            return None
        # Builtin dtypes are singletons: identity is the common case of equality.
        if _cnp.PyArray_DESCR(<_cnp.ndarray>a) != _cnp.PyArray_DESCR(<_cnp.ndarray>ga):
            return None
        kind = (<_cnp.dtype><object>_cnp.PyArray_DESCR(<_cnp.ndarray>a)).kind
        if kind != b'f' and kind != b'c':
            return None
        if not rg_same_dims(a, ga):
            return None
        e = out.gradient_edge()
        if e is None:
            return None
        roots[i] = e
        grads[i] = g if create_graph else ga
    return tuple(roots), tuple(grads)


cdef object _ONE = 1


cdef object _one_like(_cnp.ndarray a):
    # a fresh one-element array of a's shape and dtype holding 1 (the root
    # gradient of loss.backward(): written in C for float32 and float64,
    # nearly every loss; NumPy's fill for the other dtypes)
    cdef int t = _cnp.PyArray_TYPE(a)
    cdef _cnp.ndarray r
    if (t == _cnp.NPY_DOUBLE or t == _cnp.NPY_FLOAT) and _cnp.PyArray_ISNOTSWAPPED(a):
        r = _cnp.PyArray_EMPTY(_cnp.PyArray_NDIM(a), _cnp.PyArray_DIMS(a), t, 0)
        if t == _cnp.NPY_DOUBLE:
            (<double*>_cnp.PyArray_DATA(r))[0] = 1.0
        else:
            (<float*>_cnp.PyArray_DATA(r))[0] = 1.0
        return r
    r = _cnp.PyArray_NewCopy(a, _cnp.NPY_CORDER)
    _cnp.PyArray_FillWithScalar(r, _ONE)
    return r


cdef object _implicit_ones_args(tuple outputs):
    # `loss.backward()`: each output a one-element floating Tensor with a
    # graph, its gradient ones of its shape and dtype (np.ones_like's result,
    # for a tenth of its cost). create_graph takes the checked path, which
    # also reports the ones to a compile trace.
    cdef Py_ssize_t i, n = len(outputs)
    cdef Tensor out
    cdef Edge e
    cdef object a, ones
    cdef list roots = [None] * n
    cdef list grads = [None] * n
    for i in range(n):
        if not isinstance(outputs[i], Tensor):
            return None
        out = <Tensor>outputs[i]
        a = out._array
        if type(a) is not ndarray or _cnp.PyArray_SIZE(<_cnp.ndarray>a) != 1:
            return None
        if (<_cnp.dtype><object>_cnp.PyArray_DESCR(<_cnp.ndarray>a)).kind != b'f':
            return None
        e = out.gradient_edge()
        if e is None:
            return None
        ones = _one_like(<_cnp.ndarray>a)
        roots[i] = e
        grads[i] = ones
    return tuple(roots), tuple(grads)


# autograd.backward, for _tensor_backward: looked up on its first call
# (_autograd.py imports core's compiled modules, so not at import time)
cdef object _autograd_backward = None


def _tensor_backward(Tensor t, gradient, retain_graph, create_graph, inputs):
    """``t.backward(gradient, retain_graph, create_graph, inputs)``.

    ``loss.backward()`` (no gradient, inputs or create_graph) runs what
    autograd.backward does for it, the same C-level checks and engine call,
    without its Python frames, which cost as much as the engine's run of a
    small graph; anything else is autograd.backward's."""
    global _autograd_backward
    if gradient is None and inputs is None and not create_graph:
        fast = _implicit_ones_args((t,))
        if fast is not None:
            _run_backward(fast[0], fast[1], bool(retain_graph), False, (), True)
            return
    if _autograd_backward is None:
        from retrograd.core._autograd import backward
        _autograd_backward = backward
    _autograd_backward((t,), None if gradient is None else (gradient,), retain_graph,
                       create_graph, inputs=inputs)
