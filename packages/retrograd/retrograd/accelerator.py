"""rg.accelerator: torch.accelerator, the device-agnostic view of the
accelerator, answered from retrograd's CUDA support (CuPy and a GPU).

Examples
--------
>>> import retrograd as rg
>>> rg.accelerator.is_available() == rg.cuda.is_available()
True
"""
from __future__ import annotations

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "synchronize"]


def is_available() -> bool:
    """Whether an accelerator can be used: a CUDA device through CuPy.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.accelerator.is_available() == rg.cuda.is_available()
    True
    """
    from retrograd import cuda
    return cuda.is_available()


def current_accelerator(check_available: bool = False):
    """The accelerator's device type, ``device('cuda')``, or None without one.

    Parameters
    ----------
    check_available : bool, optional
        Accepted for torch's signature (without an accelerator the answer is
        None either way).

    Returns
    -------
    Device or None

    Examples
    --------
    >>> import retrograd as rg
    >>> (rg.accelerator.current_accelerator() is None) == (not rg.cuda.is_available())
    True
    """
    import retrograd as rg
    return rg.device("cuda") if is_available() else None


def device_count() -> int:
    """How many accelerator devices there are (0 without one).

    Returns
    -------
    int

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.accelerator.device_count() == rg.cuda.device_count()
    True
    """
    from retrograd import cuda
    return cuda.device_count() if cuda.is_available() else 0


def _require(fn: str) -> None:
    if not is_available():
        raise RuntimeError(f"accelerator.{fn}(): no accelerator is available (retrograd's accelerator is a "
                           "CUDA device through CuPy); check rg.accelerator.is_available() first")


def current_device_index() -> int:
    """The current accelerator device's index.

    Returns
    -------
    int

    Raises
    ------
    RuntimeError
        Without an accelerator.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.accelerator.current_device_index() if rg.accelerator.is_available() else 0
    0
    """
    _require("current_device_index")
    from retrograd import cuda
    return cuda.current_device()


def set_device_index(device) -> None:
    """Make ``device`` (an index or a device) the current accelerator device.

    Parameters
    ----------
    device : int or Device

    Raises
    ------
    RuntimeError
        Without an accelerator.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.accelerator.is_available():
    ...     rg.accelerator.set_device_index(0)
    """
    _require("set_device_index")
    from retrograd import cuda
    cuda.set_device(device)


def synchronize(device=None) -> None:
    """Wait for the accelerator's queued work (nothing to wait for without one).

    Parameters
    ----------
    device : int or Device, optional

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.accelerator.synchronize()
    """
    if is_available():
        from retrograd import cuda
        cuda.synchronize(device)
