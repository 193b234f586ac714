"""rg.backends.cuda: torch.backends.cuda's matmul switches, kept and without
effect (CuPy's matmul follows CuPy's own settings).

Examples
--------
>>> import retrograd as rg
>>> rg.backends.cuda.matmul.allow_tf32 = True
>>> rg.backends.cuda.matmul.allow_tf32
True
"""

__all__ = ["matmul", "is_built", "preferred_linalg_library"]


class _MatmulFlags:
    """torch.backends.cuda.matmul: reduced-precision matmul switches (no effect here)."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    def __repr__(self) -> str:
        return f"<retrograd.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulFlags()


def is_built() -> bool:
    """Whether retrograd can run on CUDA devices: whether CuPy is importable.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> isinstance(rg.backends.cuda.is_built(), bool)
    True
    """
    import importlib.util
    return importlib.util.find_spec("cupy") is not None


def preferred_linalg_library(backend=None) -> str:
    """torch's choice of CUDA linear-algebra library: CuPy decides here.

    Parameters
    ----------
    backend : str, optional
        Ignored (torch's "cusolver" / "magma").

    Returns
    -------
    str
        ``"default"``.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.backends.cuda.preferred_linalg_library()
    'default'
    """
    return "default"
