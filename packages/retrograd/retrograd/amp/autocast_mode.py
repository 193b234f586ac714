"""autocast (torch.amp.autocast): see the package's docstring."""
from __future__ import annotations

import functools
from typing import Any

__all__ = ["autocast", "is_autocast_available"]

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


class autocast:
    """A mixed-precision region (``torch.autocast``): a context manager and a decorator.

    Disabled, or with float32/float64, it changes nothing (as in torch for
    those). With float16 or bfloat16 enabled it raises NotImplementedError:
    retrograd has no per-op casting, and computing silently in full precision
    would hide that.

    Parameters
    ----------
    device_type : str, optional
        "cpu" or "cuda" (default "cuda", as torch.cuda.amp.autocast).
    dtype : dtype, optional
        The lower precision (torch's default: float16 on CUDA, bfloat16 on CPU).
    enabled : bool, optional
        Whether the region is active (default True).
    cache_enabled : bool, optional
        Accepted for torch compatibility.

    Raises
    ------
    RuntimeError
        For a device type other than "cpu" and "cuda".
    NotImplementedError
        When enabled with float16 or bfloat16.

    Examples
    --------
    >>> import retrograd as rg
    >>> with rg.amp.autocast("cpu", enabled=False):
    ...     y = rg.ones(2) * 2
    >>> y.dtype
    dtype('float32')
    >>> with rg.amp.autocast("cpu", dtype=rg.float32):
    ...     pass
    """

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'; "
                               "retrograd's autocast takes 'cpu' and 'cuda'")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else ("bfloat16" if device_type == "cpu" else "float16")
        self._enabled = bool(enabled)

    def _check(self) -> None:
        if not self._enabled:
            return
        name = str(self.fast_dtype).replace("torch.", "")
        if name in ("float32", "float64"):
            return
        if name not in ("float16", "bfloat16"):
            raise RuntimeError(f"autocast: expected a floating dtype (float16, bfloat16, float32), got {name}")
        raise NotImplementedError(
            f"autocast to {name} is not implemented: retrograd computes every op in its inputs' dtype and has "
            f"no per-op casting. Cast the model and the data yourself (model.to(rg.float16)), or disable the "
            f"region (autocast(..., enabled=False)), which is what CPU-only torch programs usually do.")

    def __enter__(self) -> autocast:
        self._check()
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return run
