"""rg.nn.Parameter and rg.nn.Buffer: tensors that a Module registers when they
are assigned as its attributes; UninitializedParameter and UninitializedBuffer,
the placeholders of the lazy modules until their first call."""
from __future__ import annotations

import copy as _copy
from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    # pickle's and copy.copy's way back to a Parameter (see __reduce_ex__)
    return Parameter(data, requires_grad)


class Parameter(Tensor):
    """A tensor that is a module parameter (``torch.nn.Parameter``).

    A Parameter is a :class:`~retrograd.Tensor` and behaves as one in every op; what
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


def _rebuild_buffer(data: Tensor, persistent: bool) -> Buffer:
    return Buffer(data, persistent=persistent)


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when assigned as its attribute (``torch.nn.Buffer``).

    ``module.name = rg.nn.Buffer(t)`` does what ``module.register_buffer("name", t)``
    does: the tensor is part of the module's state (``buffers()``, ``to()``,
    the state dict when ``persistent``) but not a parameter. A plain tensor
    assigned as an attribute is not registered.

    The buffer shares ``data``'s array and version counter (no copy), is a
    graph leaf, and keeps ``data``'s ``requires_grad``. Results of ops on a
    Buffer are plain tensors.

    Parameters
    ----------
    data : Tensor, optional
        The values. ``None`` gives an empty tensor of the default dtype.
    persistent : bool, optional
        Keyword-only: whether the buffer is part of the module's state dict
        (default True).

    Raises
    ------
    TypeError
        If ``data`` is not a tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Module()
    >>> m.running = rg.nn.Buffer(rg.zeros(2))
    >>> m.scratch = rg.nn.Buffer(rg.ones(1), persistent=False)
    >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
    (['running', 'scratch'], ['running'])
    """

    persistent: bool

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            data = Tensor()
        elif not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): argument 'data' must be a Tensor, not {type(data).__name__}")
        out = Tensor._make_subclass(cls, data, data.requires_grad)  # type: ignore[attr-defined]
        out.persistent = persistent
        return out

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        # __new__ made it; Tensor.__init__ would rebuild the array from data
        pass

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self).__new__(type(self), _copy.deepcopy(self.data, memo), persistent=self.persistent)
        result.requires_grad_(self.requires_grad)
        extra = {k: v for k, v in self.__dict__.items() if k != "persistent"}
        result.__dict__.update(_copy.deepcopy(extra, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return (_rebuild_buffer, (self.data, self.persistent), self.__dict__ or None)


_UNINIT_HELP = ("Call `forward` with a dummy batch to initialize the parameters (that is what a lazy module's first "
                "call does) before using them.")


class _UninitializedMixin:
    """What UninitializedParameter and UninitializedBuffer share: no shape
    until :meth:`materialize` gives one (the placeholder holds an empty array
    of the dtype and device the tensor will have)."""

    cls_to_become: type = Tensor

    def materialize(self: Any, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor its shape: it becomes a plain Parameter (or buffer tensor) in place.

        The values are uninitialized (as ``rg.empty``); the lazy modules then
        run their ``reset_parameters``.

        Parameters
        ----------
        shape : tuple of int
            The shape.
        device : Device or str, optional
            Default: the placeholder's device.
        dtype : dtype, optional
            Default: the placeholder's dtype.

        Examples
        --------
        >>> import retrograd as rg
        >>> w = rg.nn.UninitializedParameter()
        >>> w.materialize((2, 3))
        >>> type(w).__name__, w.shape
        ('Parameter', (2, 3))
        """
        placeholder = self.data
        device = placeholder.device if device is None else device
        dtype = placeholder.dtype if dtype is None else dtype
        self.data = _c.empty(tuple(shape), dtype=dtype, device=device)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        """Raises: an uninitialized tensor has no shape yet."""
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. " + _UNINIT_HELP)

    def share_memory_(self) -> Any:
        """Raises: an uninitialized tensor has no memory to share yet."""
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. " + _UNINIT_HELP)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def _keep_uninitialized(name: str) -> Any:
    # Module.to()/float()/cuda() convert a placeholder's dtype or device: the
    # result stays a placeholder (torch's allowed methods keep the subclass)
    base = getattr(Tensor, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = base(self, *args, **kwargs)
        if out is self or not isinstance(out, Tensor):
            return out
        new = Tensor._make_subclass(type(self), out, self.requires_grad)  # type: ignore[attr-defined]
        if hasattr(self, "persistent"):
            new.persistent = self.persistent
        return new
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``Tensor.{name}``; the result is still uninitialized."
    return method


for _name in ("to", "cpu", "cuda", "float", "double", "half", "type"):
    setattr(_UninitializedMixin, _name, _keep_uninitialized(_name))
del _name


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A parameter whose shape is not known yet (``torch.nn.UninitializedParameter``).

    The lazy modules (``rg.nn.LazyLinear``, ...) hold these until their first
    call infers the shapes; :meth:`materialize` then turns each into a plain
    :class:`Parameter` in place. Until then it has no shape: reading
    ``.shape`` raises. Its dtype and device can be changed (``module.to``).

    Parameters
    ----------
    requires_grad : bool, optional
        Default True.
    device : Device or str, optional
        The device the parameter will have.
    dtype : dtype, optional
        The dtype it will have (default: the default dtype).

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.nn.UninitializedParameter()
    >>> w
    <UninitializedParameter>
    >>> w.materialize((3,))
    >>> isinstance(w, rg.nn.UninitializedParameter), w.shape
    (False, (3,))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> UninitializedParameter:
        data = _c.empty(0, dtype=dtype, device=device)
        return Tensor._make_subclass(cls, data, bool(requires_grad))  # type: ignore[attr-defined]

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return (type(self), (self.requires_grad, None, self.dtype))


class UninitializedBuffer(_UninitializedMixin, Buffer):
    """A buffer whose shape is not known yet (``torch.nn.UninitializedBuffer``).

    What :class:`UninitializedParameter` is for parameters (the running
    statistics of ``rg.nn.LazyBatchNorm1d``, ...). :meth:`materialize` turns it
    into a :class:`Buffer` in place (torch's becomes a tensor flagged as a
    buffer, which ``isinstance(t, nn.Buffer)`` also accepts).

    Parameters
    ----------
    requires_grad : bool, optional
        Default False.
    device : Device or str, optional
        The device the buffer will have.
    dtype : dtype, optional
        The dtype it will have (default: the default dtype).
    persistent : bool, optional
        Whether the buffer is part of the state dict (default True).

    Examples
    --------
    >>> import retrograd as rg
    >>> b = rg.nn.UninitializedBuffer()
    >>> b.materialize((2,))
    >>> isinstance(b, rg.nn.Buffer), b.shape
    (True, (2,))
    """

    cls_to_become = Buffer

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> UninitializedBuffer:
        data = _c.empty(0, dtype=dtype, device=device)
        out = Tensor._make_subclass(cls, data, bool(requires_grad))  # type: ignore[attr-defined]
        out.persistent = persistent
        return out

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        pass

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype, self.persistent)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return (type(self), (self.requires_grad, None, self.dtype, self.persistent))


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer (torch's ``nn.parameter.is_lazy``).

    Parameters
    ----------
    param : object
        Anything.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.parameter import is_lazy
    >>> is_lazy(rg.nn.UninitializedParameter()), is_lazy(rg.nn.Parameter(rg.ones(1)))
    (True, False)
    """
    return isinstance(param, _UninitializedMixin)
