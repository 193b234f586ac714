"""The feature and alpha dropouts as functions (re-exported by
``retrograd.nn.functional``): dropout1d, dropout2d, dropout3d, alpha_dropout,
feature_alpha_dropout.

As torch's kernels, each is one noise tensor times the input: the noise is
drawn on the host from retrograd's global generator (``rg.manual_seed``), one
value per element, or per ``(sample, channel)`` for the feature dropouts, so
that whole channels are zeroed. The gradient is the noise.
"""
from __future__ import annotations

import warnings

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import composite_op
from retrograd.nn.functional import _inexact, _t

__all__ = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]

# selu's alpha * scale: the value SELU saturates to, -_ALPHA, is what alpha
# dropout sets the dropped units to (Klambauer et al., 2017)
_ALPHA = 1.7580993408473766

_ARGS = """input : Tensor
        A floating-point tensor.
    p : float, optional
        The probability of dropping {what} (default 0.5), in [0, 1].
    training : bool, optional
        Apply the dropout (default {training}); otherwise ``input`` itself is returned.
    inplace : bool, optional
        Overwrite ``input`` and return it (default False)."""


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(x, p, lead, alpha):
    """The multiplier and (alpha dropout) the offset of ATen's _dropout_impl.
    The first ``lead`` dims get a value each (all dims when None)."""
    if lead is not None and x.ndim + 2 - lead < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(x.shape) if lead is None else tuple(x.shape[:lead]) + (1,) * (x.ndim - lead)
    dtype = x.dtype if _inexact(x.dtype) else _c.get_default_dtype()
    # drawn by rg.rand (the host generator, as torch's CPU one) and kept a
    # tensor, so that rg.compile replays the draw on every call
    keep = (_c.rand(shape) >= p).to(dtype)
    if not isinstance(x._array, np.ndarray):
        keep = keep.to(x.device)
    if not alpha:
        return keep * (1.0 / (1.0 - p)), None
    a = 1.0 / float(np.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p)))
    # kept: a * x + a * alpha * p; dropped: a * (-alpha) + a * alpha * p
    return keep * a, (keep - 1.0) * (_ALPHA * a) + _ALPHA * a * p


def _dropout_impl(input, p, training, inplace, lead, alpha):
    _check_p(p)
    x = _t(input)
    if p == 0 or not training or x.numel() == 0:
        # torch unsqueezes an unbatched input and squeezes the result: a new view
        return x if inplace or lead != 1 else x.view(tuple(x.shape))
    if p == 1:
        # every element (or channel) dropped: torch multiplies by a 0-d zero
        scale, shift = _c.zeros((), dtype=x.dtype, device=x.device), None
    else:
        scale, shift = _noise(x, p, lead, alpha)
    if inplace:
        x *= scale
        if shift is not None:
            x += shift
        return x
    out = _c.mul(x, scale)
    return out if shift is None else _c.add(out, shift)


