"""Activation layers: ReLU, LeakyReLU, GELU, SiLU, Tanh, Sigmoid, Softmax,
LogSoftmax, and (activation_more.py) the others of torch.nn."""
from __future__ import annotations

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module

__all__ = ["ReLU", "LeakyReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax"]


class ReLU(Module):
    """The rectified linear unit, ``max(x, 0)`` elementwise.

    Parameters
    ----------
    inplace : bool, optional
        Overwrite the input (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.ReLU()
    >>> m(rg.tensor([-1.0, 0.0, 2.0]))
    tensor([0., 0., 2.])
    >>> rg.nn.ReLU(inplace=True)
    ReLU(inplace=True)
    """

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply ``F.relu``.

        Parameters
        ----------
        input : Tensor
            Any tensor.

        Returns
        -------
        Tensor
            Of the input's shape (the input itself when ``inplace``).
        """
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` where ``x > 0``, ``negative_slope * x`` elsewhere.

    Parameters
    ----------
    negative_slope : float, optional
        The slope for negative inputs (default 0.01).
    inplace : bool, optional
        Overwrite the input (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.LeakyReLU(0.1)
    >>> m
    LeakyReLU(negative_slope=0.1)
    >>> m(rg.tensor([-2.0, 3.0]))
    tensor([-0.2,  3. ])
    """

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply ``F.leaky_relu``.

        Parameters
        ----------
        input : Tensor
            A floating-point tensor.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """The Gaussian error linear unit, ``x * Phi(x)`` (Hendrycks and Gimpel, 2016).

    Parameters
    ----------
    approximate : {'none', 'tanh'}, optional
        ``'tanh'`` uses the tanh approximation (default ``'none'``: exact).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.GELU()
    >>> m
    GELU(approximate='none')
    >>> m(rg.tensor([0.0, 1.0]))
    tensor([0.       , 0.8413447])
    """

    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        """Apply ``F.gelu``.

        Parameters
        ----------
        input : Tensor
            A floating-point tensor.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """The sigmoid linear unit (swish), ``x * sigmoid(x)``.

    Parameters
    ----------
    inplace : bool, optional
        Overwrite the input (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.SiLU()
    >>> m(rg.tensor([0.0, 1.0]))
    tensor([0.       , 0.7310586])
    """

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply ``F.silu``.

        Parameters
        ----------
        input : Tensor
            A floating-point tensor.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """The hyperbolic tangent, elementwise.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Tanh()
    >>> m(rg.tensor([0.0, 1.0]))
    tensor([0.       , 0.7615942])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply ``tanh``.

        Parameters
        ----------
        input : Tensor
            Any tensor.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.tanh(input)


class Sigmoid(Module):
    """The logistic function ``1 / (1 + exp(-x))``, elementwise.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Sigmoid()
    >>> m(rg.tensor([0.0]))
    tensor([0.5])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply ``sigmoid``.

        Parameters
        ----------
        input : Tensor
            Any tensor.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.sigmoid(input)


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``dim``: each slice becomes a
    probability distribution.

    Parameters
    ----------
    dim : int, optional
        The dim that sums to 1. None picks one with a deprecation warning,
        as torch (0 for 0-, 1- and 3-d inputs, else 1).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Softmax(dim=1)
    >>> m
    Softmax(dim=1)
    >>> m(rg.tensor([[0.0, 0.0]]))
    tensor([[0.5, 0.5]])
    """

    __constants__ = ["dim"]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """Apply ``F.softmax`` along ``dim``.

        Parameters
        ----------
        input : Tensor
            A floating-point tensor.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log(softmax(x))`` along ``dim``, computed stably.

    Parameters
    ----------
    dim : int, optional
        The dim normalised. None picks one with a deprecation warning, as torch.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.LogSoftmax(dim=1)
    >>> m(rg.tensor([[0.0, 0.0]]))
    tensor([[-0.6931472, -0.6931472]])
    """

    __constants__ = ["dim"]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """Apply ``F.log_softmax`` along ``dim``.

        Parameters
        ----------
        input : Tensor
            A floating-point tensor.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
