"""Adam (and AMSGrad), as ``torch.optim.Adam``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, no_grad, zeros_like
from retrograd.optim.optimizer import (Optimizer, ParamsT, _as_real, _check_implementation_flags, _new_step,
                                       _value)

__all__ = ["Adam"]


def _check_adam_args(lr: Any, betas: Any, eps: float, weight_decay: float) -> None:
    """torch's checks of Adam's and AdamW's arguments, with its messages."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    for i in (0, 1):
        if isinstance(betas[i], Tensor) and betas[i].numel() != 1:
            raise ValueError(f"Tensor betas[{i}] must be 1-element")


class Adam(Optimizer):
    r"""Adam, optionally AMSGrad, as ``torch.optim.Adam``.

    With gradient :math:`g_t`, step count :math:`t` and betas
    :math:`(\beta_1, \beta_2)`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - weight decay :math:`\lambda \ne 0`: :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`, or with
      ``decoupled_weight_decay`` (AdamW) :math:`\theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda)`;
    - :math:`m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t` and :math:`v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2`;
    - with ``amsgrad``, :math:`v_t` in the denominator is replaced by the running maximum
      :math:`\hat v_t = \max(\hat v_{t-1}, v_t)`;
    - :math:`\theta_t = \theta_{t-1} - \frac{\gamma}{1-\beta_1^t}\,
      \frac{m_t}{\sqrt{v_t}/\sqrt{1-\beta_2^t} + \epsilon}`.

    The state of a parameter is ``step`` (a 0-d float tensor), ``exp_avg``
    (:math:`m`), ``exp_avg_sq`` (:math:`v`) and, with ``amsgrad``,
    ``max_exp_avg_sq``. The arithmetic follows torch's for-loop
    implementation operation by operation. Complex parameters are updated
    as pairs of real numbers, as in torch.

    Parameters
    ----------
    params : iterable
        Tensors, ``(name, tensor)`` pairs, or parameter-group dicts (see :class:`Optimizer`).
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    betas : tuple of two floats, default (0.9, 0.999)
        Decay rates of the running averages of the gradient and of its square.
    eps : float, default 1e-8
        Added to the denominator.
    weight_decay : float, default 0
        Weight decay :math:`\lambda` (an L2 penalty unless ``decoupled_weight_decay``).
    amsgrad : bool, default False
        Use the AMSGrad variant.
    foreach : bool, optional
        Accepted for torch compatibility; retrograd always runs the for-loop update.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    capturable, differentiable : bool, default False
        Must be False (see Raises).
    fused : bool, optional
        Must be None or False (see Raises).
    decoupled_weight_decay : bool, default False
        Decay the weights directly rather than through the gradient (AdamW).

    Raises
    ------
    ValueError
        For a negative learning rate, epsilon or weight decay, a beta outside
        ``[0, 1)``, betas that are not both floats (or both tensors), or a
        tensor ``lr`` with more than one element.
    NotImplementedError
        For ``capturable``, ``differentiable`` or ``fused`` set to True.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = rg.optim.Adam([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.7015863, -0.7015863], requires_grad=True)
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_avg_sq', 'step']
    >>> opt.state[w]["step"]
    tensor(3.)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        betas = tuple(betas)  # type: ignore[assignment]
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        _check_implementation_flags(differentiable=differentiable, capturable=capturable, fused=fused)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
        self._steps_to_tensors()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adam step on every parameter that has a gradient.

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
        >>> p.grad = rg.tensor([5.0])
        >>> rg.optim.Adam([p], lr=0.5).step()
        >>> p
        tensor([0.50000006], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    beta1, beta2 = group["betas"]
                    _single_tensor_adam(params, self.state, amsgrad=group["amsgrad"], beta1=float(_value(beta1)),
                                        beta2=float(_value(beta2)), lr=float(_value(group["lr"])),
                                        weight_decay=float(group["weight_decay"]), eps=float(group["eps"]),
                                        maximize=group["maximize"],
                                        decoupled_weight_decay=group["decoupled_weight_decay"])
                    self._bump_versions(params)
        return loss


def _lerp_(start: Any, end: Any, weight: float, scratch: Any) -> None:
    """``start.lerp_(end, weight)`` with torch's two formulas (the one chosen by ``|weight| < 0.5``)."""
    np.subtract(end, start, out=scratch)
    if abs(weight) < 0.5:
        scratch *= weight
        start += scratch
    else:
        scratch *= 1 - weight
        np.subtract(end, scratch, out=start)


def _single_tensor_adam(params: list[Any], state: Any, *, amsgrad: bool, beta1: float, beta2: float, lr: float,
                        weight_decay: float, eps: float, maximize: bool, decoupled_weight_decay: bool) -> None:
    # Order of operations as torch's _single_tensor_adam (non-capturable
    # branch), on the arrays. One scratch array per parameter holds the
    # intermediate results that torch allocates as new tensors.
    for p in params:
        p_state = state[p]
        if len(p_state) == 0:
            p_state["step"] = _new_step()
            p_state["exp_avg"] = zeros_like(p)
            p_state["exp_avg_sq"] = zeros_like(p)
            if amsgrad:
                p_state["max_exp_avg_sq"] = zeros_like(p)
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        step_t = p_state["step"]._array
        step_t += 1

        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param

        exp_avg = p_state["exp_avg"]._array
        exp_avg_sq = p_state["exp_avg_sq"]._array
        if param.dtype.kind == "c":
            param, grad, exp_avg, exp_avg_sq = _as_real(param), _as_real(grad), _as_real(exp_avg), _as_real(exp_avg_sq)
        scratch = np.empty_like(param)

        _lerp_(exp_avg, grad, 1 - beta1, scratch)
        exp_avg_sq *= beta2
        np.multiply(grad, 1 - beta2, out=scratch)
        scratch *= grad
        exp_avg_sq += scratch

        step = float(step_t)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5

        if amsgrad:
            max_exp_avg_sq = p_state["max_exp_avg_sq"]._array
            if max_exp_avg_sq.dtype.kind == "c":
                max_exp_avg_sq = _as_real(max_exp_avg_sq)
            np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            denom = np.sqrt(max_exp_avg_sq, out=scratch)
        else:
            denom = np.sqrt(exp_avg_sq, out=scratch)
        denom /= bias_correction2_sqrt
        denom += eps
        # param.addcdiv_(exp_avg, denom, value=-step_size): value times
        # exp_avg first, then the division.
        np.divide(exp_avg * -step_size, denom, out=denom)
        param += denom
