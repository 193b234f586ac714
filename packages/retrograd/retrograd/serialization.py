"""rg.save and rg.load, in torch's file format (``torch.serialization``).

A file is the zip archive ``torch.save`` writes: ``<name>/data.pkl``, a
pickle of the saved object in which each tensor is a call of
``torch._utils._rebuild_tensor_v2`` (or ``_v3``, ``_rebuild_parameter``) on
a storage, and ``<name>/data/<key>``, the raw little-endian bytes of each
storage, aligned to 64 bytes. So torch loads what ``rg.save`` writes, and
``rg.load`` reads what ``torch.save`` writes, without torch installed: the
torch names in the pickle are mapped to retrograd's tensors, dtypes and
devices (Note [Torch names in the pickle]).

``weights_only=True`` (the default, as in torch) unpickles only tensors,
NumPy arrays and scalars, Python's built-in values and containers, and
``OrderedDict``, plus the globals allowed with :func:`add_safe_globals` or
:class:`safe_globals`; anything else is refused before it runs.
``weights_only=False`` unpickles anything (whole modules, optimizers): use
it only for files you trust. Files of retrograd's first format (an ``.npz``
with a JSON manifest) still load.

Note [Torch names in the pickle]
--------------------------------
A pickle names the function that rebuilds each object by module and name
(``torch._utils _rebuild_tensor_v2``). ``rg.save`` writes torch's names for
tensors and storages without importing torch: its pickler (the pure-Python
one, whose type dispatch can be extended) writes a ``GLOBAL`` opcode for each
``_TorchName`` marker. ``rg.load``'s unpicklers map those names back to the
functions below. NumPy arrays and scalars, which torch's files do not hold,
are written with retrograd's own names (``_rebuild_ndarray``), which
weights-only loading allows.
"""
from __future__ import annotations

import contextlib
import io
import os
import pickle
import struct
import uuid
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import IO, Any, Union

import numpy as np

from retrograd.core import Device, Tensor

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint"]

FileLike = Union[str, "os.PathLike[str]", IO[bytes]]

_ALIGN = 64                  # storages start at multiples of 64 bytes, as torch's writer puts them
_V2_STORAGES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
    "uint8": "ByteStorage", "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_STORAGE_DTYPES = {v: k for k, v in _V2_STORAGES.items()}
# dtypes torch saves through an untyped storage and _rebuild_tensor_v3
_V3_DTYPES = ("uint16", "uint32", "uint64")


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import retrograd.core
        bf16 = retrograd.core.bfloat16                  # (a clear error without ml_dtypes)
        assert isinstance(bf16, np.dtype)               # (core's module __getattr__ is typed as returning object)
        return bf16
    return np.dtype(name)


class _TorchName:
    """A global of torch's namespace, written as a GLOBAL opcode (Note [Torch names in the pickle])."""

    __slots__ = ("module", "name")
    _made: dict[tuple[str, str], _TorchName] = {}

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:     # (pickle wants the reduce function callable; never called)
        raise TypeError(f"{self.module}.{self.name} is a name in a file for torch, not a function")

    @classmethod
    def of(cls, module: str, name: str) -> _TorchName:
        key = (module, name)
        if key not in cls._made:
            cls._made[key] = cls(module, name)
        return cls._made[key]


class _Storage:
    # one storage of the file: a C-contiguous host array, its key and torch location
    __slots__ = ("array", "key", "location")

    def __init__(self, array: np.ndarray, key: str, location: str) -> None:
        self.array, self.key, self.location = array, key, location


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy(force=True))          # (a host copy of a device tensor)


# The pure-Python pickler, whose type dispatch can be extended. It is undocumented, and typeshed
# describes it only in part (no write or memoize, a dispatch typed for the unpickler), so it is
# typed as Any here.
_PyPickler: Any = pickle._Pickler


