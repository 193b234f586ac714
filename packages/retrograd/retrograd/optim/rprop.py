"""Rprop (resilient backpropagation), as ``torch.optim.Rprop``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, full_like, no_grad, zeros_like
from retrograd.optim.adadelta import _check_lr, _fill_doc, _set_group_defaults
from retrograd.optim.optimizer import Optimizer, ParamsT, _as_real, _check_implementation_flags, _new_step, _value

__all__ = ["Rprop"]


@_fill_doc
class Rprop(Optimizer):
    r"""Rprop, resilient backpropagation, as ``torch.optim.Rprop``.

    Each entry of a parameter moves by its own step size in the direction
    opposite to the sign of its gradient. With gradient :math:`g_t` and the
    previous step's :math:`g_{t-1}`, each step computes

    - ``maximize``: :math:`g_t \leftarrow -g_t`;
    - where :math:`g_t g_{t-1} > 0` the step size grows by :math:`\eta_+`; where it is negative it
      shrinks by :math:`\eta_-` and that entry's gradient is taken as 0 (no move, and no sign change
      seen at the next step); it is then clamped to ``step_sizes``;
    - :math:`\theta_t = \theta_{t-1} - \operatorname{sign}(g_t)\,\Delta_t`.

    The state of a parameter is ``step``, ``prev`` (the gradient kept from
    the last step) and ``step_size`` (:math:`\Delta`, starting at the
    learning rate), created at its first step. %(complex)s Like torch's,
    Rprop has no weight decay.

    Parameters
    ----------
    %(params)s
    lr : float or Tensor, default 1e-2
        Initial step size of every entry.
    etas : tuple of two floats, default (0.5, 1.2)
        :math:`(\eta_-, \eta_+)`, with :math:`0 < \eta_- < 1 < \eta_+`.
    step_sizes : tuple of two floats, default (1e-6, 50)
        Smallest and largest step size.
    %(flags)s
    %(foreach)s
    %(maximize)s

    Raises
    ------
    ValueError
        For a negative learning rate, etas not satisfying :math:`0 < \eta_- < 1 < \eta_+`,
        or a tensor ``lr`` with more than one element.
    %(flags_raise)s

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = rg.optim.Rprop([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.636    , -1.6359999], requires_grad=True)
    >>> opt.state[w]["step_size"]
    tensor([0.14400001, 0.14400001])
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        _check_implementation_flags(differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None, maximize=False, differentiable=False, capturable=False)
        self._steps_to_tensors()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Rprop step on every parameter that has a gradient.

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
        >>> p = rg.tensor([1.0, 1.0], requires_grad=True)
        >>> p.grad = rg.tensor([4.0, -0.5])
        >>> rg.optim.Rprop([p], lr=0.25).step()
        >>> p
        tensor([0.75, 1.25], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    etaminus, etaplus = group["etas"]
                    step_size_min, step_size_max = group["step_sizes"]
                    _single_tensor_rprop(params, self.state, lr=float(_value(group["lr"])),
                                         etaminus=float(etaminus), etaplus=float(etaplus),
                                         step_size_min=float(step_size_min), step_size_max=float(step_size_max),
                                         maximize=group["maximize"])
                    self._bump_versions(params)
        return loss


def _single_tensor_rprop(params: list[Any], state: Any, *, lr: float, etaminus: float, etaplus: float,
                         step_size_min: float, step_size_max: float, maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_rprop (non-capturable branch), on the arrays.
    for p in params:
        p_state = state[p]
        if len(p_state) == 0:
            p_state["step"] = _new_step()
            p_state["prev"] = zeros_like(p)
            # A complex entry is two reals: its imaginary part gets a step size too.
            p_state["step_size"] = full_like(p, complex(lr, lr) if p.dtype.kind == "c" else lr)
        step_t = p_state["step"]._array
        step_t += 1
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        prev = p_state["prev"]._array
        step_size = p_state["step_size"]._array
        if param.dtype.kind == "c":
            param, grad, prev, step_size = _as_real(param), _as_real(grad), _as_real(prev), _as_real(step_size)
        # (arrays with out=: a 0-d parameter must give arrays, not NumPy scalars)
        sign = np.multiply(grad, prev, out=np.empty_like(param))
        np.sign(sign, out=sign)
        sign[sign > 0] = etaplus
        sign[sign < 0] = etaminus
        sign[sign == 0] = 1
        step_size *= sign
        np.clip(step_size, step_size_min, step_size_max, out=step_size)
        grad = np.array(grad)
        grad[sign == etaminus] = 0
        param -= np.sign(grad) * step_size
        prev[...] = grad
