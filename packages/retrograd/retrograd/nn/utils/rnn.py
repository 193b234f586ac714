"""Packed and padded sequences for the recurrent layers (torch.nn.utils.rnn).

A batch of sequences of different lengths is either *padded* (one tensor
``(T, B, *)``, or ``(B, T, *)`` batch-first, with filler after each
sequence's end) or *packed*: a :class:`PackedSequence` holds only the real
steps, time-major, the sequences sorted by decreasing length, and
``batch_sizes[t]`` tells how many sequences are still running at step ``t``.
The recurrent layers take packed input and skip the filler.

Every conversion here is one ``index_select`` (with indices computed on the
host from the lengths), so gradients flow through packing and unpacking.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import composite_op

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
    "unpad_sequence", "pack_sequence", "unpack_sequence",
]

_BATCH_FIRST = """batch_first : bool, optional
        Whether the padded tensor is ``(B, T, *)`` (True) or ``(T, B, *)``
        (False, the default)."""
_ENFORCE_SORTED = """enforce_sorted : bool, optional
        True (the default) requires the sequences sorted by decreasing
        length; False sorts them and records the permutation in the result's
        ``sorted_indices`` / ``unsorted_indices``, which the recurrent layers
        and the unpacking functions undo."""


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _index(values: Any, device: Any) -> Tensor:
    return _c.tensor(np.asarray(values, dtype=np.int64), device=device)


class PackedSequence(_PackedSequenceFields):
    """A batch of variable-length sequences, packed: the real time steps only.

    Made by :func:`pack_padded_sequence` or :func:`pack_sequence` (not by
    hand) and taken by the recurrent layers. A 4-tuple
    ``(data, batch_sizes, sorted_indices, unsorted_indices)``.

    Parameters
    ----------
    data : Tensor
        Of shape ``(sum(lengths), *)``: step 0 of every sequence, then step 1
        of those still running, and so on (sequences in decreasing length).
    batch_sizes : Tensor, optional
        int64 on the CPU: how many sequences are running at each step.
        Omitted, ``data`` is the pair ``(data, batch_sizes)``.
    sorted_indices : Tensor, optional
        ``sorted_indices[i]`` is the original position of the ``i``-th
        sequence in sorted order; None when the input was already sorted.
    unsorted_indices : Tensor, optional
        The inverse permutation of ``sorted_indices`` (computed when omitted).

    Attributes
    ----------
    data : Tensor
        The packed steps.
    batch_sizes : Tensor
        The batch size of each step.
    sorted_indices : Tensor or None
        The sorting permutation.
    unsorted_indices : Tensor or None
        Its inverse.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([rg.tensor([1.0, 2.0, 3.0]), rg.tensor([4.0, 5.0])])
    >>> p.data
    tensor([1., 4., 2., 5., 3.])
    >>> p.batch_sizes
    tensor([2, 2, 1])
    >>> data, batch_sizes, sorted_indices, unsorted_indices = p
    """

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise TypeError("PackedSequence(data) without batch_sizes expects data to be the pair "
                                "(data, batch_sizes)")
            data, batch_sizes = data
        if batch_sizes.device.type_name != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                             "created manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequence in rg.nn.utils.rnn.")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data: Tensor) -> PackedSequence:
        # batch_sizes stay on the host; the permutations follow the data
        if data is self.data:
            return self
        def move(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.to(data.device)
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Convert ``data`` as :meth:`Tensor.to <retrograd.Tensor.to>` does,
        moving the permutations to its device (``batch_sizes`` stays on the CPU).

        Parameters
        ----------
        *args, **kwargs
            What ``Tensor.to`` takes: a dtype, a device, or both.

        Returns
        -------
        PackedSequence
            ``self`` when nothing changes, else a new one.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pack_sequence
        >>> p = pack_sequence([rg.ones(2), rg.ones(1)])
        >>> p.to(rg.float64).data.dtype
        dtype('float64')
        >>> p.to(rg.float32) is p
        True
        """
        return self._with_data(self.data.to(*args, **kwargs))

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Move ``data`` (and the permutations) to a GPU, as :meth:`Tensor.cuda <retrograd.Tensor.cuda>`.

        Parameters
        ----------
        *args, **kwargs
            What ``Tensor.cuda`` takes (the device).

        Returns
        -------
        PackedSequence
            On the GPU.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pack_sequence
        >>> p = pack_sequence([rg.ones(2), rg.ones(1)])
        >>> if rg.cuda.is_available():
        ...     p = p.cuda()
        """
        return self._with_data(self.data.cuda(*args, **kwargs))

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Move ``data`` (and the permutations) to the CPU.

        Parameters
        ----------
        *args, **kwargs
            What :meth:`Tensor.cpu <retrograd.Tensor.cpu>` takes.

        Returns
        -------
        PackedSequence
            On the CPU (``self`` when it is there already).

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pack_sequence
        >>> p = pack_sequence([rg.ones(2), rg.ones(1)])
        >>> p.cpu() is p
        True
        """
        return self._with_data(self.data.cpu(*args, **kwargs))

    def pin_memory(self) -> PackedSequence:
        """Return a copy whose ``data`` and permutations are in pinned host memory.

        Returns
        -------
        PackedSequence
            As :meth:`Tensor.pin_memory <retrograd.Tensor.pin_memory>` gives them.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pack_sequence
        >>> p = pack_sequence([rg.ones(2), rg.ones(1)])
        >>> p.pin_memory().batch_sizes
        tensor([2, 1])
        """
        def pin(t: Tensor | None) -> Tensor | None:
            return None if t is None else t.pin_memory()
        return type(self)(self.data.pin_memory(), self.batch_sizes, pin(self.sorted_indices),
                          pin(self.unsorted_indices))

    def is_pinned(self) -> bool:
        """Whether ``data`` is in pinned host memory.

        Returns
        -------
        bool
            ``data.is_pinned()``.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pack_sequence
        >>> pack_sequence([rg.ones(2), rg.ones(1)]).is_pinned()
        False
        """
        return bool(self.data.is_pinned())

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a GPU."""
        return bool(self.data.is_cuda)


# the dtype shorthands of PackedSequence (torch's double(), float(), ...): each converts ``data`` with to()
_SHORTHAND_DOC = """``data`` in {dtype} (see :meth:`to`).

        Returns
        -------
        PackedSequence
            Converted.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.nn.utils.rnn import pack_sequence
        >>> pack_sequence([rg.ones(2)]).{name}().data.dtype
        dtype('{dtype}')
        """


def _dtype_shorthand(name: str, dtype: str) -> Any:
    def method(self: PackedSequence) -> PackedSequence:
        return self.to(dtype=getattr(_c, dtype))
    method.__name__ = name
    method.__qualname__ = f"PackedSequence.{name}"
    method.__doc__ = _SHORTHAND_DOC.format(name=name, dtype=dtype)
    return method


for _name, _dtype in (("double", "float64"), ("float", "float32"), ("half", "float16"), ("long", "int64"),
                      ("int", "int32"), ("short", "int16"), ("char", "int8"), ("byte", "uint8")):
    setattr(PackedSequence, _name, _dtype_shorthand(_name, _dtype))
del _name, _dtype


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of ``0..n-1`` (None stays None).

    Parameters
    ----------
    permutation : Tensor or None
        A 1-d int64 tensor holding each of ``0..n-1`` once.

    Returns
    -------
    Tensor or None
        ``inv`` with ``inv[permutation[i]] == i``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.rnn import invert_permutation
    >>> invert_permutation(rg.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    return _c.argsort(permutation)


def _lengths_list(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.device.type_name != "cpu":
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                               f"{lengths.device} {lengths.dtype} tensor")
        return [int(v) for v in lengths.to(_c.int64).tolist()]
    return [int(v) for v in np.asarray(lengths, dtype=np.int64).reshape(-1)]


@composite_op("_pack_padded_sequence")
def _pack(input: Tensor, lengths: list[int], batch_first: bool) -> tuple[Tensor, Tensor]:
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else (input.shape[0], input.shape[1])
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                           "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    if lengths[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a sequence of length {lengths[0]} does not fit in the "
                           f"input's {steps} time steps")
    lens = np.asarray(lengths, dtype=np.int64)
    batch_sizes = (lens[None, :] > np.arange(lengths[0])[:, None]).sum(axis=1)
    # the flat rows of the padded input, step by step, the running sequences of each step
    t_idx = np.repeat(np.arange(lengths[0]), batch_sizes)
    b_idx = np.concatenate([np.arange(n) for n in batch_sizes])
    rows = b_idx * steps + t_idx if batch_first else t_idx * batch + b_idx
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _index(rows, input.device))
    return data, _c.tensor(batch_sizes.astype(np.int64), device="cpu")


def pack_padded_sequence(input: Tensor, lengths: Tensor | list[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch of variable-length sequences.

    Parameters
    ----------
    input : Tensor
        Of shape ``(T, B, *)`` (or ``(B, T, *)`` with ``batch_first``), each
        sequence followed by padding.
    lengths : list of int or Tensor
        Each sequence's length (a Tensor must be 1-d int64 on the CPU), all
        positive and at most ``T``.
    {batch_first}
    {enforce_sorted}

    Returns
    -------
    PackedSequence
        The sequences' real steps.

    Raises
    ------
    RuntimeError
        For a length that is not positive or exceeds ``T``, a count of
        lengths that is not the batch size, or unsorted lengths under
        ``enforce_sorted``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.rnn import pack_padded_sequence
    >>> x = rg.tensor([[1.0, 4.0], [2.0, 5.0], [3.0, 0.0]])   # (T=3, B=2), lengths 3 and 2
    >>> p = pack_padded_sequence(x, [3, 2])
    >>> p.data, p.batch_sizes
    (tensor([1., 4., 2., 5., 3.]), tensor([2, 2, 1]))
    >>> pack_padded_sequence(x.flip(1), [2, 3], enforce_sorted=False).sorted_indices
    tensor([1, 0])
    """
    lens = _lengths_list(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        order = np.argsort(-np.asarray(lens, dtype=np.int64), kind="stable")
        lens = [lens[i] for i in order]
        sorted_indices = _index(order, input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack(input, lens, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


pack_padded_sequence.__doc__ = (pack_padded_sequence.__doc__ or "").format(batch_first=_BATCH_FIRST,
                                                                           enforce_sorted=_ENFORCE_SORTED)


@composite_op("_pad_packed_sequence")
def _unpack(data: Tensor, batch_sizes: list[int], order: np.ndarray, batch_first: bool, padding_value: float,
            total_length: int) -> Tensor:
    # gather from the packed rows plus one extra row of padding_value, each
    # padded position (in the caller's batch order) taking its row
    sizes = np.asarray(batch_sizes, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    n = data.shape[0]
    batch = len(order)
    rows = np.full((total_length, batch), n, dtype=np.int64)
    running = order[None, :] < sizes[:, None]
    rows[:len(sizes)] = np.where(running, offsets[:, None] + order[None, :], n)
    if batch_first:
        rows = rows.T
    pad = _c.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = _c.cat([data, pad], 0).index_select(0, _index(rows.reshape(-1), data.device))
    return padded.reshape(rows.shape + tuple(data.shape[1:]))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Unpack a :class:`PackedSequence` into a padded tensor (the inverse of
    :func:`pack_padded_sequence`).

    Parameters
    ----------
    sequence : PackedSequence
        The packed batch.
    {batch_first}
    padding_value : float, optional
        The filler after each sequence's end (default 0).
    total_length : int, optional
        Pad to this many steps (at least the longest sequence's length)
        instead of the longest sequence's length.

    Returns
    -------
    padded : Tensor
        Of shape ``(T, B, *)`` (or ``(B, T, *)``), the sequences in their
        original order.
    lengths : Tensor
        int64: each sequence's length.

    Raises
    ------
    ValueError
        If ``total_length`` is shorter than the longest sequence.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> p = pack_sequence([rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0, 5.0])], enforce_sorted=False)
    >>> padded, lengths = pad_packed_sequence(p, batch_first=True, padding_value=-1.0)
    >>> padded
    tensor([[ 1.,  2., -1.],
            [ 3.,  4.,  5.]])
    >>> lengths
    tensor([2, 3])
    """
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_len}")
        max_len = total_length
    lengths = (np.asarray(sizes, dtype=np.int64)[None, :] > np.arange(sizes[0])[:, None]).sum(axis=1)
    order = np.arange(sizes[0])
    if sequence.unsorted_indices is not None:
        order = np.asarray(sequence.unsorted_indices.cpu().tolist(), dtype=np.int64)
    padded = _unpack(sequence.data, sizes, order, batch_first, padding_value, max_len)
    return padded, _c.tensor(lengths[order].astype(np.int64), device="cpu")


pad_packed_sequence.__doc__ = (pad_packed_sequence.__doc__ or "").format(batch_first=_BATCH_FIRST)


def pad_sequence(sequences: Tensor | Iterable[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Pad a list of variable-length sequences into one tensor.

    Parameters
    ----------
    sequences : iterable of Tensor
        Each of shape ``(L_i, *)``, the same trailing dims ``*`` (a tensor
        counts as the list of its rows).
    {batch_first}
    padding_value : float, optional
        The filler (default 0).
    padding_side : {{'right', 'left'}}, optional
        Where the filler goes (default ``'right'``: after each sequence).

    Returns
    -------
    Tensor
        Of shape ``(max L_i, B, *)`` (or ``(B, max L_i, *)``), in the first
        sequence's dtype.

    Raises
    ------
    RuntimeError
        For an empty list, trailing dims that differ, or an unknown
        ``padding_side``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.rnn import pad_sequence
    >>> seqs = [rg.tensor([1.0, 2.0, 3.0]), rg.tensor([4.0])]
    >>> pad_sequence(seqs, batch_first=True)
    tensor([[1., 2., 3.],
            [4., 0., 0.]])
    >>> pad_sequence(seqs, batch_first=True, padding_side="left").tolist()
    [[1.0, 2.0, 3.0], [0.0, 0.0, 4.0]]
    >>> pad_sequence(seqs).shape
    (3, 2)
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    seqs = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = seqs[0]
    trailing = tuple(first.shape[1:])
    parts = []
    for i, s in enumerate(seqs):
        if not isinstance(s, Tensor):
            raise TypeError(f"pad_sequence(): expected a sequence of Tensors, but element {i} is "
                            f"{type(s).__name__}")
        if s.dtype != first.dtype:
            s = s.to(first.dtype)
        if tuple(s.shape[1:]) != trailing:
            if s.dim() == 0:
                raise RuntimeError(f"pad_sequence: sequence {i} is a 0-d tensor; each sequence needs a first "
                                   "(time) dim")
            try:
                s = _c.broadcast_to(s, (s.shape[0],) + trailing)
            except (RuntimeError, ValueError) as err:
                raise RuntimeError(f"pad_sequence: sequence {i} has shape {tuple(s.shape)}, whose trailing dims "
                                   f"do not fit the first sequence's {trailing}") from err
        parts.append(s)
    return _pad(parts, batch_first, padding_value, padding_side)


@composite_op("pad_sequence")
def _pad(parts: list[Tensor], batch_first: bool, padding_value: float, padding_side: str) -> Tensor:
    first = parts[0]
    trailing = tuple(first.shape[1:])
    lens = np.asarray([s.shape[0] for s in parts], dtype=np.int64)
    total, longest = int(lens.sum()), int(lens.max())
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    pos = np.arange(longest)[None, :]                    # (1, L)
    if padding_side == "left":
        pos = pos - (longest - lens)[:, None]            # (B, L): step within each sequence
    rows = np.where((pos >= 0) & (pos < lens[:, None]), starts[:, None] + pos, total)
    if not batch_first:
        rows = rows.T
    pad = _c.full((1,) + trailing, padding_value, dtype=first.dtype, device=first.device)
    out = _c.cat(parts + [pad], 0).index_select(0, _index(rows.reshape(-1), first.device))
    return out.reshape(rows.shape + trailing)


pad_sequence.__doc__ = (pad_sequence.__doc__ or "").format(batch_first=_BATCH_FIRST)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor | list[int], batch_first: bool = False) -> list[Tensor]:
    """Split a padded tensor back into its sequences (the inverse of :func:`pad_sequence`).

    Parameters
    ----------
    padded_sequences : Tensor
        Of shape ``(T, B, *)`` (or ``(B, T, *)``), right-padded.
    lengths : Tensor or list of int
        Each sequence's length.
    {batch_first}

    Returns
    -------
    list of Tensor
        ``B`` new tensors, of shapes ``(lengths[i], *)``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.rnn import pad_sequence, unpad_sequence
    >>> padded = pad_sequence([rg.tensor([1.0, 2.0]), rg.tensor([3.0])])
    >>> unpad_sequence(padded, rg.tensor([2, 1]))
    [tensor([1., 2.]), tensor([3.])]
    """
    lens = [int(v) for v in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]
    batch_dim = 0 if batch_first else 1
    if len(lens) != padded_sequences.shape[batch_dim]:
        raise ValueError(f"unpad_sequence: {len(lens)} lengths for a batch of {padded_sequences.shape[batch_dim]} "
                         "sequences")
    out = []
    for b, n in enumerate(lens):
        seq = padded_sequences.select(batch_dim, b)
        out.append(seq.index_select(0, _index(np.arange(n), padded_sequences.device)))
    return out


unpad_sequence.__doc__ = (unpad_sequence.__doc__ or "").format(batch_first=_BATCH_FIRST)


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of variable-length sequences (:func:`pad_sequence`, then
    :func:`pack_padded_sequence`).

    Parameters
    ----------
    sequences : list of Tensor
        Each of shape ``(L_i, *)``, in decreasing length unless
        ``enforce_sorted`` is False.
    {enforce_sorted}

    Returns
    -------
    PackedSequence
        The packed batch.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([rg.tensor([1.0]), rg.tensor([2.0, 3.0])], enforce_sorted=False)
    >>> p.data, p.batch_sizes, p.sorted_indices
    (tensor([2., 1., 3.]), tensor([2, 1]), tensor([1, 0]))
    """
    lengths = [int(v.shape[0]) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


pack_sequence.__doc__ = (pack_sequence.__doc__ or "").format(enforce_sorted=_ENFORCE_SORTED)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """Split a :class:`PackedSequence` into its sequences (the inverse of :func:`pack_sequence`).

    Parameters
    ----------
    packed_sequences : PackedSequence
        The packed batch.

    Returns
    -------
    list of Tensor
        The sequences, in their original order.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> p = pack_sequence([rg.tensor([1.0]), rg.tensor([2.0, 3.0])], enforce_sorted=False)
    >>> unpack_sequence(p)
    [tensor([1.]), tensor([2., 3.])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
