"""Tensor factories: tensor, as_tensor, from_numpy, zeros, ones, ... (NumPy dtypes and defaults).

Random factories draw from one NumPy Generator, reseeded by manual_seed.
"""
from __future__ import annotations

import builtins
import operator
import threading

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core.abi import Tensor, composite_op
from retrograd.core._dtype_rules import _default_complex_dtype, get_default_dtype
from retrograd.core._dtypes import _is_inexact_dtype

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange",
           "linspace", "eye", "zeros_like", "ones_like", "full_like", "empty_like", "rand",
           "randn", "randint", "randperm", "rand_like", "randn_like", "manual_seed", "get_rng", "is_tensor",
           "initial_seed", "seed", "set_default_device", "get_default_device"]

# The factories are composite ops: a profile shows them as torch's aten::zeros,
# aten::rand, ... with the memory their tensor takes (profile_memory).

# Created on first use: importing numpy.random is ~20 ms, most of what
# `import retrograd` adds to `import numpy` (benchmarks/footprint.py).
_rng = None
_initial_seed = None      # the seed of _rng (torch.initial_seed)


def manual_seed(seed: int) -> np.random.Generator:
    """Seed retrograd's random generator, for reproducible random tensors.

    Replaces the global NumPy Generator (``numpy.random.default_rng(seed)``)
    that :func:`rand`, :func:`randn`, dropout and the ``rg.nn.init``
    functions draw from when no ``generator=`` is given. Unlike torch's, the
    stream of numbers is NumPy's, so the values differ from torch's for the
    same seed.

    Parameters
    ----------
    seed : int
        The seed, a nonnegative integer.

    Returns
    -------
    numpy.random.Generator
        The new global generator (also what :func:`get_rng` returns).

    Raises
    ------
    ValueError
        For a negative seed.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> a = rg.rand(3)
    >>> _ = rg.manual_seed(0)
    >>> bool((rg.rand(3) == a).numpy().all())
    True
    """
    global _rng, _initial_seed
    _rng = np.random.default_rng(seed)
    _initial_seed = int(seed)
    _seed_cuda(seed, all_devices=True)      # as torch.manual_seed, every device's generator
    return _rng


def _fresh_seed() -> int:
    # a seed from the OS's entropy, in torch's range (63 bits)
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))


def initial_seed() -> int:
    """The seed of retrograd's global generator (the one :func:`manual_seed` set).

    Returns
    -------
    int
        The last seed given to :func:`manual_seed` or drawn by :func:`seed`
        (or, before either, the random one the generator started from).

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(42)
    >>> rg.initial_seed()
    42
    """
    get_rng()
    return _initial_seed


def seed() -> int:
    """Seed the global generator with a fresh random seed, and return it.

    Returns
    -------
    int
        The new seed (63 bits, from the OS's entropy).

    Examples
    --------
    >>> import retrograd as rg
    >>> s = rg.seed()
    >>> s == rg.initial_seed()
    True
    """
    s = _fresh_seed()
    manual_seed(s)
    return s


def _seed_cuda(seed, all_devices=True):
    # CUDA tensors draw from CuPy's random state of their device (see
    # _CudaGenerator); without CuPy or a GPU there is nothing to seed. The
    # seed was already checked by NumPy's default_rng; CuPy takes an int
    # (a sequence seeds NumPy's generator only).
    if not isinstance(seed, (builtins.int, np.integer)):
        return
    try:
        import cupy
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception:                   # no CuPy, no driver or no device
        return
    devices = range(n) if all_devices else [cupy.cuda.runtime.getDevice()]
    for index in devices:
        with cupy.cuda.Device(index):
            cupy.random.seed(builtins.int(seed))


class _CudaGenerator:
    """CuPy's random state of one CUDA device, with the methods of a NumPy
    Generator that the random factories call: CUDA tensors are drawn on the
    device (no host draw and copy), from the generator rg.cuda.manual_seed
    seeds."""

    def __init__(self, device):
        import cupy
        self._cupy = cupy
        self._index = device.index if device.index >= 0 else cupy.cuda.runtime.getDevice()

    def _call(self, name, *args, **kwargs):
        with self._cupy.cuda.Device(self._index):
            return getattr(self._cupy.random, name)(*args, **kwargs)

    def random(self, shape):
        return self._call("random_sample", shape, dtype=np.float64)

    def standard_normal(self, shape):
        return self._call("standard_normal", shape, dtype=np.float64)

    def standard_exponential(self, shape):
        return self._call("standard_exponential", shape, dtype=np.float64)

    def integers(self, low, high, size, dtype=np.int64, endpoint=False):
        return self._call("randint", low, high + 1 if endpoint else high, size=size, dtype=dtype)

    def permutation(self, n):
        return self._call("permutation", n)


def get_rng() -> np.random.Generator:
    """The global NumPy random generator that retrograd's random functions use.

    Created unseeded on first use; :func:`manual_seed` replaces it. Use it
    to draw from the same stream as ``rg.rand`` (for example to shuffle data
    reproducibly).

    Returns
    -------
    numpy.random.Generator
        The global generator.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> g = rg.get_rng()
    >>> type(g).__name__
    'Generator'
    >>> g is rg.get_rng()
    True
    """
    global _rng, _initial_seed
    if _rng is None:
        _initial_seed = _fresh_seed()
        _rng = np.random.default_rng(_initial_seed)
    return _rng


def _traced(t, fn, redraw):
    # A random factory's tensor. While a tracer listens (retrograd-compile; the
    # tracing slot's RG_TRACE_RANDOM, abi.pxd) it also gets `redraw`, which
    # draws a fresh tensor from the generator the caller named (the global
    # one as it is when called, so manual_seed is honoured), never this one.
    if _abi._trace_slot_filled():
        _abi._trace_python_event(_abi._TRACE_RANDOM, fn, (), (t,), redraw)
    return t


