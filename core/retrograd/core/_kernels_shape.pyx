# cython: language_level=3
# retrograd.core._kernels_shape: the kernels of the shape and indexing ops
# (as_strided and view scatter, index_put, cat, stack, diagonal, gather,
# scatter_add), declared in _kernels_shape.pxd. Arrays in, arrays out.

import builtins as _bi

cimport numpy as _cnp
import numpy as np
from numpy import ndarray
from retrograd.core._array_module cimport _arr, _contig, _device_index, _is_cupy, _xp, _ensure_array
from retrograd.core._arg_checks cimport _wrap_dim, _int_arg, _unwrap_index
from retrograd.core._kernels_core cimport _cupy_add_at

_cnp.import_array()


# --- in-place on views and __setitem__ (see _copy_slices.pxi) ---

cdef object _strided_region(object a, object offset, object shape, object strides):
    # The region of C-contiguous `a` that a view with this geometry covers.
    return _xp(a).lib.stride_tricks.as_strided(a.reshape(-1)[offset:], shape, strides)


cdef object k_view_scatter(object base, object src, object offset, object shape, object strides):
    out = _xp(base).array(base, copy=True, order="C")
    _strided_region(out, offset, shape, strides)[...] = src
    return out


cdef object k_as_strided(object a, object offset, object shape, object strides):
    return _strided_region(_contig(a), offset, shape, strides)


cdef object k_index_put(object a, object index, object values):
    out = _xp(a).array(a, copy=True)
    out[_device_index(_unwrap_index(index), a)] = values
    return out


# --- shape and indexing ---
# Python's builtins by their full name: the table's ops (sum, max, min, abs,
# round, ...) are module-level functions of this module and shadow them.
import builtins as _bi

cdef object k_cat(list arrs, object dim):
    if type(dim) is not int:
        dim = _int_arg(dim, "dim", "cat")
    for i, a in enumerate(arrs):
        if np.ndim(a) == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [a for a in arrs if not _legacy_empty(a)]
    if kept and len(kept) < len(arrs):
        # torch skips 1-d empty tensors beside tensors of other ranks (the
        # legacy empty tensor); they still take part in the dtype
        dtype = np.result_type(*arrs)
        arrs = [a if a.dtype == dtype else a.astype(dtype) for a in kept]
    cdef int d = _wrap_dim(dim, np.ndim(arrs[0]))
    try:
        return np.concatenate(arrs, axis=d)
    except ValueError as exc:
        raise RuntimeError(f"cat(): Sizes of tensors must match except in dimension {d}: {exc}. "
                           "Reshape or pad the inputs first.") from None


cdef bint _legacy_empty(object a):
    return np.ndim(a) == 1 and np.shape(a)[0] == 0


cdef object k_stack(list arrs, object dim):
    shape0 = np.shape(arrs[0])
    cdef int d = _wrap_dim(dim, len(shape0) + 1)       # torch checks the dim first
    for i, a in enumerate(arrs):
        if np.shape(a) != shape0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape0)} at "
                               f"entry 0 and {list(np.shape(a))} at entry {i}")
    return np.stack(arrs, axis=d)


cdef object k_diagonal(object a, object offset, object dim1, object dim2):
    # A writable view (np.diagonal's is read-only): the diagonal of the two
    # dims moved last, as one axis whose stride is the sum of theirs.
    cdef int nd = np.ndim(a)
    if nd < 2:
        # torch wraps dim1/dim2 (0, 1) first: its IndexError for fewer dims
        raise IndexError(f"Dimension out of range (expected to be in range of [{-_bi.max(nd, 1)}, "
                         f"{_bi.max(nd, 1) - 1}], but got 1): diagonal() needs a tensor with at least 2 "
                         f"dimensions, got {nd}")
    cdef int d1 = _wrap_dim(dim1, nd), d2 = _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    cdef Py_ssize_t off = _int_arg(offset, "offset", "diagonal")
    b = np.moveaxis(a, (d1, d2), (-2, -1))
    b = b[..., :, off:] if off >= 0 else b[..., -off:, :]
    n = _bi.max(_bi.min(b.shape[-2], b.shape[-1]), 0)
    return _xp(b).lib.stride_tricks.as_strided(
        b, b.shape[:-2] + (n,), b.strides[:-2] + (b.strides[-2] + b.strides[-1],))


