"""Flatten and Unflatten."""
from __future__ import annotations

import math
from collections.abc import Sequence

from retrograd.core import Tensor
from retrograd.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Merge the dims ``start_dim`` to ``end_dim`` of the input into one
    (a view when the layout allows it), as ``Tensor.flatten``.

    Parameters
    ----------
    start_dim : int, optional
        The first dim merged (default 1: the batch dim stays).
    end_dim : int, optional
        The last dim merged (default -1).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Flatten()
    >>> m
    Flatten(start_dim=1, end_dim=-1)
    >>> m(rg.ones(32, 1, 5, 5)).shape
    (32, 25)
    >>> rg.nn.Flatten(0, 2)(rg.ones(32, 1, 5, 5)).shape
    (160, 5)
    """

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        """Flatten ``input``.

        Parameters
        ----------
        input : Tensor
            Any tensor with the dims named.

        Returns
        -------
        Tensor
            The tensor with ``start_dim`` .. ``end_dim`` merged.
        """
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def _check_sizes(sizes: object) -> None:
    # torch's check: a tuple or list of ints (one of them may be -1)
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(sizes).__name__}")
    for i, s in enumerate(sizes):
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos {i}")


class Unflatten(Module):
    """Split dim ``dim`` of the input into the dims ``unflattened_size``
    (the inverse of :class:`Flatten`).

    Parameters
    ----------
    dim : int
        The dim to split.
    unflattened_size : tuple or list of int
        Its new shape; their product must equal the dim's size, and one
        entry may be -1 (inferred).

    Raises
    ------
    TypeError
        If ``dim`` is not an int (named dims are not supported) or
        ``unflattened_size`` is not a sequence of ints.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Unflatten(1, (2, 5, 5))
    >>> m
    Unflatten(dim=1, unflattened_size=(2, 5, 5))
    >>> m(rg.ones(2, 50)).shape
    (2, 2, 5, 5)
    """

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"invalid argument type for dim parameter: {type(dim).__name__} (an int is needed; "
                            "retrograd has no named dims)")
        _check_sizes(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        """Unflatten ``input``.

        Parameters
        ----------
        input : Tensor
            A tensor whose dim ``dim`` has ``prod(unflattened_size)`` elements.

        Returns
        -------
        Tensor
            The reshaped tensor (a view when the layout allows it).

        Raises
        ------
        RuntimeError
            If the sizes do not multiply up to the dim's size.
        IndexError
            If ``dim`` is out of range.
        """
        shape = list(input.shape)
        nd = len(shape)
        if not -nd <= self.dim < max(nd, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got "
                             f"{self.dim})")
        d = self.dim % nd
        sizes = list(self.unflattened_size)
        known = math.prod(s for s in sizes if s != -1)
        ok = (known == shape[d]) if -1 not in sizes else (sizes.count(-1) == 1 and known and shape[d] % known == 0)
        if not ok:
            raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {self.dim} "
                               f"({shape[d]}) in the input tensor")
        return input.reshape(tuple(shape[:d] + sizes + shape[d + 1:]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
