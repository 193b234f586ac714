"""The pooling layers: max, average, adaptive and power-average pooling in 1-d and 2-d."""
from __future__ import annotations

from typing import Any

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

from retrograd.nn._conv_pool import (adaptive_avg_pool1d, adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d,
                                     lp_pool1d, lp_pool2d, max_pool1d)

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d"]

_Size2 = int | tuple[int, int]


class MaxPool2d(Module):
    """2-d max pooling over an input of shape ``(N, C, H, W)`` or ``(C, H, W)``.

    Each output element is the maximum of its window; the gradient goes to
    the window's argmax (the first one on ties, as torch).

    Parameters
    ----------
    kernel_size : int or tuple of int
        The window's (height, width).
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    padding : int or tuple of int, optional
        Implicit negative-infinity padding on both sides (default 0), at
        most half the kernel.
    dilation : int or tuple of int, optional
        The spacing between window elements (default 1).
    return_indices : bool, optional
        Also return the flat index of each maximum within its input plane
        (default False).
    ceil_mode : bool, optional
        Round the output size up instead of down (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.MaxPool2d(2)
    >>> m
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> m(rg.arange(16.0).reshape(1, 1, 4, 4))
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """

    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size: _Size2, stride: _Size2 | None = None, padding: _Size2 = 0,
                 dilation: _Size2 = 1, return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:
        """Pool ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, H, W)`` or ``(C, H, W)``.

        Returns
        -------
        Tensor or tuple of Tensor
            The pooled tensor, and with ``return_indices`` the int64 indices.
        """
        if self.return_indices:
            return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                ceil_mode=self.ceil_mode, return_indices=True)
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """2-d average pooling over an input of shape ``(N, C, H, W)`` or ``(C, H, W)``.

    Parameters
    ----------
    kernel_size : int or tuple of int
        The window's (height, width).
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    padding : int or tuple of int, optional
        Implicit zero padding on both sides (default 0), at most half the kernel.
    ceil_mode : bool, optional
        Round the output size up instead of down (default False).
    count_include_pad : bool, optional
        Count the padding zeros in each average's divisor (default True).
    divisor_override : int, optional
        A fixed divisor instead of the window's size.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.AvgPool2d(2)
    >>> m
    AvgPool2d(kernel_size=2, stride=2, padding=0)
    >>> m(rg.arange(16.0).reshape(1, 1, 4, 4))
    tensor([[[[ 2.5,  4.5],
              [10.5, 12.5]]]])
    """

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def __init__(self, kernel_size: _Size2, stride: _Size2 | None = None, padding: _Size2 = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, H, W)`` or ``(C, H, W)``.

        Returns
        -------
        Tensor
            The window averages.
        """
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """2-d average pooling to a fixed output size, whatever the input's.

    Output position ``i`` of a dim of input size ``n`` and output size ``m``
    averages the input positions ``floor(i * n / m)`` to
    ``ceil((i + 1) * n / m) - 1``, as torch's.

    Parameters
    ----------
    output_size : int, None or tuple of (int or None)
        The output's (height, width): an int for both; None keeps the
        input's size in that dim.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.AdaptiveAvgPool2d((5, None))
    >>> m
    AdaptiveAvgPool2d(output_size=(5, None))
    >>> m(rg.randn(1, 64, 10, 9)).shape
    (1, 64, 5, 9)
    >>> rg.nn.AdaptiveAvgPool2d(1)(rg.randn(2, 8, 7, 7)).shape
    (2, 8, 1, 1)
    """

    __constants__ = ["output_size"]

    def __init__(self, output_size: int | None | tuple[int | None, int | None]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` to ``output_size``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, H, W)`` or ``(C, H, W)``.

        Returns
        -------
        Tensor
            Of shape ``(N, C, *output_size)`` (or unbatched).
        """
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


