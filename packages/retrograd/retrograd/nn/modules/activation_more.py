"""More of torch.nn's activation layers, each applying its function of
``retrograd.nn.functional``: PReLU, ReLU6, Hardtanh, Hardsigmoid, Hardswish,
Mish, Softplus, ELU, SELU, CELU, GLU, LogSigmoid, Softmin, Softsign,
Tanhshrink, Threshold, Softshrink, Hardshrink, RReLU, Softmax2d."""
from __future__ import annotations

from retrograd.core import Tensor, full
from retrograd.nn import functional as F
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["PReLU", "ReLU6", "Hardtanh", "Hardsigmoid", "Hardswish", "Mish", "Softplus", "ELU", "SELU", "CELU",
           "GLU", "LogSigmoid", "Softmin", "Softsign", "Tanhshrink", "Threshold", "Softshrink", "Hardshrink",
           "RReLU", "Softmax2d"]


class _Pointwise(Module):
    # a layer that applies F.<_fn> with the options its constructor stored in
    # _options (their names are the function's keywords)
    _fn = ""
    _options: tuple = ()

    def forward(self, input: Tensor) -> Tensor:
        """Apply the activation.

        Parameters
        ----------
        input : Tensor
            A floating-point tensor.

        Returns
        -------
        Tensor
        """
        return getattr(F, self._fn)(input, **{k: getattr(self, k) for k in self._options})

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={getattr(self, k)}" for k in self._options if k != "inplace")


