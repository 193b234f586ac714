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
from retrograd.core._dtype_rules cimport (
    k_float, k_real, _is_bf16, k_opmath, k_bf16_like, k_via_float32,
)
from retrograd.core._dtype_rules import DtypeNotImplementedError
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
    if dtype is None and _is_bf16(a):   # in float32, rounded once (Note [bfloat16 kernels])
        return k_bf16_like(k_prod(k_opmath(a), dim, keepdim, None), a)
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
    # torch's order: the dims, an empty reduction, then the dtype
    axis = _axis_of(a, dim) if not (isinstance(dim, (tuple, list)) and len(dim) == 0) else None
    _check_nonempty(a, axis, "amax")
    k_real(a, "amax")
    return np.amax(a, axis=axis, keepdims=keepdim)


cdef object k_amin(object a, object dim, bint keepdim):
    # torch's order: the dims, an empty reduction, then the dtype
    axis = _axis_of(a, dim) if not (isinstance(dim, (tuple, list)) and len(dim) == 0) else None
    _check_nonempty(a, axis, "amin")
    k_real(a, "amin")
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
    if _is_bf16(a):
        return k_bf16_like(k_var(k_opmath(a), dim, unbiased, keepdim, correction, name), a)
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
    if _is_bf16(a):
        return k_bf16_like(k_std(k_opmath(a), dim, unbiased, keepdim, correction), a)
    return np.sqrt(k_var(a, dim, unbiased, keepdim, correction, "std"))


cdef object k_logsumexp(object a, object dim, bint keepdim):
    if _is_bf16(a):
        return k_bf16_like(k_logsumexp(k_opmath(a), dim, keepdim), a)
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
    if _is_bf16(arr):
        if dtype is None:
            return k_bf16_like(k_norm(k_opmath(arr), p, dim, keepdim, None), arr)
        arr = arr.astype(dtype)         # (torch: computed in the dtype asked for)
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
    if dtype is None and _is_bf16(arr):                    # added in float32 (Note [bfloat16 kernels])
        return k_bf16_like(k_cumsum(k_opmath(arr), dim, None), arr)
    if n == 0:
        return arr.astype(dtype if dtype is not None else arr.dtype, copy=True)
    return np.cumsum(a, axis=d, dtype=dtype)


cdef object k_cumprod(object a, object dim, object dtype):
    cdef int n = np.ndim(a)
    d = _wrap_dim(dim, n)
    arr = _arr(a)
    if dtype is None and arr.dtype.kind in "biu":
        dtype = np.int64
    if dtype is None and _is_bf16(arr):
        return k_bf16_like(k_cumprod(k_opmath(arr), dim, None), arr)
    if n == 0:
        return arr.astype(dtype if dtype is not None else arr.dtype, copy=True)
    return np.cumprod(a, axis=d, dtype=dtype)


cdef object _argext(object a, object dim, bint keepdim, object fn, str name):
    arr = _arr(k_real(a, name, True))
    if arr.dtype == np.bool_:
        if dim is not None:
            _wrap_dim(dim, max(arr.ndim, 1))        # a malformed dim is reported first, as torch
        raise RuntimeError(f"{name}(): does not support bool input (as torch); convert it first, e.g. x.int()")
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
    return k_via_float32(np.matmul, a, b)          # (bfloat16: Note [bfloat16 kernels])


cdef object k_addmm(object c, object a, object b, object beta, object alpha):
    # beta * c + alpha * (a @ b), c broadcast to the product's shape; beta == 0
    # ignores c's values (torch: NaN in c does not reach the result).
    _matrix_operands("addmm", a, b, "mat1", "mat2")
    if np.ndim(a) != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {np.ndim(a)}-D tensor")
    if np.ndim(b) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {np.ndim(b)}-D tensor")
    if np.shape(a)[1] != np.shape(b)[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({np.shape(a)[0]}x{np.shape(a)[1]} "
                           f"and {np.shape(b)[0]}x{np.shape(b)[1]})")
    if _is_bf16(a) or _is_bf16(b) or _is_bf16(c):     # one rounding, as torch's (Note [bfloat16 kernels])
        return k_bf16_like(k_addmm(k_opmath(c), k_opmath(a), k_opmath(b), beta, alpha), a, c)
    out_shape = (np.shape(a)[0], np.shape(b)[1])
    cshape = np.shape(c)
    if len(cshape) > 2 or any(s != 1 and s != o for s, o in zip(cshape[::-1], out_shape[::-1])):
        raise RuntimeError(f"addmm: the tensor of shape {list(cshape)} (self) does not broadcast to the "
                           f"product's shape {list(out_shape)}")
    prod = np.matmul(a, b)
    if alpha != 1:
        prod = np.multiply(prod, alpha)
    if beta == 0:
        cdt = c.dtype if hasattr(c, "dtype") else np.result_type(c)
        return prod.astype(np.result_type(cdt, prod.dtype), copy=False)
    return np.add(prod, c if beta == 1 else np.multiply(c, beta))


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
    return k_via_float32(np.matmul, a, b)


cdef object k_dot(object a, object b):
    _matrix_operands("dot", a, b, "input", "tensor")
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise RuntimeError(f"1D tensors expected, but got {np.ndim(a)}D and {np.ndim(b)}D tensors")
    if np.shape(a)[0] != np.shape(b)[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{np.shape(a)[0]}] and src "
                           f"[{np.shape(b)[0]}] to have the same number of elements, but got "
                           f"{np.shape(a)[0]} and {np.shape(b)[0]} elements respectively")
    return k_via_float32(np.dot, a, b)


