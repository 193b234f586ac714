# Note [Multi-output views]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# split, chunk and unbind return several views of one input from one op. torch
# records one node for all of them (SplitBackward0, SplitWithSizesBackward0,
# UnbindBackward0) with one input per piece, and that shape is visible:
#   - a backward through any piece runs that one node, and a hook registered on
#     a piece that got no gradient in that backward is called with None;
#   - every piece's grad_fn is the same object, with output_nr the piece's place.
# The pieces are made by getitem first (which marks them as views and gives
# them their forward gradients, trace entries and op events); then, when a
# graph is being recorded, one shared node replaces their getitem nodes. Its
# backward puts each gradient in its piece's place in a zero gradient for the
# input (stacked for unbind, concatenated for split), as torch's
# unbind_backward and split_backward do. None of the pieces may be modified in
# place under grad (Note [View creation meta]), so the node never has to be
# rebased.

@cython.trashcan(True)
cdef class _MultiViewNode(Node):
    cdef int _dim
    cdef bint _stacked                  # unbind: each piece lost `dim`
    cdef tuple _shape                   # the input's shape and dtype
    cdef object _dtype

    cdef list apply(self, list grads, bint create_graph):
        cdef Py_ssize_t i, n = len(grads)
        cdef object first = None
        for i in range(n):
            if grads[i] is not None:
                first = grads[i]
                break
        if first is None:
            return [None]
        lead = (slice(None),) * self._dim
        if create_graph:
            # Differentiable: the pieces (zeros where a piece got no gradient)
            # stacked or concatenated back together by the table's ops.
            parts = [grads[i] if grads[i] is not None
                     else _rg_wrap(rg_zeros_like_metadata(self.metadata_of(<int>i)), (<Tensor>first)._device)
                     for i in range(n)]
            return [_op_stack(parts, self._dim) if self._stacked else _op_cat(parts, self._dim)]
        xp = np if type(first) is ndarray else _cupy
        out = xp.zeros(self._shape, dtype=self._dtype)
        cdef Py_ssize_t start = 0, size
        for i in range(n):
            if self._stacked:
                where = lead + (i,)
            else:
                size = self.metadata_of(<int>i).shape[self._dim]
                where = lead + (slice(start, start + size),)
                start += size
            if grads[i] is not None:
                out[where] = grads[i]
        return [out]


@cython.final
@cython.trashcan(True)
cdef class UnbindBackward0(_MultiViewNode):
    """The node shared by the outputs of ``unbind`` (Note [Multi-output views])."""


@cython.final
@cython.trashcan(True)
cdef class SplitBackward0(_MultiViewNode):
    """The node shared by the outputs of ``split`` with one size, and of ``chunk``."""


@cython.final
@cython.trashcan(True)
cdef class SplitWithSizesBackward0(_MultiViewNode):
    """The node shared by the outputs of ``split`` with a list of sizes."""


cdef int _share_multi_view_node(list outs, Tensor base, type cls, int dim, bint stacked) except -1:
    # Replaces the pieces' getitem nodes with one node of class `cls`.
    cdef Tensor piece
    cdef Node old
    cdef _MultiViewNode node
    cdef Py_ssize_t i
    if not outs or (<Tensor>outs[0])._grad_fn is None:
        return 0
    old = (<Tensor>outs[0])._grad_fn
    node = <_MultiViewNode>cls.__new__(cls)
    node._dim = dim
    node._stacked = stacked
    node._shape = tuple(base._array.shape)
    node._dtype = base._array.dtype
    _set_edges1(node, old._fn0, old._nr0)
    # (the last piece's number: the node is complete once every piece exists)
    node.seq_nr = (<Tensor>outs[len(outs) - 1])._grad_fn.seq_nr
    for i in range(len(outs)):
        piece = <Tensor>outs[i]
        node.add_input_metadata(piece._array, piece._device)
    if rg_anomaly_mode:
        _record_anomaly_trace(node)
    for i in range(len(outs)):
        piece = <Tensor>outs[i]
        piece._grad_fn = node
        piece._output_nr = <int>i
        piece._edge_cache = None
    return 0
