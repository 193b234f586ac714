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
UnpackedDualTensor.__doc__ = """What unpack_dual returns: the primal and its tangent.

A named tuple, as ``torch.autograd.forward_ad.UnpackedDualTensor``:
unpack it as ``primal, tangent = unpack_dual(t)`` or read its fields.

Parameters
----------
primal : Tensor
    The tensor's value.
tangent : Tensor or None
    Its tangent at the level read, or None if it has none.

Examples
--------
>>> import retrograd as rg
>>> import retrograd.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     out = fwAD.unpack_dual(fwAD.make_dual(rg.tensor([3.0]), rg.tensor([1.0])) * 2)
>>> type(out).__name__, out.tangent
('UnpackedDualTensor', tensor([2.]))
>>> fwAD.unpack_dual(rg.tensor([3.0]))
UnpackedDualTensor(primal=tensor([3.]), tangent=None)
"""


class dual_level:
    """Context manager (and decorator) around one forward-AD level.

    Entering it enters a new level (``enter_dual_level``) and gives its
    index; leaving it exits the level (``exit_dual_level``), dropping every
    tangent made at it, also when an error is raised. Used as a decorator,
    each call of the function runs inside a fresh level.

    Unlike torch's, levels nest: a ``dual_level`` inside another is a
    second, independent level (torch raises), whose tangents never mix with
    the outer level's; nesting them computes higher-order forward
    derivatives.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.autograd.forward_ad as fwAD
    >>> x = rg.tensor([1.0, 2.0])
    >>> with fwAD.dual_level() as level:
    ...     y = fwAD.make_dual(x, rg.ones(2)) ** 3
    ...     print(level, fwAD.unpack_dual(y).tangent)
    0 tensor([ 3., 12.])

    As a decorator, and nested (the second derivative of x**3 is 6x):

    >>> @fwAD.dual_level()
    ... def jvp(f, x, v):
    ...     return fwAD.unpack_dual(f(fwAD.make_dual(x, v))).tangent
    >>> jvp(lambda t: t.sin(), rg.tensor([0.0]), rg.tensor([1.0]))
    tensor([1.])
    >>> with fwAD.dual_level() as outer:
    ...     xo = fwAD.make_dual(x, rg.ones(2), level=outer)
    ...     d1 = jvp(lambda t: t ** 3, xo, rg.ones(2))
    ...     print(fwAD.unpack_dual(d1, level=outer).tangent)
    tensor([ 6., 12.])
    """

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
