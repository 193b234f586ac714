"""torch's shape, stacking and indexing functions that NumPy users know
(hstack, atleast_2d, tensor_split, rot90, kron, meshgrid, diag, trace,
take, masked_select, repeat_interleave, index_add, cummax, ...), written
over the table's ops so that their gradients come from those ops; the index
builders (tril_indices, argwhere, bucketize, bincount, ...) compute on the
arrays and return tensors that never require grad, as torch's.
"""
from __future__ import annotations

import builtins
import itertools
from collections import namedtuple

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core import _creation
from retrograd.core._dtypes import _no_bfloat16_kernel
from retrograd.core.abi import Tensor, composite_op

__all__ = [
    "ravel", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack", "dstack",
    "column_stack", "tensor_split", "hsplit", "vsplit", "dsplit", "fliplr", "flipud", "rot90", "diag",
    "diagflat", "diag_embed", "trace", "kron", "take", "masked_select", "repeat_interleave", "meshgrid",
    "cartesian_prod", "combinations", "broadcast_tensors", "block_diag", "tril_indices", "triu_indices",
    "logspace", "vander", "cummax", "cummin", "logcumsumexp", "index_add", "index_copy", "index_fill",
    "diff", "msort", "inner", "mv", "cdist", "gradient",
]


def _t(x, fn: str, arg: str = "input") -> Tensor:
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _const(like: Tensor, arr) -> Tensor:
    return _creation._make(arr, like.device, False)


def _seq(tensors, fn: str) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{fn}(): argument 'tensors' must be a tuple or list of Tensors, not Tensor")
    return [_t(x, fn, "tensors") for x in tensors]


def _doc(summary: str, params: str, returns: str, example: str, body: str = "") -> str:
    body = f"\n\n    {body}" if body else ""
    return (f"{summary}{body}\n\n    Parameters\n    ----------\n{params}\n\n    Returns\n    -------\n"
            f"    {returns}\n\n    Examples\n    --------\n    >>> import retrograd as rg\n    {example}\n    ")


_IN = "    input : Tensor\n        The input."
_TS = "    tensors : sequence of Tensor\n        The tensors."


@composite_op("ravel")
def ravel(input) -> Tensor:
    return _abi.reshape(_t(input, "ravel"), (-1,))


ravel.__doc__ = _doc("The elements in one dimension (a view when the layout allows).", _IN, "Tensor",
                     ">>> rg.ravel(rg.tensor([[1, 2], [3, 4]]))\n    tensor([1, 2, 3, 4])")


def _atleast(n: int):
    name = f"atleast_{n}d"

    @composite_op(name)
    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(fn(t) for t in tensors[0])
        if len(tensors) != 1:
            return tuple(fn(t) for t in tensors)
        x = _t(tensors[0], name)
        if x.ndim >= n:
            return x
        shape = {1: [1], 2: [1, 1], 3: [1, 1, 1]}[n]
        if x.ndim == 1:
            shape = {1: list(x.shape), 2: [1, x.shape[0]], 3: [1, x.shape[0], 1]}[n]
        elif x.ndim == 2:
            shape = [x.shape[0], x.shape[1], 1]
        return _abi.reshape(x, tuple(shape))
    fn.__name__ = fn.__qualname__ = name
    example = {1: ">>> rg.atleast_1d(rg.tensor(1.0))\n    tensor([1.])",
               2: ">>> rg.atleast_2d(rg.tensor([1.0, 2.0]))\n    tensor([[1., 2.]])",
               3: ">>> rg.atleast_3d(rg.tensor([1.0, 2.0])).shape\n    (1, 2, 1)"}[n]
    fn.__doc__ = _doc(f"The input viewed with at least {n} dimensions (NumPy's rules for where they go).",
                      "    *tensors : Tensor or sequence of Tensor\n        One or several tensors.",
                      "Tensor or tuple of Tensor", example)
    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


@composite_op("hstack")
def hstack(tensors) -> Tensor:
    ts = atleast_1d(_seq(tensors, "hstack"))
    return _abi.cat(list(ts), 0 if ts[0].ndim == 1 else 1)


@composite_op("vstack")
def vstack(tensors) -> Tensor:
    return _abi.cat(list(atleast_2d(_seq(tensors, "vstack"))), 0)


row_stack = vstack


@composite_op("dstack")
def dstack(tensors) -> Tensor:
    return _abi.cat(list(atleast_3d(_seq(tensors, "dstack"))), 2)


@composite_op("column_stack")
def column_stack(tensors) -> Tensor:
    ts = [_abi.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in _seq(tensors, "column_stack")]
    return _abi.cat(ts, 1)


_STACK = "Tensor"
hstack.__doc__ = _doc("Concatenate along the columns (the first dimension of 1-d tensors).", _TS, _STACK,
                      ">>> rg.hstack([rg.tensor([1, 2]), rg.tensor([3])])\n    tensor([1, 2, 3])")
