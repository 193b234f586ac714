"""Composite reductions and linear algebra: max/min (values and indices),
einsum and tensordot, written over entries of derivatives.yaml (no entries
of their own; their gradients come from the entries they call).

- max/min with a dim: the private `_max_dim` / `_min_dim` entries, values
  and indices in one pass (indices carry no gradient; the gradient goes to
  the one selected element as torch's max(dim) does); without a dim,
  amax/amin (ties share the gradient evenly, as torch's max()).
- einsum: the equation is canonicalized (ellipses and implicit outputs
  turned into explicit letters, size-1 dims broadcast) and the operands are
  contracted left to right, two at a time, with the private `_einsum` entry,
  whose backward is an einsum again (so any order of derivative works).
"""
from __future__ import annotations

from retrograd.core.abi import composite_op
import builtins
import string
from collections import namedtuple

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core.abi import Tensor


__all__ = ["max", "min", "sort", "topk", "einsum", "tensordot", "return_types"]


class return_types:
    """The named tuples that ops with several results return, as ``torch.return_types``.

    ``max`` and ``min`` (with a ``dim``) return ``(values, indices)``,
    ``linalg.slogdet`` ``(sign, logabsdet)`` and ``linalg.svd`` ``(U, S, Vh)``;
    each unpacks like a tuple and names its fields.

    Examples
    --------
    >>> import retrograd as rg
    >>> r = rg.max(rg.tensor([[1.0, 3.0], [4.0, 2.0]]), dim=1)
    >>> r
    max(values=tensor([3., 4.]), indices=tensor([1, 0]))
    >>> values, indices = r
    >>> isinstance(r, rg.return_types.max)
    True
    """
    max = namedtuple("max", ["values", "indices"])
    min = namedtuple("min", ["values", "indices"])
    slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
    svd = namedtuple("svd", ["U", "S", "Vh"])
    sort = namedtuple("sort", ["values", "indices"])
    topk = namedtuple("topk", ["values", "indices"])
    linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
    linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
    linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


for _t in (return_types.max, return_types.min, return_types.slogdet, return_types.svd, return_types.sort,
           return_types.topk, return_types.linalg_eigh, return_types.linalg_qr, return_types.linalg_lstsq):
    _t.__module__ = "retrograd.return_types"
    _t.__qualname__ = _t.__name__          # repr: retrograd.return_types.max, as torch.return_types.max
del _t


def _tensor(x):
    return x if isinstance(x, Tensor) else _abi._wrap(np.asarray(x))


def _extreme(name, input, dim, keepdim, other):
    x = _tensor(input)
    if other is not None:
        raise TypeError(f"{name}(): got both a dim and `other`")
    if isinstance(dim, (Tensor, np.ndarray)):
        # torch.max(a, b): the elementwise maximum
        fn = getattr(_abi, "maximum" if name == "max" else "minimum", None)
        if fn is None:
            raise NotImplementedError(f"{name}(a, b) needs rg.{'maximum' if name == 'max' else 'minimum'}, "
                                      "which this build does not have")
        return fn(x, dim)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}(): keepdim=True needs a dim; use amax/amin(x, dim=(), keepdim=True)")
        if x.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        # dim=None (not amax's default ()): the backward of torch's max()
        # and min(), which share the gradient among NaN maxima where amax's
        # gives NaN (extreme_backward)
        return (_abi.amax if name == "max" else _abi.amin)(x, None)
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): dim must be an int (use amax/amin to reduce several dims)")
    d = _abi._wrap_dim_py(dim, x.ndim)                   # IndexError for a bad dim, as torch
    if x.ndim and x.shape[d] == 0:
        # (an empty tensor reduced along a non-empty dim gives empty results)
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    op = _abi._max_dim_op if name == "max" else _abi._min_dim_op
    return getattr(return_types, name)(*op(x, dim, keepdim))


