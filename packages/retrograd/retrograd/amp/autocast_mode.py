"""autocast (torch.amp.autocast), custom_fwd and custom_bwd: see the package's docstring."""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import numpy as np

import retrograd.core as _c

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_DEVICE_TYPES = ("cpu", "cuda")


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` takes this device type ("cpu" and "cuda").

    Parameters
    ----------
    device_type : str

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.amp.is_autocast_available("cpu")
    True
    """
    return device_type in _DEVICE_TYPES


def _dtype_name(dtype: Any) -> str:
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype).replace("torch.", "")


class autocast:
    """A mixed-precision region (``torch.autocast``): a context manager and a decorator.

    Inside it, the ops of torch's autocast lists cast their floating inputs
    first: the matrix products and convolutions (``mm``, ``matmul``,
    ``linear``, ``conv2d``, ``scaled_dot_product_attention``, ...) to the
    region's lower precision, the ops that need range (losses, ``prod``,
    linear algebra; on CUDA also ``exp``, ``softmax``, ``sum``, ...) to
    float32. Other ops compute in their inputs' dtype. float64 tensors are
    never cast. The casts are recorded, so the gradients of float32
    parameters arrive in float32. Regions nest; ``enabled=False`` inside one
    turns it off for the inner block.

    float16 works everywhere; bfloat16 (the CPU's default) needs the
    ml_dtypes package, which gives NumPy that dtype. As in torch, a dtype
    other than those two disables the region with a warning (so float32 and
    float64 regions change nothing).

    Parameters
    ----------
    device_type : str, optional
        "cpu" or "cuda" (default "cuda", as ``torch.cuda.amp.autocast``).
    dtype : dtype, optional
        The lower precision (torch's default: float16 on CUDA, bfloat16 on CPU).
    enabled : bool, optional
        Whether the region is active (default True).
    cache_enabled : bool, optional
        torch's cast cache switch: recorded; retrograd keeps no cache (a
        weight used twice is cast twice, to the same values).

    Raises
    ------
    RuntimeError
        For a device type other than "cpu" and "cuda".
    AttributeError
        On entering a bfloat16 region without ml_dtypes installed.

    Examples
    --------
    >>> import retrograd as rg
    >>> a, w = rg.ones(2, 3), rg.ones(3, 4, requires_grad=True)
    >>> with rg.autocast("cpu", dtype=rg.float16):
    ...     y = a @ w
    ...     loss = rg.nn.functional.mse_loss(y, rg.zeros(2, 4))
    >>> y.dtype, loss.dtype
    (dtype('float16'), dtype('float32'))
    >>> loss.backward()
    >>> w.grad.dtype
    dtype('float32')
    """

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        kind = device_type.partition(":")[0]
        if kind not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'; "
                               "retrograd's autocast takes 'cpu' and 'cuda'")
        self.device = kind
        self.fast_dtype = dtype if dtype is not None else (
            _c.get_autocast_dtype(kind) or "bfloat16")
        self._enabled = bool(enabled)
        self._cache_enabled = _c.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        name = _dtype_name(self.fast_dtype)
        if self._enabled and kind == "cuda":
            from retrograd import cuda
            if not cuda.is_available():
                warnings.warn("CUDA is not available (retrograd runs CUDA through CuPy). Disabling autocast.",
                              UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled and name not in ("float16", "bfloat16"):
            where = "CPU" if kind == "cpu" else "CUDA"
            warnings.warn(f"In {where} autocast, but the target dtype is not supported. Disabling autocast.\n"
                          f"{where} Autocast only supports dtypes of float16 and bfloat16 (bfloat16 with the "
                          f"ml_dtypes package) currently.", UserWarning, stacklevel=2)
            self._enabled = False
        self._name = name

    def __enter__(self) -> autocast:
        self._prev = _c.is_autocast_enabled(self.device)
        self._prev_dtype = _c.get_autocast_dtype(self.device)
        self._prev_cache = _c.is_autocast_cache_enabled()
        if self._enabled:
            if self._name == "bfloat16":
                self.fast_dtype = _c.bfloat16      # (AttributeError: install ml_dtypes)
            _c.set_autocast_dtype(self.device, self.fast_dtype)
        _c.set_autocast_enabled(self.device, self._enabled)
        _c.autocast_increment_nesting()
        _c.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc: Any) -> None:
        if _c.autocast_decrement_nesting() == 0:
            _c.clear_autocast_cache()
        if self._prev_dtype is not None:
            _c.set_autocast_dtype(self.device, self._prev_dtype)
        _c.set_autocast_enabled(self.device, self._prev)
        _c.set_autocast_cache_enabled(self._prev_cache)
        return None

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)
        return run


def _cast(value: Any, dtype: Any) -> Any:
    # floating tensors (not float64) to dtype, through containers (torch's _cast)
    if isinstance(value, _c.Tensor):
        if value.is_floating_point() and value.dtype != np.float64:
            return value.to(dtype)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd: Callable | None = None, *, device_type: str, cast_inputs: Any = None) -> Callable:
    """Decorate a custom Function's ``forward`` for autocast (``torch.amp.custom_fwd``).

    Inside an autocast region, with ``cast_inputs`` the floating tensor
    arguments are cast to that dtype and ``forward`` runs with autocast off;
    without it ``forward`` runs under the region as it is. Either way the
    region's state is kept on ``ctx`` for :func:`custom_bwd`. Outside a
    region it changes nothing.

    Parameters
    ----------
    fwd : callable, optional
        The ``forward`` staticmethod (omit it to get a decorator).
    device_type : str
        "cpu" or "cuda".
    cast_inputs : dtype, optional
        The dtype floating inputs are cast to inside a region.

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        If ``device_type`` is not a string.

    Examples
    --------
    >>> import retrograd as rg
    >>> class Square(rg.autograd.Function):
    ...     @staticmethod
    ...     @rg.amp.custom_fwd(device_type="cpu", cast_inputs=rg.float32)
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @rg.amp.custom_bwd(device_type="cpu")
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> with rg.autocast("cpu", dtype=rg.float16):
    ...     y = Square.apply(rg.ones(2, dtype=rg.float16))
    >>> y.dtype
    dtype('float32')
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = _c.get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _c.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if _c.is_autocast_enabled(device_type):
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))
        return fwd(*args, **kwargs)
    return forward


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorate a custom Function's ``backward`` to run under the autocast state its forward saw (``torch.amp.custom_bwd``).

    Parameters
    ----------
    bwd : callable, optional
        The ``backward`` staticmethod (omit it to get a decorator).
    device_type : str
        "cpu" or "cuda".

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        If ``device_type`` is not a string.

    Examples
    --------
    >>> import retrograd as rg
    >>> dec = rg.amp.custom_bwd(device_type="cpu")
    >>> callable(dec)
    True
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)
    return backward