vstack.__doc__ = _doc("Concatenate along the rows, 1-d tensors becoming rows.", _TS, _STACK,
                      ">>> rg.vstack([rg.tensor([1, 2]), rg.tensor([3, 4])])\n    tensor([[1, 2],\n"
                      "            [3, 4]])")
dstack.__doc__ = _doc("Concatenate along the third dimension (depth).", _TS, _STACK,
                      ">>> rg.dstack([rg.tensor([1, 2]), rg.tensor([3, 4])]).shape\n    (1, 2, 2)")
column_stack.__doc__ = _doc("Stack 1-d tensors as columns (and concatenate 2-d ones along columns).", _TS, _STACK,
                            ">>> rg.column_stack([rg.tensor([1, 2]), rg.tensor([3, 4])])\n"
                            "    tensor([[1, 3],\n            [2, 4]])")


@composite_op("tensor_split")
def tensor_split(input, indices_or_sections, dim=0) -> tuple:
    x = _t(input, "tensor_split")
    d = dim % max(x.ndim, 1)
    n = x.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = list(itertools.accumulate([q + 1] * r + [q] * (k - r)))[:-1]
    else:
        bounds = list(indices_or_sections)
    out, start = [], 0
    for b in bounds + [n]:
        b = min(max(b + n if b < 0 else b, start), n)
        out.append(_abi.narrow(x, d, start, b - start))
        start = b
    return tuple(out)


tensor_split.__doc__ = _doc(
    "Split into ``n`` nearly equal parts, or at the given indices, along ``dim`` (views).",
    _IN + "\n    indices_or_sections : int or sequence of int\n        A number of parts, or the split "
    "indices.\n    dim : int, optional\n        The dimension (default 0).", "tuple of Tensor",
    ">>> rg.tensor_split(rg.arange(5), 2)\n    (tensor([0, 1, 2]), tensor([3, 4]))",
    "The first ``n % parts`` parts get one element more, as NumPy's ``array_split``.")


