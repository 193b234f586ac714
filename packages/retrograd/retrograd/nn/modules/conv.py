"""The convolution layers: Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d and ConvTranspose3d."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn import init
from retrograd.nn._conv_pool import conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from retrograd.nn.modules.linear import _uniform_bias
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

# lists, not sets as torch's, so that the error messages keep one order
_PADDING_STRINGS = ["same", "valid"]
_PADDING_MODES = ["zeros", "reflect", "replicate", "circular"]


def _tuple(v: Any, n: int) -> tuple:
    # torch's _single/_pair: an int repeated, a sequence kept
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """What the convolution layers share: argument checks, parameters,
    default initialisation, the padding for non-zero padding modes and the
    repr. A transposed layer's weight is ``(in_channels, out_channels /
    groups, *kernel_size)``, as torch's."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]
    _n = 0     # spatial dims

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, groups: int, bias: bool, padding_mode: str, device: Any, dtype: Any,
                 transposed: bool = False, output_padding: Any = 0) -> None:
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
        self.transposed = transposed
        self.output_padding = _tuple(output_padding, n)
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
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(_c.empty(shape + kernel_size, dtype=dtype, device=device))
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
        conv = {1: F.conv1d, 2: F.conv2d, 3: conv3d}[self._n]
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


class Conv3d(_ConvNd):
    """A 3-d convolution (cross-correlation) over an input of shape
    ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.

    Each output size is ``(size + 2 * padding - dilation * (kernel - 1) - 1)
    // stride + 1`` (with ``padding='same'``, the input's size).

    Parameters
    ----------
    in_channels : int
        The input's channels.
    out_channels : int
        The output's channels.
    kernel_size : int or tuple of int
        The kernel's (depth, height, width); an int for all three.
    stride : int or tuple of int, optional
        The step between windows (default 1).
    padding : int, tuple of int or {'valid', 'same'}, optional
        Elements added on both sides of each spatial dim (default 0).
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
        The parameters' dtype (default: the default dtype).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(out_channels, in_channels / groups, kD, kH, kW)``, from
        U(-k, k), ``k = 1 / sqrt(in_channels / groups * kD * kH * kW)``.
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
    >>> m = rg.nn.Conv3d(4, 8, (3, 5, 2), stride=(2, 1, 1), padding=(4, 2, 0))
    >>> m
    Conv3d(4, 8, kernel_size=(3, 5, 2), stride=(2, 1, 1), padding=(4, 2, 0))
    >>> m(rg.randn(2, 4, 10, 8, 6)).shape
    (2, 8, 8, 8, 5)
    """

    _n = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int, int],
                 stride: int | tuple[int, int, int] = 1, padding: str | int | tuple[int, int, int] = 0,
                 dilation: int | tuple[int, int, int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    """What the transposed convolution layers share: zero padding only,
    and the output_padding an ``output_size`` asks for."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any, padding: Any,
                 output_padding: Any, groups: int, bias: bool, dilation: Any, padding_mode: str, device: Any,
                 dtype: Any) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._n
        super().__init__(in_channels, out_channels, _tuple(kernel_size, n), _tuple(stride, n), _tuple(padding, n),
                         _tuple(dilation, n), groups, bias, padding_mode, device, dtype, transposed=True,
                         output_padding=output_padding)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple:
        # the output_padding that gives output_size: each size may exceed
        # the smallest one by less than the stride
        n = self._n
        if output_size is None:
            return self.output_padding
        lead = 2 if input.dim() == n + 2 else 1
        sizes = list(output_size)
        if len(sizes) == lead + n:
            sizes = sizes[lead:]
        if len(sizes) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                             f"{lead + n} elements (got {len(sizes)})")
        spatial = input.shape[lead:]
        lo = [(i - 1) * s - 2 * p + d * (k - 1) + 1 for i, s, p, d, k in
              zip(spatial, self.stride, self.padding, self.dilation, self.kernel_size)]
        hi = [m + s - 1 for m, s in zip(lo, self.stride)]
        for size, a, b in zip(sizes, lo, hi):
            if size < a or size > b:
                raise ValueError(f"requested an output size of {sizes}, but valid sizes range from {lo} to {hi} "
                                 f"(for an input of {tuple(spatial)})")
        return tuple(size - a for size, a in zip(sizes, lo))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        """Apply the transposed convolution to ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, in_channels, *spatial)`` or ``(in_channels, *spatial)``.
        output_size : sequence of int, optional
            The output's spatial size (optionally with the leading dims), to
            choose among the sizes a stride allows; overrides ``output_padding``.

        Returns
        -------
        Tensor
            Of shape ``(N, out_channels, *spatial_out)`` (or unbatched).

        Raises
        ------
        ValueError
            For an ``output_size`` of the wrong length or out of range.
        """
        op = self._output_padding(input, output_size)
        # (the tuples have _n items, the length the picked function takes; a type checker cannot know it)
        fn: Callable[..., Tensor] = {1: conv_transpose1d, 2: conv_transpose2d, 3: conv_transpose3d}[self._n]
        return fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """A 1-d transposed convolution over an input of shape ``(N, C_in, L)``
    or ``(C_in, L)``: the gradient of :class:`Conv1d` with respect to its
    input, which upsamples by ``stride``.

    ``L_out = (L - 1) * stride - 2 * padding + dilation * (kernel_size - 1)
    + output_padding + 1``.

    Parameters
    ----------
    in_channels : int
        The input's channels.
    out_channels : int
        The output's channels.
    kernel_size : int or tuple of int
        The kernel's length.
    stride : int or tuple of int, optional
        The upsampling step (default 1).
    padding : int or tuple of int, optional
        Elements cropped from each end of the output (default 0).
    output_padding : int or tuple of int, optional
        Elements added at the end of the output (default 0); less than
        ``stride`` or ``dilation``.
    groups : int, optional
        Blocked connections between input and output channels (default 1).
    bias : bool, optional
        Whether the layer learns an additive bias (default True).
    dilation : int or tuple of int, optional
        The spacing between kernel elements (default 1).
    padding_mode : {'zeros'}, optional
        Only zeros, as torch's.
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(in_channels, out_channels / groups, kernel_size)``, from
        U(-k, k), ``k = 1 / sqrt(out_channels / groups * kernel_size)``.
    bias : Parameter or None
        Of shape ``(out_channels,)``, from U(-k, k).

    Raises
    ------
    ValueError
        For non-positive ``groups``, channel counts not divisible by it, or
        a padding mode other than zeros.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.ConvTranspose1d(16, 33, 3, stride=2)
    >>> m
    ConvTranspose1d(16, 33, kernel_size=(3,), stride=(2,))
    >>> m(rg.randn(20, 16, 50)).shape
    (20, 33, 101)
    >>> m(rg.randn(20, 16, 50), output_size=[102]).shape
    (20, 33, 102)
    """

    _n = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int],
                 stride: int | tuple[int] = 1, padding: int | tuple[int] = 0, output_padding: int | tuple[int] = 0,
                 groups: int = 1, bias: bool = True, dilation: int | tuple[int] = 1, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """A 2-d transposed convolution over an input of shape ``(N, C_in, H,
    W)`` or ``(C_in, H, W)``: the gradient of :class:`Conv2d` with respect
    to its input, which upsamples by ``stride`` (a GAN generator's layer).

    ``H_out = (H - 1) * stride - 2 * padding + dilation * (kernel - 1) +
    output_padding + 1`` (likewise W).

    Parameters
    ----------
    in_channels : int
        The input's channels.
    out_channels : int
        The output's channels.
    kernel_size : int or tuple of int
        The kernel's (height, width).
    stride : int or tuple of int, optional
        The upsampling step (default 1).
    padding : int or tuple of int, optional
        Elements cropped from each side of the output (default 0).
    output_padding : int or tuple of int, optional
        Elements added after the output in each dim (default 0); less
        than ``stride`` or ``dilation``.
    groups : int, optional
        Blocked connections between input and output channels (default 1).
    bias : bool, optional
        Whether the layer learns an additive bias (default True).
    dilation : int or tuple of int, optional
        The spacing between kernel elements (default 1).
    padding_mode : {'zeros'}, optional
        Only zeros, as torch's.
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(in_channels, out_channels / groups, kH, kW)``, from
        U(-k, k), ``k = 1 / sqrt(out_channels / groups * kH * kW)``.
    bias : Parameter or None
        Of shape ``(out_channels,)``, from U(-k, k).

    Raises
    ------
    ValueError
        For non-positive ``groups``, channel counts not divisible by it, or
        a padding mode other than zeros.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.ConvTranspose2d(100, 64, 4, stride=2, padding=1, bias=False)
    >>> m
    ConvTranspose2d(100, 64, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1), bias=False)
    >>> m(rg.randn(2, 100, 8, 8)).shape
    (2, 64, 16, 16)
    >>> up = rg.nn.ConvTranspose2d(16, 16, 3, stride=2, padding=1)
    >>> up(rg.randn(1, 16, 6, 6), output_size=(1, 16, 12, 12)).shape
    (1, 16, 12, 12)
    """

    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
                 output_padding: int | tuple[int, int] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | tuple[int, int] = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)


class ConvTranspose3d(_ConvTransposeNd):
    """A 3-d transposed convolution over an input of shape ``(N, C_in, D,
    H, W)`` or ``(C_in, D, H, W)``: the gradient of :class:`Conv3d` with
    respect to its input, which upsamples volumes by ``stride``.

    ``D_out = (D - 1) * stride - 2 * padding + dilation * (kernel - 1) +
    output_padding + 1`` (likewise H and W).

    Parameters
    ----------
    in_channels : int
        The input's channels.
    out_channels : int
        The output's channels.
    kernel_size : int or tuple of int
        The kernel's (depth, height, width).
    stride : int or tuple of int, optional
        The upsampling step (default 1).
    padding : int or tuple of int, optional
        Elements cropped from each side of the output (default 0).
    output_padding : int or tuple of int, optional
        Elements added after the output in each dim (default 0); less
        than ``stride`` or ``dilation``.
    groups : int, optional
        Blocked connections between input and output channels (default 1).
    bias : bool, optional
        Whether the layer learns an additive bias (default True).
    dilation : int or tuple of int, optional
        The spacing between kernel elements (default 1).
    padding_mode : {'zeros'}, optional
        Only zeros, as torch's.
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(in_channels, out_channels / groups, kD, kH, kW)``, from
        U(-k, k), ``k = 1 / sqrt(out_channels / groups * kD * kH * kW)``.
    bias : Parameter or None
        Of shape ``(out_channels,)``, from U(-k, k).

    Raises
    ------
    ValueError
        For non-positive ``groups``, channel counts not divisible by it, or
        a padding mode other than zeros.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.ConvTranspose3d(16, 8, (3, 5, 2), stride=(2, 1, 1), padding=(0, 4, 2))
    >>> m
    ConvTranspose3d(16, 8, kernel_size=(3, 5, 2), stride=(2, 1, 1), padding=(0, 4, 2))
    >>> m(rg.randn(2, 16, 5, 10, 6)).shape
    (2, 8, 11, 6, 3)
    >>> up = rg.nn.ConvTranspose3d(4, 4, 3, stride=2, padding=1)
    >>> up(rg.randn(4, 3, 3, 3), output_size=(6, 6, 6)).shape
    (4, 6, 6, 6)
    """

    _n = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int, int],
                 stride: int | tuple[int, int, int] = 1, padding: int | tuple[int, int, int] = 0,
                 output_padding: int | tuple[int, int, int] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | tuple[int, int, int] = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)
