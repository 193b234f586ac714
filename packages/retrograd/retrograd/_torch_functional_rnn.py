"""torch's top-level recurrent ops ``torch.lstm``, ``torch.gru``,
``torch.rnn_tanh`` and ``torch.rnn_relu`` (as ``rg.lstm`` ...), with their
ATen signatures: the weights as one flat list in torch's order, and two
overloads, a padded input or a packed sequence's data with its batch sizes.

``nn.LSTM`` and friends run through the same function
(``retrograd.nn.modules.rnn._run``), so the twins and the layers share one
implementation of the recurrences. Loaded by ``retrograd._torch_functional``
(itself loaded on first use of one of its names).
"""
from __future__ import annotations

from typing import Any, Sequence

from retrograd.core import Tensor
from retrograd.nn.modules import rnn as _rnn

NAMES = ("lstm", "gru", "rnn_tanh", "rnn_relu")

_PADDED = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train", "bidirectional", "batch_first")
_PACKED = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout", "train", "bidirectional")


def _bind(names: tuple[str, ...], args: tuple, kwargs: dict, lstm: bool) -> dict | None:
    # the arguments as one overload's, or None where they do not fit it (torch's parser picks by type)
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in bound:
            return None
        bound[key] = value
    if len(bound) != len(names):
        return None
    hx, params = bound["hx"], bound["params"]
    hx_fits = (isinstance(hx, (tuple, list)) and all(isinstance(h, Tensor) for h in hx)) if lstm \
        else isinstance(hx, Tensor)
    params_fit = isinstance(params, (tuple, list)) and all(isinstance(p, Tensor) for p in params)
    first_fits = isinstance(bound[names[0]], Tensor)
    sizes_fit = "batch_sizes" not in bound or isinstance(bound["batch_sizes"], Tensor)
    return bound if hx_fits and params_fit and first_fits and sizes_fit else None


def _signature_error(name: str, args: tuple, kwargs: dict, lstm: bool) -> TypeError:
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    hx = "tuple of Tensors" if lstm else "Tensor"
    common = f"{hx} hx, tuple of Tensors params, bool has_biases, int num_layers, float dropout, bool train, " \
             "bool bidirectional"
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f" * (Tensor data, Tensor batch_sizes, {common})\n"
                     f" * (Tensor input, {common}, bool batch_first)")


def _check_state(name: str, state: Tensor, expected: tuple[int, int, int]) -> None:
    if tuple(state.shape) != expected:
        raise RuntimeError(f"{name}: expected a hidden state of size {expected}, got {tuple(state.shape)}")


def _layer_weights(params: Sequence[Tensor], has_biases: bool, has_proj: bool) -> list[list[Tensor | None]]:
    # ATen's gather_params: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]
    per = 2 + 2 * bool(has_biases) + bool(has_proj)
    if len(params) % per:
        raise RuntimeError("got an incorrect number of RNN parameters")
    out = []
    for i in range(0, len(params), per):
        group = list(params[i:i + per])
        biases = group[2:4] if has_biases else [None, None]
        out.append([group[0], group[1], biases[0], biases[1], group[-1] if has_proj else None])
    return out


