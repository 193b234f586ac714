# cython: language_level=3
# retrograd.core._kernels_core: the generic kernels of derivatives.yaml's
# `kernel:` code (zeros, sum, mean, transpose, permute, reshape, view,
# expand, matmul, getitem and its backward, dtype casts, clone), and index
# accumulation (np.add.at, CuPy's scatter_add), declared in
# _kernels_core.pxd. Arrays in, arrays out.

import builtins as _bi

cimport numpy as _cnp
import numpy as np
from numpy import ndarray
from retrograd.core._dtype_rules import DtypeRuntimeError
from retrograd.core._array_module cimport _device_index, _is_cupy, _xp, _cupy
from retrograd.core._dtype_rules cimport _dtype_str, _kind_of, _is_bf16, k_default_float, k_opmath, k_via_float32
from retrograd.core._arg_checks cimport (
    _wrap_dim, _check_int_list, _type_name, _norm_dims, _unwrap_index, _matrix_operands,
)

_cnp.import_array()


cdef object k_zeros_like(object a):
    # A zero gradient (floor, sign, ...: torch's zeros_like(grad)).
    # np.zeros_like is a Python function behind __array_function__ dispatch,
    # ~1 us on small arrays; a gradient needs only the shape and dtype.
    if type(a) is ndarray:
        return _cnp.PyArray_ZEROS(_cnp.PyArray_NDIM(<_cnp.ndarray>a), _cnp.PyArray_DIMS(<_cnp.ndarray>a),
                                  _cnp.PyArray_TYPE(<_cnp.ndarray>a), 0)
    return np.zeros_like(a)


cdef object k_scale(object other, object alpha):
    # other * alpha for add/sub's alpha. Python scalars stay Python scalars
    # (NumPy's weak promotion: float32 + 1.5 * 2 stays float32).
    if type(other) is float or type(other) is int or type(other) is bool:
        return other * alpha
    return np.multiply(other, alpha)


cdef object k_sum(object a, object dim, bint keepdim, object dtype):
    # np.add.reduce is np.sum without its Python-level dispatch (~1.5 us a
    # call on small arrays); integer and bool inputs keep np.sum's promotion.
    if type(a) is ndarray and a.ndim > 0 and a.dtype.kind in "fc":
        return np.add.reduce(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=dtype)
    adt = a.dtype if hasattr(a, "dtype") else np.result_type(a)       # (a CuPy array stays on its device)
    if dtype is None and _is_bf16(a):
        # added up in float32, rounded once (Note [bfloat16 kernels])
        return np.sum(k_opmath(a), axis=_norm_dims(dim, a.ndim), keepdims=keepdim).astype(adt)
    if dtype is None and adt.kind in "bu" and adt.itemsize < 8:
        dtype = np.int64                    # torch: sums of bool and small unsigned ints are int64 (NumPy: uint64)
    return np.sum(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=dtype)


cdef object k_mean(object a, object dim, bint keepdim, object dtype):
    # As np.mean (pairwise sum, then one division in the input's float type)
    # without its Python-level overhead; other dtypes go through np.mean.
    cdef Py_ssize_t count = 1
    if type(a) is ndarray and a.ndim > 0 and dtype is None and a.dtype.kind == "f" \
            and a.dtype.itemsize >= 4:
        axis = _norm_dims(dim, a.ndim)
        if axis is None:
            count = a.size
        elif isinstance(axis, tuple):
            for ax in axis:
                count *= a.shape[ax]
        else:
            count = a.shape[axis]
        if count == 0:
            # the mean of nothing is nan, silently (torch's)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.true_divide(np.add.reduce(a, axis=axis, keepdims=keepdim), count)
        return np.true_divide(np.add.reduce(a, axis=axis, keepdims=keepdim), count)
    if dtype is None and _is_bf16(a):
        return k_mean(k_opmath(a), dim, keepdim, None).astype(a.dtype)     # (Note [bfloat16 kernels])
    if dtype is None and _kind_of(a) == 105:
        # torch has no mean of integers or bools (NumPy's is float64); a
        # malformed dim is its argument parser's TypeError, found first (types
        # only: a dim out of range is reported after the dtype, as torch)
        for d in (dim if isinstance(dim, (tuple, list)) else (() if dim is None else (dim,))):
            if isinstance(d, (bool, np.bool_)) or not hasattr(type(d), "__index__"):
                raise TypeError(f"mean(): argument 'dim' must be an int or a tuple of ints, but found "
                                f"element of type {type(d).__name__}")
        raise DtypeRuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_dtype_str(a)}; convert first (x.float()) or pass dtype=")
    if np.size(a) == 0:
        # the mean of nothing is nan, silently (torch's; np.mean warns)
        import warnings
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.mean(a, axis=_norm_dims(dim, np.ndim(a)), keepdims=keepdim, dtype=dtype)
    return np.mean(a, axis=_norm_dims(dim, a.ndim), keepdims=keepdim, dtype=dtype)


