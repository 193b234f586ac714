"""More loss layers: SmoothL1Loss, KLDivLoss, MarginRankingLoss,
HingeEmbeddingLoss, CosineEmbeddingLoss, TripletMarginLoss,
TripletMarginWithDistanceLoss, MultiLabelSoftMarginLoss, MultiLabelMarginLoss,
MultiMarginLoss, SoftMarginLoss, PoissonNLLLoss, GaussianNLLLoss, CTCLoss and
the deprecated NLLLoss2d.

Each calls its function of :mod:`rg.nn.functional <retrograd.nn.functional>`
with the options given at construction, as torch's; class weights are
buffers.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.distance import PairwiseDistance
from retrograd.nn.modules.loss import NLLLoss, _Loss, _WeightedLoss

__all__ = ["SmoothL1Loss", "KLDivLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss",
           "MultiMarginLoss", "SoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss", "NLLLoss2d"]

# shared parameter texts of the docstrings below
_LEGACY = """size_average, reduce : bool, optional
        Deprecated; use ``reduction`` (they warn, as torch's)."""
_REDUCTION = """reduction : {'mean', 'sum', 'none'}, optional
        How the losses combine (default ``'mean'``)."""


def _fill(cls):
    cls.__doc__ = (cls.__doc__ or "").replace("{legacy}", _LEGACY).replace("{reduction}", _REDUCTION)
    return cls


@_fill
class SmoothL1Loss(_Loss):
    """The smooth L1 loss: ``0.5 * d**2 / beta`` where ``|d| < beta``, else
    ``|d| - 0.5 * beta``, for ``d = input - target``
    (:func:`retrograd.nn.functional.smooth_l1_loss`).

    Parameters
    ----------
    {legacy}
    {reduction}
    beta : float, optional
        Where the loss turns linear (default 1), at least 0.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.SmoothL1Loss(beta=1.0)(rg.tensor([0.5, 3.0]), rg.tensor([0.0, 0.0]))
    tensor(1.3125)
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` against ``target`` (one shape)."""
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


@_fill
class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence of ``target`` from the distribution
    whose log-probabilities are the input (:func:`retrograd.nn.functional.kl_div`).

    Parameters
    ----------
    {legacy}
    reduction : {'mean', 'batchmean', 'sum', 'none'}, optional
        ``'batchmean'`` gives the divergence per sample (the sum divided by
        the batch size); ``'mean'`` (the default) divides by the number of
        elements, and warns.
    log_target : bool, optional
        Whether the target holds log-probabilities (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.KLDivLoss(reduction="batchmean")
    >>> loss(rg.tensor([[0.25, 0.75]]).log(), rg.tensor([[0.5, 0.5]]))
    tensor(0.14384104)
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The divergence of ``target`` from the log-probabilities ``input``."""
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


@_fill
class MarginRankingLoss(_Loss):
    """The ranking loss ``max(0, -y * (x1 - x2) + margin)``
    (:func:`retrograd.nn.functional.margin_ranking_loss`).

    Parameters
    ----------
    margin : float, optional
        The lead the better-ranked score should have (default 0).
    {legacy}
    {reduction}

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.MarginRankingLoss(margin=0.1)
    >>> loss(rg.tensor([1.0, 0.2]), rg.tensor([0.5, 0.5]), rg.tensor([1.0, 1.0]))
    tensor(0.2)
    """

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 0.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """The loss of the pairs ``(input1, input2)`` ranked by ``target`` (1 or -1)."""
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


@_fill
class HingeEmbeddingLoss(_Loss):
    """The hinge embedding loss: ``x`` where ``y`` is 1, ``max(0, margin - x)``
    where it is -1 (:func:`retrograd.nn.functional.hinge_embedding_loss`).

    Parameters
    ----------
    margin : float, optional
        Default 1.
    {legacy}
    {reduction}

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.HingeEmbeddingLoss()(rg.tensor([0.5, 0.25]), rg.tensor([1.0, -1.0]))
    tensor(0.625)
    """

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 1.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of the distances ``input`` labelled by ``target`` (1 or -1)."""
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


@_fill
class CosineEmbeddingLoss(_Loss):
    """The cosine embedding loss: ``1 - cos(x1, x2)`` where ``y`` is 1,
    ``max(0, cos(x1, x2) - margin)`` where it is -1
    (:func:`retrograd.nn.functional.cosine_embedding_loss`).

    Parameters
    ----------
    margin : float, optional
        Default 0.
    {legacy}
    {reduction}

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.CosineEmbeddingLoss()
    >>> loss(rg.tensor([[1.0, 0.0]]), rg.tensor([[1.0, 1.0]]), rg.tensor([1.0]))
    tensor(0.29289323)
    """

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 0.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """The loss of the embedding pairs ``(input1, input2)`` labelled by ``target``."""
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


@_fill
class TripletMarginLoss(_Loss):
    """The triplet loss ``max(0, d(a, p) - d(a, n) + margin)`` with the
    ``p``-norm distance (:func:`retrograd.nn.functional.triplet_margin_loss`).

    Parameters
    ----------
    margin : float, optional
        Default 1; positive.
    p : float, optional
        The norm's order (default 2).
    eps : float, optional
        Added to the differences (default 1e-6).
    swap : bool, optional
        The distance swap (default False).
    {legacy}
    {reduction}

    Raises
    ------
    ValueError
        For a margin that is not positive.

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.TripletMarginLoss(eps=0.0)
    >>> loss(rg.tensor([[0.0, 0.0]]), rg.tensor([[0.0, 1.0]]), rg.tensor([[0.0, 1.5]]))
    tensor(0.5)
    """

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """The loss of the triplets ``(anchor, positive, negative)``."""
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


@_fill
class TripletMarginWithDistanceLoss(_Loss):
    """The triplet loss ``max(0, d(a, p) - d(a, n) + margin)`` for a distance
    function of your choice
    (:func:`retrograd.nn.functional.triplet_margin_with_distance_loss`).

    Parameters
    ----------
    distance_function : callable, optional
        ``d(x1, x2)``, non-negative, made of retrograd ops (default:
        :class:`PairwiseDistance`, the Euclidean distance).
    margin : float, optional
        Default 1; positive.
    swap : bool, optional
        The distance swap (default False).
    {reduction}

    Raises
    ------
    ValueError
        For a margin that is not positive.

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.TripletMarginWithDistanceLoss(distance_function=lambda u, v: (u - v).abs().sum(-1))
    >>> loss(rg.tensor([[0.0, 0.0]]), rg.tensor([[1.0, 1.0]]), rg.tensor([[1.0, 0.5]]))
    tensor(1.5)
    """

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        # (torch's default is a PairwiseDistance layer: a submodule, in the repr)
        self.distance_function: Callable[[Tensor, Tensor], Tensor] | None = (
            distance_function if distance_function is not None else PairwiseDistance())
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """The loss of the triplets ``(anchor, positive, negative)``."""
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)


@_fill
class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The multi-label one-versus-all logistic loss, averaged over the classes
    (:func:`retrograd.nn.functional.multilabel_soft_margin_loss`).

    Parameters
    ----------
    weight : Tensor, optional
        A weight per class, of shape ``(C,)`` (a buffer).
    {legacy}
    {reduction}

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.MultiLabelSoftMarginLoss()(rg.tensor([[0.0, 2.0]]), rg.tensor([[1.0, 0.0]]))
    tensor(1.4100376)
    """

    __constants__ = ["reduction"]

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of logits ``input`` against 0/1 targets of its shape."""
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


@_fill
class MultiLabelMarginLoss(_Loss):
    """The multi-class multi-label hinge loss
    (:func:`retrograd.nn.functional.multilabel_margin_loss`): each target
    row lists the sample's classes and ends at its first -1.

    Parameters
    ----------
    {legacy}
    {reduction}

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.MultiLabelMarginLoss()
    >>> loss(rg.tensor([[0.1, 0.2, 0.4, 0.8]]), rg.tensor([[3, 0, -1, 1]]))
    tensor(0.85)
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of scores ``input`` against int64 class lists ``target`` of its shape."""
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


@_fill
class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss
    (:func:`retrograd.nn.functional.multi_margin_loss`).

    Parameters
    ----------
    p : int, optional
        1 or 2 (default 1).
    margin : float, optional
        Default 1.
    weight : Tensor, optional
        A weight per class, 1-D of shape ``(C,)`` (a buffer).
    {legacy}
    {reduction}

    Raises
    ------
    ValueError
        For ``p`` other than 1 and 2, or a weight that is not 1-D.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.MultiMarginLoss()(rg.tensor([[0.1, 0.2, 0.4, 0.8]]), rg.tensor([3]))
    tensor(0.325)
    """

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of scores ``input`` against int64 class indices ``target``."""
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


@_fill
class SoftMarginLoss(_Loss):
    """The two-class logistic loss ``log(1 + exp(-y * x))``
    (:func:`retrograd.nn.functional.soft_margin_loss`).

    Parameters
    ----------
    {legacy}
    {reduction}

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.SoftMarginLoss()(rg.tensor([0.0, 2.0]), rg.tensor([1.0, 1.0]))
    tensor(0.41003758)
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of scores ``input`` against 1/-1 targets."""
        return F.soft_margin_loss(input, target, reduction=self.reduction)


@_fill
class PoissonNLLLoss(_Loss):
    """The negative log-likelihood of Poisson-distributed targets
    (:func:`retrograd.nn.functional.poisson_nll_loss`).

    Parameters
    ----------
    log_input : bool, optional
        Whether the input is the log of the rate (default True).
    full : bool, optional
        Add Stirling's approximation of ``log(target!)`` (default False).
    {legacy}
    eps : float, optional
        Keeps ``log`` finite at a zero rate when ``log_input=False`` (default 1e-8).
    {reduction}

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.PoissonNLLLoss()(rg.tensor([0.0, 1.0]), rg.tensor([1.0, 3.0]))
    tensor(0.359141)
    """

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input: bool = True, full: bool = False, size_average: bool | None = None,
                 eps: float = 1e-8, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        """The loss of the predicted (log-)rates against the counts ``target``."""
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


@_fill
class GaussianNLLLoss(_Loss):
    """The Gaussian negative log-likelihood of targets given predicted means
    and variances (:func:`retrograd.nn.functional.gaussian_nll_loss`).

    Parameters
    ----------
    full : bool, optional
        Add the constant ``0.5 * log(2 pi)`` (default False).
    eps : float, optional
        The smallest variance used (default 1e-6).
    {reduction}

    Examples
    --------
    >>> import retrograd as rg
    >>> loss = rg.nn.GaussianNLLLoss()
    >>> loss(rg.tensor([0.0, 1.0]), rg.tensor([1.0, 1.0]), rg.tensor([1.0, 2.0]))
    tensor(0.4232868)
    """

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        """The loss of ``target`` under Gaussians of means ``input`` and variances ``var``."""
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


@_fill
class CTCLoss(_Loss):
    """The Connectionist Temporal Classification loss
    (:func:`retrograd.nn.functional.ctc_loss`).

    Parameters
    ----------
    blank : int, optional
        The blank class (default 0).
    reduction : {'mean', 'sum', 'none'}, optional
        ``'mean'`` divides each loss by its target length, then averages
        over the batch (default).
    zero_infinity : bool, optional
        Replace infinite losses and their gradients by 0 (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> ctc = rg.nn.CTCLoss()
    >>> logp = rg.randn(6, 2, 4).log_softmax(2)             # T=6 frames, N=2, C=4 classes
    >>> loss = ctc(logp, rg.tensor([[1, 2], [3, 3]]), rg.tensor([6, 5]), rg.tensor([2, 2]))
    >>> loss.shape, bool(loss > 0)
    ((), True)
    """

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
                target_lengths: Tensor | Sequence[int]) -> Tensor:
        """The loss of log-probabilities ``(T, N, C)`` against ``targets``."""
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class NLLLoss2d(NLLLoss):
    """:class:`NLLLoss` under its old name; constructing one warns (FutureWarning), as torch.

    Parameters
    ----------
    weight : Tensor, optional
        A weight per class, of shape ``(C,)``.
    size_average, reduce : bool, optional
        Deprecated; use ``reduction``.
    ignore_index : int, optional
        A target value that is ignored (default -100).
    reduction : {'mean', 'sum', 'none'}, optional
        Default ``'mean'``.

    Examples
    --------
    >>> import warnings
    >>> import retrograd as rg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     loss = rg.nn.NLLLoss2d()
    >>> loss(rg.tensor([[[[-0.1]], [[-2.4]]]]), rg.tensor([[[0]]]))
    tensor(0.1)
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and "
                      "see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
                      FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
