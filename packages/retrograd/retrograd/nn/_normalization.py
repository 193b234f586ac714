"""Normalisation, distances and EmbeddingBag as functions (re-exported by
``retrograd.nn.functional``): group_norm, instance_norm, rms_norm,
local_response_norm, normalize, cosine_similarity, pairwise_distance, pdist
and embedding_bag.

Each is a composite of core's differentiable ops, so gradients of any order
come from the table; arguments are checked as torch checks them, with
torch's exception classes.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import composite_op
from retrograd.nn.functional import (_arr, _compiling, _embedding_renorm_, _floating, _inexact, _int_tuple, _no_bfloat16,
                                     _opmath, _rounded, _t, _update_running_stats, _update_running_stats_ops)

__all__ = ["group_norm", "instance_norm", "rms_norm", "local_response_norm", "normalize", "cosine_similarity",
           "pairwise_distance", "pdist", "embedding_bag"]

_EPS_DOC = """eps : float, optional
        Added to the variance for stability (default 1e-5)."""


def _channel_shape(x):
    # (C,) broadcast against (N, C, *)
    return (x.shape[1],) + (1,) * (x.ndim - 2)


def _affine(y, x, weight, bias):
    shape = _channel_shape(x)
    if weight is not None:
        y = _c.mul(y, _c.reshape(_t(weight, "weight"), shape))
    if bias is not None:
        y = _c.add(y, _c.reshape(_t(bias, "bias"), shape))
    return y


@composite_op("group_norm")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Group normalisation (Wu and He, 2018): the channels split into
    ``num_groups`` groups, each sample's group normalised by its own mean and
    biased variance, then a per-channel affine map.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(N, C, *)``.
    num_groups : int
        The number of groups; it must divide ``C``.
    weight, bias : Tensor, optional
        Per-channel scale and shift, of shape ``(C,)``.
    {eps}

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    RuntimeError
        For an input of fewer than 2 dims, ``C`` not divisible by
        ``num_groups``, or a weight or bias without ``C`` elements.
    ValueError
        If each group holds a single value.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([[[1.0, 3.0], [5.0, 7.0]]])
    >>> F.group_norm(x, 1, eps=0.0)
    tensor([[[-1.3416407, -0.4472136],
             [ 0.4472136,  1.3416407]]])
    """
    x = _t(input)
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {x.ndim}")
    N, C = x.shape[0], x.shape[1]
    G = _int_tuple(num_groups, "num_groups", "group_norm")[0]
    spatial = math.prod(x.shape[2:])
    if G <= 0 or C % G:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(x.shape)} and num_groups={G}")
    if (N * C // G) * spatial == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{[N * C // G, G] + list(x.shape[2:])}")
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and _t(t, name).numel() != C:
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(x.shape)}")
    _floating(x, "GroupNormKernelImpl")
    x, rounded = _opmath(x)
    g = _c.reshape(x, (N, G, -1))
    gc = _c.sub(g, _c.mean(g, (2,), True))
    var = _c.mean(_c.mul(gc, gc), (2,), True)
    y = _c.reshape(_c.mul(gc, _c.pow(_c.add(var, eps), -0.5)), tuple(x.shape))
    return _rounded(_affine(y, x, weight, bias), rounded)


