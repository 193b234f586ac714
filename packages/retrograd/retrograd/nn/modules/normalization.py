"""LayerNorm."""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn import init
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["LayerNorm"]


class LayerNorm(Module):
    """Layer normalisation over the last dims of the input (Ba et al., 2016).

    ``y = (x - mean) / sqrt(var + eps) * weight + bias``, with the mean and
    the biased variance over the last ``len(normalized_shape)`` dims of each
    sample, in training and eval mode alike.

    Parameters
    ----------
    normalized_shape : int or sequence of int
        The shape of the trailing dims normalised (an int: the last dim).
    eps : float, optional
        Added to the variance for stability (default 1e-5).
    elementwise_affine : bool, optional
        Learn a per-element ``weight`` (initialised to ones) and ``bias``
        (zeros) of shape ``normalized_shape`` (default True).
    bias : bool, optional
        Learn the bias too (default True; only with ``elementwise_affine``).
    device : str or Device, optional
        Where the parameters live (default: the CPU).
    dtype : dtype, optional
        The parameters' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.LayerNorm(3)
    >>> m
    LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> m(rg.tensor([[1.0, 2.0, 3.0]])).detach()
    tensor([[-1.2247356,  0.       ,  1.2247356]])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        # an int (NumPy's included) is the last dim's size
        if isinstance(normalized_shape, Sequence):
            shape: tuple[int, ...] = tuple(normalized_shape)
        else:
            shape = (operator.index(normalized_shape),)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_c.empty(self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_c.empty(self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set the weight to ones and the bias to zeros.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LayerNorm(2)
        >>> m.reset_parameters()
        >>> m.weight.detach()
        tensor([1., 1.])
        """
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input``.

        Parameters
        ----------
        input : Tensor
            Of shape ``(*, *normalized_shape)``.

        Returns
        -------
        Tensor
            Of the input's shape.
        """
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")
