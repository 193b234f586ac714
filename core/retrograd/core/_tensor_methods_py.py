"""Tensor methods written in Python, over the table's ops and core's
composites: put in Tensor's dict when retrograd.core is imported.

Note [Python-written Tensor methods]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Tensor is a compiled class (_tensor.pxi); its op methods are generated from
derivatives.yaml and its hand-written methods are in _tensor_methods.pxi.
Methods that only call a composite (a function of the _numpy_like*.py
modules, itself written over the ops) gain nothing from being compiled, and
each change to that file rebuilds the largest extension. They live here
instead: ``METHODS`` maps a name to a plain function, and core's __init__
hands it to ``abi._install_tensor_methods``, which adds them to Tensor's dict
(refusing a name Tensor has already, so nothing compiled is ever shadowed).
Their stubs are in abi.pyi.in, like the hand-written methods';
tests/install/test_stubs.py checks them against the runtime.

A method here costs one Python call more than a compiled one; none of them is
on a hot path (a training step's ops are all generated methods).
"""
from __future__ import annotations

from typing import Callable, Dict

from retrograd.core import abi as _abi
from retrograd.core.abi import Tensor


def _check_self(self, name: str) -> Tensor:
    if not isinstance(self, Tensor):
        raise TypeError(f"descriptor '{name}' requires a 'Tensor' object but received a "
                        f"'{type(self).__name__}'")
    return self


def where(self, condition, other) -> Tensor:
    """``self`` where ``condition`` holds, else ``other``: :func:`retrograd.where` with ``self`` second.

    Parameters
    ----------
    condition : Tensor
        A boolean mask, broadcast against ``self`` and ``other``.
    other : Tensor or scalar
        The values where ``condition`` is False.

    Returns
    -------
    Tensor
        ``rg.where(condition, self, other)``.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, -2.0, 3.0])
    >>> x.where(x > 0, 0.0)
    tensor([1., 0., 3.])
    """
    return _abi.where(condition, _check_self(self, "where"), other)


def float_power_(self, exponent) -> Tensor:
    """:func:`retrograd.float_power` in place: ``self`` must be float64 (or complex128), as the result is.

    Parameters
    ----------
    exponent : Tensor or scalar
        The exponent.

    Returns
    -------
    Tensor
        ``self``, holding ``self ** exponent`` computed in double precision.

    Raises
    ------
    RuntimeError
        If ``self`` is not float64 or complex128: the result could not be stored in it.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([2.0, 3.0], dtype=rg.float64)
    >>> x.float_power_(2)
    tensor([4., 9.], dtype=float64)
    """
    from retrograd.core._numpy_like import float_power
    self = _check_self(self, "float_power_")
    want = "complex128" if (self.is_complex() or (isinstance(exponent, Tensor) and exponent.is_complex())
                            or isinstance(exponent, complex)) else "float64"
    if str(self.dtype).replace("torch.", "") != want:
        raise RuntimeError(f"the base given to float_power_ has dtype {str(self.dtype).replace('torch.', '')} "
                           f"but the operation's result requires dtype {want}: convert it first "
                           f"(x = x.double()) or use the out-of-place float_power")
    return self.copy_(float_power(self, exponent))


#: name -> function, installed in Tensor's dict by core's __init__
METHODS: Dict[str, Callable] = {
    "where": where,
    "float_power_": float_power_,
}