class _Pickler(_PyPickler):
    dispatch = _PyPickler.dispatch.copy()

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: list[_Storage] = []
        self._by_root: dict[int, _Storage] = {}
        self._keep: list[Any] = []        # what the ids above refer to stays alive

    def _save_torch_name(self, obj: _TorchName) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_TorchName] = _save_torch_name

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not _Storage:
            return None
        kind = obj.array.dtype.name
        stype = (_TorchName.of("torch.storage", "UntypedStorage") if kind in _V3_DTYPES
                 else _TorchName.of("torch", _V2_STORAGES[kind]))
        numel = obj.array.nbytes if kind in _V3_DTYPES else obj.array.size
        return ("storage", stype, obj.key, obj.location, numel)

    def _storage(self, arr: np.ndarray, location: str) -> tuple[_Storage, int, tuple, tuple]:
        # the storage an array views, with its offset and strides in elements: views of one array share
        # one storage, as torch's views do; anything else is saved contiguous
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        root = _root(arr)
        size = arr.itemsize
        if (root is not arr and root.dtype == arr.dtype and root.flags.c_contiguous
                and all(s >= 0 and s % size == 0 for s in arr.strides)):
            start = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            if start >= 0 and start % size == 0:
                storage = self._by_root.get(id(root))
                if storage is None:
                    storage = self._new_storage(root.reshape(-1), location, root)
                return storage, start // size, arr.shape, tuple(s // size for s in arr.strides)
        flat = arr if arr.flags.c_contiguous else arr.copy(order="C")
        strides = _contiguous(arr.shape)
        return self._new_storage(flat.reshape(-1), location, flat), 0, arr.shape, strides

    def _new_storage(self, flat: np.ndarray, location: str, root: np.ndarray) -> _Storage:
        storage = _Storage(flat, str(len(self.storages)), location)
        self.storages.append(storage)
        self._by_root[id(root)] = storage
        self._keep.append(root)
        return storage

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            from retrograd.nn.parameter import Parameter
            location = str(obj.device)
            rebuilt = self._tensor_call(_host(obj), location, bool(obj.requires_grad))
            if isinstance(obj, Parameter):
                return (_TorchName.of("torch._utils", "_rebuild_parameter"),
                        (_Rebuilt(rebuilt), bool(obj.requires_grad), OrderedDict()))
            return rebuilt
        if type(obj) is _Rebuilt:
            return obj.call
        if isinstance(obj, np.ndarray) and obj.dtype.kind in "biufc":
            storage, offset, shape, strides = self._storage(obj, "cpu")
            return (_rebuild_ndarray, (storage, obj.dtype.str, offset, shape, strides))
        if isinstance(obj, np.generic) and obj.dtype.kind in "biufc":
            return (_rebuild_npscalar, (obj.dtype.str, obj.tobytes()))
        return NotImplemented

    def _tensor_call(self, arr: np.ndarray, location: str, requires_grad: bool) -> tuple:
        kind = arr.dtype.name
        if kind not in _V2_STORAGES and kind not in _V3_DTYPES:
            raise pickle.PicklingError(f"rg.save cannot save a tensor of dtype {arr.dtype}: torch's file format "
                                       "has no storage for it")
        storage, offset, shape, strides = self._storage(arr, location)
        args: tuple = (storage, offset, tuple(shape), strides, requires_grad, OrderedDict())
        if kind in _V3_DTYPES:
            return (_TorchName.of("torch._utils", "_rebuild_tensor_v3"), args + (_TorchName.of("torch", kind),))
        return (_TorchName.of("torch._utils", "_rebuild_tensor_v2"), args)


def _root(arr: np.ndarray) -> np.ndarray:
    # the array that owns the memory a view reads (through as_strided's DummyArray too)
    root, link = arr, arr.base
    while link is not None:
        if isinstance(link, np.ndarray):
            root = link
        link = getattr(link, "base", None)
    return root


class _Rebuilt:
    # a Parameter's inner tensor call, pickled as itself (not as the Parameter again)
    __slots__ = ("call",)

    def __init__(self, call: tuple) -> None:
        self.call = call


