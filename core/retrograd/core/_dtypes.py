"""torch's dtype names, as NumPy dtypes (a tensor's dtype is a NumPy dtype).

`t.dtype == rg.float32` and `t.dtype is rg.float32` hold, and every function
that takes a dtype (creation functions, `.to`, `sum(dtype=)`, ...) takes
them. Kept in a module of their own: `float`, `int` and `bool` are torch's
names (torch.float is float32, torch.int is int32) and must not shadow the
builtins in code that computes. torch.bfloat16 has no NumPy counterpart:
``rg.bfloat16`` is ml_dtypes' bfloat16 where that package is installed, and
an AttributeError saying so where it is not.
"""
import numpy as _np

__all__ = ["dtype", "float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "uint16",
           "uint32", "uint64",
           "bool", "complex64", "complex128", "half", "float", "double", "short", "int", "long",
           "cfloat", "cdouble", "finfo", "iinfo"]

dtype = _np.dtype
float16 = half = _np.dtype(_np.float16)
float32 = float = _np.dtype(_np.float32)
float64 = double = _np.dtype(_np.float64)
int8 = _np.dtype(_np.int8)
uint8 = _np.dtype(_np.uint8)
# torch's "shell" unsigned dtypes (few torch ops take them; NumPy's all do)
uint16 = _np.dtype(_np.uint16)
uint32 = _np.dtype(_np.uint32)
uint64 = _np.dtype(_np.uint64)
int16 = short = _np.dtype(_np.int16)
int32 = int = _np.dtype(_np.int32)
int64 = long = _np.dtype(_np.int64)
bool = _np.dtype(_np.bool_)
complex64 = cfloat = _np.dtype(_np.complex64)
complex128 = cdouble = _np.dtype(_np.complex128)


def finfo(type=None):  # noqa: A002 (torch's parameter name)
    """The machine limits of a floating-point dtype (``torch.finfo``): NumPy's ``finfo``.

    ``eps``, ``max``, ``min``, ``tiny`` / ``smallest_normal``, ``resolution``
    and ``bits`` as torch's.

    Parameters
    ----------
    type : dtype, optional
        A floating-point or complex dtype (default: the default dtype).

    Returns
    -------
    numpy.finfo

    Raises
    ------
    TypeError
        For an integer or bool dtype (use :func:`iinfo`).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.finfo(rg.float64).bits, rg.finfo().dtype
    (64, dtype('float32'))
    >>> bool(rg.finfo(rg.float32).eps == 2.0 ** -23)
    True
    """
    if type is None:
        from retrograd.core._dtype_rules import get_default_dtype
        type = get_default_dtype()
    dt = _np.dtype(type)
    if not (is_floating_dtype(dt) or dt.kind == "c"):
        raise TypeError(f"finfo() requires a floating-point input type (got {dt}); use iinfo for "
                        "integer types")
    return _np.finfo(dt)            # (ml_dtypes registers bfloat16's limits with NumPy)


def is_floating_dtype(dtype) -> bool:
    """Whether ``dtype`` is a floating-point dtype: torch's ``dtype.is_floating_point``.

    float16, float32, float64 and bfloat16. A tensor's dtype is a NumPy
    dtype, and NumPy files ml_dtypes' bfloat16 under kind ``'V'``, not
    ``'f'``: ask this rather than ``dtype.kind == "f"``, which leaves
    bfloat16 out. Complex dtypes are not floating-point (as torch).

    Parameters
    ----------
    dtype : dtype
        A retrograd or NumPy dtype, or anything ``numpy.dtype`` takes.

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.core as core
    >>> core.is_floating_dtype(rg.float32), core.is_floating_dtype(rg.int64), core.is_floating_dtype(rg.complex64)
    (True, False, False)
    >>> core.is_floating_dtype(rg.zeros(2).dtype)
    True
    """
    dt = dtype if isinstance(dtype, _np.dtype) else _np.dtype(dtype)
    return dt.kind == "f" or (dt.kind == "V" and dt.name == "bfloat16")


def iinfo(type):  # noqa: A002
    """The machine limits of an integer dtype (``torch.iinfo``): NumPy's ``iinfo``.

    Parameters
    ----------
    type : dtype
        An integer dtype.

    Returns
    -------
    numpy.iinfo

    Raises
    ------
    TypeError
        For a floating-point, complex or bool dtype (use :func:`finfo`).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.iinfo(rg.int8).max, rg.iinfo(rg.uint8).min
    (127, 0)
    """
    dt = _np.dtype(type)
    if dt.kind not in "iu":
        raise TypeError(f"iinfo() requires an integer input type (got {dt}); use finfo for "
                        "floating point types")
    return _np.iinfo(dt)


def _bfloat16():
    # torch.bfloat16: NumPy has no such dtype; the ml_dtypes package adds it
    # (with NumPy's ufuncs on it), so retrograd offers it where that is installed.
    try:
        import ml_dtypes
    except ImportError:
        raise AttributeError(
            "bfloat16 needs the ml_dtypes package, which gives NumPy a bfloat16 dtype: pip install ml_dtypes "
            "(or compute in float16 / float32 instead)") from None
    return _np.dtype(ml_dtypes.bfloat16)


def _is_inexact_dtype(dtype) -> bool:
    # floating-point (bfloat16 included) or complex: NumPy's kinds "fc" and bfloat16
    return dtype.kind in "fc" or (dtype.kind == "V" and dtype.name == "bfloat16")


def _no_bfloat16_kernel(dtype, name):
    # torch has no CPU kernel of `name` for bfloat16 (cdist, pdist, ...): its
    # NotImplementedError, rather than a result torch never gives
    if dtype.kind == "V" and is_floating_dtype(dtype):
        raise NotImplementedError(f'"{name}" not implemented for bfloat16 tensors (as torch); convert the input '
                                  "first, e.g. x.float()")