def _xsplit(name: str, dim: int, min_dim: int):
    @composite_op(name)
    def fn(input, indices_or_sections):
        x = _t(input, name)
        if x.ndim < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got "
                               f"a tensor with {x.ndim} dimensions!")
        d = 0 if name == "hsplit" and x.ndim == 1 else dim
        if isinstance(indices_or_sections, int) and x.shape[d] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                               f"dimension {x.shape[d]} is not divisible by the split_size "
                               f"{indices_or_sections}!")
        return tensor_split(x, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(f"Split along dimension {dim} into equal parts or at indices (NumPy's ``{name}``).",
                      _IN + "\n    indices_or_sections : int or sequence of int\n        The number of equal "
                      "parts, or the split indices.", "tuple of Tensor",
                      f">>> [t.shape for t in rg.{name}(rg.zeros(4, 4, 4), 2)]\n    "
                      f"[{', '.join([str(tuple(2 if i == dim else 4 for i in builtins.range(3)))] * 2)}]")
    return fn


hsplit, vsplit, dsplit = _xsplit("hsplit", 1, 1), _xsplit("vsplit", 0, 2), _xsplit("dsplit", 2, 3)


@composite_op("fliplr")
def fliplr(input) -> Tensor:
    x = _t(input, "fliplr")
    if x.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _abi.flip(x, (1,))


@composite_op("flipud")
def flipud(input) -> Tensor:
    x = _t(input, "flipud")
    if x.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _abi.flip(x, (0,))


fliplr.__doc__ = _doc("Reverse the order of the columns (dimension 1).", _IN, "Tensor",
                      ">>> rg.fliplr(rg.tensor([[1, 2], [3, 4]]))\n    tensor([[2, 1],\n            [4, 3]])")
flipud.__doc__ = _doc("Reverse the order of the rows (dimension 0).", _IN, "Tensor",
                      ">>> rg.flipud(rg.tensor([[1, 2], [3, 4]]))\n    tensor([[3, 4],\n            [1, 2]])")


@composite_op("rot90")
def rot90(input, k=1, dims=(0, 1)) -> Tensor:
    x = _t(input, "rot90")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    a, b = dims[0] % x.ndim, dims[1] % x.ndim
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")
    k %= 4
    if k == 1:
        return _abi.transpose(_abi.flip(x, (b,)), a, b)
    if k == 2:
        return _abi.flip(x, (a, b))
    if k == 3:
        return _abi.flip(_abi.transpose(x, a, b), (b,))
    return x.clone()


rot90.__doc__ = _doc("Rotate by ``90 * k`` degrees in the plane of ``dims`` (from the first toward the second).",
                     _IN + "\n    k : int, optional\n        The number of quarter turns (default 1).\n"
                     "    dims : pair of int, optional\n        The plane (default (0, 1)).", "Tensor",
                     ">>> rg.rot90(rg.tensor([[1, 2], [3, 4]]))\n    tensor([[2, 4],\n            [1, 3]])")


@composite_op("diag_embed")
def diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor:
    x = _t(input, "diag_embed")
    n = x.shape[-1] + abs(offset)
    nd = x.ndim + 1
    d1, d2 = dim1 % nd, dim2 % nd
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    # scatter the last dim onto the diagonal of a new (.., n, n), then move the two dims
    rows = np.arange(x.shape[-1]) + max(-offset, 0)
    cols = np.arange(x.shape[-1]) + max(offset, 0)
    eye = np.zeros((x.shape[-1], n, n), dtype=x._array.dtype)
    eye[np.arange(x.shape[-1]), rows, cols] = 1
    out = _abi.matmul(_abi.unsqueeze(x, -2), _abi.reshape(_const(x, eye), (x.shape[-1], n * n)))
    out = _abi.reshape(out, tuple(x.shape[:-1]) + (n, n))
    return _abi.movedim(out, (nd - 2, nd - 1), (min(d1, d2), max(d1, d2))) if d1 < d2 else \
        _abi.movedim(out, (nd - 1, nd - 2), (d2, d1))


diag_embed.__doc__ = _doc("Matrices whose ``offset``-th diagonals hold the last dimension of ``input``.",
                          _IN + "\n    offset : int, optional\n        Which diagonal (default 0).\n"
                          "    dim1, dim2 : int, optional\n        Where the two new dimensions go (default -2, -1).",
                          "Tensor", ">>> rg.diag_embed(rg.tensor([1.0, 2.0]))\n    tensor([[1., 0.],\n"
                          "            [0., 2.]])")


@composite_op("diag")
def diag(input, diagonal=0) -> Tensor:
    x = _t(input, "diag")
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim == 2:
        return _abi.diagonal(x, diagonal, 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


@composite_op("diagflat")
def diagflat(input, offset=0) -> Tensor:
    return diag_embed(ravel(_t(input, "diagflat")), offset)


@composite_op("trace")
def trace(input) -> Tensor:
    x = _t(input, "trace")
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    return _abi.sum(_abi.diagonal(x, 0, 0, 1))


_DIAG = "    diagonal : int, optional\n        Which diagonal: 0 the main one, positive above, negative below."
diag.__doc__ = _doc("A 1-d tensor's values on a matrix diagonal, or a matrix's diagonal as a 1-d tensor.",
                    _IN + "\n" + _DIAG, "Tensor",
                    ">>> rg.diag(rg.tensor([[1, 2], [3, 4]]))\n    tensor([1, 4])")
diagflat.__doc__ = _doc("A matrix with the flattened input on its ``offset``-th diagonal.",
                        _IN + "\n    offset : int, optional\n        Which diagonal (default 0).", "Tensor",
                        ">>> rg.diagflat(rg.tensor([[1.0], [2.0]]))\n    tensor([[1., 0.],\n            [0., 2.]])")
trace.__doc__ = _doc("The sum of a matrix's main diagonal.", "    input : Tensor\n        A 2-d tensor.", "Tensor",
                     ">>> rg.trace(rg.tensor([[1.0, 2.0], [3.0, 4.0]]))\n    tensor(5.)")


@composite_op("kron")
def kron(input, other) -> Tensor:
    a, b = _t(input, "kron"), _t(other, "kron", "other")
    nd = max(a.ndim, b.ndim)
    a = _abi.reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    b = _abi.reshape(b, (1,) * (nd - b.ndim) + tuple(b.shape))
    # a[i, None, j, None] * b[None, k, None, l], then merge each pair
    ia = tuple(v for s in a.shape for v in (s, 1))
    ib = tuple(v for s in b.shape for v in (1, s))
    out = _abi.reshape(a, ia) * _abi.reshape(b, ib)
    return _abi.reshape(out, tuple(sa * sb for sa, sb in zip(a.shape, b.shape)))


kron.__doc__ = _doc("The Kronecker product of two tensors.",
                    "    input, other : Tensor\n        The factors.", "Tensor",
                    ">>> rg.kron(rg.tensor([1, 2]), rg.tensor([1, 10]))\n    tensor([ 1, 10,  2, 20])")


@composite_op("take")
def take(input, index) -> Tensor:
    x = _t(input, "take")
    return _abi.getitem(ravel(x), _t(index, "take", "index"))


@composite_op("masked_select")
def masked_select(input, mask) -> Tensor:
    x = _t(input, "masked_select")
    m = _t(mask, "masked_select", "mask")
    if m._array.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {m._array.dtype}")
    shape = np.broadcast_shapes(tuple(x.shape), tuple(m.shape))
    return _abi.getitem(_abi.expand(x, shape), _abi.expand(m, shape))


take.__doc__ = _doc("The elements at the given indices of the flattened input.",
                    _IN + "\n    index : Tensor\n        int64 indices into ``input.ravel()``.", "Tensor",
                    ">>> rg.take(rg.tensor([[1, 2], [3, 4]]), rg.tensor([0, 3]))\n    tensor([1, 4])")
masked_select.__doc__ = _doc("The elements where ``mask`` is True, as a 1-d tensor.",
                             _IN + "\n    mask : Tensor\n        A bool tensor broadcast against ``input``.",
                             "Tensor", ">>> x = rg.tensor([1.0, -2.0, 3.0])\n    >>> rg.masked_select(x, x > 0)\n"
                             "    tensor([1., 3.])")


@composite_op("repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:
    if repeats is None:             # torch.repeat_interleave(repeats)
        r = _t(input, "repeat_interleave")
        return _const(r, np.repeat(np.arange(r.shape[0]), np.asarray(r._array)))
    x = _t(input, "repeat_interleave")
    if dim is None:
        x, dim = ravel(x), 0
    d = dim % max(x.ndim, 1)
    reps = repeats._array if isinstance(repeats, Tensor) else repeats
    idx = np.repeat(np.arange(x.shape[d]), np.asarray(reps))
    return _abi.index_select(x, d, _const(x, idx.astype(np.int64)))


repeat_interleave.__doc__ = _doc("Repeat each element (or slice along ``dim``) ``repeats`` times in place.",
                                 _IN + "\n    repeats : int or Tensor\n        How often each is repeated.\n"
                                 "    dim : int, optional\n        The dimension (default: the flattened input).",
                                 "Tensor", ">>> rg.repeat_interleave(rg.tensor([1, 2]), 2)\n    tensor([1, 1, 2, 2])")


@composite_op("meshgrid")
def meshgrid(*tensors, indexing=None) -> tuple:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    ts = _seq(tensors, "meshgrid")
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    shape = tuple(t.numel() for t in ts)
    out = [_abi.expand(_abi.reshape(t, tuple(-1 if j == i else 1 for j in builtins.range(len(ts)))), shape)
           for i, t in enumerate(ts)]
    if indexing == "xy" and len(ts) >= 2:
        # Cartesian indexing: the first two dimensions of the 'ij' grids swapped
        out = [_abi.transpose(o, 0, 1) for o in out]
    return tuple(out)


meshgrid.__doc__ = _doc("Coordinate grids from 1-d tensors (``indexing='ij'`` by default, as torch's).",
                        "    *tensors : Tensor\n        1-d tensors.\n    indexing : {'ij', 'xy'}, optional\n"
                        "        Matrix ('ij') or Cartesian ('xy') indexing.", "tuple of Tensor",
                        ">>> a, b = rg.meshgrid(rg.tensor([1, 2]), rg.tensor([3, 4, 5]))\n    >>> a.shape\n"
                        "    (2, 3)")


@composite_op("cartesian_prod")
def cartesian_prod(*tensors) -> Tensor:
    ts = _seq(tensors, "cartesian_prod")
    if len(ts) == 1:
        return ts[0]
    return _abi.stack([ravel(g) for g in meshgrid(*ts, indexing="ij")], 1)


@composite_op("combinations")
def combinations(input, r=2, with_replacement=False) -> Tensor:
    x = _t(input, "combinations")
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(builtins.range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if idx.shape[0] == 0:
        return _abi.reshape(_abi.getitem(x, slice(0, 0)), (0,) if r == 0 else (0, r))
    return _abi.getitem(x, _const(x, idx))


cartesian_prod.__doc__ = _doc("The Cartesian product of 1-d tensors, one combination per row.",
                              "    *tensors : Tensor\n        1-d tensors.", "Tensor",
                              ">>> rg.cartesian_prod(rg.tensor([1, 2]), rg.tensor([3, 4]))\n"
                              "    tensor([[1, 3],\n            [1, 4],\n            [2, 3],\n            [2, 4]])")
combinations.__doc__ = _doc("The length-``r`` combinations of a 1-d tensor's elements, one per row.",
                            _IN + "\n    r : int, optional\n        The length (default 2).\n"
                            "    with_replacement : bool, optional\n        Allow repeats.", "Tensor",
                            ">>> rg.combinations(rg.tensor([1, 2, 3]))\n    tensor([[1, 2],\n"
                            "            [1, 3],\n            [2, 3]])")


@composite_op("broadcast_tensors")
def broadcast_tensors(*tensors) -> tuple:
    ts = _seq(tensors, "broadcast_tensors")
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in ts))
    return tuple(_abi.expand(t, shape) for t in ts)


broadcast_tensors.__doc__ = _doc("The tensors expanded to their common broadcast shape (views).",
                                 "    *tensors : Tensor\n        The tensors.", "tuple of Tensor",
                                 ">>> [t.shape for t in rg.broadcast_tensors(rg.zeros(2, 1), rg.zeros(3))]\n"
                                 "    [(2, 3), (2, 3)]")


@composite_op("block_diag")
def block_diag(*tensors) -> Tensor:
    ts = [_abi.reshape(t, (1, -1)) if t.ndim < 2 else t for t in _seq(tensors, "block_diag")]
    if not ts:
        return _creation.zeros(1, 0)
    cols = sum(t.shape[1] for t in ts)
    rows, left = [], 0
    for t in ts:
        right = cols - left - t.shape[1]
        rows.append(_abi.pad(t, (left, right, 0, 0)))
        left += t.shape[1]
    return _abi.cat(rows, 0)


block_diag.__doc__ = _doc("A block-diagonal matrix of the given tensors.",
                          "    *tensors : Tensor\n        0-d, 1-d or 2-d tensors.", "Tensor",
                          ">>> rg.block_diag(rg.tensor([[1, 2]]), rg.tensor([[3]]))\n    tensor([[1, 2, 0],\n"
                          "            [0, 0, 3]])")


def _tri_indices(name: str, np_fn):
    def fn(row, col, offset=0, *, dtype=None, device=None, layout=None):
        r, c = np_fn(row, offset, col)
        arr = np.stack([r, c]).astype(np.int64 if dtype is None else np.dtype(dtype))
        return _creation.tensor(arr, device=device)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(f"The indices of the {'lower' if name.startswith('tril') else 'upper'} triangle of a "
                      "``row`` x ``col`` matrix, as a 2 x N tensor.",
                      "    row, col : int\n        The matrix's shape.\n    offset : int, optional\n"
                      "        Which diagonal bounds the triangle (default 0).", "Tensor",
                      f">>> rg.{name}(2, 2)\n    tensor([[0, {'1, 1' if name.startswith('tril') else '0, 1'}],\n"
                      f"            [0, {'0, 1' if name.startswith('tril') else '1, 1'}]])")
    return fn


tril_indices = _tri_indices("tril_indices", np.tril_indices)
triu_indices = _tri_indices("triu_indices", np.triu_indices)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` numbers from ``base**start`` to ``base**end``, evenly spaced in exponent.

    Parameters
    ----------
    start, end : float
        The exponents of the first and the last number.
    steps : int
        How many numbers.
    base : float, optional
        The base (default 10).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    exps = _creation.linspace(start, end, steps, dtype=dtype, device=device)
    return _creation.tensor((base ** exps.detach())._array, dtype=exps.dtype, device=device,
                            requires_grad=requires_grad)


@composite_op("vander")
def vander(x, N=None, increasing=False) -> Tensor:
    v = _t(x, "vander", "x")
    if v.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = v.shape[0] if N is None else N
    powers = list(builtins.range(n)) if increasing else list(builtins.range(n - 1, -1, -1))
    cols = [_abi.pow(v, p) if p else _abi.pow(v, 0) for p in powers]
    if not cols:
        return _abi.reshape(_abi.getitem(v, slice(0, 0)), (v.shape[0], 0))
    return _abi.stack(cols, 1)


vander.__doc__ = _doc("The Vandermonde matrix: the powers of ``x``, highest first unless ``increasing``.",
                      "    x : Tensor\n        A 1-d tensor.\n    N : int, optional\n        The number of columns.\n"
                      "    increasing : bool, optional\n        Lowest power first.", "Tensor",
                      ">>> rg.vander(rg.tensor([1, 2, 3]))\n    tensor([[1, 1, 1],\n            [4, 2, 1],\n"
                      "            [9, 3, 1]])")

def _cumextreme(name: str, better):
    result = namedtuple(name, ["values", "indices"])

    @composite_op(name)
    def fn(input, dim):
        x = _t(input, name)
        d = dim % max(x.ndim, 1)
        a = np.moveaxis(np.asarray(x._array), d, -1) if x.ndim else x._array.reshape(1)
        idx = np.zeros(a.shape, dtype=np.int64)
        best = a[..., :1].copy() if a.shape[-1] else a[..., :0]
        for i in builtins.range(1, a.shape[-1]):
            cur = a[..., i]
            # ties take the later index, and nan wins from then on (torch's)
            take = better(cur, best[..., 0]) | (cur == best[..., 0]) | np.isnan(cur)
            take &= ~(np.isnan(best[..., 0]) & ~np.isnan(cur))
            best[..., 0] = np.where(take, cur, best[..., 0])
            idx[..., i] = np.where(take, i, idx[..., i - 1])
        idx = np.moveaxis(idx, -1, d) if x.ndim else idx.reshape(())
        it = _const(x, np.ascontiguousarray(idx))
        return result(_abi.gather(x, d, it) if x.ndim else x.clone(), it)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(f"The running {name[3:]}imum along ``dim`` and where it was reached.",
                      _IN + "\n    dim : int\n        The dimension.", "(values, indices)",
                      f">>> rg.{name}(rg.tensor([1.0, 3.0, 2.0]), 0)\n"
                      f"    {name}(values=tensor({'[1., 3., 3.]' if name == 'cummax' else '[1., 1., 1.]'}), "
                      f"indices=tensor({'[0, 1, 1]' if name == 'cummax' else '[0, 0, 0]'}))")
    return fn


cummax = _cumextreme("cummax", np.greater)
cummin = _cumextreme("cummin", np.less)


@composite_op("logcumsumexp")
def logcumsumexp(input, dim) -> Tensor:
    x = _t(input, "logcumsumexp")
    d = dim % max(x.ndim, 1)
    n = x.shape[d] if x.ndim else 1
    # row i of the (n, n) mask keeps the entries j <= i: a logsumexp per prefix
    xe = _abi.unsqueeze(_abi.movedim(x, d, -1) if x.ndim else _abi.reshape(x, (1,)), -2)
    keep = np.tril(np.ones((n, n), dtype=bool))
    masked = _abi.where(_const(x, keep), xe, float("-inf"))
    out = _abi.logsumexp(masked, -1)
    return _abi.movedim(out, -1, d) if x.ndim else _abi.reshape(out, ())


logcumsumexp.__doc__ = _doc("The running ``log(sum(exp(x)))`` along ``dim``, without overflow.",
                            _IN + "\n    dim : int\n        The dimension.", "Tensor",
                            ">>> rg.logcumsumexp(rg.tensor([0.0, 0.0]), 0)\n    tensor([0.       , 0.6931472])")


def _index_args(x: Tensor, dim, index, fn: str):
    i = _t(index, fn, "index")
    if i.ndim > 1:
        raise IndexError(f"{fn}_(): Index is supposed to be a vector")
    return dim % max(x.ndim, 1), i


def _expand_index(x: Tensor, d: int, i: Tensor, src_shape) -> Tensor:
    shape = [1] * x.ndim
    shape[d] = -1
    return _abi.expand(_abi.reshape(i, tuple(shape)), tuple(src_shape))


@composite_op("index_add")
def index_add(input, dim, index, source, *, alpha=1) -> Tensor:
    x = _t(input, "index_add")
    d, i = _index_args(x, dim, index, "index_add")
    s = _t(source, "index_add", "source")
    s = s if alpha == 1 else s * alpha
    if x.ndim == 0:
        return x + _abi.sum(s)
    return _abi.scatter_add(x, d, _expand_index(x, d, i, s.shape), s)


@composite_op("index_copy")
def index_copy(input, dim, index, source) -> Tensor:
    x = _t(input, "index_copy")
    d, i = _index_args(x, dim, index, "index_copy")
    s = _t(source, "index_copy", "source")
    keep = np.ones(x.shape[d] if x.ndim else 1, dtype=bool)
    keep[np.asarray(i._array)] = False
    shape = [1] * x.ndim
    shape[d] = -1
    cleared = _abi.where(_const(x, keep.reshape(shape)), x, 0)
    return index_add(cleared, d, i, s)


@composite_op("index_fill")
def index_fill(input, dim, index, value) -> Tensor:
    x = _t(input, "index_fill")
    d, i = _index_args(x, dim, index, "index_fill")
    hit = np.zeros(x.shape[d] if x.ndim else 1, dtype=bool)
    hit[np.asarray(i._array)] = True
    shape = [1] * x.ndim
    shape[d] = -1
    return _abi.where(_const(x, hit.reshape(shape)), value, x)


_IDX = (_IN + "\n    dim : int\n        The dimension ``index`` indexes.\n    index : Tensor\n"
        "        1-d int64 indices.")
index_add.__doc__ = _doc("Add the slices of ``source`` (times ``alpha``) to ``input`` at ``index`` along ``dim``.",
                         _IDX + "\n    source : Tensor\n        The slices, one per index (repeated indices add up).",
                         "Tensor", ">>> rg.index_add(rg.zeros(3), 0, rg.tensor([0, 2, 0]), rg.tensor([1.0, 2.0, 3.0]))\n"
                         "    tensor([4., 0., 2.])")
index_copy.__doc__ = _doc("``input`` with the slices at ``index`` along ``dim`` replaced by ``source``'s.",
                          _IDX + "\n    source : Tensor\n        The slices, one per (distinct) index.", "Tensor",
                          ">>> rg.index_copy(rg.zeros(3), 0, rg.tensor([2]), rg.tensor([5.0]))\n"
                          "    tensor([0., 0., 5.])")
index_fill.__doc__ = _doc("``input`` with the slices at ``index`` along ``dim`` set to ``value``.",
                          _IDX + "\n    value : number or 0-d Tensor\n        The fill value.", "Tensor",
                          ">>> rg.index_fill(rg.ones(3), 0, rg.tensor([1]), -1.0)\n    tensor([ 1., -1.,  1.])")


@composite_op("diff")
def diff(input, n=1, dim=-1, prepend=None, append=None) -> Tensor:
    x = _t(input, "diff")
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _abi.cat([p if p.ndim else _abi.expand(_abi.reshape(p, (1,) * x.ndim), tuple(
            1 if j == dim % x.ndim else s for j, s in enumerate(x.shape))) for p in parts], dim)
    for _ in builtins.range(n):
        m = x.shape[dim]
        x = _abi.narrow(x, dim, 1, max(m - 1, 0)) - _abi.narrow(x, dim, 0, max(m - 1, 0))
    return x


diff.__doc__ = _doc("The ``n``-th forward difference along ``dim``.",
                    _IN + "\n    n : int, optional\n        How often to difference (default 1).\n"
                    "    dim : int, optional\n        The dimension (default -1).\n"
                    "    prepend, append : Tensor, optional\n        Values put before or after first.", "Tensor",
                    ">>> rg.diff(rg.tensor([1.0, 4.0, 9.0]))\n    tensor([3., 5.])")


@composite_op("msort")
def msort(input) -> Tensor:
    from retrograd.core._composites_reductions_linalg import sort
    return sort(_t(input, "msort"), 0).values


msort.__doc__ = _doc("The input sorted along its first dimension.", _IN, "Tensor",
                     ">>> rg.msort(rg.tensor([[3.0, 1.0], [2.0, 4.0]]))\n    tensor([[2., 1.],\n"
                     "            [3., 4.]])")


@composite_op("inner")
def inner(input, other) -> Tensor:
    a, b = _t(input, "inner"), _t(other, "inner", "other")
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    from retrograd.core._composites_reductions_linalg import tensordot
    return tensordot(a, b, ([-1], [-1]))


@composite_op("mv")
def mv(input, vec) -> Tensor:
    a, v = _t(input, "mv"), _t(vec, "mv", "vec")
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    return _abi.matmul(a, v)


inner.__doc__ = _doc("The inner product over the last dimensions of both inputs.",
                     "    input, other : Tensor\n        The operands.", "Tensor",
                     ">>> rg.inner(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0]))\n    tensor(11.)")
mv.__doc__ = _doc("The product of a matrix and a vector.",
                  "    input : Tensor\n        A matrix.\n    vec : Tensor\n        A vector.", "Tensor",
                  ">>> rg.mv(rg.tensor([[1.0, 2.0], [3.0, 4.0]]), rg.tensor([1.0, 1.0]))\n    tensor([3., 7.])")


@composite_op("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary") -> Tensor:
    a, b = _t(x1, "cdist", "x1"), _t(x2, "cdist", "x2")
    if a.ndim < 2 or b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}")
    _no_bfloat16_kernel(a.dtype, "cdist")
    d = _abi.unsqueeze(a, -2) - _abi.unsqueeze(b, -3)
    if p == 0:
        return _abi.sum((d != 0).to(a._array.dtype), -1)
    if p == float("inf"):
        return _abi.amax(_abi.abs(d), -1)
    return _abi.norm(d, p, -1)


cdist.__doc__ = _doc("The ``p``-norm distance between each row of ``x1`` and each row of ``x2``.",
                     "    x1 : Tensor\n        ``(..., P, M)``.\n    x2 : Tensor\n        ``(..., R, M)``.\n"
                     "    p : float, optional\n        The norm (default 2).", "Tensor",
                     ">>> rg.cdist(rg.tensor([[0.0, 0.0]]), rg.tensor([[3.0, 4.0], [1.0, 0.0]]))\n"
                     "    tensor([[5., 1.]])")


def _gradient_dims(x: Tensor, dim, n_spacing, edge_order) -> list:
    # ATen's pre_check_gradient, its checks in its order; returns the dims, wrapped
    nd = x.ndim
    if x.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(builtins.range(nd)) if dim is None else [dim] if not isinstance(dim, (list, tuple)) else list(dim)
    if n_spacing is not None and dim is None and n_spacing != nd:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {nd}', since dim argument was not given, but got a list of length "
                           f"{n_spacing}")
    if n_spacing is not None and dim is not None and n_spacing != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {n_spacing} "
                           f"and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2) or isinstance(edge_order, bool):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    wrapped = []
    for d in dims:
        if not -max(nd, 1) <= d < max(nd, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, "
                             f"{max(nd, 1) - 1}], but got {d})")
        d = d % max(nd, 1)
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    for d in wrapped:
        if x.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return wrapped


def _ends(x: Tensor, d: int, k: int) -> list:
    # the first (k > 0) or last (k < 0) |k| slices of x along d, each of length 1
    n = x.shape[d]
    return [_abi.narrow(x, d, i if k > 0 else n - abs(k) + i, 1) for i in builtins.range(abs(k))]


@composite_op("gradient")
def gradient(input, *, spacing=1, dim=None, edge_order=1) -> tuple:
    x = _t(input, "gradient")
    if isinstance(spacing, Tensor):
        if spacing.ndim != 0:
            raise TypeError("gradient(): argument 'spacing' must be a number, a sequence of numbers or a sequence of "
                            "1-d Tensors, not a Tensor (pass [coordinates] for one dimension)")
        spacing = spacing.item()
    coords = isinstance(spacing, (list, tuple)) and builtins.any(isinstance(s, Tensor) for s in spacing)
    listed = isinstance(spacing, (list, tuple))
    dims = _gradient_dims(x, dim, len(spacing) if listed else None, edge_order)
    if not listed:
        spacing = [1.0 if spacing is None else spacing] * len(dims)
    out = []
    for i, d in enumerate(dims):
        n = x.shape[d]
        if coords:
            c = _t(spacing[i], "gradient", "spacing")
            if c.device != x.device:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, but got devices "
                                   f"{x.device} and {c.device}!")
            if c.ndim != 1:
                raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got "
                                   f"an element with {c.ndim} dimensions!")
            # the nonuniform second-order formulas (Fornberg), as ATen's gradient_helper
            h = _abi.narrow(c, 0, 1, c.shape[0] - 1) - _abi.narrow(c, 0, 0, c.shape[0] - 1)
            h1, h2 = _abi.narrow(h, 0, 0, h.shape[0] - 1), _abi.narrow(h, 0, 1, h.shape[0] - 1)
            shape = [1] * x.ndim
            shape[d] = -1
            a = _abi.reshape(-h2 / (h1 * (h1 + h2)), tuple(shape))
            b = _abi.reshape((h2 - h1) / (h1 * h2), tuple(shape))
            cc = _abi.reshape(h1 / (h2 * (h1 + h2)), tuple(shape))
            center = (a * _abi.narrow(x, d, 0, n - 2) + b * _abi.narrow(x, d, 1, n - 2)
                      + cc * _abi.narrow(x, d, 2, n - 2))
            first, last = h[0], h[-1]
            if edge_order == 1:
                s0, s1 = _ends(x, d, 2)
                e0, e1 = _ends(x, d, -2)
                head, tail = (s1 - s0) / first, (e1 - e0) / last
            else:
                s0, s1, s2 = _ends(x, d, 3)
                e0, e1, e2 = _ends(x, d, -3)
                second, before = h[1], h[-2]
                head = (-(2.0 * first + second) / (first * (first + second)) * s0
                        + (first + second) / (first * second) * s1
                        + (-first) / (second * (first + second)) * s2)
                tail = (last / (before * (last + before)) * e0
                        - (last + before) / (last * before) * e1
                        + (2 * last + before) / (last * (last + before)) * e2)
        else:
            step = spacing[i]
            center = (_abi.narrow(x, d, 2, n - 2) - _abi.narrow(x, d, 0, n - 2)) / step / 2
            if edge_order == 1:
                s0, s1 = _ends(x, d, 2)
                e0, e1 = _ends(x, d, -2)
                head, tail = (s1 - s0) / step, (e1 - e0) / step
            else:
                s0, s1, s2 = _ends(x, d, 3)
                e0, e1, e2 = _ends(x, d, -3)
                head = (-1.5 * s0 + 2 * s1 - 0.5 * s2) / step
                tail = (0.5 * e0 - 2 * e1 + 1.5 * e2) / step
        out.append(_abi.cat([head, center, tail], d))
    return tuple(out)


gradient.__doc__ = _doc(
    "Estimate the derivatives of the function sampled by ``input``, along each dimension.",
    _IN + " Each dimension it differentiates along needs ``edge_order + 1`` samples.\n"
    "    spacing : number, sequence of numbers or sequence of Tensor, optional\n"
    "        The distance between neighbouring samples: one number for every\n"
    "        dimension (default 1), one number per dimension, or per dimension\n"
    "        a 1-d tensor of the samples' coordinates (unevenly spaced).\n"
    "    dim : int or sequence of int, optional\n"
    "        The dimensions to differentiate along (default: all).\n"
    "    edge_order : int, optional\n"
    "        The accuracy order at the two ends, 1 or 2 (default 1); inside,\n"
    "        second-order central differences.",
    "tuple of Tensor\n        One derivative per dimension, each of ``input``'s shape.",
    ">>> rg.gradient(rg.tensor([1.0, 4.0, 9.0, 16.0]))\n"
    "    (tensor([3., 4., 6., 7.]),)\n"
    "    >>> rg.gradient(rg.tensor([[1.0, 2.0], [3.0, 5.0]]), spacing=[2.0, 1.0])\n"
    "    (tensor([[1. , 1.5],\n            [1. , 1.5]]), tensor([[1., 1.],\n            [2., 2.]]))",
    "The interior uses second-order central differences; ``torch.gradient``'s\n"
    "    results and gradients, built from differentiable ops (numpy.gradient's\n"
    "    method).")
