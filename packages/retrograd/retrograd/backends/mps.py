"""rg.backends.mps: Apple's Metal devices, which retrograd does not support.

Examples
--------
>>> import retrograd as rg
>>> rg.backends.mps.is_available(), rg.backends.mps.is_built()
(False, False)
"""

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether an MPS device can be used: never.

    Returns
    -------
    bool
        False.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.backends.mps.is_available()
    False
    """
    return False


def is_built() -> bool:
    """Whether retrograd was built with MPS support: no.

    Returns
    -------
    bool
        False.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.backends.mps.is_built()
    False
    """
    return False
