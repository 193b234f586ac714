"""The ``torch.*`` twins of ``torch.nn.functional`` and a few other top-level
names (``torch.conv2d``, ``torch.dropout``, ``torch.kl_div``, ``torch.Size``,
...), as ``rg.conv2d`` and so on.

torch exposes these native ops at its top level with their ATen signatures,
which sometimes differ from the functional forms: ``torch.dropout(input, p,
train)``, a reduction given as an int (0 none, 1 mean, 2 sum),
``torch.embedding(weight, indices)``, ``torch.batch_norm(...,
cudnn_enabled)``. Each function here takes torch's top-level signature and
calls the ``rg.nn.functional`` form, so there is one implementation of each.
The umbrella's ``__getattr__`` loads this module on first use
(``import retrograd`` stays light).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F

# the names rg's __getattr__ resolves here: listed literally (it must know them without importing this module)
NAMES = (
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "alpha_dropout_", "avg_pool1d", "batch_norm",
    "bilinear", "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution", "cosine_embedding_loss",
    "cosine_similarity", "ctc_loss", "dropout", "dropout_", "embedding", "feature_alpha_dropout",
    "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "group_norm", "hardshrink",
    "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "margin_ranking_loss", "max_pool1d",
    "max_pool1d_with_indices", "max_pool3d", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle",
    "poisson_nll_loss", "prelu", "rms_norm", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
    "triplet_margin_loss", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "Size",
    "nuclear_norm", "frobenius_norm", "binomial", "histogramdd", "empty_strided",
    "affine_grid_generator", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
    "embedding_renorm_", "index_put_", "addmv_", "default_generator", "empty_permuted",
    "lstm", "gru", "rnn_tanh", "rnn_relu", "embedding_bag", "thread_safe_generator",
)

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: int | str) -> str:
    # ATen's enum (torch.nn._reduction): 0 none, 1 mean, 2 sum; a string passes through
    if isinstance(reduction, str):
        return reduction
    try:
        return _REDUCTIONS[int(reduction)]
    except (KeyError, ValueError, TypeError):
        raise ValueError(f"{reduction!r} is not a valid value for reduction: give 0 (none), 1 (mean) or 2 (sum)") \
            from None


def _twin(name: str, fn: Any) -> Any:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"torch.{name}: :func:`retrograd.nn.functional.{name.rstrip('_')}` with torch's top-level "
                  "(ATen) signature; see that function for the parameters and what it returns.")
    return fn


# --- the same signature as nn.functional -------------------------------------------------------------
for _name in ("adaptive_avg_pool1d", "avg_pool1d", "bilinear", "channel_shuffle", "conv1d", "conv2d", "conv3d",
              "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "max_pool1d",
              "max_pool3d", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "celu",
              "selu", "hardshrink", "threshold", "celu_", "selu_", "threshold_", "rrelu_"):
    globals()[_name] = getattr(F, _name)
del _name


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator: Any = None) -> Tensor:
    if generator is not None:
        raise NotImplementedError("rg.rrelu: the generator argument is not supported; seed rg.manual_seed instead")
    return F.rrelu(input, lower, upper, training)


# --- dropouts: (input, p, train) ----------------------------------------------------------------------
def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def _feature_dropout(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
    # whole channels (dim 1) dropped: dropout1d/2d/3d by the input's rank
    fn = {3: F.dropout1d, 4: F.dropout2d, 5: F.dropout3d}.get(input.ndim)
    if fn is None:
        raise RuntimeError(f"feature_dropout: expected a 3-D, 4-D or 5-D input (N, C, ...), got {input.ndim}-D")
    return fn(input, p, train, inplace=inplace)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _feature_dropout(input, p, train, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _feature_dropout(input, p, train, True)


# --- normalisation with ATen's arguments ------------------------------------------------------------------
def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool = True) -> Tensor:
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    return F.rms_norm(input, normalized_shape, weight, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    # ATen's padding_idx -1 means none (F.embedding's None)
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


_BAG_MODES = ("sum", "mean", "max")
# the dtypes ATen's CPU kernel sums with its fast path, which skips offset2bag (torch returns it empty)
_FAST_SUM_DTYPES = ("float32", "float16", "bfloat16")


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False, mode: int = 0,
                  sparse: bool = False, per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """torch.embedding_bag: :func:`retrograd.nn.functional.embedding_bag` with
    ATen's signature and its four results.

    Parameters
    ----------
    weight : Tensor
        The table, ``(num_embeddings, embedding_dim)``.
    indices : Tensor
        1-D integer indices into ``weight``.
    offsets : Tensor
        1-D integer starts of the bags (the first 0).
    scale_grad_by_freq : bool, optional
        Divide each row's gradient by its count in ``indices`` (sum and mean).
    mode : int, optional
        0 sum, 1 mean, 2 max (default 0).
    sparse : bool, optional
        Must be False (retrograd's gradients are dense).
    per_sample_weights : Tensor, optional
        A weight per index (``mode=0`` only).
    include_last_offset : bool, optional
        ``offsets`` ends with the end of the last bag.
    padding_idx : int, optional
        An index left out of every bag.

    Returns
    -------
    tuple of Tensor
        ``(output, offset2bag, bag_size, max_indices)`` as torch's CPU kernel
        gives them: the bags' reductions ``(num_bags, embedding_dim)``; each
        index's bag (empty where torch's fast float sum skips it); the bags'
        sizes without padding (zeros for ``mode=0``); for ``mode=2`` the
        row of each maximum, else a copy of ``bag_size``.

    Examples
    --------
    >>> import retrograd as rg
    >>> table = rg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> out, offset2bag, bag_size, max_indices = rg.embedding_bag(table, rg.tensor([0, 1, 2]), rg.tensor([0, 2]),
    ...                                                           mode=2)
    >>> out
    tensor([[3., 4.],
            [5., 6.]])
    >>> offset2bag.tolist(), bag_size.tolist(), max_indices.tolist()
    ([0, 0, 1], [2, 1], [[1, 1], [2, 2]])
    """
    if isinstance(mode, bool) or mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if indices.dim() != 1:
        raise RuntimeError(f"embedding_bag: torch.embedding_bag takes 1-D indices with offsets, got {indices.dim()}-D; "
                           "F.embedding_bag takes a 2-D batch of equal bags")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    # (ATen's max mode ignores scale_grad_by_freq, which F.embedding_bag refuses there)
    out = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=bool(scale_grad_by_freq) and mode != 2,
                          mode=_BAG_MODES[mode], sparse=sparse, per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=padding_idx)
    idx = np.asarray(indices.numpy(force=True)).reshape(-1)
    off = np.asarray(offsets.numpy(force=True)).reshape(-1)
    aux = np.promote_types(idx.dtype, off.dtype)
    n, starts = idx.size, (off[:-1] if include_last_offset else off)
    bags = starts.size
    pad = -1 if padding_idx is None else int(padding_idx) % weight.shape[0]
    bag_of = np.searchsorted(np.sort(starts), np.arange(n), side="right") - 1
    fast_sum = (mode == 0 and pad < 0 and weight.dtype.name in _FAST_SUM_DTYPES and weight.stride()[1] == 1
                and (per_sample_weights is None or per_sample_weights.stride()[0] == 1))
    offset2bag = np.zeros(0, dtype=aux) if fast_sum else bag_of
    if weight.requires_grad or mode != 0:
        bag_size = np.zeros(bags, dtype=aux)
        if bags:
            bag_size[:-1] = off[1:bags] - off[:bags - 1]
            bag_size[-1] = n - off[bags - 1]
        if pad >= 0:
            bag_size -= np.bincount(bag_of[(idx == pad) & (bag_of >= 0)], minlength=bags)[:bags].astype(aux)
        if mode == 0:
            bag_size[:] = 0
    else:
        bag_size = np.zeros(off.size, dtype=aux)
    max_indices = bag_size.copy() if mode != 2 else _bag_argmax(weight, idx, bag_of, pad, bags)
    dev = weight.device
    return (out, _c.tensor(offset2bag.astype(aux), device=dev), _c.tensor(bag_size, device=dev),
            _c.tensor(max_indices.astype(aux), device=dev))


def _bag_argmax(weight: Tensor, idx: np.ndarray, bag_of: np.ndarray, pad: int, bags: int) -> np.ndarray:
    # per bag and column, the row of the first maximum among the bag's indices (0 for an empty bag), as ATen's
    out = np.zeros((bags, weight.shape[1]), dtype=np.int64)
    pos = np.flatnonzero((bag_of >= 0) & (bag_of < bags) & (idx != pad))
    if not pos.size:
        return out
    order = pos[np.argsort(bag_of[pos], kind="stable")]
    bag, words = bag_of[order], idx[order]
    vals = np.asarray(weight.detach().numpy(force=True))[words]
    firsts = np.flatnonzero(np.r_[True, bag[1:] != bag[:-1]])
    group = np.repeat(np.arange(firsts.size), np.diff(np.r_[firsts, bag.size]))
    best = np.maximum.reduceat(vals, firsts, axis=0)
    rows = np.where(vals == best[group], np.arange(bag.size)[:, None], bag.size)
    out[bag[firsts]] = words[np.minimum.reduceat(rows, firsts, axis=0)]
    return out


# --- losses with an int reduction ----------------------------------------------------------------------
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: int = 1) -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 1) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 1) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input: Tensor, target: Tensor, reduction: int = 1, *, log_target: bool = False) -> Tensor:
    import warnings
    with warnings.catch_warnings():
        # (F.kl_div's advice about 'mean' vs 'batchmean' is nn.functional's; the ATen op says nothing)
        warnings.simplefilter("ignore", UserWarning)
        return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 1) -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 1) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


# --- convolution, RNN cells ------------------------------------------------------------------------------
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int) -> Tensor:
    n = weight.ndim - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, got {weight.ndim}-D")
    # (the weight's rank picks the function, and the tuples' lengths match it: mypy cannot see that)
    if transposed:
        transposed_fns: tuple[Callable[..., Tensor], ...] = (F.conv_transpose1d, F.conv_transpose2d,
                                                             F.conv_transpose3d)
        return transposed_fns[n - 1](input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding),
                                     groups, tuple(dilation))
    if any(output_padding):
        raise RuntimeError("convolution: output_padding is only for transposed convolutions")
    fns: tuple[Callable[..., Tensor], ...] = (F.conv1d, F.conv2d, F.conv3d)
    return fns[n - 1](input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    from retrograd.nn.modules.rnn import _lstm_cell
    h, c = hx
    return _lstm_cell(input, h, c, w_ih, w_hh, b_ih, b_hh)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    from retrograd.nn.modules.rnn import _gru_cell
    return _gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    from retrograd.nn.modules.rnn import _rnn_tanh_cell
    return _rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    from retrograd.nn.modules.rnn import _rnn_relu_cell
    return _rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


# --- linear algebra and the rest ---------------------------------------------------------------------
def nuclear_norm(input: Tensor, dim: Sequence[int] | bool | None = None, keepdim: bool = False) -> Tensor:
    from retrograd import linalg
    if isinstance(dim, bool):           # torch.nuclear_norm(input, keepdim)
        return linalg.matrix_norm(input, "nuc", dim=(-2, -1), keepdim=dim)
    return linalg.matrix_norm(input, "nuc", dim=(-2, -1) if dim is None else tuple(dim), keepdim=keepdim)


def frobenius_norm(input: Tensor, dim: Sequence[int], keepdim: bool = False) -> Tensor:
    from retrograd import linalg
    return linalg.vector_norm(input, 2, dim=tuple(dim), keepdim=keepdim)


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    from retrograd.core import get_rng
    rng = get_rng() if generator is None else generator
    counts, probs = np.asarray(count.detach().numpy(force=True)), np.asarray(prob.detach().numpy(force=True))
    draws = rng.binomial(counts.astype(np.int64), probs).astype(probs.dtype)
    return _c.tensor(draws, device=count.device)


def histogramdd(input: Tensor, bins: int | Sequence[int] | Sequence[Tensor], range: Sequence[float] | None = None,
                weight: Tensor | None = None, density: bool = False) -> tuple[Tensor, list[Tensor]]:
    sample = np.asarray(input.detach().numpy(force=True))
    d = sample.shape[-1]
    sample = sample.reshape(-1, d)
    if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):
        np_bins: Any = [np.asarray(b.detach().numpy(force=True)) for b in bins]
    else:
        np_bins = bins
    rng = None if range is None else [(range[2 * i], range[2 * i + 1]) for i in np.arange(d)]
    w = None if weight is None else np.asarray(weight.detach().numpy(force=True)).reshape(-1)
    hist, edges = np.histogramdd(sample, bins=np_bins, range=rng, weights=w, density=density)
    return _c.tensor(hist.astype(sample.dtype)), [_c.tensor(e.astype(sample.dtype)) for e in edges]


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, layout: Any = None,
                  device: Any = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    # NumPy arrays carry their own strides: the result is a contiguous tensor of that size (its values are
    # unspecified, as torch's)
    return _c.empty(tuple(size), dtype=dtype, device=device, requires_grad=requires_grad)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    return F.affine_grid(theta, list(size), align_corners=align_corners)


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    # ATen's ints: F.GRID_SAMPLE_INTERPOLATION_MODES / GRID_SAMPLE_PADDING_MODES, inverted
    modes = {v: k for k, v in F.GRID_SAMPLE_INTERPOLATION_MODES.items()}
    pads = {v: k for k, v in F.GRID_SAMPLE_PADDING_MODES.items()}
    if interpolation_mode not in modes or padding_mode not in pads:
        raise ValueError(f"grid_sampler: interpolation_mode must be one of {sorted(modes)} and padding_mode one of "
                         f"{sorted(pads)}, got {interpolation_mode} and {padding_mode}")
    return F.grid_sample(input, grid, modes[interpolation_mode], pads[padding_mode], align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    if input.ndim != 4:
        raise RuntimeError(f"grid_sampler_2d: expected a 4-D input, got {input.ndim}-D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    if input.ndim != 5:
        raise RuntimeError(f"grid_sampler_3d: expected a 5-D input, got {input.ndim}-D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    from retrograd.nn.functional import _embedding_renorm_
    _embedding_renorm_(input, np.asarray(indices.numpy(force=True)).reshape(-1), float(max_norm), float(norm_type))
    return input


def index_put_(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    return input.index_put_(indices, values, accumulate)


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    # an array laid out in memory in physical_layout's order of dims, viewed back in size's order
    size, order = tuple(int(n) for n in size), tuple(int(d) for d in physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"empty_permuted: physical_layout {list(order)} is not a permutation of the "
                           f"{len(size)} dims")
    base = _c.empty(tuple(size[d] for d in order), dtype=dtype, device=device)
    out = _c.permute(base, tuple(int(i) for i in np.argsort(order)))
    return out.requires_grad_(True) if requires_grad else out


def thread_safe_generator() -> Any:
    """torch.thread_safe_generator: a DataLoader thread worker's own generator, else None.

    torch gives each thread worker a generator of its own, so that random
    transforms in threads do not share one; in the main process and in
    worker processes it returns None (the functions then use the global
    generator). retrograd's DataLoader runs worker processes only, each with
    its own seeded generator, so this returns None there too.

    Returns
    -------
    None
        (or, in a thread worker that has a generator of its own, that generator)

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.thread_safe_generator() is None
    True
    """
    from retrograd.utils.data import get_worker_info
    info = get_worker_info()
    if info is not None and info.worker_method == "thread" and info.rng is not None:
        return getattr(info.rng, "torch_generator", info.rng)
    return None


class Size(tuple):
    """torch.Size: a tuple of ints, the type of a shape.

    retrograd's shapes are plain tuples, which compare equal to a Size.
    """

    def __new__(cls, sizes: Sequence[int] = ()) -> Size:
        return super().__new__(cls, (int(n) for n in sizes))

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        out = 1
        for n in self:
            out *= n
        return out

    def __repr__(self) -> str:
        return f"rg.Size({list(self)})"


for _name in ("adaptive_max_pool1d", "max_pool1d_with_indices", "rrelu", "dropout", "dropout_", "alpha_dropout",
              "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout",
              "feature_dropout_", "batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "embedding",
              "binary_cross_entropy_with_logits", "cosine_embedding_loss", "ctc_loss", "hinge_embedding_loss",
              "kl_div", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss", "convolution",
              "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "nuclear_norm",
              "frobenius_norm", "binomial", "histogramdd", "empty_strided",
              "affine_grid_generator", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "embedding_renorm_",
              "index_put_", "addmv_", "empty_permuted"):
    _twin(_name, globals()[_name])
del _name


from retrograd._torch_functional_rnn import gru, lstm, rnn_relu, rnn_tanh  # noqa: E402,F401


def __getattr__(name: str) -> Any:
    # torch.default_generator: retrograd's global generator (what rg.manual_seed seeds)
    if name == "default_generator":
        from retrograd.core import get_rng
        return get_rng()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