@composite_op('max')
def max(input, dim=None, keepdim=False, *, other=None):
    """The largest element; along ``dim``, the largest values and their indices.

    Three forms, as torch's:

    - ``max(x)``: a 0-d tensor holding the largest element (``nan`` if any is
      ``nan``). Ties share the gradient evenly.
    - ``max(x, dim, keepdim=False)``: a named tuple ``(values, indices)``
      over dimension ``dim``; the gradient goes to the one element each index
      points at, and the indices (int64) never require grad.
    - ``max(a, b)``: the element-wise maximum, :func:`retrograd.maximum`.

    Parameters
    ----------
    input : Tensor or array_like
        The input (real).
    dim : int or Tensor, optional
        The dimension to reduce; a tensor here means the two-tensor form.
    keepdim : bool, optional
        Keep the reduced dimension with size 1 (only with an int ``dim``).

    Returns
    -------
    Tensor or retrograd.return_types.max
        The maximum, or ``(values, indices)`` with a ``dim``.

    Raises
    ------
    RuntimeError
        For an empty input without ``dim``.
    IndexError
        If ``dim`` is out of range, or the reduced dimension is empty.
    TypeError
        For a tuple ``dim`` (use :func:`retrograd.amax`) or ``keepdim``
        without ``dim``.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([[1.0, 5.0], [7.0, 4.0]])
    >>> rg.max(x)
    tensor(7.)
    >>> rg.max(x, dim=1)
    max(values=tensor([5., 7.]), indices=tensor([1, 0]))
    >>> rg.max(x, rg.tensor([[2.0, 2.0], [2.0, 2.0]]))
    tensor([[2., 5.],
            [7., 4.]])
    """
    return _extreme("max", input, dim, keepdim, other)


@composite_op('min')
def min(input, dim=None, keepdim=False, *, other=None):
    """The smallest element; along ``dim``, the smallest values and their indices.

    The mirror of :func:`retrograd.max`, in the same three forms:
    ``min(x)``, ``min(x, dim, keepdim=False)`` giving ``(values, indices)``,
    and ``min(a, b)`` (:func:`retrograd.minimum`).

    Parameters
    ----------
    input : Tensor or array_like
        The input (real).
    dim : int or Tensor, optional
        The dimension to reduce; a tensor here means the two-tensor form.
    keepdim : bool, optional
        Keep the reduced dimension with size 1 (only with an int ``dim``).

    Returns
    -------
    Tensor or retrograd.return_types.min
        The minimum, or ``(values, indices)`` with a ``dim``.

    Raises
    ------
    RuntimeError
        For an empty input without ``dim``.
    IndexError
        If ``dim`` is out of range, or the reduced dimension is empty.
    TypeError
        For a tuple ``dim`` (use :func:`retrograd.amin`) or ``keepdim``
        without ``dim``.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([[1.0, 5.0], [7.0, 4.0]])
    >>> rg.min(x)
    tensor(1.)
    >>> values, indices = rg.min(x, dim=0, keepdim=True)
    >>> values, indices
    (tensor([[1., 4.]]), tensor([[0, 1]]))
    """
    return _extreme("min", input, dim, keepdim, other)


# --- sort, topk -----------------------------------------------------------------------
# Composites over the private _sort / _topk entries (one kernel call gives
# values and indices; the indices carry no gradient).

def _flag(value, name, fn):
    # torch's bool arguments: a bool (or None for sort's stable, meaning False)
    if value is None and name == "stable":
        return False
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")
    return bool(value)


def _dim_arg(dim, fn):
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    return int(dim)


