"""Sampling from distributions given by tensors: multinomial, bernoulli,
normal and poisson (torch's functions of those names).

The draws come from retrograd's generator (``manual_seed``) or the one passed
as ``generator=``; their values follow torch's distribution, not its stream.
"""
from __future__ import annotations

import numpy as np

from retrograd.core import _creation
from retrograd.core._dtypes import is_floating_dtype as _is_floating_dtype
from retrograd.core.abi import Tensor, composite_op

__all__ = ["multinomial", "bernoulli", "normal", "poisson"]


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
    if not _is_floating_dtype(probs.dtype):
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


def _floating(input, fn):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(input).__name__}")
    arr = np.asarray(input.detach())
    if not _is_floating_dtype(arr.dtype):
        raise NotImplementedError(f"\"{fn}\" not implemented for {arr.dtype} tensors (as torch); convert the "
                                  f"input first, e.g. x.float()")
    return arr


@composite_op("bernoulli")
def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """0/1 draws, each 1 with the probability ``input`` holds there (or ``p``).

    Parameters
    ----------
    input : Tensor
        Probabilities in [0, 1], floating (with ``p``, only its shape and dtype count).
    p : float, optional
        One probability for every element instead of ``input``'s values.
    generator : numpy.random.Generator, optional
        Draw from this generator instead of retrograd's.

    Returns
    -------
    Tensor
        Of ``input``'s shape and dtype; it does not require grad (torch's
        gradient of a draw is zero).

    Raises
    ------
    RuntimeError
        For a probability outside [0, 1].
    NotImplementedError
        For an integer or bool input.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.bernoulli(rg.tensor([0.0, 1.0, 1.0]))
    tensor([0., 1., 1.])
    """
    arr = _floating(input, "bernoulli")
    probs = arr if p is None else np.full(arr.shape, float(p))
    if not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError("bernoulli: expected every probability in [0, 1] (as torch)")
    g = _creation._generator(generator, "bernoulli")
    out = (g.random(arr.shape) < probs).astype(arr.dtype)
    return _creation._make(out, input.device, False)


@composite_op("normal")
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Draws from normal distributions: ``mean + std * N(0, 1)``, element by element.

    ``mean`` and ``std`` may be tensors (broadcast together) or numbers; with
    two numbers, ``size`` gives the shape. As in torch, the draw's gradient
    with respect to ``mean`` and ``std`` is zero (write ``mean + std *
    rg.randn_like(mean)`` for the reparameterized one).

    Parameters
    ----------
    mean : Tensor or float
        The means.
    std : Tensor or float, optional
        The standard deviations, non-negative (default 1).
    size : sequence of int, optional
        The shape, when ``mean`` and ``std`` are both numbers (required then).
    generator : numpy.random.Generator, optional
        Draw from this generator instead of retrograd's.
    dtype, device, requires_grad : optional
        For two numbers: as the factories (default: the default dtype).

    Returns
    -------
    Tensor

    Raises
    ------
    RuntimeError
        For a negative ``std``.
    TypeError
        For two numbers without ``size``.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.normal(rg.zeros(3), 0.0)
    tensor([0., 0., 0.])
    >>> rg.normal(2.0, 0.0, size=(2,))
    tensor([2., 2.])
    """
    g = _creation._generator(generator, "normal")
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: two numbers need size= "
                            "(normal(0.0, 1.0, size=(2, 3)))")
        if float(std) < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std)}")
        shape = tuple(size)
        dt = _creation._dtype(dtype, "normal") or _creation.get_default_dtype()
        out = (float(mean) + float(std) * g.standard_normal(shape)).astype(dt)
        return _creation._make(out, device, requires_grad)
    like = mean if isinstance(mean, Tensor) else std
    std_values = np.asarray(std.detach()) if isinstance(std, Tensor) else np.asarray(float(std))
    if (std_values < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(tuple(mean.shape) if isinstance(mean, Tensor) else (),
                                tuple(std.shape) if isinstance(std, Tensor) else ())
    eps = _creation._make(g.standard_normal(shape).astype(like.dtype), like.device, False)
    from retrograd.core import grad_mode, where
    with grad_mode.no_grad():
        out = mean + std * eps
    # torch's gradient of a draw is zero (its NormalBackward gives zeros, it
    # does not reparameterize): edges to mean and std that carry zeros
    never = _creation._make(np.zeros((), dtype=bool), like.device, False)
    for t in (mean, std):
        if isinstance(t, Tensor) and t.requires_grad:
            out = out + where(never, t, 0.0)
    return out


@composite_op("poisson")
def poisson(input, generator=None) -> Tensor:
    """Draws from Poisson distributions with the rates ``input`` holds.

    Parameters
    ----------
    input : Tensor
        The rates, non-negative, floating.
    generator : numpy.random.Generator, optional
        Draw from this generator instead of retrograd's.

    Returns
    -------
    Tensor
        The counts, in ``input``'s dtype; it does not require grad (torch's
        gradient of a draw is zero).

    Raises
    ------
    RuntimeError
        For a negative rate.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.poisson(rg.tensor([0.0, 0.0]))
    tensor([0., 0.])
    """
    arr = _floating(input, "poisson")
    if (arr < 0).any() or np.isnan(arr).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    g = _creation._generator(generator, "poisson")
    return _creation._make(g.poisson(arr).astype(arr.dtype), input.device, False)
