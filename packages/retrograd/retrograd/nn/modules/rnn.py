"""The recurrent layers: RNN, LSTM, GRU and their cells (torch.nn.modules.rnn).

The time loop runs in Python over retrograd's differentiable ops, so every
gradient (and higher-order ones) comes from the op table. Per layer and
direction the input's projection is one matmul for all steps at once (both
biases folded in where the formula allows); each step then costs one matmul
with the hidden state and a handful of element-wise ops over all the gates
together. Every layer works on the steps as rows of a 2-d tensor, time-major:
a padded batch is the special case of a packed one whose batch size never
changes, so both go through the same loop.
"""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import composite_op
from retrograd.nn import functional as F
from retrograd.nn import init
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _packed_sequence_class() -> type:
    # imported when first needed: rg.nn.utils is loaded after the layers
    from retrograd.nn.utils.rnn import PackedSequence
    return PackedSequence


# -- one step of each cell ------------------------------------------------------------
# `xg` is the input's share of the gates (input @ W_ih.T plus the biases that
# can be folded in), `w_hh_t` is W_hh.T.

def _rnn_step(xg: Tensor, h: Tensor, w_hh_t: Tensor, relu: bool) -> Tensor:
    pre = _c.addmm(xg, h, w_hh_t)
    return _c.relu(pre) if relu else _c.tanh(pre)


def _lstm_step(xg: Tensor, h: Tensor, c: Tensor, w_hh_t: Tensor, w_hr_t: Tensor | None) -> tuple[Tensor, Tensor]:
    # torch's gate order: input, forget, cell, output (one split node: its
    # backward concatenates the four gradients once)
    i, f, g, o = _c.addmm(xg, h, w_hh_t).chunk(4, 1)
    c = _c.sigmoid(f) * c + _c.sigmoid(i) * _c.tanh(g)
    h = _c.sigmoid(o) * _c.tanh(c)
    return (h if w_hr_t is None else _c.mm(h, w_hr_t)), c


def _gru_step(x_rz: Tensor, x_n: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None) -> Tensor:
    hsz = h.shape[1]
    gh = _c.mm(h, w_hh_t) if b_hh is None else _c.addmm(b_hh, h, w_hh_t)   # gate order: reset, update, new
    gh_rz, gh_n = gh.split([2 * hsz, hsz], 1)
    r, z = _c.sigmoid(x_rz + gh_rz).chunk(2, 1)
    n = _c.tanh(x_n + r * gh_n)
    return n + z * (h - n)                       # (1 - z) * n + z * h


# -- a whole layer stack --------------------------------------------------------------