@composite_op('sort')
def sort(input, dim=-1, descending=False, *, stable=False):
    """Sort the elements of ``input`` along a dimension.

    Returns the sorted values and, for each, its index in ``input`` along
    ``dim``. NaN counts as larger than every number (last in ascending
    order, first in descending order), as in torch. The sort is stable:
    equal elements keep their order (torch guarantees this only with
    ``stable=True``; its CPU sort is stable either way).

    Parameters
    ----------
    input : Tensor
        The tensor to sort (real, integer or bool dtype).
    dim : int, optional
        The dimension to sort along (default the last).
    descending : bool, optional
        Largest first when True (default False: smallest first).
    stable : bool, optional
        Keep the order of equal elements (keyword-only, as torch's).

    Returns
    -------
    (values, indices) : retrograd.return_types.sort
        A named tuple: ``values`` has ``input``'s shape and dtype and its
        gradient flows back to the elements it came from; ``indices``
        (int64) does not require grad.

    Raises
    ------
    IndexError
        ``dim`` is out of range.
    TypeError
        ``input`` is complex (torch does not order complex numbers), or an
        argument has the wrong type.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([3., 1., float("nan"), 2.], requires_grad=True)
    >>> values, indices = rg.sort(x)
    >>> values
    tensor([ 1.,  2.,  3., nan], grad_fn=<SortBackward0>)
    >>> indices
    tensor([1, 3, 0, 2])
    >>> rg.sort(x, descending=True).indices
    tensor([2, 0, 3, 1])
    """
    return return_types.sort(*_abi._sort_op(_tensor(input), _dim_arg(dim, "sort"),
                                            _flag(descending, "descending", "sort"),
                                            _flag(stable, "stable", "sort")))


@composite_op('topk')
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements of ``input`` along a dimension.

    NaN counts as larger than every number, as in torch. The result is in
    sorted order (largest first, or smallest first with ``largest=False``)
    whatever ``sorted`` says, which torch allows. Among equal elements the
    one with the lower index comes first; torch leaves that order
    unspecified.

    Parameters
    ----------
    input : Tensor
        The tensor to select from (real, integer or bool dtype).
    k : int
        How many elements to keep, ``0 <= k <= input.size(dim)``.
    dim : int, optional
        The dimension to select along (default the last).
    largest : bool, optional
        The largest elements when True (default), else the smallest.
    sorted : bool, optional
        Accepted for torch's signature; the result is always sorted.

    Returns
    -------
    (values, indices) : retrograd.return_types.topk
        A named tuple; ``values`` (size ``k`` along ``dim``) carries the
        gradient back to the selected elements, ``indices`` is int64.

    Raises
    ------
    RuntimeError
        ``k`` is out of range.
    IndexError
        ``dim`` is out of range.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1., 5., 3., 4.], requires_grad=True)
    >>> values, indices = rg.topk(x, 2)
    >>> values
    tensor([5., 4.], grad_fn=<TopkBackward0>)
    >>> indices
    tensor([1, 3])
    >>> rg.topk(x, 2, largest=False).values.sum().backward()
    >>> x.grad
    tensor([1., 0., 1., 0.])
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"topk(): argument 'k' must be int, not {type(k).__name__}")
    return return_types.topk(*_abi._topk_op(_tensor(input), int(k), _dim_arg(dim, "topk"),
                                            _flag(largest, "largest", "topk"),
                                            _flag(sorted, "sorted", "topk")))


# --- einsum --------------------------------------------------------------------------

def _fresh_letters(used, n):
    free = [c for c in string.ascii_letters if c not in used]
    if len(free) < n:
        raise RuntimeError("einsum(): the equation uses too many distinct dimensions (at most 52)")
    return free[:n]