cdef object k_outer(object a, object b):
    _matrix_operands("outer", a, b, "input", "vec2")
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise RuntimeError(f"outer: expected 1D tensors, but got {np.ndim(a)}D and {np.ndim(b)}D tensors")
    if _is_cupy(a) or _is_cupy(b):      # CuPy has no ufunc.outer
        return np.multiply(a[:, None], b[None, :])
    return np.multiply.outer(a, b)


cdef object k_einsum(object a, object b, object equation):
    if _is_bf16(a) or _is_bf16(b):      # (NumPy's einsum refuses bfloat16: Note [bfloat16 kernels])
        two = "," in equation.split("->")[0]            # (one operand: b is a placeholder)
        return k_bf16_like(k_einsum(k_opmath(a), k_opmath(b), equation), a, b if two else None)
    try:
        if "," in equation.split("->")[0]:
            # (optimize=True may end in a transpose of its last product: the
            # result is laid out in C order, as torch's, so that .view() works)
            r = np.einsum(equation, a, b, optimize=True)
            return r if np.ndim(r) == 0 or r.flags.c_contiguous else _xp(a).ascontiguousarray(r)
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
    _no_bfloat16(a, name)
    if _arr(a).dtype.kind not in "fc":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_arr(a).dtype}")


cdef void _no_bfloat16(object a, str name) except *:
    # torch's LAPACK-backed functions have no bfloat16 kernel on the CPU (a
    # NotImplementedError or a RuntimeError there: NotImplementedError is both)
    if _is_bf16(a):
        raise DtypeNotImplementedError(
            f"linalg.{name}: not implemented for bfloat16 (as torch: its LAPACK kernels take float32, float64 "
            f"and complex); convert first, e.g. A.float()")


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


cdef object k_inv_unchecked(object a):
    # The inverse as LAPACK's LU solve gives it for a singular matrix too:
    # inf/nan where a pivot is zero, no error. torch's backward formulas that
    # solve with the input (slogdet's) give that, rather than raising.
    if _is_cupy(a):
        return np.linalg.inv(a)         # (CuPy returns nan/inf unless asked to check)
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        pass
    # Gauss-Jordan elimination with partial pivoting, batched, without the
    # zero-pivot check.
    m = np.array(a, dtype=np.result_type(a, np.float64) if a.dtype.kind not in "fc" else a.dtype)
    cdef Py_ssize_t n = m.shape[-1], k
    inv = np.broadcast_to(np.eye(n, dtype=m.dtype), m.shape).copy()
    batch = np.indices(m.shape[:-2]) if m.ndim > 2 else ()
    with np.errstate(all="ignore"):
        for k in range(n):
            p = np.argmax(np.abs(m[..., k:, k]), axis=-1) + k
            for arr in (m, inv):
                row_k = arr[..., k, :].copy()
                arr[..., k, :] = arr[tuple(batch) + (p,)]
                arr[tuple(batch) + (p,)] = row_k
            pivot = m[..., k, k][..., None].copy()
            m[..., k, :] /= pivot
            inv[..., k, :] /= pivot
            factor = m[..., :, k:k + 1].copy()
            for arr in (m, inv):
                # (row k itself is left out: 0 * inf would make it nan)
                update = factor * arr[..., k:k + 1, :]
                update[..., k, :] = 0
                arr -= update
    return inv


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


