"""Conv1d and Conv2d."""
from __future__ import annotations

import math
from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn import init
from retrograd.nn.modules.linear import _uniform_bias
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d"]

# lists, not sets as torch's, so that the error messages keep one order
_PADDING_STRINGS = ["same", "valid"]
_PADDING_MODES = ["zeros", "reflect", "replicate", "circular"]


def _tuple(v: Any, n: int) -> tuple:
    # torch's _single/_pair: an int repeated, a sequence kept
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """What Conv1d and Conv2d share: argument checks, parameters, default
    initialisation, the padding for non-zero padding modes and the repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]
    _n = 0     # spatial dims

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, groups: int, bias: bool, padding_mode: str, device: Any, dtype: Any) -> None:
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride, dilation = _tuple(kernel_size, n), _tuple(stride, n), _tuple(dilation, n)
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _tuple(padding, n)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = (0,) * n
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument for the non-zero padding modes: (left, right)
        # pairs from the last dim backwards; 'same' puts the odd extra
        # element after, as torch
        if isinstance(padding, str):
            pairs = [(0, 0)] * n
            if padding == "same":
                pairs = []
                for d, k in zip(dilation, kernel_size):
                    total = d * (k - 1)
                    pairs.append((total // 2, total - total // 2))
        else:
            pairs = [(p, p) for p in padding]
        self._reversed_padding_repeated_twice = [v for pair in reversed(pairs) for v in pair]
        self.weight = Parameter(_c.empty((out_channels, in_channels // groups) + kernel_size, dtype=dtype,
                                         device=device))
        if bias:
            self.bias = Parameter(_c.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again from torch's default distributions:
        U(-k, k) with ``k = 1 / sqrt(fan_in)``, ``fan_in = in_channels / groups
        * prod(kernel_size)`` (``kaiming_uniform_(a=sqrt(5))`` for the weight).

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Conv2d(2, 4, 3)
        >>> m.reset_parameters()
        >>> bool((m.weight.abs() <= 1 / 18 ** 0.5).numpy().all())
        True
        """
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            _uniform_bias(self.bias, fan_in)

    def extra_repr(self) -> str:
        n = self._n
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = F.conv2d if self._n == 2 else F.conv1d
        if self.padding_mode != "zeros":
            # pad with the mode first, then a convolution without padding
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        """Apply the convolution to ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, in_channels, *spatial)`` or, unbatched,
            ``(in_channels, *spatial)``.

        Returns
        -------
        Tensor
            Of shape ``(N, out_channels, *spatial_out)`` (or unbatched).
        """
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """A 1-d convolution (cross-correlation) over an input of shape
    ``(N, C_in, L)`` or ``(C_in, L)``.

    The output has ``L_out = (L + 2 * padding - dilation * (kernel_size - 1)
    - 1) // stride + 1`` positions (with ``padding='same'``, ``L_out = L``).

    Parameters
    ----------
    in_channels : int
        The input's channels.
    out_channels : int
        The output's channels.
    kernel_size : int or tuple of int
        The kernel's length.
    stride : int or tuple of int, optional
        The step between windows (default 1).
    padding : int, tuple of int or {'valid', 'same'}, optional
        Elements added at both ends (default 0). ``'valid'`` is no padding,
        ``'same'`` keeps the length (stride 1 only; an odd total puts the
        extra element at the end, as torch).
    dilation : int or tuple of int, optional
        The spacing between kernel elements (default 1).
    groups : int, optional
        Blocked connections: the channels are split in ``groups`` groups,
        each convolved with its own filters (default 1). Both channel counts
        must be divisible by it.
    bias : bool, optional
        Whether the layer learns an additive bias (default True).
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}, optional
        How the padding is filled (default ``'zeros'``); the others go
        through :func:`rg.nn.functional.pad <retrograd.nn.functional.pad>`.
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(out_channels, in_channels / groups, kernel_size)``.
    bias : Parameter or None
        Of shape ``(out_channels,)``.

    Raises
    ------
    ValueError
        For non-positive ``groups``, channel counts not divisible by it, an
        unknown padding string or mode, or ``padding='same'`` with a stride.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Conv1d(16, 33, 3, stride=2)
    >>> m
    Conv1d(16, 33, kernel_size=(3,), stride=(2,))
    >>> m(rg.randn(20, 16, 50)).shape
    (20, 33, 24)
    """

    _n = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int], stride: int | tuple[int] = 1,
                 padding: str | int | tuple[int] = 0, dilation: int | tuple[int] = 1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)


class Conv2d(_ConvNd):
    """A 2-d convolution (cross-correlation) over an input of shape
    ``(N, C_in, H, W)`` or ``(C_in, H, W)``.

    Each output size is ``(size + 2 * padding - dilation * (kernel - 1) - 1)
    // stride + 1`` (with ``padding='same'``, the input's size).

    Parameters
    ----------
    in_channels : int
        The input's channels.
    out_channels : int
        The output's channels.
    kernel_size : int or tuple of int
        The kernel's (height, width); an int for both.
    stride : int or tuple of int, optional
        The step between windows (default 1).
    padding : int, tuple of int or {'valid', 'same'}, optional
        Elements added on both sides of each spatial dim (default 0).
        ``'valid'`` is no padding, ``'same'`` keeps the size (stride 1 only).
    dilation : int or tuple of int, optional
        The spacing between kernel elements (default 1).
    groups : int, optional
        Blocked connections between input and output channels (default 1).
    bias : bool, optional
        Whether the layer learns an additive bias (default True).
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}, optional
        How the padding is filled (default ``'zeros'``).
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(out_channels, in_channels / groups, kH, kW)``,
        initialised from U(-k, k), ``k = 1 / sqrt(in_channels / groups * kH * kW)``.
    bias : Parameter or None
        Of shape ``(out_channels,)``, from U(-k, k).

    Raises
    ------
    ValueError
        For non-positive ``groups``, channel counts not divisible by it, an
        unknown padding string or mode, or ``padding='same'`` with a stride.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
    >>> m
    Conv2d(16, 33, kernel_size=(3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
    >>> m(rg.randn(2, 16, 50, 100)).shape
    (2, 33, 26, 100)
    >>> rg.nn.Conv2d(3, 8, 3, padding="same", padding_mode="reflect")(rg.randn(1, 3, 10, 10)).shape
    (1, 8, 10, 10)
    """

    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: str | int | tuple[int, int] = 0,
                 dilation: int | tuple[int, int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