def _parse_einsum(equation, shapes):
    """(operand subscripts, output subscripts, target shape per operand or
    None): explicit letters only."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->", 1)
        if "->" in rhs:
            raise RuntimeError("einsum(): the equation has more than one '->'")
    else:
        lhs, rhs = eq, None
    subs = lhs.split(",")
    if len(subs) != len(shapes):
        more = "more" if len(shapes) > len(subs) else "fewer"
        raise RuntimeError(f"einsum(): {more} operands were provided than specified in the equation "
                           f"{equation!r} ({len(shapes)} operands, {len(subs)} in the equation)")
    for s in subs + ([rhs] if rhs is not None else []):
        body = s.replace("...", "")
        if "." in body:
            raise RuntimeError(f"einsum(): found '.' in {s!r} that is not part of any ellipsis ('...')")
        if any(c not in string.ascii_letters for c in body):
            raise RuntimeError(f"einsum(): invalid subscript in {s!r}: subscripts must be letters in "
                               "[a-zA-Z]")
        if s.count("...") > 1:
            raise RuntimeError(f"einsum(): more than one ellipsis in {s!r}")
    used = set(eq)
    ell_n = []
    for i, (s, shape) in enumerate(zip(subs, shapes)):
        k = len(s.replace("...", ""))
        if "..." in s:
            if k > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({k}) is more than "
                                   f"the number of dimensions ({len(shape)}) for operand {i}")
            ell_n.append(len(shape) - k)
        else:
            if k != len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({k}) does not match "
                                   f"the number of dimensions ({len(shape)}) for operand {i} and no ellipsis "
                                   "was given")
            ell_n.append(0)
    n_ell = builtins.max(ell_n) if ell_n else 0
    ell = "".join(_fresh_letters(used, n_ell))
    subs = [s.replace("...", ell[n_ell - e:] if e else "") for s, e in zip(subs, ell_n)]
    # letter sizes, with torch's broadcasting of size-1 dims
    sizes = {}
    for i, (s, shape) in enumerate(zip(subs, shapes)):
        for c, n in zip(s, shape):
            m = sizes.get(c, 1)
            if n != 1 and m != 1 and n != m:
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes "
                                   f"(subscript {c!r} has sizes {m} and {n}; operand {i} has shape "
                                   f"{tuple(shape)})")
            sizes[c] = n if n != 1 else m
    if rhs is None:
        counts = {}
        for s in subs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        # torch's order: ellipsis dims first, then letters A-Z before a-z
        rhs = ell + "".join(sorted(c for c in counts if counts[c] == 1 and c not in ell))
    else:
        rhs = rhs.replace("...", ell)
        for c in rhs:
            if rhs.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c!r} appears more than once in the output")
            if not any(c in s for s in subs):
                raise RuntimeError(f"einsum(): output subscript {c!r} does not appear in the equation for "
                                   "any input operand")
    targets = []
    for s, shape in zip(subs, shapes):
        want = tuple(sizes[c] for c in s)
        targets.append(want if want != tuple(shape) else None)
    return subs, rhs, targets



def _sublist_equation(args):
    # torch's sublist form: einsum(op0, [0, 1], op1, [1, 2], [0, 2]), with
    # Ellipsis for '...'; subscripts 0..51 stand for the letters A-Za-z
    def letters(sub):
        out = ""
        for i in sub:
            if i is Ellipsis:
                out += "..."
            elif isinstance(i, (int, np.integer)) and 0 <= i < 52:
                out += string.ascii_letters[i]
            else:
                raise RuntimeError(f"einsum(): subscript in a sublist must be an int in [0, 52) or "
                                   f"Ellipsis, got {i!r}")
        return out
    ops = list(args[0::2])
    subs = list(args[1::2])
    out = None
    if len(ops) > len(subs):          # a trailing output sublist
        out = ops.pop()
        if isinstance(out, (Tensor, np.ndarray)):
            raise RuntimeError("einsum(): the sublist form needs one sublist per operand "
                               "(einsum(op0, sub0, op1, sub1, ..., [out]))")
    eq = ",".join(letters(s) for s in subs)
    if out is not None:
        eq += "->" + letters(out)
    return eq, tuple(ops)


@composite_op('einsum')
def einsum(equation, *operands):
    """Sum products of tensor elements as an Einstein-summation equation says.

    Each operand gets one letter per dimension (``'ij,jk->ik'`` is a matrix
    product); letters repeated across operands are multiplied together, and
    letters missing after ``->`` are summed over. Without ``->`` the output
    holds the letters that appear once, in alphabetical order. ``...`` stands
    for leading dimensions that broadcast, a letter repeated within one
    operand takes a diagonal (``'ii->i'``), and size-1 dimensions broadcast.
    Operands may be given as separate arguments or as one list; torch's
    sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` works too. Several
    operands are contracted pairwise, left to right.

    Parameters
    ----------
    equation : str
        The subscripts, e.g. ``'bij,bjk->bik'``.
    *operands : Tensor or array_like
        The tensors, one per comma-separated term.

    Returns
    -------
    Tensor
        The result, with one dimension per output letter.

    Raises
    ------
    RuntimeError
        If there are no operands, or the equation and shapes disagree.
    TypeError
        If the first argument is not the equation.

    Examples
    --------
    >>> import retrograd as rg
    >>> a = rg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> rg.einsum('ij,jk->ik', a, a)
    tensor([[ 7., 10.],
            [15., 22.]])
    >>> rg.einsum('ii', a)
    tensor(5.)
    >>> rg.einsum('ij->j', a)
    tensor([4., 6.])
    """
    if not isinstance(equation, str):
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError("einsum(): the first argument must be the equation string, as in "
                        "einsum('ij,jk->ik', a, b)")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    ts = [_tensor(o) for o in operands]
    subs, rhs, targets = _parse_einsum(equation, [tuple(t.shape) for t in ts])
    ts = [t if tgt is None else _abi.expand(t, tgt) for t, tgt in zip(ts, targets)]
    if len(ts) == 1:
        # one operand: `b` is None (the op's entry gives the kernel an
        # unused placeholder)
        return _abi._einsum_op(ts[0], None, f"{subs[0]}->{rhs}")
    acc, sacc = ts[0], subs[0]
    for k in range(1, len(ts)):
        if k == len(ts) - 1:
            new = rhs
        else:
            needed = set(rhs).union(*[set(s) for s in subs[k + 1:]])
            new = ""
            for c in sacc + subs[k]:
                if c in needed and c not in new:
                    new += c
        acc = _abi._einsum_op(acc, ts[k], f"{sacc},{subs[k]}->{new}")
        sacc = new
    return acc


@composite_op('tensordot')
def tensordot(a, b, dims=2, out=None):
    """Contract dimensions of ``a`` with dimensions of ``b`` (a generalised matrix product).

    With an int ``dims``, the last ``dims`` dimensions of ``a`` are summed
    against the first ``dims`` of ``b``; with ``dims=([da...], [db...])`` the
    listed pairs are. The result has ``a``'s remaining dimensions followed by
    ``b``'s.

    Parameters
    ----------
    a : Tensor or array_like
        The left operand.
    b : Tensor or array_like
        The right operand.
    dims : int or pair of sequences of int, optional
        What to contract (default 2).
    out : None, optional
        Not supported; must be left as None.

    Returns
    -------
    Tensor
        The contraction.

    Raises
    ------
    RuntimeError
        If ``dims`` is negative, too large, or names dimensions of different
        sizes.

    Examples
    --------
    >>> import retrograd as rg
    >>> a = rg.ones(2, 3, 4)
    >>> b = rg.ones(4, 5)
    >>> rg.tensordot(a, b, dims=1).shape
    (2, 3, 5)
    >>> rg.tensordot(rg.tensor([1.0, 2.0]), rg.tensor([3.0, 4.0]), dims=([0], [0]))
    tensor(11.)
    """
    a, b = _tensor(a), _tensor(b)
    na, nb = a.ndim, b.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > na or dims > nb:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(na - dims, na)), list(range(dims))
    else:
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be an int or a pair of dim lists ([a dims], [b dims])")
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError(f"both dimension lists should have same length, got {len(da)} and {len(db)}")
    da = [_abi._wrap_dim_py(d, na) for d in da]
    db = [_abi._wrap_dim_py(d, nb) for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim "
                               f"{x} and second has size {b.shape[y]} in dim {y}")
    letters = string.ascii_letters
    sa = list(letters[:na])
    sb = list(letters[na:na + nb])
    for x, y in zip(da, db):
        sb[y] = sa[x]
    out_s = [sa[i] for i in range(na) if i not in da] + [sb[j] for j in range(nb) if j not in db]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out_s)}", a, b)
