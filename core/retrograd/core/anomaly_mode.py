"""Anomaly mode: detect_anomaly and set_detect_anomaly (``torch.autograd.anomaly_mode``).

While it is on (per thread, like grad mode), every node created records the
Python traceback of the forward op that created it (``node.metadata
["traceback_"]``), every in-place change records its own traceback, and the
engine checks each node's returned gradients for NaN (and Inf with
``check_inf=True``), naming the node, the forward traceback and the
gradients' ranges when something goes wrong. Off, it costs one branch on a
C thread-local per node created and per node run.

What this module must never do: keep state of its own; the mode lives in
core's C thread-locals (``_grad_mode.pxi``).
"""
from __future__ import annotations

import warnings

from retrograd.core import abi as _abi
from retrograd.core.grad_mode import _DecoratorContextManager

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "is_anomaly_check_inf_enabled", "set_anomaly_enabled"]

is_anomaly_enabled = _abi.is_anomaly_enabled
is_anomaly_check_nan_enabled = _abi.is_anomaly_check_nan_enabled
is_anomaly_check_inf_enabled = _abi.is_anomaly_check_inf_enabled


def _check_bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")


def set_anomaly_enabled(enabled: bool, check_nan: bool = True, check_inf: bool = False) -> None:
    """Turn anomaly mode on or off for this thread.

    The function form of :class:`~retrograd.autograd.set_detect_anomaly`. While anomaly mode is on,
    each node records the traceback of the forward op that created it, and
    backward checks every gradient a node returns for NaN (``check_nan``) and
    infinity (``check_inf``), raising with that traceback.

    Parameters
    ----------
    enabled : bool
        True to turn it on.
    check_nan : bool, optional
        Raise on NaN gradients (default True).
    check_inf : bool, optional
        Raise on infinite gradients (default False; not in torch).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        If an argument is not a bool.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_anomaly_enabled(True)
    >>> rg.is_anomaly_enabled()
    True
    >>> rg.set_anomaly_enabled(False)
    >>> rg.is_anomaly_enabled()
    False
    """
    _check_bool("enabled", enabled)
    _check_bool("check_nan", check_nan)
    _check_bool("check_inf", check_inf)
    _abi._set_anomaly_enabled(enabled, check_nan, check_inf)


def _state():
    return (_abi.is_anomaly_enabled(), _abi.is_anomaly_check_nan_enabled(),
            _abi.is_anomaly_check_inf_enabled())


class detect_anomaly(_DecoratorContextManager):
    """Context manager and decorator that turns anomaly detection on for this thread.

    Inside it, each node remembers the traceback of the forward op that
    created it, and backward raises RuntimeError when a node returns a NaN
    gradient (or an infinite one with ``check_inf=True``), naming the node and
    showing where its forward ran. It slows everything down: use it to debug.
    Creating it warns so.

    Parameters
    ----------
    check_nan : bool, optional
        Raise on NaN gradients (default True).
    check_inf : bool, optional
        Raise on infinite gradients too (default False; not in torch).

    Raises
    ------
    TypeError
        If an argument is not a bool.

    Examples
    --------
    >>> import retrograd as rg
    >>> import warnings
    >>> from retrograd.core.anomaly_mode import detect_anomaly
    >>> x = rg.tensor([0.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with detect_anomaly():
    ...         y = rg.sqrt(x) * 0.0
    ...         try:
    ...             y.sum().backward()
    ...         except RuntimeError as exc:
    ...             print(type(exc).__name__, "raised:", "nan" in str(exc))
    RuntimeError raised: True
    """

    def __init__(self, check_nan: bool = True, check_inf: bool = False):
        _check_bool("check_nan", check_nan)
        _check_bool("check_inf", check_inf)
        self.check_nan = check_nan
        self.check_inf = check_inf
        self.prev = None
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = _state()
        _abi._set_anomaly_enabled(True, self.check_nan, self.check_inf)

    def __exit__(self, *exc):
        _abi._set_anomaly_enabled(*self.prev)

    def clone(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # warned once, when created
            return self.__class__(self.check_nan, self.check_inf)


class set_detect_anomaly(_DecoratorContextManager):
    """Turn anomaly detection on or off for this thread.

    Takes effect as soon as it is created; as a context manager it restores
    the previous state on exit, and as a decorator it applies only while the
    function runs. See :class:`detect_anomaly` for what anomaly detection does.

    Parameters
    ----------
    mode : bool
        True to turn it on, False to turn it off.
    check_nan : bool, optional
        Raise on NaN gradients (default True).
    check_inf : bool, optional
        Raise on infinite gradients too (default False; not in torch).

    Raises
    ------
    TypeError
        If an argument is not a bool.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.core.anomaly_mode import set_detect_anomaly
    >>> with set_detect_anomaly(True):
    ...     print(rg.is_anomaly_enabled())
    True
    >>> rg.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True, check_inf: bool = False):
        _check_bool("mode", mode)
        _check_bool("check_nan", check_nan)
        _check_bool("check_inf", check_inf)
        self.mode = mode
        self.check_nan = check_nan
        self.check_inf = check_inf
        self.prev = _state()
        _abi._set_anomaly_enabled(mode, check_nan, check_inf)

    def __call__(self, func):
        _abi._set_anomaly_enabled(*self.prev)       # as a decorator: only inside func
        return super().__call__(func)

    def __enter__(self):
        _abi._set_anomaly_enabled(self.mode, self.check_nan, self.check_inf)

    def __exit__(self, *exc):
        _abi._set_anomaly_enabled(*self.prev)

    def clone(self):
        return self.__class__(self.mode, self.check_nan, self.check_inf)