def _factory(t, fn, make_array, device):
    # A deterministic factory's tensor t. While a tracer listens
    # (RG_TRACE_FACTORY, abi.pxd, ABI 1.6) it also gets a callable making a
    # fresh one from make_array(), so a compiled program makes one per call
    # instead of baking t in. A tensor that requires grad is a new leaf,
    # which no program replays: it is not reported.
    if not t.requires_grad and _abi._trace_slot_filled():
        _abi._trace_python_event(_abi._TRACE_FACTORY, fn, (), (t,),
                                 lambda: _make(make_array(), device, False))
    return t


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a retrograd tensor (a :class:`Tensor` or a subclass).

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
        ``isinstance(obj, Tensor)``; NumPy arrays give False.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> rg.is_tensor(rg.tensor([1.0]))
    True
    >>> rg.is_tensor(np.ones(2))
    False
    """
    return isinstance(obj, Tensor)


def _dtype(dtype, fn="tensor"):
    return None if dtype is None else _abi._dtype_arg(dtype, fn)


def _shape(size, fn="zeros"):
    """torch's `*size` (ints, or one tuple/list of ints) as a shape. Floats and
    other non-integers raise TypeError, negative sizes RuntimeError, as torch."""
    if len(size) == 0:
        raise TypeError(f"{fn}() missing 1 required positional argument: 'size' (pass () for a 0-d tensor)")
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    dims = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and s.dtype.kind in "iu" and s.numel() == 1:
            s = s.item()
        if not hasattr(type(s), "__index__"):          # torch takes bools as 0/1 here
            raise TypeError(f"{fn}(): argument 'size' must be a tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos {i}" +
                            ("; round it explicitly, e.g. int(n)" if isinstance(s, (builtins.float, np.floating))
                             else ""))
        d = operator.index(s)
        if not (-(1 << 63) <= d < (1 << 63)):
            raise TypeError(f"{fn}(): argument 'size' failed to unpack the object at pos {i}: {d} does not "
                            "fit in a 64-bit integer")
        dims.append(d)
    for d in dims:
        if d < 0:
            raise RuntimeError(f"{fn}(): Trying to create tensor with negative dimension {d}: {dims}")
    return tuple(dims)


def _alloc(fn, make, shape):
    # NumPy says ValueError ("array is too big", "maximum supported dimension")
    # or MemoryError for sizes it cannot allocate; torch says RuntimeError.
    try:
        return make()
    except (ValueError, MemoryError) as exc:
        raise RuntimeError(f"{fn}(): cannot create a tensor of size {list(shape)}: {exc}") from None


def _number(v, fn, arg):
    # a fill value, arange bound or step: a number (or a one-element tensor)
    if isinstance(v, Tensor) and v.numel() == 1:
        return v.item()
    if isinstance(v, (builtins.int, builtins.float, builtins.complex, np.number, np.bool_)):
        return v
    raise TypeError(f"{fn}(): argument '{arg}' must be a number, not {type(v).__name__}")


def _make(array, device, requires_grad):
    dev = _abi.device(device)
    if dev.type_name == "cuda":
        try:
            import cupy
        except ImportError:
            raise RuntimeError(f"cannot create a tensor on {dev}: CUDA tensors need CuPy (pip install "
                               "cupy-cuda12x or the build for your CUDA) and a GPU") from None
        with cupy.cuda.Device(dev.index):
            array = cupy.asarray(array)
    return _abi._wrap(array, dev, requires_grad)


# torch.set_default_device: the device the factories use when they are not
# given one. Per thread, as torch's (its DeviceContext is a mode on each
# thread's own stack): _device_local.current, None for the CPU. Until a thread
# sets one, _default_device_on stays False and a factory's whole cost is that
# test (it never goes back: a thread may still hold one).
_default_device_on = False
_device_local = threading.local()


def _default_device():
    return getattr(_device_local, "current", None)


def set_default_device(device) -> None:
    """Make ``device`` the device that tensor factories use when not given one.

    ``zeros``, ``ones``, ``empty``, ``full``, ``rand``, ``randn``,
    ``randint``, ``randperm``, ``arange``, ``linspace``, ``logspace``,
    ``eye``, ``range``, ``tensor``, ``as_tensor`` (of a tensor too),
    ``asarray`` (of data other than a tensor), ``scalar_tensor``, the window
    functions, ``tril_indices`` / ``triu_indices`` and the layers' parameters
    then go to ``device`` unless a call names a device; the ``*_like``
    functions keep their input's device and ``from_numpy`` the CPU, as in
    torch. As torch's, the setting belongs to the calling thread (other
    threads keep theirs, the CPU at first).

    Parameters
    ----------
    device : str or Device or None
        ``"cpu"``, ``"cpu:N"`` (a virtual CPU device), ``"cuda"`` /
        ``"cuda:N"``; None goes back to the CPU.

    Returns
    -------
    None

    Raises
    ------
    RuntimeError
        For a CUDA device where CuPy or the GPU is missing (the error a
        factory gives for ``device="cuda"``), or a virtual CPU device that is
        not configured.
    ValueError
        For an unknown device type.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_virtual_cpu_devices(1)
    >>> rg.set_default_device("cpu:1")
    >>> rg.zeros(2).device, rg.get_default_device()
    (device(type='cpu', index=1), device(type='cpu', index=1))
    >>> rg.set_default_device(None)
    >>> rg.zeros(2).device
    device(type='cpu')
    >>> rg.set_virtual_cpu_devices(0)
    """
    global _default_device_on
    dev = None if device is None else _abi.device(device)
    if dev is not None and dev.type_name == "cuda":
        _make(np.empty(0, dtype=np.float32), dev, False)      # raises as a factory would there
    entry = getattr(_device_local, "entry", None)
    if entry is not None:
        # leaving the previous setting restores what it replaced (torch exits its DeviceContext)
        _device_local.current = entry[1]
    if dev is None:
        _device_local.entry = None
        return
    _device_local.entry = (dev, _default_device())
    _device_local.current = dev
    _default_device_on = True


def get_default_device():
    """The device tensor factories use when not given one (:func:`set_default_device`).

    Returns
    -------
    Device
        The calling thread's default device: the CPU unless set.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.get_default_device()
    device(type='cpu')
    """
    dev = _default_device()
    return _CPU if dev is None else dev


def _enter_device_context(dev) -> None:
    # `with rg.device(d):` (Device.__enter__): d is the default device until the block ends
    global _default_device_on
    _device_local.__dict__.setdefault("stack", []).append(_default_device())
    _device_local.current = _abi.device(dev)
    _default_device_on = True


def _exit_device_context() -> None:
    _device_local.current = _device_local.stack.pop()


def _is_cupy(a) -> bool:
    return type(a).__module__.split(".")[0] == "cupy" and type(a).__name__ == "ndarray"


def _cuda_device_of(a):
    return _abi.device(f"cuda:{a.device.id}")


def tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A new tensor holding a copy of ``data``.

    ``data`` is a number, a (nested) list or tuple of numbers, a NumPy array
    or a tensor. Unless ``dtype`` is given, Python floats give the default
    dtype (:func:`get_default_dtype`, float32 unless set), Python complex
    numbers the default complex dtype, Python ints int64 and bools bool, as in
    torch; NumPy arrays and scalars keep their dtype. The result never shares memory with ``data``; use
    :func:`from_numpy` or :func:`as_tensor` to share a NumPy array's memory. A
    tensor or CuPy array argument stays on its device unless ``device`` says
    otherwise.

    Parameters
    ----------
    data : array_like
        The values.
    dtype : dtype, optional
        The dtype (``rg.float32``, ``np.float32``, ``"float32"``, ...).
    device : str or Device, optional
        Where the tensor lives (default: the default device where one is set,
        :func:`set_default_device`; else a tensor's or CuPy array's own
        device, else the CPU; ``"cuda"`` needs CuPy).
    requires_grad : bool, optional
        Make the tensor a leaf whose gradient is recorded (default False).

    Returns
    -------
    Tensor
        A new leaf tensor.

    Raises
    ------
    TypeError
        For a string.
    ValueError
        For a sequence of strings.
    RuntimeError
        For objects NumPy cannot turn into numbers, or a CUDA device without
        CuPy.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.tensor([[1.0, 2.0], [3.0, 4.0]])
    tensor([[1., 2.],
            [3., 4.]])
    >>> rg.tensor([1, 2]).dtype
    dtype('int64')
    >>> rg.tensor([1, 2], dtype=rg.float32)
    tensor([1., 2.])
    >>> rg.tensor(3.0, requires_grad=True)
    tensor(3., requires_grad=True)
    """
    if device is None and _default_device_on:
        device = _default_device()
    if type(data) is np.ndarray and dtype is None and device is None:
        # the common call (a NumPy array of numbers, its dtype, the CPU):
        # what the general path below does for it, without its checks
        arr = np.array(data, copy=True)
        if arr.dtype.kind in _NUMBER_KINDS:
            return _abi._wrap(arr, _CPU, requires_grad)
    if isinstance(data, Tensor):
        if device is None:
            device = data.device
        data = data._array
    if _is_cupy(data):
        if device is None:
            device = _cuda_device_of(data)
        if _abi.device(device).type_name == "cuda":
            import cupy
            dev = _abi.device(device)
            with cupy.cuda.Device(dev.index):
                arr = cupy.array(data, dtype=_dtype(dtype), copy=True)
            return _abi._wrap(arr, dev, requires_grad)
        data = data.get()                      # to the host, then as any host data
    arr = _checked_data(np.array(data, dtype=_dtype(dtype, "tensor"), copy=True), data, "tensor")
    if dtype is None:
        arr = _python_floats_default(arr, data)
    t = _make(arr, device, requires_grad)
    if _abi._trace_slot_filled() and _python_numbers(data):
        # Python numbers: a literal, or values a compiled function's guards
        # hold (a tensor's values reach Python only through item(), tolist()
        # and the like, which break the trace), so the tracer may remake
        # this tensor at each call. The values as they are now: the
        # function may change the tensor in place.
        kept = arr.copy()
        _factory(t, "tensor", lambda: kept.copy(), t.device)
    return t