cdef object k_diagonal_backward(object g, object shape, object dtype, object offset, object dim1,
                                object dim2):
    z = _xp(g).zeros(shape, dtype=dtype)
    k_diagonal(z, offset, dim1, dim2)[...] = g
    return z


cdef tuple _scatter_coords(object index, int d):
    # The full coordinates of each position of `index` along dim d (the
    # index's values) and the other dims (their positions): an advanced index.
    cdef int nd = index.ndim
    xp = _xp(index)
    coords = []
    for i in range(nd):
        if i == d:
            coords.append(index)
        else:
            sh = [1] * nd
            sh[i] = index.shape[i]
            coords.append(xp.arange(index.shape[i]).reshape(sh))
    return tuple(coords)


cdef object _check_gather_index(str op, object a, object index, int d, object other=None):
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")
    cdef int nd = np.ndim(a)
    if index.ndim != _bi.max(nd, 1) and not (nd == 0 and index.ndim == 0):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor "
                           f"({op}: index has {index.ndim}, input {nd})")
    for i in range(index.ndim):
        if nd and i != d and index.shape[i] > a.shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} "
                               f"to be smaller than self {list(a.shape)} apart from dimension {d}")
        if other is not None and index.shape[i] > np.shape(other)[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} "
                               f"to be smaller than src {list(np.shape(other))}")
    if index.size and nd:
        lo, hi = index.min(), index.max()
        if lo < 0 or hi >= a.shape[d]:      # torch: no negative (wrapping) indices
            raise RuntimeError(f"{op}(): index {hi if hi >= a.shape[d] else lo} is out of bounds for "
                               f"dimension {d} with size {a.shape[d]}")


cdef object k_gather(object a, object dim, object index):
    index = _ensure_array(np.asarray(index)) if not hasattr(index, "ndim") else index
    cdef int nd = np.ndim(a)
    cdef int d = _wrap_dim(dim, nd)
    _check_gather_index("gather", a, index, d)
    if nd == 0:
        return _arr(a)[()] * _xp(index).ones(index.shape, dtype=np.result_type(a))
    return a[_scatter_coords(index, d)]


cdef object k_scatter_add(object a, object dim, object index, object src):
    index = _ensure_array(np.asarray(index)) if not hasattr(index, "ndim") else index
    cdef int nd = np.ndim(a)
    cdef int d = _wrap_dim(dim, nd)
    _check_gather_index("scatter_add", a, index, d, src if np.ndim(src) else None)
    out = _xp(a).array(a, copy=True, dtype=np.result_type(a)) if type(a) is not ndarray or nd == 0 \
        else a.copy()
    if index.size == 0 or nd == 0:
        return out
    part = src[tuple(slice(0, s) for s in index.shape)] if np.ndim(src) else \
        np.broadcast_to(src, index.shape)
    coords = _scatter_coords(index, d)
    if type(out) is ndarray and out.dtype.kind == "f":
        # np.add.at is slow; the flat positions and one bincount are not.
        # `out` is a fresh copy: a pass over all of it costs no more.
        coords = tuple(np.where(c < 0, c + a.shape[i], c) if i == d else c
                       for i, c in enumerate(coords))
        lin = np.ravel_multi_index(np.broadcast_arrays(*coords), out.shape).ravel()
        flat = out.reshape(-1)
        flat += np.bincount(lin, weights=np.asarray(part, dtype=np.float64).ravel(),
                            minlength=out.size)
        return out
    if _is_cupy(out):
        _cupy_add_at(out, coords, part)
        return out
    np.add.at(out, coords, part)
    return out
