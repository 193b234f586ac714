"""The ``__getattr__`` of the modules that mirror a torch namespace: a name
retrograd deliberately lacks raises an AttributeError that says why and what
to use instead (the table in ``_omissions``, loaded on such a miss only).

Dunder names (``__path__``, ``__wrapped__``, ...) are answered at once with
Python's own message: the import system and tools such as ``copy`` and
``inspect`` probe modules for them with ``hasattr``, and those probes must
neither load the table nor find a torch name in it.
"""
from __future__ import annotations

from typing import Callable, NoReturn


def module_getattr(torch_namespace: str, module_name: str) -> Callable[[str], NoReturn]:
    """The module ``__getattr__`` of ``module_name``, which mirrors ``torch_namespace``."""
    def __getattr__(name: str) -> NoReturn:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}", name=name)
        import importlib
        raise importlib.import_module("retrograd._omissions").missing(torch_namespace, module_name, name)
    return __getattr__