_PY_NUMBERS = (builtins.bool, builtins.int, builtins.float, builtins.complex)
# NumPy's dtype kinds of numbers (bool, ints, floats, complex): the dtypes a
# tensor may have (_checked_data refuses the others)
_NUMBER_KINDS = "biufc"
_CPU = _abi.device("cpu")
# (a compiled function's guards hold lists of at most this many numbers)
_MAX_LITERAL = 64


def _default_for(*values):
    # the dtype torch gives Python numbers: a float the default dtype, a
    # complex the default complex dtype (Note [Default dtype]); None (NumPy's
    # choice: int64, bool) for the others
    if any(isinstance(v, (builtins.complex, np.complexfloating)) for v in values):
        return _default_complex_dtype()
    if any(isinstance(v, (builtins.float, np.floating)) for v in values):
        return get_default_dtype()
    return None


def _has_numpy_values(data):
    # whether nested data holds NumPy arrays or scalars (whose dtype a tensor
    # keeps, as torch's) rather than Python numbers only
    if isinstance(data, (np.ndarray, np.generic)):
        return True
    if type(data) in (builtins.list, builtins.tuple):
        return any(_has_numpy_values(x) for x in data)
    return False


def _python_floats_default(arr, data):
    # Python floats make the default dtype, not NumPy's float64 (and complex
    # numbers the default complex dtype); NumPy values keep their dtype.
    kind = arr.dtype.kind
    if kind not in "fc" or arr.dtype.itemsize not in (8, 16) or _has_numpy_values(data):
        return arr
    want = get_default_dtype() if kind == "f" else _default_complex_dtype()
    return arr if arr.dtype == want else arr.astype(want)


def _python_numbers(data):
    # A Python number, or a flat list or tuple of at most _MAX_LITERAL of them.
    if type(data) in _PY_NUMBERS:
        return True
    if type(data) in (builtins.list, builtins.tuple) and len(data) <= _MAX_LITERAL:
        return all(type(v) in _PY_NUMBERS for v in data)
    return False


