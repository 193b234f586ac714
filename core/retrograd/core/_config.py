"""torch's process-wide switches and queries that have a meaning over NumPy:
threads (NumPy's BLAS, through threadpoolctl), determinism flags, float32
matmul precision, print options (NumPy's), type promotion queries and the
default generator's seed. Each says in its docstring what it changes here;
those with nothing to change (retrograd's CPU ops are deterministic, NumPy's
float32 matmul has one precision) record the setting and report it back,
as torch's getters do."""
from __future__ import annotations

import os

import numpy as np

from retrograd.core.abi import Tensor

__all__ = [
    "get_num_threads", "set_num_threads", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision",
    "set_printoptions", "typename", "result_type", "promote_types", "can_cast", "e", "pi", "inf", "nan",
    "newaxis",
]

#: torch's constants
e = float(np.e)
pi = float(np.pi)
inf = float("inf")
nan = float("nan")
newaxis = None

_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest"}


def _threadpoolctl():
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl


def get_num_threads() -> int:
    """The number of threads NumPy's BLAS uses for matrix products.

    retrograd's heavy lifting (matmul, conv, linalg) runs in NumPy's BLAS
    library; with ``threadpoolctl`` installed this is its thread count, else
    the count the environment asked for (``OMP_NUM_THREADS`` and the BLAS
    variables) or the number of CPUs.

    Returns
    -------
    int

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.get_num_threads() >= 1
    True
    """
    tpc = _threadpoolctl()
    if tpc is not None:
        counts = [i["num_threads"] for i in tpc.threadpool_info() if i.get("user_api") == "blas"]
        if counts:
            return int(max(counts))
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return os.cpu_count() or 1


def set_num_threads(int_: int) -> None:
    """Set the number of threads of NumPy's BLAS (matrix products), as torch's intra-op threads.

    Needs ``threadpoolctl`` (``pip install threadpoolctl``); without it,
    set ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` before NumPy is
    imported (see "BLAS threads" in the guide from PyTorch).

    Parameters
    ----------
    int_ : int
        The number of threads, at least 1.

    Returns
    -------
    None

    Raises
    ------
    RuntimeError
        Without threadpoolctl, or for a count below 1.

    Examples
    --------
    >>> import retrograd as rg
    >>> n = rg.get_num_threads()
    >>> try:
    ...     rg.set_num_threads(n)
    ... except RuntimeError:
    ...     pass          # threadpoolctl is not installed
    """
    n = int(int_)
    if n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n}")
    tpc = _threadpoolctl()
    if tpc is None:
        raise RuntimeError("set_num_threads: changing NumPy's BLAS threads at run time needs threadpoolctl "
                           "(pip install threadpoolctl); or set OPENBLAS_NUM_THREADS / OMP_NUM_THREADS "
                           "before NumPy is imported")
    tpc.threadpool_limits(limits=n, user_api="blas")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (recorded; retrograd's CPU ops already are).

    On the CPU every retrograd op is deterministic (NumPy's kernels, one
    order of accumulation), so there is nothing to switch; the setting is
    kept so that :func:`are_deterministic_algorithms_enabled` reports it, as
    torch's does. It does not change CuPy's kernels on CUDA devices.

    Parameters
    ----------
    mode : bool
        The setting.
    warn_only : bool, optional
        torch's warn-only mode (recorded).

    Returns
    -------
    None

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.use_deterministic_algorithms(True)
    >>> rg.are_deterministic_algorithms_enabled()
    True
    >>> rg.use_deterministic_algorithms(False)
    """
    _state["deterministic"] = bool(mode)
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` was last called with True.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.are_deterministic_algorithms_enabled()
    False
    """
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode was asked for with ``warn_only=True``.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """torch's other spelling of :func:`use_deterministic_algorithms`: 0 / "default", 1 / "warn", 2 / "error".

    Parameters
    ----------
    debug_mode : int or str
        The mode.

    Returns
    -------
    None

    Raises
    ------
    RuntimeError
        For an unknown mode.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_deterministic_debug_mode("warn")
    >>> rg.get_deterministic_debug_mode()
    1
    >>> rg.set_deterministic_debug_mode(0)
    """
    names = {"default": 0, "warn": 1, "error": 2}
    mode = names.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                           f"0, 1, 2, but got {debug_mode!r}")
    use_deterministic_algorithms(mode != 0, warn_only=mode == 1)


