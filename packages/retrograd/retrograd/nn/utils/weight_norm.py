"""Weight normalisation through a forward pre-hook (the older
``torch.nn.utils.weight_norm``; :func:`retrograd.nn.utils.parametrizations.weight_norm`
is its successor)."""
from __future__ import annotations

import warnings
from typing import Any, TypeVar

from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter
from retrograd.nn.utils.parametrizations import _check_dim, _norm_except_dim, _weight_norm

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]

T_module = TypeVar("T_module", bound=Module)


class WeightNorm:
    """The forward pre-hook of :func:`weight_norm`: it recomputes
    ``<name> = <name>_g * <name>_v / ||<name>_v||`` before every forward.

    Parameters
    ----------
    name : str
        The weight's name.
    dim : int or None
        The dim kept by the norm; None (or -1) for the whole tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.weight_norm import WeightNorm
    >>> hook = WeightNorm("weight", 0)
    >>> hook.name, hook.dim
    ('weight', 0)
    """

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        """The weight from the module's ``<name>_g`` and ``<name>_v``.

        Parameters
        ----------
        module : Module
            The module holding them.

        Returns
        -------
        Tensor
            ``g * v / ||v||`` (differentiable in both).

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.utils.weight_norm(rg.nn.Linear(2, 1))
        >>> hook = next(iter(m._forward_pre_hooks.values()))
        >>> hook.compute_weight(m).shape
        (1, 2)
        """
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and register the hook.

        Parameters
        ----------
        module : Module
            The module holding the weight.
        name : str
            The weight's name.
        dim : int or None
            The dim kept by the norm.

        Returns
        -------
        WeightNorm
            The hook.

        Raises
        ------
        RuntimeError
            If the weight already has a weight_norm hook.
        IndexError
            If ``dim`` is out of range.

        Warns
        -----
        FutureWarning
            Always: the parametrization is the supported form.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.weight_norm import WeightNorm
        >>> import warnings
        >>> m = rg.nn.Linear(2, 1)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     hook = WeightNorm.apply(m, "weight", 0)
        >>> sorted(m.state_dict())
        ['bias', 'weight_g', 'weight_v']
        """
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        _check_dim(weight, fn.dim)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put back ``module.<name>`` as one Parameter of the current value.

        Parameters
        ----------
        module : Module
            The module holding the weight.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.utils.weight_norm(rg.nn.Linear(2, 1))
        >>> next(iter(m._forward_pre_hooks.values())).remove(m)
        >>> sorted(m.state_dict())
        ['bias', 'weight']
        """
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Weight normalisation (Salimans and Kingma, 2016) through a forward pre-hook.

    ``module.<name>`` is replaced by two Parameters, the magnitude
    ``<name>_g`` and the direction ``<name>_v``; before every forward a
    hook recomputes ``<name> = g * v / ||v||`` (a plain attribute), the
    norm over every dim but ``dim`` (``dim=None``: the whole tensor, ``g``
    0-d). Deprecated in torch in favour of
    :func:`retrograd.nn.utils.parametrizations.weight_norm`, whose state
    dict loads this one's.

    Parameters
    ----------
    module : Module
        The module holding the weight.
    name : str, optional
        The weight's name (default ``"weight"``).
    dim : int or None, optional
        The dim kept by the norm (default 0: one norm per output).

    Returns
    -------
    Module
        ``module``, with the hook.

    Raises
    ------
    RuntimeError
        If the weight already has a weight_norm hook.

    Warns
    -----
    FutureWarning
        Always, as torch's.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.utils.weight_norm(rg.nn.Linear(4, 3))
    >>> m.weight_g.shape, m.weight_v.shape
    ((3, 1), (3, 4))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`weight_norm`: ``module.<name>`` becomes one Parameter again.

    Parameters
    ----------
    module : Module
        The module with the hook.
    name : str, optional
        The weight's name (default ``"weight"``).

    Returns
    -------
    Module
        ``module``.

    Raises
    ------
    ValueError
        If the weight has no weight_norm hook.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.utils.remove_weight_norm(rg.nn.utils.weight_norm(rg.nn.Linear(2, 2)))
    >>> sorted(m.state_dict())
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
