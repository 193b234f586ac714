"""Attention as functions (re-exported by ``retrograd.nn.functional``):
:func:`scaled_dot_product_attention` and :func:`multi_head_attention_forward`.

Both are compositions of core's ops, so their gradients (and higher-order
ones) come from the table. The heads are never looped over: queries, keys
and values are viewed as ``(batch, heads, length, head_dim)`` stacks and
each attention step is one batched ``matmul``.

Rows whose every key is masked out: scaled_dot_product_attention gives zeros
there (and zero gradients), as torch 2.13's CPU kernels do, while
multi_head_attention_forward with ``need_weights=True`` gives NaN there, as
torch's explicit softmax path does.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import composite_op
from retrograd.nn.functional import _t, dropout, linear, pad

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_NEG_INF = float("-inf")


def _is_float(dtype) -> bool:
    return _c.is_floating_dtype(dtype)


def _check_bool(value, name, fn):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")


def _bool_to_bias(mask: Tensor, allowed: bool, dtype) -> Tensor:
    """An additive float mask from a bool one: 0 where attending, -inf elsewhere.
    ``allowed`` says which value of ``mask`` means "attend" (True for SDPA, False
    for MultiheadAttention's masks, whose True marks what is left out)."""
    zeros = _c.zeros(tuple(mask.shape), dtype=dtype, device=mask.device)
    return _c.masked_fill(zeros, _c.logical_not(mask) if allowed else mask, _NEG_INF)


def _fully_masked_rows(bias: Tensor) -> Tensor | None:
    # the rows (queries) whose every key has a -inf bias, as a bool tensor with a
    # trailing 1 that broadcasts over the keys; None when there are none (the
    # common case: the check is on the mask, far smaller than the scores)
    rows = _c.eq(bias.detach(), _NEG_INF).all(-1, keepdim=True)
    return rows if bool(rows.any()) else None


def _causal_bias(L: int, S: int, like: Tensor) -> Tensor:
    # torch's causal mask is aligned to the top left: query i sees keys 0..i
    return _c.triu(_c.full((L, S), _NEG_INF, dtype=like.dtype, device=like.device), 1)


def _attend(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None, causal: bool, dropout_p: float, scale: float,
            safe: bool) -> tuple[Tensor, Tensor]:
    """softmax(q @ k^T * scale + bias) @ v over stacks ``q (..., L, E)``, ``k (..., S, E)``,
    ``v (..., S, Ev)``; returns the output and the attention weights (after dropout).
    ``safe`` gives zeros, not NaN, for rows whose keys are all masked out."""
    L, S = q.shape[-2], k.shape[-2]
    # scaling q (L x E numbers) is cheaper than scaling the scores (L x S)
    scores = _c.matmul(_c.mul(q, scale), _c.transpose(k, -2, -1))
    if causal:
        bias = _causal_bias(L, S, scores)
    rows = None
    if bias is not None:
        if bias.dtype == scores.dtype and np.broadcast_shapes(scores.shape, bias.shape) == tuple(scores.shape):
            scores.add_(bias)         # in place: the product's backward does not read it
        else:
            scores = _c.add(scores, bias)
        if safe and not causal:       # a causal row always sees key 0
            rows = _fully_masked_rows(bias)
    if S == 0:
        attn = scores                 # no keys: the output is zeros, as torch's
    elif rows is not None:
        # zero the masked rows' scores first, so that neither the softmax nor its
        # backward meets a row of -inf (whose NaN would leak into the gradients)
        attn = _c.masked_fill(_c.softmax(_c.masked_fill(scores, rows, 0.0), -1), rows, 0.0)
    else:
        attn = _c.softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _c.matmul(attn, v), attn


def _repeat_heads(t: Tensor, rep: int) -> Tensor:
    # torch's repeat_interleave(rep, dim=-3): each key/value head serves `rep`
    # consecutive query heads (grouped-query attention)
    if rep == 1:
        return t
    shape = tuple(t.shape)
    wide = _c.expand(_c.unsqueeze(t, -3), shape[:-2] + (rep,) + shape[-2:])
    return _c.reshape(wide, shape[:-3] + (shape[-3] * rep,) + shape[-2:])


@composite_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """Attention: ``softmax(query @ key^T * scale + mask) @ value``.

    The batch dims (e.g. ``(N, heads)``) are computed in one batched matrix
    product each, as torch's math path computes them.

    Parameters
    ----------
    query : Tensor
        Of shape ``(..., L, E)``: any number of batch dims (heads included).
    key : Tensor
        Of shape ``(..., S, E)``; its batch dims broadcast with the query's.
    value : Tensor
        Of shape ``(..., S, Ev)``.
    attn_mask : Tensor, optional
        Broadcasting to ``(..., L, S)``. A bool mask says where to attend
        (True: attend, False: left out); a float mask is added to the scores
        (use ``-inf`` to leave a key out). Its dtype is bool, float32 or the
        query's. A query whose keys are all left out gets zeros, as torch's.
    dropout_p : float, optional
        The dropout probability of the attention weights (default 0). Applied
        whenever positive: pass ``0.0`` in evaluation.
    is_causal : bool, optional
        Query ``i`` attends to keys ``0..i`` only (default False); not with
        ``attn_mask``.
    scale : float, optional
        The scores' factor (default ``1 / sqrt(E)``).
    enable_gqa : bool, optional
        Grouped-query attention (default False): key and value may have fewer
        heads (dim -3) than the query, a divisor of its number; each of their
        heads serves consecutive query heads.

    Returns
    -------
    Tensor
        Of shape ``(..., L, Ev)``, the batch dims broadcast.

    Raises
    ------
    RuntimeError
        For inputs of fewer than 2 dims, different dtypes, integer inputs,
        mismatched sizes, a mask of another float dtype, both ``attn_mask``
        and ``is_causal``, ``dropout_p > 1``, or head counts that do not
        divide the query's (``enable_gqa``).
    TypeError
        For arguments that are not tensors (or bool where bool is wanted).

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> q = rg.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    >>> v = rg.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    >>> F.scaled_dot_product_attention(q, q, v, is_causal=True)
    tensor([[[1.      , 2.      ],
             [2.339523, 3.339523]]])
    >>> F.scaled_dot_product_attention(rg.randn(2, 4, 5, 8), rg.randn(2, 4, 6, 8), rg.randn(2, 4, 6, 3)).shape
    (2, 4, 5, 3)
    """
    fn = "scaled_dot_product_attention"
    q, k, v = _t(query, "query"), _t(key, "key"), _t(value, "value")
    _check_bool(is_causal, "is_causal", fn)
    _check_bool(enable_gqa, "enable_gqa", fn)
    if scale is not None and (isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (int, float, np.number))):
        raise TypeError(f"{fn}(): argument 'scale' must be float, not {type(scale).__name__}")
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise RuntimeError(f"{fn}: expected query, key and value to be at least 2-dimensional, but got query.dim: "
                           f"{q.ndim}, key.dim: {k.ndim} and value.dim: {v.ndim}")
    if not (q.dtype == k.dtype == v.dtype):
        raise RuntimeError(f"{fn}: expected query, key and value to have the same dtype, but got query.dtype: "
                           f"{q.dtype}, key.dtype: {k.dtype} and value.dtype: {v.dtype}")
    if not _is_float(q.dtype):
        raise RuntimeError(f"{fn}: expected floating-point query, key and value, but got {q.dtype}; convert them "
                           "first, e.g. query.float()")
    if k.shape[-1] != q.shape[-1]:
        raise RuntimeError(f"{fn}: the query's last dim ({q.shape[-1]}) and the key's ({k.shape[-1]}) differ")
    if k.shape[-2] != v.shape[-2]:
        raise RuntimeError(f"{fn}: key and value must have as many entries (dim -2), but got {k.shape[-2]} "
                           f"and {v.shape[-2]}")
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    bias = None
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError(f"{fn}: explicit attn_mask should not be set when is_causal=True; pass one of them")
        m = _t(attn_mask, "attn_mask")
        if m.dtype == np.bool_:
            bias = _bool_to_bias(m, True, q.dtype)
        elif m.dtype == q.dtype or m.dtype == np.float32:
            bias = m if m.dtype == q.dtype else m.to(q.dtype)
        else:
            raise RuntimeError(f"{fn}: expected attn_mask dtype to be bool, float32 or the query's dtype, "
                               f"but got attn_mask.dtype: {m.dtype} and query.dtype: {q.dtype}")
    if enable_gqa:
        if q.ndim < 3 or k.ndim < 3 or v.ndim < 3:
            raise IndexError(f"{fn}: enable_gqa needs a heads dim (-3) in query, key and value, but got "
                             f"{q.ndim}-, {k.ndim}- and {v.ndim}-dimensional inputs")
        hq, hk, hv = q.shape[-3], k.shape[-3], v.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(f"{fn}: the number of heads in key ({hk}) and value ({hv}) must divide the number "
                               f"of heads in query ({hq})")
        k, v = _repeat_heads(k, hq // hk), _repeat_heads(v, hq // hv)
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    out, _ = _attend(q, k, v, bias, bool(is_causal), float(dropout_p), factor, safe=True)
    return out



# --- multi-head attention ---------------------------------------------------------------

def _none_or_dtype(input: Tensor | None):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or a Tensor")


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True) -> Tensor | None:
    """torch's mask normalisation for MultiheadAttention and the Transformer
    layers: a bool mask (True: left out) becomes a float one (-inf there);
    a float mask is kept."""
    if mask is None:
        return None
    mask = _t(mask, mask_name)
    is_float = _is_float(mask.dtype)
    if mask.dtype != np.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for "
                      "both instead.", stacklevel=3)
    if not is_float:
        mask = _bool_to_bias(mask, False, target_type)
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    # whether the input is batched; AssertionError (torch's class) for bad ranks
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                                 f"but found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.ndim}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                         "tensor")


