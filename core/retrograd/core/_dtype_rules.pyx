# cython: language_level=3
# retrograd.core._dtype_rules: the dtypes ops compute in, torch's rules
# (declared in _dtype_rules.pxd, where the per-op _kind_of is inline).
#
# The kernels are NumPy expressions, and NumPy's ufuncs pick their own loop:
# np.exp(uint8) computes in float16, np.exp(int64) in float64, sigmoid's
# -x wraps in uint8 first, np.sign(complex) is z/|z| and max/relu order
# complex numbers lexicographically. torch computes a floating-point op of an
# integer or bool tensor in its default dtype (float32), and refuses the ops
# it does not define for a dtype. These helpers sit in the kernels; each
# costs one C type test on the usual float input.

cimport numpy as _cnp
import numpy as np
from retrograd.core._array_module cimport _arr, _is_cupy, _xp

_cnp.import_array()


# the error a kernel raises for a dtype torch does not support: torch's
# class (NotImplementedError or RuntimeError) that is also a TypeError, the
# class Python uses for an argument of the wrong type
class DtypeNotImplementedError(NotImplementedError, TypeError):
    pass


class DtypeRuntimeError(RuntimeError, TypeError):
    pass


# Note [Default dtype]
# ~~~~~~~~~~~~~~~~~~~~
# torch's default dtype: the dtype of a tensor made from Python floats or by a
# factory without a dtype (rg.zeros, rg.rand, rg.tensor([1.5])), of nn's
# parameters, and of a floating-point op on integers (sqrt(int64), int / int).
# float32 unless set_default_dtype changes it, process-wide as in torch; the
# default complex dtype follows it (complex64 for float32). Arrays keep their
# dtype (rg.tensor(np_array), from_numpy), and mixed-dtype arithmetic keeps
# NumPy's promotion rules.
cdef object _default_float = np.dtype(np.float32)
cdef object _default_complex = np.dtype(np.complex64)
_COMPLEX_OF = {np.dtype(np.float16): np.dtype(np.complex64), np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


cdef object k_default_float():
    return _default_float


cdef object k_default_complex():
    return _default_complex


def get_default_dtype():
    """The default floating-point dtype (float32 unless :func:`set_default_dtype` changed it).

    Tensors made from Python floats and by the factories without a ``dtype``
    get it, as do ``nn``'s parameters and floating-point ops on integer
    tensors (``rg.sqrt(int_tensor)``, ``int_tensor / 2``).

    Returns
    -------
    numpy.dtype

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.get_default_dtype()
    dtype('float32')
    >>> rg.tensor([1.5, 2.0]).dtype, rg.zeros(2).dtype, rg.tensor([1, 2]).dtype
    (dtype('float32'), dtype('float32'), dtype('int64'))
    """
    return _default_float


def set_default_dtype(d):
    """Make ``d`` the default floating-point dtype, for the whole process (as torch).

    The default complex dtype follows: complex128 for float64, complex64
    otherwise.

    Parameters
    ----------
    d : dtype
        float32, float64 or float16 (a retrograd or NumPy dtype, or its name).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        For a dtype that is not floating-point.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_default_dtype(rg.float64)
    >>> rg.tensor([1.5]).dtype, rg.tensor([1j]).dtype
    (dtype('float64'), dtype('complex128'))
    >>> rg.set_default_dtype(rg.float32)
    """
    global _default_float, _default_complex
    try:
        dt = np.dtype(d)
    except TypeError:
        raise TypeError(f"set_default_dtype(): expected a dtype, got {type(d).__name__}") from None
    if dt not in _COMPLEX_OF:
        raise TypeError(f"only floating-point types are supported as the default type (got {dt}); "
                        f"use float32, float64 or float16")
    _default_float = dt
    _default_complex = _COMPLEX_OF[dt]


def _default_complex_dtype():
    # (the factories' Python-level access to the default complex dtype)
    return _default_complex


cdef object k_float(object a):
    # the input of a floating-point op: integer and bool arrays in torch's
    # default float dtype (sqrt(int64) is float32 by default), the rest as is
    if _kind_of(a) == 105 and (type(a) is _cnp.ndarray or _is_cupy(a) or isinstance(a, np.generic)):
        return a.astype(_default_float)
    return a


cdef str _dtype_str(object a):
    return str(a.dtype) if hasattr(a, "dtype") else type(a).__name__


cdef object k_float_only(object a, str name):
    # ops torch defines for floating-point (and complex) tensors only:
    # silu(int64) raises there, where NumPy would compute in float64
    if _kind_of(a) == 105:
        raise DtypeNotImplementedError(
            f"{name}(): not implemented for integer or bool tensors (got {_dtype_str(a)}), as in torch; "
            f"convert the input first, e.g. x.float()")
    return a


cdef object k_real(object a, str name, bint runtime=False):
    # ops torch does not define for complex tensors (relu, max, floor, erf,
    # comparisons...): NumPy would order complex numbers lexicographically,
    # or drop the imaginary part. Raise, as torch does, rather than give a
    # result torch never would.
    if _kind_of(a) == 99:
        msg = (f"{name}(): not implemented for complex tensors (got {_dtype_str(a)}), as in torch; "
               f"apply it to x.real, x.imag or x.abs() instead")
        if runtime:
            raise DtypeRuntimeError(msg)
        raise DtypeNotImplementedError(msg)
    return a


cdef object k_int_divisor(object a, object b, str name):
    # b as the divisor of an integer division (remainder, floor_divide): torch
    # raises for a zero divisor where both operands are integral (NumPy gives
    # 0 with a warning); a float operand divides in floats (inf / nan).
    if _kind_of(a) != 105 or _kind_of(b) != 105:
        return b                                        # a float division: nothing to refuse
    if getattr(a, "dtype", None) == np.bool_ and getattr(b, "dtype", None) == np.bool_:
        np.broadcast_shapes(np.shape(a), np.shape(b))   # a shape error is reported first, as torch
        raise DtypeNotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool' (as torch); convert first, "
                                       "e.g. x.int()")
    if not (b.all() if hasattr(b, "all") else np.all(b)):
        np.broadcast_shapes(np.shape(a), np.shape(b))
        raise RuntimeError(f"ZeroDivisionError: integer {name} by zero (as torch); divide in floats, "
                           "e.g. x.float(), for inf/nan instead")
    return b


