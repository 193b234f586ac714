# SavedVariable: a tensor saved for backward. Part of abi.pyx (saving and
# unpacking's errors: _ops's _saved_support.pxi).
#
# What is kept: the array, the shared version counter and the version at save
# time; for a leaf the leaf itself (it is alive through its AccumulateGrad
# anyway); for a non-leaf input its grad_fn and output_nr. An op's own output
# is saved WITHOUT its grad_fn: the node that saves it is that grad_fn, and a
# reference to it would be a cycle. unpack() rebuilds the tensor from the
# owning node instead (PyTorch's is_output rule).

from retrograd.core._ops cimport (
    _raise_released, _raise_detached, _raise_modified, _sv_unpack_hooked, _fw_attach_saved,
)


@cython.freelist(64)
@cython.final
cdef class SavedVariable:
    """A tensor saved by a node for its backward, with its version at save time.

    Ops save what their backward formula needs (``x`` for ``x * x``).
    Unpacking checks that the tensor was not modified in place since
    (its version counter moved: RuntimeError naming the op and both
    versions) and that the graph was not freed by a backward without
    ``retain_graph``. ``saved_tensors_hooks`` pack and unpack through it.
    torch's ``SavedVariable``; a node's ``_saved_<name>`` attributes unpack
    one.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1., 2.], requires_grad=True)
    >>> y = x * x
    >>> y.grad_fn._saved_self is x
    True
    >>> with rg.no_grad():
    ...     _ = x.mul_(2)
    >>> y.sum().backward()
    Traceback (most recent call last):
        ...
    RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation...
    """

    cdef object unpack(self, Node owner, bint as_tensor):
        cdef Tensor t
        if self._unpack_hook is not None:
            return _sv_unpack_hooked(self, owner, as_tensor)
        if self._data is None:
            if self._was_defined:
                _raise_released(owner)
            return None
        if self._version_counter.version != self._saved_version:
            _raise_modified(self, owner)
        if self._leaf is not None and self._grad_fn is not None and self._leaf._grad_fn is None:
            _raise_detached()
        if not as_tensor:
            return self._data
        if self._leaf is not None:
            return self._leaf
        if self._is_output:
            t = rg_wrap_with_grad_fn(self._data, self._device, owner, self._output_nr)
        elif self._grad_fn is not None:
            t = rg_wrap_with_grad_fn(self._data, self._device, self._grad_fn, self._output_nr)
        else:
            t = rg_wrap(self._data, self._device)
        t._version_counter = self._version_counter
        _fw_attach_saved(owner, t, self._data)
        return t

    cdef void reset(self):
        self._packed = None
        self._unpack_hook = None
        self._data = None
        self._leaf = None
        self._grad_fn = None

    def __repr__(self):
        return f"SavedVariable(shape={None if self._data is None else self._data.shape}, version={self._saved_version})"
