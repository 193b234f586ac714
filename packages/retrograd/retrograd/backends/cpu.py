"""rg.backends.cpu: what the CPU computes with.

Examples
--------
>>> import retrograd as rg
>>> rg.backends.cpu.get_cpu_capability()
'NumPy'
"""

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """The vector instruction set torch would report; retrograd computes with NumPy.

    Returns
    -------
    str
        ``"NumPy"``.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.backends.cpu.get_cpu_capability()
    'NumPy'
    """
    return "NumPy"
