"""rg.nn.Parameter: a tensor that a Module registers as one of its parameters."""
from __future__ import annotations

import copy as _copy
import weakref as _weakref
from typing import Any

from retrograd.core import Tensor

__all__ = ["Parameter"]

# Python can subclass a compiled class only when its type allows it
# (Py_TPFLAGS_BASETYPE). A retrograd-core whose Tensor is `@cython.final`
# does not: there Parameter(...) returns a plain leaf tensor that
# isinstance(t, Parameter) recognises (the registry below), so that Module,
# the layers and the optimizers work; only type(p), the repr and the class
# kept by copies differ. Remove this path once every supported core allows
# subclassing.
_TENSOR_SUBCLASSABLE = bool(Tensor.__flags__ & (1 << 10))
_marked: dict[int, _weakref.ref] | None = None if _TENSOR_SUBCLASSABLE else {}


def _leaf_sharing(data: Tensor | None, requires_grad: bool) -> Tensor:
    # a new leaf over data's array (no copy), as torch's _make_subclass of
    # data.detach()
    if data is None:
        return Tensor(requires_grad=bool(requires_grad))
    if not isinstance(data, Tensor):
        raise TypeError(
            f"Parameter(): argument 'data' must be a Tensor, not {type(data).__name__}; "
            "make one with rg.tensor(...) first")
    # detach() shares the array, the device and the version counter
    return data.detach().requires_grad_(bool(requires_grad))


class _ParameterMeta(type):
    # Only the final-Tensor path needs these two overrides (see above).
    def __call__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Any:
        if _marked is None:
            return super().__call__(data, requires_grad)
        t = _leaf_sharing(data, requires_grad)
        key = id(t)

        def forget(_ref: Any, key: int = key) -> None:
            if _marked is not None:
                _marked.pop(key, None)
        _marked[key] = _weakref.ref(t, forget)
        return t

    def __instancecheck__(cls, obj: Any) -> bool:
        if type.__instancecheck__(cls, obj):
            return True
        if _marked is None or cls is not Parameter:
            return False
        ref = _marked.get(id(obj))
        return ref is not None and ref() is obj


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Any:
    # pickle's and copy.copy's way back to a Parameter (see __reduce_ex__)
    return Parameter(data, requires_grad)


class Parameter(Tensor if _TENSOR_SUBCLASSABLE else object, metaclass=_ParameterMeta):  # type: ignore[misc]
    """A tensor that is a module parameter (``torch.nn.Parameter``).

    A Parameter is a :class:`rg.Tensor` and behaves as one in every op; what
    makes it special is that assigning it as an attribute of a
    :class:`~retrograd.nn.Module` registers it, so that it appears in
    ``module.parameters()`` and in the state dict. A plain tensor assigned as
    an attribute is not registered (a cached intermediate result should not
    become a parameter).

    The Parameter is a graph leaf that shares ``data``'s array (no copy).
    Results of ops on a Parameter are plain tensors, as in torch.
    ``copy.copy``, ``copy.deepcopy`` and pickle give Parameters; the deep copy
    and pickle keep ``requires_grad`` but not ``.grad`` (torch's rule).

    Parameters
    ----------
    data : Tensor, optional
        The values. ``None`` gives an empty (0-element, float64) parameter.
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

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            super().__init__(requires_grad=bool(requires_grad))
            return
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be a Tensor, not {type(data).__name__}; "
                "make one with rg.tensor(...) first")
        # Start empty, then take data's array and device through the .data
        # setter: that shares a CuPy array as well as a NumPy one (Tensor()
        # itself converts its argument with np.asarray).
        super().__init__()
        self.data = data
        if requires_grad:
            self.requires_grad_(True)

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
