"""MultiheadAttention (torch.nn.MultiheadAttention)."""
from __future__ import annotations

from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import init
from retrograd.nn._attention import _canonical_mask, _mha_forward, _none_or_dtype
from retrograd.nn.modules.linear import Linear
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """A :class:`~retrograd.nn.Linear` under torch's name for MultiheadAttention's
    output projection (torch keeps it apart from quantization); it behaves as Linear.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.MultiheadAttention(4, 2).out_proj
    NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
    """


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al., 2017), as torch.nn.MultiheadAttention.

    ``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_out`` with
    ``head_i = softmax(Q W_q_i (K W_k_i)^T / sqrt(d)) V W_v_i``; the heads are
    computed together, in one batched product
    (:func:`retrograd.nn.functional.multi_head_attention_forward`).

    Parameters
    ----------
    embed_dim : int
        The model's dimension ``E``.
    num_heads : int
        The number of heads; each has ``E // num_heads`` dims, so it must divide ``E``.
    dropout : float, optional
        Dropout on the attention weights in training (default 0).
    bias : bool, optional
        Learn the input and output projections' biases (default True).
    add_bias_kv : bool, optional
        Learn a key and a value appended to every sequence (``bias_k``, ``bias_v``; default False).
    add_zero_attn : bool, optional
        Append a key and a value of zeros to every sequence (default False).
    kdim, vdim : int, optional
        The keys' and values' dims (default ``E``). Other than ``E``, the
        projections are separate parameters ``q_proj_weight``,
        ``k_proj_weight``, ``v_proj_weight`` instead of ``in_proj_weight``.
    batch_first : bool, optional
        Inputs and output are ``(N, L, E)`` instead of ``(L, N, E)`` (default False).
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype).

    Attributes
    ----------
    in_proj_weight : Parameter or None
        ``(3E, E)``: the query, key and value projections stacked (``nn.init.xavier_uniform_``).
    q_proj_weight, k_proj_weight, v_proj_weight : Parameter or None
        ``(E, E)``, ``(E, kdim)``, ``(E, vdim)`` when ``kdim`` or ``vdim`` differ from ``E``.
    in_proj_bias : Parameter or None
        ``(3E,)``, zeros at first.
    out_proj : Linear
        The output projection ``E -> E`` (its bias zeros at first).
    bias_k, bias_v : Parameter or None
        ``(1, 1, E)`` (``nn.init.xavier_normal_``), with ``add_bias_kv``.

    Raises
    ------
    ValueError
        If ``embed_dim`` or ``num_heads`` is not positive.
    AssertionError
        If ``num_heads`` does not divide ``embed_dim`` (torch's class).

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> mha = rg.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = rg.randn(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    ((3, 5, 8), (3, 5, 5))
    >>> sorted(mha.state_dict())
    ['in_proj_bias', 'in_proj_weight', 'out_proj.bias', 'out_proj.weight']
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_c.empty((embed_dim, embed_dim), **factory_kwargs))
            self.k_proj_weight = Parameter(_c.empty((embed_dim, self.kdim), **factory_kwargs))
            self.v_proj_weight = Parameter(_c.empty((embed_dim, self.vdim), **factory_kwargs))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_c.empty((3 * embed_dim, embed_dim), **factory_kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_c.empty(3 * embed_dim, **factory_kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory_kwargs)
        self.bias_k: Tensor | None
        self.bias_v: Tensor | None
        if add_bias_kv:
            self.bias_k = Parameter(_c.empty((1, 1, embed_dim), **factory_kwargs))
            self.bias_v = Parameter(_c.empty((1, 1, embed_dim), **factory_kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        # torch's init: xavier_uniform_ projections, zero biases, xavier_normal_ bias_k/v;
        # out_proj.weight keeps Linear's own init
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Parameters
        ----------
        query : Tensor
            ``(L, N, E)`` (``(N, L, E)`` with ``batch_first``), or ``(L, E)`` unbatched.
        key : Tensor
            ``(S, N, kdim)`` (``(N, S, kdim)``), or ``(S, kdim)``.
        value : Tensor
            ``(S, N, vdim)`` (``(N, S, vdim)``), or ``(S, vdim)``.
        key_padding_mask : Tensor, optional
            ``(N, S)`` (or ``(S,)``): True (bool) marks the keys to leave out
            (padding); a float mask is added to the scores.
        need_weights : bool, optional
            Also return the attention weights (default True). A query whose
            keys are all left out then gives NaN, as torch; with False, zeros.
        attn_mask : Tensor, optional
            ``(L, S)`` or ``(N * num_heads, L, S)``: True (bool) marks the pairs
            left out; a float mask is added.
        average_attn_weights : bool, optional
            Average the weights over the heads (default True).
        is_causal : bool, optional
            A hint that ``attn_mask`` is the causal mask (default False).

        Returns
        -------
        output : Tensor
            Shaped as ``query``, with ``E`` features.
        weights : Tensor or None
            ``(N, L, S)`` (``(N, num_heads, L, S)`` without averaging;
            without ``N`` unbatched), or None.
        """
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                           "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        separate = not self._qkv_same_embed_dim
        return _mha_forward(query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
                            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
                            self.out_proj.weight, self.out_proj.bias, training=self.training,
                            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
                            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
                            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
                            average_attn_weights=average_attn_weights, is_causal=is_causal,
                            batch_first=self.batch_first and query.ndim == 3)

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """Combine the masks into one ``(N, num_heads, L, L)`` mask, as torch's fast path does.

        Parameters
        ----------
        attn_mask : Tensor or None
            ``(L, L)`` or ``(N * num_heads, L, L)``, float (additive).
        key_padding_mask : Tensor or None
            ``(N, L)``, float (additive).
        query : Tensor
            ``(N, L, E)``, batch first.

        Returns
        -------
        merged_mask : Tensor or None
            The key padding mask alone (type 1) or the 4-d merged mask (type 2).
        mask_type : int or None
            1, 2, or None without masks.

        Examples
        --------
        >>> import retrograd as rg
        >>> mha = rg.nn.MultiheadAttention(4, 2, batch_first=True)
        >>> merged, kind = mha.merge_masks(rg.zeros(3, 3), rg.zeros(2, 3), rg.zeros(2, 3, 4))
        >>> merged.shape, kind
        ((2, 2, 3, 3), 2)
        """
        mask_type: int | None = None
        merged: Tensor | None = None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1, -1)
            merged = expanded
            if key_padding_mask is not None:
                kpm = key_padding_mask.view(batch_size, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
                merged = expanded + kpm
        return merged, mask_type
