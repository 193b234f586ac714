"""Reading the files of retrograd's first format (retrograd 0.x to 1.x's ``rg.save``).

Such a file is a NumPy ``.npz`` archive (``np.savez``): one entry per tensor
or array, and one entry, ``__manifest__``, holding a small JSON document that
describes the saved object: its containers, scalars and strings, and for
each tensor the entry holding its values and its dtype, shape, device and
``requires_grad``. Nothing in it is pickled, so reading it runs no code from
it. ``rg.save`` now writes torch's format (``serialization.py``); ``rg.load``
still reads these files, with this module.
"""
from __future__ import annotations

import json
import pickle
from collections import OrderedDict
from typing import Any

import numpy as np

from retrograd.core import Device, Tensor


_FORMAT = "retrograd.save"
_VERSION = 1
_MANIFEST = "__manifest__"


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


def load_npz(f: Any, map_location: Any = None) -> Any:
    """Read a file of the first format (an .npz with a JSON manifest)."""
    if hasattr(f, "seek"):
        f.seek(0)
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


