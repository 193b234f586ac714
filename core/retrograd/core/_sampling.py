"""Sampling indices from tensors of weights: multinomial (torch.multinomial).

The draws come from retrograd's generator (``manual_seed``) or the one passed
as ``generator=``; their values follow torch's distribution, not its stream.
"""
from __future__ import annotations

import numpy as np

from retrograd.core import _creation
from retrograd.core.abi import Tensor, composite_op

__all__ = ["multinomial"]


@composite_op("multinomial")
def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    """Indices drawn from the categorical distributions given by the rows of ``input``.

    Each row holds non-negative weights (they need not sum to 1). Without
    replacement, an index is drawn at most once per row, so ``num_samples``
    may not exceed the number of categories; once the categories of positive
    weight are drawn, the others follow in index order (as torch does).

    Parameters
    ----------
    input : Tensor
        Weights: 1-D (one distribution) or 2-D (one per row), floating.
    num_samples : int
        How many indices to draw per row (positive).
    replacement : bool, optional
        Draw with replacement (default False).
    generator : numpy.random.Generator, optional
        Draw from this generator instead of retrograd's.

    Returns
    -------
    Tensor
        int64 indices of shape ``(num_samples,)`` or ``(rows, num_samples)``.

    Raises
    ------
    RuntimeError
        For an input that is not 1-D or 2-D or not floating, a weight that is
        negative, inf or nan, a row of zeros, a ``num_samples`` that is not
        positive, or more samples without replacement than categories.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> idx = rg.multinomial(rg.tensor([0.0, 1.0, 3.0]), 2)
    >>> sorted(idx.tolist()), idx.dtype
    ([1, 2], dtype('int64'))
    >>> rg.multinomial(rg.tensor([[0.0, 1.0], [1.0, 0.0]]), 3, replacement=True).tolist()
    [[1, 1, 1], [0, 0, 0]]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be Tensor, not {type(input).__name__}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"multinomial(): argument 'num_samples' must be int, not {type(num_samples).__name__}")
    probs = np.asarray(input.detach())
    if probs.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim (got {probs.ndim} dims)")
    if probs.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {probs.dtype}")
    n = int(num_samples)
    if n <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples (got {n})")
    categories = probs.shape[-1]
    if not replacement and n > categories:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"({n} > {categories})")
    rows = np.atleast_2d(probs).astype(np.float64)
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=-1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    g = _creation._generator(generator, "multinomial")
    if replacement:
        # inverse CDF: one uniform per sample, searched in each row's cumulative weights
        cdf = np.cumsum(rows, axis=-1)
        cdf /= cdf[:, -1:]
        u = g.random((rows.shape[0], n))
        out = np.stack([np.searchsorted(c, v, side="right") for c, v in zip(cdf, u)])
        out = np.minimum(out, categories - 1)
    else:
        # sequential draws without replacement, all at once: the k smallest
        # exponential keys E / w (weight 0: key inf, after all the others,
        # in index order by the stable sort)
        with np.errstate(divide="ignore"):
            keys = g.standard_exponential(rows.shape) / rows
        out = np.argsort(keys, axis=-1, kind="stable")[:, :n]
    out = out.astype(np.int64)
    if probs.ndim == 1:
        out = out[0]
    return _creation._make(out, input.device, False)
