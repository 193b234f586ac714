"""A CPU stand-in for CuPy, for testing retrograd's device-generic code
without a GPU (``PYTHONPATH=tests/cuda/fake_cupy``; see tests/cuda/_cuda.py).

Its ``ndarray`` is a type of its own that wraps a NumPy array and keeps
CuPy's rules where code written for NumPy usually breaks on a GPU:
- no implicit conversion to NumPy (``np.asarray(x)`` raises TypeError; use
  ``.get()`` or ``cupy.asnumpy``);
- NumPy arrays never mix with it in ufuncs, operators or array functions
  (TypeError, as CuPy raises for host arrays);
- reductions return 0-d arrays, never NumPy scalars;
- ``ufunc.at`` is not supported (``cupyx.scatter_add`` is).
NumPy's functions dispatch to it through ``__array_function__`` and
``__array_ufunc__``, as they do to CuPy. It is a test double, not CuPy: it
accepts some things real CuPy lacks, so the real-GPU run stays the proof.
"""

import numpy as _np

from cupy import _memory
from cupy._memory import get_default_memory_pool, get_default_pinned_memory_pool  # noqa: F401

__version__ = "0.0.0+fake"
_FAKE = True
_IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. "
             "Please use `.get()` to construct a NumPy array explicitly.")


def _unwrap(x, where):
    if type(x) is ndarray:
        return x._a
    if type(x) is _np.ndarray:
        raise TypeError(f"Unsupported type {type(x)} (a NumPy array given to {where})")
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v, where) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v, where) for k, v in x.items()}
    return x


def _wrap(x):
    if type(x) is _np.ndarray:
        return ndarray(x)
    if isinstance(x, _np.generic) and not isinstance(x, _np.dtype):
        return ndarray(_np.asarray(x))
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    if isinstance(x, list):
        return [_wrap(v) for v in x]
    return x


def _host_read(what):
    # a read of device memory by the host: on a GPU it waits for every
    # kernel queued before it (an implicit synchronize). Recorded as
    # ("host_read", None, what) in cupy.cuda._log.
    from cupy.cuda import _log
    _log.append(("host_read", None, what))


class _Pointer:
    def __init__(self, a):
        self.ptr = a.__array_interface__["data"][0]
        base = a
        while isinstance(base.base, _np.ndarray):
            base = base.base
        self.mem = base


class _Flags:
    # CuPy's flags: no writeable (its arrays are always writable)
    def __init__(self, f):
        self.c_contiguous = f.c_contiguous
        self.f_contiguous = f.f_contiguous
        self.owndata = f.owndata

    def __getitem__(self, key):
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous,
                "OWNDATA": self.owndata}[key]


