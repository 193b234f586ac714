"""Dropout."""
from __future__ import annotations

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale
    the others by ``1 / (1 - p)``; in eval mode, the identity.

    The mask is drawn from retrograd's global generator (``rg.manual_seed``).

    Parameters
    ----------
    p : float, optional
        The probability of zeroing an element (default 0.5), in [0, 1].
    inplace : bool, optional
        Scale the input in place (default False).

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> m = rg.nn.Dropout(p=0.5)
    >>> m
    Dropout(p=0.5, inplace=False)
    >>> y = m(rg.ones(1000))
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    >>> m.eval()(rg.ones(3))
    tensor([1., 1., 1.])
    """

    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply dropout (training mode) or return ``input`` (eval mode).

        Parameters
        ----------
        input : Tensor
            Any tensor.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