def _contiguous(shape: tuple) -> tuple:
    # torch's strides of a contiguous tensor (a dim of size 0 counts as 1)
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(out))


def _write_record(z: zipfile.ZipFile, name: str, data: Any, align: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    if align:
        # pad the local header with an extra field so the data starts at a multiple of 64 (what lets torch
        # memory-map the file); 30 bytes of fixed header, the name, 4 bytes of extra-field header
        start = z.fp.tell() + 30 + len(name.encode("utf-8")) + 4  # type: ignore[union-attr]
        pad = (-start) % _ALIGN
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    if isinstance(data, np.ndarray) and data.dtype.kind == "V":
        data = data.view(np.uint8)          # (bfloat16 has no buffer-protocol format: its bytes as they are)
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    with z.open(info, "w", force_zip64=len(view) > 0x7FFF0000) as out:
        out.write(view)


def save(obj: Any, f: FileLike, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save an object to a file in torch's format: ``torch.load`` reads it.

    Tensors keep their dtype, shape, ``requires_grad``, device (as torch's
    location string) and view relations: views of one array share one
    storage in the file and load as views again. Parameters stay Parameters.

    Parameters
    ----------
    obj : object
        What to save: a state dict, an optimizer's state dict, or any
        picklable object (a whole module or optimizer; loading that needs
        ``weights_only=False``).
    f : str, os.PathLike or binary file object
        Where to write. A path is written as given (no suffix is added).
    pickle_module : module, optional
        Must be the standard :mod:`pickle` (retrograd writes torch's
        storages through its own pickler).
    pickle_protocol : int, optional
        The pickle protocol (default 2, as torch).
    _use_new_zipfile_serialization : bool, optional
        Must be True: torch's legacy (pre-1.6) format is not written.
    _disable_byteorder_record : bool, optional
        Leave out the ``byteorder`` record, as torch's flag does.

    Raises
    ------
    pickle.PicklingError
        If ``obj`` holds something pickle cannot save, or a tensor of a dtype
        torch's format has no storage for.
    NotImplementedError
        For another ``pickle_module`` or the legacy format.

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
    if pickle_module is not pickle:
        raise NotImplementedError("rg.save writes with the standard pickle module only; leave pickle_module out")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("rg.save writes torch's zip format only (_use_new_zipfile_serialization=True); "
                                  "torch's legacy pre-1.6 format is not supported")
    body = io.BytesIO()
    pickler = _Pickler(body, pickle_protocol)
    pickler.dump(obj)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write_archive(fh, body.getvalue(), pickler.storages, _disable_byteorder_record)
    else:
        _write_archive(f, body.getvalue(), pickler.storages, _disable_byteorder_record)


def _write_archive(fh: IO[bytes], data_pkl: bytes, storages: list[_Storage], no_byteorder: bool) -> None:
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
        _write_record(z, "archive/data.pkl", data_pkl)
        _write_record(z, "archive/.format_version", b"1")
        _write_record(z, "archive/.storage_alignment", str(_ALIGN).encode())
        if not no_byteorder:
            _write_record(z, "archive/byteorder", b"little")
        for s in storages:
            _write_record(z, f"archive/data/{s.key}", s.array, align=True)
        _write_record(z, "archive/version", b"3\n")
        _write_record(z, "archive/.data/serialization_id", uuid.uuid4().hex.encode().ljust(40, b"0"))


# ---------------------------------------------------------------------------------------------------------
# loading

def _rebuild_ndarray(storage: tuple, dtype: str, offset: int, shape: tuple, strides: tuple) -> np.ndarray:
    return _strided(storage[0].view(np.dtype(dtype)), offset, shape, strides).copy()


def _rebuild_npscalar(dtype: str, data: bytes) -> np.generic:
    return np.frombuffer(data, dtype=np.dtype(dtype))[0]


def _strided(flat: np.ndarray, offset: int, shape: tuple, strides: tuple) -> np.ndarray:
    shape, strides = tuple(int(n) for n in shape), tuple(int(s) for s in strides)
    if any(n == 0 for n in shape):
        return np.empty(shape, dtype=flat.dtype)
    last = int(offset) + sum((n - 1) * s for n, s in zip(shape, strides))
    if offset < 0 or any(s < 0 for s in strides) or last >= flat.size:
        raise pickle.UnpicklingError(f"rg.load: a tensor of shape {shape} and strides {strides} at offset {offset} "
                                     f"reaches outside its storage of {flat.size} elements: the file is damaged")
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], shape=shape, strides=tuple(s * item for s in strides),
                                           writeable=flat.flags.writeable)