def _checked_data(arr, data, fn):
    # torch makes tensors of numbers only: strings raise TypeError (NumPy would
    # make a '<U3' tensor of rg.tensor('abc')), other objects RuntimeError.
    if arr.dtype.kind in "US" and arr.ndim:
        raise ValueError(f"too many dimensions 'str': {fn}() takes numbers, nested sequences of numbers or "
                         "an array of numbers")
    if arr.dtype.kind in "US":
        raise TypeError(f"{fn}(): invalid data type 'str': data must be numbers, nested sequences of "
                        "numbers or an array of numbers")
    if arr.dtype.kind in "OVMm" and not _is_inexact_dtype(arr.dtype):       # (bfloat16 is kind 'V')
        bad = data if arr.ndim == 0 else next((x for x in arr.reshape(-1)
                                               if not isinstance(x, (builtins.int, builtins.float,
                                                                     builtins.complex))), None)
        raise RuntimeError(f"Could not infer dtype of {type(bad).__name__}: {fn}() takes numbers, nested "
                           "sequences of numbers or an array of numbers")
    return arr


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, sharing its memory when no conversion is needed.

    A NumPy array of the requested dtype (on the CPU) is wrapped without a
    copy: writing into one changes the other. A tensor is returned as it is
    (converted if ``dtype`` or ``device`` differ). Other data is copied as by
    :func:`tensor`. The result does not require grad.

    Parameters
    ----------
    data : array_like
        The values: a tensor, an array, a number or a nested sequence.
    dtype : dtype, optional
        The dtype; a different one makes a converted copy.
    device : str or Device, optional
        The device; a different one makes a copy there (default: the default
        device where one is set, :func:`set_default_device`; else ``data``'s).

    Returns
    -------
    Tensor
        A tensor over ``data``'s memory where possible.

    Raises
    ------
    TypeError
        For strings or data that are not numbers.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> a = np.zeros(3)
    >>> t = rg.as_tensor(a)
    >>> a[0] = 7.0
    >>> t
    tensor([7., 0., 0.], dtype=float64)
    >>> rg.as_tensor([1, 2], dtype=rg.float64)
    tensor([1., 2.], dtype=float64)
    """
    if device is None and _default_device_on:
        device = _default_device()
    if isinstance(data, Tensor):
        if device is not None and _abi.device(device) != data.device:
            data = data.to(device)
        return data if dtype is None or data.dtype == np.dtype(dtype) else data.to(dtype)
    if _is_cupy(data):
        dev = _cuda_device_of(data)
        if device is None or _abi.device(device) == dev:
            arr = data if dtype is None or data.dtype == np.dtype(dtype) else data.astype(dtype)
            return _abi._wrap(arr, dev, False)
        return tensor(data, dtype=dtype, device=device)
    arr = _checked_data(np.asarray(data, dtype=_dtype(dtype, "as_tensor")), data, "as_tensor")
    if dtype is None:
        arr = _python_floats_default(arr, data)
    return _make(arr, device, False)


def from_numpy(array) -> Tensor:
    """A tensor over a NumPy array's memory (no copy).

    Writing into the array changes the tensor and the other way round; the
    tensor keeps the array's dtype and shape. A read-only array gives a
    tensor that in-place ops refuse to write.

    Parameters
    ----------
    array : numpy.ndarray
        The array to wrap.

    Returns
    -------
    Tensor
        A tensor sharing ``array``'s memory, not requiring grad.

    Raises
    ------
    TypeError
        If ``array`` is not a NumPy array.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> a = np.array([1.0, 2.0], dtype=np.float32)
    >>> t = rg.from_numpy(a)
    >>> t.add_(1)
    tensor([2., 3.])
    >>> a
    array([2., 3.], dtype=float32)
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return _abi._wrap(array)


@composite_op("zeros")
def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of shape ``size`` filled with zeros.

    The dtype is the default dtype (:func:`get_default_dtype`, float32
    unless set) unless ``dtype`` says otherwise.

    Parameters
    ----------
    size : int or sequence of int
        The shape: separate ints (``zeros(2, 3)``) or one tuple or list
        (``zeros((2, 3))``); ``()`` for a 0-d tensor.
    dtype : dtype, optional
        The dtype (default: the default dtype, :func:`get_default_dtype`).
    device : str or Device, optional
        Where the tensor lives (default: :func:`get_default_device`, the CPU unless set).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new leaf tensor.

    Raises
    ------
    TypeError
        For sizes that are not integers.
    RuntimeError
        For negative sizes, or one too large to allocate.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.zeros(2, 3)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    >>> rg.zeros((2,), dtype=rg.int64)
    tensor([0, 0])
    """
    if device is None and _default_device_on:
        device = _default_device()
    shape = _shape(size, "zeros")
    dt = _dtype(dtype, "zeros") or get_default_dtype()
    make = lambda: np.zeros(shape, dtype=dt)  # noqa: E731
    return _factory(_make(_alloc("zeros", make, shape), device, requires_grad), "zeros", make, device)


@composite_op("ones")
def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of shape ``size`` filled with ones.

    The dtype is the default dtype (:func:`get_default_dtype`, float32
    unless set) unless ``dtype`` says otherwise.

    Parameters
    ----------
    size : int or sequence of int
        The shape: separate ints (``zeros(2, 3)``) or one tuple or list
        (``zeros((2, 3))``); ``()`` for a 0-d tensor.
    dtype : dtype, optional
        The dtype (default: the default dtype, :func:`get_default_dtype`).
    device : str or Device, optional
        Where the tensor lives (default: :func:`get_default_device`, the CPU unless set).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new leaf tensor.

    Raises
    ------
    TypeError
        For sizes that are not integers.
    RuntimeError
        For negative sizes, or one too large to allocate.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.ones(2, 3)
    tensor([[1., 1., 1.],
            [1., 1., 1.]])
    >>> rg.ones((2,), dtype=rg.int64)
    tensor([1, 1])
    """
    if device is None and _default_device_on:
        device = _default_device()
    shape = _shape(size, "ones")
    dt = _dtype(dtype, "ones") or get_default_dtype()
    make = lambda: np.ones(shape, dtype=dt)  # noqa: E731
    return _factory(_make(_alloc("ones", make, shape), device, requires_grad), "ones", make, device)


@composite_op("empty")
def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of shape ``size`` whose values are not initialised.

    Faster than :func:`zeros` when every element will be written anyway; the
    values are whatever the memory held, so never read them first.

    Parameters
    ----------
    size : int or sequence of int
        The shape: separate ints (``zeros(2, 3)``) or one tuple or list
        (``zeros((2, 3))``); ``()`` for a 0-d tensor.
    dtype : dtype, optional
        The dtype (default: the default dtype, :func:`get_default_dtype`).
    device : str or Device, optional
        Where the tensor lives (default: :func:`get_default_device`, the CPU unless set).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new leaf tensor with arbitrary values.

    Raises
    ------
    TypeError
        For sizes that are not integers.
    RuntimeError
        For negative sizes, or one too large to allocate.

    Examples
    --------
    >>> import retrograd as rg
    >>> t = rg.empty(2, 3)
    >>> t.shape, t.dtype
    ((2, 3), dtype('float32'))
    """
    if device is None and _default_device_on:
        device = _default_device()
    shape = _shape(size, "empty")
    dt = _dtype(dtype, "empty") or get_default_dtype()
    make = lambda: np.empty(shape, dtype=dt)  # noqa: E731
    return _factory(_make(_alloc("empty", make, shape), device, requires_grad), "empty", make, device)


@composite_op("full")
def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of shape ``size`` with every element equal to ``fill_value``.

    Unless ``dtype`` is given, a float ``fill_value`` gives the default dtype
    (:func:`get_default_dtype`), a complex one the default complex dtype, an
    int int64 and a bool bool, as in torch.

    Parameters
    ----------
    size : sequence of int
        The shape, one tuple or list (``full((2, 3), 1.5)``).
    fill_value : number or Tensor
        The value (a number or a one-element tensor).
    dtype : dtype, optional
        The dtype.
    device : str or Device, optional
        Where the tensor lives (default: :func:`get_default_device`, the CPU unless set).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new leaf tensor.

    Raises
    ------
    TypeError
        If ``fill_value`` is not a number, or a size is not an integer.
    RuntimeError
        For negative sizes.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.full((2, 2), 1.5)
    tensor([[1.5, 1.5],
            [1.5, 1.5]])
    >>> rg.full((3,), 7)
    tensor([7, 7, 7])
    """
    if device is None and _default_device_on:
        device = _default_device()
    shape = _shape((size,), "full")
    fill_value = _number(fill_value, "full", "fill_value")
    dt = _dtype(dtype, "full") or _default_for(fill_value)
    make = lambda: np.full(shape, fill_value, dtype=dt)  # noqa: E731
    return _factory(_make(_alloc("full", make, shape), device, requires_grad), "full", make, device)


@composite_op("arange")
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The numbers from ``start`` up to (not including) ``end``, ``step`` apart, as a 1-d tensor.

    ``arange(n)`` is ``0, 1, ..., n-1``. The dtype is int64 when all the
    arguments are integers, else the default dtype (:func:`get_default_dtype`),
    as in torch; the values are computed in float64 first. With a
    float step, rounding may make the number of elements differ by one from
    what you expect; :func:`linspace` avoids that.

    Parameters
    ----------
    start : number
        The first value; the end when ``end`` is not given (start is then 0).
    end : number, optional
        The bound, not included.
    step : number, optional
        The difference between neighbours (default 1), nonzero.
    dtype : dtype, optional
        The dtype.
    device : str or Device, optional
        Where the tensor lives (default: :func:`get_default_device`, the CPU unless set).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new 1-d leaf tensor.

    Raises
    ------
    RuntimeError
        If ``step`` is 0, its sign does not lead from ``start`` to ``end``, or
        a bound is not finite.
    TypeError
        For complex or non-numeric arguments.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.arange(5)
    tensor([0, 1, 2, 3, 4])
    >>> rg.arange(1, 2, 0.25)
    tensor([1.  , 1.25, 1.5 , 1.75])
    >>> rg.arange(6.0).reshape(2, 3)
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """
    if device is None and _default_device_on:
        device = _default_device()
    start = _number(start, "arange", "start")
    if end is not None:
        end = _number(end, "arange", "end")
    step = _number(step, "arange", "step")
    lo, hi = (0, start) if end is None else (start, end)
    for v in (lo, hi, step):
        if isinstance(v, (builtins.complex, np.complexfloating)):
            raise TypeError("arange(): start, end and step must be real numbers")
    for v in (lo, hi, step):
        if isinstance(v, builtins.int) and not (-(1 << 63) <= v < (1 << 63)):
            raise RuntimeError(f"arange(): value {v} cannot be converted to type int64 without overflow")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"arange(): unsupported range: {lo} -> {hi}")
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if not ((step > 0 and hi >= lo) or (step < 0 and hi <= lo)):
        # NumPy returns an empty array; torch refuses
        raise RuntimeError(f"arange(): upper bound and lower bound inconsistent with step sign "
                           f"(start={lo}, end={hi}, step={step})")
    dt = _dtype(dtype, "arange") or _default_for(lo, hi, step)
    # (the length and the values computed as torch does, in double)
    make = lambda: np.arange(lo, hi, step).astype(dt, copy=False) if dt is not None else np.arange(lo, hi, step)  # noqa: E731,E501
    return _factory(_make(_alloc("arange", make, ["?"]), device, requires_grad), "arange", make, device)


@composite_op("linspace")
def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` evenly spaced numbers from ``start`` to ``end``, both included.

    Parameters
    ----------
    start : number
        The first value.
    end : number
        The last value.
    steps : int
        How many values (0 gives an empty tensor).
    dtype : dtype, optional
        The dtype (default: the default dtype, :func:`get_default_dtype`).
    device : str or Device, optional
        Where the tensor lives (default: :func:`get_default_device`, the CPU unless set).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new 1-d leaf tensor of length ``steps``.

    Raises
    ------
    TypeError
        If ``steps`` is not an integer.
    RuntimeError
        If ``steps`` is negative.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.linspace(0, 1, 5)
    tensor([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    if device is None and _default_device_on:
        device = _default_device()
    start = _number(start, "linspace", "start")
    end = _number(end, "linspace", "end")
    if isinstance(steps, (builtins.bool, np.bool_)) or not hasattr(type(steps), "__index__"):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    dt = _dtype(dtype, "linspace") or get_default_dtype()
    make = lambda: np.linspace(start, end, steps, dtype=dt)  # noqa: E731
    return _factory(_make(make(), device, requires_grad), "linspace", make, device)


@composite_op("eye")
def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 2-d tensor with ones on the diagonal and zeros elsewhere.

    Parameters
    ----------
    n : int
        The number of rows.
    m : int, optional
        The number of columns (default ``n``).
    dtype : dtype, optional
        The dtype (default: the default dtype, :func:`get_default_dtype`).
    device : str or Device, optional
        Where the tensor lives (default: :func:`get_default_device`, the CPU unless set).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new ``(n, m)`` leaf tensor.

    Raises
    ------
    TypeError
        If ``n`` or ``m`` is not an integer.
    RuntimeError
        If ``n`` or ``m`` is negative.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    >>> rg.eye(2, 3, dtype=rg.int64)
    tensor([[1, 0, 0],
            [0, 1, 0]])
    """
    if device is None and _default_device_on:
        device = _default_device()
    for name, v in (("n", n), ("m", m)):
        if v is None and name == "m":
            continue
        if isinstance(v, (builtins.bool, np.bool_)) or not hasattr(type(v), "__index__"):
            raise TypeError(f"eye(): argument '{name}' must be int, not {type(v).__name__}")
        if not (-(1 << 63) <= operator.index(v) < (1 << 63)):
            raise ValueError(f"eye(): Overflow when unpacking long long: {v} does not fit in int64")
        if operator.index(v) < 0:
            raise RuntimeError(f"eye(): {name} must be greater or equal to 0, got {v}")
    dt = _dtype(dtype, "eye") or get_default_dtype()
    make = lambda: np.eye(n, m, dtype=dt)  # noqa: E731
    return _factory(_make(_alloc("eye", make, [n, m]), device, requires_grad), "eye", make, device)


def _like_input(t, fn):
    # torch's *_like functions take a tensor; NumPy arrays are accepted too
    if isinstance(t, Tensor):
        return t._array
    if isinstance(t, np.ndarray) or hasattr(t, "__cuda_array_interface__"):
        return t
    raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")


def _like(fn, t, dtype, device, requires_grad, *args):
    arr = _like_input(t, fn.__name__)
    dev = device if device is not None else (t.device if isinstance(t, Tensor) else
                                             _cuda_device_of(arr) if _is_cupy(arr) else None)
    if _is_cupy(arr) and _abi.device(dev).type_name != "cuda":
        # a host result of a device array's shape: only shape and dtype are
        # read (np.asarray would copy the data, and CuPy refuses it)
        arr = np.empty(arr.shape, dtype=arr.dtype)
    # (a CuPy array stays one: NumPy's function dispatches to CuPy's)
    dt = _dtype(dtype, fn.__name__)
    t = _make(fn(arr, *args, dtype=dt), dev, requires_grad)
    if _abi._trace_slot_filled():
        proto = _proto(arr)
        _factory(t, fn.__name__, lambda: fn(proto(), *args, dtype=dt), dev)
    return t


@composite_op("zeros_like")
def zeros_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor filled with zeros, of ``t``'s shape, dtype and device.

    Parameters
    ----------
    t : Tensor or numpy.ndarray
        Gives the shape, and the dtype and device unless overridden.
    dtype : dtype, optional
        The dtype (default: ``t``'s).
    device : str or Device, optional
        The device (default: ``t``'s).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new leaf tensor; it never shares memory or graph with ``t``.

    Raises
    ------
    TypeError
        If ``t`` is neither a tensor nor an array.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([[1, 2], [3, 4]])
    >>> rg.zeros_like(x)
    tensor([[0, 0],
            [0, 0]])
    """
    return _like(np.zeros_like, t, dtype, device, requires_grad)


@composite_op("ones_like")
def ones_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor filled with ones, of ``t``'s shape, dtype and device.

    Parameters
    ----------
    t : Tensor or numpy.ndarray
        Gives the shape, and the dtype and device unless overridden.
    dtype : dtype, optional
        The dtype (default: ``t``'s).
    device : str or Device, optional
        The device (default: ``t``'s).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new leaf tensor; it never shares memory or graph with ``t``.

    Raises
    ------
    TypeError
        If ``t`` is neither a tensor nor an array.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0, 3.0])
    >>> rg.ones_like(x)
    tensor([1., 1., 1.])
    """
    return _like(np.ones_like, t, dtype, device, requires_grad)


@composite_op("empty_like")
def empty_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ``t``'s shape, dtype and device whose values are not initialised.

    Parameters
    ----------
    t : Tensor or numpy.ndarray
        Gives the shape, and the dtype and device unless overridden.
    dtype : dtype, optional
        The dtype (default: ``t``'s).
    device : str or Device, optional
        The device (default: ``t``'s).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new leaf tensor with arbitrary values.

    Raises
    ------
    TypeError
        If ``t`` is neither a tensor nor an array.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.zeros(2, 3, dtype=rg.float32)
    >>> e = rg.empty_like(x)
    >>> e.shape, e.dtype
    ((2, 3), dtype('float32'))
    """
    return _like(np.empty_like, t, dtype, device, requires_grad)


@composite_op("full_like")
def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ``t``'s shape, dtype and device with every element equal to ``fill_value``.

    The value is cast to the dtype (7.9 in an integer tensor is 7).

    Parameters
    ----------
    t : Tensor or numpy.ndarray
        Gives the shape, and the dtype and device unless overridden.
    fill_value : number or Tensor
        The value (a number or a one-element tensor).
    dtype : dtype, optional
        The dtype (default: ``t``'s).
    device : str or Device, optional
        The device (default: ``t``'s).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).

    Returns
    -------
    Tensor
        A new leaf tensor.

    Raises
    ------
    TypeError
        If ``t`` is neither a tensor nor an array, or ``fill_value`` is not a
        number.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.full_like(rg.tensor([1, 2, 3]), 7.9)
    tensor([7, 7, 7])
    """
    arr = _like_input(t, "full_like")
    fill_value = _number(fill_value, "full_like", "fill_value")
    dt = _dtype(dtype, "full_like")
    dev = device if device is not None else getattr(t, "device", None)
    t = _make(np.full_like(arr, fill_value, dtype=dt), dev, requires_grad)
    if _abi._trace_slot_filled():
        proto = _proto(arr)
        _factory(t, "full_like", lambda: np.full_like(proto(), fill_value, dtype=dt), dev)
    return t


def _proto(arr):
    # What a *_like replay needs of arr: its shape, dtype and kind of array
    # (NumPy or CuPy), without its values or keeping its memory: a 0-d view
    # of one element, broadcast back to arr's shape on each replay.
    if arr.size == 0:
        return lambda: arr
    elem, shape = arr[(0,) * arr.ndim + (Ellipsis,)], arr.shape
    return lambda: np.broadcast_to(elem, shape)


@composite_op("rand")
def rand(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """A tensor of shape ``size`` drawn uniformly from ``[0, 1)``.

    Draws from the global NumPy generator (seed it with :func:`manual_seed`)
    or from ``generator``. The values are computed in float64 and then cast
    to ``dtype``.

    Parameters
    ----------
    size : int or sequence of int
        The shape: separate ints (``zeros(2, 3)``) or one tuple or list
        (``zeros((2, 3))``); ``()`` for a 0-d tensor.
    dtype : dtype, optional
        The dtype (default: the default dtype, :func:`get_default_dtype`).
    device : str or Device, optional
        Where the tensor lives (default: :func:`get_default_device`, the CPU unless set).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).
    generator : numpy.random.Generator, optional
        Draw from this generator instead of the global one
        (:func:`get_rng`).

    Returns
    -------
    Tensor
        A new leaf tensor.

    Raises
    ------
    TypeError
        For sizes that are not integers.
    RuntimeError
        For negative sizes, or one too large to allocate.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> x = rg.rand(2, 3)
    >>> x.shape
    (2, 3)
    >>> a = x.numpy()
    >>> bool((a >= 0).all() and (a < 1).all())
    True
    """
    if device is None and _default_device_on:
        device = _default_device()
    g = _generator(generator, "rand", device)
    shape = _shape(size, "rand")
    dt = _dtype(dtype, "rand") or get_default_dtype()
    return _traced(_make(_alloc("rand", lambda: g.random(shape).astype(dt, copy=False), shape), device,
                         requires_grad),
                   "rand", lambda: rand(*size, dtype=dtype, device=device, generator=generator))


@composite_op("randn")
def randn(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """A tensor of shape ``size`` drawn from the standard normal distribution.

    Mean 0, variance 1. Draws from the global NumPy generator (seed it with
    :func:`manual_seed`) or from ``generator``.

    Parameters
    ----------
    size : int or sequence of int
        The shape: separate ints (``zeros(2, 3)``) or one tuple or list
        (``zeros((2, 3))``); ``()`` for a 0-d tensor.
    dtype : dtype, optional
        The dtype (default: the default dtype, :func:`get_default_dtype`).
    device : str or Device, optional
        Where the tensor lives (default: :func:`get_default_device`, the CPU unless set).
    requires_grad : bool, optional
        Make it a leaf that requires grad (default False).
    generator : numpy.random.Generator, optional
        Draw from this generator instead of the global one
        (:func:`get_rng`).

    Returns
    -------
    Tensor
        A new leaf tensor.

    Raises
    ------
    TypeError
        For sizes that are not integers.
    RuntimeError
        For negative sizes, or one too large to allocate.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> x = rg.randn(3, generator=np.random.default_rng(0))
    >>> x
    tensor([ 0.12573022, -0.13210486,  0.64042264])
    """
    if device is None and _default_device_on:
        device = _default_device()
    g = _generator(generator, "randn", device)
    shape = _shape(size, "randn")
    dt = _dtype(dtype, "randn") or get_default_dtype()
    return _traced(_make(_alloc("randn", lambda: g.standard_normal(shape).astype(dt, copy=False), shape),
                         device, requires_grad),
                   "randn", lambda: randn(*size, dtype=dtype, device=device, generator=generator))


def _generator(generator, fn, device=None):
    # generator=: an np.random.Generator (retrograd's own when None; for a
    # CUDA device, that device's CuPy generator)
    if generator is None:
        if device is not None:
            dev = _abi.device(device)
            if dev.type_name == "cuda":
                return _CudaGenerator(dev)
        return get_rng()
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be a numpy.random.Generator (for example "
                        f"np.random.default_rng(seed)), not {type(generator).__name__}")
    return generator


def _int_bound(v, fn, arg):
    if isinstance(v, Tensor) and v.numel() == 1:
        v = v.item()
    if isinstance(v, (builtins.bool, np.bool_)) or not hasattr(type(v), "__index__"):
        if isinstance(v, (builtins.float, np.floating)) and builtins.float(v).is_integer():
            return builtins.int(v)       # torch takes 10.0 as 10
        raise TypeError(f"{fn}(): argument '{arg}' must be int, not {type(v).__name__}")
    return operator.index(v)


@composite_op("randint")
def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False) -> Tensor:
    """Random integers drawn uniformly from ``[low, high)``.

    torch's signatures: ``randint(high, size)`` or ``randint(low, high,
    size)``, ``size`` a tuple of ints. The default dtype is int64, as in
    torch.

    Parameters
    ----------
    low : int, optional
        The smallest value that may be drawn (default 0).
    high : int
        One above the largest value that may be drawn.
    size : tuple of int
        The result's shape.
    generator : numpy.random.Generator, optional
        Draw from this generator instead of retrograd's (seeded by
        :func:`manual_seed`).
    dtype : dtype, optional
        The result's dtype (default int64).
    device : str or Device, optional
        Where the result lives.
    requires_grad : bool, optional
        Only for floating dtypes, as in torch.

    Returns
    -------
    Tensor
        A tensor of shape ``size``.

    Raises
    ------
    TypeError
        ``size`` is missing or the bounds are not integers.
    RuntimeError
        ``low >= high`` (with a non-empty size), or requires_grad with an
        integer dtype.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> x = rg.randint(0, 10, (2, 3))
    >>> x.shape, x.dtype
    ((2, 3), dtype('int64'))
    >>> bool((x >= 0).all()), bool((x < 10).all())
    (True, True)
    """
    if size is None:
        if isinstance(high, (tuple, list)):            # randint(high, size)
            low, high, size = 0, low, high
        else:
            raise TypeError("randint(): missing the 'size' argument: call randint(high, size) or "
                            "randint(low, high, size), with size a tuple of ints such as (3,)")
    if high is None:                                   # randint(high, size=...)
        low, high = 0, low
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be a tuple of ints, not {type(size).__name__}")
    shape = _shape((tuple(size),), "randint")
    lo, hi = _int_bound(low, "randint", "low"), _int_bound(high, "randint", "high")
    dt = _dtype(dtype, "randint") or np.dtype(np.int64)
    n = 1
    for d in shape:
        n *= d
    if n and lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}; "
                           "randint draws from [low, high)")
    if requires_grad and not _is_inexact_dtype(dt):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients; pass a "
                           "floating dtype to randint (dtype=rg.float64)")
    if device is None and _default_device_on:
        device = _default_device()
    g = _generator(generator, "randint", device)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if n and (lo < info.min or hi - 1 > info.max):
            raise RuntimeError(f"randint(): the range [{lo}, {hi}) does not fit in {dt}; pick a wider dtype")
    make = lambda: g.integers(lo, hi, size=shape, dtype=np.int64, endpoint=False).astype(dt, copy=False)  # noqa: E731
    return _traced(_make(_alloc("randint", make, shape), device, requires_grad), "randint",
                   lambda: randint(low, high, size, generator=generator, dtype=dtype, device=device))


@composite_op("randperm")
def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of ``0, 1, ..., n - 1``.

    Parameters
    ----------
    n : int
        How many integers (``n >= 0``).
    generator : numpy.random.Generator, optional
        Draw from this generator instead of retrograd's.
    dtype : dtype, optional
        The result's dtype (default int64, as torch).
    device : str or Device, optional
        Where the result lives.
    requires_grad : bool, optional
        Only for floating dtypes.

    Returns
    -------
    Tensor
        A 1-D tensor holding each of ``0 .. n-1`` once.

    Raises
    ------
    TypeError
        ``n`` is not an integer.
    RuntimeError
        ``n`` is negative, or requires_grad with an integer dtype.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> p = rg.randperm(5)
    >>> sorted(p.tolist())
    [0, 1, 2, 3, 4]
    >>> p.dtype
    dtype('int64')
    """
    n = _int_bound(n, "randperm", "n")
    if n < 0:
        raise RuntimeError(f"randperm(): n must be non-negative, got {n}")
    dt = _dtype(dtype, "randperm") or np.dtype(np.int64)
    if requires_grad and not _is_inexact_dtype(dt):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients; pass a "
                           "floating dtype to randperm (dtype=rg.float64)")
    if dt.kind in "iu" and n and n - 1 > np.iinfo(dt).max:
        raise RuntimeError(f"randperm(): n={n} is too large for the dtype {dt}; pick a wider dtype")
    if device is None and _default_device_on:
        device = _default_device()
    g = _generator(generator, "randperm", device)
    return _traced(_make(_alloc("randperm", lambda: g.permutation(n).astype(dt, copy=False), (n,)),
                         device, requires_grad),
                   "randperm", lambda: randperm(n, generator=generator, dtype=dtype, device=device))


def _random_like(fn, draw, t, dtype, device, requires_grad, generator, complex_scale=1.0):
    arr = _like_input(t, fn)
    dt = _dtype(dtype, fn) or np.dtype(arr.dtype)
    if not _is_inexact_dtype(dt):
        raise RuntimeError(f"{fn}(): expected a floating dtype, got {dt} (\"check_uniform_bounds\" not "
                           f"implemented for it); pass dtype=rg.float64 or a floating input")
    shape = tuple(arr.shape)
    dev = device if device is not None else (t.device if isinstance(t, Tensor) else None)
    g = _generator(generator, fn, dev)
    if dt.kind == "c":
        real = np.finfo(dt).dtype

        def make():
            # torch: real and imaginary parts each uniform in [0, 1) (rand),
            # or each of variance 1/2 (randn: complex_scale)
            re = draw(g, shape) * complex_scale
            im = draw(g, shape) * complex_scale
            return (re.astype(real) + 1j * im.astype(real)).astype(dt)
    else:
        def make():
            return draw(g, shape).astype(dt, copy=False)
    return _traced(_make(_alloc(fn, make, shape), dev, requires_grad), fn,
                   lambda: _random_like(fn, draw, t, dtype, device, False, generator, complex_scale))


@composite_op("rand_like")
def rand_like(input, *, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """A tensor shaped like ``input`` of numbers drawn uniformly from [0, 1).

    Parameters
    ----------
    input : Tensor
        Gives the shape, and the dtype and device unless given.
    dtype : dtype, optional
        A floating dtype (default: ``input``'s).
    device : str or Device, optional
        Default: ``input``'s device.
    requires_grad : bool, optional
        Make the result a leaf that requires grad.
    generator : numpy.random.Generator, optional
        Draw from this generator instead of retrograd's.

    Returns
    -------
    Tensor
        The random tensor.

    Raises
    ------
    TypeError
        ``input`` is not a tensor.
    RuntimeError
        The dtype is not floating.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> r = rg.rand_like(rg.zeros(2, 3, dtype=rg.float32))
    >>> r.shape, r.dtype
    ((2, 3), dtype('float32'))
    """
    return _random_like("rand_like", lambda g, s: g.random(s), input, dtype, device, requires_grad, generator)


@composite_op("randn_like")
def randn_like(input, *, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """A tensor shaped like ``input`` of standard normal numbers.

    For a complex dtype the real and imaginary parts each have variance
    1/2, as in torch.

    Parameters
    ----------
    input : Tensor
        Gives the shape, and the dtype and device unless given.
    dtype : dtype, optional
        A floating dtype (default: ``input``'s).
    device : str or Device, optional
        Default: ``input``'s device.
    requires_grad : bool, optional
        Make the result a leaf that requires grad.
    generator : numpy.random.Generator, optional
        Draw from this generator instead of retrograd's.

    Returns
    -------
    Tensor
        The random tensor.

    Raises
    ------
    TypeError
        ``input`` is not a tensor.
    RuntimeError
        The dtype is not floating.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> rg.randn_like(rg.ones(4)).shape
    (4,)
    """
    return _random_like("randn_like", lambda g, s: g.standard_normal(s), input, dtype, device, requires_grad,
                        generator, complex_scale=np.sqrt(0.5))
