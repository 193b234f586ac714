# cython: language_level=3
# retrograd.core._arg_checks: torch's rules for an op's int, dim and
# operand arguments (declared in _arg_checks.pxd). Every refusal raises
# torch's class with torch's words: an int argument that is a float or a
# bool is a TypeError (int() would silently truncate 1.5 to 1), one beyond
# int64 a ValueError, a dim out of range an IndexError.
#
# Arrays and Python values only, except that an int argument may also be a
# one-element integer Tensor, as in torch (the Tensor type is abi.pxd's).

import operator as _operator

import numpy as np
from numpy import ndarray
from retrograd.core.abi cimport Tensor


cdef int _wrap_dim(object dim, int ndim) except? -1:
    cdef long long d
    cdef int n = ndim if ndim > 0 else 1
    if type(dim) is not int:
        # C's int conversion would truncate 1.5 to 1: refuse what torch refuses
        dim = _int_arg(dim, "dim")
    try:
        d = dim
    except OverflowError:
        raise _overflow_error(dim) from None
    if d < -n or d >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return <int>(d + n if d < 0 else d)


cdef object _int_arg(object v, str arg, str fn=None):
    # torch's int arguments (dims, sizes, diagonals, chunk counts): Python
    # ints, NumPy integers and one-element integer tensors. int(v) would
    # silently truncate a float (sum(x, dim=1.5) reducing dim 1), so floats,
    # bools, None and strings raise TypeError as torch's argument parser does.
    if type(v) is int:
        if not (-(1 << 63) <= v < (1 << 63)):
            raise _overflow_error(v)
        return v
    where = f"{fn}(): argument '{arg}'" if fn else f"argument '{arg}'"
    if isinstance(v, Tensor):
        if (<Tensor>v)._array.dtype.kind in "iu" and (<Tensor>v)._array.size == 1:
            return int((<Tensor>v)._array.item())
        raise TypeError(f"{where} must be int, not a {(<Tensor>v)._array.dtype} tensor of shape "
                        f"{list((<Tensor>v)._array.shape)}; pass a Python int")
    if isinstance(v, (bool, np.bool_)) or not hasattr(type(v), "__index__"):
        raise TypeError(f"{where} must be int, not {_type_name(v)}" +
                        ("; round it explicitly, e.g. int(x)" if isinstance(v, (float, np.floating)) else ""))
    v = _operator.index(v)
    if not (-(1 << 63) <= v < (1 << 63)):
        raise _overflow_error(v)
    return v


cdef object _check_int_list(object seq, str arg, str fn):
    # A tuple of ints (sizes, dims): each element an int (TypeError for
    # floats, strings, None), and within int64 (torch's TypeError "failed to
    # unpack" for the rest). A loop of C type checks: nothing for plain ints.
    if not isinstance(seq, (tuple, list)):
        return
    for i, v in enumerate(seq):
        if type(v) is int:
            if -(1 << 63) <= v < (1 << 63):
                continue
            raise TypeError(f"{fn + '(): ' if fn else ''}argument '{arg}' failed to unpack the object at pos "
                            f"{i}: {v} does not fit in a 64-bit integer")
        if type(v) is bool or not hasattr(type(v), "__index__"):
            if isinstance(v, Tensor) and (<Tensor>v)._array.dtype.kind in "iu" and (<Tensor>v)._array.size == 1:
                continue
            raise TypeError(f"{fn + '(): ' if fn else ''}argument '{arg}' must be a tuple of ints, but found "
                            f"element of type {_type_name(v)} at pos {i}")


cdef object _bool_arg(object v, str arg, str fn):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise TypeError(f"{fn}(): argument '{arg}' must be bool, not {_type_name(v)}")


cdef object _overflow_error(object v):
    # torch's class and words for an int argument beyond int64
    return ValueError(f"Overflow when unpacking long long: {v} does not fit in a 64-bit integer")


cdef str _type_name(object v):
    t = type(v)
    m = t.__module__
    return t.__name__ if m in ("builtins", None) else f"{m}.{t.__name__}"


cdef object _norm_dims(object dim, int ndim):
    # torch's dim argument (None, int, or a sequence) as a NumPy axis.
    # A 0-d tensor accepts dim 0 / -1 (torch's rule); NumPy has no axis there.
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        seen = set()
        _check_int_list(dim, "dim", None)
        for d in dim:
            w = _wrap_dim(d, ndim)
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
        return None if ndim == 0 else tuple(sorted(seen))
    d = _wrap_dim(dim, ndim)
    return None if ndim == 0 else d


cdef object _unwrap_index(object index):
    # Tensors inside an index act as their arrays (advanced indexing).
    if isinstance(index, Tensor):
        return (<Tensor>index)._array
    if isinstance(index, tuple):
        return tuple((<Tensor>i)._array if isinstance(i, Tensor) else i for i in index)
    if type(index) is list and _list_is_tuple_index(<list>index):
        return tuple((<Tensor>i)._array if isinstance(i, Tensor) else i for i in index)
    return index


cdef bint _list_is_tuple_index(list index):
    # torch (and NumPy before 1.23) reads a short list holding a sequence, a
    # tensor, a slice, None or Ellipsis as a tuple of indices: x[[[0, 1], [1, 0]]]
    # is x[[0, 1], [1, 0]]. A list of plain integers stays one index array.
    if len(index) >= 32:
        return False
    for i in index:
        if (isinstance(i, (Tensor, list, tuple, slice, ndarray)) or i is None or i is Ellipsis):
            return True
    return False
