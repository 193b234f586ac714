"""AdamW: Adam with decoupled weight decay, as ``torch.optim.AdamW``."""
from __future__ import annotations

from typing import Any

from retrograd.core import Tensor
from retrograd.optim.adam import Adam
from retrograd.optim.optimizer import ParamsT

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""AdamW: Adam whose weight decay shrinks the weights directly, as ``torch.optim.AdamW``.

    Each step first scales the parameter by :math:`1 - \gamma\lambda`
    (learning rate :math:`\gamma`, weight decay :math:`\lambda`), then takes
    the Adam step of :class:`~retrograd.optim.Adam` with the plain gradient:
    the decay never enters the running averages. It is ``Adam`` with
    ``decoupled_weight_decay=True`` (a group option that stays True, even
    when a state dict is loaded), and a default weight decay of 0.01.

    Parameters
    ----------
    params : iterable
        Tensors, ``(name, tensor)`` pairs, or parameter-group dicts (see :class:`~retrograd.optim.Optimizer`).
    lr : float or Tensor, default 1e-3
        Learning rate :math:`\gamma`.
    betas : tuple of two floats, default (0.9, 0.999)
        Decay rates of the running averages of the gradient and of its square.
    eps : float, default 1e-8
        Added to the denominator.
    weight_decay : float, default 1e-2
        Weight decay coefficient :math:`\lambda`.
    amsgrad : bool, default False
        Use the AMSGrad variant.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    foreach : bool, optional
        Accepted for torch compatibility; retrograd always runs the for-loop update.
    capturable, differentiable : bool, default False
        Must be False.
    fused : bool, optional
        Must be None or False.

    Raises
    ------
    ValueError
        For invalid arguments, as :class:`~retrograd.optim.Adam`.
    NotImplementedError
        For ``capturable``, ``differentiable`` or ``fused`` set to True.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = rg.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = rg.tensor([0.0, 0.0])
    >>> opt.step()
    >>> w
    tensor([0.95, 1.9 ], requires_grad=True)
    >>> opt.param_groups[0]["decoupled_weight_decay"]
    True
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        # Whatever the loaded groups say, AdamW's decay stays decoupled.
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
