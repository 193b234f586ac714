"""Adamax, as ``torch.optim.Adamax``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, no_grad, zeros_like
from retrograd.optim.adadelta import _check_lr, _fill_doc, _set_group_defaults
from retrograd.optim.adam import _lerp_
from retrograd.optim.optimizer import (Optimizer, ParamsT, _as_real, _check_implementation_flags, _new_step,
                                       _value)

__all__ = ["Adamax"]


def _check_betas(eps: float, betas: Any, weight_decay: float) -> None:
    """torch's checks of epsilon, the betas and the weight decay (Adamax, NAdam, RAdam), with its messages."""
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


@_fill_doc
class Adamax(Optimizer):
    r"""Adamax (Adam with the infinity norm), as ``torch.optim.Adamax``.

    With gradient :math:`g_t`, step count :math:`t` and betas :math:`(\beta_1, \beta_2)`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - weight decay :math:`\lambda \ne 0`: :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`;
    - :math:`m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t`;
    - :math:`u_t = \max(\beta_2 u_{t-1}, |g_t| + \epsilon)`;
    - :math:`\theta_t = \theta_{t-1} - \frac{\gamma}{1-\beta_1^t}\, m_t / u_t`.

    The state of a parameter is ``step``, ``exp_avg`` (:math:`m`) and
    ``exp_inf`` (:math:`u`), created at its first step. The arithmetic
    follows torch's for-loop implementation operation by operation.
    %(complex)s

    Parameters
    ----------
    %(params)s
    lr : float or Tensor, default 2e-3
        Learning rate :math:`\gamma`.
    betas : tuple of two floats, default (0.9, 0.999)
        Decay rates of the running average of the gradient and of the infinity norm.
    eps : float, default 1e-8
        Added to :math:`|g_t|`.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    %(foreach)s
    %(maximize)s
    %(flags)s

    Raises
    ------
    ValueError
        For a negative learning rate, epsilon or weight decay, a beta outside
        ``[0, 1)``, or a tensor ``lr`` with more than one element.
    %(flags_raise)s

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = rg.optim.Adamax([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.7154994, -1.7076483], requires_grad=True)
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_inf', 'step']
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        _check_lr(lr)
        _check_betas(eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        _check_implementation_flags(differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None, maximize=False, differentiable=False, capturable=False)
        self._steps_to_tensors()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adamax step on every parameter that has a gradient.

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
        >>> p.grad = rg.tensor([4.0])
        >>> rg.optim.Adamax([p], lr=0.5).step()
        >>> p
        tensor([0.5], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    beta1, beta2 = group["betas"]
                    _single_tensor_adamax(params, self.state, lr=float(_value(group["lr"])), beta1=float(beta1),
                                          beta2=float(beta2), eps=float(group["eps"]),
                                          weight_decay=float(group["weight_decay"]), maximize=group["maximize"])
                    self._bump_versions(params)
        return loss


def _single_tensor_adamax(params: list[Any], state: Any, *, lr: float, beta1: float, beta2: float, eps: float,
                          weight_decay: float, maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_adamax (non-capturable branch), on the arrays.
    for p in params:
        p_state = state[p]
        if len(p_state) == 0:
            p_state["step"] = _new_step()
            p_state["exp_avg"] = zeros_like(p)
            p_state["exp_inf"] = zeros_like(p)
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        step_t = p_state["step"]._array
        step_t += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        exp_avg = p_state["exp_avg"]._array
        exp_inf = p_state["exp_inf"]._array
        if param.dtype.kind == "c":
            param, grad, exp_avg, exp_inf = _as_real(param), _as_real(grad), _as_real(exp_avg), _as_real(exp_inf)
        scratch = np.empty_like(param)
        _lerp_(exp_avg, grad, 1 - beta1, scratch)
        exp_inf *= beta2
        np.abs(grad, out=scratch)
        scratch += eps
        np.maximum(exp_inf, scratch, out=exp_inf)
        clr = lr / (1 - beta1 ** float(step_t))
        # param.addcdiv_(exp_avg, exp_inf, value=-clr): the value times exp_avg first, then the division.
        np.multiply(exp_avg, -clr, out=scratch)
        scratch /= exp_inf
        param += scratch
