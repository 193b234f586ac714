"""linear_cross_entropy: a linear layer and cross-entropy in one, chunked over the batch.

Also two small leftovers of ``torch.nn.functional``: ``conv_tbc`` (a 1-d
convolution over time-major ``(T, B, C)`` sequences) and grid_sample's
mode tables.

The chunked path (``options=LinearCrossEntropyOptions(...)``) is a custom
autograd Function. Its forward computes each chunk's ``(rows, classes)``
logits, reduces them to the chunk's losses and frees them; its backward
computes them again, chunk by chunk, to form the gradients. The full
``(N, C)`` logits (and their softmax) are never held: peak memory is one
chunk's logits plus the gradients themselves, at the cost of a second logits
matmul in backward. (torch's op computes the gradients during forward and
keeps them until backward instead; the results agree.)
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import retrograd.core as _c
from retrograd.autograd.function import Function, once_differentiable
from retrograd.core import Tensor
from retrograd.core.extending import check_tensor_arg, composite_op
from retrograd.nn.functional import _t, conv1d, cross_entropy, linear

__all__ = ["linear_cross_entropy", "conv_tbc", "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES"]

#: grid_sample's ``mode`` names and the codes torch's kernel takes for them.
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
#: grid_sample's ``padding_mode`` names and the codes torch's kernel takes for them.
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


# --- the chunked path ------------------------------------------------------------------

def _row_weights(target: Tensor, weight: Tensor | None, ignore_index: int, num_classes: int,
                 dtype: Any) -> tuple[Tensor, Tensor]:
    """(target with ignored rows pointing at class 0, each row's class weight with 0 on ignored rows)."""
    mask = _c.eq(target, ignore_index)
    safe = _c.where(mask, 0, target)
    if weight is None:
        w_row = _c.logical_not(mask).to(dtype)
    else:
        w_row = _c.where(mask, 0.0, _c.index_select(weight.to(dtype), 0, safe))
    return safe, w_row


def _chunk_logits(x_c: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    logits = _c.matmul(x_c, _c.transpose(w, 0, 1))
    return logits if b is None else _c.add(logits, b)


class _ChunkedLinearCrossEntropy(Function):
    """Loss of ``cross_entropy(linear(input, W, b), target)`` chunk by chunk, logits recomputed in backward."""

    @staticmethod
    def forward(ctx, input, linear_weight, target, linear_bias, weight, reduction, ignore_index, chunk, acc_dtype):
        n, num_classes = input.shape[0], linear_weight.shape[0]
        x, w = input.to(acc_dtype), linear_weight.to(acc_dtype)
        b = None if linear_bias is None else linear_bias.to(acc_dtype)
        safe, w_row = _row_weights(target, weight, ignore_index, num_classes, acc_dtype)
        losses = []
        for s in range(0, n, chunk):
            e = min(s + chunk, n)
            shifted = _chunk_logits(x[s:e], w, b)
            shifted = _c.sub(shifted, _c.amax(shifted, 1, True))
            lse = _c.log(_c.sum(_c.exp(shifted), 1))
            picked = _c.squeeze(_c.gather(shifted, 1, _c.unsqueeze(safe[s:e], 1)), 1)
            losses.append(_c.mul(_c.sub(lse, picked), w_row[s:e]))
        per_row = _c.cat(losses) if losses else _c.zeros((0,), dtype=acc_dtype, device=input.device)
        if reduction == "none":
            out = per_row
        else:
            out = _c.sum(per_row)
            if reduction == "mean":
                # every row ignored (or N = 0): 0 / 0, NaN as torch
                total = float(_c.sum(w_row))
                out = _c.mul(out, 1.0 / total if total != 0 else math.nan)
        ctx.save_for_backward(input, linear_weight, linear_bias, weight, target)
        ctx.options = (reduction, ignore_index, chunk, acc_dtype)
        return out.to(input.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        input, linear_weight, linear_bias, weight, target = ctx.saved_tensors
        reduction, ignore_index, chunk, acc_dtype = ctx.options
        need_x, need_w, _, need_b = ctx.needs_input_grad[:4]
        n, num_classes = input.shape[0], linear_weight.shape[0]
        x, w = input.to(acc_dtype), linear_weight.to(acc_dtype)
        b = None if linear_bias is None else linear_bias.to(acc_dtype)
        safe, coef = _row_weights(target, weight, ignore_index, num_classes, acc_dtype)
        if reduction == "mean":
            total = float(_c.sum(coef))
            coef = _c.mul(coef, 1.0 / total if total != 0 else math.nan)
        # d loss / d logits[i] = coef[i] * (softmax(logits[i]) - onehot(target[i])), coef carrying the
        # upstream gradient (one per row for 'none')
        coef = _c.mul(coef, grad.to(acc_dtype))
        gx = _c.zeros(tuple(x.shape), dtype=acc_dtype, device=x.device) if need_x else None
        gw = _c.zeros(tuple(w.shape), dtype=acc_dtype, device=w.device) if need_w else None
        gb = _c.zeros((num_classes,), dtype=acc_dtype, device=w.device) if need_b else None
        for s in range(0, n, chunk):
            e = min(s + chunk, n)
            x_c, t_c, k_c = x[s:e], safe[s:e], _c.unsqueeze(coef[s:e], 1)
            d_logits = _c.mul(_c.softmax(_chunk_logits(x_c, w, b), 1), k_c)
            # the one-hot part, added by row index rather than built as a (rows, C) matrix
            if gx is not None:
                gx[s:e] = _c.sub(_c.matmul(d_logits, w), _c.mul(_c.index_select(w, 0, t_c), k_c))
            if gw is not None:
                gw.add_(_c.matmul(_c.transpose(d_logits, 0, 1), x_c))
                gw.index_add_(0, t_c, _c.mul(x_c, k_c), alpha=-1)
            if gb is not None:
                gb.add_(_c.sum(d_logits, 0))
                gb.index_add_(0, t_c, coef[s:e], alpha=-1)
        return (None if gx is None else gx.to(input.dtype), None if gw is None else gw.to(linear_weight.dtype),
                None, None if gb is None else gb.to(linear_bias.dtype), None, None, None, None, None)


def _chunked(x, lw, target, lb, weight, reduction, ignore_index, options, num_classes):
    from retrograd.nn.modules.loss_more import LinearCrossEntropyOptions
    if not isinstance(options, LinearCrossEntropyOptions):
        raise TypeError(f"linear_cross_entropy(): options must be a LinearCrossEntropyOptions or None, "
                        f"got {type(options).__name__}")
    unbatched = x.ndim == 1
    if unbatched:
        x, target = _c.unsqueeze(x, 0), _c.unsqueeze(target, 0)
    n, in_features = x.shape
    if tuple(target.shape) != (n,):
        raise RuntimeError(f"linear_cross_entropy: expected a target of shape {(n,)} (class indices), got "
                           f"{tuple(target.shape)}")
    if weight is not None and tuple(weight.shape) != (num_classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {num_classes} classes or no classes "
                           f"but got weight tensor of shape: {list(weight.shape)}")
    t = target.cpu().numpy()
    bad = (t != ignore_index) & ((t < 0) | (t >= num_classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    dtype = np.result_type(x.dtype, lw.dtype)
    resolved = options._adjust(n, in_features, num_classes, dtype, x.device)
    acc = resolved.acc_dtype
    if acc != dtype and not (dtype in _half_dtypes() and acc == np.float32):
        raise RuntimeError(f"linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, but got "
                           f"{acc} acc_dtype and {dtype} inputs.")
    if x.dtype != dtype:
        x = x.to(dtype)
    out = _ChunkedLinearCrossEntropy.apply(x, lw, target, lb, weight, reduction, int(ignore_index),
                                           int(resolved.batch_chunk_size), acc)
    return _c.squeeze(out, 0) if unbatched and reduction == "none" else out


def _half_dtypes() -> set:
    halves = {np.dtype(np.float16)}
    bf16 = getattr(_c, "bfloat16", None)
    if bf16 is not None:
        halves.add(np.dtype(bf16))
    return halves


@composite_op('linear_cross_entropy')
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """Cross-entropy of the logits ``linear(input, linear_weight, linear_bias)`` against ``target``.

    With ``options=None`` it is exactly
    ``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``
    (an ``ignore_index`` of None means -100 for class-index targets). With a
    :class:`~retrograd.nn.LinearCrossEntropyOptions` the batch is processed
    in chunks, so the ``(N, C)`` logits are never held at once: useful when
    the number of classes is large (a language model's vocabulary). The
    chunked path supports class-index targets (int64), ``label_smoothing=0``,
    a 2-d ``linear_weight`` and reductions 'mean', 'sum' and 'none'; other
    calls warn and take the reference path, as torch's.

    Parameters
    ----------
    input : Tensor
        Of shape ``(in_features,)`` or ``(N, in_features)``.
    linear_weight : Tensor
        Of shape ``(C, in_features)``, or ``(C, d_1, ..., d_K, in_features)``
        for a K-dimensional loss (batched input only).
    target : Tensor
        Class indices of shape ``()``, ``(N,)`` or ``(N, d_1, ..., d_K)``, or
        class probabilities of the logits' shape ``(N, C, d_1, ..., d_K)``.
    linear_bias : Tensor, optional
        Of shape ``(C, d_1, ..., d_K)``.
    weight : Tensor, optional
        A rescaling weight per class, of shape ``(C,)``.
    reduction : {'mean', 'sum', 'none'}, optional
        How the per-sample losses combine (default 'mean': weighted by the
        targets' class weights).
    ignore_index : int, optional
        A class-index target value that adds nothing (default None: -100).
        Must stay None for probability targets.
    label_smoothing : float, optional
        In [0, 1]: mixes the target with the uniform distribution (default 0).
    options : LinearCrossEntropyOptions, optional
        Chunking options; None (default) for the reference path. The chunked
        path's backward recomputes each chunk's logits from the saved inputs,
        so ``retain_graph=True`` always works there (torch needs
        ``allow_retain_graph=True``); double backward raises.

    Returns
    -------
    Tensor
        A scalar, or the per-sample losses for ``reduction='none'``.

    Raises
    ------
    RuntimeError
        Inputs of the wrong rank, mismatched ``in_features`` or bias shape, a
        K-dimensional loss with unbatched input, or ``ignore_index`` with
        probability targets.
    IndexError
        A class index out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], requires_grad=True)
    >>> w = rg.tensor([[1.0, -1.0], [0.5, 0.5], [0.0, 1.0]])
    >>> target = rg.tensor([0, 2, 1])
    >>> F.linear_cross_entropy(x, w, target)
    tensor(0.6229424, grad_fn=<DivBackward0>)
    >>> loss = F.linear_cross_entropy(x, w, target, options=rg.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    >>> loss
    tensor(0.6229424, grad_fn=<_ChunkedLinearCrossEntropyBackward>)
    >>> loss.backward()
    >>> x.grad.shape
    (3, 2)
    """
    x, lw, tgt = _t(input), _t(linear_weight, "linear_weight"), _t(target, "target")
    lb = None if linear_bias is None else _t(linear_bias, "linear_bias")
    cw = None if weight is None else _t(weight, "weight")
    if not 1 <= x.ndim <= 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {x.ndim}")
    if lw.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {lw.ndim}")
    batch = tuple(x.shape[:-1])
    in_features = x.shape[-1]
    if in_features != lw.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {in_features} and {lw.shape[-1]}, respectively")
    num_classes = lw.shape[0]
    out_features = tuple(lw.shape[1:-1])
    if lb is not None and tuple(lb.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(lb.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(lw.shape)} requires batched "
                           f"input, (N, {in_features}), got unbatched input with shape {tuple(x.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(tgt.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore = -100 if ignore_index is None else ignore_index
    if options is not None:
        chunkable = (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                     and tgt.dtype == np.int64)
        if chunkable:
            return _chunked(x, lw, tgt, lb, cw, reduction, ignore, options, num_classes)
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={tgt.dtype}, "
                      f"out_features={out_features}, linear_bias.shape="
                      f"{tuple(lb.shape) if lb is not None else None}.", stacklevel=2)
    if out_features:
        flat = math.prod(out_features, start=num_classes)
        lw = _c.reshape(lw, (flat, in_features))
        if lb is not None:
            lb = _c.reshape(lb, (flat,))
    logits = _c.reshape(linear(x, lw, lb), logits_shape)
    return cross_entropy(logits, tgt, weight=cw, reduction=reduction, ignore_index=ignore,
                         label_smoothing=label_smoothing)


# --- conv_tbc ---------------------------------------------------------------------------

@composite_op('conv_tbc')
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-d convolution of a time-major sequence: input and output are ``(time, batch, channels)``.

    The same as ``conv1d`` on ``input.permute(1, 2, 0)`` with the kernel
    ``weight.permute(2, 1, 0)``, the result permuted back. A negative ``pad``
    crops that many steps from both ends instead.

    Parameters
    ----------
    input : Tensor
        Of shape ``(T, B, C_in)``.
    weight : Tensor
        Of shape ``(kernel_width, C_in, C_out)``.
    bias : Tensor
        Of shape ``(C_out,)`` (required, as torch's).
    pad : int, optional
        Steps of zeros added at both ends of the time axis (default 0).

    Returns
    -------
    Tensor
        Of shape ``(T + 2 * pad - kernel_width + 1, B, C_out)``.

    Raises
    ------
    RuntimeError
        Wrong ranks, mismatched channels or bias size, or a negative output
        length.
    TypeError
        A bias that is not a Tensor, or a ``pad`` that is not an int.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> x = rg.arange(4.0).reshape(4, 1, 1)          # T=4, B=1, C_in=1
    >>> w = rg.ones(2, 1, 1)                          # a window of two steps
    >>> F.conv_tbc(x, w, rg.zeros(1)).flatten()
    tensor([1., 3., 5.])
    >>> F.conv_tbc(x, w, rg.zeros(1), pad=1).shape
    (5, 1, 1)
    """
    check_tensor_arg(bias, "conv_tbc(): argument 'bias' (position 3)", False)
    if isinstance(pad, (bool, np.bool_)) or not isinstance(pad, (int, np.integer)):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not {type(pad).__name__}")
    x, w, b = _t(input), _t(weight, "weight"), _t(bias, "bias")
    if x.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if w.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if b.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    time, batch, cin = x.shape
    k, wcin, cout = w.shape
    if cin != wcin:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if b.shape[0] != cout:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    pad = int(pad)
    out_len = time + 2 * pad - k + 1
    if out_len < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_len}: [{out_len}, {batch}, {cout}]")
    b = b.to(x.dtype)
    if out_len == 0:
        # an empty result, still connected to the inputs so that backward gives (zero) gradients
        return _c.add(_c.matmul(x[:0], w[0]), b)
    if pad < 0:
        x = x[-pad:time + pad]
        pad = 0
    y = conv1d(_c.permute(x, (1, 2, 0)), _c.permute(w, (2, 1, 0)), b, padding=pad)
    return _c.permute(y, (2, 0, 1))
