"""default_collate and default_convert (``torch.utils.data._utils.collate``).

Collation turns a list of samples into one batch, recursively through the
samples' structure, with torch's rules (see ``default_collate``). The rules
by element type live in ``default_collate_fn_map``; ``collate(batch,
collate_fn_map=...)`` applies a map of one's own.
"""
from __future__ import annotations

import collections.abc
import copy
import re
from typing import Any, Callable

import numpy as np

from retrograd.core import Tensor, as_tensor, stack, tensor

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

# dtype.str kinds that hold no numbers: bytes ('S', or 'a' in old spellings),
# unicode ('U') and Python objects ('O'): such arrays are never collated.
_np_str_obj_kinds = re.compile(r"[SaUO]")

_err_fmt = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy_value(x) -> bool:
    # NumPy arrays and scalars, not NumPy's string scalars (left as they are)
    return isinstance(x, (np.ndarray, np.generic)) and not isinstance(x, (np.str_, np.bytes_))


def default_convert(data: Any) -> Any:
    """Convert the NumPy arrays inside ``data`` into tensors, keeping its structure.

    What the DataLoader applies to each sample when automatic batching is
    off (``batch_size=None``). NumPy arrays and scalars become tensors of
    the same dtype (sharing memory, as ``rg.as_tensor``), except arrays of
    strings or objects; mappings, namedtuples and sequences are converted
    element by element (a tuple becomes a list, as in torch); anything else,
    Python numbers included, is returned unchanged.

    Parameters
    ----------
    data : Any
        One sample.

    Returns
    -------
    Any
        ``data`` with its NumPy values converted.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> from retrograd.utils.data import default_convert
    >>> default_convert(np.array([1, 2]))
    tensor([1, 2])
    >>> default_convert({"x": np.float32(1.5), "n": 3})
    {'x': tensor(1.5), 'n': 3}
    >>> default_convert((np.zeros(1), "label"))
    [tensor([0.], dtype=float64), 'label']
    """
    if isinstance(data, Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and _np_str_obj_kinds.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        return _rebuild_mapping(data, converted)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(like, values: dict):
    """A mapping of ``like``'s type holding ``values`` (a plain dict when that fails)."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            # a copy keeps what the subclass carries besides its items
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _rebuild_sequence(like, values: list):
    """A sequence of ``like``'s type holding ``values`` (a list when that fails)."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(like)(values)
    except TypeError:   # e.g. range
        return values


def _collate_tensors(batch, *, collate_fn_map=None):
    return stack(list(batch), 0)


def _collate_numpy_arrays(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj_kinds.search(elem.dtype.str) is not None:
        raise TypeError(_err_fmt.format(elem.dtype))
    # np.stack then one tensor: the same values and dtype as stacking one
    # tensor per array, with one copy instead of n wrappers; mismatched
    # shapes raise as stack does.
    try:
        return as_tensor(np.stack(batch, 0))
    except ValueError as e:
        raise RuntimeError(f"stack expects each array to be equal size, got shapes "
                           f"{[tuple(a.shape) for a in batch]}") from e


def _collate_numpy_scalars(batch, *, collate_fn_map=None):
    return as_tensor(np.asarray(batch))


def _collate_floats(batch, *, collate_fn_map=None):
    return tensor(list(batch), dtype=np.float64)


def _collate_ints(batch, *, collate_fn_map=None):
    # ints give int64, bools (ints to Python) give bool, as torch.tensor
    return tensor(list(batch))


def _collate_strings(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: _collate_tensors,
    np.ndarray: _collate_numpy_arrays,          # memmap too (a subclass)
    (np.bool_, np.number, np.object_): _collate_numpy_scalars,
    float: _collate_floats,
    int: _collate_ints,
    str: _collate_strings,
    bytes: _collate_strings,
}


def collate(batch, *, collate_fn_map: dict | None = None) -> Any:
    """Collate ``batch`` with a map from element types to collate functions.

    The element type of ``batch[0]`` picks the function: an exact key of
    ``collate_fn_map`` first, then the first key (in insertion order) it is
    an instance of. Mappings, namedtuples and sequences without an entry are
    collated field by field, recursively.

    Parameters
    ----------
    batch : sequence
        The samples of one batch.
    collate_fn_map : dict, optional
        ``{type or tuple of types: fn(batch, *, collate_fn_map)}``.

    Returns
    -------
    Any
        The batch.

    Raises
    ------
    TypeError
        When an element type has no rule.
    RuntimeError
        When the sequences of a batch differ in length.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.data._collate import collate, default_collate_fn_map
    >>> rules = {**default_collate_fn_map, int: lambda b, *, collate_fn_map: sum(b)}
    >>> collate([(1, 2.0), (3, 4.0)], collate_fn_map=rules)
    [4, tensor([2., 4.])]
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for key in collate_fn_map:
            if isinstance(elem, key):
                return collate_fn_map[key](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        values = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        return _rebuild_mapping(elem, values)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns          # a tuple becomes a list, as torch
        return _rebuild_sequence(elem, columns)
    raise TypeError(_err_fmt.format(elem_type))


def default_collate(batch) -> Any:
    """Turn a list of samples into a batch, with torch's rules.

    What the DataLoader does with each batch by default. By the type of
    the samples:

    - Tensor: stacked along a new first dimension (``rg.stack``);
    - NumPy array: stacked into a tensor of its dtype (string and object
      arrays raise TypeError);
    - NumPy scalar: a 1-D tensor of its dtype;
    - Python float: a float64 tensor; int: an int64 tensor; bool: a bool
      tensor;
    - str and bytes: left as they are (the list of them);
    - mapping: the same keys, each value collated over the batch;
    - namedtuple: the same type, each field collated;
    - other sequences: collated position by position (a tuple gives a list;
      every sample must have the same length).

    Parameters
    ----------
    batch : list
        The samples of one batch.

    Returns
    -------
    Any
        The batch, with the structure of one sample.

    Raises
    ------
    TypeError
        When a sample holds something else (e.g. ``None`` or an object).
    RuntimeError
        When sequences of different lengths, or tensors of different
        shapes, meet in one batch.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> from retrograd.utils.data import default_collate
    >>> default_collate([0, 1, 2])
    tensor([0, 1, 2])
    >>> default_collate([1.5, 2.5]).dtype
    dtype('float64')
    >>> default_collate([("a", rg.zeros(2)), ("b", rg.ones(2))])
    [('a', 'b'), tensor([[0., 0.],
            [1., 1.]])]
    >>> default_collate([{"x": np.float32(1), "y": 0}, {"x": np.float32(2), "y": 1}])
    {'x': tensor([1., 2.]), 'y': tensor([0, 1])}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
