"""SGD: stochastic gradient descent, with momentum, Nesterov momentum and weight decay, as ``torch.optim.SGD``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd.core import Tensor, empty_like, no_grad
from retrograd.optim.optimizer import Optimizer, ParamsT, _check_implementation_flags, _value

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent, optionally with momentum, as ``torch.optim.SGD``.

    With gradient :math:`g_t` of parameter :math:`\theta`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - weight decay :math:`\lambda \ne 0`: :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`;
    - momentum :math:`\mu \ne 0`: :math:`b_t = g_t` on the first step, then
      :math:`b_t = \mu b_{t-1} + (1-\tau) g_t` (dampening :math:`\tau`); the
      step direction is :math:`g_t + \mu b_t` with ``nesterov``, else :math:`b_t`;
    - :math:`\theta_t = \theta_{t-1} - \gamma \cdot \text{direction}`.

    The buffer :math:`b` is kept as ``state[p]["momentum_buffer"]`` (only
    when momentum is nonzero). The arithmetic follows torch's for-loop
    implementation operation by operation.

    Parameters
    ----------
    params : iterable
        Tensors, ``(name, tensor)`` pairs, or parameter-group dicts (see :class:`Optimizer`).
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma` (a one-element tensor is read at each step).
    momentum : float, default 0
        Momentum factor :math:`\mu`.
    dampening : float, default 0
        Dampening :math:`\tau` of the momentum.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    nesterov : bool, default False
        Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    foreach : bool, optional
        Accepted for torch compatibility; retrograd always runs the for-loop update.
    differentiable : bool, default False
        Must be False (see Raises).
    fused : bool, optional
        Must be None or False (see Raises).

    Raises
    ------
    ValueError
        For a negative learning rate, momentum or weight decay, for Nesterov
        momentum without momentum or with dampening, or for a tensor ``lr``
        with more than one element.
    NotImplementedError
        For ``differentiable=True`` or ``fused=True``.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, 1.0], requires_grad=True)
    >>> opt = rg.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * rg.tensor([1.0, 2.0])).sum().backward()
    ...     opt.step()
    >>> w
    tensor([0.71      , 0.42000002], requires_grad=True)
    >>> opt.state[w]["momentum_buffer"]
    tensor([1.9, 3.8])
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float | Tensor = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_implementation_flags(differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one SGD step on every parameter that has a gradient.

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
        >>> p = rg.tensor([2.0], requires_grad=True)
        >>> p.grad = rg.tensor([4.0])
        >>> rg.optim.SGD([p], lr=0.5).step()
        >>> p
        tensor([0.], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    _single_tensor_sgd(params, self.state, weight_decay=float(_value(group["weight_decay"])),
                                       momentum=float(group["momentum"]), lr=float(_value(group["lr"])),
                                       dampening=float(group["dampening"]), nesterov=group["nesterov"],
                                       maximize=group["maximize"])
                    self._bump_versions(params)
        return loss


def _single_tensor_sgd(params: list[Any], state: Any, *, weight_decay: float, momentum: float, lr: float,
                       dampening: float, nesterov: bool, maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_sgd, on the arrays.
    # Only the parameter and the momentum buffer are written in place;
    # gradients are never modified.
    neg_lr = -lr
    alpha = 1 - dampening
    for p in params:
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            p_state = state[p]
            buf_t: Any = p_state.get("momentum_buffer")
            if buf_t is None:
                buf_t = empty_like(p)
                buf = buf_t._array
                buf[...] = grad
                p_state["momentum_buffer"] = buf_t
            else:
                buf = buf_t._array
                buf *= momentum
                buf += grad if alpha == 1 else alpha * grad
            grad = grad + momentum * buf if nesterov else buf
        param += neg_lr * grad
