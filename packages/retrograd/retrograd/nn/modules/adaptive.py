"""AdaptiveLogSoftmaxWithLoss: the adaptive softmax of Grave et al. (2016) for large vocabularies."""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.container import ModuleList, Sequential
from retrograd.nn.modules.linear import Linear
from retrograd.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _host(t: Any) -> np.ndarray:
    a = t._array
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


class AdaptiveLogSoftmaxWithLoss(Module):
    """An efficient softmax over many classes, ordered from most to least frequent (Grave et al., 2016).

    The classes are split by ``cutoffs`` into a head (the ``cutoffs[0]`` most
    frequent classes) and clusters. The ``head`` layer scores the head's
    classes plus one entry per cluster; cluster ``i`` has its own two-layer
    projection (``tail[i]``) of reduced width ``in_features // div_value **
    (i + 1)``. A class of a cluster has log-probability ``log p(cluster) +
    log p(class | cluster)``, and only the rows whose target lies in a
    cluster go through its projection.

    Parameters
    ----------
    in_features : int
        The size of each input sample.
    n_classes : int
        The number of classes.
    cutoffs : sequence of int
        Increasing, unique, in ``[1, n_classes - 1]``: the first class of each cluster.
    div_value : float, optional
        The factor by which each cluster's projection narrows (default 4.0).
    head_bias : bool, optional
        Give the head a bias (default False).
    device, dtype : optional
        The parameters' device and dtype (default dtype: the default dtype).

    Raises
    ------
    ValueError
        For empty, unsorted, repeated, non-integer or out-of-range cutoffs.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> asm = rg.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7], div_value=2.0)
    >>> [name for name, _ in asm.named_parameters()]
    ['head.weight', 'tail.0.0.weight', 'tail.0.1.weight', 'tail.1.0.weight', 'tail.1.1.weight']
    >>> out = asm(rg.randn(5, 8), rg.tensor([0, 3, 5, 8, 9]))
    >>> out.output.shape, out.loss.shape
    ((5,), ())
    >>> [round(p, 5) for p in asm.log_prob(rg.randn(2, 8)).exp().sum(1).tolist()]
    [1.0, 1.0]
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > (n_classes - 1)
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(self.in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Draw the head's and the projections' parameters again (as :class:`~retrograd.nn.Linear`'s).

        Examples
        --------
        >>> import retrograd as rg
        >>> asm = rg.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])
        >>> asm.reset_parameters()
        >>> asm.tail[0][0].weight.shape
        (1, 4)
        """
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection.children():
                layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        """The log-probability of each target and the mean negative log-likelihood.

        Parameters
        ----------
        input_ : Tensor
            Of shape ``(N, in_features)``, or ``(in_features,)`` for one sample.
        target_ : Tensor
            Integer classes in ``[0, n_classes)``, of shape ``(N,)`` (or ``()``).

        Returns
        -------
        _ASMoutput
            A namedtuple ``(output, loss)``: ``output`` (shape ``(N,)`` or
            ``()``) holds each target's log-probability, ``loss`` is
            ``-output.mean()``.

        Raises
        ------
        RuntimeError
            For mismatched shapes, a target of more than 1 dim, or targets out of range.
        """
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        is_batched = targ_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = _host(target_).reshape(-1).astype(np.int64)
        batch_size = target.shape[0]
        # which head entry each row reads: its class, or its cluster's entry
        gather_inds = np.zeros(batch_size, dtype=np.int64)
        rows_seen, pieces, used_rows = [], [], 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            rows = np.flatnonzero((target >= low) & (target < high))
            if rows.size == 0:
                continue
            if i == 0:
                gather_inds[rows] = target[rows]
                pieces.append(_c.zeros(rows.size, dtype=input.dtype, device=input.device))
            else:
                gather_inds[rows] = self.shortlist_size + i - 1
                subset = _c.index_select(input, 0, _c.tensor(rows, device=input.device))
                cluster_logprob = F.log_softmax(self.tail[i - 1](subset), dim=1)
                relative = _c.tensor((target[rows] - low)[:, None], device=input.device)
                pieces.append(_c.gather(cluster_logprob, 1, relative).squeeze(1))
            rows_seen.append(rows)
            used_rows += rows.size
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min()}, {target.max()}] were found. ")
        # the cluster terms, put back in row order
        order = np.concatenate(rows_seen)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        tail_part = _c.index_select(_c.cat(pieces), 0, _c.tensor(inverse, device=input.device))
        head_logprob = F.log_softmax(self.head(input), dim=1)
        head_part = _c.gather(head_logprob, 1, _c.tensor(gather_inds[:, None], device=input.device)).squeeze(1)
        output = _c.add(tail_part, head_part)
        loss = _c.neg(output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(_c.add(cluster_logprob, head_logprob[:, self.shortlist_size + i].unsqueeze(1)))
        return _c.cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """The log-probabilities of all ``n_classes`` classes.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, in_features)``.

        Returns
        -------
        Tensor
            Of shape ``(N, n_classes)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> asm = rg.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])
        >>> asm.log_prob(rg.randn(3, 4)).shape
        (3, 6)
        """
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most probable class of each sample: ``log_prob(input).argmax(1)``,
        computed from the head alone when its best entry is a class.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, in_features)``.

        Returns
        -------
        Tensor
            int64, of shape ``(N,)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> asm = rg.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])
        >>> x = rg.randn(5, 4)
        >>> bool((asm.predict(x) == asm.log_prob(x).argmax(1)).all())
        True
        """
        with _c.no_grad():
            head_output = self.head(input)
            output = _host(_c.argmax(head_output, 1)).copy()
            not_in_shortlist = output >= self.shortlist_size
            if not_in_shortlist.any():
                rows = _c.tensor(np.flatnonzero(not_in_shortlist), device=input.device)
                log_prob = self._get_full_log_prob(_c.index_select(input, 0, rows),
                                                   _c.index_select(head_output, 0, rows))
                output[not_in_shortlist] = _host(_c.argmax(log_prob, 1))
        return _c.tensor(output, device=input.device)