def _in_projection(query, key, value, E, in_proj_weight, in_proj_bias, separate, q_w, k_w, v_w):
    if not separate:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w, b = _t(in_proj_weight, "in_proj_weight"), in_proj_bias
        if key is value and query is key:
            # self-attention: one matrix product for q, k and v together
            return _c.split(linear(query, w, b), E, -1)
        w_q, w_kv = _c.split(w, [E, 2 * E])
        b_q, b_kv = (None, None) if b is None else _c.split(b, [E, 2 * E])
        if key is value:
            k, v = _c.split(linear(key, w_kv, b_kv), E, -1)
            return linear(query, w_q, b_q), k, v
        w_k, w_v = _c.split(w_kv, E)
        b_k, b_v = (None, None) if b_kv is None else _c.split(b_kv, E)
        return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    for w, name in ((q_w, "q"), (k_w, "k"), (v_w, "v")):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
    Eq, Ek, Ev = query.shape[-1], key.shape[-1], value.shape[-1]
    for w, want, what in ((q_w, (Eq, Eq), "query"), (k_w, (Eq, Ek), "key"), (v_w, (Eq, Ev), "value")):
        if tuple(w.shape) != want:
            raise AssertionError(f"expecting {what} weights shape of {want}, but got {tuple(w.shape)}")
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = _c.chunk(in_proj_bias, 3)
        for bias, what in ((bq, "query"), (bk, "key"), (bv, "value")):
            if tuple(bias.shape) != (Eq,):
                raise AssertionError(f"expecting {what} bias shape of {(Eq,)}, but got {tuple(bias.shape)}")
    return linear(query, q_w, bq), linear(key, k_w, bk), linear(value, v_w, bv)


