"""rg.nn.Module: the base class of every layer and model (``torch.nn.Module``)."""
from __future__ import annotations

import itertools
import threading
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import numpy as np

from retrograd.core import Device, Tensor, is_floating_dtype, no_grad
from retrograd.nn.parameter import Buffer, Parameter
from retrograd.nn.modules._hooks import BackwardHook
from retrograd.utils.hooks import RemovableHandle

__all__ = ["Module"]

# this thread runs a compiled module's own Python (Module._call_uncompiled)
_calls = threading.local()

T = TypeVar("T", bound="Module")

# the key suffix under which a module's get_extra_state() is saved (torch's)
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the missing and the unexpected keys."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, n: int) -> str:
    # indent every line but the first by n spaces (blank lines stay blank):
    # how a child's multi-line repr nests inside its parent's
    first, *rest = text.split("\n")
    if not rest:
        return text
    return "\n".join([first, *((" " * n + line) if line.strip() else "" for line in rest)])


def _typename(obj: Any) -> str:
    # the name an error gives for a value of the wrong kind
    if isinstance(obj, Tensor):
        return "Tensor"
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _forward_unimplemented(self: "Module", *input: Any) -> Any:
    """Define the computation performed at every call; every subclass overrides it.

    Call the module (``module(x)``) rather than ``module.forward(x)``: the
    call runs the registered hooks around ``forward``.

    Parameters
    ----------
    *input : Any
        The arguments the module is called with.

    Returns
    -------
    Any
        The module's output (a subclass's ``forward`` decides).

    Raises
    ------
    NotImplementedError
        On a Module whose class defines no ``forward``.

    Examples
    --------
    >>> import retrograd as rg
    >>> class Double(rg.nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> Double()(rg.tensor(3.0))
    tensor(6.)
    >>> rg.nn.Module()(rg.tensor(3.0))
    Traceback (most recent call last):
    ...
    NotImplementedError: Module [Module] is missing the required "forward" function
    """
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


def _is_device_arg(arg: Any) -> bool:
    return isinstance(arg, Device) or (isinstance(arg, str) and arg.split(":")[0] in ("cpu", "cuda"))


def _parse_to(args: tuple, kwargs: dict) -> tuple[Any, Any]:
    # Module.to's arguments, as Tensor.to takes them: (device), (dtype),
    # (device, dtype), (tensor), and the keywords device= and dtype=.
    unknown = set(kwargs) - {"device", "dtype", "non_blocking", "memory_format", "copy"}
    if unknown:
        raise TypeError(f"to() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        if len(rest) > 2 or (len(rest) == 2 and not isinstance(rest[1], bool)):
            raise TypeError("to() received an invalid combination of arguments: to(tensor, non_blocking=False)")
        t = rest.pop(0)
        device, dtype = t.device, t.dtype
        rest = []
    if rest and (rest[0] is None or _is_device_arg(rest[0])):
        device = rest.pop(0)
    if rest and not isinstance(rest[0], bool):
        dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):    # non_blocking: nothing to do on NumPy
        rest.pop(0)
    if rest:
        raise TypeError(
            f"to() received an invalid combination of arguments: {args!r}; expected (device=None, dtype=None), "
            "(dtype), (device, dtype) or (tensor)")
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(
                f"to(): argument 'dtype' must be a dtype such as rg.float32, np.float32 or 'float32', "
                f"not {dtype!r}") from None
    return device, dtype


