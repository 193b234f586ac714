"""The Transformer family (Vaswani et al., 2017), as torch.nn's: Transformer,
TransformerEncoder, TransformerDecoder and their layers.

The attribute names (``self_attn``, ``linear1``, ``norm1``, ``layers.0``, ...)
are torch's, so a torch state dict loads as it is.
"""
from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn import init
from retrograd.nn._attention import _canonical_mask, _none_or_dtype
from retrograd.nn.modules.activation import GELU, ReLU
from retrograd.nn.modules.attention import MultiheadAttention
from retrograd.nn.modules.container import ModuleList
from retrograd.nn.modules.dropout import Dropout
from retrograd.nn.modules.linear import Linear
from retrograd.nn.modules.module import Module
from retrograd.nn.modules.normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]

_Activation = str | Callable[[Tensor], Tensor]

# the constructor arguments the layers share, documented once
_LAYER_PARAMS = """d_model : int
        The number of features of the inputs and outputs.
    nhead : int
        The number of attention heads (it divides ``d_model``).
    dim_feedforward : int, optional
        The feed-forward block's hidden width (default 2048).
    dropout : float, optional
        The dropout probability, after attention, inside and after the
        feed-forward block (default 0.1).
    activation : str or callable, optional
        The feed-forward block's activation: ``"relu"``, ``"gelu"`` or a unary
        callable (default :func:`retrograd.nn.functional.relu`).
    layer_norm_eps : float, optional
        The layer norms' eps (default 1e-5).
    batch_first : bool, optional
        Inputs and outputs are ``(N, L, E)`` instead of ``(L, N, E)`` (default False).
    norm_first : bool, optional
        Normalise before each block (pre-LN) instead of after the residual
        sum (post-LN, the default False).
    bias : bool, optional
        The Linear and LayerNorm layers learn biases (default True).
    device : str or Device, optional
        Where the parameters live.
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype)."""