class ReLU6(_Pointwise):
    """``min(max(x, 0), 6)`` (:func:`retrograd.nn.functional.relu6`).

    Parameters
    ----------
    inplace : bool, optional
        Accepted for torch compatibility.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ReLU6()(rg.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """
    _fn = "relu6"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardtanh(_Pointwise):
    """``x`` clamped to ``[min_val, max_val]`` (:func:`retrograd.nn.functional.hardtanh`).

    Parameters
    ----------
    min_val, max_val : float, optional
        The bounds (default -1 and 1).
    inplace : bool, optional
        Accepted for torch compatibility.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Hardtanh(-2.0, 2.0)
    Hardtanh(min_val=-2.0, max_val=2.0)
    """
    _fn = "hardtanh"
    _options = ("min_val", "max_val")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if max_val < min_val:
            raise ValueError("max_val cannot be less than min_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace


class Hardsigmoid(_Pointwise):
    """``relu6(x + 3) / 6`` (:func:`retrograd.nn.functional.hardsigmoid`).

    Parameters
    ----------
    inplace : bool, optional
        Accepted for torch compatibility.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Hardsigmoid()(rg.tensor([0.0]))
    tensor([0.5])
    """
    _fn = "hardsigmoid"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardswish(_Pointwise):
    """``x * relu6(x + 3) / 6`` (:func:`retrograd.nn.functional.hardswish`).

    Parameters
    ----------
    inplace : bool, optional
        Accepted for torch compatibility.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Hardswish()(rg.tensor([4.0]))
    tensor([4.])
    """
    _fn = "hardswish"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Mish(_Pointwise):
    """``x * tanh(softplus(x))`` (:func:`retrograd.nn.functional.mish`).

    Parameters
    ----------
    inplace : bool, optional
        Accepted for torch compatibility.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Mish()(rg.tensor([0.0]))
    tensor([0.])
    """
    _fn = "mish"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Softplus(_Pointwise):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` (:func:`retrograd.nn.functional.softplus`).

    Parameters
    ----------
    beta : float, optional
        Default 1.
    threshold : float, optional
        Default 20.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Softplus(beta=2.0)
    Softplus(beta=2.0, threshold=20.0)
    """
    _fn = "softplus"
    _options = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold


class ELU(_Pointwise):
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below (:func:`retrograd.nn.functional.elu`).

    Parameters
    ----------
    alpha : float, optional
        Default 1.
    inplace : bool, optional
        Overwrite the input (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.ELU(alpha=0.5)
    ELU(alpha=0.5)
    """
    _fn = "elu"
    _options = ("alpha", "inplace")

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace


class SELU(_Pointwise):
    """The scaled ELU with self-normalizing constants (:func:`retrograd.nn.functional.selu`).

    Parameters
    ----------
    inplace : bool, optional
        Accepted for torch compatibility.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.SELU()(rg.tensor([0.0]))
    tensor([0.])
    """
    _fn = "selu"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class CELU(_Pointwise):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (:func:`retrograd.nn.functional.celu`).

    Parameters
    ----------
    alpha : float, optional
        Default 1.
    inplace : bool, optional
        Accepted for torch compatibility.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.CELU(alpha=2.0)
    CELU(alpha=2.0)
    """
    _fn = "celu"
    _options = ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace


class GLU(_Pointwise):
    """The gated linear unit over ``dim`` (:func:`retrograd.nn.functional.glu`).

    Parameters
    ----------
    dim : int, optional
        The dim to halve (default -1).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.GLU()(rg.ones(2, 4)).shape
    (2, 2)
    """
    _fn = "glu"
    _options = ("dim",)

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim


class LogSigmoid(_Pointwise):
    """``log(sigmoid(x))``, computed stably (:func:`retrograd.nn.functional.logsigmoid`).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.LogSigmoid()(rg.tensor([0.0], dtype=rg.float64))
    tensor([-0.69314718], dtype=float64)
    """
    _fn = "logsigmoid"


class Softmin(_Pointwise):
    """``softmax(-x)`` along ``dim`` (:func:`retrograd.nn.functional.softmin`).

    Parameters
    ----------
    dim : int, optional
        The dim the weights sum to 1 along.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Softmin(dim=0)(rg.tensor([1.0, 1.0]))
    tensor([0.5, 0.5])
    """
    _fn = "softmin"
    _options = ("dim",)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim


class Softsign(_Pointwise):
    """``x / (1 + |x|)`` (:func:`retrograd.nn.functional.softsign`).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Softsign()(rg.tensor([1.0]))
    tensor([0.5])
    """
    _fn = "softsign"


class Tanhshrink(_Pointwise):
    """``x - tanh(x)`` (:func:`retrograd.nn.functional.tanhshrink`).

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Tanhshrink()(rg.tensor([0.0]))
    tensor([0.])
    """
    _fn = "tanhshrink"


class Threshold(_Pointwise):
    """``x`` above ``threshold``, else ``value`` (:func:`retrograd.nn.functional.threshold`).

    Parameters
    ----------
    threshold : float
    value : float
    inplace : bool, optional
        Accepted for torch compatibility.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Threshold(0.1, 20.0)(rg.tensor([0.0, 1.0]))
    tensor([20.,  1.])
    """
    _fn = "threshold"
    _options = ("threshold", "value")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace


class Softshrink(_Pointwise):
    """Shrink towards 0 by ``lambd`` (:func:`retrograd.nn.functional.softshrink`).

    Parameters
    ----------
    lambd : float, optional
        Default 0.5.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Softshrink(1.0)(rg.tensor([3.0]))
    tensor([2.])
    """
    _fn = "softshrink"
    _options = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd


class Hardshrink(_Pointwise):
    """``x`` where ``|x| > lambd``, else 0 (:func:`retrograd.nn.functional.hardshrink`).

    Parameters
    ----------
    lambd : float, optional
        Default 0.5.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.nn.Hardshrink(1.0)(rg.tensor([0.5, 3.0]))
    tensor([0., 3.])
    """
    _fn = "hardshrink"
    _options = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd


class PReLU(Module):
    """``x`` above 0, ``a * x`` below, with a learned slope ``a`` (one, or one per channel).

    Parameters
    ----------
    num_parameters : int, optional
        1 (one shared slope, default) or the number of input channels (dim 1).
    init : float, optional
        The slopes' first value (default 0.25).
    device, dtype : optional
        The parameter's device and dtype (default dtype: the default dtype).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.PReLU()
    >>> m(rg.tensor([-2.0, 2.0]))
    tensor([-0.5,  2. ], grad_fn=<WhereBackward0>)
    >>> m.weight.shape
    (1,)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), float(init), dtype=dtype, device=device))

    def reset_parameters(self) -> None:
        """Set every slope back to ``init``.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.PReLU(init=0.5)
        >>> m.reset_parameters()
        >>> m.weight.tolist()
        [0.5]
        """
        from retrograd.core import no_grad
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`retrograd.nn.functional.prelu` with the learned slopes.

        Parameters
        ----------
        input : Tensor

        Returns
        -------
        Tensor
        """
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """The randomized leaky ReLU (:func:`retrograd.nn.functional.rrelu`): in
    training mode each negative element gets a slope drawn from U(lower,
    upper); in eval mode the slope is ``(lower + upper) / 2``.

    Parameters
    ----------
    lower, upper : float, optional
        The slopes' range (default 1/8 and 1/3).
    inplace : bool, optional
        Overwrite the input (default False).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.RReLU(0.1, 0.3)
    >>> m
    RReLU(lower=0.1, upper=0.3)
    >>> m.eval()(rg.tensor([-1.0, 2.0]))
    tensor([-0.2,  2. ])
    """

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply the activation (random slopes in training mode).

        Parameters
        ----------
        input : Tensor
            A floating-point tensor.

        Returns
        -------
        Tensor
        """
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    """Softmax over the channels at each spatial position: of a ``(N, C, H,
    W)`` or ``(C, H, W)`` input, along dim -3.

    Examples
    --------
    >>> import retrograd as rg
    >>> y = rg.nn.Softmax2d()(rg.zeros(1, 2, 1, 3))
    >>> y[0, :, 0, 0]
    tensor([0.5, 0.5])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply the softmax along the channels (dim -3).

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, H, W)`` or ``(C, H, W)``.

        Returns
        -------
        Tensor
            Of the input's shape; sums to 1 over the channels.

        Raises
        ------
        ValueError
            For an input that is neither 3-D nor 4-D.
        """
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)
