"""torch's autocast state functions (``torch.is_autocast_enabled``,
``torch.set_autocast_dtype``, ...): this thread's autocast switches, which
``rg.autocast`` sets around a region (Note [Autocast] in _autocast_policy.py).

Each reads or writes core's thread-local state (_autocast.pxi). The
``device_type`` is "cpu" or "cuda"; torch's legacy forms without one mean
CUDA (``is_autocast_enabled()``) and the ``*_cpu_*``/``*_gpu_*`` names are
kept as torch keeps them.
"""
from __future__ import annotations

from typing import Any, Callable

from retrograd.core import abi as _abi

__all__ = [
    "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting", "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype",
    "set_autocast_gpu_dtype",
]

_DEVICE_DOC = """device_type : str
        "cpu" or "cuda"."""


def _device(device_type: Any, fn: str) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' must be str, not {type(device_type).__name__}")
    kind = device_type.partition(":")[0]
    if kind not in ("cpu", "cuda"):
        raise RuntimeError(f"{fn}(): unsupported autocast device_type {device_type!r}: retrograd runs on 'cpu' "
                           f"and 'cuda'")
    return kind


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` on this thread (``torch.is_autocast_enabled``).

    Parameters
    ----------
    device_type : str, optional
        "cpu" or "cuda" (default "cuda", as torch's form without argument).

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_autocast_enabled("cpu")
    False
    >>> with rg.autocast("cpu", dtype=rg.float16):
    ...     rg.is_autocast_enabled("cpu")
    True
    """
    return bool(_abi._autocast_state(_device(device_type, "is_autocast_enabled"))[0])


def set_autocast_enabled(device_type: Any, enabled: Any = None) -> None:
    """Turn autocast on or off for ``device_type`` on this thread (``torch.set_autocast_enabled``).

    ``rg.autocast`` is the way to open a region; this is the switch it sets.
    torch's legacy form ``set_autocast_enabled(enabled)`` sets CUDA's.

    Parameters
    ----------
    device_type : str
        "cpu" or "cuda".
    enabled : bool
        On or off.

    Raises
    ------
    AttributeError
        When turning on a bfloat16 region without the ml_dtypes package.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_autocast_enabled("cpu", False)
    >>> rg.is_autocast_enabled("cpu")
    False
    """
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _abi._set_autocast_enabled(_device(device_type, "set_autocast_enabled"), bool(enabled))


def get_autocast_dtype(device_type: str) -> Any:
    """The lower-precision dtype of ``device_type``'s autocast on this thread (``torch.get_autocast_dtype``).

    bfloat16 on the CPU and float16 on CUDA until set (torch's defaults).

    Parameters
    ----------
    device_type : str
        "cpu" or "cuda".

    Returns
    -------
    numpy.dtype
        float16, or bfloat16 (ml_dtypes' dtype; None where ml_dtypes is not installed).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.get_autocast_dtype("cuda")
    dtype('float16')
    """
    return _abi._autocast_state(_device(device_type, "get_autocast_dtype"))[1]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the lower-precision dtype of ``device_type``'s autocast on this thread (``torch.set_autocast_dtype``).

    Parameters
    ----------
    device_type : str
        "cpu" or "cuda".
    dtype : dtype
        float16, or bfloat16 (which needs the ml_dtypes package).

    Raises
    ------
    ValueError
        For a dtype other than float16 and bfloat16.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_autocast_dtype("cuda", rg.float16)
    >>> rg.get_autocast_dtype("cuda")
    dtype('float16')
    """
    _abi._set_autocast_dtype(_device(device_type, "set_autocast_dtype"), dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether torch's autocast cast cache is switched on (``torch.is_autocast_cache_enabled``).

    retrograd keeps no cache of casts (each use of a weight casts it again:
    the same values, a little more time), so the switch is recorded and has
    no other effect.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_autocast_cache_enabled()
    True
    """
    return bool(_abi._autocast_state("cpu")[2])


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Record torch's cast-cache switch (``torch.set_autocast_cache_enabled``; see :func:`is_autocast_cache_enabled`).

    Parameters
    ----------
    enabled : bool
        The switch.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_autocast_cache_enabled(True)
    """
    _abi._set_autocast_cache_enabled(bool(enabled))


def clear_autocast_cache() -> None:
    """Empty autocast's cast cache (``torch.clear_autocast_cache``): retrograd keeps none, so nothing to do.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.clear_autocast_cache()
    """
    return None


def autocast_increment_nesting() -> int:
    """Count one more open autocast region on this thread; returns the count (``torch.autocast_increment_nesting``).

    Returns
    -------
    int

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.autocast_increment_nesting()
    1
    >>> rg.autocast_decrement_nesting()
    0
    """
    return int(_abi._autocast_nesting(1))


def autocast_decrement_nesting() -> int:
    """Count one open autocast region less on this thread; returns the count (``torch.autocast_decrement_nesting``).

    Returns
    -------
    int

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.autocast_increment_nesting()
    1
    >>> rg.autocast_decrement_nesting()
    0
    """
    return int(_abi._autocast_nesting(-1))


def _legacy(name: str, target: Callable, device: str, value: str | None) -> Callable:
    # torch's per-device legacy names: `target` with the device type filled in.
    # `value` names the setter's argument (None: a getter of no argument).
    if value is None:
        def fn():
            return target(device)
        params, returns = "", f"\n\n    Returns\n    -------\n    {'bool' if name.startswith('is_') else 'numpy.dtype or None'}"
        call = f"rg.{name}() == rg.{target.__name__}({device!r})"
    else:
        def fn(arg):
            target(device, arg)
        kind = "bool" if value == "enabled" else "dtype"
        params = f"\n\n    Parameters\n    ----------\n    {value} : {kind}\n        The new setting."
        returns = ""
        call = f"rg.{name}({'False' if value == 'enabled' else 'rg.float16'})"
    fn.__name__ = fn.__qualname__ = name
    if value is not None:
        import inspect
        fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(value, inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    fn.__doc__ = (f"``{target.__name__}({device!r}{', ' + value if value else ''})`` under torch's legacy name."
                  f"{params}{returns}\n\n    Examples\n    --------\n    >>> import retrograd as rg\n    >>> "
                  f"{call}{'' if value else chr(10) + '    True'}\n    ")
    return fn


set_autocast_cpu_enabled = _legacy("set_autocast_cpu_enabled", set_autocast_enabled, "cpu", "enabled")
is_autocast_cpu_enabled = _legacy("is_autocast_cpu_enabled", is_autocast_enabled, "cpu", None)
set_autocast_cpu_dtype = _legacy("set_autocast_cpu_dtype", set_autocast_dtype, "cpu", "dtype")
get_autocast_cpu_dtype = _legacy("get_autocast_cpu_dtype", get_autocast_dtype, "cpu", None)
set_autocast_gpu_dtype = _legacy("set_autocast_gpu_dtype", set_autocast_dtype, "cuda", "dtype")
get_autocast_gpu_dtype = _legacy("get_autocast_gpu_dtype", get_autocast_dtype, "cuda", None)
