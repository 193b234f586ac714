# Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks): while a
# (pack, unpack) pair is active on this thread, every tensor a node saves is
# handed to pack at save time and the node keeps what pack returned; unpack
# turns it back into a tensor when backward (or `grad_fn._saved_*`) needs it.
# Part of _ops.pyx.
#
# Hot path: a save checks one C thread-local (`rg_tls_saved_hooks`, the depth
# of this thread's hook stack) and nothing else; the Python-level stack is
# looked at only when that depth is non-zero. Never call a hook from here
# with grad mode on: pack runs under no_grad, as in PyTorch.

cdef extern from *:
    """
    static __thread int rg_tls_saved_hooks = 0;   /* depth of this thread's hook stack */
    """
    int rg_tls_saved_hooks


# Per thread: `stack` (list of (pack, unpack) pairs, innermost last) and
# `disabled` (the error message of disable_saved_tensors_hooks, or None). Set
# by the context managers of retrograd.autograd.graph on the user's thread.
_saved_hooks_tls = _threading.local()


cdef list _hooks_stack():
    try:
        return _saved_hooks_tls.stack
    except AttributeError:
        _saved_hooks_tls.stack = []
        return _saved_hooks_tls.stack


@cython.final
cdef class _PackedSaved:
    """What a node keeps for a tensor saved while saved-tensor hooks were active:
    the pack hook's result and the unpack hook that turns it back into a tensor."""
    cdef object packed
    cdef object unpack_hook

    def __repr__(self):
        return f"<saved tensor packed by a saved_tensors_hooks pack hook: {type(self.packed).__name__}>"


cdef object _pack_saved(Tensor t):
    # Called only when rg_tls_saved_hooks != 0.
    global rg_tls_grad_enabled
    cdef list stack = _hooks_stack()
    pack_hook, unpack_hook = stack[len(stack) - 1]
    cdef Py_ssize_t ver = t._version_counter.version
    cdef int prev = rg_tls_grad_enabled
    rg_tls_grad_enabled = 0
    try:
        packed = pack_hook(t)
    finally:
        rg_tls_grad_enabled = prev
    if t._version_counter.version != ver:
        raise RuntimeError(
            "A saved tensor pack hook is modifying its input in place. Tensors provided as input "
            "to pack hook cannot be modified by in-place operations as this can lead to "
            "unexpected side-effects. Please open an issue if you need to perform in-place "
            "operations on the input to a pack hook.")
    cdef _PackedSaved p = _PackedSaved.__new__(_PackedSaved)
    p.packed = packed
    p.unpack_hook = unpack_hook
    return p


cdef Tensor _call_unpack(_PackedSaved p):
    return _call_unpack_hook(p.unpack_hook, p.packed)


cdef Tensor _call_unpack_hook(object unpack_hook, object packed):
    r = unpack_hook(packed)
    if not isinstance(r, Tensor):
        raise TypeError(
            "Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
            f"{type(r).__name__}")
    return <Tensor>r


cdef object _saved_array_of(object data):
    # The array a saved slot keeps alive (saved_tensors_report): the array
    # itself, or the array of the tensor a pack hook returned, alone or in a
    # tuple/list (torch's save_on_cpu packs (device, tensor)); any other
    # packed object (e.g. a checkpoint handle) holds no array we know of.
    if isinstance(data, Tensor):
        return (<Tensor>data)._array
    if type(data) is _PackedSaved:
        packed = (<_PackedSaved>data).packed
        if isinstance(packed, (tuple, list)):
            for item in packed:
                if isinstance(item, Tensor):
                    return (<Tensor>item)._array
            return None
        if isinstance(packed, Tensor):
            return (<Tensor>packed)._array
        return None
    return data


# -- Python-level entry points for retrograd.autograd.graph --------------------

def _push_saved_tensors_hooks(pack_hook, unpack_hook):
    """Make (pack_hook, unpack_hook) this thread's innermost saved-tensor hooks."""
    global rg_tls_saved_hooks
    msg = getattr(_saved_hooks_tls, "disabled", None)
    if msg is not None:
        raise RuntimeError(msg)
    if not callable(pack_hook) or not callable(unpack_hook):
        raise TypeError("saved_tensors_hooks(pack_hook, unpack_hook): both hooks must be callables, "
                        f"got {type(pack_hook).__name__} and {type(unpack_hook).__name__}")
    cdef list stack = _hooks_stack()
    stack.append((pack_hook, unpack_hook))
    rg_tls_saved_hooks = len(stack)


def _pop_saved_tensors_hooks():
    global rg_tls_saved_hooks
    cdef list stack = _hooks_stack()
    if not stack:
        raise RuntimeError("saved_tensors_hooks: exit without a matching enter on this thread")
    stack.pop()
    rg_tls_saved_hooks = len(stack)


def _saved_tensors_hooks_get_disabled_error_message():
    return getattr(_saved_hooks_tls, "disabled", None)


def _saved_tensors_hooks_disable(message):
    """Disable saved-tensor hooks on this thread: entering them raises RuntimeError(message).
    Raises right away when hooks are already active (as torch does)."""
    if not isinstance(message, str):
        raise TypeError(f"disable_saved_tensors_hooks(): error_message must be a str, not "
                        f"{type(message).__name__}")
    _saved_hooks_tls.disabled = message
    if _hooks_stack():
        raise RuntimeError(message)


def _saved_tensors_hooks_enable():
    _saved_hooks_tls.disabled = None


def _increment_version(tensors):
    """Bump each tensor's version counter as an in-place op would
    (torch.autograd.graph.increment_version)."""
    cdef Tensor t
    for x in tensors:
        if not isinstance(x, Tensor):
            raise RuntimeError("increment_version expect a Iterable[Tensor] as input, got an element "
                               f"of type {type(x).__name__}")
    for x in tensors:
        t = <Tensor>x
        if t._version_counter is not None:     # inference tensors have none
            t._version_counter.version += 1