cdef object k_transpose(object a, object d0, object d1):
    cdef int w0 = _wrap_dim(d0, a.ndim), w1 = _wrap_dim(d1, a.ndim)    # validates 0-d dims too
    if a.ndim == 0:
        return a
    return np.swapaxes(a, w0, w1)


cdef object k_permute(object a, object dims):
    _check_int_list(dims, "dims", "permute")
    if len(dims) != a.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
            f"of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, a.ndim) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(a, wrapped)


cdef object k_reshape(object a, object shape):
    _check_int_list(shape, "shape", "reshape")
    for i, s in enumerate(shape):
        if s < -1:      # NumPy takes any negative size as -1
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
    try:
        return np.reshape(a, shape)
    except ValueError:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {a.size}") from None
    except TypeError:
        raise _shape_type_error("reshape", shape) from None


cdef object _shape_type_error(str fn, object shape):
    # NumPy's "'float' object cannot be interpreted as an integer", said as torch
    bad = next((x for x in (shape if isinstance(shape, (tuple, list)) else (shape,))
                if type(x) is not int), shape)
    return TypeError(f"{fn}(): argument 'size' must be a tuple of ints, but found element of type "
                     f"{_type_name(bad)} ({bad!r})")


cdef object k_view(object a, object shape):
    out = k_reshape(a, shape)
    if out.size and not np.may_share_memory(out, a):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return out


cdef object k_expand(object a, object shape):
    # torch's expand: -1 keeps a dimension; new leading dimensions may be added.
    shape = tuple(shape)
    _check_int_list(shape, "size", "expand")
    cdef int lead = len(shape) - a.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({a.ndim})")
    target = tuple(a.shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(shape))
    try:
        return np.broadcast_to(a, target)
    except TypeError:
        raise _shape_type_error("expand", shape) from None
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor must match the existing size at non-singleton "
            f"dimensions: cannot expand shape {tuple(a.shape)} to {shape}") from None


cdef object k_broadcast_to(object a, object shape):
    try:
        return np.broadcast_to(a, tuple(shape))
    except TypeError:
        raise _shape_type_error("broadcast_to", shape) from None
    except ValueError:
        raise RuntimeError(f"cannot broadcast shape {tuple(a.shape)} to {tuple(shape)}") from None


cdef object k_matmul(object a, object b):
    _matrix_operands("matmul", a, b, "input", "other")
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{np.ndim(a)}D and {np.ndim(b)}D")
    try:
        return k_via_float32(np.matmul, a, b)      # (bfloat16: Note [bfloat16 kernels])
    except ValueError as exc:
        raise RuntimeError(f"matmul: shapes {np.shape(a)} and {np.shape(b)} cannot be multiplied ({exc})") from None


cdef object k_where(object condition, object a, object b):
    # NumPy promotes a Python number before a bfloat16 array to float32
    # (np.where(c, 2.5, x)); torch keeps a number weak: bfloat16. Two Python
    # numbers, one a float: torch's default dtype (NumPy's would be float64).
    cdef bint na = type(a) is float or type(a) is int or type(a) is bool
    cdef bint nb = type(b) is float or type(b) is int or type(b) is bool
    if na and nb:
        if type(a) is float or type(b) is float:
            return np.where(condition, a, b).astype(k_default_float(), copy=False)
    elif _is_bf16(a) or _is_bf16(b):
        if na:
            a = np.asarray(a, dtype=b.dtype)
        elif nb:
            b = np.asarray(b, dtype=a.dtype)
    return np.where(condition, a, b)


cdef object _raise_dtype_error(object exc, str op, object a):
    # A NumPy ufunc without a loop for the input's dtype (or NumPy's refusal of
    # `-` on bools) is torch's NotImplementedError ("trunc" not implemented
    # for complex); never NumPy's "ufunc ... not supported for the input types".
    msg = str(exc)
    if op == "sub" and "numpy boolean subtract" in msg:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                           "`^` or `logical_xor()` operator instead.") from None
    if ("not supported for the input types" in msg or "did not contain a loop" in msg
            or "numpy boolean" in msg):
        dt = a.dtype if hasattr(a, "dtype") else np.result_type(a)
        raise NotImplementedError(f"\"{op}\" is not implemented for {dt} tensors; convert the input with "
                                  f".double() (or .to(the dtype you need)) first") from None


