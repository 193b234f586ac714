"""SparseAdam, as ``torch.optim.SparseAdam``: refuses the dense gradients that are all retrograd has."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd.core import Tensor, no_grad
from retrograd.optim.adadelta import _fill_doc
from retrograd.optim.optimizer import Optimizer, ParamsT

__all__ = ["SparseAdam"]


@_fill_doc
class SparseAdam(Optimizer):
    r"""SparseAdam, as ``torch.optim.SparseAdam``: Adam for sparse gradients only.

    torch's SparseAdam updates only the entries a *sparse-layout* gradient
    holds (such as that of ``nn.Embedding(sparse=True)``), and refuses a
    dense gradient with a ``RuntimeError`` telling to use Adam. retrograd has
    no sparse tensors: every gradient is dense (and ``rg.nn.Embedding``
    refuses ``sparse=True``). So, exactly as torch does with a dense
    gradient, :meth:`step` raises ``RuntimeError`` as soon as a parameter
    has a gradient; use :class:`Adam` instead (for an embedding, the same
    training with dense gradients). The constructor checks its arguments
    as torch's, so a program that builds a SparseAdam learns this at its
    first step, with torch's message.

    Parameters
    ----------
    %(params)s
    lr : float or Tensor, default 1e-3
        Learning rate, positive.
    betas : tuple of two floats, default (0.9, 0.999)
        Decay rates of the running averages of the gradient and of its square.
    eps : float, default 1e-8
        Added to the denominator, positive.
    %(maximize)s

    Raises
    ------
    ValueError
        For a learning rate or epsilon that is not positive, a beta outside
        ``[0, 1)``, a tensor ``lr`` with more than one element, or a complex parameter.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = rg.optim.SparseAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    Traceback (most recent call last):
    ...
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead ...
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = [[index, d_index] for index, group in enumerate(self.param_groups)
                          for d_index, param in enumerate(group["params"]) if param.dtype.kind == "c"]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Run the closure, then refuse any gradient: retrograd's gradients are dense.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss (run with grad enabled first).

        Returns
        -------
        object
            The closure's result, or None, when no parameter has a gradient.

        Raises
        ------
        RuntimeError
            If a parameter has a gradient (always dense in retrograd), as torch for a dense gradient.

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([1.0], requires_grad=True)
        >>> rg.optim.SparseAdam([p]).step() is None
        True
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                if any(p.grad is not None for p in group["params"]):
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam instead (retrograd's "
                        "gradients are always dense: use rg.optim.Adam, or rg.optim.AdamW)")
        return loss
