"""skip_init: building a module without initialising its parameters."""
from __future__ import annotations

import inspect
from typing import Any

import retrograd.core as _c

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """Build ``module_cls(*args, **kwargs)`` whose parameters and buffers are left for you to initialize.

    Use it when the values will be overwritten anyway (loaded from a
    checkpoint, or filled by your own scheme): the module's own random
    initialization does not count. Torch builds the module on its "meta"
    device and allocates empty tensors; retrograd has no meta device, so the
    constructor runs as usual, but the global generator is restored
    afterwards: building the module draws nothing from ``rg.manual_seed``'s
    stream. Treat the values as unspecified, as torch's.

    Parameters
    ----------
    module_cls : type
        A Module subclass whose constructor takes a ``device`` argument.
    *args, **kwargs
        The constructor's arguments; ``device`` (default ``"cpu"``) is where
        the parameters live.

    Returns
    -------
    Module
        The new module.

    Raises
    ------
    RuntimeError
        If ``module_cls`` is not a Module subclass or takes no ``device``.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> from retrograd.nn.utils.init import skip_init
    >>> m = skip_init(rg.nn.Linear, 3, 2)
    >>> m.weight.shape
    (2, 3)
    >>> a = rg.rand(1)
    >>> _ = rg.manual_seed(0)
    >>> bool(rg.rand(1) == a)           # the module drew nothing
    True
    """
    from retrograd.nn.modules.module import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    state = _c.get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        _c.set_rng_state(state)
