"""More of torch.nn.functional's losses (re-exported by ``retrograd.nn.functional``):
smooth_l1_loss, kl_div, margin_ranking_loss, hinge_embedding_loss,
cosine_embedding_loss, triplet_margin_loss, triplet_margin_with_distance_loss,
multilabel_soft_margin_loss, multilabel_margin_loss, multi_margin_loss,
soft_margin_loss, poisson_nll_loss, gaussian_nll_loss and ctc_loss.

Each is a composite of core's differentiable ops, so its gradients (and
higher-order ones) come from the op table, except ``ctc_loss``: a custom
Function whose forward runs the CTC alpha recursion and whose backward the
alpha-beta one, both in log space, vectorised over the batch and the label
axis; its gradient is torch's (see :func:`ctc_loss`). Arguments are checked
as torch checks them, with torch's exception classes.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np

import retrograd.core as _c
from retrograd.autograd.function import Function, once_differentiable
from retrograd.core import Tensor
from retrograd.core.extending import composite_op, wrap as _wrap
from retrograd.nn.functional import (_arr, _float_loss_input, _no_bfloat16, _on_device, _reduce, _reduction,
                                     _size_warning, _t)

__all__ = ["smooth_l1_loss", "kl_div", "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "multilabel_soft_margin_loss",
           "multilabel_margin_loss", "multi_margin_loss", "soft_margin_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "ctc_loss"]

# shared parameter texts of the docstrings below ({legacy}, {reduction})
_DOCS = {
    "legacy": """size_average, reduce : bool, optional
        Deprecated; use ``reduction`` (either one given overrides it).""",
    "reduction": """reduction : {'mean', 'sum', 'none'}, optional
        How the per-element losses combine (default ``'mean'``).""",
}

# cosine_embedding_loss's guard against a zero norm (torch's EPSILON)
_COS_EPS = 1e-12


def _is_integral(x):
    return x.dtype.kind in "biu"


def _clamp_min0(x):
    # torch's clamp_min(x, 0): its gradient passes where x >= 0
    return _c.clamp(x, min=0.0)


@composite_op("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """The smooth L1 loss of ``d = input - target``: ``0.5 * d**2 / beta``
    where ``|d| < beta``, ``|d| - 0.5 * beta`` elsewhere.

    ``beta = 0`` gives :func:`l1_loss`. Compared with :func:`huber_loss`,
    the quadratic part is divided by ``beta`` so the slope stays 1.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    target : Tensor
        Of the input's shape (a different shape broadcasts, with torch's warning).
    {legacy}
    {reduction}
    beta : float, optional
        Where the loss turns linear (default 1), at least 0.

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    RuntimeError
        For a negative ``beta``, or shapes that do not broadcast.
    ValueError
        For an unknown reduction.
    NotImplementedError
        For integer inputs.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.smooth_l1_loss(rg.tensor([0.5, 3.0]), rg.tensor([0.0, 0.0]), reduction="none")
    tensor([0.125, 2.5  ])
    """
    _size_warning(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _t(input), _t(target, "target")
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta (got beta={beta}).")
    _float_loss_input(x, "smooth_l1_cpu", y)
    d = _c.sub(x, y)
    ad = _c.abs(d)
    if beta == 0:
        return _reduce(ad, reduction)
    # the two pieces meet with equal value and slope at |d| == beta
    loss = _c.where(_c.lt(ad, beta), _c.mul(_c.mul(d, d), 0.5 / beta), _c.sub(ad, 0.5 * beta))
    return _reduce(loss, reduction)


_KL_MEAN_WARNING = ("reduction: 'mean' divides the total loss by both the batch size and the support size."
                    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


def _xlogy_self(t):
    # t * log(t), 0 where t == 0 (torch's xlogy(t, t)); the gradient at 0 is
    # NaN as torch's (0 * log 0 through the unselected branch)
    return _c.where(_c.eq(t, 0), 0.0, _c.mul(t, _c.log(t)))


@composite_op("kl_div")
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence of ``target`` from the distribution
    whose log-probabilities are ``input``: ``target * (log(target) - input)``
    pointwise (0 where ``target`` is 0).

    Parameters
    ----------
    input : Tensor
        Log-probabilities (e.g. a :func:`log_softmax` output).
    target : Tensor
        Probabilities, or log-probabilities with ``log_target=True``;
        broadcast against the input.
    {legacy}
    reduction : {'mean', 'batchmean', 'sum', 'none'}, optional
        ``'batchmean'`` divides the sum by the batch size (the first dim): the
        divergence of the math definition, per sample. ``'mean'`` (the
        default) divides by the number of elements instead and warns, as torch.
    log_target : bool, optional
        Whether ``target`` holds log-probabilities (default False); then the
        pointwise loss is ``exp(target) * (target - input)``.

    Returns
    -------
    Tensor
        A scalar, or the pointwise losses with ``'none'``.

    Raises
    ------
    RuntimeError
        For integer inputs.
    ValueError
        For an unknown reduction.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> logq = rg.tensor([[0.25, 0.75]]).log()
    >>> F.kl_div(logq, rg.tensor([[0.5, 0.5]]), reduction="batchmean")
    tensor(0.14384104)
    """
    if size_average is not None or reduce is not None:
        enum = _reduction(size_average, reduce, "mean")
    else:
        if reduction == "mean":
            warnings.warn(_KL_MEAN_WARNING, stacklevel=2)
        enum = "sum" if reduction == "batchmean" else _reduction(None, None, reduction)
    x, t = _t(input), _t(target, "target")
    if _is_integral(x) or _is_integral(t):
        raise RuntimeError("kl_div: Integral inputs not supported. Convert the input and target to a floating "
                           "dtype, e.g. input.float()")
    if log_target:
        loss = _c.mul(_c.exp(t), _c.sub(t, x))
    else:
        loss = _c.sub(_xlogy_self(t), _c.mul(t, x))
    out = _reduce(loss, enum)
    # (as torch: with the legacy arguments too)
    if reduction == "batchmean" and x.ndim != 0:
        out = _c.div(out, x.shape[0])
    return out