@composite_op("feature_dropout")
def _feature_dropout(x, p, training, inplace, lead=2):
    # lead=1: a channels-first input without its batch dim
    return _dropout_impl(x, p, training, inplace, lead, False)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a ``(N, C, L)`` or ``(C, L)`` input, each with
    probability ``p``, and scale the others by ``1 / (1 - p)``.

    Parameters
    ----------
    {args}

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].
    RuntimeError
        For an input that is neither 2-D nor 3-D.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> _ = rg.manual_seed(0)
    >>> y = F.dropout1d(rg.ones(1, 8, 3), p=0.5)
    >>> all(len(set(row)) == 1 for row in y[0].tolist())     # each channel kept or dropped as a whole
    True
    >>> sorted(set(y.flatten().tolist()))
    [0.0, 2.0]
    """
    _check_p(p)
    x = _t(input)
    if x.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {x.ndim}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(x, p, training, inplace, 2 if x.ndim == 3 else 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a ``(N, C, H, W)`` input, each with probability
    ``p``, and scale the others by ``1 / (1 - p)``.

    As torch's (for now), a 3-D input is read as ``(N, C, L)`` (the 1-D
    channel dropout of :func:`dropout1d`), with a warning; other ranks warn
    that they are deprecated and zero ``(N, C)`` slices all the same.

    Parameters
    ----------
    {args}

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].
    RuntimeError
        For a 0-D or 1-D input.

    Warns
    -----
    UserWarning
        For an input that is not 4-D.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> _ = rg.manual_seed(0)
    >>> y = F.dropout2d(rg.ones(2, 4, 3, 3), p=0.25)
    >>> [sorted(set(c.flatten().tolist())) for c in y[0]]
    [[1.3333333730697632], [1.3333333730697632], [0.0], [0.0]]
    >>> F.dropout2d(rg.ones(1, 1, 2, 2), training=False)
    tensor([[[[1., 1.],
              [1., 1.]]]])
    """
    _check_p(p)
    x = _t(input)
    if x.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {x.ndim}-D input to dropout2d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            "that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if x.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature_dropout(x, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input,
    each with probability ``p``, and scale the others by ``1 / (1 - p)``.

    Other ranks warn that they are deprecated (as torch's); anything but a
    5-D input is then read as unbatched.

    Parameters
    ----------
    {args}

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].

    Warns
    -----
    UserWarning
        For an input that is neither 4-D nor 5-D.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> _ = rg.manual_seed(0)
    >>> y = F.dropout3d(rg.ones(3, 2, 2, 2), p=0.5)
    >>> [sorted(set(c.flatten().tolist())) for c in y]
    [[2.0], [0.0], [0.0]]
    """
    _check_p(p)
    x = _t(input)
    if x.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {x.ndim}-D input to dropout3d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            "that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    # any rank but 5 is read as unbatched, as torch's
    return _feature_dropout(x, p, training, inplace, 2 if x.ndim == 5 else 1)


@composite_op("alpha_dropout")
def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for self-normalizing networks (SELU): dropped elements are set
    to SELU's negative saturation value, and an affine map keeps the mean
    and variance of a zero-mean, unit-variance input (Klambauer et al., 2017).

    Parameters
    ----------
    {args}

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> _ = rg.manual_seed(0)
    >>> y = F.alpha_dropout(rg.randn(100000), p=0.2, training=True)
    >>> round(float(y.mean()), 1), round(float(y.std()), 1)
    (0.0, 1.0)
    >>> F.alpha_dropout(rg.ones(2))         # training is False by default
    tensor([1., 1.])
    """
    return _dropout_impl(input, p, training, inplace, None, True)


@composite_op("feature_alpha_dropout")
def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """:func:`alpha_dropout` of whole channels: each ``(sample, channel)``
    slice of an ``(N, C, *)`` input is kept or dropped as one.

    Parameters
    ----------
    {args}

    Returns
    -------
    Tensor
        Of the input's shape.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].
    RuntimeError
        In training, for an input of fewer than 2 dims.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.nn.functional as F
    >>> _ = rg.manual_seed(0)
    >>> y = F.feature_alpha_dropout(rg.zeros(1, 4, 2), p=0.5, training=True)
    >>> [len(set(c.tolist())) for c in y[0]]          # one value per channel
    [1, 1, 1, 1]
    """
    return _dropout_impl(input, p, training, inplace, 2, True)


_what = {"dropout1d": "a channel", "dropout2d": "a channel", "dropout3d": "a channel",
         "alpha_dropout": "an element", "feature_alpha_dropout": "a channel"}
for _name, _fn in [("dropout1d", dropout1d), ("dropout2d", dropout2d), ("dropout3d", dropout3d),
                   ("alpha_dropout", alpha_dropout), ("feature_alpha_dropout", feature_alpha_dropout)]:
    _fn.__doc__ = str(_fn.__doc__).replace("{args}", _ARGS.format(
        what=_what[_name], training="False" if "alpha" in _name else "True"))
del _name, _fn, _what
