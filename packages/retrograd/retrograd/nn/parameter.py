"""rg.nn.Parameter: a tensor that a Module registers as one of its parameters."""
from __future__ import annotations

import copy as _copy
from typing import Any

from retrograd.core import Tensor

__all__ = ["Parameter"]


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    # pickle's and copy.copy's way back to a Parameter (see __reduce_ex__)
    return Parameter(data, requires_grad)


class Parameter(Tensor):
    """A tensor that is a module parameter (``torch.nn.Parameter``).

    A Parameter is a :class:`rg.Tensor` and behaves as one in every op; what
    makes it special is that assigning it as an attribute of a
    :class:`~retrograd.nn.Module` registers it, so that it appears in
    ``module.parameters()`` and in the state dict. A plain tensor assigned as
    an attribute is not registered (a cached intermediate result should not
    become a parameter).

    The Parameter is a graph leaf that shares ``data``'s array (no copy) and
    its version counter, as torch's (``Tensor._make_subclass``): an in-place
    change through either is seen by both. Results of ops on a Parameter are
    plain tensors, as in torch.
    ``copy.copy``, ``copy.deepcopy`` and pickle give Parameters; the deep copy
    and pickle keep ``requires_grad`` but not ``.grad`` (torch's rule).

    Parameters
    ----------
    data : Tensor, optional
        The values. ``None`` gives an empty (0-element) parameter of the default dtype.
    requires_grad : bool, optional
        Whether the parameter requires grad (default True). Grad mode does
        not affect it: a Parameter made under ``rg.no_grad()`` still requires
        grad.

    Raises
    ------
    TypeError
        If ``data`` is not a tensor.
    RuntimeError
        If ``requires_grad`` is true and ``data``'s dtype is neither floating
        point nor complex.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.nn.Parameter(rg.tensor([1.0, 2.0]))
    >>> isinstance(w, rg.Tensor), isinstance(w, rg.nn.Parameter), w.is_leaf
    (True, True, True)
    >>> (w * 3).sum().backward()
    >>> w.grad
    tensor([3., 3.])
    >>> isinstance(w * 3, rg.nn.Parameter)
    False
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = Tensor()            # torch.empty(0): 0 elements, the default dtype
        elif not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be a Tensor, not {type(data).__name__}; "
                "make one with rg.tensor(...) first")
        # data.detach() as a Parameter: the array (NumPy or CuPy), the device
        # and the version counter are shared, not copied
        # (private, so not in core's stub)
        return Tensor._make_subclass(cls, data, bool(requires_grad))  # type: ignore[attr-defined]

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        # __new__ made it; Tensor.__init__ would rebuild the array from data
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(_copy.deepcopy(self.data, memo), self.requires_grad)
        if self.__dict__:
            result.__dict__.update(_copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> tuple:
        # pickle and copy.copy keep the class, the flag and any attributes a
        # user set on the parameter; hooks and .grad are not kept (torch)
        return (_rebuild_parameter, (self.data, self.requires_grad), self.__dict__ or None)
