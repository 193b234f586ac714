"""The pooling layers: max, average, adaptive and power-average pooling in 1-d, 2-d and 3-d, max
unpooling and fractional max pooling."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

from retrograd.nn._conv_pool import adaptive_avg_pool1d, adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d
from retrograd.nn._conv_pool import lp_pool1d, lp_pool2d, max_pool1d
from retrograd.nn._pool_more import (adaptive_avg_pool3d, adaptive_max_pool3d, avg_pool3d, fractional_max_pool2d,
                                     fractional_max_pool3d, lp_pool3d, max_pool3d, max_unpool1d, max_unpool2d,
                                     max_unpool3d)

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d", "MaxPool3d", "AvgPool3d",
           "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "FractionalMaxPool2d", "FractionalMaxPool3d"]

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


class MaxPool3d(Module):
    """3-d max pooling over an input of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    Each output element is the maximum of its window; the gradient goes to
    the window's argmax (the first one on ties, as torch).

    Parameters
    ----------
    kernel_size : int or tuple of int
        The window's (depth, height, width).
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    padding : int or tuple of int, optional
        Implicit negative-infinity padding on both sides (default 0), at
        most half the effective kernel.
    dilation : int or tuple of int, optional
        The spacing between window elements (default 1).
    return_indices : bool, optional
        Also return the flat index of each maximum within its input volume
        (default False), for :class:`MaxUnpool3d`.
    ceil_mode : bool, optional
        Round the output size up instead of down (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.MaxPool3d((3, 2, 2), stride=(2, 1, 2))
    >>> m
    MaxPool3d(kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=0, dilation=1, ceil_mode=False)
    >>> m(rg.randn(20, 16, 10, 11, 12)).shape
    (20, 16, 4, 10, 6)
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
            Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

        Returns
        -------
        Tensor or tuple of Tensor
            The pooled tensor, and with ``return_indices`` the int64 indices.
        """
        return max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool3d(Module):
    """3-d average pooling over an input of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    Parameters
    ----------
    kernel_size : int or tuple of int
        The window's (depth, height, width).
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
    >>> m = rg.nn.AvgPool3d((3, 2, 2), stride=(2, 1, 2))
    >>> m
    AvgPool3d(kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=0)
    >>> m(rg.ones(2, 4, 9, 6, 6)).shape
    (2, 4, 4, 5, 3)
    """

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
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
            Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

        Returns
        -------
        Tensor
            The window averages.
        """
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool3d(Module):
    """3-d average pooling to a fixed output size, whatever the input's.

    Along each dim of input size ``n`` and output size ``m``, output
    position ``i`` averages the input positions ``floor(i * n / m)`` to
    ``ceil((i + 1) * n / m) - 1``, as torch's.

    Parameters
    ----------
    output_size : int, None or tuple of (int or None)
        The output's (depth, height, width): an int for all three; None
        keeps the input's size in that dim.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.AdaptiveAvgPool3d((5, None, 7))
    >>> m
    AdaptiveAvgPool3d(output_size=(5, None, 7))
    >>> m(rg.randn(1, 64, 8, 9, 10)).shape
    (1, 64, 5, 9, 7)
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
            Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

        Returns
        -------
        Tensor
            Of shape ``(N, C, *output_size)`` (or unbatched).
        """
        return adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-d max pooling to a fixed output size, whatever the input's.

    The windows are those of :class:`AdaptiveAvgPool3d`; the gradient goes
    to each window's maximum (the first one on ties).

    Parameters
    ----------
    output_size : int, None or tuple of (int or None)
        The output's (depth, height, width): an int for all three; None
        keeps the input's size in that dim.
    return_indices : bool, optional
        Also return each maximum's flat index ``(d * H + h) * W + w`` (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.AdaptiveMaxPool3d((5, None, 7))
    >>> m
    AdaptiveMaxPool3d(output_size=(5, None, 7))
    >>> m(rg.randn(1, 64, 8, 9, 10)).shape
    (1, 64, 5, 9, 7)
    """

    def forward(self, input: Tensor) -> Any:
        """Pool ``input`` to ``output_size``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

        Returns
        -------
        Tensor or tuple of Tensor
            The maxima, and with ``return_indices`` their indices.
        """
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)


class LPPool3d(_LPPoolNd):
    """3-d power-average pooling: ``(sum of x ** p over each window) ** (1 / p)``.

    ``p = 1`` is sum pooling, ``p = inf`` max pooling of ``|x|``.

    Parameters
    ----------
    norm_type : float
        The power ``p``.
    kernel_size : int or tuple of int
        The window's (depth, height, width).
    stride : int or tuple of int, optional
        The step between windows (default: ``kernel_size``).
    ceil_mode : bool, optional
        Round the output size up (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.LPPool3d(2, 2)
    >>> m
    LPPool3d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
    >>> m(rg.ones(1, 1, 2, 2, 2))
    tensor([[[[[2.828427]]]]])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

        Returns
        -------
        Tensor
            The pooled tensor.
        """
        return lp_pool3d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpoolNd(Module):
    """What the unpooling layers share: torch's tuples of the pooling's
    window, stride (default the window) and padding."""

    _n = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        n = self._n

        def tup(v: Any) -> tuple:
            return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n

        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        """Put each value of ``input`` back where its index says; zeros elsewhere.

        Parameters
        ----------
        input : Tensor
            The pooled values, ``(N, C, *spatial)`` or ``(C, *spatial)``.
        indices : Tensor
            The int64 indices the max pooling returned.
        output_size : sequence of int, optional
            The output's spatial size (optionally with the leading dims),
            to pick among the sizes a stride maps to the same pooled size.

        Returns
        -------
        Tensor
            The unpooled tensor.
        """
        # (the tuples have _n items, the length the picked function takes; a type checker cannot know it)
        fn: Callable[..., Tensor] = {1: max_unpool1d, 2: max_unpool2d, 3: max_unpool3d}[self._n]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


_UNPOOL_LAYER_DOC = """

    Parameters
    ----------
    kernel_size : int or tuple of int
        The max pooling's window.
    stride : int or tuple of int, optional
        The max pooling's stride (default: ``kernel_size``).
    padding : int or tuple of int, optional
        The max pooling's padding (default 0).
"""


class MaxUnpool1d(_MaxUnpoolNd):
    """A partial inverse of :class:`MaxPool1d`: the maxima go back to their
    positions (from ``return_indices=True``), zeros elsewhere.{params}
    Examples
    --------
    >>> import retrograd as rg
    >>> pool, unpool = rg.nn.MaxPool1d(2, return_indices=True), rg.nn.MaxUnpool1d(2)
    >>> unpool
    MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> unpool(*pool(rg.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]])), output_size=[5])
    tensor([[[0., 2., 0., 4., 0.]]])
    """

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """A partial inverse of :class:`MaxPool2d`: the maxima go back to their
    positions (from ``return_indices=True``), zeros elsewhere.{params}
    Examples
    --------
    >>> import retrograd as rg
    >>> pool, unpool = rg.nn.MaxPool2d(2, return_indices=True), rg.nn.MaxUnpool2d(2)
    >>> unpool
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    >>> unpool(*pool(rg.arange(16.0).reshape(1, 1, 4, 4)))
    tensor([[[[ 0.,  0.,  0.,  0.],
              [ 0.,  5.,  0.,  7.],
              [ 0.,  0.,  0.,  0.],
              [ 0., 13.,  0., 15.]]]])
    """

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """A partial inverse of :class:`MaxPool3d`: the maxima go back to their
    positions (from ``return_indices=True``), zeros elsewhere.{params}
    Examples
    --------
    >>> import retrograd as rg
    >>> pool, unpool = rg.nn.MaxPool3d(3, stride=2, return_indices=True), rg.nn.MaxUnpool3d(3, stride=2)
    >>> y, i = pool(rg.randn(20, 16, 51, 33, 15))
    >>> unpool(y, i).shape
    (20, 16, 51, 33, 15)
    """

    _n = 3


for _cls in (MaxUnpool1d, MaxUnpool2d, MaxUnpool3d):
    _cls.__doc__ = (_cls.__doc__ or "").replace("{params}", _UNPOOL_LAYER_DOC)


class _FractionalMaxPoolNd(Module):
    """What the fractional max pooling layers share: torch's argument
    checks, and ``_random_samples`` as a buffer."""

    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _n = 0

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        n = self._n
        name = type(self).__name__
        if n == 3 and any(k <= 0 for k in (kernel_size if isinstance(kernel_size, (tuple, list))
                                           else (kernel_size,))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")

        def tup(v: Any) -> tuple:
            return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n

        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        """Pool ``input`` (with new random window placements each call,
        unless ``_random_samples`` was given).

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, *spatial)`` or ``(C, *spatial)``.

        Returns
        -------
        Tensor or tuple of Tensor
            The maxima, and with ``return_indices`` their int64 indices.
        """
        fn = fractional_max_pool2d if self._n == 2 else fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


_FRACTIONAL_LAYER_DOC = """

    Parameters
    ----------
    kernel_size : int or tuple of int
        The window's size.
    output_size : int or tuple of int, optional
        The output's spatial size.
    output_ratio : float or tuple of float, optional
        The output's size as a fraction (in (0, 1)) of the input's; give
        this or ``output_size``.
    return_indices : bool, optional
        Also return the maxima's flat indices (default False), for the
        max unpooling layers.
    _random_samples : Tensor, optional
        Fixed ``(N, C, n_dims)`` samples in [0, 1) that place the windows;
        by default new ones are drawn at each call.

    Raises
    ------
    ValueError
        For neither or both of ``output_size`` and ``output_ratio``, or a
        ratio outside (0, 1).
