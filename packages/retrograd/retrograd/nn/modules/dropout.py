"""The dropout layers: Dropout, Dropout1d/2d/3d (whole channels), AlphaDropout and
FeatureAlphaDropout (for SELU networks)."""
from __future__ import annotations

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    # what the dropout layers share: p, inplace, the check and the repr
    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
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


_LAYER_ARGS = """p : float, optional
        The probability of dropping {what} (default 0.5), in [0, 1].
    inplace : bool, optional
        {inplace}

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1]."""
_FORWARD_DOC = """Apply the dropout (training mode) or return ``input`` (eval mode).

        Parameters
        ----------
        input : Tensor
            {shape}

        Returns
        -------
        Tensor
            Of the input's shape.
        """


class Dropout1d(_DropoutNd):
    """In training mode, zero each channel of a ``(N, C, L)`` or ``(C, L)``
    input with probability ``p`` and scale the others by ``1 / (1 - p)``
    (:func:`retrograd.nn.functional.dropout1d`); in eval mode, the identity.

    Zeroing whole channels suits convolutional features, whose neighbouring
    elements are strongly correlated (Tompson et al., 2015).

    Parameters
    ----------
    {args}

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> m = rg.nn.Dropout1d(p=0.5)
    >>> m
    Dropout1d(p=0.5, inplace=False)
    >>> y = m(rg.ones(6, 3))
    >>> [row[0] for row in y.tolist()]
    [2.0, 0.0, 0.0, 0.0, 2.0, 2.0]
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """In training mode, zero each channel of a ``(N, C, H, W)`` input with
    probability ``p`` and scale the others by ``1 / (1 - p)``
    (:func:`retrograd.nn.functional.dropout2d`); in eval mode, the identity.

    A 3-D input is read as ``(N, C, L)``, with torch's warning.

    Parameters
    ----------
    {args}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Dropout2d(0.2)
    >>> m.eval()(rg.ones(1, 2, 1, 1)).flatten()
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """In training mode, zero each channel of a ``(N, C, D, H, W)`` or
    ``(C, D, H, W)`` input with probability ``p`` and scale the others by
    ``1 / (1 - p)`` (:func:`retrograd.nn.functional.dropout3d`); in eval mode,
    the identity.

    Parameters
    ----------
    {args}

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> y = rg.nn.Dropout3d(0.5)(rg.ones(4, 1, 1, 2))
    >>> y.flatten().tolist()
    [2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout (:func:`retrograd.nn.functional.alpha_dropout`) in
    training mode, the identity in eval mode: for networks of
    :class:`~retrograd.nn.SELU` units, it keeps a standardised input's mean 0
    and variance 1.

    Parameters
    ----------
    {args}

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> y = rg.nn.AlphaDropout(0.5)(rg.randn(100000))
    >>> abs(round(float(y.mean()), 1)), round(float(y.var()), 1)
    (0.0, 1.0)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels
    (:func:`retrograd.nn.functional.feature_alpha_dropout`) in training mode,
    the identity in eval mode.

    Parameters
    ----------
    {args}

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> y = rg.nn.FeatureAlphaDropout(0.5)(rg.zeros(1, 3, 4))
    >>> [len(set(c.tolist())) for c in y[0]]
    [1, 1, 1]
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)


for _cls, _what, _shape in [
        (Dropout1d, "a channel", "Of shape ``(N, C, L)`` or ``(C, L)``."),
        (Dropout2d, "a channel", "Of shape ``(N, C, H, W)`` (or ``(N, C, L)``)."),
        (Dropout3d, "a channel", "Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``."),
        (AlphaDropout, "an element", "Any floating-point tensor."),
        (FeatureAlphaDropout, "a channel", "Of shape ``(N, C, *)``.")]:
    _inplace = ("Accepted, and ignored, as torch's: the result is a new tensor." if "Alpha" in _cls.__name__
                else "Overwrite the input (default False).")
    _cls.__doc__ = str(_cls.__doc__).replace("{args}", _LAYER_ARGS.format(what=_what, inplace=_inplace))
    _cls.forward.__doc__ = _FORWARD_DOC.format(shape=_shape)
del _cls, _what, _shape, _inplace
