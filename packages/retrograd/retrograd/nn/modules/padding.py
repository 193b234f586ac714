"""The padding layers: zero, constant, reflection, replication and circular.

Each is :func:`rg.nn.functional.pad <retrograd.nn.functional.pad>` with its
mode and a fixed ``padding``: an int pads every side of the last 1, 2 or 3
dims by that amount; a tuple lists ``(left, right)``, then ``(top, bottom)``,
then ``(front, back)`` amounts, the last dim first.
"""
from __future__ import annotations

from typing import Any

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


def _amounts(padding: Any, n: int) -> tuple:
    # torch's _pair/_quadruple/_ntuple(6): an int repeated, a sequence kept as given
    if isinstance(padding, (tuple, list)):
        return tuple(padding)
    return (padding,) * (2 * n)


class _PadNd(Module):
    """What the padding layers share: the amounts, forward and the repr."""

    __constants__ = ["padding"]
    _mode = "constant"
    _n = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _amounts(padding, self._n)

    def forward(self, input: Tensor) -> Tensor:
        """Pad ``input``.

        Parameters
        ----------
        input : Tensor
            The tensor to pad (its last ``len(padding) / 2`` dims).

        Returns
        -------
        Tensor
            The padded tensor.
        """
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        """Pad ``input`` circularly.

        Parameters
        ----------
        input : Tensor
            Of ``n + 1`` (unbatched) or ``n + 2`` dims, ``n`` the padded dims.

        Returns
        -------
        Tensor
            The padded tensor.

        Raises
        ------
        ValueError
            For an input of another rank.
        """
        if input.dim() not in (self._n + 1, self._n + 2):
            raise ValueError(f"expected {self._n + 1}D or {self._n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around: the left padding copies the end
    of the input, the right padding its start.

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right)``, or an int for both; each at most the dim's size.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.CircularPad1d((1, 2))
    >>> m
    CircularPad1d((1, 2))
    >>> m(rg.tensor([[1.0, 2.0, 3.0]]))
    tensor([[3., 1., 2., 3., 1., 2.]])
    """

    _n = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims by wrapping around.

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom)``, or an int for all four.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.CircularPad2d(1)(rg.arange(4.0).reshape(1, 2, 2))
    tensor([[[3., 2., 3., 2.],
             [1., 0., 1., 0.],
             [3., 2., 3., 2.],
             [1., 0., 1., 0.]]])
    """

    _n = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims by wrapping around.

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom, front, back)``, or an int for all six.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.CircularPad3d(1)(rg.ones(1, 2, 2, 2)).shape
    (1, 4, 4, 4)
    """

    _n = 3


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        """Pad ``input`` with ``value``.

        Parameters
        ----------
        input : Tensor
            The tensor to pad.

        Returns
        -------
        Tensor
            The padded tensor.
        """
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant (negative amounts crop).

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right)``, or an int for both.
    value : float
        The fill value.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.ConstantPad1d((1, 2), 3.5)
    >>> m
    ConstantPad1d(padding=(1, 2), value=3.5)
    >>> m(rg.tensor([[1.0, 2.0]]))
    tensor([[3.5, 1. , 2. , 3.5, 3.5]])
    """

    _n = 1

    def __init__(self, padding: int | tuple[int, int], value: float) -> None:
        super().__init__(padding, value)


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with a constant (negative amounts crop).

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom)``, or an int for all four.
    value : float
        The fill value.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ConstantPad2d((1, 0, 0, 1), -1.0)(rg.ones(1, 1, 2))
    tensor([[[-1.,  1.,  1.],
             [-1., -1., -1.]]])
    """

    _n = 2

    def __init__(self, padding: int | tuple[int, int, int, int], value: float) -> None:
        super().__init__(padding, value)


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with a constant (negative amounts crop).

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom, front, back)``, or an int for all six.
    value : float
        The fill value.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ConstantPad3d(1, 2.0)(rg.ones(1, 1, 1, 1)).shape
    (1, 3, 3, 3)
    """

    _n = 3

    def __init__(self, padding: int | tuple[int, int, int, int, int, int], value: float) -> None:
        super().__init__(padding, value)


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros (negative amounts crop).

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right)``, or an int for both.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.ZeroPad1d(2)
    >>> m
    ZeroPad1d((2, 2))
    >>> m(rg.tensor([[1.0]]))
    tensor([[0., 0., 1., 0., 0.]])
    """

    def __init__(self, padding: int | tuple[int, int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros (negative amounts crop).

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom)``, or an int for all four.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ZeroPad2d((1, 1, 0, 1))(rg.ones(1, 1, 1))
    tensor([[[0., 1., 0.],
             [0., 0., 0.]]])
    """

    def __init__(self, padding: int | tuple[int, int, int, int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros (negative amounts crop).

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom, front, back)``, or an int for all six.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ZeroPad3d((1, 1, 0, 0, 0, 2))(rg.ones(1, 1, 1, 1)).shape
    (1, 3, 1, 3)
    """

    def __init__(self, padding: int | tuple[int, int, int, int, int, int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its mirror image, the edge not repeated
    (``[1, 2, 3]`` padded by 2 on the left starts ``[3, 2, 1, ...]``).

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right)``, or an int for both; each less than the dim's size.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.ReflectionPad1d(2)
    >>> m
    ReflectionPad1d((2, 2))
    >>> m(rg.tensor([[1.0, 2.0, 3.0]]))
    tensor([[3., 2., 1., 2., 3., 2., 1.]])
    """

    _mode = "reflect"
    _n = 1


class ReflectionPad2d(_PadNd):
    """Pad the last two dims with their mirror image, the edge not repeated.

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom)``, or an int for all four.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ReflectionPad2d((1, 0, 1, 0))(rg.arange(4.0).reshape(1, 2, 2))
    tensor([[[3., 2., 3.],
             [1., 0., 1.],
             [3., 2., 3.]]])
    """

    _mode = "reflect"
    _n = 2


class ReflectionPad3d(_PadNd):
    """Pad the last three dims with their mirror image, the edge not repeated.

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom, front, back)``, or an int for all six.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ReflectionPad3d(1)(rg.ones(1, 1, 2, 2, 2)).shape
    (1, 1, 4, 4, 4)
    """

    _mode = "reflect"
    _n = 3


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge elements.

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right)``, or an int for both.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.ReplicationPad1d((2, 1))
    >>> m
    ReplicationPad1d((2, 1))
    >>> m(rg.tensor([[1.0, 2.0]]))
    tensor([[1., 1., 1., 2., 2.]])
    """

    _mode = "replicate"
    _n = 1


class ReplicationPad2d(_PadNd):
    """Pad the last two dims by repeating their edge elements.

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom)``, or an int for all four.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ReplicationPad2d((0, 1, 1, 0))(rg.arange(4.0).reshape(1, 2, 2))
    tensor([[[0., 1., 1.],
             [0., 1., 1.],
             [2., 3., 3.]]])
    """

    _mode = "replicate"
    _n = 2


class ReplicationPad3d(_PadNd):
    """Pad the last three dims by repeating their edge elements.

    Parameters
    ----------
    padding : int or tuple of int
        ``(left, right, top, bottom, front, back)``, or an int for all six.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ReplicationPad3d(1)(rg.ones(1, 1, 1, 1, 1)).shape
    (1, 1, 3, 3, 3)
    """

    _mode = "replicate"
    _n = 3
