"""retrograd-compile: ``rg.compile``, trace a function once and run its
forward and backward as straight-line programs (torch's ``torch.compile``).

``import retrograd as rg; rg.compile(fn)``. It uses core's and the engine's
public API only: the umbrella registers ``nn.Module`` in core's module
registry (``retrograd.core.extending.register_module_type``, also
:func:`register_module_type` here), which compile reads; compile never
imports the umbrella. Importing compile fills nothing in core: the tracing
callback fills core's tracing slot only while a thread traces. Loading the compiled module runs the ABI handshake with core
first (abi.pxd, rule 3).
"""
import sys as _sys
import types as _types

import retrograd.core as _core

# Loading _tracer runs the ABI handshake first (abi.pxd's import_core).
_core.import_extension("retrograd-compile", "retrograd.compile._tracer")

from retrograd.compile import exc  # noqa: E402
from retrograd.compile.api import (  # noqa: E402
    CompiledCallable, compile, is_compiling, register_module_type, reset,
)
from retrograd.compile._version import __version__  # noqa: E402,F401

__all__ = ["compile", "CompiledCallable", "exc", "is_compiling", "register_module_type", "reset"]


class _CallableModule(_types.ModuleType):
    # `rg.compile` is this module once it is imported (Python binds a
    # package's submodules as its attributes), and it must still be the
    # function torch users call: calling the module calls compile().
    def __call__(self, fn=None, **kwargs):
        return compile(fn, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
