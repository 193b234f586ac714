"""rg.save and rg.load: state dicts and nested containers of tensors, as .npz.

The file is a NumPy ``.npz`` archive (``np.savez``): one entry per tensor or
array, and one entry, ``__manifest__``, holding a small JSON document that
describes the saved object: its containers, scalars and strings, and for
each tensor the entry holding its values and its dtype, shape, device and
``requires_grad``. Nothing is pickled, so loading a file runs no code from
it: ``load`` reads the archive with ``allow_pickle=False`` and rebuilds only
the kinds of objects listed below (torch's ``weights_only=True`` promise,
kept for every file).

What can be saved: tensors (Parameters stay Parameters), NumPy arrays and
scalars of bool, integer, floating or complex dtype, Python ``bool``,
``int``, ``float``, ``complex``, ``str`` and ``None``, and ``dict``,
``OrderedDict`` (with the ``_metadata`` a module's state dict carries),
``list`` and ``tuple`` of these, nested. Dict keys may be any of the scalars
or tuples of them (an optimizer's state is keyed by int). A tensor that
appears several times is saved once and loads as one object.
"""
from __future__ import annotations

import json
import os
import pickle
from collections import OrderedDict
from typing import IO, Any, Union

import numpy as np

from retrograd.core import Device, Tensor

__all__ = ["save", "load"]

_FORMAT = "retrograd.save"
_VERSION = 1
_MANIFEST = "__manifest__"
# the dtype kinds an .npz holds without pickling: bool, ints, floats, complex
_ARRAY_KINDS = "biufc"
_SUPPORTED = ("tensors, NumPy arrays and scalars (bool, int, float, complex dtypes), bool, int, float, "
              "complex, str, None, and dict, OrderedDict, list and tuple of these")

FileLike = Union[str, "os.PathLike[str]", IO[bytes]]