"""


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling (Graham, 2014) over an input of shape
    ``(N, C, H, W)`` or ``(C, H, W)``: max pooling over ``kH x kW``
    windows with pseudo-random steps that shrink the input to the output
    size; see :func:`retrograd.nn.functional.fractional_max_pool2d`.{params}
    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
    >>> m(rg.randn(20, 16, 50, 32)).shape
    (20, 16, 25, 16)
    >>> rg.nn.FractionalMaxPool2d(3, output_size=(13, 12))(rg.randn(16, 50, 32)).shape
    (16, 13, 12)
    """

    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling (Graham, 2014) over an input of shape
    ``(N, C, T, H, W)`` or ``(C, T, H, W)``; see
    :func:`retrograd.nn.functional.fractional_max_pool3d`.{params}
    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.FractionalMaxPool3d(3, output_size=(13, 12, 11))
    >>> m(rg.randn(2, 4, 50, 32, 16)).shape
    (2, 4, 13, 12, 11)
    >>> rg.nn.FractionalMaxPool3d(2, output_ratio=0.5)(rg.randn(1, 8, 8, 8)).shape
    (1, 4, 4, 4)
    """

    _n = 3


for _frac in (FractionalMaxPool2d, FractionalMaxPool3d):
    _frac.__doc__ = (_frac.__doc__ or "").replace("{params}", _FRACTIONAL_LAYER_DOC)