cdef object _raise_shape_error(object exc):
    # The generated ops with several tensor inputs call this on a kernel's
    # ValueError: NumPy's "could not be broadcast" is torch's RuntimeError
    # (the exception type torch raises). Other ValueErrors propagate.
    if "broadcast" in str(exc):
        raise RuntimeError(f"{exc}: the shapes must be broadcastable (as in torch)") from None


cdef object k_getitem(object a, object index):
    if _is_cupy(a):
        return a[_device_index(_unwrap_index(index), a)]
    try:
        index = _unwrap_index(index)
        r = a[index]
        if type(r) is not ndarray:
            # A basic index down to one element gives NumPy a scalar: a copy,
            # so a write through it (y[1].mul_(3)) would be lost. torch gives
            # a 0-d view; NumPy does too once the index holds an Ellipsis.
            r = a[(index if type(index) is tuple else (index,)) + (Ellipsis,)]
        elif not r.flags.c_contiguous and not _is_basic_index(index):
            # advanced indexing after a slice (x[:, idx]) leaves NumPy's result
            # transposed in memory; torch's copy is laid out in C order, which
            # .view() relies on
            r = np.ascontiguousarray(r)
        return r
    except OverflowError:
        raise _index_overflow(index) from None
    except IndexError as exc:
        # NumPy wraps index values beyond int64 (2**63 becomes -2**63): refuse
        # them as torch does instead of reporting a wrapped, wrong index
        if _has_huge_index(index):
            raise _index_overflow(index) from None
        raise exc


cdef object _index_overflow(object index):
    return ValueError(f"Overflow when unpacking long long: index {index!r} does not fit in int64; "
                      "indices must lie in [-2**63, 2**63 - 1]")


cdef bint _has_huge_index(object index):
    items = index if isinstance(index, tuple) else (index,)
    for i in items:
        if isinstance(i, list):
            if _has_huge_index(tuple(i)):
                return True
        elif type(i) is int and not (-(1 << 63) <= i < (1 << 63)):
            return True
        elif type(i) is ndarray and i.dtype == np.uint64 and i.size and i.max() >= (1 << 63):
            return True
    return False


cdef object k_index_backward(object g, object shape, object dtype, object index):
    # zeros on g's device: np.zeros_like dispatches to CuPy for a cupy g
    z = _xp(g).zeros(shape, dtype=dtype)
    _add_at(z, _unwrap_index(index), g)
    return z


cdef object _add_at(object z, object index, object g):
    # Basic indexing never repeats an element: plain assignment-add is exact.
    # Advanced (integer array) indices may repeat: np.add.at accumulates them.
    if _is_basic_index(index):
        z[index] += g
    else:
        _accumulate(z, index, g)


cdef bint _is_basic_index(object index):
    if isinstance(index, tuple):
        for i in index:
            if not (i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer))):
                return False
        return True
    return index is None or index is Ellipsis or isinstance(index, (int, slice, np.integer))


cdef object k_to_dtype(object a, object dtype):
    return a.astype(dtype)


cdef object k_clone(object a):
    return a.copy()


cdef object _cupy_add_at(object z, object index, object g):
    # np.add.at for CuPy arrays: cupy.add.at (cupyx.scatter_add before it)
    at = getattr(_cupy.add, "at", None)
    if at is not None:
        at(z, index, g)
    else:
        import cupyx
        cupyx.scatter_add(z, index, g)


