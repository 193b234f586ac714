"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm and CrossMapLRN2d."""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.core.extending import composite_op
from retrograd.nn import functional as F
from retrograd.nn import init
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]


class LayerNorm(Module):
    """Layer normalisation over the last dims of the input (Ba et al., 2016).

    ``y = (x - mean) / sqrt(var + eps) * weight + bias``, with the mean and
    the biased variance over the last ``len(normalized_shape)`` dims of each
    sample, in training and eval mode alike.

    Parameters
    ----------
    normalized_shape : int or sequence of int
        The shape of the trailing dims normalised (an int: the last dim).
    eps : float, optional
        Added to the variance for stability (default 1e-5).
    elementwise_affine : bool, optional
        Learn a per-element ``weight`` (initialised to ones) and ``bias``
        (zeros) of shape ``normalized_shape`` (default True).
    bias : bool, optional
        Learn the bias too (default True; only with ``elementwise_affine``).
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.LayerNorm(3)
    >>> m
    LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> m(rg.tensor([[1.0, 2.0, 3.0]])).detach()
    tensor([[-1.2247356,  0.       ,  1.2247356]])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        # an int (NumPy's included) is the last dim's size
        if isinstance(normalized_shape, Sequence):
            shape: tuple[int, ...] = tuple(normalized_shape)
        else:
            shape = (operator.index(normalized_shape),)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_c.empty(self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_c.empty(self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set the weight to ones and the bias to zeros.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LayerNorm(2)
        >>> m.reset_parameters()
        >>> m.weight.detach()
        tensor([1., 1.])
        """
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(*, *normalized_shape)``.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


_AFFINE_DOC = """device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`)."""


class GroupNorm(Module):
    """Group normalisation (Wu and He, 2018) of an input of shape ``(N, C, *)``.

    The ``C`` channels are split into ``num_groups`` groups; each sample's
    group is normalised by its own mean and biased variance (in training
    and eval mode alike), then scaled and shifted per channel.

    Parameters
    ----------
    num_groups : int
        The number of groups; it must divide ``num_channels``.
    num_channels : int
        The channels ``C``.
    eps : float, optional
        Added to the variance for stability (default 1e-5).
    affine : bool, optional
        Learn a per-channel ``weight`` (ones) and ``bias`` (zeros) (default True).
    {factory}
    bias : bool, optional
        Keyword-only: learn the bias (default True; only with ``affine``).

    Raises
    ------
    ValueError
        If ``num_groups`` does not divide ``num_channels``.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.GroupNorm(2, 4)
    >>> m
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    >>> m(rg.randn(3, 4, 5)).shape
    (3, 4, 5)
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(_c.empty(num_channels, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_c.empty(num_channels, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set the weight to ones and the bias to zeros.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.GroupNorm(1, 2)
        >>> m.reset_parameters()
        >>> m.weight.detach()
        tensor([1., 1.])
        """
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input`` group by group.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, *)``.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalisation (Zhang and Sennrich, 2019) over the last
    dims: ``x / sqrt(mean(x**2) + eps) * weight``.

    Parameters
    ----------
    normalized_shape : int or sequence of int
        The shape of the trailing dims normalised (an int: the last dim).
    eps : float, optional
        Added to the mean square (default None: the machine epsilon of the
        input's dtype).
    elementwise_affine : bool, optional
        Learn a per-element ``weight`` of shape ``normalized_shape``,
        initialised to ones (default True).
    {factory}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.RMSNorm(2)
    >>> m
    RMSNorm((2,), eps=None, elementwise_affine=True)
    >>> m(rg.tensor([[3.0, 4.0]])).detach()
    tensor([[0.84852815, 1.1313709 ]])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, Sequence):
            shape: tuple[int, ...] = tuple(normalized_shape)
        else:
            shape = (operator.index(normalized_shape),)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_c.empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set the weight to ones.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.RMSNorm(2)
        >>> m.reset_parameters()
        >>> m.weight.detach()
        tensor([1., 1.])
        """
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        """Normalise ``x``.

        Parameters
        ----------
        x : Tensor
            Of shape ``(*, *normalized_shape)``.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


_LRN_DOC = """size : int
        The number of neighbouring channels.
    alpha : float, optional
        The multiplicative factor (default 1e-4).
    beta : float, optional
        The exponent (default 0.75).
    k : float, optional
        The additive factor (default 1)."""


class LocalResponseNorm(Module):
    """Local response normalisation across channels (``F.local_response_norm``):
    ``x / (k + alpha * mean(x**2 over size neighbouring channels)) ** beta``.

    Parameters
    ----------
    {lrn}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.LocalResponseNorm(2)
    >>> m
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    >>> m(rg.randn(1, 4, 3, 3)).shape
    (1, 4, 3, 3)
    """

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, *)`` with at least one spatial dim.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_window(C: int, size: int) -> np.ndarray:
    # which squared channels enter each channel's sum in torch's (Lua
    # Torch's) running-sum loop, kept as it is: channel 0 is never taken
    # out of the sum once the window has passed it
    pre_pad = int((size - 1) / 2 + 1)
    m = np.zeros((C, C))
    m[0, :min(pre_pad, C)] = 1
    for c in range(1, C):
        m[c] = m[c - 1]
        if c < C - pre_pad + 1:
            m[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            m[c, c - pre_pad] -= 1
    return m


@composite_op("cross_map_lrn2d")
def _cross_map_lrn2d(x: Tensor, size: int, alpha: float, beta: float, k: float) -> Tensor:
    if x.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {x.ndim}D instead.")
    window = _c.as_tensor(_cross_map_window(x.shape[1], size).T.astype(x.dtype)).to(device=x.device)
    sums = _c.movedim(_c.matmul(_c.movedim(_c.mul(x, x), 1, -1), window), -1, 1)
    return _c.mul(x, _c.pow(_c.add(_c.mul(sums, alpha / size), k), -beta))


class CrossMapLRN2d(Module):
    """Local response normalisation of 4-D input across channels, as Lua
    Torch's ``SpatialCrossMapLRN``: ``x * (k + alpha / size * sum(x**2 over
    the window)) ** -beta``.

    The window of channel ``c`` reaches ``(size - 1) // 2 + 1`` channels
    ahead, built as torch's running sum (which keeps channel 0 in every
    window); its gradient is the exact derivative of this forward.

    Parameters
    ----------
    {lrn}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.CrossMapLRN2d(3)
    >>> m
    CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)
    >>> m(rg.randn(1, 4, 2, 2)).shape
    (1, 4, 2, 2)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, H, W)``.

        Returns
        -------
        Tensor
            Of the input's shape.

        Raises
        ------
        ValueError
            For an input that is not 4-D.
        """
        return _cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


_cls: type[Module]
for _cls in (GroupNorm, RMSNorm):
    _cls.__doc__ = _cls.__doc__.format(factory=_AFFINE_DOC) if _cls.__doc__ else None
for _cls in (LocalResponseNorm, CrossMapLRN2d):
    _cls.__doc__ = _cls.__doc__.format(lrn=_LRN_DOC) if _cls.__doc__ else None
del _cls
