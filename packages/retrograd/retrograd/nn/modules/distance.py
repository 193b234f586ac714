"""CosineSimilarity and PairwiseDistance."""
from __future__ import annotations

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """The ``p``-norm distance between the rows of two inputs:
    ``||x1 - x2 + eps||_p`` over the last dimension (``F.pairwise_distance``).

    Parameters
    ----------
    p : float, optional
        The order of the norm (default 2).
    eps : float, optional
        Added to the difference, against a zero norm (default 1e-6).
    keepdim : bool, optional
        Keep the reduced dimension with size 1 (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.PairwiseDistance(eps=0.0)
    >>> m(rg.tensor([[0.0, 0.0], [1.0, 1.0]]), rg.tensor([[3.0, 4.0], [1.0, 1.0]]))
    tensor([5., 0.])
    """

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """The distances between ``x1`` and ``x2``.

        Parameters
        ----------
        x1, x2 : Tensor
            Broadcastable, of shape ``(N, D)`` or ``(D,)``.

        Returns
        -------
        Tensor
            Of shape ``(N,)`` (or ``(N, 1)`` with ``keepdim``).
        """
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine similarity of two inputs along ``dim`` (``F.cosine_similarity``).

    Parameters
    ----------
    dim : int, optional
        The dimension of the vectors (default 1).
    eps : float, optional
        A lower bound of each norm (default 1e-8).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.CosineSimilarity(dim=0)
    >>> m(rg.tensor([1.0, 0.0]), rg.tensor([0.0, 2.0]))
    tensor(0.)
    """

    __constants__ = ["dim", "eps"]

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """The similarities of ``x1`` and ``x2``.

        Parameters
        ----------
        x1, x2 : Tensor
            Broadcastable tensors.

        Returns
        -------
        Tensor
            The broadcast shape without ``dim``.
        """
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