@composite_op("instance_norm")
def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Instance normalisation (Ulyanov et al., 2016): each sample's channel
    normalised over its own spatial dims, then a per-channel affine map.

    With ``use_input_stats`` the statistics are each instance's mean and
    biased variance, and ``running_mean`` / ``running_var`` (when given)
    move IN PLACE, without grad, towards their average over the batch:
    ``stat = (1 - momentum) * stat + momentum * batch_stat``, the variance
    unbiased. Without it the running statistics normalise.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(N, C, *)`` with at least one
        spatial dim.
    running_mean, running_var : Tensor, optional
        Of shape ``(C,)``; state, not differentiated.
    weight, bias : Tensor, optional
        Per-channel scale and shift, of shape ``(C,)``.
    use_input_stats : bool, optional
        Normalise with each instance's statistics (default True).
    momentum : float, optional
        The running statistics' update factor (default 0.1).
    {eps}

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    ValueError
        With ``use_input_stats`` and a single spatial element.
    RuntimeError
        Without ``use_input_stats`` and without running statistics, or for a
        statistic, weight or bias without ``C`` elements.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> mean, var = rg.zeros(1), rg.ones(1)
    >>> F.instance_norm(rg.tensor([[[1.0, 3.0]]]), mean, var, eps=0.0)
    tensor([[[-1.,  1.]]])
    >>> mean, var
    (tensor([0.2]), tensor([1.1]))
    """
    x = _t(input)
    if use_input_stats and math.prod(x.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(x.shape)}")
    if x.ndim < 2:
        raise RuntimeError(f"instance_norm: expected an input of shape (N, C, *), got input of size "
                           f"{list(x.shape)}")
    N, C = x.shape[0], x.shape[1]
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    for t, name in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"),
                    (bias, "bias")):
        # torch folds the batch into the channels, so it counts N * C
        if t is not None and _arr(t, name).size != C:
            raise RuntimeError(f"{name} should contain {N * C} elements not {N * _arr(t).size}")
    _floating(x, "instance_norm")
    x, rounded = _opmath(x)
    shape = _channel_shape(x)
    if use_input_stats:
        dims = tuple(range(2, x.ndim))
        mean = _c.mean(x, dims, True)
        xc = _c.sub(x, mean)
        var = _c.mean(_c.mul(xc, xc), dims, True)
        y = _c.mul(xc, _c.pow(_c.add(var, eps), -0.5))
        if running_mean is not None or running_var is not None:
            count = math.prod(x.shape[2:])
            # each instance updates a copy of the statistics; the copies are averaged
            bm = _c.reshape(_c.mean(mean.detach(), (0,)), (C,))
            bv = _c.reshape(_c.mean(var.detach(), (0,)), (C,))
            if _compiling():
                _update_running_stats_ops(running_mean, running_var, bm, bv, count, momentum)
            else:
                _update_running_stats(running_mean, running_var, _arr(bm), _arr(bv), count, momentum)
    else:
        rm = _c.reshape(_t(running_mean, "running_mean"), shape)
        rv = _c.reshape(_t(running_var, "running_var"), shape)
        y = _c.mul(_c.sub(x, rm), _c.pow(_c.add(rv, eps), -0.5))
    return _rounded(_affine(y, x, weight, bias), rounded)


def _normalized_dims(x, normalized_shape, fn):
    if not isinstance(normalized_shape, (tuple, list)):
        # torch's IntArrayRef argument here takes no bare int
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    ns = _int_tuple(normalized_shape, "normalized_shape", fn)
    k = len(ns)
    if k == 0 or k > x.ndim or tuple(x.shape[x.ndim - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*{', '.join(map(str, ns))}], but got input of size{list(x.shape)}")
    return ns, tuple(range(x.ndim - k, x.ndim))


@composite_op("rms_norm")
def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """Root-mean-square normalisation (Zhang and Sennrich, 2019):
    ``x / sqrt(mean(x**2) + eps) * weight``, the mean over the last
    ``len(normalized_shape)`` dims.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor of shape ``(*, *normalized_shape)``.
    normalized_shape : tuple or list of int
        The trailing dims normalised (a bare int is refused, as torch's).
    weight : Tensor, optional
        A scale of shape ``normalized_shape``.
    eps : float, optional
        Added to the mean square (default: the machine epsilon of the
        input's dtype, ``rg.finfo(input.dtype).eps``).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    RuntimeError
        If the input's trailing dims or the weight's shape are not
        ``normalized_shape``.
    TypeError
        If ``normalized_shape`` is not a tuple or list of ints.
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.rms_norm(rg.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.84852815, 1.1313709 ]])
    """
    x = _t(input)
    ns, dims = _normalized_dims(x, normalized_shape, "rms_norm")
    if weight is not None and tuple(_t(weight, "weight").shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(ns)}")
    _floating(x, "rms_norm")
    if eps is None:
        eps = float(np.finfo(x.dtype).eps)
    x, rounded = _opmath(x)
    y = _c.mul(x, _c.rsqrt(_c.add(_c.mean(_c.mul(x, x), dims, True), eps)))
    if weight is not None:
        y = _c.mul(y, weight)
    return _rounded(y, rounded)


def _window_sum(sq, size, front, back):
    # sums of `size` neighbouring channels (dim 1), zero-padded: `front`
    # zeros before channel 0 and `back` after the last, as torch's pooling
    C = sq.shape[1]
    padded = _c.cat([_c.zeros((sq.shape[0], front) + tuple(sq.shape[2:]), dtype=sq.dtype, device=sq.device), sq,
                     _c.zeros((sq.shape[0], back) + tuple(sq.shape[2:]), dtype=sq.dtype, device=sq.device)], 1)
    total = _c.narrow(padded, 1, 0, C)
    for j in range(1, size):
        total = _c.add(total, _c.narrow(padded, 1, j, C))
    return total


@composite_op("local_response_norm")
def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """Local response normalisation across channels (Krizhevsky et al., 2012):
    ``x / (k + alpha * mean(x**2 over size neighbouring channels)) ** beta``.

    The window of channel ``c`` spans ``c - size // 2`` to
    ``c + (size - 1) // 2``, zero-padded at the edges (the mean always divides
    by ``size``), as torch's.

    Parameters
    ----------
    input : Tensor
        Of shape ``(N, C, *)`` with at least one spatial dim.
    size : int
        The number of neighbouring channels.
    alpha : float, optional
        The multiplicative factor (default 1e-4).
    beta : float, optional
        The exponent (default 0.75).
    k : float, optional
        The additive factor (default 1).

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    ValueError
        For an input of fewer than 3 dims.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.local_response_norm(rg.tensor([[[1.0], [2.0]]]), 2, alpha=1.0, beta=1.0)
    tensor([[[0.6666667],
             [0.5714286]]])
    """
    x = _t(input)
    if x.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {x.ndim} dimensions)")
    if x.numel() == 0:
        return x
    div = _c.div(_window_sum(_c.mul(x, x), size, size // 2, (size - 1) // 2), size)
    div = _c.pow(_c.add(_c.mul(div, alpha), k), beta)
    return _c.div(x, div)


@composite_op("normalize")
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim``: ``x / max(||x||_p, eps)``.

    Parameters
    ----------
    input : Tensor
        A floating-point tensor.
    p : float, optional
        The order of the norm (default 2).
    dim : int or tuple of int, optional
        The dimension(s) reduced (default 1).
    eps : float, optional
        A lower bound of the norm, against division by zero (default 1e-12).
    out : Tensor, optional
        Written with the result (and returned); it must not require grad
        where the result does.

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    RuntimeError
        For an integer input, or an ``out`` when the result requires grad.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.normalize(rg.tensor([[3.0, 4.0]]))
    tensor([[0.6, 0.8]])
    """
    x = _t(input)
    norm = _c.linalg.vector_norm(x, p, dim, True)
    y = _c.div(x, _c.expand(_c.clamp(norm, min=eps), tuple(x.shape)))
    if out is None:
        return y
    if y.requires_grad and _c.is_grad_enabled():
        raise RuntimeError("normalize(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad: drop out=")
    with _c.no_grad():
        out.copy_(y)
    return out


