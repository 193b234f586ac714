"""Parametrizations: a module's tensor computed by a module of its own on every
access (``torch.nn.utils.parametrize``).

:func:`register_parametrization` moves ``module.<name>`` into
``module.parametrizations.<name>.original`` and turns the attribute into a
property computing ``parametrization(original)``; the state dict's keys are
torch's (``parametrizations.<name>.original``, ``...original0``, ...). The
module's class is swapped for a subclass ``Parametrized<Class>`` holding the
property, as torch does, and restored when the last parametrization goes.
"""
from __future__ import annotations

import collections.abc
import copyreg
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from copy import deepcopy
from typing import Any

from retrograd.core import Tensor, no_grad
from retrograd.nn.modules.container import ModuleDict, ModuleList
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

# nesting depth of cached() and, while it is entered, the values computed
_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once inside the block and reuse it.

    Without it, every access to ``module.weight`` runs the parametrization
    again; a forward that reads the weight several times (a recurrent loop,
    shared weights) can wrap itself in ``cached()`` to run it once. The
    values are dropped on leaving the outermost block.

    Yields
    ------
    None
        Nothing: it is used with ``with``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.utils.parametrize as P
    >>> class Double(rg.nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> m = P.register_parametrization(rg.nn.Linear(2, 2), "weight", Double())
    >>> with P.cached():
    ...     m.weight is m.weight
    True
    >>> m.weight is m.weight
    False
    """
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_data(dest: Tensor, src: Tensor) -> None:
    # torch's Tensor.set_: dest keeps its identity (an optimizer holding it
    # still does) and takes src's values, shape included
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its unconstrained original(s):
    ``module.parametrizations.<name>``.

    The original is held as ``original``, or as ``original0``,
    ``original1``, ... when the first parametrization's ``right_inverse``
    returns several tensors. Calling the list computes the parametrized
    tensor: the parametrizations applied in registration order. Built by
    :func:`register_parametrization`; not meant to be created directly.

    Parameters
    ----------
    modules : sequence of Module
        The parametrizations (at least one).
    original : Tensor or Parameter
        The tensor parametrized; it is set IN PLACE to its unconstrained
        value, ``right_inverse(original)``, keeping its identity.
    unsafe : bool, optional
        Skip the checks that the parametrization keeps the dtype and shape
        (default False).

    Raises
    ------
    ValueError
        If ``modules`` is empty, ``right_inverse`` returns something other
        than a tensor or a sequence of tensors, changes the dtype or device
        of a single tensor, or (unless ``unsafe``) the parametrized tensor's
        dtype or shape differs from the original's.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.utils.parametrize as P
    >>> class Symmetric(rg.nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).T
    >>> plist = P.ParametrizationList([Symmetric()], rg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> plist()
    tensor([[1., 2.],
            [2., 4.]])
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = tuple(original.shape), original.dtype
        # the unconstrained value: right_inverse of every parametrization
        # that has one (one that raises NotImplementedError counts as the identity)
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if isinstance(new, Tensor):
            if new.dtype != original.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            if new.device != original.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the device.\n"
                                 f"original.device: {original.device}\n"
                                 f"right_inverse(original).device: {new.device}")
            with no_grad():
                _set_data(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                                     f"tuple...). Got element {i} of the sequence with type {type(part).__name__}.")
                # a Parameter's parts are Parameters (the user adds them to the optimizer)
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized dtype: {dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if tuple(z.shape) != shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized shape: {shape}\n"
                                 f"parametrized shape: {tuple(z.shape)}")

    def right_inverse(self, value: Tensor) -> None:
        """Set the original(s) from a value of the parametrized tensor.

        Runs the parametrizations' ``right_inverse`` in reverse registration
        order, without grad, and writes the result into ``original`` (or
        ``original0``, ``original1``, ...) in place. Assigning
        ``module.<name> = value`` calls it.

        Parameters
        ----------
        value : Tensor
            The value the parametrized tensor should take.

        Raises
        ------
        RuntimeError
            If a parametrization has no ``right_inverse``.
        ValueError
            If the result's dtype, type or length does not fit the originals.

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.nn.utils.parametrize as P
        >>> class Double(rg.nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        ...     def right_inverse(self, y):
        ...         return y / 2
        >>> m = P.register_parametrization(rg.nn.Linear(1, 1), "weight", Double())
        >>> m.parametrizations.weight.right_inverse(rg.tensor([[4.0]]))
        >>> m.parametrizations.weight.original.detach(), m.weight.detach()
        (tensor([[2.]]), tensor([[4.]]))
        """
        with no_grad():
            result: Any = value
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                result = module.right_inverse(result)
            if self.is_tensor:
                if not isinstance(result, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(result).__name__}")
                if result.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {result.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set_data(self.original, result)
                return
            if not isinstance(result, collections.abc.Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(result).__name__}.")
            if len(result) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                                 f"Got a sequence of length {len(result)}.")
            for i, part in enumerate(result):
                target = getattr(self, f"original{i}")
                if not isinstance(part, Tensor):
                    raise ValueError(f"'right_inverse' must return a sequence of tensors. Got element {i} of type "
                                     f"{type(part).__name__}.")
                if target.dtype != part.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {part.dtype} while "
                                     f"`original{i}` has dtype {target.dtype}")
                _set_data(target, part)

    def forward(self) -> Tensor:
        """The parametrized tensor: the parametrizations applied to the original(s) in order.

        Returns
        -------
        Tensor
            The parametrized value (differentiable in the originals).

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.nn.utils.parametrize as P
        >>> class Double(rg.nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        >>> P.ParametrizationList([Double(), Double()], rg.tensor([1.0]))()
        tensor([4.])
        """
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        i = 1
        while str(i) in self._modules:
            x = self[i](x)
            i += 1
        return x


def _inject_new_class(module: Module) -> None:
    # a subclass of the module's class to hold the properties, so that other
    # instances of the class are untouched
    cls = module.__class__

    def default_deepcopy(self: Module, memo: dict) -> Module:
        found = memo.get(id(self), None)
        if found is not None:
            return found
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        for slot in getattr(copyreg, "_slotnames")(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self: Module) -> dict:
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(): save "
                           "module.state_dict() and load it into a module parametrized the same way")

    def load_from_state_dict(self: Module, state_dict: dict, prefix: str, *args: Any) -> None:
        # the hooks of the parametrizations that read older key layouts
        # (weight_norm's weight_g / weight_v)
        for hook in self.__dict__.get("_parametrize_load_hooks", ()):
            hook(state_dict, prefix)
        cls._load_from_state_dict(self, state_dict, prefix, *args)      # (cls: param_cls's only base)

    namespace: dict[str, Callable[..., Any]] = {"__getstate__": getstate,
                                                 "_load_from_state_dict": load_from_state_dict}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = default_deepcopy
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), namespace)
    module.__class__ = param_cls


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to an unconstrained original.

    After it, reading ``module.weight`` (for ``tensor_name="weight"``) returns
    ``parametrization(original)``, differentiable in the original, which
    lives in ``module.parametrizations.weight.original`` (a Parameter when
    the weight was one: the optimizer updates it). The original's initial
    value is ``parametrization.right_inverse(weight)`` when the
    parametrization defines ``right_inverse``, else the weight itself; it
    is set in place, so an optimizer built before still holds it. A
    ``right_inverse`` returning several tensors stores them as
    ``original0``, ``original1``, ... (new Parameters: add them to the
    optimizer). Registering again on the same name chains the
    parametrizations. Assigning ``module.weight = value`` runs every
    ``right_inverse`` in reverse. The parametrization takes the module's
    training mode.

    Parameters
    ----------
    module : Module
        The module holding the tensor.
    tensor_name : str
        The name of a parameter, a buffer, or an already parametrized tensor.
    parametrization : Module
        Its ``forward`` maps the original(s) to the tensor; it may define
        ``right_inverse``.
    unsafe : bool, optional
        Keyword-only: allow the parametrization to change the tensor's dtype
        and shape, and skip the checks that call it (default False).

    Returns
    -------
    Module
        ``module``.

    Raises
    ------
    ValueError
        If the module has no such parameter, buffer or parametrized tensor,
        or (unless ``unsafe``) the parametrization or its ``right_inverse``
        changes the dtype or shape, or does not return a tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.utils.parametrize as P
    >>> class Symmetric(rg.nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).T
    ...     def right_inverse(self, a):
    ...         return a.triu()
    >>> m = P.register_parametrization(rg.nn.Linear(3, 3), "weight", Symmetric())
    >>> type(m).__name__, bool((m.weight == m.weight.T).all())
    ('ParametrizedLinear', True)
    >>> sorted(m.state_dict())
    ['bias', 'parametrizations.weight.original']
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            out = parametrization(current)
            if not isinstance(out, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(out).__name__}.")
            if out.dtype != current.dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless the "
                                 f"`unsafe` flag is enabled.\nmodule.{tensor_name}.dtype: {current.dtype}\n"
                                 f"parametrization(module.{tensor_name}).dtype: {out.dtype}")
            if tuple(out.shape) != tuple(current.shape):
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless the "
                                 f"`unsafe` flag is enabled.\nmodule.{tensor_name}.shape: {tuple(current.shape)}\n"
                                 f"parametrization(module.{tensor_name}).shape: {tuple(out.shape)}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    back = parametrization.right_inverse(out)
                except NotImplementedError:
                    back = None
                if back is not None:
                    if not isinstance(back, Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. Got: "
                                         f"{type(back).__name__}")
                    if back.dtype != current.dtype:
                        raise ValueError("The tensor returned by parametrization.right_inverse must have the same "
                                         f"dtype as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                                         f"module.{tensor_name}.dtype: {current.dtype}\n"
                                         f"returned dtype: {back.dtype}")
                    if tuple(back.shape) != tuple(current.shape):
                        raise ValueError("The tensor returned by parametrization.right_inverse must have the same "
                                         f"shape as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                                         f"module.{tensor_name}.shape: {tuple(current.shape)}\n"
                                         f"returned shape: {tuple(back.shape)}")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        # once unsafe, always unsafe
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        # built first: its checks may raise before the module is touched
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, or on any tensor).

    Parameters
    ----------
    module : Module
        The module asked about.
    tensor_name : str, optional
        A tensor's name; None (default) asks about any.

    Returns
    -------
    bool
        True if it is parametrized.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.utils.parametrize as P
    >>> m = rg.nn.utils.parametrizations.weight_norm(rg.nn.Linear(2, 2))
    >>> P.is_parametrized(m), P.is_parametrized(m, "weight"), P.is_parametrized(m, "bias")
    (True, True, False)
    """
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo the parametrizations of ``module.<tensor_name>``.

    With ``leave_parametrized`` the tensor keeps its current (parametrized)
    value, written into the original tensor object; otherwise it goes back
    to the unconstrained original. Either way the original object (a
    Parameter stays a Parameter, in the optimizer) is registered again
    under ``tensor_name``. When no parametrization is left the module gets
    its class back.

    Parameters
    ----------
    module : Module
        The parametrized module.
    tensor_name : str
        The tensor whose parametrizations go.
    leave_parametrized : bool, optional
        Keep the parametrized value (default True).

    Returns
    -------
    Module
        ``module``.

    Raises
    ------
    ValueError
        If the tensor is not parametrized, or with ``leave_parametrized=False``
        when it is parametrized by several tensors (``original0``, ...).

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.utils.parametrize as P
    >>> m = rg.nn.utils.parametrizations.weight_norm(rg.nn.Linear(2, 2))
    >>> m = P.remove_parametrizations(m, "weight")
    >>> type(m).__name__, sorted(m.state_dict())
    ('Linear', ['bias', 'weight'])
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                _set_data(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        # with grad: whether the originals require it decides Parameter or buffer
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization (its own class if none).

    Parameters
    ----------
    module : Module
        The module asked about.

    Returns
    -------
    type
        The class.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.utils.parametrize as P
    >>> m = rg.nn.utils.parametrizations.weight_norm(rg.nn.Linear(2, 2))
    >>> type(m).__name__, P.type_before_parametrizations(m).__name__
    ('ParametrizedLinear', 'Linear')
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register ``from_module``'s parametrizations on ``to_module`` and share their originals.

    Each parametrized tensor (or only ``tensor_name``) missing from
    ``to_module`` is first created there as a Parameter of the current
    value; then the same parametrization modules are registered on it and
    the originals (``original`` or ``original0``, ...) are set to
    ``from_module``'s own tensors. Nothing happens when ``from_module`` is not
    parametrized.

    Parameters
    ----------
    from_module : Module
        The parametrized module.
    to_module : Module
        The module that receives them.
    tensor_name : str, optional
        The one tensor to transfer (default: all).

    Returns
    -------
    Module
        ``to_module``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.utils.parametrize as P
    >>> src = rg.nn.utils.parametrizations.weight_norm(rg.nn.Linear(2, 2))
    >>> dst = P.transfer_parametrizations_and_params(src, rg.nn.Linear(2, 2))
    >>> dst.parametrizations.weight.original1 is src.parametrizations.weight.original1
    True
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for param_func in source:
            register_parametrization(to_module, name, param_func)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