class ndarray:
    __slots__ = ("_a", "_mem", "__weakref__")
    __array_priority__ = 100

    def __init__(self, a):
        if type(a) is not _np.ndarray:
            raise TypeError(f"fake cupy.ndarray wraps a numpy array, got {type(a)}")
        self._a = a
        # it owns its data: a block from the current allocator (the default pool's)
        self._mem = _memory._allocate(a.nbytes) if a.base is None and a.nbytes else None

    # --- interop -------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method not in ("__call__", "reduce", "accumulate"):
            return NotImplemented
        if "where" in kwargs:           # CuPy's ufuncs take no where=
            raise TypeError(f"Wrong arguments {{'where': {kwargs['where']!r}}}")
        out = kwargs.pop("out", None)
        kwargs = _unwrap(kwargs, ufunc.__name__)
        if out is not None:
            kwargs["out"] = tuple(_unwrap(o, ufunc.__name__) for o in out)
        res = getattr(ufunc, method)(*_unwrap(inputs, ufunc.__name__), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(res)

    def __array_function__(self, func, types, args, kwargs):
        if not all(issubclass(t, (ndarray, _np.ndarray)) for t in types):
            return NotImplemented
        if "device" in kwargs:          # np.ones(..., like=x) hands CuPy a device= it rejects
            raise TypeError(f"{func.__name__}() got an unexpected keyword argument 'device'")
        return _wrap(func(*_unwrap(args, func.__name__), **_unwrap(kwargs, func.__name__)))

    @property
    def __cuda_array_interface__(self):
        d = dict(self._a.__array_interface__)
        d["version"] = 3
        return d

    # DLPack: the stand-in's memory is host memory, but it says CUDA, as a
    # CuPy array does; consumers must route it to cupy.from_dlpack
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        kwargs = {} if max_version is None else {"max_version": max_version}
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (2, self.device.id)

    def get(self, stream=None, order="C", out=None, blocking=True):
        _host_read("get")
        if out is not None:
            out[...] = self._a
            return out
        return self._a.copy()

    # --- attributes ----------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: _Flags(self._a.flags))
    T = property(lambda self: ndarray(self._a.T))
    mT = property(lambda self: ndarray(_np.swapaxes(self._a, -1, -2)))
    real = property(lambda self: _wrap(self._a.real))
    imag = property(lambda self: _wrap(self._a.imag))
    data = property(lambda self: _Pointer(self._a))
    device = property(lambda self: cuda.Device(0))

    @property
    def base(self):
        b = self._a.base
        return ndarray(b) if type(b) is _np.ndarray else None

    def __getattr__(self, name):
        if name.startswith("__"):       # __array_interface__ & co: no way to host memory
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)

        def method(*args, **kwargs):
            return _wrap(attr(*_unwrap(args, name), **_unwrap(kwargs, name)))
        return method

    def item(self):
        _host_read("item")
        return self._a.item()

    def tolist(self):
        _host_read("tolist")
        return self._a.tolist()

    # --- Python protocols ----------------------------------------------
    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (ndarray(v) if type(v) is _np.ndarray else ndarray(_np.asarray(v)) for v in self._a)

    def __bool__(self):
        _host_read("__bool__")
        return bool(self._a)

    def __float__(self):
        _host_read("__float__")
        return float(self._a)

    def __int__(self):
        _host_read("__int__")
        return int(self._a)

    def __index__(self):
        _host_read("__index__")
        return self._a.__index__()

    def __complex__(self):
        _host_read("__complex__")
        return complex(self._a)

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap_index(key)])

    def __setitem__(self, key, value):
        if type(value) is ndarray:
            value = value._a
        self._a[_unwrap_index(key)] = value

    def __copy__(self):
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy())

    def __reduce__(self):
        return (_rebuild, (self._a,))


def _rebuild(a):
    return ndarray(a)


def _unwrap_index(key):
    if type(key) is ndarray:
        return key._a
    if isinstance(key, tuple):
        return tuple(k._a if type(k) is ndarray else k for k in key)
    return key


def _binop(name):
    ufunc = getattr(_np, name)

    def op(self, other):
        return ufunc(self, other)

    def rop(self, other):
        return ufunc(other, self)

    def iop(self, other):
        ufunc(self, other, out=(self,))
        return self
    return op, rop, iop


for _op, _uf in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
                 ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "power"), ("matmul", "matmul"),
                 ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                 ("lshift", "left_shift"), ("rshift", "right_shift")]:
    _f, _r, _i = _binop(_uf)
    setattr(ndarray, f"__{_op}__", _f)
    setattr(ndarray, f"__r{_op}__", _r)
    setattr(ndarray, f"__i{_op}__", _i)
for _op, _uf in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
                 ("eq", "equal"), ("ne", "not_equal")]:
    setattr(ndarray, f"__{_op}__", _binop(_uf)[0])
ndarray.__neg__ = lambda self: _np.negative(self)
ndarray.__pos__ = lambda self: _np.positive(self)
ndarray.__abs__ = lambda self: _np.absolute(self)
ndarray.__invert__ = lambda self: _np.invert(self)
ndarray.__hash__ = None


# --- module functions ------------------------------------------------------

def asarray(a, dtype=None, order=None, *, blocking=False):
    if type(a) is ndarray:
        return a if dtype is None or a.dtype == dtype else a.astype(dtype)
    return ndarray(_np.array(a, dtype=dtype, order=order or "K", copy=True))