@composite_op("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """The ranking loss ``max(0, -target * (input1 - input2) + margin)``:
    ``target`` 1 says ``input1`` should rank higher, -1 that ``input2`` should.

    Parameters
    ----------
    input1, input2 : Tensor
        The scores to compare.
    target : Tensor
        1 or -1 per pair; the three tensors have one number of dimensions
        and broadcast together.
    margin : float, optional
        The margin the winning score should lead by (default 0).
    {legacy}
    {reduction}

    Returns
    -------
    Tensor
        A scalar, or the per-pair losses with ``'none'``.

    Raises
    ------
    RuntimeError
        If the tensors' numbers of dimensions differ, or they do not broadcast.
    ValueError
        For an unknown reduction.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.margin_ranking_loss(rg.tensor([1.0, 0.2]), rg.tensor([0.5, 0.5]), rg.tensor([1.0, 1.0]), margin=0.1,
    ...                       reduction="none")
    tensor([0. , 0.4])
    """
    reduction = _reduction(size_average, reduce, reduction)
    x1, x2, t = _t(input1, "input1"), _t(input2, "input2"), _t(target, "target")
    if not x1.ndim == x2.ndim == t.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {list(x1.shape)}, input2: {list(x2.shape)}, target: {list(t.shape)} ")
    loss = _clamp_min0(_c.add(_c.mul(_c.neg(t), _c.sub(x1, x2)), margin))
    return _reduce(loss, reduction)


@composite_op("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The hinge embedding loss: ``input`` where ``target`` is 1,
    ``max(0, margin - input)`` where it is -1.

    Typically ``input`` is a distance between two embeddings and ``target``
    says whether they should be similar (1) or not (-1). (A target value
    other than 1 and -1 adds both terms, as in torch.)

    Parameters
    ----------
    input : Tensor
        The distances.
    target : Tensor
        1 or -1 per element, broadcast against the input.
    margin : float, optional
        The distance beyond which dissimilar pairs cost nothing (default 1).
    {legacy}
    {reduction}

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    RuntimeError
        For shapes that do not broadcast, or ``'mean'`` of an integer input.
    ValueError
        For an unknown reduction.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.hinge_embedding_loss(rg.tensor([0.3, 0.4]), rg.tensor([1.0, -1.0]), reduction="none")
    tensor([0.3, 0.6])
    """
    reduction = _reduction(size_average, reduce, reduction)
    x, t = _t(input), _t(target, "target")
    zero = _c.zeros((), dtype=x.dtype, device=x.device)
    hinge = _c.where(_c.ne(t, 1), _clamp_min0(_c.sub(margin, x)), zero)
    loss = _c.add(hinge, _c.where(_c.ne(t, -1), x, zero))
    return _reduce(loss, reduction)


@composite_op("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """The cosine embedding loss: ``1 - cos(x1, x2)`` where ``target`` is 1,
    ``max(0, cos(x1, x2) - margin)`` where it is -1 (0 for other values).

    The cosine is ``x1 . x2 / sqrt((|x1|^2 + eps) (|x2|^2 + eps))`` with
    ``eps = 1e-12``, as torch's.

    Parameters
    ----------
    input1, input2 : Tensor
        Embeddings of shape ``(N, D)``, or ``(D,)`` for one pair.
    target : Tensor
        1 or -1 per pair, of shape ``(N,)`` (or ``()``).
    margin : float, optional
        The cosine below which dissimilar pairs cost nothing (default 0;
        values in [-1, 1], 0 to 0.5 suggested).
    {legacy}
    {reduction}

    Returns
    -------
    Tensor
        A scalar, or the per-pair losses with ``'none'``.

    Raises
    ------
    RuntimeError
        For a target that is not 0-D or 1-D, or inputs of the wrong rank.
    ValueError
        For an unknown reduction.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> a = rg.tensor([[1.0, 0.0], [1.0, 0.0]])
    >>> b = rg.tensor([[1.0, 1.0], [1.0, 1.0]])
    >>> F.cosine_embedding_loss(a, b, rg.tensor([1.0, -1.0]), reduction="none")
    tensor([0.29289323, 0.70710677])
    """
    reduction = _reduction(size_average, reduce, reduction)
    x1, x2, t = _t(input1, "input1"), _t(input2, "input2"), _t(target, "target")
    tdim = t.ndim
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if x1.ndim != tdim + 1 or x2.ndim != tdim + 1:
        raise RuntimeError(f"{tdim}D target tensor expects {tdim + 1}D input tensors, but found inputs with sizes "
                           f"{list(x1.shape)} and {list(x2.shape)}.")
    dot = _c.sum(_c.mul(x1, x2), tdim)
    sq1 = _c.add(_c.sum(_c.mul(x1, x1), tdim), _COS_EPS)
    sq2 = _c.add(_c.sum(_c.mul(x2, x2), tdim), _COS_EPS)
    cos = _c.div(dot, _c.sqrt(_c.mul(sq1, sq2)))
    zero = _c.zeros((), dtype=cos.dtype, device=cos.device)
    loss = _c.add(_c.where(_c.eq(t, 1), _c.sub(1.0, cos), zero),
                  _c.where(_c.eq(t, -1), _clamp_min0(_c.sub(cos, margin)), zero))
    return _reduce(loss, reduction)


def _pairwise_distance(x1, x2, p, eps):
    # torch's pairwise_distance: the p-norm of x1 - x2 + eps over the last dim
    diff = _c.add(_c.sub(x1, x2), eps)
    if diff.ndim == 0:
        return _c.reshape(_c.linalg.vector_norm(_c.reshape(diff, (1,)), p, 0), ())
    return _c.linalg.vector_norm(diff, p, diff.ndim - 1)


def _check_triplet(anchor, positive, negative, margin):
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, p, n = _t(anchor, "anchor"), _t(positive, "positive"), _t(negative, "negative")
    if not a.ndim == p.ndim == n.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a.ndim}D, positive {p.ndim}D, and negative {n.ndim}D inputs")
    return a, p, n


def _triplet(a, p, n, dist, margin, swap, reduction):
    d_pos = dist(a, p)
    d_neg = dist(a, n)
    if swap:
        # (Balntas et al., 2016) the positive's distance to the negative
        # stands in when it is the shorter one
        d_neg = _c.minimum(d_neg, dist(p, n))
    return _reduce(_clamp_min0(_c.sub(_c.add(d_pos, margin), d_neg)), reduction)


@composite_op("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The triplet loss ``max(0, d(a, p) - d(a, n) + margin)``, with ``d`` the
    ``p``-norm distance of :func:`pairwise_distance` along the last dim.

    Parameters
    ----------
    anchor, positive, negative : Tensor
        Embeddings of shape ``(N, D)`` (or ``(D,)``), one number of
        dimensions, broadcast together.
    margin : float, optional
        How much closer the positive should be than the negative (default 1), positive.
    p : float, optional
        The norm's order (default 2).
    eps : float, optional
        Added to the differences, against a zero norm (default 1e-6).
    swap : bool, optional
        Use the positive-negative distance where it is the shorter one
        (the distance swap, default False).
    {legacy}
    {reduction}

    Returns
    -------
    Tensor
        A scalar, or the per-triplet losses with ``'none'``.

    Raises
    ------
    ValueError
        For a margin that is not positive, or an unknown reduction.
    RuntimeError
        If the inputs' numbers of dimensions differ.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> a = rg.tensor([[0.0, 0.0]])
    >>> F.triplet_margin_loss(a, rg.tensor([[0.0, 1.0]]), rg.tensor([[0.0, 1.5]]), eps=0.0)
    tensor(0.5)
    """
    reduction = _reduction(size_average, reduce, reduction)
    a, pos, neg = _check_triplet(anchor, positive, negative, margin)
    return _triplet(a, pos, neg, lambda u, v: _pairwise_distance(u, v, p, eps), margin, swap, reduction)


@composite_op("triplet_margin_with_distance_loss")
def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """The triplet loss ``max(0, d(a, p) - d(a, n) + margin)`` for a distance
    function ``d`` of your choice.

    Parameters
    ----------
    anchor, positive, negative : Tensor
        Embeddings with one number of dimensions.
    distance_function : callable, optional
        ``d(x1, x2)``, a non-negative distance per pair, made of retrograd ops
        so it differentiates (default: :func:`pairwise_distance`, the
        Euclidean distance).
    margin : float, optional
        How much closer the positive should be than the negative (default 1), positive.
    swap : bool, optional
        Use the positive-negative distance where it is the shorter one (default False).
    {reduction}

    Returns
    -------
    Tensor
        A scalar, or the per-triplet losses with ``'none'``.

    Raises
    ------
    ValueError
        For a margin that is not positive, or an unknown reduction.
    RuntimeError
        If the inputs' numbers of dimensions differ.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> l1 = lambda u, v: (u - v).abs().sum(-1)
    >>> a = rg.tensor([[0.0, 0.0]])
    >>> F.triplet_margin_with_distance_loss(a, rg.tensor([[1.0, 1.0]]), rg.tensor([[1.0, 0.5]]),
    ...                                    distance_function=l1)
    tensor(1.5)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    a, pos, neg = _check_triplet(anchor, positive, negative, margin)
    if distance_function is None:
        def distance_function(u, v):
            return _pairwise_distance(u, v, 2.0, 1e-6)
    return _triplet(a, pos, neg, distance_function, margin, swap, reduction)


@composite_op("multilabel_soft_margin_loss")
def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """The multi-label one-versus-all loss: the binary cross entropy of
    ``sigmoid(input)`` against ``target`` per class, averaged over the classes
    (the last dim).

    Parameters
    ----------
    input : Tensor
        Logits of shape ``(N, C)`` (or ``(C,)``).
    target : Tensor
        0 or 1 per class, of the input's shape.
    weight : Tensor, optional
        A weight per class, broadcast against the input.
    {legacy}
    reduction : {'mean', 'sum', 'none'}, optional
        How the per-sample losses combine (default ``'mean'``).

    Returns
    -------
    Tensor
        A scalar, or one loss per sample with ``'none'``.

    Raises
    ------
    IndexError
        For a 0-d input.
    ValueError
        For an unknown reduction.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.multilabel_soft_margin_loss(rg.tensor([[0.0, 2.0]]), rg.tensor([[1.0, 0.0]]))
    tensor(1.4100376)
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    x, t = _t(input), _t(target, "target")
    loss = _c.neg(_c.add(_c.mul(t, _c.logsigmoid(x)), _c.mul(_c.sub(1, t), _c.logsigmoid(_c.neg(x)))))
    if weight is not None:
        loss = _c.mul(loss, weight)
    if x.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    cdim = x.ndim - 1
    loss = _c.div(_c.sum(loss, cdim), x.shape[cdim])
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not valid")
    return _reduce(loss, reduction)


def _xp(a):
    # the array module of `a` (NumPy, or CuPy for a device array)
    if isinstance(a, np.ndarray):
        return np
    import cupy
    return cupy.get_array_module(a)


def _long_target(t, what="target"):
    # torch's index kernels read int64 targets only
    if t.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {t.dtype} ({what} must hold int64 class indices; "
                           f"convert it with {what}.long())")


def _margin_frames(x, fn):
    # (frames, classes) of a (C,), (N, C) or 0-d input: torch's shape rule
    ok = (x.ndim == 2 and x.shape[1] != 0) or (x.ndim == 1 and x.shape[0] != 0) or x.ndim == 0
    if not ok:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(x.shape)} ({fn} takes an input of shape (C,) or (N, C))")
    if x.ndim <= 1:
        return 1, (1 if x.ndim == 0 else x.shape[0])
    return x.shape[0], x.shape[1]


def _frame_reduce(loss, reduction, batched):
    # per-sample losses (N,): a 0-d 'none' result for an unbatched input; an
    # empty batch's mean is NaN (torch leaves it uninitialised)
    if reduction == "none":
        return loss if batched else _c.reshape(loss, ())
    if reduction == "sum":
        return _c.sum(loss)
    return _c.div(_c.sum(loss), loss.shape[0]) if loss.shape[0] else _c.add(_c.sum(loss), float("nan"))


@composite_op("multilabel_margin_loss")
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The multi-class multi-label hinge loss: for each sample, the sum over
    its target classes ``j`` and non-target classes ``i`` of
    ``max(0, 1 - (x[j] - x[i]))``, divided by the number of classes.

    Parameters
    ----------
    input : Tensor
        Scores of shape ``(N, C)``, ``(C,)`` or ``()``.
    target : Tensor
        int64 class indices of the input's shape: each row lists a sample's
        target classes and ends at its first -1 (the rest is ignored).
    {legacy}
    reduction : {'mean', 'sum', 'none'}, optional
        How the per-sample losses combine (default ``'mean'``).

    Returns
    -------
    Tensor
        A scalar, or one loss per sample with ``'none'`` (0-d for an unbatched input).

    Raises
    ------
    RuntimeError
        For shapes that do not fit, a target that is not int64, or a target
        value outside [-1, C).
    ValueError
        For an unknown reduction.
    NotImplementedError
        For an integer input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> F.multilabel_margin_loss(x, rg.tensor([[3, 0, -1, 1]]))
    tensor(0.85)
    """
    reduction = _reduction(size_average, reduce, reduction)
    x = _t(input)
    ta = _arr(target)
    _long_target(ta)
    _float_loss_input(x, "multilabel_margin_loss_forward_out_frame")
    nframe, dim = _margin_frames(x, "multilabel_margin_loss")
    want = (dim,) if x.ndim <= 1 else (nframe, dim)
    if (ta.ndim > 1 or ta.size != dim) if x.ndim <= 1 else tuple(ta.shape) != want:
        raise RuntimeError(f"inconsistent target size: {list(ta.shape)} for input of size: {list(x.shape)}")
    xp = _xp(ta)
    t2 = ta.reshape(nframe, dim)
    if bool(((t2 < -1) | (t2 >= dim)).any()):
        raise RuntimeError("argument #2 'target' is out of range: the values must be class indices in [0, C) "
                           "or -1 (which ends the sample's list)")
    x2 = _c.reshape(x, (nframe, dim))
    # the listed targets: the entries before each row's first -1
    listed = xp.cumprod(t2 >= 0, axis=1).astype(bool)
    safe = xp.where(listed, t2, 0)
    rows = xp.arange(nframe)[:, None]
    is_target = xp.zeros((nframe, dim), dtype=bool)
    is_target[xp.broadcast_to(rows, safe.shape)[listed], safe[listed]] = True
    picked = _c.getitem(x2, (rows, safe))                                  # x[j] per listed j: (N, J)
    z = _c.add(_c.sub(1.0, _c.unsqueeze(picked, 2)), _c.unsqueeze(x2, 1))  # (N, J, C)
    pair = listed[:, :, None] & ~is_target[:, None, :]
    # (the strict z > 0 of torch's kernel: no gradient at z == 0)
    hinge = _c.where(_c.logical_and(_c.gt(z, 0), pair), z, 0.0)
    loss = _c.div(_c.sum(hinge, (1, 2)), dim)
    return _frame_reduce(loss, reduction, x.ndim == 2)


@composite_op("multi_margin_loss")
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss: for each sample of target class ``y``, the
    sum over the other classes ``i`` of ``max(0, margin - x[y] + x[i]) ** p``
    (times ``weight[y]``), divided by the number of classes.

    Parameters
    ----------
    input : Tensor
        Scores of shape ``(N, C)``, ``(C,)`` or ``()``.
    target : Tensor
        int64 class indices of shape ``(N,)`` (``()`` or ``(1,)`` for one sample).
    p : int, optional
        1 or 2 (default 1).
    margin : float, optional
        The lead the target class's score should have (default 1).
    weight : Tensor, optional
        A weight per class, of shape ``(C,)`` and the input's dtype; a
        constant (it must not require grad).
    {legacy}
    reduction : {'mean', 'sum', 'none'}, optional
        How the per-sample losses combine (default ``'mean'``).

    Returns
    -------
    Tensor
        A scalar, or the per-sample losses with ``'none'``.

    Raises
    ------
    ValueError
        For ``p`` other than 1 and 2, a weight that is not 1-D, or an unknown reduction.
    RuntimeError
        For shapes that do not fit, a target that is not int64 or out of
        range, or a weight of another size or dtype or one that requires grad.
    NotImplementedError
        For an integer input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> F.multi_margin_loss(x, rg.tensor([3]))
    tensor(0.325)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and _t(weight, "weight").ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if isinstance(weight, Tensor) and weight.requires_grad and _c.is_grad_enabled():
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")
    x = _t(input)
    ta = _arr(target)
    _long_target(ta)
    _float_loss_input(x, "multi_margin_loss_cpu_kernel")
    _no_bfloat16(x, "multi_margin_loss_cpu_kernel")
    nframe, dim = _margin_frames(x, "multi_margin_loss")
    if ta.ndim > 1 or ta.size != nframe:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {list(ta.shape)}. "
                           f"Input has shape {list(x.shape)}.")
    if weight is not None:
        w = _t(weight, "weight")
        if w.shape[0] != dim:
            raise RuntimeError(f"inconsistent weight size, expected {dim} but got {list(w.shape)}")
        if w.dtype != x.dtype:
            raise RuntimeError(f"expected scalar type {x.dtype} but found {w.dtype} (the weight must have the "
                               f"input's dtype)")
    xp = _xp(ta)
    tf = ta.reshape(nframe)
    if bool(((tf < 0) | (tf >= dim)).any()):
        raise RuntimeError(f"target out of range: the class indices must lie in [0, {dim})")
    x2 = _c.reshape(x, (nframe, dim))
    rows = xp.arange(nframe)
    z = _c.add(_c.sub(margin, _c.unsqueeze(_c.getitem(x2, (rows, tf)), 1)), x2)
    others = xp.arange(dim)[None, :] != tf[:, None]
    h = z if p == 1 else _c.mul(z, z)
    h = _c.where(_c.logical_and(_c.gt(z, 0), others), h, 0.0)
    if weight is not None:
        h = _c.mul(h, _c.unsqueeze(_c.getitem(_t(weight, "weight"), tf), 1))
    loss = _c.div(_c.sum(h, 1), dim)
    return _frame_reduce(loss, reduction, ta.ndim > 0)


@composite_op("soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """The two-class logistic loss ``log(1 + exp(-target * input))``.

    Computed stably (as ``-logsigmoid(target * input)``) for any input.

    Parameters
    ----------
    input : Tensor
        Scores.
    target : Tensor
        1 or -1 per element, broadcast against the input.
    {legacy}
    {reduction}

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    RuntimeError
        For an integer input, shapes that do not broadcast, or a target
        that requires grad (it is a constant, as in torch).
    ValueError
        For an unknown reduction.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.soft_margin_loss(rg.tensor([0.0, 2.0]), rg.tensor([1.0, -1.0]), reduction="none")
    tensor([0.6931472, 2.126928 ])
    """
    reduction = _reduction(size_average, reduce, reduction)
    x, t = _t(input), _t(target, "target")
    if t.requires_grad and _c.is_grad_enabled():
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
                           "This input cannot have requires_grad True.")
    if _is_integral(x):
        raise RuntimeError(f"result type Float can't be cast to the desired output type {x.dtype}: soft_margin_loss "
                           "needs a floating-point input, e.g. input.float()")
    return _reduce(_c.neg(_c.logsigmoid(_c.mul(t, x))), reduction)


@composite_op("poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of a Poisson-distributed ``target``
    whose rate the input predicts: ``exp(input) - target * input`` for a
    log-rate, ``input - target * log(input + eps)`` for a rate.

    Parameters
    ----------
    input : Tensor
        The predicted log-rate (or rate with ``log_input=False``).
    target : Tensor
        The observed counts, broadcast against the input.
    log_input : bool, optional
        Whether the input is the log of the rate (default True).
    full : bool, optional
        Add Stirling's approximation of ``log(target!)``,
        ``target * log(target) - target + 0.5 * log(2 pi target)``, where
        ``target > 1`` (default False).
    {legacy}
    eps : float, optional
        Keeps ``log`` finite at a zero rate when ``log_input=False`` (default 1e-8).
    {reduction}

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    ValueError
        For an unknown reduction.
    RuntimeError
        For shapes that do not broadcast.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.poisson_nll_loss(rg.tensor([0.0, 1.0]), rg.tensor([1.0, 3.0]), reduction="none")
    tensor([ 1.        , -0.28171802])
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    x, t = _t(input), _t(target, "target")
    if log_input:
        loss = _c.sub(_c.exp(x), _c.mul(t, x))
    else:
        loss = _c.sub(x, _c.mul(t, _c.log(_c.add(x, eps))))
    if full:
        stirling = _c.add(_c.sub(_c.mul(t, _c.log(t)), t), _c.mul(_c.log(_c.mul(t, 2 * math.pi)), 0.5))
        loss = _c.add(loss, _c.where(_c.le(t, 1), 0.0, stirling))
    return _reduce(loss, reduction)


def _gaussian_var(x, var):
    # var checked and shaped to broadcast against x, by torch's rules
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        return _c.mul(_c.ones_like(x), var)
    if not isinstance(var, Tensor) and not hasattr(var, "__array__"):
        raise TypeError(f"gaussian_nll_loss(): var must be a Tensor or a float, not {type(var).__name__}")
    v = _t(var, "var")
    if bool(_c.any(_c.lt(v, 0)).detach()):
        raise ValueError("var has negative entry/entries")
    if tuple(v.shape) != tuple(x.shape):
        if tuple(x.shape[:-1]) == tuple(v.shape):
            # one variance per sample (homoscedastic): broadcast along the last dim
            v = _c.unsqueeze(v, -1)
        elif not (x.ndim == v.ndim and sum(b for a, b in zip(x.shape, v.shape) if a != b) == 1):
            raise ValueError(f"var is of incorrect size (var of shape {list(v.shape)} for an input of shape "
                             f"{list(x.shape)}: give the input's shape, one fewer trailing dim, or size 1 in one "
                             f"dim)")
    return v


@composite_op("gaussian_nll_loss")
def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of ``target`` under a Gaussian of mean
    ``input`` and variance ``var``: ``0.5 * (log(var) + (input - target)**2 / var)``.

    ``var`` is clamped below at ``eps`` for stability; as in torch the clamp
    changes the value only, the gradient reaches ``var`` as if unclamped.

    Parameters
    ----------
    input : Tensor
        The predicted means.
    target : Tensor
        The samples, broadcast against the input.
    var : Tensor or float
        Non-negative variances: the input's shape (one per prediction), the
        input's shape without its last dim or with size 1 in one dim (shared
        along it), or a float for all.
    full : bool, optional
        Add the constant ``0.5 * log(2 pi)`` (default False).
    eps : float, optional
        The smallest variance used (default 1e-6).
    reduction : {'mean', 'sum', 'none'}, optional
        How the elementwise losses combine (default ``'mean'``).

    Returns
    -------
    Tensor
        A scalar, or the elementwise losses with ``'none'``.

    Raises
    ------
    ValueError
        For a negative variance, a ``var`` of the wrong size, or an unknown reduction.
    TypeError
        For a ``var`` that is neither a tensor nor a float.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.gaussian_nll_loss(rg.tensor([0.0, 1.0]), rg.tensor([1.0, 1.0]), rg.tensor([1.0, 2.0]), reduction="none")
    tensor([0.5      , 0.3465736])
    """
    x = _t(input)
    v = _gaussian_var(x, var)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not valid")
    # the clamped value, with the identity's gradient (torch clamps in place under no_grad)
    v = _c.add(v, _c.sub(_c.clamp(v, min=eps), v).detach())
    d = _c.sub(x, target)
    loss = _c.mul(_c.add(_c.log(v), _c.div(_c.mul(d, d), v)), 0.5)
    if full:
        loss = _c.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


# --- CTC ---------------------------------------------------------------------------

def _logsumexp3(a, b, c, xp):
    # log(e^a + e^b + e^c) elementwise, -inf where all three are -inf
    m = xp.maximum(xp.maximum(a, b), c)
    m = xp.where(xp.isneginf(m), 0, m)
    return xp.log(xp.exp(a - m) + xp.exp(b - m) + xp.exp(c - m)) + m


def _shift(a, k, fill, xp):
    # a[..., s - k] at s (k > 0: from the left; k < 0: from the right), `fill` outside
    out = xp.full_like(a, fill)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


class CtcLoss(Function):
    """The per-sample CTC negative log-likelihoods (N,) of log_probs (T, N, C)
    for the extended label sequences ``labels`` (N, 2 S + 1): the blank
    between and around each target. Its backward is torch's."""

    @staticmethod
    def forward(ctx, log_probs, meta):
        labels, input_lengths, target_lengths, zero_infinity = meta
        lp = _arr(log_probs)
        xp = _xp(lp)
        T, N, _ = lp.shape
        L = labels.shape[1]
        il, tl = xp.asarray(input_lengths), xp.asarray(target_lengths)
        s = xp.arange(L)
        valid = s[None, :] < (2 * tl + 1)[:, None]                               # (N, L)
        skip = xp.zeros((N, L), dtype=bool)
        skip[:, 2:] = labels[:, 2:] != labels[:, :-2]
        lpe = xp.take_along_axis(lp, xp.broadcast_to(labels[None], (T, N, L)), axis=2)   # (T, N, L)
        neg_inf = -xp.inf
        alpha = xp.full((T, N, L), neg_inf, dtype=lp.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha[0, :, :2] = lpe[0, :, :2]
            alpha[0] = xp.where(valid & (s[None, :] < 2), alpha[0], neg_inf)
            for t in range(1, T):
                prev = alpha[t - 1]
                two_back = xp.where(skip, _shift(prev, 2, neg_inf, xp), neg_inf)
                alpha[t] = xp.where(valid, _logsumexp3(prev, _shift(prev, 1, neg_inf, xp), two_back, xp) + lpe[t],
                                    neg_inf)
            last = xp.clip(il - 1, 0, None)
            rows = xp.arange(N)
            end = alpha[last, rows, 2 * tl]
            before = xp.where(tl > 0, alpha[last, rows, xp.clip(2 * tl - 1, 0, None)], neg_inf)
            nll = -xp.logaddexp(end, before)
        # no frames: only the empty target has probability 1
        nll = xp.where(il == 0, xp.where(tl == 0, 0.0, xp.inf), nll).astype(lp.dtype)
        ctx.saved = (lp, labels, il, tl, lpe, alpha, nll, valid, skip, zero_infinity)
        return _wrap(nll)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        lp, labels, il, tl, lpe, alpha, nll, valid, skip, zero_infinity = ctx.saved
        xp = _xp(lp)
        T, N, C = lp.shape
        L = labels.shape[1]
        neg_inf = -xp.inf
        rows = xp.arange(N)
        beta = xp.full((T, N, L), neg_inf, dtype=lp.dtype)
        # beta[t, s]: log-probability of the labels from s on, given frames t.. (lp[t] included)
        skip_ahead = _shift(skip, -2, False, xp)                                 # l'[s + 2] != l'[s]
        with np.errstate(divide="ignore", invalid="ignore"):
            for t in range(T - 1, -1, -1):
                if t < T - 1:
                    nxt = beta[t + 1]
                    two_on = xp.where(skip_ahead, _shift(nxt, -2, neg_inf, xp), neg_inf)
                    rec = _logsumexp3(nxt, _shift(nxt, -1, neg_inf, xp), two_on, xp) + lpe[t]
                    beta[t] = xp.where(valid & (t < il - 1)[:, None], rec, neg_inf)
                start = il - 1 == t
                if bool(start.any()):
                    b = rows[start]
                    beta[t, b, 2 * tl[b]] = lpe[t, b, 2 * tl[b]]
                    has = tl[b] > 0
                    beta[t, b[has], 2 * tl[b[has]] - 1] = lpe[t, b[has], 2 * tl[b[has]] - 1]
            # the posterior of each (t, s), summed into its class
            post = xp.exp(alpha + beta - lpe + nll[None, :, None])
        post = xp.where(xp.isnan(post), 0, post)
        gamma = xp.zeros((T, N, C), dtype=lp.dtype)
        for k in range(L):
            # (one class per sample at each k: no index repeats within a step)
            gamma[:, rows, labels[:, k]] += post[:, :, k]
        g = _arr(grad)
        out = (xp.exp(lp) - gamma) * g[None, :, None]
        frame = xp.arange(T)[:, None] < il[None, :]                              # (T, N)
        inf = xp.isinf(nll)[None, :]
        fill = 0.0 if zero_infinity else xp.nan
        out = xp.where(frame[:, :, None], xp.where(inf[:, :, None], fill, out), 0.0).astype(lp.dtype)
        return _wrap(out), None


def _ctc_lengths(input_lengths, target_lengths):
    """The lengths as two int64 host arrays: both tensors (of integers) or
    both sequences of ints, as torch's two overloads."""
    tensors = [isinstance(v, Tensor) or hasattr(v, "__array__") for v in (input_lengths, target_lengths)]
    if tensors[0] and tensors[1]:
        out = []
        for v, name in ((input_lengths, "input_lengths"), (target_lengths, "target_lengths")):
            a = _arr(v)
            if a.dtype.kind not in "iu":
                raise RuntimeError(f"{name} must be integral (got {a.dtype}); convert it with {name}.long()")
            out.append(np.asarray(a.get() if hasattr(a, "get") else a).reshape(-1).astype(np.int64))
        return out[0], out[1]
    if not any(tensors):
        seqs = []
        for v in (input_lengths, target_lengths):
            if isinstance(v, Sequence) and not isinstance(v, str) and all(
                    isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in v):
                seqs.append(np.asarray(v, dtype=np.int64).reshape(-1))
        if len(seqs) == 2:
            return seqs[0], seqs[1]
    raise TypeError(f"ctc_loss(): input_lengths and target_lengths must both be Tensors of integers or both "
                    f"tuples of ints, got {type(input_lengths).__name__} and {type(target_lengths).__name__}")


def _ctc_labels(tg, il, tl, T, N, C, blank):
    """Torch's argument checks, then the extended label sequences (N, 2 S + 1):
    blank, target 1, blank, ..., blank, padded with blanks."""
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    if not 0 <= blank < C:
        raise RuntimeError(f"blank must be in label range (got blank={blank} for {C} classes)")
    if il.shape[0] != N:
        raise RuntimeError(f"input_lengths must be of size batch_size (got {il.shape[0]} lengths for a batch of {N})")
    if tl.shape[0] != N:
        raise RuntimeError(f"target_lengths must be of size batch_size (got {tl.shape[0]} lengths for a batch of {N})")
    if (tl < 0).any():
        raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {int(tl[tl < 0][0])}"
                           + where)
    S = int(tl.max()) if N else 0
    k = np.arange(S)
    used = k[None, :] < tl[:, None]                                              # (N, S)
    if tg.ndim == 1:
        # concatenated: each sample's targets follow the previous one's
        if tg.shape[0] != int(tl.sum()):
            raise RuntimeError(f"Expected tensor to have size {int(tl.sum())} at dimension 0, but got size "
                               f"{tg.shape[0]} for argument #2 'targets'" + where)
        starts = np.cumsum(tl) - tl
        idx = np.where(used, starts[:, None] + k[None, :], 0)
        padded = tg[idx] if tg.shape[0] else np.zeros((N, S), dtype=np.int64)
    else:
        if tg.shape[0] != N:
            raise RuntimeError(f"Expected tensor to have size {N} at dimension 0, but got size {tg.shape[0]} for "
                               f"argument #2 'targets'" + where)
        if tg.shape[1] < S:
            raise RuntimeError(f"Expected tensor to have size at least {S} at dimension 1, but got size "
                               f"{tg.shape[1]} for argument #2 'targets'" + where)
        padded = tg[:, :S]
    for v in il:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {int(v)}" + where)
        if v > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {int(v)}" + where)
    bad = used & ((padded < 0) | (padded >= C))
    if bad.any():
        # torch reads out of bounds here; an error says what is wrong instead
        raise IndexError(f"ctc_loss: target label {int(padded[bad][0])} is out of range for {C} classes")
    labels = np.full((N, 2 * S + 1), blank, dtype=np.int64)
    labels[:, 1::2] = np.where(used, padded, blank)
    return labels


@composite_op("ctc_loss")
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int], blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """The Connectionist Temporal Classification loss (Graves et al., 2006):
    the negative log of the probability, summed over every alignment, that
    the per-frame class distributions emit the target sequence.

    An alignment emits one class per frame; merging repeats, then dropping
    blanks, must give the target. Computed by the forward (alpha) recursion
    in log space. The gradient is torch's: ``exp(log_probs) - posterior``
    per frame and class, which is the true gradient once it passes back
    through a :func:`log_softmax` (pass log-probabilities made by one; torch's
    tests check it that way).

    Parameters
    ----------
    log_probs : Tensor
        Log-probabilities of shape ``(T, N, C)`` (frames, batch, classes
        including the blank), or ``(T, C)`` for one sequence; float32 or float64.
    targets : Tensor
        Class indices (not the blank), padded to ``(N, S)``, or the
        samples' targets concatenated into one 1-D tensor (the only form of
        an unbatched input).
    input_lengths, target_lengths : Tensor or tuple of int
        Each sample's number of frames (at most ``T``) and of targets; both
        tensors of integers, or both sequences of ints.
    blank : int, optional
        The blank class (default 0).
    reduction : {'mean', 'sum', 'none'}, optional
        ``'mean'`` divides each loss by its target length (at least 1), then
        averages over the batch (default); ``'sum'`` adds them.
    zero_infinity : bool, optional
        Replace the infinite losses of impossible alignments (too few
        frames for the target) and their gradients by 0 (default False:
        an infinite loss, NaN gradients).

    Returns
    -------
    Tensor
        A scalar, or the losses of shape ``(N,)`` (``()`` unbatched) with ``'none'``.

    Raises
    ------
    RuntimeError
        For shapes or lengths that do not fit, a blank outside ``[0, C)``, or
        lengths that are not integers.
    TypeError
        For lengths that are neither both tensors nor both tuples of ints.
    IndexError
        For a target class outside ``[0, C)`` (torch reads out of bounds).
    NotImplementedError
        For log-probabilities of a dtype other than float32 and float64.
    ValueError
        For an unknown reduction.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> logp = rg.tensor([[0.5, 0.5], [0.5, 0.5]]).log().reshape(2, 1, 2)   # T=2, N=1, C=2
    >>> F.ctc_loss(logp, rg.tensor([[1]]), (2,), (1,), reduction="sum")    # 3 alignments of 4
    tensor(0.2876821)
    """
    reduction = _reduction(None, None, reduction)
    il, tl = _ctc_lengths(input_lengths, target_lengths)
    x = _t(log_probs, "log_probs")
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for {x.dtype} log_probs; convert them with '
                                  ".float() or .double()")
    batched = x.ndim == 3
    x3 = x if batched else _c.unsqueeze(x, 1)
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    tg = _arr(targets, "targets")
    tg = np.asarray(tg.get() if hasattr(tg, "get") else tg)
    if x3.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {x3.ndim}-dimensional tensor for argument #1 "
                           f"'log_probs'" + where)
    if not 1 <= tg.ndim <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {tg.ndim}-dimensional tensor for argument #2 "
                           f"'targets'" + where)
    T, N, C = x3.shape
    if x3.numel() == 0:
        raise RuntimeError(f"log_probs tensor must not be empty (got shape {list(x.shape)})")
    labels = _ctc_labels(tg.astype(np.int64), il, tl, T, N, C, blank)
    lab = _on_device(labels, _arr(x3))
    ila, tla = _on_device(il, _arr(x3)), _on_device(tl, _arr(x3))
    nll = CtcLoss.apply(x3, (lab, ila, tla, bool(zero_infinity)))
    if zero_infinity:
        nll = _c.where(_c.isinf(nll), 0.0, nll)
    if reduction == "mean":
        lengths = _c.as_tensor(np.maximum(tl, 1).astype(x.dtype)).to(x.device)
        return _c.mean(_c.div(nll, lengths))
    if reduction == "sum":
        return _c.sum(nll)
    return nll if batched else _c.reshape(nll, ())


for _f in (smooth_l1_loss, kl_div, margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss,
           triplet_margin_loss, triplet_margin_with_distance_loss, multilabel_soft_margin_loss, multilabel_margin_loss,
           multi_margin_loss, soft_margin_loss, poisson_nll_loss):
    # (str.replace: the docstrings hold literal braces)
    _f.__doc__ = (_f.__doc__ or "").replace("{legacy}", _DOCS["legacy"]).replace("{reduction}", _DOCS["reduction"])
del _f
