# cython: language_level=3
# retrograd.core._kernels_linalg: the kernels of the reduction and linear
# algebra entries (prod, amax, var, logsumexp, norm, cumsum, argmax, mm,
# einsum, linalg.*), declared in _kernels_linalg.pxd: torch's argument
# conventions (dim=int or tuple, keepdim, correction) mapped onto NumPy.
# Arrays in, arrays out.

import builtins as _bi

cimport numpy as _cnp
import numpy as np
from retrograd.core._array_module cimport _arr, _device_index, _is_cupy, _xp, _cupy
from retrograd.core._dtype_rules cimport k_float, k_real
from retrograd.core._arg_checks cimport _wrap_dim, _norm_dims, _matrix_operands

_cnp.import_array()

class _LinAlgErrorBase(RuntimeError):
    pass


# torch.linalg.LinAlgError is a RuntimeError subclass: callers that catch
# RuntimeError keep working.
LinAlgError = type("LinAlgError", (_LinAlgErrorBase,), {"__module__": "retrograd.linalg"})


cdef object _axis_of(object a, object dim):
    # torch's dim (None / () = all, int, tuple) as a NumPy axis (None = all).
    if dim is None:
        return None
    return _norm_dims(dim, np.ndim(a))


cdef tuple _axes_tuple(object axis, int ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return axis
    return (axis,)


cdef object k_prod(object a, object dim, bint keepdim, object dtype):
    if dim is not None and isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    if np.ndim(a) == 0:
        _norm_dims(dim, 0)
        out = _arr(a).astype(dtype) if dtype is not None else _arr(a)
        if out.dtype.kind in "biu" and dtype is None:
            out = out.astype(np.int64)
        return out.copy()
    out = np.prod(a, axis=_axis_of(a, dim), keepdims=keepdim, dtype=dtype)
    if dtype is None and _arr(out).dtype.kind in "bu":          # torch: bool/uint8 prod -> int64
        out = _arr(out).astype(np.int64)
    return out


cdef object _check_nonempty(object a, object axis, str name):
    # torch: reducing all of an empty tensor is a RuntimeError, reducing an
    # empty dim an IndexError; empty non-reduced dims give an empty result
    if np.size(a) != 0:
        return
    if axis is None:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    shape = np.shape(a)
    for d in (axis if isinstance(axis, tuple) else (axis,)):
        if shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


cdef object k_amax(object a, object dim, bint keepdim):
    k_real(a, "amax")
    axis = _axis_of(a, dim) if not (isinstance(dim, (tuple, list)) and len(dim) == 0) else None
    _check_nonempty(a, axis, "amax")
    return np.amax(a, axis=axis, keepdims=keepdim)


cdef object k_amin(object a, object dim, bint keepdim):
    k_real(a, "amin")
    axis = _axis_of(a, dim) if not (isinstance(dim, (tuple, list)) and len(dim) == 0) else None
    _check_nonempty(a, axis, "amin")
    return np.amin(a, axis=axis, keepdims=keepdim)


def _var_correction(dim, unbiased, correction):
    # torch: var(x, unbiased) with a bool in dim's place; unbiased and
    # correction are exclusive; the default is correction=1.
    if isinstance(dim, (bool, np.bool_)):
        if unbiased is not None:
            raise TypeError("var()/std(): unbiased given twice (positionally in place of dim and by keyword)")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError("var()/std(): cannot specify both `unbiased` and `correction`; use correction= only")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


cdef object k_var(object a, object dim, object unbiased, bint keepdim, object correction,
                  str name="var"):
    dim, correction = _var_correction(dim, unbiased, correction)
    if _arr(a).dtype.kind not in "fc":
        raise RuntimeError(f"std and var only support floating point and complex dtypes, got "
                           f"{_arr(a).dtype}; convert with .to(float) first")
    cdef Py_ssize_t n = np.size(a)
    axis = _axis_of(a, dim)
    if axis is not None and np.ndim(a):
        n = 1
        for d in (axis if isinstance(axis, tuple) else (axis,)):
            n *= np.shape(a)[d]
    if n - correction <= 0 and np.size(a):
        import warnings
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.var(a, axis=_axis_of(a, dim), ddof=correction, keepdims=keepdim)


cdef object k_std(object a, object dim, object unbiased, bint keepdim, object correction):
    return np.sqrt(k_var(a, dim, unbiased, keepdim, correction, "std"))


cdef object k_logsumexp(object a, object dim, bint keepdim):
    a = _arr(k_float(a))                # integer inputs: torch's default float (float32)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    axis = _axis_of(a, dim)
    m = np.amax(a, axis=axis, keepdims=True) if np.size(a) else np.zeros_like(a, shape=(1,) * np.ndim(a))
    m = np.where(np.isfinite(m), m, 0)                  # all -inf (or inf) slices: no shift
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if not keepdim:
        out = np.squeeze(out, axis=_axes_tuple(axis, np.ndim(a))) if np.ndim(a) else np.reshape(out, ())
    return out.astype(a.dtype, copy=False)


cdef object _norm_p(object p):
    if p is None or p == "fro":
        return 2.0
    if isinstance(p, str):
        raise RuntimeError(f"norm: p={p!r} is a matrix norm; use rg.linalg.matrix_norm / rg.linalg.norm "
                           "with a 2-tuple dim (supported here: p='fro' and numeric p)")
    return float(p)


cdef object k_norm(object a, object p, object dim, bint keepdim, object dtype):
    arr = _arr(a)
    if arr.dtype.kind not in "fc":
        raise RuntimeError(f"norm(): input dtype should be floating point or complex, got {arr.dtype}; "
                           "convert with .to(float) first")
    if dtype is not None:
        arr = arr.astype(dtype)
    pf = _norm_p(p)
    axis = _axis_of(arr, dim)
    x = np.abs(arr)
    if pf == 2.0:
        out = np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdim))
    elif pf == 1.0:
        out = np.sum(x, axis=axis, keepdims=keepdim)
    elif (pf == np.inf or pf == -np.inf) and arr.size == 0 and (
            axis is None or _bi.any(arr.shape[d] == 0 for d in (axis if isinstance(axis, tuple) else (axis,)))):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on an empty dimension because "
                           "the operation does not have an identity")
    elif pf == np.inf:
        out = np.amax(x, axis=axis, keepdims=keepdim)
    elif pf == -np.inf:
        out = np.amin(x, axis=axis, keepdims=keepdim)
    elif pf == 0.0:
        out = np.sum(x != 0, axis=axis, keepdims=keepdim).astype(arr.dtype)
    else:
        with np.errstate(divide="ignore"):
            out = np.sum(x ** pf, axis=axis, keepdims=keepdim) ** (1.0 / pf)
    # the norm of a complex tensor is real (|z|'s dtype), as torch's
    return _arr(out).astype(x.dtype, copy=False)