# The SVD, one LAPACK call: (U, S, Vh), reduced (U m x k, Vh k x n) or
# full (U m x m, Vh n x n), or (empty, S, empty) without compute_uv (svdvals
# with nothing to differentiate), as torch's _linalg_svd.
cdef tuple k_linalg_svd(object a, bint full_matrices, bint compute_uv):
    cdef str name = "svd" if compute_uv else "svdvals"
    _no_bfloat16(a, name)
    if np.ndim(a) < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    try:
        if compute_uv:
            u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
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


# --- sorting and selection (sort, argsort, topk) ---
# torch's orders: NaN is larger than every number (last ascending, first
# descending), equal elements keep their order when the sort is stable.
# NumPy's stable sort already puts NaN last; a descending stable sort is the
# ascending stable sort of the reversed dim, reversed back (equal elements
# come out in their original order, NaN first). torch's CPU sort is stable
# either way, so stable=False gives the same order (allowed: torch only
# promises an order of ties for stable=True).
cdef object _sort_indices(object arr, int d, bint descending):
    if not descending:
        return np.argsort(arr, axis=d, kind="stable").astype(np.int64, copy=False)
    n = arr.shape[d]
    rev = np.flip(arr, axis=d)
    idx = np.flip(np.argsort(rev, axis=d, kind="stable"), axis=d)
    return (n - 1 - idx).astype(np.int64, copy=False)


cdef tuple k_sort(object a, object dim, bint descending, bint stable):
    arr = _arr(k_real(a, "sort", True))
    if arr.ndim == 0:
        _wrap_dim(dim, 0)
        return arr.copy(), _xp(arr).zeros((), dtype=np.int64)
    d = _wrap_dim(dim, arr.ndim)
    idx = _sort_indices(arr, d, descending)
    return np.take_along_axis(arr, idx, axis=d), idx


cdef object k_argsort(object a, object dim, bint descending, bint stable):
    return k_sort(a, dim, descending, stable)[1]


cdef tuple k_topk(object a, object k, object dim, bint largest, bint sorted):
    # the k largest (smallest) along dim, in sorted order (torch's order for
    # sorted=True; any order is allowed for sorted=False). Ties go to the
    # lower index, which is one of the choices torch may make.
    arr = _arr(k_real(a, "topk", True))
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"topk(): argument 'k' must be int, not {type(k).__name__}")
    n = 1 if arr.ndim == 0 else arr.shape[_wrap_dim(dim, arr.ndim)]
    if arr.ndim == 0:
        _wrap_dim(dim, 0)
    if k < 0 or k > n:
        raise RuntimeError(f"selected index k out of range: k={k} for a dim of size {n} "
                           f"(topk needs 0 <= k <= {n})")
    if arr.ndim == 0:
        return arr.copy(), _xp(arr).zeros((), dtype=np.int64)
    d = _wrap_dim(dim, arr.ndim)
    idx = _sort_indices(arr, d, largest)
    # the first k along d, by slicing (works the same on NumPy and CuPy arrays)
    idx = idx[(slice(None),) * d + (slice(0, k),)].copy()
    return np.take_along_axis(arr, idx, axis=d), idx


cdef object k_any_all(object a, object dim, bint keepdim, bint is_any):
    # torch's any/all: bool results (uint8 for a uint8 input), dim None (all
    # dims), an int or a tuple of ints
    arr = _arr(a)
    axis = _axis_of(arr, dim)
    if arr.ndim == 0 and axis is not None:
        axis = None
    out = (np.any if is_any else np.all)(arr, axis=axis, keepdims=keepdim)
    out = _arr(out)
    if keepdim and axis is None and arr.ndim:
        out = out.reshape((1,) * arr.ndim)
    if arr.dtype == np.uint8:
        out = out.astype(np.uint8)
    return out


# --- eigh, qr, lstsq, pinv ---
cdef tuple k_linalg_eigh(object a, object UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check_square(a, "eigh")
    try:
        w, v = np.linalg.eigh(a, UPLO=UPLO)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.eigh: The algorithm failed to converge because the input matrix is "
                          "ill-conditioned or has too many repeated eigenvalues") from None
    return _arr(w), _arr(v)


cdef tuple k_linalg_qr(object a, object mode):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    _no_bfloat16(a, "qr")
    if np.ndim(a) < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if _arr(a).dtype.kind not in "fc":
        raise RuntimeError(f"linalg.qr: Expected a floating point or complex tensor as input. "
                           f"Got {_arr(a).dtype}")
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        # torch: Q is an empty tensor when mode='r'
        return _xp(r).zeros((0,), dtype=_arr(a).dtype), _arr(r)
    q, r = np.linalg.qr(a, mode=mode)
    return _arr(q), _arr(r)


