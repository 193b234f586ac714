# Summing a gradient down to a shape (the inverse of broadcasting): the ABI
# function rg_sum_to (here _rg_sum_to) and its Python name sum_to, for arrays and, recording
# the graph (create_graph), for Tensors. Part of _ops.pyx.

cdef object _rg_sum_to(object g, tuple shape):
    """Sum ``g`` down to ``shape`` (the inverse of broadcasting)."""
    if isinstance(g, Tensor):
        return _t_sum_to(<Tensor>g, shape)
    gshape = g.shape
    if gshape == shape:
        return g
    cdef int lead = len(gshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"sum_to: gradient of shape {gshape} cannot be reduced to {shape}")
    axes = list(range(lead))
    for i in range(len(shape)):
        if shape[i] == 1 and gshape[lead + i] != 1:
            axes.append(lead + i)
        elif shape[i] != gshape[lead + i]:
            raise RuntimeError(f"sum_to: gradient of shape {gshape} cannot be reduced to {shape}")
    if axes:
        g = g.sum(axis=tuple(axes), keepdims=True)
    if lead:
        g = g.reshape(shape)
    return g


cdef Tensor _t_sum_to(Tensor g, tuple shape):
    gshape = g._array.shape
    if gshape == shape:
        return g
    cdef int lead = len(gshape) - len(shape)
    axes = list(range(lead))
    for i in range(len(shape)):
        if shape[i] == 1 and gshape[lead + i] != 1:
            axes.append(lead + i)
    out = g
    if axes:
        out = _op_sum(out, tuple(axes), True, None)
    if lead:
        out = _op_reshape(out, shape)
    return out


def sum_to(g, shape):
    """Sum an array or tensor down to ``shape`` (the inverse of broadcasting).

    A gradient that flowed back to an operand that was broadcast has the
    broadcast shape; summing over the broadcast dimensions gives the
    operand's own. Leading dimensions are summed away, and dimensions where
    ``shape`` has 1 are summed with ``keepdim``. A tensor is summed with
    recorded ops (differentiable); a NumPy or CuPy array stays an array.

    Parameters
    ----------
    g : Tensor or ndarray
        The broadcast gradient.
    shape : sequence of int
        The shape to reduce to; ``g``'s shape must broadcast from it.

    Returns
    -------
    Tensor or ndarray
        ``g`` summed to ``shape``, of ``g``'s kind (``g`` itself when the
        shapes already agree).

    Examples
    --------
    >>> import numpy as np
    >>> import retrograd as rg
    >>> rg.sum_to(rg.ones(2, 3), (1, 3))
    tensor([[2., 2., 2.]])
    >>> rg.sum_to(np.ones((2, 3)), (3,))
    array([2., 2., 2.])
    """
    return _rg_sum_to(g, tuple(shape))