cdef object k_cumsum(object a, object dim, object dtype):
    cdef int n = np.ndim(a)
    d = _wrap_dim(dim, n)
    arr = _arr(a)
    if dtype is None and arr.dtype.kind in "biu":
        dtype = np.int64                                   # torch promotes integer cumsum to int64
    if n == 0:
        return arr.astype(dtype if dtype is not None else arr.dtype, copy=True)
    return np.cumsum(a, axis=d, dtype=dtype)


cdef object k_cumprod(object a, object dim, object dtype):
    cdef int n = np.ndim(a)
    d = _wrap_dim(dim, n)
    arr = _arr(a)
    if dtype is None and arr.dtype.kind in "biu":
        dtype = np.int64
    if n == 0:
        return arr.astype(dtype if dtype is not None else arr.dtype, copy=True)
    return np.cumprod(a, axis=d, dtype=dtype)


cdef object _argext(object a, object dim, bint keepdim, object fn, str name):
    arr = _arr(k_real(a, name, True))
    if arr.size == 0:
        # torch's errors (IndexError both); empty non-reduced dims are fine
        if dim is None:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        if arr.ndim and arr.shape[_wrap_dim(dim, arr.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    if dim is None:
        out = _arr(fn(arr.reshape(-1))).astype(np.int64)
        if keepdim:
            out = out.reshape((1,) * arr.ndim)
        return out
    d = _wrap_dim(dim, arr.ndim)
    if arr.ndim == 0:
        return np.zeros_like(arr, dtype=np.int64)
    return _arr(fn(arr, axis=d, keepdims=keepdim)).astype(np.int64, copy=False)


cdef object k_argmax(object a, object dim, bint keepdim):
    return _argext(a, dim, keepdim, np.argmax, "argmax")


cdef object k_argmin(object a, object dim, bint keepdim):
    return _argext(a, dim, keepdim, np.argmin, "argmin")


cdef object k_take_dim(object a, object indices, object dim, bint keepdim):
    # a's values at `indices` (kept-dim shape) along `dim`: max/min's values.
    arr = _arr(a)
    if arr.ndim == 0:
        return arr.copy()
    d = _wrap_dim(dim, arr.ndim)
    out = np.take_along_axis(arr, _device_index(indices, arr), axis=d)
    return out if keepdim else np.squeeze(out, axis=d)


cdef object k_take_dim_backward(object g, object indices, object dim, bint keepdim, object shape, object dtype):
    # zeros on g's device (np.zeros_like dispatches to CuPy for a cupy g)
    z = _xp(g).zeros(shape, dtype=dtype)
    if len(shape) == 0:
        z[...] = g
        return z
    d = _wrap_dim(dim, len(shape))
    gk = g if keepdim else np.expand_dims(g, d)
    np.put_along_axis(z, _device_index(indices, z), gk, axis=d)
    return z


cdef object k_mm(object a, object b):
    _matrix_operands("mm", a, b, "input", "mat2")
    if np.ndim(a) != 2:
        raise RuntimeError(f"self must be a matrix, got a {np.ndim(a)}-D tensor; use matmul for other shapes")
    if np.ndim(b) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got a {np.ndim(b)}-D tensor; use matmul for other shapes")
    if np.shape(a)[1] != np.shape(b)[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({np.shape(a)[0]}x{np.shape(a)[1]} "
                           f"and {np.shape(b)[0]}x{np.shape(b)[1]})")
    return np.matmul(a, b)


cdef object k_bmm(object a, object b):
    _matrix_operands("bmm", a, b, "input", "mat2")
    if np.ndim(a) != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got {np.ndim(a)}-D; use matmul for other shapes")
    if np.ndim(b) != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor, got {np.ndim(b)}-D; use matmul for other shapes")
    sa, sb = np.shape(a), np.shape(b)
    if sa[0] != sb[0] or sa[2] != sb[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] "
                           f"but got: [{sb[0]}, {sb[1]}].")
    return np.matmul(a, b)


cdef object k_dot(object a, object b):
    _matrix_operands("dot", a, b, "input", "tensor")
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise RuntimeError(f"1D tensors expected, but got {np.ndim(a)}D and {np.ndim(b)}D tensors")
    if np.shape(a)[0] != np.shape(b)[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{np.shape(a)[0]}] and src "
                           f"[{np.shape(b)[0]}] to have the same number of elements, but got "
                           f"{np.shape(a)[0]} and {np.shape(b)[0]} elements respectively")
    return np.dot(a, b)


cdef object k_outer(object a, object b):
    _matrix_operands("outer", a, b, "input", "vec2")
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise RuntimeError(f"outer: expected 1D tensors, but got {np.ndim(a)}D and {np.ndim(b)}D tensors")
    if _is_cupy(a) or _is_cupy(b):      # CuPy has no ufunc.outer
        return np.multiply(a[:, None], b[None, :])
    return np.multiply.outer(a, b)


cdef object k_einsum(object a, object b, object equation):
    try:
        if "," in equation.split("->")[0]:
            return np.einsum(equation, a, b, optimize=True)
        return _arr(np.einsum(equation, a)).copy()        # a view for transposes: copy
    except ValueError as exc:
        raise RuntimeError(f"einsum(): {exc} (equation {equation!r})") from None


cdef object _check_square(object a, str name):
    if np.ndim(a) < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    s = np.shape(a)
    if s[-1] != s[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{s[-2]} by {s[-1]} matrices")
    if _arr(a).dtype.kind not in "fc":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_arr(a).dtype}")


import contextlib as _contextlib


cdef object _linalg_errors(object a):
    # CuPy's solvers return nan/inf for singular input unless asked to check
    # (a device sync); torch raises on CUDA too, so ask. NumPy always raises.
    if _is_cupy(a):
        import cupyx
        return cupyx.errstate(linalg="raise")
    return _contextlib.nullcontext()


cdef object k_inv(object a):
    _check_square(a, "inv")
    try:
        with _linalg_errors(a):
            return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.inv: The diagonal element of the LU factorization is zero: the matrix "
                          "is singular and has no inverse") from None


