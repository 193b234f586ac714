"""retrograd.utils.hooks (``torch.utils.hooks``): the handle that removes a
hook kept in a dict, shared by rg.nn's module hooks and rg.optim's optimizer
hooks."""
from __future__ import annotations

import itertools
import weakref
from typing import Any

__all__ = ["RemovableHandle"]

_handle_ids = itertools.count()


class RemovableHandle:
    """A handle that removes a hook (``torch.utils.hooks.RemovableHandle``).

    Returned by ``Module.register_forward_hook``, ``Optimizer.register_step_pre_hook``
    and the other module and optimizer hook registrations. The hook lives in a dict of its module under the handle's
    ``id``; ``remove()`` deletes it there (and in the extra dicts that record
    the hook's options). The handle holds the dicts weakly: it does not keep a
    module alive, and removing the hook of a module that is gone does
    nothing. Also a context manager that removes the hook on exit.

    Parameters
    ----------
    hooks_dict : dict
        The dict the hook is stored in, keyed by handle id.
    extra_dict : dict or list of dict, optional
        Dicts whose entry under the same id is removed with the hook.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Module()
    >>> h = m.register_forward_pre_hook(lambda mod, args: None)
    >>> len(m._forward_pre_hooks)
    1
    >>> h.remove()
    >>> len(m._forward_pre_hooks)
    0
    """

    def __init__(self, hooks_dict: dict, *, extra_dict: dict | list[dict] | None = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_handle_ids)
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in (extra_dict or ()))

    def remove(self) -> None:
        """Remove the hook (nothing happens when it is already gone).

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> h = m.register_forward_hook(lambda mod, args, out: None, always_call=True)
        >>> h.remove(); h.remove()
        >>> len(m._forward_hooks), len(m._forward_hooks_always_called)
        (0, 0)
        """
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self) -> tuple:
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state: tuple) -> None:
        # a dict that is gone when pickled comes back as a dead reference
        hooks_dict, self.id, extras = state
        self.hooks_dict_ref = weakref.ref(hooks_dict) if hooks_dict is not None else _dead_ref()
        self.extra_dict_ref = tuple(weakref.ref(d) if d is not None else _dead_ref() for d in extras)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _dead_ref() -> weakref.ref:
    d: dict = {}
    ref = weakref.ref(d)
    return ref