class _StorageType:
    # what torch.FloatStorage & co. unpickle to: the dtype of the storage's elements (None: untyped bytes)
    def __init__(self, dtype: str | None) -> None:
        self.dtype = dtype


class _Loader:
    """Reads one zip archive: its storages (cached by key) and the placement of tensors."""

    def __init__(self, z: zipfile.ZipFile, prefix: str, map_location: Any, mmap_path: str | None) -> None:
        self.z, self.prefix, self.map_location, self.mmap_path = z, prefix, map_location, mmap_path
        self.storages: dict[str, tuple[np.ndarray, str]] = {}

    def storage(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"rg.load: unknown persistent id {pid!r} in the file")
        _, stype, key, location, numel = pid
        if key not in self.storages:
            dtype = np.dtype(np.uint8) if stype.dtype is None else _np_dtype(stype.dtype)
            self.storages[key] = (self._read(f"{self.prefix}data/{key}", dtype, int(numel)), str(location))
        return self.storages[key]

    def _read(self, name: str, dtype: np.dtype, numel: int) -> np.ndarray:
        try:
            info = self.z.getinfo(name)
        except KeyError:
            raise pickle.UnpicklingError(f"rg.load: the file has no record {name!r}: it is damaged") from None
        if info.file_size != numel * dtype.itemsize or info.compress_type != zipfile.ZIP_STORED:
            raise pickle.UnpicklingError(f"rg.load: record {name!r} holds {info.file_size} bytes, not the "
                                         f"{numel} x {dtype.itemsize} its storage needs: the file is damaged")
        if self.mmap_path is not None and numel:
            # the data's offset: after the local header (30 bytes, the name, the local extra field)
            fp = self.z.fp
            fp.seek(info.header_offset + 26)  # type: ignore[union-attr]
            name_len, extra_len = struct.unpack("<HH", fp.read(4))  # type: ignore[union-attr]
            start = info.header_offset + 30 + name_len + extra_len
            return np.memmap(self.mmap_path, dtype=dtype.newbyteorder("<"), mode="c", offset=start, shape=(numel,))
        buf = bytearray(info.file_size)
        with self.z.open(info) as src:
            src.readinto(memoryview(buf))  # type: ignore[attr-defined]
        return np.frombuffer(buf, dtype=dtype.newbyteorder("<")).astype(dtype, copy=False)

    def place(self, t: Tensor, location: str) -> Tensor:
        loc = self.map_location
        if callable(loc) and not isinstance(loc, (str, Device)):
            out = loc(t, location)
            return t if out is None else out
        target: Any = location
        if isinstance(loc, (str, Device)):
            target = loc
        elif isinstance(loc, dict):
            target = loc.get(location, location)
        elif loc is not None:
            raise TypeError("rg.load: map_location must be None, a device (str or rg.device), a dict mapping saved "
                            f"locations to devices, or a callable(tensor, location), not {type(loc).__name__}")
        if str(target) == "cpu":
            return t
        try:
            return t.to(device=target)
        except Exception as e:
            raise RuntimeError(f"rg.load: cannot restore a tensor saved on {location} to {target}: {e}. Pass "
                               "map_location='cpu' (or another available device) to load it elsewhere.") from e


_LOADER: list[_Loader] = []       # the archive being unpickled (rebuild functions run inside load)


