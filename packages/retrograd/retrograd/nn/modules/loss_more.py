"""More loss layers: SmoothL1Loss, KLDivLoss, MarginRankingLoss,
HingeEmbeddingLoss, CosineEmbeddingLoss, TripletMarginLoss,
TripletMarginWithDistanceLoss, MultiLabelSoftMarginLoss, MultiLabelMarginLoss,
MultiMarginLoss, SoftMarginLoss, PoissonNLLLoss, GaussianNLLLoss, CTCLoss,
the deprecated NLLLoss2d, and LinearCrossEntropyLoss with its chunking
options, LinearCrossEntropyOptions.

Each calls its function of :mod:`rg.nn.functional <retrograd.nn.functional>`
with the options given at construction, as torch's; class weights are
buffers.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.distance import PairwiseDistance
from retrograd.nn.modules.linear import Linear
from retrograd.nn.modules.loss import NLLLoss, _Loss, _WeightedLoss

__all__ = ["SmoothL1Loss", "KLDivLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss",
           "MultiMarginLoss", "SoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss", "NLLLoss2d",
           "LinearCrossEntropyOptions", "LinearCrossEntropyLoss"]

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


# --- linear + cross-entropy ------------------------------------------------------------

# the "auto" picks of (acc_policy, chunking_method) per (device type, input dtype), torch's table;
# any other pair takes _AUTO_FALLBACK
_AUTO_DEFAULTS = {("cuda", "float16"): ("compact", "aspect_ratio:2"), ("cuda", "bfloat16"): ("compact", "aspect_ratio:2"),
                  ("cpu", "float16"): ("accurate", "aspect_ratio"), ("cpu", "bfloat16"): ("accurate", "aspect_ratio")}
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")
_ACC_DTYPES = ("float16", "bfloat16", "float32", "float64")


def _dtype_name(dtype: Any) -> str | None:
    try:
        return np.dtype(dtype).name
    except TypeError:
        return None


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How :func:`~retrograd.nn.functional.linear_cross_entropy` chunks the batch.

    Passing an instance (rather than ``options=None``) selects the chunked
    path: the batch is processed ``batch_chunk_size`` rows at a time, so the
    ``(N, C)`` logits are never held at once. It pays when the number of
    classes is much larger than ``in_features`` (a vocabulary head). The
    fields are validated at construction; ``"auto"`` values are resolved per
    call from the device and dtype, as torch's.

    Parameters
    ----------
    allow_retain_graph : bool, optional
        torch's switch that keeps its precomputed gradients for a second
        backward (default False). retrograd's backward recomputes the
        gradients from the saved inputs, so a second backward always works
        and this field changes nothing.
    batch_chunk_size : int, optional
        Rows per chunk (a positive int); None (default) lets
        ``chunking_method`` decide, or takes the whole batch when that is
        None. Giving both a size and a method that disagree raises
        ValueError at call time.
    chunking_method : str, optional
        ``"auto"`` (default: ``"aspect_ratio:2"``, or ``"aspect_ratio"`` for
        float16/bfloat16 on the CPU), ``"aspect_ratio"`` (chunks whose logits
        take about the input's memory: the next power of two of
        ``ceil(N / ceil(C / in_features))``), ``"aspect_ratio:K"`` (that
        divided by K) or None (use ``batch_chunk_size``).
    acc_policy : {'auto', 'accurate', 'balanced', 'compact'}, optional
        torch's precision/memory trade-off for half-precision inputs (default
        ``'auto'``). retrograd computes every chunk in ``acc_dtype``, as
        ``'accurate'`` does; the field is validated and recorded.
    acc_dtype : dtype, optional
        The dtype chunks are computed in: float16, bfloat16, float32 or
        float64. None (default) picks float32 for float16/bfloat16 inputs
        under ``acc_policy='auto'``, else the input's dtype. Other than the
        input's dtype, only float32 for half-precision inputs is allowed.

    Attributes
    ----------
    allow_retain_graph : bool
        The fields, as given (the instance is frozen).
    batch_chunk_size : int or None
        See Parameters.
    chunking_method : str or None
        See Parameters.
    acc_policy : str
        See Parameters.
    acc_dtype : dtype or None
        See Parameters.

    Raises
    ------
    ValueError
        An unknown ``acc_policy`` or ``chunking_method``, a
        ``batch_chunk_size`` that is not a positive int, or an unsupported
        ``acc_dtype``.

    Examples
    --------
    >>> import retrograd as rg
    >>> opts = rg.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    >>> opts.batch_chunk_size, opts.chunking_method
    (2, 'auto')
    >>> x, w = rg.randn(5, 3), rg.randn(7, 3)
    >>> t = rg.tensor([0, 6, 2, 3, 1])
    >>> a = rg.nn.functional.linear_cross_entropy(x, w, t, options=opts)
    >>> b = rg.nn.functional.linear_cross_entropy(x, w, t)
    >>> bool(rg.allclose(a, b))
    True
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = str(self.chunking_method).partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and not isinstance(size, bool) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and _dtype_name(self.acc_dtype) not in _ACC_DTYPES:
            raise ValueError(f"acc_dtype must be one of {{None, rg.float16, rg.bfloat16, rg.float32, rg.float64}}, "
                             f"got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick automatically.")

    @staticmethod
    def _chunk_size(method: str, num_batches: int, in_features: int, num_classes: int) -> int:
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-num_batches // -(-num_classes // max(in_features, 1)))
        return min((1 << (target - 1).bit_length()) // factor, num_batches)

    def _adjust(self, num_batches: int, in_features: int, num_classes: int, dtype: Any,
                device: Any = None) -> LinearCrossEntropyOptions:
        """These options with "auto" and None resolved for one call (chunk size, policy, dtype)."""
        dname = _dtype_name(dtype)
        policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        if policy == "auto" or method == "auto":
            # no device, or an input dtype NumPy does not name, takes the fallback
            key = None if device is None or dname is None else (str(device).split(":")[0], dname)
            ap, cm = _AUTO_FALLBACK if key is None else _AUTO_DEFAULTS.get(key, _AUTO_FALLBACK)
            policy = ap if policy == "auto" else policy
            method = cm if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is not None:
            size = self._chunk_size(method, num_batches, in_features, num_classes)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give "
                                 f"different chunk sizes ({self.batch_chunk_size} vs {size}); pass only one.")
        if self.acc_dtype is not None:
            acc = np.dtype(self.acc_dtype)
        elif self.acc_policy == "auto" and device is not None and dname in ("float16", "bfloat16"):
            acc = np.dtype(np.float32)      # half-precision inputs accumulate in float32 (CPU and CUDA)
        else:
            acc = np.dtype(dtype)
        return dataclasses.replace(self, acc_policy=policy, chunking_method=method, batch_chunk_size=max(1, size),
                                   acc_dtype=acc)


class LinearCrossEntropyLoss(_WeightedLoss):
    """A linear layer to ``num_classes`` logits followed by the cross-entropy with ``target``.

    Owns the :class:`Linear` (``self.linear``, stored flat with
    ``num_classes * prod(out_features)`` outputs) and calls
    :func:`~retrograd.nn.functional.linear_cross_entropy` with its weight
    reshaped to ``(num_classes, *out_features, in_features)``. Passing
    ``options`` chunks the batch so the logits are never held whole.

    Parameters
    ----------
    in_features : int
        Size of each input sample.
    num_classes : int
        The number of classes C.
    out_features : tuple of int, optional
        Extra dims ``(d_1, ..., d_K)`` of a K-dimensional loss (default ``()``).
    bias : bool, optional
        Whether the linear layer has a bias (default False).
    device, dtype : optional
        Where and in which dtype the linear layer's parameters are made.
    reduction : {'mean', 'sum', 'none'}, optional
        How the per-sample losses combine (default ``'mean'``).
    weight : Tensor, optional
        A rescaling weight per class, of shape ``(C,)`` (a buffer).
    ignore_index : int, optional
        A class-index target value that adds nothing (default None: -100).
    label_smoothing : float, optional
        In [0, 1] (default 0).
    options : LinearCrossEntropyOptions, optional
        Chunking options (default None: the reference path).

    Raises
    ------
    RuntimeError
        A ``weight`` not of shape ``(num_classes,)`` or a ``label_smoothing``
        outside [0, 1].

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> loss = rg.nn.LinearCrossEntropyLoss(4, 10, out_features=(3,))
    >>> x = rg.randn(2, 4, requires_grad=True)
    >>> out = loss(x, rg.randint(0, 10, (2, 3)))
    >>> out.shape
    ()
    >>> out.backward()
    >>> loss.linear.weight.grad.shape
    (30, 4)
    """

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index", "label_smoothing"]

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (), bias: bool = False,
                 device: Any = None, dtype: Any = None, reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # Linear's weight is 2-d: the K-dimensional weight is a reshape of it in forward
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``self.linear(input)`` against ``target``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(in_features,)`` or ``(N, in_features)``.
        target : Tensor
            Class indices of shape ``()``, ``(N,)`` or ``(N, *out_features)``,
            or class probabilities of shape ``(C,)`` or ``(N, C, *out_features)``.

        Returns
        -------
        Tensor
            A scalar, or the per-sample losses for ``reduction='none'``.
        """
        lw = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        lb = None if self.linear.bias is None else self.linear.bias.reshape((self.num_classes, *self.out_features))
        return F.linear_cross_entropy(input, lw, target, linear_bias=lb, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self) -> str:
        """The constructor's settings, for the module's repr.

        Returns
        -------
        str
            ``in_features``, ``num_classes``, ``out_features``, ``bias`` and the loss options.
        """
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