def _call(name: str, mode: str, args: tuple, kwargs: dict) -> tuple:
    lstm = mode == "LSTM"
    padded = _bind(_PADDED, args, kwargs, lstm)
    bound = padded if padded is not None else _bind(_PACKED, args, kwargs, lstm)
    if bound is None:
        raise _signature_error(name, args, kwargs, lstm)
    packed = padded is None
    x: Tensor = bound["data"] if packed else bound["input"]
    hx, params = bound["hx"], list(bound["params"])
    num_layers, dropout, train = int(bound["num_layers"]), float(bound["dropout"]), bool(bound["train"])
    bidirectional, has_biases = bool(bound["bidirectional"]), bool(bound["has_biases"])
    if lstm and len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
    for state in (h0, c0):
        if state is not None and state.dim() != 3:
            raise RuntimeError(f"{name}: expected 3-D hidden states (num_layers * num_directions, batch, hidden), "
                               f"got a {state.dim()}-D one")
    # (ATen's rule: a cell state wider than the hidden state means the layers project)
    has_proj = lstm and c0 is not None and h0.shape[2] != c0.shape[2]
    weights = _layer_weights(params, has_biases, has_proj)
    dirs = 2 if bidirectional else 1
    if bidirectional and (h0.shape[0] % 2 or len(weights) % 2):
        raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
    if h0.shape[0] != num_layers * dirs:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if len(weights) != num_layers * dirs:
        raise RuntimeError("Expected more weights in stacked_rnn")
    sizes = None
    if packed:
        if x.dim() != 2:
            raise RuntimeError(f"{name}: a packed sequence's data must be 2-D (steps, features), got {x.dim()}-D")
        batch_sizes = bound["batch_sizes"]
        if batch_sizes.dtype.kind not in "iu":
            raise RuntimeError(f"{name}: expected scalar type Long for batch_sizes but found {batch_sizes.dtype}")
        sizes = [int(v) for v in batch_sizes.tolist()]
        if not sizes or sizes[-1] <= 0 or any(a < b for a, b in zip(sizes, sizes[1:])):
            raise RuntimeError(f"{name}: batch_sizes must be positive and non-increasing, got {sizes}")
        if sum(sizes) > x.shape[0]:
            raise RuntimeError(f"{name}: batch_sizes add up to {sum(sizes)} steps but data has {x.shape[0]} rows")
        if sum(sizes) < x.shape[0]:
            x = x[:sum(sizes)]            # (torch reads only the rows batch_sizes names)
        batch = sizes[0]
    else:
        if x.dim() != 3:
            raise RuntimeError(f"{name}: expected a 3-D input (seq_len, batch, features), or (batch, seq_len, "
                               f"features) with batch_first, got {x.dim()}-D")
        batch = x.shape[0] if bound["batch_first"] else x.shape[1]
    w_hh = weights[0][1]
    assert w_hh is not None
    h_out = w_hh.shape[1]
    _check_state(name, h0, (num_layers * dirs, batch, h_out))
    if c0 is not None:
        _check_state(name, c0, (num_layers * dirs, batch, w_hh.shape[0] // 4))
    for t in [h0] + ([c0] if c0 is not None else []) + [p for p in params]:
        if t.dtype != x.dtype:
            raise RuntimeError(f"{name}: the input's dtype ({x.dtype}) differs from a weight's or hidden state's "
                               f"({t.dtype}); convert them to one dtype (.to(rg.{x.dtype}))")
    if train and num_layers > 1 and dropout != 0 and not 0 <= dropout <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout}")
    out, h_n, c_n = _rnn._run(mode, x, sizes, h0, c0, weights, num_layers, bidirectional, dropout, train,
                              False if packed else bool(bound["batch_first"]))
    return (out, h_n, c_n) if lstm else (out, h_n)


_DOC = """torch.{name}: a stack of {what} layers with torch's ATen signature.

    Two overloads, as torch's: ``{name}(input, hx, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)`` over a padded
    input, and ``{name}(data, batch_sizes, hx, params, has_biases, num_layers,
    dropout, train, bidirectional)`` over a packed sequence's data.
    ``nn.{layer}`` computes the same thing from its parameters.

    Parameters
    ----------
    input : Tensor
        ``(seq_len, batch, input_size)``, or ``(batch, seq_len, input_size)``
        with ``batch_first`` (padded overload).
    data, batch_sizes : Tensor
        A :class:`~retrograd.nn.utils.rnn.PackedSequence`'s data
        ``(steps, input_size)`` and its (integer) batch sizes (packed overload).
    hx : {hx_type}
        The initial state{hx_more}, ``(num_layers * num_directions, batch,
        hidden)``.
    params : list of Tensor
        The weights, layer by layer and direction by direction, each group
        ``w_ih, w_hh`` then ``b_ih, b_hh`` when ``has_biases``{proj} (the order of
        ``nn.{layer}._flat_weights``).
    has_biases : bool
        Whether ``params`` holds the biases.
    num_layers : int
        How many layers are stacked.
    dropout : float
        The probability of zeroing each output of every layer but the last
        (when ``train``).
    train : bool
        Whether dropout applies.
    bidirectional : bool
        Whether each layer also runs backwards in time.
    batch_first : bool
        Padded overload: whether ``input`` and the output put the batch first.

    Returns
    -------
    tuple of Tensor
        ``{returns}``: the last layer's output at every step (the packed
        overload: 2-D, in the data's order) and the final state{hx_more} of
        every layer and direction.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> layer = rg.nn.{layer}(3, 4, num_layers=2)
    >>> x, h0 = rg.randn(5, 2, 3), rg.zeros(2, 2, 4)
    >>> out = rg.{name}(x, {example_hx}, layer._flat_weights, True, 2, 0.0, False, False, False)
    >>> out[0].shape, out[1].shape
    ((5, 2, 4), (2, 2, 4))
    """


def lstm(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor, Tensor]:
    return _call("lstm", "LSTM", args, kwargs)


def gru(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    return _call("gru", "GRU", args, kwargs)


def rnn_tanh(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    return _call("rnn_tanh", "RNN_TANH", args, kwargs)


def rnn_relu(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    return _call("rnn_relu", "RNN_RELU", args, kwargs)


for _fn, _what, _layer in ((lstm, "LSTM", "LSTM"), (gru, "GRU", "GRU"), (rnn_tanh, "tanh RNN", "RNN"),
                           (rnn_relu, "ReLU RNN", "RNN")):
    _is_lstm = _fn is lstm
    _fn.__doc__ = _DOC.format(
        name=_fn.__name__, what=_what, layer=_layer,
        hx_type="sequence of two Tensor" if _is_lstm else "Tensor",
        hx_more=" ``(h, c)``; ``c`` is ``(num_layers * num_directions, batch, hidden_size)`` and ``h``'s last "
                "dim is the projection size when the layers project" if _is_lstm else "",
        proj=", then ``w_hr`` when the layers project" if _is_lstm else "",
        returns="(output, h_n, c_n)" if _is_lstm else "(output, h_n)",
        example_hx="(h0, h0)" if _is_lstm else "h0")
del _fn, _what, _layer, _is_lstm