def _no_grad_floor(norm, eps):
    # torch clamps the norm to eps in place under no_grad: the value is
    # bounded, the gradient flows as if it were not
    return _c.add(norm, _c.sub(_c.clamp(norm.detach(), min=eps), norm.detach()))


@composite_op("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``:
    ``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))``.

    Parameters
    ----------
    x1, x2 : Tensor
        Broadcastable tensors (integer ones are promoted to the other's
        floating dtype).
    dim : int, optional
        The dimension of the vectors (default 1).
    eps : float, optional
        A lower bound of each norm (default 1e-8).

    Returns
    -------
    Tensor
        The broadcast shape without ``dim``.

    Raises
    ------
    RuntimeError
        If neither input is floating-point, or they do not broadcast.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.cosine_similarity(rg.tensor([[1.0, 0.0]]), rg.tensor([[1.0, 1.0]]))
    tensor([0.70710677])
    """
    a, b = _t(x1, "x1"), _t(x2, "x2")
    # torch's promotion: an integer input takes the floating one's dtype
    floats = [t.dtype for t in (a, b) if _inexact(t.dtype)]
    dtype = np.result_type(*floats) if floats else np.result_type(a.dtype, b.dtype)
    if not _c.is_floating_dtype(dtype):
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {dtype}")
    if a.dtype.kind in "biu":
        a = a.to(dtype)
    if b.dtype.kind in "biu":
        b = b.to(dtype)
    try:
        shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError as exc:
        raise RuntimeError(f"cosine_similarity(): x1 of shape {list(a.shape)} and x2 of shape {list(b.shape)} "
                           "do not broadcast") from exc
    a, b = _c.expand(a, shape), _c.expand(b, shape)
    na = _no_grad_floor(_c.linalg.vector_norm(a, 2, dim, True), eps)
    nb = _no_grad_floor(_c.linalg.vector_norm(b, 2, dim, True), eps)
    return _c.sum(_c.mul(_c.div(a, na), _c.div(b, nb)), dim)


@composite_op("pairwise_distance")
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dimension (row by row
    for matrices).

    Parameters
    ----------
    x1, x2 : Tensor
        Broadcastable floating-point tensors.
    p : float, optional
        The order of the norm (default 2).
    eps : float, optional
        Added to the difference, against a zero norm (default 1e-6).
    keepdim : bool, optional
        Keep the reduced dimension with size 1 (default False).

    Returns
    -------
    Tensor
        The broadcast shape without its last dimension.

    Raises
    ------
    RuntimeError
        If the inputs do not broadcast or are integers.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.pairwise_distance(rg.tensor([[0.0, 0.0]]), rg.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    diff = _c.add(_c.sub(_t(x1, "x1"), _t(x2, "x2")), eps)
    if diff.ndim == 0:
        d = _c.linalg.vector_norm(_c.reshape(diff, (1,)), p, 0, keepdim)
        return _c.reshape(d, ()) if not keepdim else d
    return _c.linalg.vector_norm(diff, p, diff.ndim - 1, keepdim)


@composite_op("pdist")
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distance between every pair of rows of ``input``: the
    upper triangle of the distance matrix, row by row.

    Parameters
    ----------
    input : Tensor
        A floating-point matrix of shape ``(N, M)``.
    p : float, optional
        The order of the norm, at least 0 (default 2).

    Returns
    -------
    Tensor
        Of shape ``(N * (N - 1) / 2,)``: the distances ``d(i, j)`` for
        ``i < j`` in order.

    Raises
    ------
    RuntimeError
        For an input that is not 2-D or not floating-point, or a negative p.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> F.pdist(rg.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))
    tensor([ 5., 10.,  5.])
    """
    x = _t(input)
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    _no_bfloat16(x, "pdist")
    if x.dtype.kind != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    if x.shape[1] == 0:
        return _c.zeros((len(i),), dtype=x.dtype, device=x.device)
    diff = _c.sub(_c.getitem(x, i), _c.getitem(x, j))
    return _c.linalg.vector_norm(diff, p, 1)