cdef object k_no_bool(object a, str name):
    # ops torch does not define for bool tensors (abs, floor, ...: NumPy
    # returns the bools; neg: NumPy's own TypeError)
    if type(a) is _cnp.ndarray and _cnp.PyArray_TYPE(<_cnp.ndarray>a) == _cnp.NPY_BOOL:
        if name == "neg":
            raise DtypeRuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported (as in torch). If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
        raise DtypeNotImplementedError(
            f"{name}(): not implemented for bool tensors, as in torch; convert the input first, "
            f"e.g. x.int() or x.float()")
    return a


cdef object k_integral(object a, str name):
    # the bitwise ops take bool and integer tensors only (torch's rule; NumPy
    # would say only that the ufunc has no loop). NotImplementedError as
    # torch.bitwise_and; also a TypeError, as torch's `~` on a float tensor.
    if _kind_of(a) != 105:
        raise DtypeNotImplementedError(
            f"\"{name}\" is not implemented for {_dtype_str(a)} tensors: bitwise ops take integer or bool "
            "tensors; use logical_and/logical_or/logical_xor/logical_not for a truth test of other "
            "dtypes, or convert first, e.g. x.long() or x.bool()")
    return a


cdef object k_square(object a):
    # torch: the square of a bool tensor is int64 (NumPy's is int8)
    if type(a) is _cnp.ndarray and _cnp.PyArray_TYPE(<_cnp.ndarray>a) == _cnp.NPY_BOOL:
        a = a.astype(np.int64)
    return np.square(a)


cdef object k_real_float(object a, str name):
    # floating-point only: neither integer nor complex (silu excepted: torch
    # computes its complex values)
    return k_float_only(k_real(a, name), name)


cpdef object k_sign(object a):
    # torch's sign: 0 at NaN (NumPy's is NaN), so abs's and norm's gradients
    # (grad * sign(x)) are 0 there as in torch; complex raises (torch has sgn)
    k_real(a, "sign")
    if _arr(a).dtype == np.bool_:
        return _arr(a).copy()           # torch: sign of a bool tensor is itself
    r = np.sign(a)
    if _kind_of(a) == 102 and (type(r) is _cnp.ndarray or _is_cupy(r)):
        nan = np.isnan(r)
        if nan.any():
            r = _xp(r).where(nan, 0, r).astype(r.dtype, copy=False)
    elif isinstance(r, (float, np.floating)) and r != r:
        r = type(r)(0)
    return r


# Note [bfloat16 kernels]
# ~~~~~~~~~~~~~~~~~~~~~~~
# torch.bfloat16 is ml_dtypes' bfloat16 here (kind 'V' to NumPy: floating
# only to _is_floating_dtype). NumPy's ufuncs run on it through ml_dtypes,
# each element computed in float32 and rounded, as torch's CPU kernels; but
# matmul answers in float32, einsum and LAPACK refuse it, SciPy's special
# functions answer in float64, and reductions would add in bfloat16, rounding
# at every step. torch's CPU kernels compute bfloat16 in float32 (their
# "opmath" type) and round the result once. The kernels of those ops do the
# same: k_opmath gives the float32 copy of a bfloat16 operand, k_bf16_like
# rounds the result back, k_via_float32 does both around a binary function.
# Other arrays pass through after one C type test.
cdef object _F32 = np.dtype(np.float32)


cdef object k_opmath(object a):
    # a bfloat16 array as float32 (a copy); anything else as it is
    if _is_bf16(a):
        return _arr(a).astype(_F32)
    return a


cdef object k_bf16_like(object r, object a, object b=None):
    # r, computed in float32 (or float64) from bfloat16 operands, rounded to
    # bfloat16 where the operands' dtypes promote to it (NumPy's promotion,
    # Python scalars weak): bfloat16 with bfloat16, an integer or a number
    if not (_is_bf16(a) or _is_bf16(b)):
        return r
    dt = np.result_type(a) if b is None else np.result_type(a, b)
    if not _is_bf16_dtype(dt):
        return r
    if type(r) is tuple:
        return tuple(k_bf16_like(x, a, b) for x in r)
    if not hasattr(r, "dtype") or r.dtype == dt:
        return r
    return r.astype(dt)


cdef object k_via_float32(object fn, object a, object b):
    # fn(a, b) for the NumPy functions without a bfloat16 loop of their own
    # (matmul, einsum's products): in float32, rounded back (Note [bfloat16 kernels])
    if not (_is_bf16(a) or _is_bf16(b)):
        return fn(a, b)
    return k_bf16_like(fn(k_opmath(a), k_opmath(b)), a, b)