def _rebuild_tensor_v2(storage: tuple, offset: int, size: tuple, stride: tuple, requires_grad: bool,
                       backward_hooks: Any, metadata: Any = None) -> Tensor:
    flat, location = storage
    t = Tensor(_strided(flat, offset, size, stride))
    t = _LOADER[-1].place(t, location)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage: tuple, offset: int, size: tuple, stride: tuple, requires_grad: bool,
                       backward_hooks: Any, dtype: Any, metadata: Any = None) -> Tensor:
    flat, location = storage
    return _rebuild_tensor_v2((flat.view(np.dtype(dtype)), location), offset, size, stride, requires_grad,
                              backward_hooks, metadata)


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any = None) -> Any:
    from retrograd.nn.parameter import Parameter
    p = Parameter(data.detach(), requires_grad=requires_grad)
    if state:
        for k, v in (state.items() if isinstance(state, dict) else ()):
            setattr(p, k, v)
    return p


def _torch_dtype(name: str) -> Callable[[], np.dtype]:
    return lambda: _np_dtype(name)


def _torch_size(*args: Any) -> tuple:
    return tuple(*args)


# torch's globals a tensor file holds, and what each unpickles to here
_TORCH_GLOBALS: dict[tuple[str, str], Any] = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch.storage", "UntypedStorage"): _StorageType(None),
    ("torch", "Size"): _torch_size,
    ("collections", "OrderedDict"): OrderedDict,
    ("retrograd.serialization", "_rebuild_ndarray"): _rebuild_ndarray,
    ("retrograd.serialization", "_rebuild_npscalar"): _rebuild_npscalar,
}
_TORCH_GLOBALS.update({("torch", name): _StorageType(dt) for name, dt in _STORAGE_DTYPES.items()})
# plain values that protocol-2 pickles spell as globals
_BUILTINS = {("builtins", n) for n in ("set", "frozenset", "complex", "slice", "range", "bytearray", "int", "float",
                                        "bool", "str", "tuple", "list", "dict")} | {("_codecs", "encode")}
_TORCH_DTYPE_NAMES = {"float32", "float", "float64", "double", "float16", "half", "bfloat16", "int64", "long",
                      "int32", "int", "int16", "short", "int8", "uint8", "bool", "complex64", "cfloat", "complex128",
                      "cdouble", "uint16", "uint32", "uint64"}
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
                  "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}

def _py3_name(module: str, name: str) -> tuple[str, str]:
    # protocol 2 spells Python 3's names in Python 2's way (__builtin__.set); pickle maps them back
    import _compat_pickle
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


_safe_globals: list[Any] = []
_context_globals: list[list[Any]] = []


def _mapped(module: str, name: str) -> Any:
    if (module, name) in _TORCH_GLOBALS:
        return _TORCH_GLOBALS[(module, name)]
    if module == "torch" and name in _TORCH_DTYPE_NAMES:
        return _np_dtype(_DTYPE_ALIASES.get(name, name))
    if module == "torch" and name == "device":
        import retrograd
        return retrograd.device
    return None


def _allowed_by_user(module: str, name: str) -> Any:
    for entry in list(_safe_globals) + [g for frame in _context_globals for g in frame]:
        obj, full = (entry if isinstance(entry, tuple) else (entry, None))
        qual = full or f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"
        if qual == f"{module}.{name}":
            return obj
    return None


_HELP = ("Weights-only loading (weights_only=True, the default) unpickles only tensors, arrays, Python's built-in "
         "values and containers. If you trust the file, allow the global with "
         "rg.serialization.add_safe_globals([{name}]) or the rg.serialization.safe_globals([{name}]) context "
         "manager, or load with weights_only=False (which can run any code the file holds).")