cdef object _pinv_rcond(object a):
    # torch's default tolerance: eps(dtype) * max(m, n) times the largest
    # singular value
    s = np.shape(a)
    return np.finfo(_arr(a).dtype).eps * _bi.max(s[-1], s[-2])


cdef object k_linalg_pinv(object a):
    _no_bfloat16(a, "pinv")
    if np.ndim(a) < 2:
        raise RuntimeError("linalg.pinv(A): The input tensor A must have at least 2 dimensions.")
    if _arr(a).dtype.kind not in "fc":
        raise RuntimeError(f"linalg.pinv(A): Expected a floating point or complex tensor as input. "
                           f"Got {_arr(a).dtype}")
    s = np.shape(a)
    if 0 in s[-2:]:
        return _xp(a).zeros(tuple(s[:-2]) + (s[-1], s[-2]), dtype=_arr(a).dtype)
    return np.linalg.pinv(a, rcond=_pinv_rcond(a))


cdef bint _lstsq_vector_case(object a, object b):
    return np.ndim(b) == np.ndim(a) - 1


cdef tuple k_linalg_lstsq(object a, object b, object rcond, object driver):
    # torch.linalg.lstsq on the CPU: the solution of min ||A X - B|| (the
    # minimum-norm one for a rank-deficient A), batched with broadcasting.
    # The drivers' extra results as torch returns them: residuals only for
    # gelsd/gelss/gels with m > n and every matrix of full rank; the rank for
    # gelsy/gelsd/gelss; the singular values for gelsd/gelss.
    # gelsy's pivoted-QR rank decision is made here from the singular values
    # (what gelsd does): the two agree except for a singular value within
    # rounding of the tolerance.
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss), got {driver}")
    a, b = _arr(a), _arr(b)
    _no_bfloat16(a, "lstsq")
    _no_bfloat16(b, "lstsq")
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        raise RuntimeError("torch.linalg.lstsq: Expected A and B to be floating point tensors, got "
                           f"{a.dtype} and {b.dtype}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {a.dtype} and other's dtype {b.dtype}")
    if a.ndim < b.ndim or a.ndim - b.ndim > 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    # torch's rule: B with one dim fewer than A is a (batch of) vector(s)
    vec = _lstsq_vector_case(a, b)
    bm = b[..., None] if vec else b
    m, n = a.shape[-2], a.shape[-1]
    if bm.shape[-2] != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2) "
                           f"({m} != {bm.shape[-2]})")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    except ValueError:
        raise RuntimeError(f"torch.linalg.lstsq: the batch dims of input {a.shape[:-2]} and other "
                           f"{bm.shape[:-2]} do not broadcast") from None
    k = bm.shape[-1]
    nb = 1
    for s_ in batch:
        nb *= s_
    A3 = np.broadcast_to(a, batch + (m, n)).reshape((nb, m, n))
    B3 = np.broadcast_to(bm, batch + (m, k)).reshape((nb, m, k))
    tol = np.finfo(a.dtype).eps * _bi.max(m, n) if rcond is None else rcond
    xp = _xp(a)             # results on A's device (NumPy or CuPy)
    X = xp.zeros((nb, n, k), dtype=a.dtype)
    ranks = xp.zeros((nb,), dtype=np.int64)
    svals = xp.zeros((nb, _bi.min(m, n)), dtype=np.finfo(a.dtype).dtype)
    res = xp.zeros((nb, k), dtype=np.finfo(a.dtype).dtype)
    for i in range(nb):
        if m == 0 or n == 0 or k == 0:
            continue            # nothing to solve: torch reports rank 0
        x, r, rk, sv = np.linalg.lstsq(A3[i], B3[i], rcond=tol)
        X[i], ranks[i], svals[i] = x, rk, sv
        if np.size(r):
            res[i] = r
    X = X.reshape(batch + (n, k))
    if vec:
        X = X[..., 0]
    empty = xp.zeros((0,), dtype=np.finfo(a.dtype).dtype)
    full_rank = bool(np.all(ranks == n))
    residuals = (res.reshape(batch + ((k,) if not vec else ())) if driver != "gelsy" and m > n and full_rank
                 else empty)
    rank = ranks.reshape(batch) if driver != "gels" else xp.zeros((0,), dtype=np.int64)
    singular_values = svals.reshape(batch + (_bi.min(m, n),)) if driver in ("gelsd", "gelss") else empty.copy()
    if driver == "gels" and not full_rank:
        raise LinAlgError("torch.linalg.lstsq: The least squares solution could not be computed because the "
                          "input matrix does not have full rank (driver 'gels' needs it; use 'gelsy', "
                          "'gelsd' or 'gelss')")
    return X, residuals, rank, singular_values
