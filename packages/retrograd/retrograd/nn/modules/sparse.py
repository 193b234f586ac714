"""Embedding and EmbeddingBag."""
from __future__ import annotations

from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn import init
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``:
    ``weight[input]`` for an integer ``input``.

    Parameters
    ----------
    num_embeddings : int
        The size of the table.
    embedding_dim : int
        The size of each vector.
    padding_idx : int, optional
        A row that gets no gradient (a padding token): it starts as zeros
        and stays as training leaves it. Negative counts from the end.
    max_norm : float, optional
        Rows that ``input`` looks up and whose ``norm_type``-norm exceeds it
        are renormalised to ``max_norm``, in place, on each call.
    norm_type : float, optional
        The p of the p-norm for ``max_norm`` (default 2).
    scale_grad_by_freq : bool, optional
        Divide each row's gradient by how often the batch looks it up
        (default False).
    sparse : bool, optional
        Must be False: retrograd's gradients are dense.
    _weight : Tensor, optional
        The initial table, of shape ``(num_embeddings, embedding_dim)``
        (default: drawn from N(0, 1), as torch).
    _freeze : bool, optional
        With ``_weight``: the weight does not require grad (default False).
    device : str or Device, optional
        Where the weight lives (default: the CPU).
    dtype : dtype, optional
        The weight's dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(num_embeddings, embedding_dim)``.

    Raises
    ------
    AssertionError
        If ``padding_idx`` is outside the table or ``_weight`` has the wrong
        shape (torch's classes).
    ValueError
        With ``sparse=True``.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> m = rg.nn.Embedding(10, 3, padding_idx=0)
    >>> m
    Embedding(10, 3, padding_idx=0)
    >>> m(rg.tensor([[1, 2, 4, 5], [4, 3, 2, 0]])).shape
    (2, 4, 3)
    >>> m.weight[0].detach()
    tensor([0., 0., 0.])
    """

    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse"]

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if sparse:
            raise ValueError("Embedding: sparse=True (a sparse gradient for weight) is not supported; "
                             "retrograd's gradients are dense: pass sparse=False")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(_c.empty((num_embeddings, embedding_dim), dtype=dtype, device=device),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """Draw the weight again from N(0, 1), the padding row set to zeros.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Embedding(4, 2, padding_idx=1)
        >>> m.reset_parameters()
        >>> m.weight[1].detach()
        tensor([0., 0.])
        """
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with _c.no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor) -> Tensor:
        """Look up the rows ``input`` names.

        Parameters
        ----------
        input : Tensor
            Integer indices of any shape, in ``[0, num_embeddings)``.

        Returns
        -------
        Tensor
            Of shape ``(*input.shape, embedding_dim)``.
        """
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose table is ``embeddings`` (shared, not copied).

        Parameters
        ----------
        embeddings : Tensor
            The table, of shape ``(num_embeddings, embedding_dim)``.
        freeze : bool, optional
            The weight does not require grad (default True), so training
            leaves it unchanged.
        padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse
            As for :class:`Embedding`. The padding row keeps its values
            (only its gradient is cut), as torch's.

        Returns
        -------
        Embedding
            The new layer.

        Raises
        ------
        AssertionError
            If ``embeddings`` is not 2-D.

        Examples
        --------
        >>> import retrograd as rg
        >>> table = rg.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
        >>> m = rg.nn.Embedding.from_pretrained(table)
        >>> m(rg.tensor([1]))
        tensor([[4. , 5.1, 6.3]])
        >>> m.weight.requires_grad
        False
        """
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (``F.embedding_bag``),
    without building each bag's rows: a lookup table of ``num_embeddings``
    vectors of size ``embedding_dim``.

    Parameters
    ----------
    num_embeddings : int
        The size of the table.
    embedding_dim : int
        The size of each vector.
    max_norm : float, optional
        Rows looked up whose ``norm_type``-norm exceeds it are renormalised
        to ``max_norm``, in place, on each call.
    norm_type : float, optional
        The p of the p-norm for ``max_norm`` (default 2).
    scale_grad_by_freq : bool, optional
        Divide each row's gradient by how often the input holds it (default
        False; not with ``mode="max"``).
    mode : {"mean", "sum", "max"}, optional
        The reduction over each bag (default ``"mean"``).
    sparse : bool, optional
        Must be False: retrograd's gradients are dense (the call raises).
    _weight : Tensor, optional
        The initial table, of shape ``(num_embeddings, embedding_dim)``
        (default: drawn from N(0, 1), as torch).
    include_last_offset : bool, optional
        The offsets hold one more entry, the end of the last bag (default False).
    padding_idx : int, optional
        An index left out of every bag; its row starts as zeros.
        Negative counts from the end.
    device : str or Device, optional
        Where the weight lives (default: the CPU).
    dtype : dtype, optional
        The weight's dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(num_embeddings, embedding_dim)``.

    Raises
    ------
    AssertionError
        If ``padding_idx`` is outside the table or ``_weight`` has the wrong
        shape (torch's classes).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.EmbeddingBag(10, 3, mode="sum")
    >>> m
    EmbeddingBag(10, 3, mode='sum')
    >>> m(rg.tensor([1, 2, 4, 5, 4, 3, 2, 9]), rg.tensor([0, 4])).shape
    (2, 3)
    """

    __constants__ = ["num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq", "mode",
                     "sparse", "include_last_offset", "padding_idx"]

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_c.empty((num_embeddings, embedding_dim), dtype=dtype, device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """Draw the weight again from N(0, 1), the padding row set to zeros.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.EmbeddingBag(4, 2, padding_idx=1)
        >>> m.reset_parameters()
        >>> m.weight[1].detach()
        tensor([0., 0.])
        """
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with _c.no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        """Reduce each bag of ``input`` to one vector.

        Parameters
        ----------
        input : Tensor
            Integer indices: 1-D with ``offsets``, or 2-D ``(B, L)``
            (one bag per row) without.
        offsets : Tensor, optional
            The start of each bag in a 1-D ``input``.
        per_sample_weights : Tensor, optional
            A weight per index (``mode="sum"`` only), of the input's shape.

        Returns
        -------
        Tensor
            Of shape ``(B, embedding_dim)``.
        """
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
                               self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose table is ``embeddings`` (shared, not copied).

        Parameters
        ----------
        embeddings : Tensor
            The table, of shape ``(num_embeddings, embedding_dim)``.
        freeze : bool, optional
            The weight does not require grad (default True).
        max_norm, norm_type, scale_grad_by_freq, mode, sparse, include_last_offset, padding_idx
            As for :class:`EmbeddingBag`. The padding row keeps its values.

        Returns
        -------
        EmbeddingBag
            The new layer.

        Raises
        ------
        AssertionError
            If ``embeddings`` is not 2-D.

        Examples
        --------
        >>> import retrograd as rg
        >>> table = rg.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> m = rg.nn.EmbeddingBag.from_pretrained(table)
        >>> m(rg.tensor([[0, 1]]))
        tensor([[2., 3.]])
        >>> m.weight.requires_grad
        False
        """
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
