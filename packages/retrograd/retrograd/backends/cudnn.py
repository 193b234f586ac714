"""rg.backends.cudnn: torch.backends.cudnn's flags, kept and without effect
(retrograd does not use cuDNN: its convolutions are NumPy/CuPy code).

Examples
--------
>>> import retrograd.backends.cudnn as cudnn
>>> cudnn.deterministic = True
>>> cudnn.is_available(), cudnn.deterministic
(False, True)
"""

__all__ = ["benchmark", "deterministic", "enabled", "allow_tf32", "benchmark_limit", "is_available",
           "version"]

#: Whether torch would autotune convolution algorithms (no effect here).
benchmark = False
#: Whether torch would pick deterministic algorithms only (no effect here).
deterministic = False
#: Whether torch would use cuDNN (no effect here).
enabled = True
#: Whether torch would allow TF32 in cuDNN convolutions (no effect here).
allow_tf32 = True
#: How many algorithms torch's autotuner would try (no effect here).
benchmark_limit = 10


def is_available() -> bool:
    """Whether cuDNN can be used: never, retrograd does not use it.

    Returns
    -------
    bool
        False.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.backends.cudnn.is_available()
    False
    """
    return False


def version() -> None:
    """cuDNN's version: None, as torch answers without cuDNN.

    Returns
    -------
    None

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.backends.cudnn.version() is None
    True
    """
    return None
