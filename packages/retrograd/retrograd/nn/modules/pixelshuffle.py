"""PixelShuffle and PixelUnshuffle."""
from __future__ import annotations

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearrange ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)``, as
    in sub-pixel convolution upscaling: each group of ``r**2`` channels
    becomes an ``r x r`` block of pixels.

    Parameters
    ----------
    upscale_factor : int
        ``r``.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.PixelShuffle(3)
    >>> m
    PixelShuffle(upscale_factor=3)
    >>> m(rg.randn(1, 9, 4, 4)).shape
    (1, 1, 12, 12)
    """

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """Shuffle ``input``'s channels into pixels.

        Parameters
        ----------
        input : Tensor
            Of shape ``(*, C * r**2, H, W)``.

        Returns
        -------
        Tensor
            Of shape ``(*, C, H * r, W * r)``.
        """
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r**2, H, W)``: the
    inverse of :class:`PixelShuffle`.

    Parameters
    ----------
    downscale_factor : int
        ``r``.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.PixelUnshuffle(3)
    >>> m
    PixelUnshuffle(downscale_factor=3)
    >>> m(rg.randn(1, 1, 12, 12)).shape
    (1, 9, 4, 4)
    """

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """Fold ``input``'s pixel blocks into channels.

        Parameters
        ----------
        input : Tensor
            Of shape ``(*, C, H * r, W * r)``.

        Returns
        -------
        Tensor
            Of shape ``(*, C * r**2, H, W)``.
        """
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
