# Kernels for in-place on views, __setitem__, shape and indexing ops. Part
# of abi.pyx, after _kernels_core.pxi.

from retrograd.core._array_module cimport _arr, _contig, _device_index, _is_cupy, _xp, _cupy
from retrograd.core._arg_checks cimport _wrap_dim, _int_arg

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
    cdef int d = _wrap_dim(dim, np.ndim(arrs[0]))
    try:
        return np.concatenate(arrs, axis=d)
    except ValueError as exc:
        raise RuntimeError(f"cat(): Sizes of tensors must match except in dimension {d}: {exc}. "
                           "Reshape or pad the inputs first.") from None


cdef object k_stack(list arrs, object dim):
    shape0 = np.shape(arrs[0])
    for i, a in enumerate(arrs):
        if np.shape(a) != shape0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape0)} at "
                               f"entry 0 and {list(np.shape(a))} at entry {i}")
    cdef int d = _wrap_dim(dim, len(shape0) + 1)
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


cdef object k_to_device(object a, object device):
    # A copy of `a` on `device`: host <-> GPU and GPU <-> GPU through CuPy,
    # and a plain copy between the host's (virtual) CPU devices.
    cdef Device d = _parse_device(device)
    if d.type == RG_DEV_CUDA:
        if _cupy is None:
            raise RuntimeError(f"cannot move a tensor to {d}: CUDA tensors need CuPy "
                               "(pip install cupy-cuda12x or the build for your CUDA) and a GPU")
        with _cupy.cuda.Device(d.index if d.index >= 0 else 0):
            return _cupy.array(a, copy=True)
    if _is_cupy(a):
        return a.get()
    return k_clone(a)


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
