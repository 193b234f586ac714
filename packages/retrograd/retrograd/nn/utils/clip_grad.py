"""Gradient clipping: clip_grad_norm_ and clip_grad_value_ (``torch.nn.utils``).

The norms are computed with retrograd ops under ``no_grad``, so they run on
the gradients' own device. ``foreach`` is accepted for torch's signature; a
NumPy array has no fused multi-tensor kernel, so both settings run the same
loop and give the same result.
"""
from __future__ import annotations

import math
import types
import warnings
from collections.abc import Iterable
from typing import Union

import numpy as np

from retrograd.core import Tensor, no_grad, stack

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]

_tensor_or_tensors = Union[Tensor, Iterable[Tensor]]


def _as_list(tensors: _tensor_or_tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(t: Tensor, p: float) -> Tensor:
    # torch.linalg.vector_norm of the flattened tensor, order p
    a = t.reshape(-1).abs()
    if p == math.inf:
        return a.max()
    if p == -math.inf:
        return a.min()
    if p == 0:
        return (a != 0).sum().to(dtype=a.dtype)
    if p == 1:
        return a.sum()
    if p == 2:
        return (a * a).sum().sqrt()
    return (a ** p).sum() ** (1.0 / p)


def get_total_norm(tensors: _tensor_or_tensors, norm_type: float | str = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The norm of several tensors taken together, as if concatenated into one vector.

    Computed as torch does: the norm of the vector of each tensor's norm.

    Parameters
    ----------
    tensors : Tensor or iterable of Tensor
        The tensors (usually gradients).
    norm_type : float or str, optional
        The order of the norm (default 2); ``"inf"`` or ``math.inf`` for the
        largest absolute value.
    error_if_nonfinite : bool, optional
        Raise when the norm is nan or infinite (default False).
    foreach : bool, optional
        Accepted for torch's signature; it has no effect.

    Returns
    -------
    Tensor
        The 0-d norm (``tensor(0.)`` when there are no tensors), in the
        tensors' dtype.

    Raises
    ------
    RuntimeError
        If ``error_if_nonfinite`` is true and the norm is not finite.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.utils.get_total_norm([rg.tensor([3.0]), rg.tensor([4.0])])
    tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor(0.0)
    with no_grad():
        norms = [_vector_norm(t, norm_type) for t in tensors]
        dtype = np.result_type(*[n.dtype for n in norms])
        total = _vector_norm(stack([n.to(dtype=dtype, device=tensors[0].device) for n in norms]), norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: _tensor_or_tensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients in place by ``min(1, max_norm / (total_norm + 1e-6))``.

    :func:`clip_grad_norm_` with the total norm already computed (by
    :func:`get_total_norm`).

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Tensors whose ``.grad`` is scaled (those without a grad are skipped).
    max_norm : float
        The largest norm allowed.
    total_norm : Tensor
        The gradients' total norm.
    foreach : bool, optional
        Accepted for torch's signature; it has no effect.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([3.0, 4.0], requires_grad=True)
    >>> w.grad = rg.tensor([3.0, 4.0])
    >>> rg.nn.utils.clip_grads_with_norm_([w], 1.0, rg.tensor(5.0))
    >>> [round(g, 4) for g in w.grad.tolist()]
    [0.6, 0.8]
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        # the coefficient is applied even when it is 1 (torch does the same:
        # no data-dependent branch)
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(device=g.device))


def clip_grad_norm_(parameters: _tensor_or_tensors, max_norm: float, norm_type: float | str = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their total norm is at most ``max_norm``.

    The total norm is that of all the gradients concatenated into one vector
    (:func:`get_total_norm`); every gradient is multiplied by
    ``min(1, max_norm / (total_norm + 1e-6))``.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Tensors whose ``.grad`` is clipped (``model.parameters()``).
    max_norm : float
        The largest norm allowed.
    norm_type : float or str, optional
        The order of the norm (default 2); ``"inf"`` for the largest absolute value.
    error_if_nonfinite : bool, optional
        Raise when the total norm is nan or infinite (default False).
    foreach : bool, optional
        Accepted for torch's signature; it has no effect.

    Returns
    -------
    Tensor
        The total norm of the gradients before clipping (0-d).

    Raises
    ------
    RuntimeError
        If ``error_if_nonfinite`` is true and the norm is not finite.

    Warns
    -----
    UserWarning
        If ``parameters`` is an empty generator (often a generator used up
        by an earlier call).

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([0.0, 0.0], requires_grad=True)
    >>> w.grad = rg.tensor([3.0, 4.0])
    >>> rg.nn.utils.clip_grad_norm_([w], max_norm=1.0)
    tensor(5.)
    >>> [round(g, 4) for g in w.grad.tolist()]
    [0.6, 0.8]
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters: _tensor_or_tensors, max_norm: float, norm_type: float | str = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The deprecated name of :func:`clip_grad_norm_` (it clips in place too).

    Parameters
    ----------
    parameters, max_norm, norm_type, error_if_nonfinite, foreach
        As for :func:`clip_grad_norm_`.

    Returns
    -------
    Tensor
        The total norm of the gradients before clipping.

    Warns
    -----
    FutureWarning
        Always: call ``clip_grad_norm_``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import warnings
    >>> w = rg.tensor([0.0, 0.0], requires_grad=True)
    >>> w.grad = rg.tensor([3.0, 4.0])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rg.nn.utils.clip_grad_norm([w], 1.0)
    tensor(5.)
    """
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _tensor_or_tensors, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient in place to ``[-clip_value, clip_value]``.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Tensors whose ``.grad`` is clipped.
    clip_value : float
        The largest absolute value allowed.
    foreach : bool, optional
        Accepted for torch's signature; it has no effect.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([0.0, 0.0, 0.0], requires_grad=True)
    >>> w.grad = rg.tensor([-3.0, 0.5, 2.0])
    >>> rg.nn.utils.clip_grad_value_(w, 1.0)
    >>> w.grad
    tensor([-1. ,  0.5,  1. ])
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