cdef object k_det(object a):
    _check_square(a, "det")
    return np.linalg.det(a)


cdef tuple k_slogdet(object a):
    # (sign, logabsdet); NumPy gives scalars for one matrix, CuPy 0-d arrays
    _check_square(a, "slogdet")
    sign, logabsdet = np.linalg.slogdet(a)
    return _arr(sign), _arr(logabsdet)


cdef bint _solve_vector_case(object a, object b):
    # torch.linalg.solve: B is a (batch of) vector(s) when B.ndim == 1 or
    # B.shape == A.shape[:-1] (B.ndim == A.ndim - 1).
    return np.ndim(b) == 1 or (np.ndim(b) == np.ndim(a) - 1 and tuple(np.shape(b)) == tuple(np.shape(a)[:-1]))


cdef object k_solve(object a, object b):
    _check_square(a, "solve")
    try:
        if _solve_vector_case(a, b):
            with _linalg_errors(a):
                return np.linalg.solve(a, _arr(b)[..., None])[..., 0]
        if np.ndim(b) < 2:
            raise RuntimeError("linalg.solve: B must have at least 1 dimension")
        if np.shape(b)[-2] != np.shape(a)[-1]:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                               f"({np.shape(a)[-2]}x{np.shape(a)[-1]} and {np.shape(b)[-2]}x{np.shape(b)[-1]})")
        if _is_cupy(a) and np.shape(a)[:-2] != np.shape(b)[:-2]:
            # CuPy's solve does not broadcast batch dims: give both the common batch
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            a = _cupy.broadcast_to(a, batch + a.shape[-2:])
            b = _cupy.broadcast_to(b, batch + b.shape[-2:])
        with _linalg_errors(a):
            return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.solve: The solver failed because the input matrix is singular.") from None
    except ValueError as exc:
        raise RuntimeError(f"linalg.solve: {exc}") from None