def _direction(mode: str, x: Tensor, sizes: list[int], h0: Tensor, c0: Tensor | None, weights: list,
               reverse: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """One direction of one layer over the rows of ``x`` (``sizes[t]`` rows at
    step ``t``): its output rows and final hidden (and cell) state."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    w_ih_t, w_hh_t = w_ih.t(), w_hh.t()
    w_hr_t = None if w_hr is None else w_hr.t()
    if b_ih is None:
        xg = _c.mm(x, w_ih_t)
    else:
        xg = _c.addmm(b_ih if mode == "GRU" else b_ih + b_hh, x, w_ih_t)
    xs: list[Any]
    if mode == "GRU":
        x_rz, x_n = xg.split([2 * h0.shape[1], h0.shape[1]], 1)
        xs = list(zip(_c.split(x_rz, sizes, 0), _c.split(x_n, sizes, 0)))
    else:
        xs = list(_c.split(xg, sizes, 0))
    n = len(sizes)
    rows = sizes[-1] if reverse else sizes[0]
    h: Tensor = h0
    c: Any = c0
    if rows != h0.shape[0]:
        h = h0[:rows]
        c = None if c0 is None else c0[:rows]
    ended_h: list[Tensor] = []
    ended_c: list[Tensor] = []
    outs: list[Any] = [None] * n
    relu = mode == "RNN_RELU"
    for t in (range(n - 1, -1, -1) if reverse else range(n)):
        bs = sizes[t]
        if bs != rows:
            if bs < rows:          # going forward, the shortest sequences end here
                ended_h.append(h[bs:])
                h = h[:bs]
                if c is not None:
                    ended_c.append(c[bs:])
                    c = c[:bs]
            else:                  # going backward, longer sequences start here, from their initial state
                h = _c.cat([h, h0[rows:bs]], 0)
                if c is not None and c0 is not None:
                    c = _c.cat([c, c0[rows:bs]], 0)
            rows = bs
        if mode == "LSTM":
            h, c = _lstm_step(xs[t], h, c, w_hh_t, w_hr_t)
        elif mode == "GRU":
            h = _gru_step(xs[t][0], xs[t][1], h, w_hh_t, b_hh)
        else:
            h = _rnn_step(xs[t], h, w_hh_t, relu)
        outs[t] = h
    out = outs[0] if n == 1 else _c.cat(outs, 0)
    if ended_h:
        h = _c.cat([h] + ended_h[::-1], 0)
        if c is not None:
            c = _c.cat([c] + ended_c[::-1], 0)
    return out, h, c


def _stack(mode: str, x: Tensor, sizes: list[int], hx: Tensor, cx: Tensor | None, weights: list,
           num_layers: int, bidirectional: bool, dropout: float, training: bool) -> tuple:
    dirs = 2 if bidirectional else 1
    h0s = hx.unbind(0)
    c0s = None if cx is None else cx.unbind(0)
    hs: list[Tensor] = []
    cs: list[Tensor] = []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            out, h, c = _direction(mode, x, sizes, h0s[k], None if c0s is None else c0s[k], weights[k], d == 1)
            outs.append(out)
            hs.append(h)
            if c is not None:           # (an LSTM's: then every direction has one)
                cs.append(c)
        x = outs[0] if dirs == 1 else _c.cat(outs, 1)
        if dropout > 0 and training and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, _c.stack(hs, 0), (None if cx is None else _c.stack(cs, 0))


_IMPLS = {mode: composite_op(name)(_stack)
          for mode, name in (("LSTM", "lstm"), ("GRU", "gru"), ("RNN_TANH", "rnn_tanh"), ("RNN_RELU", "rnn_relu"))}


def _run(mode: str, input: Tensor, sizes: list[int] | None, h0: Tensor, c0: Tensor | None, weights: list,
         num_layers: int, bidirectional: bool, dropout: float, training: bool,
         batch_first: bool) -> tuple:
    """ATen's lstm / gru / rnn_tanh / rnn_relu: the layer stack over a padded 3-d ``input`` (``sizes`` None;
    ``(L, N, H_in)``, or ``(N, L, H_in)`` with ``batch_first``) or over a packed sequence's data (``sizes``
    its batch sizes). Returns ``(output, h_n, c_n)``, ``c_n`` None but for an LSTM. The layers and torch's
    top-level twins (``rg.lstm``, ...) both run through here."""
    if sizes is not None:
        return _IMPLS[mode](mode, input, sizes, h0, c0, weights, num_layers, bidirectional, dropout, training)
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if steps == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    x = input.reshape((steps * batch, input.shape[2]))
    out, h_n, c_n = _IMPLS[mode](mode, x, [batch] * steps, h0, c0, weights, num_layers, bidirectional, dropout,
                                 training)
    out = out.reshape((steps, batch, out.shape[1]))
    return (out.transpose(0, 1) if batch_first else out), h_n, c_n

_LAYER_ARGS = """input_size : int
        The number of features of each input step.
    hidden_size : int
        The number of features of the hidden state.
    num_layers : int, optional
        How many layers are stacked, each taking the previous one's output
        (default 1)."""
_LAYER_OPTIONS = """bias : bool, optional
        Whether the layers learn the biases ``b_ih`` and ``b_hh`` (default True).
    batch_first : bool, optional
        Whether input and output are ``(batch, seq, feature)`` rather than
        ``(seq, batch, feature)`` (default False). The hidden states keep
        ``(num_layers * num_directions, batch, hidden)`` either way.
    dropout : float, optional
        The probability of zeroing each output element of every layer but the
        last, in training mode (default 0).
    bidirectional : bool, optional
        Whether each layer also runs backwards in time (default False); the
        two directions' outputs are concatenated on the feature dim."""
