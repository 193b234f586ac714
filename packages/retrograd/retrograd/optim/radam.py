"""RAdam (rectified Adam), as ``torch.optim.RAdam``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, no_grad, zeros_like
from retrograd.optim.adadelta import _check_lr, _fill_doc, _set_group_defaults
from retrograd.optim.adam import _lerp_
from retrograd.optim.adamax import _check_betas
from retrograd.optim.optimizer import (Optimizer, ParamsT, _as_real, _check_implementation_flags, _new_step,
                                       _value)

__all__ = ["RAdam"]


@_fill_doc
class RAdam(Optimizer):
    r"""RAdam, Adam with a rectified adaptive rate, as ``torch.optim.RAdam``.

    With gradient :math:`g_t`, step count :math:`t` and betas :math:`(\beta_1, \beta_2)`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - weight decay :math:`\lambda \ne 0`: :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`, or with
      ``decoupled_weight_decay`` :math:`\theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda)`;
    - :math:`m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t` and :math:`v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2`;
    - :math:`\hat m_t = m_t / (1-\beta_1^t)`, :math:`\rho_\infty = 2/(1-\beta_2) - 1` and
      :math:`\rho_t = \rho_\infty - 2t\beta_2^t / (1-\beta_2^t)`;
    - if :math:`\rho_t > 5`: :math:`\theta_t = \theta_{t-1} - \gamma\hat m_t\, r_t\,
      \sqrt{1-\beta_2^t} / (\sqrt{v_t} + \epsilon)` with the rectification
      :math:`r_t = \sqrt{\frac{(\rho_t-4)(\rho_t-2)\rho_\infty}{(\rho_\infty-4)(\rho_\infty-2)\rho_t}}`;
      otherwise :math:`\theta_t = \theta_{t-1} - \gamma\hat m_t` (plain momentum).

    The state of a parameter is ``step``, ``exp_avg`` (:math:`m`) and
    ``exp_avg_sq`` (:math:`v`), created at its first step. The arithmetic
    follows torch's for-loop implementation operation by operation.
    %(complex)s

    Parameters
    ----------
    %(params)s
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    betas : tuple of two floats, default (0.9, 0.999)
        Decay rates of the running averages of the gradient and of its square.
    eps : float, default 1e-8
        Added to the denominator.
    weight_decay : float, default 0
        Weight decay :math:`\lambda` (an L2 penalty unless ``decoupled_weight_decay``).
    decoupled_weight_decay : bool, default False
        Decay the weights directly rather than through the gradient (RAdamW).
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
    >>> opt = rg.optim.RAdam([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.46230334, -0.9246067 ], requires_grad=True)
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_avg_sq', 'step']
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_betas(eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        _check_implementation_flags(differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None, maximize=False, differentiable=False, decoupled_weight_decay=False,
                            capturable=False)
        self._steps_to_tensors()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one RAdam step on every parameter that has a gradient.

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
        >>> rg.optim.RAdam([p], lr=0.5).step()
        >>> p
        tensor([-1.], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    beta1, beta2 = group["betas"]
                    _single_tensor_radam(params, self.state, lr=float(_value(group["lr"])), beta1=float(beta1),
                                         beta2=float(beta2), eps=float(group["eps"]),
                                         weight_decay=float(group["weight_decay"]),
                                         decoupled_weight_decay=group["decoupled_weight_decay"],
                                         maximize=group["maximize"])
                    self._bump_versions(params)
        return loss


def _single_tensor_radam(params: list[Any], state: Any, *, lr: float, beta1: float, beta2: float, eps: float,
                         weight_decay: float, decoupled_weight_decay: bool, maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_radam (non-capturable branch), on the arrays.
    for p in params:
        p_state = state[p]
        if len(p_state) == 0:
            p_state["step"] = _new_step()
            p_state["exp_avg"] = zeros_like(p)
            p_state["exp_avg_sq"] = zeros_like(p)
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        exp_avg = p_state["exp_avg"]._array
        exp_avg_sq = p_state["exp_avg_sq"]._array
        if param.dtype.kind == "c":
            param, grad, exp_avg, exp_avg_sq = _as_real(param), _as_real(grad), _as_real(exp_avg), _as_real(exp_avg_sq)
        step_t = p_state["step"]._array
        step_t += 1
        step = float(step_t)
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        scratch = np.empty_like(param)
        _lerp_(exp_avg, grad, 1 - beta1, scratch)
        exp_avg_sq *= beta2
        np.multiply(grad, 1 - beta2, out=scratch)
        scratch *= grad
        exp_avg_sq += scratch

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        update *= lr
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            # torch's `scalar / tensor` is the tensor's reciprocal times the scalar.
            adaptive = np.sqrt(exp_avg_sq, out=scratch)
            adaptive += eps
            np.reciprocal(adaptive, out=adaptive)
            adaptive *= bias_correction2 ** 0.5
            update *= adaptive
            update *= rect
        param -= update
