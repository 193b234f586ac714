"""Adagrad, as ``torch.optim.Adagrad``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, full_like, no_grad
from retrograd.optim.optimizer import (Optimizer, ParamsT, _as_real, _check_implementation_flags, _new_step,
                                       _value)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad, as ``torch.optim.Adagrad``.

    With gradient :math:`g_t` at step :math:`t`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - weight decay :math:`\lambda \ne 0`: :math:`g_t \leftarrow g_t + \lambda\theta_{t-1}`;
    - the decayed rate :math:`\tilde\gamma = \gamma / (1 + (t-1)\eta)` (``lr_decay`` :math:`\eta`);
    - :math:`s_t = s_{t-1} + g_t^2`, starting from ``initial_accumulator_value``;
    - :math:`\theta_t = \theta_{t-1} - \tilde\gamma\, g_t / (\sqrt{s_t} + \epsilon)`.

    The state of a parameter is ``step`` and ``sum`` (:math:`s`); as in
    torch, the state of the parameters given to the constructor is created
    there, that of a group added later at its first step. The arithmetic
    follows torch's for-loop implementation operation by operation.

    Parameters
    ----------
    params : iterable
        Tensors, ``(name, tensor)`` pairs, or parameter-group dicts (see :class:`Optimizer`).
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`.
    lr_decay : float, default 0
        Learning-rate decay :math:`\eta`.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    initial_accumulator_value : float, default 0
        Starting value of ``sum``.
    eps : float, default 1e-10
        Added to the denominator.
    foreach : bool, optional
        Accepted for torch compatibility; retrograd always runs the for-loop update.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    differentiable : bool, default False
        Must be False (see Raises).
    fused : bool, optional
        Must be None or False (see Raises).

    Raises
    ------
    ValueError
        For a negative learning rate, lr_decay, weight decay, initial
        accumulator value or epsilon, or a tensor ``lr`` with more than one element.
    NotImplementedError
        For ``differentiable=True`` or ``fused=True``.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, 1.0], requires_grad=True)
    >>> opt = rg.optim.Adagrad([w], lr=0.5)
    >>> for _ in range(2):
    ...     w.grad = rg.tensor([3.0, 4.0])
    ...     opt.step()
    >>> w
    tensor([0.14644659, 0.14644662], requires_grad=True)
    >>> opt.state[w]["sum"]
    tensor([18., 32.])
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        _check_implementation_flags(differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def _init_state(self, p: Tensor, initial_accumulator_value: float) -> None:
        p_state = self.state[p]
        p_state["step"] = _new_step()
        value = (complex(initial_accumulator_value, initial_accumulator_value) if p.dtype.kind == "c"
                 else initial_accumulator_value)
        p_state["sum"] = full_like(p, value)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        self._steps_to_tensors()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adagrad step on every parameter that has a gradient.

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
        >>> rg.optim.Adagrad([p], lr=0.5).step()
        >>> p
        tensor([0.5], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if not params:
                    continue
                for p in params:
                    if len(self.state[p]) == 0:
                        # As torch: a parameter whose state was not made by the
                        # constructor starts from the optimizer's default value.
                        self._init_state(p, self.defaults["initial_accumulator_value"])
                _single_tensor_adagrad(params, self.state, lr=float(_value(group["lr"])),
                                       weight_decay=float(group["weight_decay"]),
                                       lr_decay=float(group["lr_decay"]), eps=float(group["eps"]),
                                       maximize=group["maximize"])
                self._bump_versions(params)
        return loss


def _single_tensor_adagrad(params: list[Any], state: Any, *, lr: float, weight_decay: float, lr_decay: float,
                           eps: float, maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_adagrad (dense gradients), on the arrays.
    for p in params:
        p_state = state[p]
        step_t = p_state["step"]._array
        step_t += 1
        step = float(step_t)
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        clr = lr / (1 + (step - 1) * lr_decay)

        state_sum = p_state["sum"]._array
        if param.dtype.kind == "c":
            param, grad, state_sum = _as_real(param), _as_real(grad), _as_real(state_sum)
        scratch = np.empty_like(param)
        np.multiply(grad, grad, out=scratch)
        state_sum += scratch
        std = np.sqrt(state_sum, out=scratch)
        std += eps
        np.divide(grad * -clr, std, out=std)
        param += std
