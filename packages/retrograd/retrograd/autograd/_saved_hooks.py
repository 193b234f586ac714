"""Saved-tensor hooks (``torch.autograd.graph.saved_tensors_hooks`` and friends)
and ``increment_version``.

The hook stack and the per-save check live in core (_saved_hooks.pxi): a save
costs one branch on a C thread-local when no hooks are active. This module is
only the Python surface; it must never be imported by core.
"""
from __future__ import annotations

import contextlib

import numpy as np

from retrograd.core import Tensor
from retrograd.core import extending as _ext

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "increment_version"]


class saved_tensors_hooks:
    """Context manager that sets a pair of pack / unpack hooks for saved tensors.

    While active on this thread, every tensor a node saves for backward is
    passed to ``pack_hook`` (under no_grad) and the node keeps what it returns
    instead of the tensor; when the saved tensor is needed (backward,
    ``grad_fn._saved_*``), ``unpack_hook(packed)`` must give a Tensor with the
    same content back. Use it to compress, offload or log what the graph
    keeps alive (``save_on_cpu`` and ``checkpoint`` are built on it).

    Hooks are thread-local and nest: the innermost pair wins. The hooks in
    effect when a tensor is saved are the ones used for it, whatever is
    active at backward time.

    Parameters
    ----------
    pack_hook : callable
        ``pack_hook(tensor) -> object``, called once per saved tensor. It
        must not modify its input in place.
    unpack_hook : callable
        ``unpack_hook(packed) -> Tensor``, called with what ``pack_hook``
        returned, each time the saved tensor is read.

    Raises
    ------
    RuntimeError
        On entry, inside ``disable_saved_tensors_hooks``; when a saved tensor
        is packed, if ``pack_hook`` modified its input in place.
    TypeError
        When ``unpack_hook`` returns something other than a Tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import saved_tensors_hooks
    >>> def pack(t):
    ...     print("pack", tuple(t.shape))
    ...     return t.numpy().copy()          # keep a plain NumPy copy
    >>> def unpack(array):
    ...     print("unpack")
    ...     return rg.tensor(array)
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> with saved_tensors_hooks(pack, unpack):
    ...     y = x.exp().sum()
    pack (2,)
    >>> y.backward()
    unpack
    >>> x.grad
    tensor([2.718282 , 7.3890557])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _ext.push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *args):
        _ext.pop_saved_tensors_hooks()
        return False


def _cupy_to_host(array, pin_memory):
    import cupy
    if pin_memory:
        import cupyx
        host = cupyx.empty_pinned(array.shape, dtype=array.dtype)
        array.get(out=host)
        return host
    return cupy.asnumpy(array)


class save_on_cpu(saved_tensors_hooks):
    """Context manager under which saved tensors live in host memory.

    Every tensor saved for backward inside it is moved to the host and
    copied back to its device when backward needs it, trading transfers for
    device memory (``torch.autograd.graph.save_on_cpu``). CuPy arrays are
    copied to NumPy (into pinned memory with ``pin_memory=True``); NumPy
    arrays already live on the host and are kept as they are (no copy),
    still going through the hooks, so on CPU it changes nothing but the
    bookkeeping.

    Parameters
    ----------
    pin_memory : bool, optional
        Copy device arrays into page-locked host memory (faster copies back).
        Default False.
    device_type : str, optional
        Accepted for torch's signature; the device is read from each saved
        tensor. Default ``"cuda"``.

    Raises
    ------
    RuntimeError
        On entry, inside ``disable_saved_tensors_hooks``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import save_on_cpu
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> with save_on_cpu():
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor):
            if isinstance(tensor._array, np.ndarray):
                # Already on the host: keep the array itself (detached: the
                # tensor's graph is not needed, and a node that saved its own
                # output would otherwise reference itself).
                return tensor.detach()
            host = _ext.wrap(_cupy_to_host(tensor._array, pin_memory))
            return (tensor.device, host)

        def unpack_from_cpu(packed):
            if isinstance(packed, Tensor):
                return packed
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Context manager that forbids saved-tensor hooks inside it.

    Entering ``saved_tensors_hooks`` (or ``save_on_cpu``, or a non-reentrant
    ``checkpoint``) inside it raises ``RuntimeError(error_message)``: for
    code whose saved tensors must stay as they are. Thread-local; nests (the
    previous message is restored on exit).

    Parameters
    ----------
    error_message : str
        The message of the RuntimeError raised when hooks are entered.

    Yields
    ------
    None

    Raises
    ------
    RuntimeError
        At once if saved-tensor hooks are already active on this thread.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import disable_saved_tensors_hooks, saved_tensors_hooks
    >>> with disable_saved_tensors_hooks("no hooks in this block"):
    ...     try:
    ...         with saved_tensors_hooks(lambda t: t, lambda t: t):
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    no hooks in this block
    """
    prev = _ext.saved_tensors_hooks_disabled_message()
    try:
        _ext.disable_saved_tensors_hooks(error_message)
        yield
    finally:
        if prev is None:
            _ext.enable_saved_tensors_hooks()
        else:
            _ext.disable_saved_tensors_hooks(prev)


def increment_version(tensor) -> None:
    """Bump the version counter of a tensor as an in-place op would.

    Saved tensors of it then fail their version check in backward, as after
    ``t.add_(1)``. For changes made behind autograd's back (writing into
    ``np.asarray(t)``, say), so that backward raises instead of silently
    using the changed values.

    Parameters
    ----------
    tensor : Tensor or iterable of Tensor
        The tensor, or tensors, whose version to bump.

    Raises
    ------
    RuntimeError
        When ``tensor`` is neither a Tensor nor an iterable (torch's message).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import increment_version
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> h = x * 1
    >>> y = (h * h).sum()                    # saves h
    >>> h._version
    0
    >>> increment_version(h)
    >>> h._version
    1
    >>> try:
    ...     y.backward()
    ... except RuntimeError as e:
    ...     print(str(e)[:52])
    one of the variables needed for gradient computation
    """
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    try:
        tensors = tuple(tensor)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input, got "
                           f"{type(tensor).__name__}") from None
    _ext.increment_version(tensors)
