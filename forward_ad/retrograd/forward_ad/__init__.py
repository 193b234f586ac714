"""retrograd-forward-ad: forward-mode AD (``torch.autograd.forward_ad``).

    with dual_level():
        y = f(make_dual(x, v))
        jvp = unpack_dual(y).tangent

Unlike PyTorch, levels nest: several may be active, the innermost is the
default ``level`` of ``make_dual`` / ``unpack_dual``, and tangents of
different levels never mix. Loading the compiled module runs the ABI
handshake with core first (core's abi.pxd, rule 3).
"""
from collections import namedtuple as _namedtuple

import retrograd.core as _core

# Loading _dual runs the ABI handshake first (abi.pxd's import_core).
_dual = _core.import_extension("retrograd-forward-ad", "retrograd.forward_ad._dual")
from retrograd.forward_ad._dual import (  # noqa: E402
    enter_dual_level,
    exit_dual_level,
    make_dual,
    unpack_dual,
)

from retrograd.forward_ad._version import __version__  # noqa: E402,F401

UnpackedDualTensor = _namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What unpack_dual returns: the primal and its tangent (None if it has none)."


class dual_level:
    """Context manager (and decorator) around one forward-AD level: enters it,
    yields its index, and exits it (dropping its tangents) on the way out."""

    def __enter__(self):
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, *exc):
        exit_dual_level(level=self.level)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]
