"""ASGD (averaged stochastic gradient descent), as ``torch.optim.ASGD``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, no_grad, tensor, zeros_like
from retrograd.optim.adadelta import _check_lr, _fill_doc, _set_group_defaults
from retrograd.optim.optimizer import (Optimizer, ParamsT, _as_real, _check_implementation_flags, _new_step,
                                       _scalar_dtype, _value)

__all__ = ["ASGD"]


@_fill_doc
class ASGD(Optimizer):
    r"""Averaged stochastic gradient descent, as ``torch.optim.ASGD``.

    With gradient :math:`g_t` at step :math:`t`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - weight decay :math:`\lambda \ne 0`: :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`;
    - :math:`\theta_t = \theta_{t-1}(1 - \lambda_d\eta_t) - \eta_t g_t` (``lambd`` :math:`\lambda_d`);
    - the average :math:`a_t = a_{t-1} + \mu_t(\theta_t - a_{t-1})` (a copy of :math:`\theta_t`
      while :math:`\mu_t = 1`);
    - the next rate :math:`\eta_{t+1} = \gamma / (1 + \lambda_d\gamma t)^\alpha` and averaging weight
      :math:`\mu_{t+1} = 1 / \max(1, t - t_0)`.

    The state of a parameter is ``step``, ``eta`` (:math:`\eta`, starting at
    the learning rate) and ``mu`` (:math:`\mu`), 0-d tensors, and ``ax``
    (the average :math:`a`, which is what one evaluates with), created at
    its first step. The arithmetic follows torch's for-loop implementation
    operation by operation. %(complex)s

    Parameters
    ----------
    %(params)s
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`.
    lambd : float, default 1e-4
        Decay term :math:`\lambda_d`.
    alpha : float, default 0.75
        Power of the rate's decay.
    t0 : float, default 1e6
        The step after which averaging starts.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    %(foreach)s
    %(maximize)s
    %(flags)s

    Raises
    ------
    ValueError
        For a negative learning rate or weight decay, or a tensor ``lr`` with
        more than one element (as torch, the other options are not checked).
    %(flags_raise)s

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = rg.optim.ASGD([w], lr=0.1, t0=1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.51198363, -1.0239673 ], requires_grad=True)
    >>> list(opt.state[w])
    ['step', 'eta', 'mu', 'ax']
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        _check_implementation_flags(differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None, maximize=False, differentiable=False, capturable=False)
        self._steps_to_tensors()
        for p_state in self.state.values():
            for key in ("eta", "mu"):
                if p_state and key in p_state and not isinstance(p_state[key], Tensor):
                    p_state[key] = tensor(float(p_state[key]), dtype=_scalar_dtype())

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one ASGD step on every parameter that has a gradient.

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
        >>> rg.optim.ASGD([p], lr=0.5, lambd=0.0).step()
        >>> p
        tensor([-1.], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    _single_tensor_asgd(params, self.state, lr=float(_value(group["lr"])),
                                        lambd=float(group["lambd"]), alpha=float(group["alpha"]),
                                        t0=float(group["t0"]), weight_decay=float(group["weight_decay"]),
                                        maximize=group["maximize"])
                    self._bump_versions(params)
        return loss


def _single_tensor_asgd(params: list[Any], state: Any, *, lr: float, lambd: float, alpha: float, t0: float,
                        weight_decay: float, maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_asgd (non-capturable branch), on the arrays.
    for p in params:
        p_state = state[p]
        if len(p_state) == 0:
            p_state["step"] = _new_step()
            p_state["eta"] = tensor(lr, dtype=_scalar_dtype())
            p_state["mu"] = tensor(1.0, dtype=_scalar_dtype())
            p_state["ax"] = zeros_like(p)
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        ax = p_state["ax"]._array
        if param.dtype.kind == "c":
            param, grad, ax = _as_real(param), _as_real(grad), _as_real(ax)
        step_t = p_state["step"]._array
        step_t += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        eta = p_state["eta"]._array
        mu = p_state["mu"]._array
        eta_value = float(eta)
        param *= 1 - lambd * eta_value
        param += grad * -eta_value
        mu_value = float(mu)
        if mu_value != 1:
            # ax += (param - ax) * mu, with mu as a scalar of the parameter's dtype (a 0-d tensor does not promote)
            scratch = np.subtract(param, ax)
            scratch *= mu_value
            ax += scratch
        else:
            ax[...] = param
        step = float(step_t)
        eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
        mu[...] = 1 / max(1, step - t0)