_MODES = {"sum": 0, "mean": 1, "max": 2}


def _bag_args(input, weight, offsets, per_sample_weights, include_last_offset):
    """(flat indices, offsets array, include_last_offset, flat weights)
    after torch's checks of the input's rank and the offsets."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({tuple(input.shape)})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    idx = _arr(input, "input")
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        if idx.shape[1] == 0:
            raise RuntimeError("embedding_bag: a 2-D input with rows of length 0 has no bags (torch: step must "
                               "be nonzero); pass a 1-D input with offsets for empty bags")
        off = np.arange(0, idx.size, idx.shape[1])
        if per_sample_weights is not None:
            per_sample_weights = _c.reshape(per_sample_weights, (-1,))
        return idx.reshape(-1), off, False, per_sample_weights
    if idx.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        off = _arr(offsets, "offsets")
        if off.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return idx, off, include_last_offset, per_sample_weights
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")


def _bag_of_each(n, off, include_last_offset):
    """The bag of each index (-1: in no bag), and the number of bags."""
    bags = len(off) - 1 if include_last_offset else len(off)
    if include_last_offset and len(off) < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if len(off) and off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(off[0])}")
    if len(off) and off[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{int(off[-1])}")
    ends = np.append(off[1:], n) if not include_last_offset else off[1:]
    bag = np.full(n, -1, dtype=np.int64)
    for b in range(bags):
        bag[max(int(off[b]), 0):max(int(ends[b]), 0)] = b
    return bag, bags


@composite_op("embedding_bag")
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of rows of ``weight``, without building
    the rows of each bag one by one.

    A 1-D ``input`` is cut into bags at ``offsets`` (bag ``b`` holds
    ``input[offsets[b]:offsets[b + 1]]``, the last one running to the end,
    or to ``offsets[-1]`` with ``include_last_offset``); each row of a 2-D
    ``input`` is one bag. Empty bags give zeros; indices equal to
    ``padding_idx`` are left out of their bag (and of the mean's count).

    Parameters
    ----------
    input : Tensor
        Integer indices into ``weight``: 1-D with ``offsets``, or 2-D
        ``(B, L)`` without.
    weight : Tensor
        The table, of shape ``(num_embeddings, embedding_dim)``.
    offsets : Tensor, optional
        1-D integer starts of the bags, starting with 0 (1-D input only).
    max_norm : float, optional
        Renormalise the rows looked up, in place, to at most this norm.
    norm_type : float, optional
        The p of the p-norm for ``max_norm`` (default 2).
    scale_grad_by_freq : bool, optional
        Divide each row's gradient by how often ``input`` holds it (default
        False; not with ``mode="max"``).
    mode : {{"mean", "sum", "max"}}, optional
        The reduction over each bag (default ``"mean"``).
    sparse : bool, optional
        Must be False: retrograd's gradients are dense.
    per_sample_weights : Tensor, optional
        A weight per index, of the input's shape and the table's dtype,
        multiplying each row before the sum (``mode="sum"`` only).
    include_last_offset : bool, optional
        ``offsets`` holds one more entry, the end of the last bag (default
        False).
    padding_idx : int, optional
        An index left out of every bag (negative counts from the end).

    Returns
    -------
    Tensor
        Of shape ``(B, embedding_dim)``, one row per bag.

    Raises
    ------
    ValueError
        For inputs, offsets or weights of the wrong rank, an unknown mode,
        ``scale_grad_by_freq`` or ``sparse`` with ``mode="max"``,
        ``sparse=True``, or ``per_sample_weights`` of the wrong shape.
    NotImplementedError
        For ``per_sample_weights`` with a mode other than ``"sum"``, or
        inside a function traced by ``rg.compile``.
    RuntimeError
        For non-integer indices, indices outside the table, offsets that do
        not start at 0 or run past the input, a ``padding_idx`` outside the
        table, or ``per_sample_weights`` of another dtype than ``weight``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> table = rg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> F.embedding_bag(rg.tensor([0, 1, 2, 2]), table, rg.tensor([0, 2]), mode="sum")
    tensor([[ 4.,  6.],
            [10., 12.]])
    >>> F.embedding_bag(rg.tensor([[0, 2]]), table)
    tensor([[3., 4.]])
    """
    if (isinstance(weight, Tensor) and isinstance(input, Tensor) and weight.dtype == np.int64
            and _c.is_floating_dtype(input.dtype)):
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=3)
        weight, input = input, weight
    if _compiling():
        # the bags are built from the indices' values: a trace would bake them in
        raise NotImplementedError("embedding_bag cannot be traced by rg.compile (its bags are read from the "
                                  "indices' values); call it outside the compiled function")
    w = _t(weight, "weight")
    idx, off, include_last_offset, psw = _bag_args(_t(input, "input"), w, offsets, per_sample_weights,
                                                   include_last_offset)
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise ValueError("embedding_bag: sparse=True (a sparse gradient for weight) is not supported; "
                         "retrograd's gradients are dense: pass sparse=False")
    for a, name in ((idx, "indices"), (off, "offsets")):
        if a.dtype.kind not in "iu":
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar "
                               f"types: Long, Int; but got {a.dtype} instead (cast it to an integer dtype)")
    n = w.shape[0]
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise RuntimeError(f"Index {int(bad[0])} of input takes value {int(idx[bad[0]])} which is not in the valid "
                           f"range [0, {n})")
    if max_norm is not None:
        _embedding_renorm_(w, idx, float(max_norm), float(norm_type))
    if psw is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}').")
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} through {n - 1}, "
                               f"but got {padding_idx}")
        padding_idx = padding_idx + n if padding_idx < 0 else padding_idx
    if psw is not None and _t(psw, "per_sample_weights").dtype != w.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                           f"#1 'per_sample_weights'; but type {w.dtype} does not equal {psw.dtype}")
    bag, bags = _bag_of_each(len(idx), off, include_last_offset)
    keep = bag >= 0
    if padding_idx is not None:
        keep &= idx != padding_idx
    pos = np.flatnonzero(keep)
    rows = _c.getitem(w, idx[pos])
    D = w.shape[1]
    if scale_grad_by_freq and rows.requires_grad:
        # torch's embedding_bag backward: each row's gradient over its index's count in the input
        _, inv, counts = np.unique(idx, return_inverse=True, return_counts=True)
        scale = (1.0 / counts[inv.reshape(-1)][pos]).astype(rows.dtype)[:, None]
        rows.register_hook(lambda g: g * scale)
    if psw is not None:
        rows = _c.mul(rows, _c.reshape(_c.getitem(psw, pos), (-1, 1)))
    counts = np.bincount(bag[pos], minlength=bags)
    if mode == "max":
        return _bag_max(rows, bag[pos], counts, bags, D)
    slots = _c.as_tensor(np.repeat(bag[pos][:, None], D, axis=1)).to(device=w.device)
    out = _c.scatter_add(_c.zeros((bags, D), dtype=rows.dtype, device=w.device), 0, slots, rows)
    if mode == "mean":
        out = _c.div(out, _c.as_tensor(np.maximum(counts, 1)[:, None].astype(out.dtype)).to(device=w.device))
    return out


def _bag_max(rows, bag, counts, bags, D):
    # each bag's rows in one padded block, the padding a row of -inf; the
    # first maximum takes the gradient, as torch's
    width = int(counts.max()) if bags and counts.size else 0
    if width == 0:
        return _c.zeros((bags, D), dtype=rows.dtype, device=rows.device)
    order = np.argsort(bag, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.full((bags, width), len(bag), dtype=np.int64)
    for b in range(bags):
        slot[b, :counts[b]] = order[starts[b]:starts[b] + counts[b]]
    padded = _c.cat([rows, _c.full((1, D), -math.inf, dtype=rows.dtype, device=rows.device)], 0)
    best = _c.max(_c.getitem(padded, slot), 1)[0]
    empty = _c.as_tensor((counts == 0)[:, None]).to(device=rows.device)
    return _c.where(empty, _c.zeros((), dtype=rows.dtype, device=rows.device), best)


for _f in (group_norm, instance_norm):
    _f.__doc__ = _f.__doc__.format(eps=_EPS_DOC) if _f.__doc__ else None
embedding_bag.__doc__ = embedding_bag.__doc__.replace("{{", "{").replace("}}", "}") if embedding_bag.__doc__ else None
del _f