def array(a, dtype=None, copy=True, order="K", ndmin=0):
    if type(a) is ndarray:
        a = a._a
    return ndarray(_np.array(a, dtype=dtype, copy=True, order=order, ndmin=ndmin))


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    if type(a) is ndarray:
        _host_read("asnumpy")
        return a._a.copy()
    return _np.asarray(a)


class _HostDLPack:
    # the stand-in's from_dlpack reads host memory that says CUDA
    def __init__(self, obj):
        self._obj = obj

    def __dlpack__(self, **kwargs):
        return self._obj.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(obj):
    """cupy.from_dlpack: only CUDA (2) and managed (13) memory, as CuPy."""
    device_type = obj.__dlpack_device__()[0]
    if device_type not in (2, 13):
        raise RuntimeError(f"CuPy cannot import DLPack memory of device type {device_type} (not CUDA)")
    return ndarray(_np.from_dlpack(_HostDLPack(obj)))


def get_array_module(*args):
    import sys
    return sys.modules[__name__] if any(type(a) is ndarray for a in args) else _np


def _factory(name):
    f = getattr(_np, name)

    def make(*args, **kwargs):
        return _wrap(f(*_unwrap(args, name), **_unwrap(kwargs, name)))
    make.__name__ = name
    return make


for _name in ("zeros", "ones", "empty", "full", "arange", "linspace", "eye", "identity",
              "zeros_like", "ones_like", "empty_like", "full_like"):
    globals()[_name] = _factory(_name)


class _AddUFunc:
    # cupy.add: a ufunc with .at (np.add.at on the wrapped arrays)
    def __call__(self, *args, **kwargs):
        return _np.add(*args, **kwargs)

    @staticmethod
    def at(a, indices, b):
        if isinstance(indices, tuple):
            indices = tuple(_unwrap_index(i) for i in indices)
        else:
            indices = _unwrap_index(indices)
        _np.add.at(a._a, indices, b._a if type(b) is ndarray else b)


add = _AddUFunc()


def __getattr__(name):
    # cupy.<anything NumPy has>: NumPy's function applied to the wrapped arrays
    if name.startswith("__"):
        raise AttributeError(name)
    attr = getattr(_np, name)
    if isinstance(attr, type) or not callable(attr):
        return attr
    return _factory(name)


class lib:
    class stride_tricks:
        @staticmethod
        def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
            return ndarray(_np.lib.stride_tricks.as_strided(x._a, shape, strides, writeable=writeable))

        @staticmethod
        def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
            return ndarray(_np.lib.stride_tricks.sliding_window_view(x._a, window_shape, axis))


from cupy import cuda  # noqa: E402  (the runtime section: cupy/cuda.py)
from cupy._elementwise import ElementwiseKernel  # noqa: E402,F401


class random:
    # CuPy's legacy global random state is per device: one RandomState each
    _states = {}

    @staticmethod
    def default_rng(seed=None):
        return _Generator(_np.random.default_rng(seed))

    @staticmethod
    def get_random_state():
        return random._states.setdefault(cuda.runtime.getDevice(), _np.random.RandomState())

    @staticmethod
    def seed(seed=None):
        random._states[cuda.runtime.getDevice()] = _np.random.RandomState(seed)

    @staticmethod
    def random_sample(size=None, dtype=float):
        return ndarray(_np.asarray(random.get_random_state().random_sample(size), dtype=dtype))

    @staticmethod
    def standard_normal(size=None, dtype=float):
        return ndarray(_np.asarray(random.get_random_state().standard_normal(size), dtype=dtype))

    @staticmethod
    def randint(low, high=None, size=None, dtype=int):
        return ndarray(_np.asarray(random.get_random_state().randint(low, high, size=size, dtype=_np.int64),
                                   dtype=dtype))

    @staticmethod
    def permutation(num):
        return ndarray(random.get_random_state().permutation(num))


class _Generator:
    def __init__(self, g):
        self._g = g

    def __getattr__(self, name):
        f = getattr(self._g, name)
        return lambda *a, **k: _wrap(f(*a, **k))
