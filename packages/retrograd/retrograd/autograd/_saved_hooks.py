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
    passed to ``pack_hook`` (under no_grad) and the node keeps what it returns;
    when the saved tensor is needed (backward, ``grad_fn._saved_*``),
    ``unpack_hook(packed)`` must give a Tensor with the same content back.
    Hooks are thread-local and nest: the innermost pair wins. ``pack_hook``
    must not modify its input in place (RuntimeError).
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
    """Saved tensors live in host memory and are copied back to their device
    for backward. CuPy arrays are copied to NumPy (into pinned memory with
    ``pin_memory=True``); NumPy arrays already live on the host and are kept
    as they are (no copy), still going through the hooks."""

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
    """Context manager under which entering saved_tensors_hooks (or
    save_on_cpu, or a non-reentrant checkpoint) raises
    ``RuntimeError(error_message)``. Thread-local; nests (the previous message
    is restored on exit). Raises at once if hooks are already active."""
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
    """Bump the version counter of ``tensor`` (or of each tensor of an
    iterable) as an in-place op would: saved tensors of it then fail their
    version check in backward. For changes made behind autograd's back
    (e.g. writing into ``np.asarray(t)``)."""
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    try:
        tensors = tuple(tensor)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input, got "
                           f"{type(tensor).__name__}") from None
    _ext.increment_version(tensors)