class _Writer:
    # turns an object into its manifest node, collecting the arrays
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.tensor_keys: dict[int, str] = {}
        self._keep: list = []       # the saved tensors stay alive: their ids stay unique

    def _array_entry(self, arr: np.ndarray, what: str) -> str:
        if arr.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(f"rg.save cannot save {what} of dtype {arr.dtype}: only bool, integer, floating and "
                            "complex dtypes are saved (anything else would need pickle)")
        key = f"a{len(self.arrays)}"
        self.arrays[key] = arr
        return key

    def node(self, obj: Any, path: str) -> dict:
        from retrograd.nn.parameter import Parameter
        if isinstance(obj, Tensor):
            if id(obj) in self.tensor_keys:
                return {"type": "ref", "key": self.tensor_keys[id(obj)]}
            arr = np.asarray(obj.detach().numpy(force=True))      # (a host copy of a device tensor)
            key = self._array_entry(arr, f"the tensor at {path}")
            self.tensor_keys[id(obj)] = key
            self._keep.append(obj)
            return {"type": "tensor", "key": key, "dtype": arr.dtype.str, "shape": list(arr.shape),
                    "device": str(obj.device), "requires_grad": bool(obj.requires_grad),
                    "parameter": isinstance(obj, Parameter)}
        if isinstance(obj, np.ndarray):
            return {"type": "ndarray", "key": self._array_entry(obj, f"the array at {path}"),
                    "dtype": obj.dtype.str, "shape": list(obj.shape)}
        if isinstance(obj, np.generic):      # before float: np.float64 is a float
            arr = np.asarray(obj)
            return {"type": "npscalar", "key": self._array_entry(arr, f"the NumPy scalar at {path}"),
                    "dtype": arr.dtype.str}
        if obj is None:
            return {"type": "none"}
        if isinstance(obj, bool):            # before int: bool is an int
            return {"type": "bool", "value": obj}
        if type(obj) is int:
            return {"type": "int", "value": str(obj)}
        if type(obj) is float:
            return {"type": "float", "value": repr(obj)}     # repr round-trips exactly, nan and inf included
        if type(obj) is complex:
            return {"type": "complex", "real": repr(obj.real), "imag": repr(obj.imag)}
        if type(obj) is str:
            return {"type": "str", "value": obj}
        if type(obj) is list or type(obj) is tuple:
            return {"type": type(obj).__name__,
                    "items": [self.node(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        if type(obj) is dict or type(obj) is OrderedDict:
            items = [[self.key_node(k, path), self.node(v, f"{path}[{k!r}]")] for k, v in obj.items()]
            node: dict[str, Any] = {"type": "dict" if type(obj) is dict else "ordereddict", "items": items}
            metadata = getattr(obj, "_metadata", None)
            if metadata is not None:
                node["metadata"] = self.node(metadata, f"{path}._metadata")
            return node
        hint = "; save its state_dict() instead" if callable(getattr(obj, "state_dict", None)) else ""
        raise TypeError(f"rg.save cannot save the {type(obj).__module__}.{type(obj).__qualname__} object at "
                        f"{path}: it saves only {_SUPPORTED} (a file that needs no pickle to load){hint}")

    def key_node(self, key: Any, path: str) -> dict:
        if isinstance(key, tuple):
            return {"type": "tuple", "items": [self.key_node(k, path) for k in key]}
        if key is None or type(key) in (bool, int, float, complex, str):
            return self.node(key, path)
        raise TypeError(f"rg.save cannot save the dict key {key!r} of type {type(key).__name__} at {path}: "
                        "keys must be str, int, float, complex, bool, None or tuples of them")


def save(obj: Any, f: FileLike) -> None:
    """Save a state dict (or a nested container of tensors) to a file, without pickle.

    The file is an ``.npz`` archive with a JSON manifest (see the module's
    description); :func:`load` reads it back with the same dtypes, shapes,
    devices and ``requires_grad`` flags, and the same containers.

    Parameters
    ----------
    obj : object
        What to save: tensors, NumPy arrays and scalars, Python scalars,
        strings and None, in dicts, OrderedDicts, lists and tuples, nested
        (a module's ``state_dict()``, an optimizer's ``state_dict()``).
    f : str, os.PathLike or binary file object
        Where to write. A path is written as given (no suffix is added).

    Raises
    ------
    TypeError
        If ``obj`` holds something else (the message names it and where it
        is), or an array of a dtype that would need pickle.

    Examples
    --------
    >>> import io
    >>> import retrograd as rg
    >>> buf = io.BytesIO()
    >>> rg.save({"w": rg.tensor([1.0, 2.0], requires_grad=True), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> rg.load(buf)
    {'w': tensor([1., 2.], requires_grad=True), 'step': 3}
    """
    writer = _Writer()
    manifest = {"format": _FORMAT, "version": _VERSION, "root": writer.node(obj, "the top level")}
    entries = dict(writer.arrays)
    entries[_MANIFEST] = np.frombuffer(json.dumps(manifest).encode("utf-8"), dtype=np.uint8)
    # (the type: ignores: numpy's stub types **kwds as savez's allow_pickle)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            np.savez(fh, **entries)  # type: ignore[arg-type]
    else:
        np.savez(f, **entries)  # type: ignore[arg-type]


class _Reader:
    def __init__(self, archive: Any, map_location: Any) -> None:
        self.archive = archive
        self.map_location = map_location
        self.tensors: dict[str, Tensor] = {}

    def _array(self, node: dict) -> np.ndarray:
        try:
            arr = self.archive[node["key"]]
        except ValueError as e:
            # an object array in the archive: np.load refuses to unpickle it
            raise pickle.UnpicklingError(
                f"rg.load refused entry {node['key']!r}: {e}. rg.load never unpickles; the file was not "
                "written by rg.save") from None
        if arr.dtype.str != node["dtype"] or list(arr.shape) != list(node.get("shape", arr.shape)):
            raise ValueError(f"rg.load: entry {node['key']!r} holds a {arr.dtype.str} array of shape "
                             f"{tuple(arr.shape)}, but the manifest says {node['dtype']} "
                             f"{tuple(node.get('shape', ()))}: the file is damaged")
        return arr

    def _device(self, saved: str) -> Any:
        loc = self.map_location
        if loc is None:
            return saved
        if isinstance(loc, (str, Device)):
            return loc
        if isinstance(loc, dict):
            return loc.get(saved, saved)
        raise TypeError(f"rg.load: map_location must be None, a device (str or rg.device) or a dict mapping "
                        f"saved device names to devices, not {type(loc).__name__}")

    def tensor(self, node: dict) -> Tensor:
        from retrograd.nn.parameter import Parameter
        arr = self._array(node)
        device = self._device(node["device"])
        t = Tensor(arr)
        if str(device) != "cpu":
            try:
                t = t.to(device=device)
            except Exception as e:
                raise RuntimeError(
                    f"rg.load: cannot restore a tensor saved on {node['device']} to {device}: {e}. Pass "
                    "map_location='cpu' (or another available device) to load it elsewhere.") from e
        if node.get("parameter"):
            t = Parameter(t, requires_grad=node["requires_grad"])
        elif node["requires_grad"]:
            t.requires_grad_(True)
        self.tensors[node["key"]] = t
        return t

    def obj(self, node: dict) -> Any:
        kind = node.get("type")
        if kind == "tensor":
            return self.tensor(node)
        if kind == "ref":
            return self.tensors[node["key"]]
        if kind == "ndarray":
            return self._array(node)
        if kind == "npscalar":
            return self._array(node)[()]
        if kind == "none":
            return None
        if kind == "bool":
            return bool(node["value"])
        if kind == "int":
            return int(node["value"])
        if kind == "float":
            return float(node["value"])
        if kind == "complex":
            return complex(float(node["real"]), float(node["imag"]))
        if kind == "str":
            return str(node["value"])
        if kind == "list":
            return [self.obj(v) for v in node["items"]]
        if kind == "tuple":
            return tuple(self.obj(v) for v in node["items"])
        if kind in ("dict", "ordereddict"):
            pairs = [(self.obj(k), self.obj(v)) for k, v in node["items"]]
            d = dict(pairs) if kind == "dict" else OrderedDict(pairs)
            if "metadata" in node:
                d._metadata = self.obj(node["metadata"])  # type: ignore[attr-defined]
            return d
        raise ValueError(f"rg.load: the manifest holds an object of unknown type {kind!r}; the file was written "
                         "by a newer retrograd or is damaged")


def load(f: FileLike, weights_only: bool = True, map_location: Any = None) -> Any:
    """Load what :func:`save` wrote, without unpickling anything.

    Parameters
    ----------
    f : str, os.PathLike or binary file object
        The file (a file object must be seekable).
    weights_only : bool, optional
        torch's switch. Every file :func:`save` writes holds only the kinds
        of objects it lists, so both values load the same, and neither
        unpickles.
    map_location : str, rg.device or dict, optional
        Where the tensors go: None puts each on the device it was saved
        from; a device puts all there; a dict maps saved device names
        (``"cuda:0"``) to devices, the others staying where they were.

    Returns
    -------
    object
        The saved object, with the same containers, dtypes, shapes,
        devices and ``requires_grad`` flags; tensors are new leaves.

    Raises
    ------
    pickle.UnpicklingError
        If the file holds pickled data (it was not written by :func:`save`).
    ValueError
        If the file is not an archive written by :func:`save`, or is damaged.
    RuntimeError
        If a tensor's device is not available (pass ``map_location``).
    TypeError
        If ``map_location`` is of an unsupported kind.

    Examples
    --------
    >>> import io
    >>> import retrograd as rg
    >>> buf = io.BytesIO()
    >>> rg.save([rg.tensor([1, 2], dtype=rg.int32), (1.5, "text", None)], buf)
    >>> _ = buf.seek(0)
    >>> rg.load(buf)
    [tensor([1, 2], dtype=int32), (1.5, 'text', None)]
    """
    try:
        archive = np.load(f, allow_pickle=False)
    except ValueError as e:
        if "pickle" in str(e):
            raise pickle.UnpicklingError(
                f"rg.load refused {f!r}: the file holds pickled data, and rg.load never unpickles (it could run "
                "code from the file). Only files written by rg.save can be loaded.") from None
        raise
    with _closing(archive):
        if not hasattr(archive, "files") or _MANIFEST not in archive.files:
            raise ValueError(f"rg.load: {f!r} is not a file written by rg.save (it has no {_MANIFEST!r} entry); "
                             "rg.load never unpickles, so files of torch.save or pickle cannot be read")
        try:
            manifest = json.loads(bytes(archive[_MANIFEST]).decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ValueError(f"rg.load: the manifest of {f!r} is damaged: {e}") from None
        if manifest.get("format") != _FORMAT or manifest.get("version", 0) > _VERSION:
            raise ValueError(f"rg.load: {f!r} has format {manifest.get('format')!r} version "
                             f"{manifest.get('version')!r}; this retrograd reads {_FORMAT!r} up to version "
                             f"{_VERSION}")
        return _Reader(archive, map_location).obj(manifest["root"])


class _closing:
    # np.load gives an NpzFile (close it) for an archive, an array for .npy
    def __init__(self, archive: Any) -> None:
        self.archive = archive

    def __enter__(self) -> Any:
        return self.archive

    def __exit__(self, *exc: Any) -> None:
        close = getattr(self.archive, "close", None)
        if close is not None:
            close()


