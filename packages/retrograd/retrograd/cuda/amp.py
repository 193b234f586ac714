"""rg.cuda.amp: torch.cuda.amp's names (deprecated there): autocast on
"cuda" and GradScaler, from :mod:`retrograd.amp`.

Examples
--------
>>> import retrograd as rg
>>> from retrograd.cuda.amp import GradScaler, autocast
>>> with autocast(enabled=False):
...     pass
"""
from __future__ import annotations

from typing import Any

from retrograd.amp import GradScaler as _GradScaler
from retrograd.amp import autocast as _autocast

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):
    """``torch.cuda.amp.autocast``: :class:`retrograd.amp.autocast` on "cuda".

    Parameters
    ----------
    enabled : bool, optional
    dtype : dtype, optional
        Default float16.
    cache_enabled : bool, optional

    Examples
    --------
    >>> import retrograd as rg
    >>> with rg.cuda.amp.autocast(enabled=False):
    ...     pass
    """

    def __init__(self, enabled: bool = True, dtype: Any = "float16", cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``torch.cuda.amp.GradScaler``: :class:`retrograd.amp.GradScaler` on "cuda".

    Parameters
    ----------
    init_scale, growth_factor, backoff_factor, growth_interval, enabled
        As :class:`retrograd.amp.GradScaler`.

    Examples
    --------
    >>> import retrograd as rg
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     s = rg.cuda.amp.GradScaler()
    >>> s.is_enabled() == rg.cuda.is_available()
    True
    """

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