def get_deterministic_debug_mode() -> int:
    """The deterministic mode as torch's debug mode: 0 off, 1 warn only, 2 error.

    Returns
    -------
    int

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.get_deterministic_debug_mode()
    0
    """
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """Record torch's float32 matmul precision ("highest", "high" or "medium").

    NumPy multiplies float32 matrices at full float32 precision, always:
    "high" and "medium" allow torch to use TF32 or bfloat16 internally, which
    retrograd never does, so every setting computes as "highest".

    Parameters
    ----------
    precision : str
        "highest", "high" or "medium".

    Returns
    -------
    None

    Raises
    ------
    RuntimeError
        For another value.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_float32_matmul_precision("high")
    >>> rg.get_float32_matmul_precision()
    'high'
    >>> rg.set_float32_matmul_precision("highest")
    """
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision!r}; expected 'highest', 'high' or 'medium'")
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision last set (default "highest").

    Returns
    -------
    str

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.get_float32_matmul_precision()
    'highest'
    """
    return _state["matmul_precision"]


_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=np.inf, edgeitems=3, linewidth=80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """Set how tensors print: NumPy's print options, which retrograd's repr uses.

    The parameters are torch's; they set NumPy's options of the same names
    (``np.set_printoptions``), so they also change how NumPy arrays print.
    ``profile`` ("default", "short", "full") sets torch's presets first;
    ``sci_mode`` True forces scientific notation, False suppresses it, None
    leaves NumPy's choice.

    Parameters
    ----------
    precision : int, optional
        Digits after the decimal point.
    threshold : int, optional
        Above this many elements, print a summary.
    edgeitems : int, optional
        Elements shown at each end of a summarized dimension.
    linewidth : int, optional
        Characters per line.
    profile : str, optional
        "default", "short" or "full".
    sci_mode : bool, optional
        Scientific notation on, off, or automatic (None).

    Returns
    -------
    None

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> saved = np.get_printoptions()
    >>> rg.set_printoptions(precision=2)
    >>> rg.tensor([1.23456])
    tensor([1.23])
    >>> np.set_printoptions(**saved)
    """
    opts: dict = {}
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        opts.update(_PROFILES[profile])
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            opts[k] = v
    if sci_mode is not None:
        opts["suppress"] = not sci_mode
        opts["floatmode"] = "maxprec"
        if sci_mode:
            opts["formatter"] = {"float_kind": lambda x: np.format_float_scientific(
                x, precision=opts.get("precision", np.get_printoptions()["precision"]))}
    np.set_printoptions(**opts)


def typename(obj) -> str:
    """The type's name as torch writes it: ``'torch.FloatTensor'`` for a tensor, else ``module.qualname``.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    str

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.typename(rg.tensor([1.0]))
    'torch.FloatTensor'
    >>> rg.typename(3)
    'int'
    """
    if isinstance(obj, Tensor):
        return obj.type()
    t = obj if isinstance(obj, type) else type(obj)
    module = t.__module__
    return t.__qualname__ if module in ("builtins", "__builtin__", None) else f"{module}.{t.__qualname__}"


def result_type(tensor1, tensor2) -> np.dtype:
    """The dtype an arithmetic op on the two operands gives (NumPy's promotion, as retrograd's ops).

    Python numbers do not widen a tensor's dtype (NumPy's "weak" scalars);
    where NumPy and torch differ (an int64 tensor and a Python float give
    float64 here), retrograd's ops follow NumPy, and so does this.

    Parameters
    ----------
    tensor1, tensor2 : Tensor or number
        The operands.

    Returns
    -------
    dtype

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.result_type(rg.tensor([1], dtype=rg.int32), 1.5)
    dtype('float64')
    >>> rg.result_type(rg.tensor([1.0]), 2)
    dtype('float32')
    """
    args = [x.dtype if isinstance(x, Tensor) else x for x in (tensor1, tensor2)]
    return np.result_type(*args)


def promote_types(type1, type2) -> np.dtype:
    """The smallest dtype both dtypes convert to without loss (``np.promote_types``).

    Parameters
    ----------
    type1, type2 : dtype
        The dtypes.

    Returns
    -------
    dtype

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.promote_types(rg.int32, rg.float32)
    dtype('float64')
    """
    return np.promote_types(type1, type2)


def can_cast(from_, to) -> bool:
    """Whether torch's casting rules allow ``from_`` to ``to``: never float to integer, complex to real, or to bool.

    NumPy's "same_kind" casting, which is that rule.

    Parameters
    ----------
    from_, to : dtype
        The dtypes.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.can_cast(rg.float64, rg.float32), rg.can_cast(rg.float32, rg.int32)
    (True, False)
    """
    return bool(np.can_cast(from_, to, casting="same_kind"))