cdef object _accumulate(object z, object index, object g):
    # z[index] += g where `index` (advanced) may repeat positions: np.add.at's
    # semantics, without its cost (np.add.at is ~10-50x slower than the
    # vectorized paths below).
    if _is_cupy(z):                     # CuPy has no ufunc.at: its scatter_add
        _cupy_add_at(z, _device_index(index, z), g)
        return
    if type(z) is not ndarray or z.size == 0:
        np.add.at(z, index, g)
        return
    comps = index if isinstance(index, tuple) else (index,)
    adv = []
    for i, c in enumerate(comps):
        if not (c is None or c is Ellipsis or isinstance(c, (int, slice, np.integer))):
            adv.append(i)
    # Boolean masks select each position at most once: plain += is exact.
    if _bi.all(isinstance(comps[i], ndarray) and comps[i].dtype == np.bool_ for i in adv):
        z[index] += g
        return
    # One integer array on one axis, every other component a full slice:
    # sort the positions and sum runs of equal ones (a segment sum).
    if len(adv) == 1 and z.dtype.kind in "fc":
        full = True
        for i, c in enumerate(comps):
            if i != adv[0] and not (c is Ellipsis or (isinstance(c, slice) and c == slice(None))):
                full = False
        if full and _bi.sum(1 for c in comps if c is Ellipsis) <= 1:
            k = adv[0]
            if Ellipsis in comps[:k]:
                k += z.ndim - len(comps)          # the dims the Ellipsis stands for, minus itself
            arr = np.asarray(comps[adv[0]])
            if arr.dtype.kind in "iu":
                _segment_add(z, k, arr, g)
                return
    # Integer arrays on the leading dims (x[rows, cols], as in picking the
    # target logits): their flat positions are one integer array on one axis.
    if len(adv) == len(comps) > 1 and z.dtype.kind in "fc" and z.flags.c_contiguous:
        arrs = [np.asarray(c) for c in comps]
        if _bi.all(a.dtype.kind in "iu" for a in arrs):
            lead = z.shape[:len(arrs)]
            arrs = [np.where(a < 0, a + lead[i], a) for i, a in enumerate(arrs)]
            lin = np.ravel_multi_index(tuple(np.broadcast_arrays(*arrs)), lead)
            _segment_add(z.reshape((-1,) + z.shape[len(arrs):]), 0, lin, g)
            return
    # Any other index with integer arrays (x[i, :, j], x[:, i, j], x[0, ..., i],
    # x[i, 1:3]): index z's flat positions the same way, then one bincount.
    # Its cost grows with z's size: a few picks out of a huge z stay with
    # np.add.at, whose cost grows with the picks only.
    if z.dtype.kind == "f" and z.flags.c_contiguous and z.size <= 16 * np.size(g) + 65536:
        pos = np.arange(z.size, dtype=np.int32 if z.size < 2 ** 31 else np.intp).reshape(z.shape)[index]
        if pos.size:
            w = np.broadcast_to(g, pos.shape).astype(np.float64, copy=False)
            zf = z.reshape(-1)                             # a view: z is contiguous
            zf += np.bincount(pos.ravel(), weights=w.ravel(), minlength=z.size)
        return
    np.add.at(z, index, g)


cdef void _segment_add(object z, int k, object arr, object g):
    # z[(:,)*k + (arr,)] += g, repeats accumulated. No repeats (a
    # permutation: roll, pad): a plain fancy +=. Repeats: one np.bincount over
    # (position, column) pairs, ~2x faster than np.add.at on large inputs;
    # small ones stay with np.add.at (its fixed cost is lower).
    cdef Py_ssize_t n = z.shape[k], r = 1
    flat = arr.ravel().astype(np.intp, copy=False)
    if flat.size == 0:
        return
    flat = np.where(flat < 0, flat + n, flat)
    rest = z.shape[:k] + z.shape[k + 1:]
    for s in rest:
        r *= s
    if k == z.ndim - 1 and 1 < r <= 1024 and flat.size * r > 65536 and z.dtype.kind == "f" \
            and z.flags.c_contiguous and np.bincount(flat, minlength=n).max() > 1:
        # x[:, idx] / x[..., idx] with repeats: one bincount per leading row,
        # on g's contiguous rows (no moved copy of g, no (position, column)
        # index array r times the size of idx)
        g2 = np.broadcast_to(g, z.shape[:k] + arr.shape).reshape(r, flat.size)
        z2 = z.reshape(r, n)                           # a view: z is contiguous
        for p in range(r):
            z2[p] += np.bincount(flat, weights=g2[p], minlength=n)
        return
    g = np.broadcast_to(g, z.shape[:k] + arr.shape + z.shape[k + 1:])
    gm = np.moveaxis(g, tuple(range(k, k + arr.ndim)), tuple(range(arr.ndim))).reshape((flat.size,) + rest)
    zm = np.moveaxis(z, k, 0)                          # a view: writes land in z
    if np.bincount(flat, minlength=n).max() <= 1:
        zm[flat] += gm
    elif z.dtype.kind == "f" and flat.size * r > 65536:
        lin = flat if r == 1 else (flat[:, None] * r + np.arange(r)).ravel()
        acc = np.bincount(lin, weights=gm.reshape(-1).astype(np.float64, copy=False), minlength=n * r)
        zm += acc.reshape(zm.shape)
    else:
        np.add.at(zm, flat, gm)


cdef object k_t(object a):
    # torch.t: the transpose of a matrix; 0-d and 1-d tensors are returned
    # as they are (a view); more dims raise, as torch (use transpose/mT)
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D; use "
                           "transpose(dim0, dim1) or .mT for batches of matrices")
    return a.T