_MASK_RETURNS = """Returns
        -------
        Tensor
            Shaped as the target (or source) sequence.

        Notes
        -----
        Boolean masks mark with True what is left out (torch's convention
        for these modules); float masks are added to the attention scores."""


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    return _c.triu(_c.full((sz, sz), float("-inf"), dtype=dtype, device=device), 1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None, size: int | None = None) -> bool:
    """``is_causal`` when given; else whether ``mask`` is the causal mask of its size."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        make_causal = tuple(mask.shape) == tuple(causal.shape) and bool(_c.eq(mask, causal).all())
    return make_causal


def _get_clones(module: Module, N: int) -> ModuleList:
    # independent deep copies: each layer gets its own parameters, equal at first
    return ModuleList([copy.deepcopy(module) for _ in range(N)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _needs_grad(*tensors: Tensor | None) -> bool:
    return _c.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _left_aligned(padding: Tensor) -> bool:
    # every row of the (N, S) padding mask is some keys then only padding
    kept = _c.logical_not(padding).to(_c.int64)
    return padding.shape[1] < 2 or bool((kept[:, :-1] >= kept[:, 1:]).all())


class Transformer(Module):
    __doc__ = """An encoder-decoder Transformer ("Attention Is All You Need"), as torch.nn.Transformer.

    Parameters
    ----------
    {params}
    num_encoder_layers, num_decoder_layers : int, optional
        The number of layers of each (default 6).
    custom_encoder, custom_decoder : Module, optional
        Used instead of the standard encoder or decoder.

    Notes
    -----
    ``d_model`` defaults to 512 and ``nhead`` to 8 here. Every parameter of
    more than one dim is initialised with ``xavier_uniform_``, as torch's.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> model = rg.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                           dim_feedforward=32, dropout=0.0, batch_first=True)
    >>> src, tgt = rg.randn(2, 7, 16), rg.randn(2, 5, 16)
    >>> mask = rg.nn.Transformer.generate_square_subsequent_mask(5)
    >>> model(src, tgt, tgt_mask=mask).shape
    (2, 5, 16)
    """.format(params=_LAYER_PARAMS)

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: _Activation = F.relu,
                 custom_encoder: Any | None = None, custom_decoder: Any | None = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **factory_kwargs)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **factory_kwargs)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """Encode ``src``, then decode ``tgt`` attending to the encoding.

        Parameters
        ----------
        src : Tensor
            ``(S, N, E)`` (``(N, S, E)`` with ``batch_first``), or ``(S, E)``.
        tgt : Tensor
            ``(T, N, E)`` (``(N, T, E)``), or ``(T, E)``.
        src_mask, tgt_mask, memory_mask : Tensor, optional
            ``(S, S)``, ``(T, T)``, ``(T, S)`` (or with ``N * nhead`` in front).
        src_key_padding_mask, tgt_key_padding_mask, memory_key_padding_mask : Tensor, optional
            ``(N, S)``, ``(N, T)``, ``(N, S)``: True marks padding.
        src_is_causal, tgt_is_causal : bool, optional
            Hints that the mask is causal (None: detect it).
        memory_is_causal : bool, optional
            A hint that ``memory_mask`` is causal (default False).

        {returns}

        Raises
        ------
        RuntimeError
            If the batch sizes or the feature sizes do not match.
        """
        is_batched = src.ndim == 3
        if is_batched and src.shape[0 if self.batch_first else 1] != tgt.shape[0 if self.batch_first else 1]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    forward.__doc__ = (forward.__doc__ or "").replace("{returns}", _MASK_RETURNS)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask of size ``sz``: ``-inf`` above the diagonal, 0 elsewhere.

        Parameters
        ----------
        sz : int
            The sequence length.
        device : str or Device, optional
            Where the mask lives.
        dtype : dtype, optional
            Its dtype (default: the default dtype).

        Returns
        -------
        Tensor
            Of shape ``(sz, sz)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[  0., -inf, -inf],
                [  0.,   0., -inf],
                [  0.,   0.,   0.]])
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)


class TransformerEncoder(Module):
    """A stack of ``num_layers`` copies of an encoder layer, as torch.nn.TransformerEncoder.

    Parameters
    ----------
    encoder_layer : TransformerEncoderLayer
        Deep-copied ``num_layers`` times (the copies start equal).
    num_layers : int
        The number of layers.
    norm : Module, optional
        Applied to the last layer's output.
    enable_nested_tensor : bool, optional
        Default True. retrograd has no nested tensors; as torch's, in eval
        mode without gradients, with a batch-first layer and a
        ``src_key_padding_mask`` padding only at the end of each sequence, the
        padded positions of the output are zeros (before ``norm``). As torch,
        it warns when the layer cannot use this.
    mask_check : bool, optional
        Check that the padding is at the end of each sequence (default True).

    Examples
    --------
    >>> import retrograd as rg
    >>> layer = rg.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    >>> encoder = rg.nn.TransformerEncoder(layer, num_layers=3)
    >>> encoder(rg.randn(2, 5, 8)).shape
    (2, 5, 8)
    >>> len(encoder.layers), encoder.layers[0] is layer
    (3, False)
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = ""
        name = "encoder_layer"
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            why_not = f"{name} was not TransformerEncoderLayer"
        elif encoder_layer.norm_first:
            why_not = f"{name}.norm_first was True"
        elif not encoder_layer.self_attn.batch_first:
            why_not = f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
        elif not encoder_layer.self_attn._qkv_same_embed_dim:
            why_not = f"{name}.self_attn._qkv_same_embed_dim was not True"
        elif encoder_layer.self_attn.in_proj_bias is None:
            why_not = f"{name}.self_attn was passed bias=False"
        elif not encoder_layer.activation_relu_or_gelu:
            why_not = f"{name}.activation_relu_or_gelu was not True"
        elif encoder_layer.norm1.eps != encoder_layer.norm2.eps:
            why_not = f"{name}.norm1.eps was not equal to {name}.norm2.eps"
        elif encoder_layer.self_attn.num_heads % 2 == 1:
            why_not = f"{name}.self_attn.num_heads is odd"
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def _drops_padding(self, src: Tensor, mask: Tensor | None, padding: Tensor | None) -> bool:
        # torch's sparsity fast path (a nested tensor without the padding) would be taken
        first = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.ndim != 3 or padding is None
                or mask is not None):
            return False
        attn = first.self_attn
        if _needs_grad(src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                       first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias,
                       first.linear1.weight, first.linear1.bias, first.linear2.weight, first.linear2.bias):
            return False
        return not getattr(self, "mask_check", True) or _left_aligned(_c.ne(padding, 0))

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        """Pass ``src`` through the layers (and ``norm``).

        Parameters
        ----------
        src : Tensor
            ``(S, N, E)`` (``(N, S, E)`` with ``batch_first``), or ``(S, E)``.
        mask : Tensor, optional
            ``(S, S)`` or ``(N * nhead, S, S)``.
        src_key_padding_mask : Tensor, optional
            ``(N, S)`` (or ``(S,)``): True marks padding.
        is_causal : bool, optional
            A hint that ``mask`` is causal (None: detect it).

        {returns}
        """
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask),
                                               "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        drop_padding = self._drops_padding(src, mask, src_key_padding_mask)
        output = src
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if drop_padding:
            assert src_key_padding_mask is not None     # (_drops_padding is False without one)
            padded = _c.ne(src_key_padding_mask, 0)
            output = _c.masked_fill(output, _c.unsqueeze(padded, -1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    forward.__doc__ = (forward.__doc__ or "").replace("{returns}", _MASK_RETURNS)


class TransformerDecoder(Module):
    """A stack of ``num_layers`` copies of a decoder layer, as torch.nn.TransformerDecoder.

    Parameters
    ----------
    decoder_layer : TransformerDecoderLayer
        Deep-copied ``num_layers`` times (the copies start equal).
    num_layers : int
        The number of layers.
    norm : Module, optional
        Applied to the last layer's output.

    Examples
    --------
    >>> import retrograd as rg
    >>> layer = rg.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> decoder = rg.nn.TransformerDecoder(layer, num_layers=2)
    >>> decoder(rg.randn(4, 3, 8), rg.randn(6, 3, 8)).shape
    (4, 3, 8)
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """Pass ``tgt`` through the layers, each attending to ``memory`` (and ``norm``).

        Parameters
        ----------
        tgt : Tensor
            ``(T, N, E)`` (``(N, T, E)`` with ``batch_first``), or ``(T, E)``.
        memory : Tensor
            The encoder's output, ``(S, N, E)`` (``(N, S, E)``), or ``(S, E)``.
        tgt_mask, memory_mask : Tensor, optional
            ``(T, T)`` and ``(T, S)`` (or with ``N * nhead`` in front).
        tgt_key_padding_mask, memory_key_padding_mask : Tensor, optional
            ``(N, T)`` and ``(N, S)``: True marks padding.
        tgt_is_causal : bool, optional
            A hint that ``tgt_mask`` is causal (None: detect it).
        memory_is_causal : bool, optional
            A hint that ``memory_mask`` is causal (default False).

        {returns}
        """
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output

    forward.__doc__ = (forward.__doc__ or "").replace("{returns}", _MASK_RETURNS)


class TransformerEncoderLayer(Module):
    __doc__ = """Self-attention and a feed-forward block, each with a residual
    connection and a layer norm: torch.nn.TransformerEncoderLayer.

    Post-LN (default): ``x = norm1(x + sa(x)); x = norm2(x + ff(x))``;
    with ``norm_first``: ``x = x + sa(norm1(x)); x = x + ff(norm2(x))``.

    Parameters
    ----------
    {params}

    Examples
    --------
    >>> import retrograd as rg
    >>> layer = rg.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, activation="gelu")
    >>> layer(rg.randn(5, 3, 8)).shape
    (5, 3, 8)
    >>> sorted(k for k in layer.state_dict() if k.startswith("self_attn"))
    ['self_attn.in_proj_bias', 'self_attn.in_proj_weight', 'self_attn.out_proj.bias', 'self_attn.out_proj.weight']
    """.format(params=_LAYER_PARAMS)

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: _Activation = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        # (what torch's fast paths look at: 1 relu, 2 gelu, 0 another activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        """Apply the layer.

        Parameters
        ----------
        src : Tensor
            ``(S, N, E)`` (``(N, S, E)`` with ``batch_first``), or ``(S, E)``.
        src_mask : Tensor, optional
            ``(S, S)`` or ``(N * nhead, S, S)``.
        src_key_padding_mask : Tensor, optional
            ``(N, S)`` (or ``(S,)``): True marks padding.
        is_causal : bool, optional
            A hint that ``src_mask`` is causal (default False).

        {returns}
        """
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    forward.__doc__ = (forward.__doc__ or "").replace("{returns}", _MASK_RETURNS)

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    __doc__ = """Self-attention, attention to the encoder's output (memory) and a
    feed-forward block, each with a residual connection and a layer norm:
    torch.nn.TransformerDecoderLayer.

    Parameters
    ----------
    {params}

    Examples
    --------
    >>> import retrograd as rg
    >>> layer = rg.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    >>> layer(rg.randn(3, 4, 8), rg.randn(3, 6, 8)).shape
    (3, 4, 8)
    """.format(params=_LAYER_PARAMS)

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: _Activation = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **factory_kwargs)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        """Apply the layer.

        Parameters
        ----------
        tgt : Tensor
            ``(T, N, E)`` (``(N, T, E)`` with ``batch_first``), or ``(T, E)``.
        memory : Tensor
            ``(S, N, E)`` (``(N, S, E)``), or ``(S, E)``.
        tgt_mask, memory_mask : Tensor, optional
            ``(T, T)`` and ``(T, S)`` (or with ``N * nhead`` in front).
        tgt_key_padding_mask, memory_key_padding_mask : Tensor, optional
            ``(N, T)`` and ``(N, S)``: True marks padding.
        tgt_is_causal, memory_is_causal : bool, optional
            Hints that the masks are causal (default False).

        {returns}
        """
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    forward.__doc__ = (forward.__doc__ or "").replace("{returns}", _MASK_RETURNS)

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                   is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)
