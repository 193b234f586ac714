"""Identity, Linear and Bilinear."""
from __future__ import annotations

import math
from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn import init
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """A layer that returns its input unchanged (a placeholder that keeps a
    model's structure, e.g. to switch a layer off).

    Parameters
    ----------
    *args, **kwargs
        Accepted and ignored, as torch's.

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Identity(54, unused="argument")
    >>> x = rg.ones(2, 3)
    >>> m(x) is x
    True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        """Return ``input`` itself.

        Parameters
        ----------
        input : Tensor
            Any tensor.

        Returns
        -------
        Tensor
            ``input``.
        """
        return input


def _uniform_bias(bias: Tensor, fan_in: int) -> None:
    # torch's bias init for linear and conv layers: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    init.uniform_(bias, -bound, bound)


class Linear(Module):
    """The affine map ``y = x @ weight.T + bias``.

    Applies to the last dim of an input of shape ``(*, in_features)`` and
    gives ``(*, out_features)``.

    Parameters
    ----------
    in_features : int
        The size of each input sample.
    out_features : int
        The size of each output sample.
    bias : bool, optional
        Whether the layer learns an additive bias (default True).
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(out_features, in_features)``, initialised as torch's:
        U(-k, k) with ``k = 1 / sqrt(in_features)``
        (``kaiming_uniform_(a=sqrt(5))``).
    bias : Parameter or None
        Of shape ``(out_features,)``, from U(-k, k) too.

    Examples
    --------
    >>> import retrograd as rg
    >>> _ = rg.manual_seed(0)
    >>> m = rg.nn.Linear(20, 30)
    >>> m
    Linear(in_features=20, out_features=30, bias=True)
    >>> m(rg.randn(128, 20)).shape
    (128, 30)
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_c.empty((out_features, in_features), dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_c.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again from torch's default distributions.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Linear(4, 2)
        >>> m.reset_parameters()
        >>> bool((m.weight.abs() <= 0.5).numpy().all())
        True
        """
        # kaiming_uniform_ with a=sqrt(5) is U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            _uniform_bias(self.bias, fan_in)

    def forward(self, input: Tensor) -> Tensor:
        """Apply the layer: ``F.linear(input, weight, bias)``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(*, in_features)``.

        Returns
        -------
        Tensor
            Of shape ``(*, out_features)``.
        """
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """The bilinear map ``y[o] = x1 @ weight[o] @ x2 + bias[o]``.

    Parameters
    ----------
    in1_features : int
        The size of each first input sample.
    in2_features : int
        The size of each second input sample.
    out_features : int
        The size of each output sample.
    bias : bool, optional
        Whether the layer learns an additive bias (default True).
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).

    Attributes
    ----------
    weight : Parameter
        Of shape ``(out_features, in1_features, in2_features)``, from
        U(-k, k) with ``k = 1 / sqrt(in1_features)``, as torch's.
    bias : Parameter or None
        Of shape ``(out_features,)``, from U(-k, k).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Bilinear(20, 30, 40)
    >>> m
    Bilinear(in1_features=20, in2_features=30, out_features=40, bias=True)
    >>> m(rg.randn(128, 20), rg.randn(128, 30)).shape
    (128, 40)
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_c.empty((out_features, in1_features, in2_features), dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_c.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again from U(-k, k), ``k = 1 / sqrt(in1_features)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.Bilinear(4, 3, 2)
        >>> m.reset_parameters()
        >>> bool((m.weight.abs() <= 0.5).numpy().all())
        True
        """
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """Apply the layer: ``F.bilinear(input1, input2, weight, bias)``.

        Parameters
        ----------
        input1 : Tensor
            Of shape ``(*, in1_features)``.
        input2 : Tensor
            Of shape ``(*, in2_features)``, the same leading dims.

        Returns
        -------
        Tensor
            Of shape ``(*, out_features)``.
        """
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
