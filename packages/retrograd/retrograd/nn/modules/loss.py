"""Loss layers: CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCELoss, BCEWithLogitsLoss, HuberLoss.

Each calls its function of :mod:`rg.nn.functional <retrograd.nn.functional>`
with the options given at construction; class weights are buffers (they
follow ``module.to(...)`` and appear in the state dict), as torch's.
"""
from __future__ import annotations

import warnings

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss", "HuberLoss"]


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    # torch's deprecated size_average / reduce pair, mapped to a reduction
    # with torch's warning
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=4)
    return ret


class _Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """The cross entropy between logits and class indices or probabilities:
    ``log_softmax`` over the class dim, then the negative log-likelihood.

    Parameters
    ----------
    weight : Tensor, optional
        A weight per class, of shape ``(C,)`` (a buffer).
    size_average, reduce : bool, optional
        Deprecated; use ``reduction`` (they warn, as torch's).
    ignore_index : int, optional
        A class-index target value that adds nothing to the loss nor to
        the mean's divisor (default -100).
    reduction : {'mean', 'sum', 'none'}, optional
        How the per-sample losses combine (default ``'mean'``: weighted by
        the targets' class weights).
    label_smoothing : float, optional
        In [0, 1]: mixes the target with the uniform distribution
        (default 0).

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.CrossEntropyLoss()
    >>> logits = rg.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
    >>> out = loss(logits, rg.tensor([0, 2]))
    >>> out
    tensor(0.6690786, grad_fn=<DivBackward0>)
    >>> out.backward()
    >>> logits.grad.shape
    (2, 3)
    """

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of logits ``input`` against ``target``.

        Parameters
        ----------
        input : Tensor
            Logits of shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``.
        target : Tensor
            Class indices (integer, the input's shape without ``C``) or
            class probabilities (float, the input's shape).

        Returns
        -------
        Tensor
            A scalar, or per-sample losses with ``reduction='none'``.
        """
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """The negative log-likelihood of class indices, for an input of
    log-probabilities (e.g. a :class:`LogSoftmax` output).

    Parameters
    ----------
    weight : Tensor, optional
        A weight per class, of shape ``(C,)`` (a buffer).
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    ignore_index : int, optional
        A target value that is ignored (default -100).
    reduction : {'mean', 'sum', 'none'}, optional
        How the per-sample losses combine (default ``'mean'``, weighted).

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.NLLLoss()
    >>> logp = rg.tensor([[-0.1, -2.4], [-1.2, -0.4]])
    >>> loss(logp, rg.tensor([0, 1]))
    tensor(0.25)
    """

    __constants__ = ["ignore_index", "reduction"]

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of log-probabilities ``input`` against class indices ``target``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``.
        target : Tensor
            Integer class indices, the input's shape without ``C``.

        Returns
        -------
        Tensor
            A scalar, or per-sample losses with ``reduction='none'``.
        """
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class MSELoss(_Loss):
    """The squared error ``(input - target) ** 2``, averaged or summed.

    Parameters
    ----------
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.MSELoss()(rg.tensor([1.0, 2.0]), rg.tensor([0.0, 0.0]))
    tensor(2.5)
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` against ``target`` (same shape; a
        different one warns, as torch).

        Parameters
        ----------
        input, target : Tensor
            Tensors of one shape.

        Returns
        -------
        Tensor
            A scalar, or the elementwise losses with ``reduction='none'``.
        """
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """The absolute error ``|input - target|``, averaged or summed.

    Parameters
    ----------
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.L1Loss()(rg.tensor([1.0, -3.0]), rg.tensor([0.0, 0.0]))
    tensor(2.)
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` against ``target``.

        Parameters
        ----------
        input, target : Tensor
            Tensors of one shape.

        Returns
        -------
        Tensor
            A scalar, or the elementwise losses with ``reduction='none'``.
        """
        return F.l1_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (the output of a sigmoid) against
    targets in [0, 1]; see :func:`retrograd.nn.functional.binary_cross_entropy`.

    Parameters
    ----------
    weight : Tensor, optional
        A rescaling weight of each element, broadcast to the input (a buffer).
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.BCELoss()
    >>> loss(rg.tensor([0.5, 0.5]), rg.tensor([1.0, 0.0]))
    tensor(0.6931472)
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of probabilities ``input`` against targets in [0, 1].

        Parameters
        ----------
        input : Tensor
            Probabilities.
        target : Tensor
            Targets of the input's shape.

        Returns
        -------
        Tensor
            A scalar, or the elementwise losses with ``reduction='none'``.
        """
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits: a sigmoid and the binary cross
    entropy in one stable expression.

    Parameters
    ----------
    weight : Tensor, optional
        A rescaling weight of each batch element, broadcast to the input
        (a buffer).
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).
    pos_weight : Tensor, optional
        A weight of the positive examples per class, broadcast along the
        last dim (a buffer): above 1 raises recall, below 1 precision.

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.BCEWithLogitsLoss(pos_weight=rg.tensor([2.0]))
    >>> loss(rg.tensor([0.0, 0.0]), rg.tensor([1.0, 0.0]))
    tensor(1.0397208)
    """

    __constants__ = ["reduction"]

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of logits ``input`` against targets in [0, 1].

        Parameters
        ----------
        input : Tensor
            Logits.
        target : Tensor
            Probabilities of the input's shape.

        Returns
        -------
        Tensor
            A scalar, or the elementwise losses with ``reduction='none'``.
        """
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class HuberLoss(_Loss):
    """The Huber loss: ``0.5 * d**2`` where ``|d| < delta``, else
    ``delta * (|d| - 0.5 * delta)``, for ``d = input - target``.

    Quadratic near 0 and linear beyond ``delta``: less sensitive to
    outliers than :class:`MSELoss`.

    Parameters
    ----------
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).
    delta : float, optional
        Where the loss turns linear (default 1), positive.

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.HuberLoss(delta=1.0)
    >>> loss(rg.tensor([0.5, 3.0]), rg.tensor([0.0, 0.0]))
    tensor(1.3125)
    """

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` against ``target``.

        Parameters
        ----------
        input, target : Tensor
            Tensors of one shape.

        Returns
        -------
        Tensor
            A scalar, or the elementwise losses with ``reduction='none'``.
        """
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)
