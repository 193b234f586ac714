"""Spectral normalisation through a forward pre-hook (the older
``torch.nn.utils.spectral_norm``; :func:`retrograd.nn.utils.parametrizations.spectral_norm`
is its successor)."""
from __future__ import annotations

from typing import Any, TypeVar

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter
from retrograd.nn.utils.parametrizations import _conv_transpose_classes

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]

T_module = TypeVar("T_module", bound=Module)


class SpectralNorm:
    """The forward pre-hook of :func:`spectral_norm`: before every forward it
    sets ``<name> = <name>_orig / sigma``, ``sigma`` estimated by power
    iteration with the buffers ``<name>_u`` and ``<name>_v`` (refined only
    in training mode).

    Parameters
    ----------
    name : str, optional
        The weight's name (default ``"weight"``).
    n_power_iterations : int, optional
        Power iterations per forward in training mode (default 1).
    dim : int, optional
        The output dim (default 0).
    eps : float, optional
        A lower bound of the norms (default 1e-12).

    Raises
    ------
    ValueError
        If ``n_power_iterations`` is not positive.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.spectral_norm import SpectralNorm
    >>> hook = SpectralNorm("weight", 2)
    >>> hook.n_power_iterations, hook.dim
    (2, 0)
    """

    # the version of the state dict layout (torch's 1: <name>_v is stored)
    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """The weight as a matrix, dim ``dim`` as its rows.

        Parameters
        ----------
        weight : Tensor
            The weight.

        Returns
        -------
        Tensor
            Of shape ``(weight.shape[dim], -1)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.spectral_norm import SpectralNorm
        >>> hook = SpectralNorm(dim=1)
        >>> hook.reshape_weight_to_matrix(rg.zeros(2, 3, 4)).shape
        (3, 8)
        """
        if self.dim != 0:
            weight = _c.permute(weight, (self.dim,) + tuple(d for d in range(weight.ndim) if d != self.dim))
        return _c.reshape(weight, (weight.shape[0], -1))

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """``<name>_orig / sigma``, after refining ``u`` and ``v`` in place if asked.

        Parameters
        ----------
        module : Module
            The module holding ``<name>_orig``, ``<name>_u`` and ``<name>_v``.
        do_power_iteration : bool
            Run ``n_power_iterations`` steps first (in place, without grad).

        Returns
        -------
        Tensor
            The normalised weight (differentiable in ``<name>_orig``).

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.utils.spectral_norm(rg.nn.Linear(3, 2))
        >>> hook = next(iter(m._forward_pre_hooks.values()))
        >>> hook.compute_weight(m, do_power_iteration=False).shape
        (2, 3)
        """
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with _c.no_grad():
                mat = weight_mat.detach()
                for _ in range(self.n_power_iterations):
                    F.normalize(_c.matmul(mat.T, u), dim=0, eps=self.eps, out=v)
                    F.normalize(_c.matmul(mat, v), dim=0, eps=self.eps, out=u)
                # copies: the next forward's iteration must not change what backward reads
                u, v = u.clone(), v.clone()
        sigma = _c.dot(u, _c.matmul(weight_mat, v))
        return _c.div(weight, sigma)

    def remove(self, module: Module) -> None:
        """Put back ``module.<name>`` as one Parameter of the current normalised value.

        Parameters
        ----------
        module : Module
            The module with the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.utils.spectral_norm(rg.nn.Linear(3, 2))
        >>> next(iter(m._forward_pre_hooks.values())).remove(m)
        >>> sorted(m.state_dict())
        ['bias', 'weight']
        """
        with _c.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        """Register the hook on ``module.<name>``, with ``u`` and ``v`` drawn at random and normalised.

        Parameters
        ----------
        module : Module
            The module holding the weight.
        name : str
            The weight's name.
        n_power_iterations : int
            Power iterations per forward in training mode.
        dim : int
            The output dim.
        eps : float
            A lower bound of the norms.

        Returns
        -------
        SpectralNorm
            The hook.

        Raises
        ------
        RuntimeError
            If the weight already has a spectral_norm hook.
        ValueError
            If the parameter is None.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.spectral_norm import SpectralNorm
        >>> m = rg.nn.Linear(3, 2)
        >>> hook = SpectralNorm.apply(m, "weight", 1, 0, 1e-12)
        >>> sorted(m.state_dict())
        ['bias', 'weight_orig', 'weight_u', 'weight_v']
        """
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with _c.no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(_c.empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(_c.empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first forward (the same values, detached)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> T_module:
    """Spectral normalisation (Miyato et al., 2018) through a forward pre-hook.

    ``module.<name>`` moves to the Parameter ``<name>_orig``; before every
    forward a hook sets ``<name> = <name>_orig / sigma``, ``sigma`` the
    largest singular value of the weight (as a matrix, dim ``dim`` as its
    rows) estimated by power iteration with the buffers ``<name>_u`` and
    ``<name>_v``: ``n_power_iterations`` steps per forward in training
    mode, none in eval mode. Unlike the parametrization, ``u`` and ``v``
    start at random (no warm-up iterations).

    Parameters
    ----------
    module : Module
        The module holding the weight.
    name : str, optional
        The weight's name (default ``"weight"``).
    n_power_iterations : int, optional
        Power iterations per forward in training mode (default 1).
    eps : float, optional
        A lower bound of the norms (default 1e-12).
    dim : int, optional
        The output dim (default 0; 1 for ConvTranspose modules).

    Returns
    -------
    Module
        ``module``, with the hook.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.utils.spectral_norm(rg.nn.Linear(4, 3))
    >>> m.weight_u.shape, m.weight_v.shape
    ((3,), (4,))
    """
    if dim is None:
        dim = 1 if isinstance(module, _conv_transpose_classes()) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`spectral_norm`: ``module.<name>`` becomes one Parameter again.

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
        If the weight has no spectral_norm hook.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.utils.remove_spectral_norm(rg.nn.utils.spectral_norm(rg.nn.Linear(2, 2)))
    >>> sorted(m.state_dict())
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