class _WeightsOnlyUnpickler(pickle.Unpickler):
    def __init__(self, file: IO[bytes], loader: _Loader) -> None:
        super().__init__(file)
        self.loader = loader

    def persistent_load(self, pid: Any) -> Any:
        return self.loader.storage(pid)

    def find_class(self, module: str, name: str) -> Any:
        module, name = _py3_name(module, name)
        obj = _mapped(module, name)
        if obj is not None:
            return obj
        if (module, name) in _BUILTINS:
            return super().find_class(module, name)
        obj = _allowed_by_user(module, name)
        if obj is not None:
            return obj
        raise pickle.UnpicklingError(f"Weights only load failed: unsupported global {module}.{name}. "
                                     + _HELP.format(name=name))


class _FullUnpickler(_WeightsOnlyUnpickler):
    def find_class(self, module: str, name: str) -> Any:
        module, name = _py3_name(module, name)
        obj = _mapped(module, name)
        if obj is not None:
            return obj
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(
                f"rg.load: the file holds torch's object {module}.{name}, which retrograd cannot rebuild. Save "
                "tensors and state dicts with torch.save (model.state_dict()), not whole torch objects.")
        return pickle.Unpickler.find_class(self, module, name)


def _open_archive(f: FileLike) -> tuple[IO[bytes], bool]:
    if isinstance(f, (str, os.PathLike)):
        return open(f, "rb"), True
    if not (hasattr(f, "seek") and getattr(f, "seekable", lambda: True)()):
        return io.BytesIO(f.read()), False
    return f, False


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Load an object saved by :func:`save` or by ``torch.save``.

    Parameters
    ----------
    f : str, os.PathLike or binary file object
        The file.
    map_location : str, rg.device, dict or callable, optional
        Where the tensors go: None puts each where it was saved; a device
        puts all there; a dict maps saved locations (``"cuda:0"``) to
        devices; a callable ``(tensor, location)`` returns the tensor to use.
    pickle_module : module, optional
        Must be None or the standard :mod:`pickle`.
    weights_only : bool, optional
        True (the default when None, as torch): unpickle only tensors,
        arrays, built-in values and containers and allowed globals
        (:func:`~retrograd.serialization.add_safe_globals`). False: unpickle anything; only for
        files you trust.
    mmap : bool, optional
        Map the storages from the file (a path) instead of reading them:
        copy-on-write arrays that read the file lazily.
    **pickle_load_args
        ``encoding`` and ``errors``, as torch (for files pickled by
        Python 2); nothing else.

    Returns
    -------
    object
        The saved object; tensors are new leaves with the saved
        ``requires_grad``, Parameters stay Parameters.

    Raises
    ------
    pickle.UnpicklingError
        If weights-only loading meets a global it does not allow (the
        message says how to allow it), or the file is damaged.
    RuntimeError
        If a tensor's device is not available (pass ``map_location``) or
        the file is in torch's legacy format.

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
    if pickle_module not in (None, pickle):
        raise NotImplementedError("rg.load reads with the standard pickle module only; leave pickle_module out")
    unknown = set(pickle_load_args) - {"encoding", "errors"}
    if unknown:
        raise TypeError(f"rg.load got unexpected keyword arguments {sorted(unknown)}")
    weights_only = True if weights_only is None else bool(weights_only)
    fh, opened = _open_archive(f)
    try:
        if not zipfile.is_zipfile(fh):
            fh.seek(0)
            raise RuntimeError(
                f"rg.load: {f!r} is not a zip archive written by rg.save or torch.save (torch's legacy pre-1.6 "
                "format and plain pickles are not read). Re-save it with torch.save's default format.")
        fh.seek(0)
        with zipfile.ZipFile(fh) as z:
            names = z.namelist()
            if any(n == "__manifest__.npy" for n in names):
                from retrograd._npz_legacy import load_npz
                fh.seek(0)
                return load_npz(fh, map_location)
            pkl = [n for n in names if n.endswith("data.pkl")]
            if not pkl:
                raise RuntimeError(f"rg.load: {f!r} is a zip archive without a data.pkl record: not a file of "
                                   "rg.save or torch.save")
            prefix = pkl[0][: -len("data.pkl")]
            mmap_path = None
            if mmap:
                if not isinstance(f, (str, os.PathLike)):
                    raise ValueError("rg.load: mmap=True needs f to be a path")
                mmap_path = os.fspath(f)
            loader = _Loader(z, prefix, map_location, mmap_path)
            cls = _WeightsOnlyUnpickler if weights_only else _FullUnpickler
            unpickler = cls(io.BytesIO(z.read(pkl[0])), loader)
            if pickle_load_args:
                unpickler = cls.__new__(cls)
                pickle.Unpickler.__init__(unpickler, io.BytesIO(z.read(pkl[0])), **pickle_load_args)
                unpickler.loader = loader
            _LOADER.append(loader)
            try:
                return unpickler.load()
            finally:
                _LOADER.pop()
    finally:
        if opened:
            fh.close()


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow globals in weights-only loading, for the rest of the process.

    Parameters
    ----------
    safe_globals : list
        Classes or functions (matched by their module and qualified name),
        or ``(object, "module.name")`` pairs for an object saved under
        another name.

    Examples
    --------
    >>> import io, collections
    >>> import retrograd as rg
    >>> Point = collections.namedtuple("Point", "x y")
    >>> rg.serialization.add_safe_globals([(Point, "__main__.Point")])
    >>> (Point, "__main__.Point") in rg.serialization.get_safe_globals()
    True
    >>> rg.serialization.clear_safe_globals()
    """
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    """The globals allowed by :func:`add_safe_globals`.

    Returns
    -------
    list
        The objects (or ``(object, name)`` pairs) added so far.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.serialization.get_safe_globals()
    []
    """
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget the globals allowed by :func:`add_safe_globals`.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.serialization.add_safe_globals([complex])
    >>> rg.serialization.clear_safe_globals()
    >>> rg.serialization.get_safe_globals()
    []
    """
    _safe_globals.clear()


