"""Tensor factories: tensor, as_tensor, from_numpy, zeros, ones, ... (NumPy dtypes and defaults).

Random factories draw from one NumPy Generator, reseeded by manual_seed.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core.abi import Tensor

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange",
           "linspace", "eye", "zeros_like", "ones_like", "full_like", "empty_like", "rand",
           "randn", "randint", "randperm", "rand_like", "randn_like", "manual_seed", "get_rng", "is_tensor"]

# Created on first use: importing numpy.random is ~20 ms, most of what
# `import retrograd` adds to `import numpy` (benchmarks/footprint.py).
_rng = None


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed retrograd's random generator (rand, randn, dropout)."""
    global _rng
    _rng = np.random.default_rng(seed)
    return _rng


def get_rng() -> np.random.Generator:
    global _rng
    if _rng is None:
        _rng = np.random.default_rng()
    return _rng


def is_tensor(obj) -> bool:
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


def _is_cupy(a) -> bool:
    return type(a).__module__.split(".")[0] == "cupy" and type(a).__name__ == "ndarray"


def _cuda_device_of(a):
    return _abi.device(f"cuda:{a.device.id}")


def tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (``torch.tensor``), with NumPy's dtype rules.

    ``data`` may be a Tensor or a CuPy array: the copy stays on its device
    unless ``device`` says otherwise, as in torch."""
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
    return _make(arr, device, requires_grad)


def _checked_data(arr, data, fn):
    # torch makes tensors of numbers only: strings raise TypeError (NumPy would
    # make a '<U3' tensor of rg.tensor('abc')), other objects RuntimeError.
    if arr.dtype.kind in "US" and arr.ndim:
        raise ValueError(f"too many dimensions 'str': {fn}() takes numbers, nested sequences of numbers or "
                         "an array of numbers")
    if arr.dtype.kind in "US":
        raise TypeError(f"{fn}(): invalid data type 'str': data must be numbers, nested sequences of "
                        "numbers or an array of numbers")
    if arr.dtype.kind in "OVMm":
        bad = data if arr.ndim == 0 else next((x for x in arr.reshape(-1)
                                               if not isinstance(x, (builtins.int, builtins.float,
                                                                     builtins.complex))), None)
        raise RuntimeError(f"Could not infer dtype of {type(bad).__name__}: {fn}() takes numbers, nested "
                           "sequences of numbers or an array of numbers")
    return arr


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """A tensor sharing ``data``'s memory when it is already an array of that
    dtype on that device (a NumPy array, or a CuPy array for a CUDA tensor)."""
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
    return _make(_checked_data(np.asarray(data, dtype=_dtype(dtype, "as_tensor")), data, "as_tensor"), device, False)


def from_numpy(array) -> Tensor:
    """A tensor sharing ``array``'s memory (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return _abi._wrap(array)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    shape = _shape(size, "zeros")
    dt = _dtype(dtype, "zeros") or np.float64
    return _make(_alloc("zeros", lambda: np.zeros(shape, dtype=dt), shape), device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    shape = _shape(size, "ones")
    dt = _dtype(dtype, "ones") or np.float64
    return _make(_alloc("ones", lambda: np.ones(shape, dtype=dt), shape), device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    shape = _shape(size, "empty")
    dt = _dtype(dtype, "empty") or np.float64
    return _make(_alloc("empty", lambda: np.empty(shape, dtype=dt), shape), device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    shape = _shape((size,), "full")
    fill_value = _number(fill_value, "full", "fill_value")
    dt = _dtype(dtype, "full")
    return _make(_alloc("full", lambda: np.full(shape, fill_value, dtype=dt), shape), device, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
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
    dt = _dtype(dtype, "arange")
    arr = _alloc("arange", lambda: np.arange(lo, hi, step, dtype=dt), ["?"])
    return _make(arr, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    start = _number(start, "linspace", "start")
    end = _number(end, "linspace", "end")
    if isinstance(steps, (builtins.bool, np.bool_)) or not hasattr(type(steps), "__index__"):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    return _make(np.linspace(start, end, steps, dtype=_dtype(dtype, "linspace")), device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    for name, v in (("n", n), ("m", m)):
        if v is None and name == "m":
            continue
        if isinstance(v, (builtins.bool, np.bool_)) or not hasattr(type(v), "__index__"):
            raise TypeError(f"eye(): argument '{name}' must be int, not {type(v).__name__}")
        if not (-(1 << 63) <= operator.index(v) < (1 << 63)):
            raise ValueError(f"eye(): Overflow when unpacking long long: {v} does not fit in int64")
        if operator.index(v) < 0:
            raise RuntimeError(f"eye(): {name} must be greater or equal to 0, got {v}")
    dt = _dtype(dtype, "eye") or np.float64
    return _make(_alloc("eye", lambda: np.eye(n, m, dtype=dt), [n, m]), device, requires_grad)


def _like_input(t, fn):
    # torch's *_like functions take a tensor; NumPy arrays are accepted too
    if isinstance(t, Tensor):
        return t._array
    if isinstance(t, np.ndarray) or hasattr(t, "__cuda_array_interface__"):
        return t
    raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")


def _like(fn, t, dtype, device, requires_grad, *args):
    arr = _like_input(t, fn.__name__)
    dev = device if device is not None else (t.device if isinstance(t, Tensor) else None)
    return _make(fn(np.asarray(arr) if not isinstance(arr, np.ndarray) else arr, *args,
                    dtype=_dtype(dtype, fn.__name__)), dev, requires_grad)


def zeros_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(np.zeros_like, t, dtype, device, requires_grad)


def ones_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(np.ones_like, t, dtype, device, requires_grad)


def empty_like(t, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(np.empty_like, t, dtype, device, requires_grad)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    arr = _like_input(t, "full_like")
    fill_value = _number(fill_value, "full_like", "fill_value")
    return _make(np.full_like(arr, fill_value, dtype=_dtype(dtype, "full_like")),
                 device if device is not None else getattr(t, "device", None), requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    g = generator or get_rng()
    shape = _shape(size, "rand")
    dt = _dtype(dtype, "rand") or np.dtype(np.float64)
    return _make(_alloc("rand", lambda: g.random(shape).astype(dt, copy=False), shape), device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    g = generator or get_rng()
    shape = _shape(size, "randn")
    dt = _dtype(dtype, "randn") or np.dtype(np.float64)
    return _make(_alloc("randn", lambda: g.standard_normal(shape).astype(dt, copy=False), shape), device,
                 requires_grad)


def _generator(generator, fn):
    # generator=: an np.random.Generator (retrograd's own when None)
    if generator is None:
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
    if requires_grad and dt.kind not in "fc":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients; pass a "
                           "floating dtype to randint (dtype=rg.float64)")
    g = _generator(generator, "randint")
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if n and (lo < info.min or hi - 1 > info.max):
            raise RuntimeError(f"randint(): the range [{lo}, {hi}) does not fit in {dt}; pick a wider dtype")
    make = lambda: g.integers(lo, hi, size=shape, dtype=np.int64, endpoint=False).astype(dt, copy=False)  # noqa: E731
    return _make(_alloc("randint", make, shape), device, requires_grad)


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
    if requires_grad and dt.kind not in "fc":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients; pass a "
                           "floating dtype to randperm (dtype=rg.float64)")
    if dt.kind in "iu" and n and n - 1 > np.iinfo(dt).max:
        raise RuntimeError(f"randperm(): n={n} is too large for the dtype {dt}; pick a wider dtype")
    g = _generator(generator, "randperm")
    return _make(_alloc("randperm", lambda: g.permutation(n).astype(dt, copy=False), (n,)), device,
                 requires_grad)


def _random_like(fn, draw, t, dtype, device, requires_grad, generator, complex_scale=1.0):
    arr = _like_input(t, fn)
    dt = _dtype(dtype, fn) or np.dtype(arr.dtype)
    if dt.kind not in "fc":
        raise RuntimeError(f"{fn}(): expected a floating dtype, got {dt} (\"check_uniform_bounds\" not "
                           f"implemented for it); pass dtype=rg.float64 or a floating input")
    g = _generator(generator, fn)
    shape = tuple(arr.shape)
    dev = device if device is not None else (t.device if isinstance(t, Tensor) else None)
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
    return _make(_alloc(fn, make, shape), dev, requires_grad)


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