def _split_heads(x: Tensor, bsz: int, heads: int, batch_first: bool) -> Tensor:
    # (L, N, E) or (N, L, E) to a (N, heads, L, head_dim) view
    if batch_first:
        return _c.permute(_c.reshape(x, (bsz, x.shape[1], heads, -1)), (0, 2, 1, 3))
    return _c.permute(_c.reshape(x, (x.shape[0], bsz, heads, -1)), (1, 2, 0, 3))


def _mha_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
                 add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training=True, key_padding_mask=None,
                 need_weights=True, attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None,
                 k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                 is_causal=False, batch_first=False):
    """multi_head_attention_forward for inputs laid out ``(L, N, E)`` or, with
    ``batch_first``, ``(N, L, E)`` (MultiheadAttention's layout, used as it is
    so that no input or output is transposed and copied)."""
    # keep identities (self-attention is detected by `is`)
    q_in = _t(query, "query")
    k_in = q_in if key is query else _t(key, "key")
    v_in = k_in if value is key else (q_in if value is query else _t(value, "value"))
    kpm = None if key_padding_mask is None else _t(key_padding_mask, "key_padding_mask")
    am = None if attn_mask is None else _t(attn_mask, "attn_mask")
    is_batched = _mha_shape_check(q_in, k_in, v_in, kpm, am, num_heads)
    bdim = 0 if batch_first else 1
    if not is_batched:
        same_kv, same_qk = v_in is k_in, k_in is q_in
        q_in = _c.unsqueeze(q_in, bdim)
        k_in = q_in if same_qk else _c.unsqueeze(k_in, bdim)
        v_in = k_in if same_kv else _c.unsqueeze(v_in, bdim)
        if kpm is not None:
            kpm = _c.unsqueeze(kpm, 0)
    bsz, tgt_len, embed_dim = q_in.shape[bdim], q_in.shape[1 - bdim], q_in.shape[2]
    kpm = _canonical_mask(kpm, "key_padding_mask", _none_or_dtype(am), "attn_mask", q_in.dtype)
    if is_causal and am is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and kpm is None and not need_weights:
        am = None                     # the hint alone: SDPA's causal path
    else:
        am = _canonical_mask(am, "attn_mask", None, "", q_in.dtype, check_other=False)
        if kpm is not None:
            is_causal = False         # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if k_in.shape[:2] != v_in.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {tuple(k_in.shape[:2])} do not match value's "
                                 f"{tuple(v_in.shape[:2])}")
    elif k_in.shape != v_in.shape:
        raise AssertionError(f"key shape {tuple(k_in.shape)} does not match value shape {tuple(v_in.shape)}")
    q, k, v = _in_projection(q_in, k_in, v_in, embed_dim, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                             q_proj_weight, k_proj_weight, v_proj_weight)
    src_len = k.shape[1 - bdim]
    if am is not None:
        if am.ndim == 2:
            if tuple(am.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(am.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            am = _c.reshape(am, (1, 1, tgt_len, src_len))
        elif am.ndim == 3:
            if tuple(am.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(am.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
            am = _c.reshape(am, (bsz, num_heads, tgt_len, src_len))
        else:
            raise RuntimeError(f"attn_mask's dimension {am.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        # one more key and value, learnt, for every sequence of the batch
        extra = (bsz, 1, embed_dim) if batch_first else (1, bsz, embed_dim)
        k = _c.cat([k, _c.expand(_c.reshape(bias_k, (1, 1, embed_dim)), extra)], 1 - bdim)
        v = _c.cat([v, _c.expand(_c.reshape(bias_v, (1, 1, embed_dim)), extra)], 1 - bdim)
        am = None if am is None else pad(am, (0, 1))
        kpm = None if kpm is None else pad(kpm, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = _split_heads(q, bsz, num_heads, batch_first)
    k = _split_heads(k, bsz, num_heads, batch_first) if static_k is None else _static(static_k, "k", bsz, num_heads,
                                                                                      head_dim)
    v = _split_heads(v, bsz, num_heads, batch_first) if static_v is None else _static(static_v, "v", bsz, num_heads,
                                                                                      head_dim)
    if add_zero_attn:
        k = _c.cat([k, _c.zeros(tuple(k.shape[:2]) + (1, head_dim), dtype=k.dtype, device=k.device)], 2)
        v = _c.cat([v, _c.zeros(tuple(v.shape[:2]) + (1, head_dim), dtype=v.dtype, device=v.device)], 2)
        am = None if am is None else pad(am, (0, 1))
        kpm = None if kpm is None else pad(kpm, (0, 1))
    src_len = k.shape[2]
    if kpm is not None:
        if kpm.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {kpm.shape[0]}")
        if kpm.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got {kpm.shape[1]}")
        kpm = _c.reshape(kpm, (bsz, 1, 1, src_len))
        am = kpm if am is None else _c.add(am, kpm)
    if not training:
        dropout_p = 0.0
    # need_weights: torch's explicit softmax (NaN for a row with no key); else its SDPA (zeros there)
    out, weights = _attend(q, k, v, am, bool(is_causal) and am is None and not need_weights, dropout_p,
                           1.0 / math.sqrt(head_dim), safe=not need_weights)
    # (N, heads, L, head_dim) back to the input's layout, the heads side by side
    out = _c.permute(out, (0, 2, 1, 3) if batch_first else (2, 0, 1, 3))
    out = linear(_c.reshape(out, tuple(out.shape[:2]) + (embed_dim,)), out_proj_weight, out_proj_bias)
    if not is_batched:
        out = _c.squeeze(out, bdim)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = _c.mean(weights, 1)
    if not is_batched:
        weights = _c.squeeze(weights, 0)
    return out, weights


def _static(t, name, bsz, heads, head_dim):
    t = _t(t, f"static_{name}")
    if t.shape[0] != bsz * heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {bsz * heads}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return _c.reshape(t, (bsz, heads, t.shape[1], head_dim))


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
                                 bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
                                 key_padding_mask: Tensor | None = None, need_weights: bool = True,
                                 attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
                                 static_v: Tensor | None = None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention with its projections: what
    :class:`retrograd.nn.MultiheadAttention` computes.

    The inputs are projected (``in_proj_weight``, or ``q/k/v_proj_weight``
    with ``use_separate_proj_weight``), split into ``num_heads`` heads,
    attended (all heads in one batched product), joined and projected out.

    Parameters
    ----------
    query : Tensor
        ``(L, N, E)``, or ``(L, E)`` unbatched.
    key, value : Tensor
        ``(S, N, Ek)`` and ``(S, N, Ev)`` (or unbatched ``(S, Ek)``, ``(S, Ev)``).
    embed_dim_to_check : int
        ``E``, checked against the query.
    num_heads : int
        The number of heads; divides ``E``.
    in_proj_weight : Tensor or None
        ``(3E, E)``: the query, key and value projections stacked.
    in_proj_bias : Tensor or None
        ``(3E,)``.
    bias_k, bias_v : Tensor or None
        ``(1, 1, E)``: a key and a value appended to every sequence.
    add_zero_attn : bool
        Append a zero key and value after the heads are split.
    dropout_p : float
        Dropout on the attention weights (training only).
    out_proj_weight : Tensor
        ``(E, E)``.
    out_proj_bias : Tensor or None
        ``(E,)``.
    training : bool, optional
        Apply dropout (default True).
    key_padding_mask : Tensor, optional
        ``(N, S)`` (or ``(S,)``): True (bool) marks keys left out; a float
        mask is added.
    need_weights : bool, optional
        Also return the attention weights (default True).
    attn_mask : Tensor, optional
        ``(L, S)`` or ``(N * num_heads, L, S)``: True (bool) marks pairs left
        out; a float mask is added.
    use_separate_proj_weight : bool, optional
        Use ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` (default False).
    q_proj_weight, k_proj_weight, v_proj_weight : Tensor, optional
        ``(E, E)``, ``(E, Ek)``, ``(E, Ev)``.
    static_k, static_v : Tensor, optional
        ``(N * num_heads, S, E / num_heads)``: keys and values used instead of
        the projected ones.
    average_attn_weights : bool, optional
        Average the returned weights over the heads (default True).
    is_causal : bool, optional
        A hint that ``attn_mask`` is the causal mask (default False); it needs
        ``attn_mask``.

    Returns
    -------
    output : Tensor
        ``(L, N, E)`` (``(L, E)`` unbatched).
    weights : Tensor or None
        ``(N, L, S)``, or ``(N, num_heads, L, S)`` without averaging; None
        unless ``need_weights``.

    Raises
    ------
    AssertionError
        For inconsistent shapes (torch's class for these checks).
    RuntimeError
        For a mask of the wrong shape, or ``is_causal`` without ``attn_mask``.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> _ = rg.manual_seed(0)
    >>> x = rg.randn(5, 2, 4)
    >>> out, w = F.multi_head_attention_forward(x, x, x, 4, 2, rg.randn(12, 4), rg.zeros(12), None, None,
    ...                                         False, 0.0, rg.randn(4, 4), rg.zeros(4))
    >>> out.shape, w.shape
    ((5, 2, 4), (2, 5, 5))
    >>> bool(((w.sum(-1) - 1).abs() < 1e-6).all())
    True
    """
    return _mha_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
                        bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask,
                        need_weights, attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight,
                        v_proj_weight, static_k, static_v, average_attn_weights, is_causal)
