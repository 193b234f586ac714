"""Fold and Unfold (sliding local blocks): the layers of :func:`retrograd.nn.functional.fold`
and :func:`retrograd.nn.functional.unfold`."""
from __future__ import annotations

from typing import Any

from retrograd.core import Tensor
from retrograd.nn._conv_pool import fold, unfold
from retrograd.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]

_BLOCK_PARAMS = """
    kernel_size : int or tuple of int
        The blocks' (height, width).
    dilation : int or tuple of int, optional
        The spacing between block elements (default 1).
    padding : int or tuple of int, optional
        Zeros around the image (default 0).
    stride : int or tuple of int, optional
        The step between blocks (default 1)."""


class Fold(Module):
    """Sum a batch of sliding-block columns back into images (col2im), the
    adjoint of :class:`Unfold`: overlapping block elements add up.

    An input ``(N, C * kH * kW, L)`` (or ``(C * kH * kW, L)``) holds ``L``
    blocks, as many as fit ``output_size``; the output is ``(N, C,
    *output_size)``.

    Parameters
    ----------
    output_size : int or tuple of int
        The images' (height, width).{params}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Fold(output_size=(4, 5), kernel_size=(2, 2))
    >>> m
    Fold(output_size=(4, 5), kernel_size=(2, 2), dilation=1, padding=0, stride=1)
    >>> m(rg.randn(1, 3 * 2 * 2, 12)).shape
    (1, 3, 4, 5)
    >>> m(rg.ones(1, 4, 12))[0, 0]
    tensor([[1., 2., 2., 2., 1.],
            [2., 4., 4., 4., 2.],
            [2., 4., 4., 4., 2.],
            [1., 2., 2., 2., 1.]])
    """

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        """Fold ``input``'s columns into images.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C * kH * kW, L)`` or ``(C * kH * kW, L)``.

        Returns
        -------
        Tensor
            Of shape ``(N, C, *output_size)`` (or unbatched).
        """
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extract the sliding blocks of a batch of images as columns (im2col).

    An input ``(N, C, H, W)`` (or ``(C, H, W)``) gives ``(N, C * kH * kW,
    L)``: one column per block position, channel-major within it. A
    convolution is ``weight.view(C_out, -1) @ unfold(x)``.

    Parameters
    ----------{params}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Unfold(kernel_size=(2, 3))
    >>> m
    Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=1)
    >>> m(rg.randn(2, 5, 3, 4)).shape
    (2, 30, 4)
    >>> x, w = rg.randn(1, 3, 10, 12), rg.randn(2, 3, 4, 5)
    >>> y = (w.view(2, -1) @ rg.nn.Unfold((4, 5))(x)).view(1, 2, 7, 8)
    >>> bool((y - rg.nn.functional.conv2d(x, w)).abs().max() < 1e-4)
    True
    """

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        """Extract ``input``'s blocks.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, H, W)`` or ``(C, H, W)``.

        Returns
        -------
        Tensor
            Of shape ``(N, C * kH * kW, L)`` (or unbatched).
        """
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


Fold.__doc__ = (Fold.__doc__ or "").replace("{params}", _BLOCK_PARAMS)
Unfold.__doc__ = (Unfold.__doc__ or "").replace("{params}", _BLOCK_PARAMS)