cdef object k_cholesky(object a):
    _check_square(a, "cholesky")
    try:
        with _linalg_errors(a):
            return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input "
                          "is not positive-definite.") from None


# The reduced SVD (full_matrices=False), one LAPACK call: (U, S, Vh), or
# (empty, S, empty) without compute_uv (svdvals with nothing to
# differentiate), as torch's _linalg_svd.
cdef tuple k_linalg_svd(object a, bint compute_uv):
    cdef str name = "svd" if compute_uv else "svdvals"
    if np.ndim(a) < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    try:
        if compute_uv:
            u, s, vh = np.linalg.svd(a, full_matrices=False)
            return u, s, vh
        s = np.linalg.svd(a, compute_uv=False)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.{name}: The algorithm failed to converge because the input matrix "
                          "is ill-conditioned or has too many repeated singular values") from None
    empty = _xp(s).zeros((0,), dtype=_arr(a).dtype)
    return empty, s, empty.copy()


# max(dim) / min(dim): (values, indices), indices int64 as torch's. NaN is
# the extreme where there is one (argmax/argmin find the first NaN).
cdef tuple k_extreme_dim(object a, object dim, bint keepdim, bint is_max):
    arr = _arr(a)
    if arr.ndim == 0:
        _wrap_dim(dim, 0)
        return arr.copy(), _xp(arr).zeros((), dtype=np.int64)
    d = _wrap_dim(dim, arr.ndim)
    idx = (np.argmax if is_max else np.argmin)(arr, axis=d, keepdims=True).astype(np.int64)
    values = np.take_along_axis(arr, idx, axis=d)
    if not keepdim:
        return np.squeeze(values, axis=d), np.squeeze(idx, axis=d)
    return values, idx
