"""ChannelShuffle: interleave the channel groups (ShuffleNet)."""
from __future__ import annotations

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Split the channels of a ``(N, C, *)`` input into ``groups`` groups and
    interleave them (:func:`retrograd.nn.functional.channel_shuffle`), so that
    the next grouped convolution sees channels of every group (Zhang et al., 2017).

    Parameters
    ----------
    groups : int
        The number of groups; the input's channels must be divisible by it.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.ChannelShuffle(2)
    >>> m
    ChannelShuffle(groups=2)
    >>> m(rg.arange(6.0).reshape(1, 6, 1)).flatten()
    tensor([0., 3., 1., 4., 2., 5.])
    """

    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        """Shuffle the channels.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, *)``, at least 3-D.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
