"""RMSprop, as ``torch.optim.RMSprop``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, no_grad, zeros_like
from retrograd.optim.adam import _lerp_
from retrograd.optim.optimizer import (Optimizer, ParamsT, _as_real, _check_implementation_flags, _new_step,
                                       _value)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop, as ``torch.optim.RMSprop``.

    With gradient :math:`g_t` and smoothing constant :math:`\alpha`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - weight decay :math:`\lambda \ne 0`: :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`;
    - :math:`v_t = \alpha v_{t-1} + (1-\alpha) g_t^2`;
    - the denominator :math:`d_t = \sqrt{v_t} + \epsilon`, or with ``centered``
      :math:`d_t = \sqrt{v_t - \bar g_t^2} + \epsilon` where
      :math:`\bar g_t = \alpha \bar g_{t-1} + (1-\alpha) g_t`;
    - with momentum :math:`\mu > 0`: :math:`b_t = \mu b_{t-1} + g_t / d_t` and
      :math:`\theta_t = \theta_{t-1} - \gamma b_t`; else
      :math:`\theta_t = \theta_{t-1} - \gamma g_t / d_t`.

    The state of a parameter is ``step``, ``square_avg`` (:math:`v`),
    ``momentum_buffer`` (when momentum is positive) and ``grad_avg``
    (when centered). The arithmetic follows torch's for-loop
    implementation operation by operation.

    Parameters
    ----------
    params : iterable
        Tensors, ``(name, tensor)`` pairs, or parameter-group dicts (see :class:`Optimizer`).
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`.
    alpha : float, default 0.99
        Smoothing constant :math:`\alpha`.
    eps : float, default 1e-8
        Added to the denominator.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    momentum : float, default 0
        Momentum factor :math:`\mu`.
    centered : bool, default False
        Normalize by an estimate of the gradient's variance instead of its second moment.
    capturable : bool, default False
        Must be False (see Raises).
    foreach : bool, optional
        Accepted for torch compatibility; retrograd always runs the for-loop update.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    differentiable : bool, default False
        Must be False (see Raises).

    Raises
    ------
    ValueError
        For a negative learning rate, epsilon, momentum, weight decay or
        alpha, or a tensor ``lr`` with more than one element.
    NotImplementedError
        For ``capturable=True`` or ``differentiable=True``.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = rg.optim.RMSprop([w], lr=0.01, alpha=0.9)
    >>> w.grad = rg.tensor([2.0, -2.0])
    >>> opt.step()
    >>> w
    tensor([ 0.96837723, -0.96837723], requires_grad=True)
    >>> opt.state[w]["square_avg"]
    tensor([0.4, 0.4])
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        _check_implementation_flags(differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        self._steps_to_tensors()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one RMSprop step on every parameter that has a gradient.

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
        >>> p.grad = rg.tensor([1.0])
        >>> rg.optim.RMSprop([p], lr=0.1, alpha=0.75).step()
        >>> p
        tensor([0.8], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    _single_tensor_rmsprop(params, self.state, lr=float(_value(group["lr"])),
                                           alpha=float(group["alpha"]), eps=float(group["eps"]),
                                           weight_decay=float(group["weight_decay"]),
                                           momentum=float(group["momentum"]), centered=group["centered"],
                                           maximize=group["maximize"])
                    self._bump_versions(params)
        return loss


def _single_tensor_rmsprop(params: list[Any], state: Any, *, lr: float, alpha: float, eps: float,
                           weight_decay: float, momentum: float, centered: bool, maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_rmsprop, on the arrays;
    # one scratch array per parameter stands for torch's new tensors.
    for p in params:
        p_state = state[p]
        if len(p_state) == 0:
            p_state["step"] = _new_step()
            p_state["square_avg"] = zeros_like(p)
            if momentum > 0:
                p_state["momentum_buffer"] = zeros_like(p)
            if centered:
                p_state["grad_avg"] = zeros_like(p)
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        step_t = p_state["step"]._array
        step_t += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param

        square_avg = p_state["square_avg"]._array
        is_complex = param.dtype.kind == "c"
        if is_complex:
            param, grad, square_avg = _as_real(param), _as_real(grad), _as_real(square_avg)
        scratch = np.empty_like(param)

        square_avg *= alpha
        np.multiply(grad, 1 - alpha, out=scratch)
        scratch *= grad
        square_avg += scratch

        if centered:
            grad_avg = p_state["grad_avg"]._array
            if is_complex:
                grad_avg = _as_real(grad_avg)
            _lerp_(grad_avg, grad, 1 - alpha, scratch)
            # square_avg.addcmul(grad_avg, grad_avg, value=-1): (-grad_avg) * grad_avg is
            # exactly -(grad_avg * grad_avg), so a subtraction gives the same rounding.
            np.multiply(grad_avg, grad_avg, out=scratch)
            np.subtract(square_avg, scratch, out=scratch)
            avg = np.sqrt(scratch, out=scratch)
        else:
            avg = np.sqrt(square_avg, out=scratch)
        avg += eps

        if momentum > 0:
            buf = p_state["momentum_buffer"]._array
            if is_complex:
                buf = _as_real(buf)
            buf *= momentum
            np.divide(grad, avg, out=avg)
            buf += avg
            np.multiply(buf, -lr, out=avg)
            param += avg
        else:
            np.divide(grad * -lr, avg, out=avg)
            param += avg
