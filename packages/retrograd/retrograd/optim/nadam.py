"""NAdam (Adam with Nesterov momentum), as ``torch.optim.NAdam``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, no_grad, tensor, zeros_like
from retrograd.optim.adadelta import _check_lr, _fill_doc, _set_group_defaults
from retrograd.optim.adam import _lerp_
from retrograd.optim.adamax import _check_betas
from retrograd.optim.optimizer import (Optimizer, ParamsT, _as_real, _check_implementation_flags, _new_step,
                                       _scalar_dtype, _value)

__all__ = ["NAdam"]


@_fill_doc
class NAdam(Optimizer):
    r"""NAdam, Adam with Nesterov momentum, as ``torch.optim.NAdam``.

    With gradient :math:`g_t`, step count :math:`t`, betas :math:`(\beta_1, \beta_2)` and momentum decay
    :math:`\psi`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - weight decay :math:`\lambda \ne 0`: :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`, or with
      ``decoupled_weight_decay`` :math:`\theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda)`;
    - the momentum schedule :math:`\mu_t = \beta_1(1 - \tfrac12 0.96^{t\psi})` and its running
      product :math:`\Pi_t = \prod_{i \le t} \mu_i`;
    - :math:`m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t` and :math:`v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2`;
    - with :math:`d_t = \sqrt{v_t / (1-\beta_2^t)} + \epsilon`:
      :math:`\theta_t = \theta_{t-1} - \gamma\frac{1-\mu_t}{1-\Pi_t}\frac{g_t}{d_t}
      - \gamma\frac{\mu_{t+1}}{1-\Pi_t\mu_{t+1}}\frac{m_t}{d_t}`.

    The state of a parameter is ``step``, ``mu_product`` (:math:`\Pi_t`, a
    0-d tensor), ``exp_avg`` (:math:`m`) and ``exp_avg_sq`` (:math:`v`),
    created at its first step. The arithmetic follows torch's for-loop
    implementation operation by operation. %(complex)s

    Parameters
    ----------
    %(params)s
    lr : float or Tensor, default 2e-3
        Learning rate :math:`\gamma`.
    betas : tuple of two floats, default (0.9, 0.999)
        Decay rates of the running averages of the gradient and of its square.
    eps : float, default 1e-8
        Added to the denominator.
    weight_decay : float, default 0
        Weight decay :math:`\lambda` (an L2 penalty unless ``decoupled_weight_decay``).
    momentum_decay : float, default 4e-3
        :math:`\psi` of the momentum schedule.
    decoupled_weight_decay : bool, default False
        Decay the weights directly rather than through the gradient (NAdamW).
    %(foreach)s
    %(maximize)s
    %(flags)s

    Raises
    ------
    ValueError
        For a negative learning rate, epsilon, weight decay or momentum
        decay, a beta outside ``[0, 1)``, or a tensor ``lr`` with more than one element.
    %(flags_raise)s

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = rg.optim.NAdam([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.75272924, -1.7475085 ], requires_grad=True)
    >>> list(opt.state[w])
    ['step', 'mu_product', 'exp_avg', 'exp_avg_sq']
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_betas(eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        _check_implementation_flags(differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _set_group_defaults(self, maximize=False, foreach=None, capturable=False, differentiable=False,
                            decoupled_weight_decay=False)
        self._steps_to_tensors()
        for p_state in self.state.values():
            if p_state and "mu_product" in p_state and not isinstance(p_state["mu_product"], Tensor):
                p_state["mu_product"] = tensor(float(p_state["mu_product"]), dtype=_scalar_dtype())

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one NAdam step on every parameter that has a gradient.

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
        >>> rg.optim.NAdam([p], lr=0.5).step()
        >>> p
        tensor([0.4717741], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    beta1, beta2 = group["betas"]
                    _single_tensor_nadam(params, self.state, lr=float(_value(group["lr"])), beta1=float(beta1),
                                         beta2=float(beta2), eps=float(group["eps"]),
                                         weight_decay=float(group["weight_decay"]),
                                         momentum_decay=float(group["momentum_decay"]),
                                         decoupled_weight_decay=group["decoupled_weight_decay"],
                                         maximize=group["maximize"])
                    self._bump_versions(params)
        return loss


def _single_tensor_nadam(params: list[Any], state: Any, *, lr: float, beta1: float, beta2: float, eps: float,
                         weight_decay: float, momentum_decay: float, decoupled_weight_decay: bool,
                         maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_nadam (non-capturable branch), on the arrays.
    for p in params:
        p_state = state[p]
        if len(p_state) == 0:
            p_state["step"] = _new_step()
            p_state["mu_product"] = tensor(1.0, dtype=_scalar_dtype())
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
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product = p_state["mu_product"]._array
        mu_product *= mu
        scratch = np.empty_like(param)
        _lerp_(exp_avg, grad, 1 - beta1, scratch)
        exp_avg_sq *= beta2
        np.multiply(grad, 1 - beta2, out=scratch)
        scratch *= grad
        exp_avg_sq += scratch
        denom = np.divide(exp_avg_sq, bias_correction2, out=np.empty_like(param))
        np.sqrt(denom, out=denom)
        mu_product_value = float(mu_product)
        mu_product_next = mu_product_value * mu_next
        denom += eps
        # Two addcdiv_ calls: each value times its numerator first, then the division.
        np.multiply(grad, -lr * (1.0 - mu) / (1.0 - mu_product_value), out=scratch)
        scratch /= denom
        param += scratch
        np.multiply(exp_avg, (-lr * mu_next) / (1.0 - mu_product_next), out=scratch)
        scratch /= denom
        param += scratch