_FACTORY = """device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`)."""
_LAYER_IO = """Inputs are ``input`` of shape ``(L, N, input_size)`` (``(N, L, input_size)``
    with ``batch_first``, ``(L, input_size)`` unbatched) or a
    :class:`~retrograd.nn.utils.rnn.PackedSequence`, and optionally the initial
    state, {state} (zeros when omitted). ``D`` is 2 when bidirectional, else 1.
    The output has shape ``(L, N, D * {out})`` (a PackedSequence for a packed input)
    and holds the last layer's hidden state at every step."""
_LAYER_WEIGHTS = """Attributes
    ----------
    weight_ih_l[k] : Parameter
        Layer ``k``'s input weights, of shape ``({g} * hidden_size, input_size)`` for
        ``k = 0`` and ``({g} * hidden_size, D * {out})`` after.
    weight_hh_l[k] : Parameter
        Layer ``k``'s hidden weights, of shape ``({g} * hidden_size, {out})``.
    bias_ih_l[k], bias_hh_l[k] : Parameter
        The biases, of shape ``({g} * hidden_size,)``.

    The reverse direction's parameters end in ``_reverse``. Every parameter is
    drawn from U(-k, k), ``k = 1 / sqrt(hidden_size)``, as torch's."""


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters of every layer and
    direction, argument checks, initialisation and the repr.

    Parameters
    ----------
    mode : {{'RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU'}}
        The kind of cell.
    {args}
    {options}
    proj_size : int, optional
        LSTM only: the size of the projected hidden state (default 0: none).
    {factory}

    Raises
    ------
    ValueError
        For an unknown mode, sizes that are not positive, a ``dropout`` outside
        [0, 1] or ``proj_size`` not below ``hidden_size``.
    TypeError
        For a non-bool ``bias`` / ``batch_first`` or a non-int size.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.RNNBase("LSTM", 10, 20, num_layers=2)
    >>> [name for name, _ in m.named_parameters()][:4]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    """

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, size in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(size, int):
                raise TypeError(f"{name} should be of type int, got: {type(size).__name__}")
            if size <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_input = input_size if layer == 0 else real_hidden * dirs
                shapes: list[tuple[str, tuple[int, ...]]] = [("weight_ih_l{}{}", (gate_size, layer_input)),
                                                             ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, "_reverse" if direction == 1 else "")
                    setattr(self, name, Parameter(_c.empty(shape, dtype=dtype, device=device)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, in torch's order
        (``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``, ``weight_hr``)."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Do nothing: torch packs the weights into one buffer for cuDNN here;
        retrograd's layers use the parameters as they are.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LSTM(4, 8)
        >>> m.flatten_parameters()
        """
        return None

    def reset_parameters(self) -> None:
        """Draw every parameter again from U(-k, k), ``k = 1 / sqrt(hidden_size)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.GRU(3, 16)
        >>> m.reset_parameters()
        >>> bool((m.weight_hh_l0.abs() <= 0.25).numpy().all())
        True
        """
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        """Raise if ``input`` does not fit the layer: its dtype, number of dims
        or feature count.

        Parameters
        ----------
        input : Tensor
            The (batched) input, or a PackedSequence's data.
        batch_sizes : Tensor or None
            The PackedSequence's batch sizes, None for a padded input.

        Raises
        ------
        ValueError
            If the input's dtype is not the weights'.
        RuntimeError
            For the wrong number of dims or of features.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.RNN(3, 4)
        >>> m.check_input(rg.zeros(5, 2, 4), None)
        Traceback (most recent call last):
          ...
        RuntimeError: input.size(-1) must be equal to input_size. Expected 3, got 4
        """
        w = self._flat_weights[0]
        if w is not None and input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to(rg.{w.dtype}), or convert model: model.to(rg.{input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        """The shape the hidden state ``h_0`` must have for ``input``.

        Parameters
        ----------
        input : Tensor
            The (batched) input, or a PackedSequence's data.
        batch_sizes : Tensor or None
            The PackedSequence's batch sizes, None for a padded input.

        Returns
        -------
        tuple of int
            ``(num_layers * num_directions, batch, proj_size or hidden_size)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.nn.GRU(3, 4, num_layers=2).get_expected_hidden_size(rg.zeros(5, 7, 3), None)
        (2, 7, 4)
        """
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.shape[0] if self.batch_first else input.shape[1]
        dirs = 2 if self.bidirectional else 1
        return (self.num_layers * dirs, batch, self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        """Raise RuntimeError if ``hx`` does not have the expected shape.

        Parameters
        ----------
        hx : Tensor
            A hidden state.
        expected_hidden_size : tuple of int
            The shape it must have.
        msg : str, optional
            The message, formatted with the expected and the actual shape.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.nn.RNN(3, 4).check_hidden_size(rg.zeros(1, 2, 4), (1, 2, 4))
        """
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None) -> None:
        """Check the input and the initial hidden state together (see
        :meth:`check_input` and :meth:`check_hidden_size`).

        Parameters
        ----------
        input : Tensor
            The (batched) input, or a PackedSequence's data.
        hidden : Tensor
            The initial hidden state (for an LSTM, the pair ``(h_0, c_0)``).
        batch_sizes : Tensor or None
            The PackedSequence's batch sizes, None for a padded input.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.nn.GRU(3, 4).check_forward_args(rg.zeros(5, 2, 3), rg.zeros(1, 2, 4), None)
        """
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        """Reorder the batch dim of a hidden state (the sorting of a
        PackedSequence's sequences, or its inverse).

        Parameters
        ----------
        hx : Tensor
            A hidden state (for an LSTM, the pair ``(h, c)``).
        permutation : Tensor or None
            The new order; None keeps ``hx``.

        Returns
        -------
        Tensor
            ``hx.index_select(1, permutation)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> h = rg.tensor([[[1.0], [2.0]]])
        >>> rg.nn.RNN(1, 1).permute_hidden(h, rg.tensor([1, 0])).flatten()
        tensor([2., 1.])
        """
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _forward_impl(self, input: Any, hx: Any) -> tuple[Any, Any]:
        lstm = self.mode == "LSTM"
        if lstm and hx is not None and not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise TypeError(f"LSTM: hx must be the pair (h_0, c_0) of Tensors, got {type(hx).__name__}")
        dirs = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed_cls = _packed_sequence_class()
        packed = isinstance(input, packed_cls)
        sorted_indices = unsorted_indices = None
        batch_sizes = None
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
            batch = int(batch_sizes[0])
            if hx is not None:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            name = "RNN" if self.mode.startswith("RNN") else self.mode
            if input.dim() not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                                 f"{' tensor' if name == 'RNN' else ''} instead")
            batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if hx is not None:
                states: Sequence[Tensor] = hx if lstm else (hx,)
                want = 3 if batched else 2
                if any(s.dim() != want for s in states):
                    what = "hx and cx" if lstm else "hx"
                    got = (f"({states[0].dim()}-D, {states[1].dim()}-D) tensors" if lstm
                           else f"{states[0].dim()}-D tensor")
                    raise RuntimeError(f"For {'batched 3-D' if batched else 'unbatched 2-D'} input, {what} should "
                                       f"also be {want}-D but got {got}")
                if not batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if lstm else hx.unsqueeze(1)
            if not batched:
                input = input.unsqueeze(batch_dim)
            batch = input.shape[batch_dim]
        if hx is None:
            zeros = dict(dtype=input.dtype, device=input.device)
            h_zeros = _c.zeros((self.num_layers * dirs, batch, real_hidden), **zeros)
            hx = (h_zeros, _c.zeros((self.num_layers * dirs, batch, self.hidden_size), **zeros)) if lstm else h_zeros
        self.check_forward_args(input, hx, batch_sizes)
        for state in (hx if lstm else (hx,)):
            if state.dtype != input.dtype:
                raise RuntimeError(f"the initial state's dtype ({state.dtype}) is not the input's ({input.dtype}); "
                                   f"convert it with .to(rg.{input.dtype})")
        sizes = None if batch_sizes is None else [int(v) for v in batch_sizes.tolist()]
        h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
        out, h_n, c_n = _run(self.mode, input, sizes, h0, c0, self._weights_by_layer(), self.num_layers,
                             self.bidirectional, self.dropout, self.training, self.batch_first)
        hidden = (h_n, c_n) if lstm else h_n
        if packed:
            return packed_cls(out, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            out = out.squeeze(batch_dim)
            hidden = (h_n.squeeze(1), c_n.squeeze(1)) if lstm else h_n.squeeze(1)
        return out, hidden

    def _weights_by_layer(self) -> list[list[Tensor | None]]:
        # each layer and direction's (w_ih, w_hh, b_ih, b_hh, w_hr), None where absent
        out = []
        for layer in range(self.num_layers):
            for suffix in (("", "_reverse") if self.bidirectional else ("",)):
                out.append([getattr(self, f"{kind}_l{layer}{suffix}", None)
                            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")])
        return out


RNNBase.__doc__ = (RNNBase.__doc__ or "").format(args=_LAYER_ARGS, options=_LAYER_OPTIONS, factory=_FACTORY)


def _no_proj_size(kwargs: dict, name: str) -> None:
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


class RNN(RNNBase):
    """A multi-layer Elman RNN: at each step ``t`` and layer,
    ``h_t = act(x_t @ W_ih.T + b_ih + h_(t-1) @ W_hh.T + b_hh)``, ``act``
    being tanh or ReLU.

    {io}

    Parameters
    ----------
    {args}
    nonlinearity : {{'tanh', 'relu'}}, optional
        The activation (default ``'tanh'``).
    {options}
    {factory}

    {weights}

    Raises
    ------
    ValueError
        For an unknown ``nonlinearity``, a ``proj_size`` (LSTM only) or an
        argument :class:`RNNBase` refuses.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> rnn = rg.nn.RNN(10, 20, 2)
    >>> output, h_n = rnn(rg.randn(5, 3, 10), rg.randn(2, 3, 20))
    >>> output.shape, h_n.shape
    ((5, 3, 20), (2, 3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, **kwargs: Any) -> None:
        _no_proj_size(kwargs, "RNN")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        """Run the layers over ``input`` from ``hx``; return ``(output, h_n)`` (shapes in the class docstring)."""
        return self._forward_impl(input, hx)


class LSTM(RNNBase):
    """A multi-layer long short-term memory RNN. At each step ``t`` and layer::

        i, f, g, o = split(x_t @ W_ih.T + b_ih + h_(t-1) @ W_hh.T + b_hh, 4)
        c_t = sigmoid(f) * c_(t-1) + sigmoid(i) * tanh(g)
        h_t = sigmoid(o) * tanh(c_t)            (then @ W_hr.T with proj_size)

    {io}

    Parameters
    ----------
    {args}
    {options}
    proj_size : int, optional
        If positive, each ``h_t`` is projected to this size by ``W_hr``
        (default 0: no projection); it must be below ``hidden_size``.
    {factory}

    {weights}
    weight_hr_l[k] : Parameter
        With ``proj_size``: the projection, of shape ``(proj_size, hidden_size)``.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> lstm = rg.nn.LSTM(10, 20, 2)
    >>> output, (h_n, c_n) = lstm(rg.randn(5, 3, 10))
    >>> output.shape, h_n.shape, c_n.shape
    ((5, 3, 20), (2, 3, 20), (2, 3, 20))
    >>> rg.nn.LSTM(10, 20, proj_size=8, bidirectional=True)(rg.randn(5, 10))[0].shape
    (5, 16)
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        """The shape the cell state ``c_0`` must have for ``input``.

        Parameters
        ----------
        input : Tensor
            The (batched) input, or a PackedSequence's data.
        batch_sizes : Tensor or None
            The PackedSequence's batch sizes, None for a padded input.

        Returns
        -------
        tuple of int
            ``(num_layers * num_directions, batch, hidden_size)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.nn.LSTM(3, 4, proj_size=2).get_expected_cell_size(rg.zeros(5, 7, 3), None)
        (1, 7, 4)
        """
        expected = self.get_expected_hidden_size(input, batch_sizes)
        return (expected[0], expected[1], self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None) -> None:
        """Check the input and both initial states ``(h_0, c_0)``."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        """Reorder the batch dim of both states ``(h, c)``."""
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input: Any, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Any, tuple[Tensor, Tensor]]:
        """Run the layers over ``input`` from ``hx = (h_0, c_0)``; return
        ``(output, (h_n, c_n))`` (shapes in the class docstring)."""
        return self._forward_impl(input, hx)


class GRU(RNNBase):
    """A multi-layer gated recurrent unit RNN. At each step ``t`` and layer::

        r = sigmoid(x_t @ W_ir.T + b_ir + h_(t-1) @ W_hr.T + b_hr)
        z = sigmoid(x_t @ W_iz.T + b_iz + h_(t-1) @ W_hz.T + b_hz)
        n = tanh(x_t @ W_in.T + b_in + r * (h_(t-1) @ W_hn.T + b_hn))
        h_t = (1 - z) * n + z * h_(t-1)

    {io}

    Parameters
    ----------
    {args}
    {options}
    {factory}

    {weights}

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> gru = rg.nn.GRU(10, 20, 2, batch_first=True)
    >>> output, h_n = gru(rg.randn(3, 5, 10))
    >>> output.shape, h_n.shape
    ((3, 5, 20), (2, 3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None, **kwargs: Any) -> None:
        _no_proj_size(kwargs, "GRU")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        """Run the layers over ``input`` from ``hx``; return ``(output, h_n)`` (shapes in the class docstring)."""
        return self._forward_impl(input, hx)


_H = "``(D * num_layers, N, H_out)``"
for _cls, _state, _out, _g in ((RNN, f"``h_0`` of shape {_H}", "H_out", 1),
                               (LSTM, f"``(h_0, c_0)``, ``h_0`` of shape {_H}, ``H_out`` being ``proj_size`` or "
                                      "``hidden_size``, and ``c_0`` of shape ``(D * num_layers, N, hidden_size)``",
                                "H_out", 4),
                               (GRU, f"``h_0`` of shape {_H}", "H_out", 3)):
    _cls.__doc__ = (_cls.__doc__ or "").format(
        io=_LAYER_IO.format(state=_state, out=_out), args=_LAYER_ARGS, options=_LAYER_OPTIONS, factory=_FACTORY,
        weights=_LAYER_WEIGHTS.format(g=_g, out=_out))
del _cls, _state, _out, _g


# -- the cells ------------------------------------------------------------------------

def _input_gates(x: Tensor, w_ih: Tensor, bias: Tensor | None) -> Tensor:
    return _c.mm(x, w_ih.t()) if bias is None else _c.addmm(bias, x, w_ih.t())


def _both_biases(b_ih: Tensor | None, b_hh: Tensor | None) -> Tensor | None:
    # the cells add both biases to the input's gates (each may be absent, as in torch's cell functions)
    if b_ih is None or b_hh is None:
        return b_hh if b_ih is None else b_ih
    return b_ih + b_hh


@composite_op("rnn_tanh_cell")
def _rnn_tanh_cell(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
                   b_hh: Tensor | None) -> Tensor:
    return _rnn_step(_input_gates(x, w_ih, _both_biases(b_ih, b_hh)), h, w_hh.t(), False)


@composite_op("rnn_relu_cell")
def _rnn_relu_cell(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
                   b_hh: Tensor | None) -> Tensor:
    return _rnn_step(_input_gates(x, w_ih, _both_biases(b_ih, b_hh)), h, w_hh.t(), True)


@composite_op("lstm_cell")
def _lstm_cell(x: Tensor, h: Tensor, c: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
               b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    return _lstm_step(_input_gates(x, w_ih, _both_biases(b_ih, b_hh)), h, c, w_hh.t(), None)


@composite_op("gru_cell")
def _gru_cell(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
              b_hh: Tensor | None) -> Tensor:
    x_rz, x_n = _input_gates(x, w_ih, b_ih).split([2 * h.shape[1], h.shape[1]], 1)
    return _gru_step(x_rz, x_n, h, w_hh.t(), b_hh)


_CELL_ARGS = """input_size : int
        The number of features of the input.
    hidden_size : int
        The number of features of the hidden state.
    bias : bool, optional
        Whether the cell learns the biases ``b_ih`` and ``b_hh`` (default True)."""
_CELL_WEIGHTS = """Attributes
    ----------
    weight_ih : Parameter
        Of shape ``({g} * hidden_size, input_size)``.
    weight_hh : Parameter
        Of shape ``({g} * hidden_size, hidden_size)``.
    bias_ih, bias_hh : Parameter or None
        Of shape ``({g} * hidden_size,)``.

    Every parameter is drawn from U(-k, k), ``k = 1 / sqrt(hidden_size)``."""


class RNNCellBase(Module):
    """What RNNCell, LSTMCell and GRUCell share: the parameters, their
    initialisation, the input checks and the repr.

    Parameters
    ----------
    {args}
    num_chunks : int
        The number of gates (1, 4 or 3): the weights have
        ``num_chunks * hidden_size`` rows.
    {factory}

    Examples
    --------
    >>> import retrograd as rg
    >>> cell = rg.nn.RNNCellBase(3, 4, bias=True, num_chunks=2)
    >>> cell.weight_ih.shape, cell.bias_hh.shape
    ((8, 3), (8,))
    """

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        rows = num_chunks * hidden_size
        self.weight_ih = Parameter(_c.empty((rows, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(_c.empty((rows, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(_c.empty(rows, dtype=dtype, device=device))
            self.bias_hh = Parameter(_c.empty(rows, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        """Draw every parameter again from U(-k, k), ``k = 1 / sqrt(hidden_size)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> cell = rg.nn.LSTMCell(3, 4)
        >>> cell.reset_parameters()
        >>> bool((cell.weight_ih.abs() <= 0.5).numpy().all())
        True
        """
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, name: str, input: Tensor, states: tuple, labels: tuple[str, ...]) -> tuple:
        # torch's checks, in its order: dims (ValueError), then sizes (RuntimeError)
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for label, s in zip(labels, states):
            if s is not None and s.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {s.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            states = tuple(None if s is None else s.unsqueeze(0) for s in states)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"{name}: the input's dtype ({input.dtype}) is not the weights' "
                               f"({self.weight_ih.dtype}); convert it with input.to(rg.{self.weight_ih.dtype})")
        out = []
        for i, s in enumerate(states):
            if s is None:
                s = _c.zeros((input.shape[0], self.hidden_size), dtype=input.dtype, device=input.device)
            elif s.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} batch size "
                                   f"{s.shape[0]}")
            elif s.dim() != 2 or s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, expected "
                                   f"{self.hidden_size}")
            elif s.dtype != input.dtype:
                raise RuntimeError(f"{name}: hidden{i}'s dtype ({s.dtype}) is not the input's ({input.dtype}); "
                                   f"convert it with .to(rg.{input.dtype})")
            out.append(s)
        return input, tuple(out), batched


RNNCellBase.__doc__ = (RNNCellBase.__doc__ or "").format(args=_CELL_ARGS, factory=_FACTORY)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = act(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)``.

    Takes ``input`` of shape ``(N, input_size)`` or ``(input_size,)`` and
    optionally ``hx`` of shape ``(N, hidden_size)`` or ``(hidden_size,)``
    (zeros when omitted); returns ``h'`` of ``hx``'s shape.

    Parameters
    ----------
    {args}
    nonlinearity : {{'tanh', 'relu'}}, optional
        The activation (default ``'tanh'``); another value raises
        RuntimeError when the cell runs, as torch's.
    {factory}

    {weights}

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> cell = rg.nn.RNNCell(10, 20)
    >>> x, hx = rg.randn(6, 3, 10), rg.randn(3, 20)
    >>> for t in range(6):
    ...     hx = cell(x[t], hx)
    >>> hx.shape
    (3, 20)
    """

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """One step from ``hx``; return the new hidden state."""
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, (h,), batched = self._prepare("RNNCell", input, (hx,), ("hidden",))
        cell = _rnn_tanh_cell if self.nonlinearity == "tanh" else _rnn_relu_cell
        ret = cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM (the gates as in :class:`LSTM`).

    Takes ``input`` of shape ``(N, input_size)`` or ``(input_size,)`` and
    optionally ``hx = (h, c)``, each of shape ``(N, hidden_size)`` or
    ``(hidden_size,)`` (zeros when omitted); returns ``(h', c')``.

    Parameters
    ----------
    {args}
    {factory}

    {weights}

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> cell = rg.nn.LSTMCell(10, 20)
    >>> x, hx, cx = rg.randn(2, 3, 10), rg.randn(3, 20), rg.randn(3, 20)
    >>> for t in range(2):
    ...     hx, cx = cell(x[t], (hx, cx))
    >>> hx.shape, cx.shape
    ((3, 20), (3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        """One step from ``hx = (h, c)``; return the new ``(h, c)``."""
        states: tuple[Tensor | None, ...]
        if hx is None:
            states = (None, None)
        elif isinstance(hx, Tensor) or not isinstance(hx, (tuple, list)):
            raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not "
                            f"{type(hx).__name__}")
        elif len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        else:
            states = tuple(hx)
        input, (h, c), batched = self._prepare("LSTMCell", input, states, ("hx[0]", "hx[1]"))
        h, c = _lstm_cell(input, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a GRU (the gates as in :class:`GRU`).

    Takes ``input`` of shape ``(N, input_size)`` or ``(input_size,)`` and
    optionally ``hx`` of shape ``(N, hidden_size)`` or ``(hidden_size,)``
    (zeros when omitted); returns ``h'`` of ``hx``'s shape.

    Parameters
    ----------
    {args}
    {factory}

    {weights}

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> cell = rg.nn.GRUCell(10, 20)
    >>> cell(rg.randn(10)).shape
    (20,)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """One step from ``hx``; return the new hidden state."""
        input, (h,), batched = self._prepare("GRUCell", input, (hx,), ("hidden",))
        ret = _gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if batched else ret.squeeze(0)


for _cell_cls, _g in ((RNNCell, 1), (LSTMCell, 4), (GRUCell, 3)):
    _cell_cls.__doc__ = (_cell_cls.__doc__ or "").format(args=_CELL_ARGS, factory=_FACTORY,
                                               weights=_CELL_WEIGHTS.format(g=_g))
del _cell_cls, _g