class safe_globals(contextlib.ContextDecorator):
    """Allow globals in weights-only loading inside a ``with`` block.

    Parameters
    ----------
    safe_globals : list
        As :func:`add_safe_globals`.

    Examples
    --------
    >>> import io
    >>> import retrograd as rg
    >>> from fractions import Fraction
    >>> buf = io.BytesIO()
    >>> rg.save({"ratio": Fraction(1, 3)}, buf)
    >>> _ = buf.seek(0)
    >>> with rg.serialization.safe_globals([Fraction]):
    ...     rg.load(buf)
    {'ratio': Fraction(1, 3)}
    """

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = list(safe_globals)

    def __enter__(self) -> None:
        _context_globals.append(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _context_globals.remove(self.safe_globals)


def get_unsafe_globals_in_checkpoint(f: FileLike) -> list[str]:
    """The globals of a file that weights-only loading would refuse.

    Parameters
    ----------
    f : str, os.PathLike or binary file object
        A file of :func:`save` or ``torch.save``.

    Returns
    -------
    list of str
        ``"module.name"`` for each global that is neither a tensor rebuild,
        a built-in value nor allowed by :func:`add_safe_globals`.

    Examples
    --------
    >>> import io
    >>> import retrograd as rg
    >>> from fractions import Fraction
    >>> buf = io.BytesIO()
    >>> rg.save([rg.ones(2), Fraction(1, 2)], buf)
    >>> rg.serialization.get_unsafe_globals_in_checkpoint(buf)
    ['fractions.Fraction']
    """
    import pickletools
    fh, opened = _open_archive(f)
    try:
        fh.seek(0)
        with zipfile.ZipFile(fh) as z:
            data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    finally:
        if opened:
            fh.close()
    out: list[str] = []
    strings: list[str] = []
    for op, arg, _pos in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(str(arg))
        names = None
        if op.name == "GLOBAL":
            names = str(arg).split(" ", 1)
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            names = strings[-2:]
        if names is None:
            continue
        module, name = _py3_name(*names)
        if (_mapped(module, name) is None and (module, name) not in _BUILTINS
                and _allowed_by_user(module, name) is None and f"{module}.{name}" not in out):
            out.append(f"{module}.{name}")
    return out