def _single(v: Any) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class MaxPool1d(Module):
    """1-d max pooling over an input of shape ``(N, C, L)`` or ``(C, L)``.

    Each output element is the maximum of its window; the gradient goes to
    the window's argmax (the first one on ties, as torch).

    Parameters
    ----------
    kernel_size : int
        The window's length.
    stride : int, optional
        The step between windows (default: ``kernel_size``).
    padding : int, optional
        Implicit negative-infinity padding at both ends (default 0), at most
        half the kernel.
    dilation : int, optional
        The spacing between window elements (default 1).
    return_indices : bool, optional
        Also return each maximum's index along the length (default False).
    ceil_mode : bool, optional
        Round the output length up instead of down (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.MaxPool1d(2)
    >>> m
    MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> m(rg.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
    tensor([[[3., 2.]]])
    """

    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:
        """Pool ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, L)`` or ``(C, L)``.

        Returns
        -------
        Tensor or tuple of Tensor
            The pooled tensor, and with ``return_indices`` the int64 indices.
        """
        return max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool1d(Module):
    """1-d average pooling over an input of shape ``(N, C, L)`` or ``(C, L)``.

    Parameters
    ----------
    kernel_size : int
        The window's length.
    stride : int, optional
        The step between windows (default: ``kernel_size``).
    padding : int, optional
        Implicit zeros at both ends (default 0), at most half the kernel.
    ceil_mode : bool, optional
        Round the output length up instead of down (default False).
    count_include_pad : bool, optional
        Count the padding zeros in each average's divisor (default True).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.AvgPool1d(3, stride=2)
    >>> m
    AvgPool1d(kernel_size=(3,), stride=(2,), padding=(0,))
    >>> m(rg.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]]))
    tensor([[[2., 4., 6.]]])
    """

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, L)`` or ``(C, L)``.

        Returns
        -------
        Tensor
            The window averages.
        """
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    """1-d average pooling to a fixed output length, whatever the input's.

    Output position ``i`` of ``m`` averages the input positions
    ``floor(i * L / m)`` to ``ceil((i + 1) * L / m) - 1``, as torch's.

    Parameters
    ----------
    output_size : int
        The output's length.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.AdaptiveAvgPool1d(5)
    >>> m
    AdaptiveAvgPool1d(output_size=5)
    >>> m(rg.randn(1, 64, 8)).shape
    (1, 64, 5)
    """

    __constants__ = ["output_size"]

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` to ``output_size``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, L)`` or ``(C, L)``.

        Returns
        -------
        Tensor
            Of shape ``(N, C, output_size)`` (or unbatched).
        """
        return adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """1-d max pooling to a fixed output length, whatever the input's.

    The windows are those of :class:`AdaptiveAvgPool1d`; the gradient goes
    to each window's maximum (the first one on ties).

    Parameters
    ----------
    output_size : int
        The output's length.
    return_indices : bool, optional
        Also return the maxima's int64 indices along the length (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.AdaptiveMaxPool1d(2)
    >>> m
    AdaptiveMaxPool1d(output_size=2)
    >>> m(rg.tensor([[[1.0, 4.0, 2.0, 3.0, 0.0]]]))
    tensor([[[4., 3.]]])
    """

    def forward(self, input: Tensor) -> Any:
        """Pool ``input`` to ``output_size``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, L)`` or ``(C, L)``.

        Returns
        -------
        Tensor or tuple of Tensor
            The maxima, and with ``return_indices`` their indices.
        """
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-d max pooling to a fixed output size, whatever the input's.

    The windows are those of :class:`AdaptiveAvgPool2d`; the gradient goes
    to each window's maximum (the first one on ties).

    Parameters
    ----------
    output_size : int, None or tuple of (int or None)
        The output's (height, width): an int for both; None keeps the
        input's size in that dim.
    return_indices : bool, optional
        Also return each maximum's flat index ``h * W + w`` (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.AdaptiveMaxPool2d((5, None))
    >>> m
    AdaptiveMaxPool2d(output_size=(5, None))
    >>> m(rg.randn(1, 64, 10, 9)).shape
    (1, 64, 5, 9)
    """

    def forward(self, input: Tensor) -> Any:
        """Pool ``input`` to ``output_size``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, H, W)`` or ``(C, H, W)``.

        Returns
        -------
        Tensor or tuple of Tensor
            The maxima, and with ``return_indices`` their indices.
        """
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """1-d power-average pooling: ``(sum of x ** p over each window) ** (1 / p)``.

    ``p = 1`` is sum pooling, ``p = inf`` max pooling of ``|x|``.

    Parameters
    ----------
    norm_type : float
        The power ``p``.
    kernel_size : int
        The window's length.
    stride : int, optional
        The step between windows (default: ``kernel_size``).
    ceil_mode : bool, optional
        Round the output length up (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.LPPool1d(2, 2)
    >>> m
    LPPool1d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
    >>> m(rg.tensor([[[3.0, 4.0, 0.0, 1.0]]]))
    tensor([[[5., 1.]]])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, L)`` or ``(C, L)``.

        Returns
        -------
        Tensor
            The pooled tensor.
        """
        return lp_pool1d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """2-d power-average pooling: ``(sum of x ** p over each window) ** (1 / p)``.

    ``p = 1`` is sum pooling, ``p = inf`` max pooling of ``|x|``.

    Parameters
    ----------
    norm_type : float
        The power ``p``.
    kernel_size : int or tuple of int
        The window's (height, width).
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    ceil_mode : bool, optional
        Round the output size up (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.LPPool2d(2, 2)
    >>> m(rg.tensor([[[[3.0, 0.0], [0.0, 4.0]]]]))
    tensor([[[[5.]]]])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, H, W)`` or ``(C, H, W)``.

        Returns
        -------
        Tensor
            The pooled tensor.
        """
        return lp_pool2d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)
