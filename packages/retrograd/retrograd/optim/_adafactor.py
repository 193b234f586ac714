"""Adafactor, as ``torch.optim.Adafactor``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd.core import Tensor, no_grad, zeros, zeros_like
from retrograd.optim.adadelta import _fill_doc, _set_group_defaults
from retrograd.optim.adam import _lerp_
from retrograd.optim.optimizer import Optimizer, ParamsT, _new_step, _value

__all__ = ["Adafactor"]


@_fill_doc
class Adafactor(Optimizer):
    r"""Adafactor (Shazeer and Stern, 2018), as ``torch.optim.Adafactor``.

    Adafactor keeps, for a parameter of two or more dimensions, only a
    factored estimate of the running mean of the squared gradient: one value
    per row and one per column of its last two dimensions, instead of one per
    entry. With gradient :math:`G_t`, step count :math:`t`, decay exponent
    :math:`\tau` (``beta2_decay``) and epsilons :math:`(\epsilon_1, \epsilon_2)`,
    each step computes

    - ``maximize``: :math:`G_t \leftarrow -G_t`;
    - :math:`\beta_{2,t} = 1 - t^{\tau}`, the relative step
      :math:`\rho_t = \min(\gamma, 1/\sqrt t)` and the step size
      :math:`\alpha_t = \max(\epsilon_2, \mathrm{RMS}(\theta_{t-1}))\,\rho_t`;
    - decoupled weight decay: :math:`\theta \leftarrow \theta(1 - \gamma\lambda)`;
    - for a matrix (batched over leading dimensions): the row and column means
      of :math:`G_t^2` update :math:`R_t` and :math:`C_t` (running averages with
      weight :math:`1-\beta_{2,t}`), and
      :math:`\hat V_t = R_t C_t / \max(\mathrm{mean}(R_t), \epsilon_1)`;
      for a vector (or a scalar), :math:`\hat V_t` is the running average of
      :math:`G_t^2` itself;
    - :math:`U_t = G_t / \sqrt{\max(\hat V_t, \epsilon_1^2)}`, clipped to
      :math:`\hat U_t = U_t / \max(1, \mathrm{RMS}(U_t)/d)`;
    - :math:`\theta_t = \theta - \alpha_t \hat U_t`.

    As torch's (and unlike the paper), ``lr`` caps the relative step and
    scales the weight decay, and :math:`\epsilon_1` guards the variance
    estimate rather than the factors. The state of a parameter is ``step``
    (a 0-d float tensor) and either ``row_var`` and ``col_var`` (shapes
    ``(..., m, 1)`` and ``(..., 1, n)``) or ``variance`` (the gradient's
    shape). The arithmetic follows torch's for-loop implementation
    operation by operation.

    Parameters
    ----------
    %(params)s
    lr : float or Tensor, default 1e-2
        Learning rate :math:`\gamma`: the largest relative step, and the weight decay's scale.
    beta2_decay : float, default -0.8
        Exponent :math:`\tau \le 0` of the running averages' schedule :math:`1 - t^{\tau}`.
    eps : tuple of (float or None, float), default (None, 1e-3)
        :math:`\epsilon_1` guards the variance estimate (None: the machine epsilon of the
        parameter's dtype); :math:`\epsilon_2` is the smallest parameter scale of a step.
    d : float, default 1.0
        Clipping threshold of the update's RMS (at least 1).
    weight_decay : float, default 0.0
        Decoupled weight decay :math:`\lambda`.
    %(foreach)s
    %(maximize)s

    Raises
    ------
    ValueError
        For a negative learning rate, epsilon or weight decay, a positive
        ``beta2_decay``, ``d < 1``, or a tensor ``lr`` with more than one element.
    RuntimeError
        At ``step()``, for a complex parameter.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    >>> opt = rg.optim.Adafactor([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([[ 0.33600098, -1.5354851 ],
            [ 0.24017042,  2.4902065 ]], requires_grad=True)
    >>> list(opt.state[w])
    ['step', 'row_var', 'col_var']
    >>> opt.state[w]["row_var"].shape, opt.state[w]["col_var"].shape
    ((2, 1), (1, 2))
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        # torch's checks and messages, in torch's order
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        eps1, eps2 = eps
        if eps1 is not None and not 0.0 <= eps1:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps1}")
        if not 0.0 <= eps2:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps2}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _set_group_defaults(self, foreach=None)
        self._steps_to_tensors()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adafactor step on every parameter that has a gradient.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss (run with grad enabled first).

        Returns
        -------
        object
            The closure's result, or None.

        Raises
        ------
        RuntimeError
            For a complex parameter.

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([1.0, -1.0], requires_grad=True)
        >>> p.grad = rg.tensor([4.0, 2.0])
        >>> rg.optim.Adafactor([p]).step()   # the first update of a vector is the gradient's sign
        >>> p
        tensor([ 0.99, -1.01], requires_grad=True)
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.dtype.kind == "c":
                        raise RuntimeError("Adafactor does not support complex parameters")
                    params.append(p)
                    self._init_state(p)
                if params:
                    eps1, eps2 = group["eps"]
                    _single_tensor_adafactor(params, self.state, d=float(group["d"]),
                                             lr=float(_value(group["lr"])), beta2_decay=float(group["beta2_decay"]),
                                             weight_decay=float(group["weight_decay"]),
                                             eps1=None if eps1 is None else float(eps1), eps2=float(eps2),
                                             maximize=group["maximize"])
                    self._bump_versions(params)
        return loss

    def _init_state(self, p: Tensor) -> None:
        p_state = self.state[p]
        if len(p_state) != 0:
            return
        grad = p.grad
        assert grad is not None             # (step only initializes parameters that have a gradient)
        p_state["step"] = _new_step()
        if grad.dim() > 1:
            # one running mean per row (the last dimension reduced) and per column (the one before)
            row_shape = list(grad.shape)
            row_shape[-1] = 1
            p_state["row_var"] = zeros(row_shape, dtype=grad.dtype, device=grad.device)
            col_shape = list(grad.shape)
            col_shape[-2] = 1
            p_state["col_var"] = zeros(col_shape, dtype=grad.dtype, device=grad.device)
        else:
            p_state["variance"] = zeros_like(grad)


def _norm(a: Any) -> float:
    return float(np.sqrt(np.sum(a * a)))


def _single_tensor_adafactor(params: list[Any], state: Any, *, d: float, lr: float, beta2_decay: float,
                             weight_decay: float, eps1: float | None, eps2: float, maximize: bool) -> None:
    # Order of operations as torch's _single_tensor_adafactor, on the arrays.
    for p in params:
        p_state = state[p]
        param = p._array
        grad = p.grad._array
        if maximize:
            grad = -grad
        if eps1 is None:
            # as torch's loop: the first parameter's dtype fixes eps1 for the rest of the group
            eps1 = float(np.finfo(param.dtype).eps)

        step_t = p_state["step"]._array
        step_t += 1
        step = float(step_t)
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, _norm(param) / (param.size ** 0.5)) * rho_t

        if weight_decay != 0:
            param *= 1 - lr * weight_decay

        if grad.ndim > 1:
            row_var = p_state["row_var"]._array
            col_var = p_state["col_var"]._array
            # torch squares the row and column norms (mean of squares without a gradient-sized temporary)
            row_mean = np.sqrt(np.sum(grad * grad, axis=-1, keepdims=True))
            row_mean *= row_mean
            row_mean /= grad.shape[-1]
            _lerp_(row_var, row_mean, one_minus_beta2_t, np.empty_like(row_var))
            col_mean = np.sqrt(np.sum(grad * grad, axis=-2, keepdims=True))
            col_mean *= col_mean
            col_mean /= grad.shape[-2]
            _lerp_(col_var, col_mean, one_minus_beta2_t, np.empty_like(col_var))
            var_estimate = np.matmul(row_var, col_var)
            var_estimate /= np.maximum(np.mean(row_var, axis=-2, keepdims=True), eps1)
        else:
            variance = p_state["variance"]._array
            _lerp_(variance, grad * grad, one_minus_beta2_t, np.empty_like(variance))
            var_estimate = variance.copy()

        # eps1 squared: the square root below brings it back to eps1's magnitude
        np.maximum(var_estimate, eps1 * eps1, out=var_estimate)
        update = np.sqrt(var_estimate, out=var_estimate)
        np.divide(1, update, out=update)
        update *= grad
        denom = max(1.0, _norm(update) / ((update.size ** 0.5) * d))
        update *= -alpha / denom
        param += update
