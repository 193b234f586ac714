"""Adadelta, as ``torch.optim.Adadelta``.

This module also holds the parameter texts that the docstrings of the
optimizers added with it (Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop,
SparseAdam, LBFGS) share, filled in with ``%`` formatting.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from retrograd.core import Tensor, no_grad, zeros_like
from retrograd.optim.optimizer import (Optimizer, ParamsT, _as_real, _check_implementation_flags, _new_step,
                                       _value)

__all__ = ["Adadelta"]

# Continuation lines are indented for a class docstring's Parameters section.
_DOCS = {
    "params": "params : iterable\n"
              "        Tensors, ``(name, tensor)`` pairs, or parameter-group dicts (see :class:`Optimizer`).",
    "foreach": "foreach : bool, optional\n"
               "        Accepted for torch compatibility; retrograd always runs torch's for-loop arithmetic.",
    "maximize": "maximize : bool, default False\n"
                "        Maximize the objective instead of minimizing it.",
    "flags": "capturable, differentiable : bool, default False\n"
             "        Must be False: retrograd updates the parameters' arrays in place outside the autograd\n"
             "        graph and has no CUDA-graph capture (NotImplementedError otherwise).",
    "flags_raise": "NotImplementedError\n"
                   "        For ``capturable=True`` or ``differentiable=True``.",
    "complex": "Complex parameters are updated as pairs of real numbers, as in torch.",
}

_C = TypeVar("_C", bound=type)


def _fill_doc(cls: _C) -> _C:
    """Fill the shared parameter texts (``%(name)s``) into a class's docstring."""
    cls.__doc__ = (cls.__doc__ or "") % _DOCS
    return cls


def _check_lr(lr: Any) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _set_group_defaults(optimizer: Optimizer, **defaults: Any) -> None:
    """After loading an older state: the options a saved group may lack get torch's defaults."""
    for group in optimizer.param_groups:
        for key, value in defaults.items():
            group.setdefault(key, value)


@_fill_doc
class Adadelta(Optimizer):
    r"""Adadelta, as ``torch.optim.Adadelta``.

    With gradient :math:`g_t`, decay :math:`\rho` and learning rate :math:`\gamma`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - weight decay :math:`\lambda \ne 0`: :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`;
    - :math:`v_t = \rho v_{t-1} + (1-\rho) g_t^2`;
    - :math:`\Delta_t = \sqrt{u_{t-1} + \epsilon}\,/\sqrt{v_t + \epsilon}\; g_t`;
    - :math:`u_t = \rho u_{t-1} + (1-\rho)\Delta_t^2`;
    - :math:`\theta_t = \theta_{t-1} - \gamma\Delta_t`.

    The state of a parameter is ``step``, ``square_avg`` (:math:`v`) and
    ``acc_delta`` (:math:`u`), created at its first step. The arithmetic
    follows torch's for-loop implementation operation by operation.
    %(complex)s

    Parameters
    ----------
    %(params)s
    lr : float or Tensor, default 1.0
        Scales the update :math:`\Delta_t` before it is applied.
    rho : float, default 0.9
        Decay rate of the running averages, in ``[0, 1]``.
    eps : float, default 1e-6
        Added inside both square roots.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    %(foreach)s
    %(flags)s
    %(maximize)s

    Raises
    ------
    ValueError
        For a negative learning rate, epsilon or weight decay, ``rho``
        outside ``[0, 1]``, or a tensor ``lr`` with more than one element.
    %(flags_raise)s

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = rg.optim.Adadelta([w], lr=1.0)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.99030906, -1.9903008 ], requires_grad=True)
    >>> sorted(opt.state[w])
    ['acc_delta', 'square_avg', 'step']
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        _check_implementation_flags(differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None, maximize=False, differentiable=False, capturable=False)
        self._steps_to_tensors()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adadelta step on every parameter that has a gradient.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss (run with grad enabled first).

        Returns
        -------
        object
            The closure's result, or None.

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([1.0], requires_grad=True)
        >>> p.grad = rg.tensor([2.0])
        >>> rg.optim.Adadelta([p], lr=1.0).step()
        >>> p
        tensor([0.99683774], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    _single_tensor_adadelta(params, self.state, lr=float(_value(group["lr"])),
                                            rho=float(group["rho"]), eps=float(group["eps"]),
                                            weight_decay=float(group["weight_decay"]), maximize=group["maximize"])
                    self._bump_versions(params)
        return loss


def _single_tensor_adadelta(params: list[Any], state: Any, *, lr: float, rho: float, eps: float,
                            weight_decay: float, maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_adadelta, on the arrays.
    for p in params:
        p_state = state[p]
        if len(p_state) == 0:
            p_state["step"] = _new_step()
            p_state["square_avg"] = zeros_like(p)
            p_state["acc_delta"] = zeros_like(p)
        step_t = p_state["step"]._array
        step_t += 1
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        square_avg = p_state["square_avg"]._array
        acc_delta = p_state["acc_delta"]._array
        if param.dtype.kind == "c":
            param, grad, square_avg, acc_delta = _as_real(param), _as_real(grad), _as_real(square_avg), \
                _as_real(acc_delta)
        square_avg *= rho
        square_avg += grad * (1 - rho) * grad
        std = np.sqrt(square_avg + eps)
        delta = np.sqrt(acc_delta + eps)
        delta /= std
        delta *= grad
        acc_delta *= rho
        acc_delta += delta * (1 - rho) * delta
        delta *= -lr
        param += delta
