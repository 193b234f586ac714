"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d."""
from __future__ import annotations

from typing import Any

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize the spatial dims of 3-D, 4-D or 5-D batched input: a layer of
    :func:`rg.nn.functional.interpolate <retrograd.nn.functional.interpolate>`.

    Parameters
    ----------
    size : int or tuple of int, optional
        The output's spatial size.
    scale_factor : float or tuple of float, optional
        Multiplier of the spatial size (stored as floats). Give exactly one
        of ``size`` and ``scale_factor``.
    mode : str, optional
        ``'nearest'`` (default), ``'nearest-exact'``, ``'linear'``,
        ``'bilinear'``, ``'bicubic'``, ``'trilinear'`` or ``'area'``.
    align_corners : bool, optional
        For the interpolating modes: align the corner pixels' centres.
    recompute_scale_factor : bool, optional
        Place the samples by the rounded output size, not ``scale_factor``.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Upsample(scale_factor=2, mode="bilinear")
    >>> m
    Upsample(scale_factor=2.0, mode='bilinear')
    >>> m(rg.tensor([[[[1.0, 2.0], [3.0, 4.0]]]]))
    tensor([[[[1.  , 1.25, 1.75, 2.  ],
              [1.5 , 1.75, 2.25, 2.5 ],
              [2.5 , 2.75, 3.25, 3.5 ],
              [3.  , 3.25, 3.75, 4.  ]]]])
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor: Any
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        """Resize ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, *spatial)``.

        Returns
        -------
        Tensor
            Of shape ``(N, C, *size)``.
        """
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of ``(N, C, H, W)`` input (torch keeps
    it for compatibility; prefer :class:`Upsample`).

    Parameters
    ----------
    size : int or tuple of int, optional
        The output's (height, width).
    scale_factor : float or tuple of float, optional
        Multiplier of the height and width.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.UpsamplingNearest2d(scale_factor=2)
    >>> m(rg.tensor([[[[1.0, 2.0]]]]))
    tensor([[[[1., 1., 2., 2.],
              [1., 1., 2., 2.]]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of ``(N, C, H, W)`` input with
    ``align_corners=True`` (torch keeps it for compatibility; prefer
    :class:`Upsample`).

    Parameters
    ----------
    size : int or tuple of int, optional
        The output's (height, width).
    scale_factor : float or tuple of float, optional
        Multiplier of the height and width.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.UpsamplingBilinear2d(size=(1, 3))
    >>> m
    UpsamplingBilinear2d(size=(1, 3), mode='bilinear')
    >>> m(rg.tensor([[[[0.0, 4.0]]]]))
    tensor([[[[0., 2., 4.]]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