class Module:
    """Base class for all neural network modules (``torch.nn.Module``).

    Subclass it, call ``super().__init__()`` first in ``__init__``, assign
    the layer's :class:`~retrograd.nn.Parameter` objects, sub-modules and
    buffers as attributes, and define ``forward``. Assignment registers
    them: a Parameter becomes a parameter, a Module a child module, and a
    tensor given to :meth:`register_buffer` a buffer. ``parameters()``,
    ``state_dict()``, ``to()``, ``train()``/``eval()`` and the rest then walk
    the whole tree. Call the module (``model(x)``), not ``forward``: the call
    also runs the forward and backward hooks.

    ``training`` is True after construction; :meth:`eval` and :meth:`train`
    set it on the whole tree.

    Examples
    --------
    >>> import retrograd as rg
    >>> class Scale(rg.nn.Module):
    ...     def __init__(self, n):
    ...         super().__init__()
    ...         self.weight = rg.nn.Parameter(rg.ones(n))
    ...         self.register_buffer("calls", rg.zeros(()))
    ...     def forward(self, x):
    ...         self.calls += 1
    ...         return x * self.weight
    >>> class Net(rg.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.a = Scale(2)
    ...         self.b = Scale(2)
    ...     def forward(self, x):
    ...         return self.b(self.a(x))
    >>> net = Net()
    >>> net
    Net(
      (a): Scale()
      (b): Scale()
    )
    >>> [name for name, _ in net.named_parameters()]
    ['a.weight', 'b.weight']
    >>> list(net.state_dict())
    ['a.weight', 'a.calls', 'b.weight', 'b.calls']
    >>> net(rg.tensor([1.0, 2.0])).sum().backward()
    >>> net.a.weight.grad
    tensor([1., 2.])
    """

    dump_patches: bool = False
    # the version recorded in a state dict's metadata (torch's Module._version)
    _version: int = 1
    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _modules: dict[str, "Module | None"]
    # torch's switch: whether Module.__init__ hands its arguments on to the
    # next class of the MRO (for mixins)
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Set up the registries of parameters, buffers, children and hooks.

        Parameters
        ----------
        *args, **kwargs
            Accepted only when the class sets ``call_super_init = True``;
            then passed on to the next ``__init__`` of the MRO.

        Raises
        ------
        TypeError
            If arguments are given and ``call_super_init`` is False.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.training, dict(m._parameters), dict(m._modules)
        (True, {}, {})
        """
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # object.__setattr__: these registries must exist before our own
        # __setattr__ can look anything up in them
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # -- registration ------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: a tensor that is part of the module's state but not a parameter.

        BatchNorm's running mean is the classic buffer: ``to()`` converts it
        and the state dict holds it, but optimizers never see it. After
        registration, assigning a tensor (or None) to the same attribute
        replaces the buffer.

        Parameters
        ----------
        name : str
            The attribute name.
        tensor : Tensor or None
            The buffer. ``None`` registers the name with no tensor: ``to()``
            skips it and the state dict leaves it out.
        persistent : bool, optional
            Whether the buffer is part of the state dict (default True).

        Raises
        ------
        AttributeError
            If called before ``Module.__init__``.
        TypeError
            If ``name`` is not a string or ``tensor`` is neither a tensor nor None.
        KeyError
            If ``name`` is empty, contains ``"."`` or is already another attribute.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.register_buffer("running_mean", rg.zeros(3))
        >>> m.register_buffer("scratch", rg.ones(2), persistent=False)
        >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
        (['running_mean', 'scratch'], ['running_mean'])
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(rg.Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under ``name`` (what assigning a Parameter attribute does).

        Parameters
        ----------
        name : str
            The attribute name.
        param : Parameter or None
            The parameter. ``None`` registers the name with no tensor (a
            layer built with ``bias=False`` does this): ``parameters()`` and
            the state dict leave it out.

        Raises
        ------
        AttributeError
            If called before ``Module.__init__``.
        TypeError
            If ``name`` is not a string, or ``param`` is neither a Parameter nor None.
        KeyError
            If ``name`` is empty, contains ``"."`` or is already another attribute.
        ValueError
            If ``param`` is not a graph leaf.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.register_parameter("weight", rg.nn.Parameter(rg.ones(2)))
        >>> m.register_parameter("bias", None)
        >>> [name for name, _ in m.named_parameters()], m.bias is None
        (['weight'], True)
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(rg.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method.")
        self._parameters[name] = param

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module under ``name`` (what assigning a Module attribute does).

        Parameters
        ----------
        name : str
            The attribute name.
        module : Module or None
            The child; ``None`` keeps the name with no module.

        Raises
        ------
        TypeError
            If ``module`` is not a Module (or None), or ``name`` is not a string.
        KeyError
            If ``name`` is empty, contains ``"."`` or is already another attribute.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.add_module("inner", rg.nn.Module())
        >>> m
        Module(
          (inner): Module()
        )
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: "Module | None") -> None:
        """Alias of :meth:`add_module`.

        Parameters
        ----------
        name : str
            The attribute name.
        module : Module or None
            The child.

        Raises
        ------
        TypeError, KeyError
            As :meth:`add_module`.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.register_module("inner", rg.nn.Module())
        >>> [name for name, _ in m.named_children()]
        ['inner']
        """
        self.add_module(name, module)

    def _get_by_path(self, target: str, kind: str) -> tuple["Module", str]:
        # the module that owns the last name of a dotted path, and that name
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        return mod, name

    def get_submodule(self, target: str) -> "Module":
        """The sub-module at a dotted path such as ``"encoder.layers.0"``.

        Parameters
        ----------
        target : str
            The path from this module; ``""`` is the module itself.

        Returns
        -------
        Module
            The sub-module.

        Raises
        ------
        AttributeError
            If a name on the path does not exist or is not a Module.

        Examples
        --------
        >>> import retrograd as rg
        >>> outer = rg.nn.Module()
        >>> outer.inner = rg.nn.Module()
        >>> outer.inner.leaf = rg.nn.Module()
        >>> outer.get_submodule("inner.leaf") is outer.inner.leaf
        True
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path such as ``"layer.weight"``.

        Parameters
        ----------
        target : str
            The path from this module.

        Returns
        -------
        Parameter
            The parameter.

        Raises
        ------
        AttributeError
            If the path does not exist or does not end at a Parameter.

        Examples
        --------
        >>> import retrograd as rg
        >>> outer = rg.nn.Module()
        >>> outer.inner = rg.nn.Module()
        >>> outer.inner.w = rg.nn.Parameter(rg.ones(1))
        >>> outer.get_parameter("inner.w") is outer.inner.w
        True
        """
        mod, name = self._get_by_path(target, "parameter")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path such as ``"bn.running_mean"``.

        Parameters
        ----------
        target : str
            The path from this module.

        Returns
        -------
        Tensor
            The buffer.

        Raises
        ------
        AttributeError
            If the path does not exist or does not end at a buffer.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.register_buffer("steps", rg.zeros(()))
        >>> m.get_buffer("steps")
        tensor(0.)
        """
        mod, name = self._get_by_path(target, "buffer")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self) -> Any:
        """The extra state a subclass saves in its state dict (override it with :meth:`set_extra_state`).

        A module that defines this method gets a ``"<prefix>_extra_state"``
        entry in its state dict holding what it returns.

        Returns
        -------
        object
            The extra state.

        Raises
        ------
        RuntimeError
            Always, on Module itself: only overrides are ever called.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Counter(rg.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.n = 3
        ...     def get_extra_state(self):
        ...         return {"n": self.n}
        ...     def set_extra_state(self, state):
        ...         self.n = state["n"]
        >>> dict(Counter().state_dict())
        {'_extra_state': {'n': 3}}
        """
        raise RuntimeError(
            "Module.get_extra_state() is called only when a subclass overrides it; this call is a bug "
            "in the code that called it")

    def set_extra_state(self, state: Any) -> None:
        """Restore the extra state saved by :meth:`get_extra_state` (override both).

        Parameters
        ----------
        state : object
            What ``get_extra_state`` returned.

        Raises
        ------
        RuntimeError
            Always, on Module itself: only overrides are ever called.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Counter(rg.nn.Module):
        ...     n = 0
        ...     def get_extra_state(self):
        ...         return self.n
        ...     def set_extra_state(self, state):
        ...         self.n = state
        >>> c = Counter()
        >>> c.load_state_dict({"_extra_state": 7})
        <All keys matched successfully>
        >>> c.n
        7
        """
        raise RuntimeError(
            "Module.set_extra_state() is called only when a subclass overrides it; this call is a bug "
            "in the code that called it")

    # -- conversion --------------------------------------------------------
    def _apply(self: T, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> T:
        # fn on every parameter, gradient and buffer. A parameter keeps its
        # identity (its .data is replaced, as torch does by default), so
        # optimizers and references made before to() still hold it.
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param.data = fn(param)
                if param.grad is not None:
                    param.grad.data = fn(param.grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self: T, fn: Callable[["Module"], None]) -> T:
        """Call ``fn`` on every sub-module (children first, then deeper) and then on this module.

        Typical use: initialising the parameters of a model.

        Parameters
        ----------
        fn : callable
            ``fn(module)``; its return value is ignored.

        Returns
        -------
        Module
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> outer = rg.nn.Module()
        >>> outer.inner = rg.nn.Module()
        >>> _ = outer.apply(lambda m: print(type(m).__name__, len(m._modules)))
        Module 0
        Module 1
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """Move and/or cast the parameters and buffers, in place.

        Called as ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
        ``to(tensor)`` (its device and dtype) or with the keywords
        ``device=`` and ``dtype=``. The dtype applies to the floating-point
        and complex tensors only; integer and bool buffers keep theirs.
        Parameters stay the same objects (their data is replaced), so an
        optimizer made before still updates them.

        Parameters
        ----------
        *args, **kwargs
            A device (``"cpu"``, ``"cuda:0"``, an ``rg.device``), a dtype
            (``rg.float32``, ``np.float32``, ``"float32"``) or a tensor;
            ``non_blocking`` is accepted and has no effect.

        Returns
        -------
        Module
            self.

        Raises
        ------
        TypeError
            If the dtype is not floating point or complex, or the arguments
            are not one of the forms above.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(2))
        >>> m.register_buffer("count", rg.zeros((), dtype=rg.int64))
        >>> w = m.w
        >>> _ = m.to(rg.float32)
        >>> m.w.dtype, m.count.dtype, m.w is w
        (dtype('float32'), dtype('int64'), True)
        """
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not (is_floating_dtype(dtype) or dtype.kind == "c"):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            return t.to(device=device, dtype=dtype if is_floating_dtype(t.dtype) or t.dtype.kind == "c" else None)
        return self._apply(convert)

    def cpu(self: T) -> T:
        """Move every parameter and buffer to the CPU.

        Returns
        -------
        Module
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(1))
        >>> m.cpu().w.device
        device(type='cpu')
        """
        return self._apply(lambda t: t.cpu())

    def cuda(self: T, device: Any = None) -> T:
        """Move every parameter and buffer to a CUDA device (through CuPy).

        Parameters
        ----------
        device : int, str or rg.device, optional
            The device; the current one when None.

        Returns
        -------
        Module
            self.

        Raises
        ------
        RuntimeError
            If CuPy or a GPU is not available.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.cuda() is m    # no tensors: nothing to move
        True
        """
        return self._apply(lambda t: t.cuda(device) if device is not None else t.cuda())

    def type(self: T, dst_type: Any) -> T:
        """Cast every parameter and buffer to ``dst_type`` (integer ones included).

        Parameters
        ----------
        dst_type : dtype or str
            The dtype.

        Returns
        -------
        Module
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(1))
        >>> m.type(rg.float32).w.dtype
        dtype('float32')
        """
        return self._apply(lambda t: t.to(dtype=np.dtype(dst_type)))

    def float(self: T) -> T:
        """Cast the floating-point parameters and buffers to float32.

        Returns
        -------
        Module
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(1))
        >>> m.float().w.dtype
        dtype('float32')
        """
        return self._apply(lambda t: t.float() if is_floating_dtype(t.dtype) else t)

    def double(self: T) -> T:
        """Cast the floating-point parameters and buffers to float64.

        Returns
        -------
        Module
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(1, dtype=rg.float32))
        >>> m.double().w.dtype
        dtype('float64')
        """
        return self._apply(lambda t: t.double() if is_floating_dtype(t.dtype) else t)

    def half(self: T) -> T:
        """Cast the floating-point parameters and buffers to float16.

        Returns
        -------
        Module
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(1))
        >>> m.half().w.dtype
        dtype('float16')
        """
        return self._apply(lambda t: t.half() if is_floating_dtype(t.dtype) else t)

    def bfloat16(self: T) -> T:
        """Cast the floating-point parameters and buffers to bfloat16 (needs the ml_dtypes package).

        Returns
        -------
        Module
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Linear(2, 1)
        >>> m.bfloat16().weight.dtype == rg.bfloat16
        True
        """
        return self._apply(lambda t: t.bfloat16() if is_floating_dtype(t.dtype) else t)

    # -- hooks --------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Register ``hook`` to run before every ``forward`` call.

        ``hook(module, args)`` gets the positional arguments as a tuple and
        may return replacements (a tuple, or a single value that is then
        wrapped in one). With ``with_kwargs=True`` it is
        ``hook(module, args, kwargs)`` and may return ``(args, kwargs)``.

        Parameters
        ----------
        hook : callable
            The hook.
        prepend : bool, optional
            Run before the hooks already registered (default: after).
        with_kwargs : bool, optional
            Pass the keyword arguments too.

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` unregisters the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Twice(rg.nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        >>> m = Twice()
        >>> h = m.register_forward_pre_hook(lambda mod, args: args[0] + 1)
        >>> m(rg.tensor(1.0))
        tensor(4.)
        >>> h.remove()
        >>> m(rg.tensor(1.0))
        tensor(2.)
        """
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Register ``hook`` to run after every ``forward`` call.

        ``hook(module, args, output)`` (``hook(module, args, kwargs, output)``
        with ``with_kwargs=True``) may return a replacement output.

        Parameters
        ----------
        hook : callable
            The hook.
        prepend : bool, optional
            Run before the hooks already registered (default: after).
        with_kwargs : bool, optional
            Pass the keyword arguments too.
        always_call : bool, optional
            Run the hook even when ``forward`` (or an earlier hook) raised;
            then ``output`` is None and an exception the hook raises is
            turned into a warning, so the original error propagates.

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` unregisters the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Twice(rg.nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        >>> m = Twice()
        >>> _ = m.register_forward_hook(lambda mod, args, out: print("out", out))
        >>> y = m(rg.tensor(1.0))
        out tensor(2.)
        """
        handle = RemovableHandle(self._forward_hooks,
                                 extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(module, grad_output)`` to run when the gradients of the module's outputs arrive.

        ``grad_output`` is a tuple with one entry per output (None for an
        output that is not a tensor or gets no gradient). The hook may
        return a replacement tuple of the same length, which then flows on
        into the module's graph.

        While backward hooks are registered, ``forward`` receives a view of
        each tensor argument and the caller a view of each tensor output
        (they pass through an identity autograd Function); modifying them in
        place raises RuntimeError.

        Parameters
        ----------
        hook : callable
            The hook.
        prepend : bool, optional
            Run before the hooks already registered (default: after).

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` unregisters the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Twice(rg.nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        >>> m = Twice()
        >>> _ = m.register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 10,))
        >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> m(x).sum().backward()
        >>> x.grad
        tensor([20., 20.])
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(module, grad_input, grad_output)`` to run once the gradients of the module's inputs are known.

        ``grad_input`` has one entry per positional argument of the call
        (None for a non-tensor or an argument that gets no gradient; keyword
        arguments are not included), ``grad_output`` one per output. The
        hook may return a replacement ``grad_input`` of the same length.
        When no input requires grad, the hook runs when the output
        gradients arrive, with ``grad_input`` all None (and a warning says
        so); when no output requires grad, it never runs.

        Forward receives views of the tensor arguments and the caller views of
        the outputs; modifying them in place raises RuntimeError.

        Parameters
        ----------
        hook : callable
            The hook.
        prepend : bool, optional
            Run before the hooks already registered (default: after).

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` unregisters the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Twice(rg.nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        >>> m = Twice()
        >>> def show(mod, grad_input, grad_output):
        ...     print("in", grad_input, "out", grad_output)
        >>> _ = m.register_full_backward_hook(show)
        >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> m(x).sum().backward()
        in (tensor([2., 2.]),) out (tensor([1., 1.]),)
        """
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        self._is_full_backward_hook = True
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        forward_call = self.forward
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or self._compiled_call_impl):
            return forward_call(*args, **kwargs)
        if self._compiled_call_impl is not None and not getattr(_calls, "uncompiled", False):
            return self._compiled_call_impl(*args, **kwargs)
        result = None
        called_always = set()
        try:
            for hook_id, hook in list(self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {new}.")
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)
            bw_hook = None
            if self._backward_hooks or self._backward_pre_hooks:
                bw_hook = BackwardHook(self, list(self._backward_hooks.values()),
                                       list(self._backward_pre_hooks.values()))
                args = bw_hook.setup_input_hook(args)
            result = forward_call(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called:
                    called_always.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    new = hook(self, args, kwargs, result)
                else:
                    new = hook(self, args, result)
                if new is not None:
                    result = new
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple "
                                  f"of Tensors but received {type(result)}", stacklevel=3)
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            # the always_call hooks that did not run yet run now; their own
            # errors become warnings so that the original error propagates
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id not in self._forward_hooks_always_called or hook_id in called_always:
                    continue
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        new = hook(self, args, kwargs, result)
                    else:
                        new = hook(self, args, result)
                    if new is not None:
                        result = new
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {e}", stacklevel=3)
            raise

    __call__: Callable[..., Any] = _call_impl

    # set by compile(): the compiled form of _call_uncompiled, which calls run
    _compiled_call_impl: Any = None

    def _call_uncompiled(self, *args: Any, **kwargs: Any) -> Any:
        # What compile() compiles: this module's call with compiled modules
        # (itself, its children) run as plain Python on this thread, so that
        # the trace (and an eager fallback) does not call the compiled form
        # again. A bound method: rg.compile guards the module's state.
        prev = getattr(_calls, "uncompiled", False)
        _calls.uncompiled = True
        try:
            return self._call_impl(*args, **kwargs)
        finally:
            _calls.uncompiled = prev

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's calls in place with :func:`rg.compile
        <retrograd.compile.compile>` (torch's ``nn.Module.compile``).

        Later calls of the module run the compiled form of its forward and
        its forward hooks; the module itself stays what it is (its type,
        ``state_dict``, ``parameters()``), unlike ``rg.compile(module)``,
        which returns a new callable.

        Parameters
        ----------
        *args, **kwargs
            Passed to ``rg.compile`` (``backend``, ``fullgraph``,
            ``cache_size``).

        Raises
        ------
        ImportError
            Without the retrograd-compile distribution
            (``pip install 'retrograd[compile]'``).

        Examples
        --------
        >>> import retrograd as rg
        >>> net = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.Tanh())
        >>> net.compile()
        >>> net(rg.ones(2, 3)).shape
        (2, 4)
        """
        try:
            from retrograd.compile import compile as _compile
        except ImportError as exc:
            raise ImportError("Module.compile() needs retrograd-compile: pip install "
                              "'retrograd[compile]'") from exc
        self._compiled_call_impl = _compile(self._call_uncompiled, *args, **kwargs)

    # -- attributes ---------------------------------------------------------
    def __getstate__(self) -> dict:
        # (a compiled call is not copied or pickled: torch drops it too)
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __getattr__(self, name: str) -> Any:
        # only reached when normal lookup fails: parameters, buffers and
        # children live in their registries, not in __dict__
        # (written out, not looped: forward reads every parameter through here)
        d = self.__dict__
        params = d.get("_parameters")
        if params is not None and name in params:
            return params[name]
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            return buffers[name]
        modules = d.get("_modules")
        if modules is not None and name in modules:
            return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*dicts_or_sets: Any) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(rg.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(rg.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(rg.Tensor or None expected)")
            # an nn.Buffer carries its own persistence; a plain tensor keeps the name's
            persistent = value.persistent if isinstance(value, Buffer) else name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self) -> list[str]:
        keys = [*dir(self.__class__), *self.__dict__, *self._parameters, *self._modules, *self._buffers]
        return sorted(k for k in keys if not k[0].isdigit())

    # -- state dict -----------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        # this module's own entries (not its children's); subclasses may override
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict:
        """The module's state: every parameter and persistent buffer of the tree, by dotted name.

        The entries are detached tensors that share the module's arrays (no
        copy), in registration order, the module's own first and then each
        child's. The dict has a ``_metadata`` attribute recording each
        module's version, as torch's does.

        Parameters
        ----------
        *args
            ``destination, prefix, keep_vars`` given by position: accepted,
            with torch's FutureWarning (pass them by keyword).
        destination : dict, optional
            A dict to fill and return instead of a new OrderedDict.
        prefix : str, optional
            Prepended to every key.
        keep_vars : bool, optional
            Store the parameters and buffers themselves (not detached).

        Returns
        -------
        dict
            ``destination`` or a new ``OrderedDict``.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(2))
        >>> m.inner = rg.nn.Module()
        >>> m.inner.register_buffer("mean", rg.zeros(2))
        >>> sd = m.state_dict()
        >>> list(sd), sd["w"]
        (['w', 'inner.mean'], tensor([1., 1.]))
        """
        if args:
            if len(args) > 3:
                raise TypeError(f"state_dict() takes at most 3 positional arguments ({len(args)} given)")
            warnings.warn("Positional args are being deprecated, use kwargs instead (state_dict(destination=..., "
                          "prefix=..., keep_vars=...)).", FutureWarning, stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        # this module's own entries; subclasses may override (to convert
        # older versions of their state, read local_metadata["version"])
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected rg.Tensor from checkpoint '
                                  f"but received {type(input_param)}")
                continue
            # a 0-d parameter accepts a 1-element vector (old checkpoints)
            if param.ndim == 0 and input_param.ndim == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(input_param, Parameter):
                            input_param = Parameter(input_param, requires_grad=param.requires_grad)
                        elif isinstance(param, Parameter):
                            input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.shape} and whose dimensions in the checkpoint are {input_param.shape}, "
                                  f"an exception occurred : {ex.args}.")
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    head, *more = key[len(prefix):].split(".", 1)
                    if (head not in self._modules) if more else (head not in local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module and its descendants.

        Values are copied into the existing tensors in place (their dtype and
        device are kept), under no_grad. With ``strict=True`` the keys must
        match :meth:`state_dict`'s exactly.

        Parameters
        ----------
        state_dict : Mapping
            Parameters and persistent buffers by dotted name.
        strict : bool, optional
            Raise on missing or unexpected keys (default True). Size
            mismatches always raise.
        assign : bool, optional
            Replace the module's tensors by the state dict's instead of
            copying into them (each Parameter keeps its ``requires_grad``).

        Returns
        -------
        IncompatibleKeys
            A namedtuple ``(missing_keys, unexpected_keys)``.

        Raises
        ------
        TypeError
            If ``state_dict`` is not a mapping.
        RuntimeError
            Listing every problem: missing keys and unexpected keys (strict),
            size mismatches, values that are not tensors.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.zeros(2))
        >>> m.load_state_dict({"w": rg.tensor([3.0, 4.0])})
        <All keys matched successfully>
        >>> m.w.tolist()
        [3.0, 4.0]
        >>> m.load_state_dict({"v": rg.ones(1)}, strict=False)
        _IncompatibleKeys(missing_keys=['w'], unexpected_keys=['v'])
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module: Module, local_state_dict: dict, prefix: str = "") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # -- iteration -------------------------------------------------------------
    def _named_members(self, get_members: Callable[["Module"], Any], prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in seen:
                    continue
                if remove_duplicate:
                    seen.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Iterate over the parameters (what an optimizer takes).

        Parameters
        ----------
        recurse : bool, optional
            Include the sub-modules' parameters (default True).

        Yields
        ------
        Parameter
            Each parameter once, in registration order.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(2, 3))
        >>> [p.shape for p in m.parameters()]
        [(2, 3)]
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Iterate over ``(dotted name, parameter)`` pairs.

        Parameters
        ----------
        prefix : str, optional
            Prepended to every name.
        recurse : bool, optional
            Include the sub-modules' parameters (default True).
        remove_duplicate : bool, optional
            Yield a parameter shared by several modules once, under its first
            name (default True).

        Yields
        ------
        tuple of (str, Parameter)
            Name and parameter.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.inner = rg.nn.Module()
        >>> m.inner.w = rg.nn.Parameter(rg.ones(1))
        >>> m.also = m.inner
        >>> [n for n, _ in m.named_parameters()], [n for n, _ in m.named_parameters(remove_duplicate=False)]
        (['inner.w'], ['inner.w', 'also.w'])
        """
        yield from self._named_members(lambda module: module._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Iterate over the buffers (persistent or not).

        Parameters
        ----------
        recurse : bool, optional
            Include the sub-modules' buffers (default True).

        Yields
        ------
        Tensor
            Each buffer once.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.register_buffer("mean", rg.zeros(3))
        >>> [b.shape for b in m.buffers()]
        [(3,)]
        """
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Iterate over ``(dotted name, buffer)`` pairs.

        Parameters
        ----------
        prefix : str, optional
            Prepended to every name.
        recurse : bool, optional
            Include the sub-modules' buffers (default True).
        remove_duplicate : bool, optional
            Yield a shared buffer once (default True).

        Yields
        ------
        tuple of (str, Tensor)
            Name and buffer.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.register_buffer("mean", rg.zeros(3))
        >>> [n for n, _ in m.named_buffers(prefix="bn")]
        ['bn.mean']
        """
        yield from self._named_members(lambda module: module._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self) -> Iterator["Module"]:
        """Iterate over the immediate child modules.

        Yields
        ------
        Module
            Each child once.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.a = rg.nn.Module()
        >>> len(list(m.children()))
        1
        """
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """Iterate over ``(name, child)`` pairs of the immediate children.

        Yields
        ------
        tuple of (str, Module)
            Name and child; a child registered under two names is yielded once.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.a = rg.nn.Module()
        >>> m.b = m.a
        >>> [n for n, _ in m.named_children()]
        ['a']
        """
        seen: set = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator["Module"]:
        """Iterate over every module of the tree, this one first (depth first).

        Parameters
        ----------
        remove_duplicate : bool, optional
            Yield a module that appears several times once (default True).

        Yields
        ------
        Module
            Each module.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.a = rg.nn.Module()
        >>> m.a.b = rg.nn.Module()
        >>> len(list(m.modules()))
        3
        """
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """Iterate over ``(dotted name, module)`` for every module of the tree, this one (``""``) first.

        Parameters
        ----------
        memo : set, optional
            Modules to skip (and, with ``remove_duplicate``, to add the
            yielded ones to).
        prefix : str, optional
            Prepended to every name.
        remove_duplicate : bool, optional
            Yield a module that appears several times once (default True).

        Yields
        ------
        tuple of (str, Module)
            Name and module.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.a = rg.nn.Module()
        >>> m.a.b = rg.nn.Module()
        >>> [n for n, _ in m.named_modules()]
        ['', 'a', 'a.b']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # -- modes and gradients ------------------------------------------------------
    def train(self: T, mode: bool = True) -> T:
        """Set training mode (True) or evaluation mode (False) on the whole tree.

        Only some layers behave differently (Dropout, BatchNorm).

        Parameters
        ----------
        mode : bool, optional
            The mode (default True).

        Returns
        -------
        Module
            self.

        Raises
        ------
        ValueError
            If ``mode`` is not a bool.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.a = rg.nn.Module()
        >>> m.train(False).a.training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self: T) -> T:
        """Set evaluation mode on the whole tree (``train(False)``).

        It changes how Dropout and BatchNorm behave; it does not turn off
        gradient recording (use ``rg.no_grad()`` for that).

        Returns
        -------
        Module
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.nn.Module().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Set ``requires_grad`` on every parameter (freeze with False).

        Parameters
        ----------
        requires_grad : bool, optional
            The flag (default True).

        Returns
        -------
        Module
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(1))
        >>> m.requires_grad_(False).w.requires_grad
        False
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter.

        Parameters
        ----------
        set_to_none : bool, optional
            Set ``.grad`` to None (default) instead of filling it with zeros.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Module()
        >>> m.w = rg.nn.Parameter(rg.ones(2))
        >>> (m.w * 2).sum().backward()
        >>> m.zero_grad(set_to_none=False); m.w.grad
        tensor([0., 0.])
        >>> m.zero_grad(); m.w.grad is None
        True
        """
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    # -- representation -----------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The layer's own settings, shown inside its repr; override it in a layer.

        One line or several; the default is empty.

        Returns
        -------
        str
            The text.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Scale(rg.nn.Module):
        ...     def __init__(self, factor):
        ...         super().__init__()
        ...         self.factor = factor
        ...     def extra_repr(self):
        ...         return f"factor={self.factor}"
        >>> Scale(2.5)
        Scale(factor=2.5)
        """
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return self._get_name() + "(" + body + ")"
