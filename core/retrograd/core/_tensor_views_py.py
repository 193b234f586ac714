"""torch's in-place view ops (``t_``, ``squeeze_``, ``unsqueeze_``,
``transpose_``, ``swapaxes_``, ``swapdims_``, ``as_strided_``) and
``as_strided``/``as_strided_scatter``: Tensor methods written in Python (Note
[Python-written Tensor methods] in _tensor_methods_py.py) and the top-level
functions.

An in-place view op makes ``self`` the view (abi._inplace_view, in
_inplace.pxi: the history and the version as torch's). ``as_strided`` reads
the tensor's storage as torch does: the memory of the tensor it is a view
of (its ``_base``), or its own, counted in elements from the first one; the
view is the table's ``_as_strided`` op, whose gradient adds up the
gradients of elements that alias one another.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core.abi import Tensor, composite_op

__all__ = ["as_strided", "as_strided_", "as_strided_scatter"]


def _self(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


def squeeze_(self, dim=None) -> Tensor:
    """:meth:`Tensor.squeeze` in place: ``self`` becomes the view without those size-1 dimensions.

    Parameters
    ----------
    dim : int or tuple of ints, optional
        The dimensions to drop where their size is 1 (default: all of size 1).

    Returns
    -------
    Tensor
        ``self``.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.zeros(2, 1, 3)
    >>> x.squeeze_().shape
    (2, 3)
    """
    self = _self(self, "squeeze_")
    return _abi._inplace_view(self, "squeeze_", lambda t: t.squeeze() if dim is None else t.squeeze(dim), ())


def unsqueeze_(self, dim) -> Tensor:
    """:meth:`Tensor.unsqueeze` in place: ``self`` gains a dimension of size 1 at ``dim``.

    Parameters
    ----------
    dim : int
        Where the new dimension goes.

    Returns
    -------
    Tensor
        ``self``.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.zeros(2, 3)
    >>> x.unsqueeze_(0).shape
    (1, 2, 3)
    """
    self = _self(self, "unsqueeze_")
    return _abi._inplace_view(self, "unsqueeze_", lambda t: t.unsqueeze(dim), ())


def t_(self) -> Tensor:
    """:meth:`Tensor.t` in place: a matrix becomes its transpose (0-d and 1-d tensors stay as they are).

    Returns
    -------
    Tensor
        ``self``.

    Raises
    ------
    RuntimeError
        For a tensor of more than 2 dimensions.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.zeros(2, 3)
    >>> x.t_().shape
    (3, 2)
    """
    self = _self(self, "t_")
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _abi._inplace_view(self, "t_", lambda t: t.t(), ())


def transpose_(self, dim0, dim1) -> Tensor:
    """:meth:`Tensor.transpose` in place: dimensions ``dim0`` and ``dim1`` swap.

    Parameters
    ----------
    dim0, dim1 : int
        The dimensions to swap.

    Returns
    -------
    Tensor
        ``self``.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.zeros(2, 3, 4)
    >>> x.transpose_(0, 2).shape
    (4, 3, 2)
    """
    self = _self(self, "transpose_")
    return _abi._inplace_view(self, "transpose_", lambda t: t.transpose(dim0, dim1), ())


def _transpose_alias(name: str, first: str, second: str, whose: str) -> Callable:
    # swapaxes_ and swapdims_: transpose_ under NumPy's and torch's other names
    # (their own parameter names, errors naming them)
    def method(self, *args, **kwargs):
        dims = _bind2(name, first, second, args, kwargs)
        return _abi._inplace_view(_self(self, name), name, lambda t: t.transpose(*dims), ())
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f""":meth:`transpose_` under {whose} name.

    Parameters
    ----------
    {first}, {second} : int
        The dimensions to swap.

    Returns
    -------
    Tensor
        ``self``.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.zeros(2, 3).{name}(0, 1).shape
    (3, 2)
    """
    import inspect
    method.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("self", first, second)])
    return method


def _bind2(name: str, first: str, second: str, args: tuple, kwargs: dict) -> tuple:
    vals = list(args) + [kwargs.pop(k) for k in (first, second)[len(args):] if k in kwargs]
    if kwargs or len(vals) != 2:
        raise TypeError(f"{name}() takes 2 arguments ({first}, {second}); got {len(args)} positional and "
                        f"{sorted(kwargs) if kwargs else 'no other'} keyword arguments")
    return tuple(vals)


swapaxes_ = _transpose_alias("swapaxes_", "axis0", "axis1", "NumPy's")
swapdims_ = _transpose_alias("swapdims_", "dim0", "dim1", "another of torch's")


def _ints(v: Any, what: str, fn: str) -> tuple:
    if isinstance(v, Tensor) or not isinstance(v, (list, tuple)):
        raise TypeError(f"{fn}(): argument '{what}' must be a tuple of ints, not {type(v).__name__}")
    out = []
    for x in v:
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            raise TypeError(f"{fn}(): argument '{what}' must be a tuple of ints, but found element of type "
                            f"{type(x).__name__}")
        out.append(int(x))
    return tuple(out)


def _geometry(input: Tensor, size, stride, storage_offset, fn: str):
    # (storage tensor, offset, shape, strides in bytes) of input.as_strided(...)
    size = _ints(size, "size", fn)
    stride = _ints(stride, "stride", fn)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for {len(size)} sizes")
    if any(n < 0 for n in size):
        raise RuntimeError(f"{fn}(): negative size in {list(size)}")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    base = input._base if input._base is not None else input
    item = input.element_size()
    if storage_offset is None:
        storage_offset = _offset_in(input, base)
    elif isinstance(storage_offset, (bool, np.bool_)) or not isinstance(storage_offset, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'storage_offset' must be int, not {type(storage_offset).__name__}")
    storage_offset = int(storage_offset)
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    numel = base.numel()
    need = storage_offset + 1 + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else 0
    if need > numel:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{storage_offset}, and itemsize {item} requiring a storage size of {need * item} are "
                           f"out of bounds for storage of size {numel * item}")
    return base, storage_offset, size, tuple(st * item for st in stride)


def _offset_in(input: Tensor, base: Tensor) -> int:
    # input's first element, in elements from base's first (its storage offset)
    if input is base or input.numel() == 0:
        return 0
    return (input.data_ptr() - base.data_ptr()) // input.element_size()


@composite_op("as_strided")
def as_strided(input, size, stride, storage_offset=None) -> Tensor:
    """A view of ``input``'s storage with the given sizes and strides (``torch.as_strided``).

    The storage is the memory of the tensor ``input`` is a view of (or
    ``input``'s own), counted in elements; ``storage_offset`` says where the
    view starts in it (default: where ``input`` starts). Several positions of
    the view may alias one element (a stride of 0, overlapping windows);
    their gradients are then summed into that element. retrograd's storage
    is NumPy's memory of the base tensor, in C order (for a base that is not
    C-contiguous, the view is of a C-ordered copy).

    Parameters
    ----------
    input : Tensor
        The tensor whose storage is viewed.
    size : tuple of ints
        The view's shape.
    stride : tuple of ints
        The view's strides, in elements (non-negative).
    storage_offset : int, optional
        The view's first element in the storage.

    Returns
    -------
    Tensor
        The view (it shares memory with ``input``).

    Raises
    ------
    RuntimeError
        If the view reaches past the storage, or the lengths of ``size`` and ``stride`` differ.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.arange(9.0)
    >>> rg.as_strided(x, (2, 2), (3, 1), 1)
    tensor([[1., 2.],
            [4., 5.]])
    >>> rg.as_strided(x, (3, 2), (1, 1))    # overlapping windows
    tensor([[0., 1.],
            [1., 2.],
            [2., 3.]])
    """
    input = _self(input, "as_strided")
    base, offset, size, strides = _geometry(input, size, stride, storage_offset, "as_strided")
    return _abi._as_strided(base, offset, size, strides)


def as_strided_(input, size, stride, storage_offset=None) -> Tensor:
    """:func:`as_strided` in place: ``input`` becomes that view of its storage (``torch.as_strided_``).

    Parameters
    ----------
    input : Tensor
        The tensor that becomes the view.
    size : tuple of ints
        The new shape.
    stride : tuple of ints
        The new strides, in elements.
    storage_offset : int, optional
        The first element in the storage (default: where ``input`` starts).

    Returns
    -------
    Tensor
        ``input``.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.arange(6.0)
    >>> x.as_strided_((2, 2), (2, 1))
    tensor([[0., 1.],
            [2., 3.]])
    """
    input = _self(input, "as_strided_")
    return _abi._inplace_view(input, "as_strided_", lambda t: as_strided(t, size, stride, storage_offset), ())


@composite_op("as_strided_scatter")
def as_strided_scatter(input, src, size, stride, storage_offset=None) -> Tensor:
    """``input`` with the elements of ``input.as_strided(size, stride, storage_offset)`` replaced by ``src`` (out of place).

    Parameters
    ----------
    input : Tensor
        The tensor to copy; its storage is the contiguous layout of its values.
    src : Tensor
        The values written, of shape ``size``.
    size : tuple of ints
        The shape of the strided view written to.
    stride : tuple of ints
        Its strides, in elements.
    storage_offset : int, optional
        Its first element (default 0).

    Returns
    -------
    Tensor
        A new tensor of ``input``'s shape; gradients flow to ``input``
        (outside the view) and to ``src``.

    Raises
    ------
    RuntimeError
        If ``src``'s shape is not ``size``, or the view reaches past ``input``.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.as_strided_scatter(rg.zeros(6), rg.ones(2), (2,), (3,))
    tensor([1., 0., 0., 1., 0., 0.])
    """
    input = _self(input, "as_strided_scatter")
    if not isinstance(src, Tensor):
        raise TypeError(f"as_strided_scatter(): argument 'src' must be Tensor, not {type(src).__name__}")
    contig = input.contiguous()
    _, offset, size, strides = _geometry(contig, size, stride, 0 if storage_offset is None else storage_offset,
                                         "as_strided_scatter")
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(size)}")
    return _abi._view_scatter(contig, src.to(input.dtype), offset, size, strides)


def _as_strided_method(self, size, stride, storage_offset=None) -> Tensor:
    return as_strided(self, size, stride, storage_offset)


def _as_strided_inplace_method(self, size, stride, storage_offset=None) -> Tensor:
    return as_strided_(self, size, stride, storage_offset)


def _as_strided_scatter_method(self, src, size, stride, storage_offset=None) -> Tensor:
    return as_strided_scatter(self, src, size, stride, storage_offset)


for _fn, _of in ((_as_strided_method, as_strided), (_as_strided_inplace_method, as_strided_),
                 (_as_strided_scatter_method, as_strided_scatter)):
    # the method forms: the functions' docs, under the methods' names
    _fn.__doc__ = _of.__doc__
    _fn.__name__ = _fn.__qualname__ = _of.__name__
del _fn, _of


#: name -> function, installed in Tensor's dict by core's __init__
METHODS: Dict[str, Callable] = {
    "squeeze_": squeeze_, "unsqueeze_": unsqueeze_, "t_": t_, "transpose_": transpose_, "swapaxes_": swapaxes_,
    "swapdims_": swapdims_, "as_strided": _as_strided_method, "as_strided_": _as_strided_inplace_method,
    "as_strided_scatter": _as_strided_scatter_method,
}
