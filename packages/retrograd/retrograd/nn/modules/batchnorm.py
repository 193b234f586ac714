"""BatchNorm1d, BatchNorm2d and BatchNorm3d."""
from __future__ import annotations

from typing import Any

import numpy as np

import retrograd.core as _c
from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn import init
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class _BatchNorm(Module):
    """What the BatchNorm layers share; they differ only in the input ranks
    they accept (``_check_input_dim``)."""

    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(_c.empty(num_features, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_c.empty(num_features, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _c.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", _c.ones(num_features, dtype=dtype, device=device))
            # int64 whatever the dtype, as torch's
            self.register_buffer("num_batches_tracked", _c.tensor(0, dtype=np.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Reset the running statistics: mean 0, variance 1, no batches tracked.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.BatchNorm1d(2)
        >>> _ = m(rg.randn(4, 2))
        >>> m.reset_running_stats()
        >>> m.running_var, m.num_batches_tracked
        (tensor([1., 1.]), tensor(0))
        """
        if self.track_running_stats:
            with _c.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, the weight to ones and the bias to zeros.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.BatchNorm1d(2)
        >>> m.reset_parameters()
        >>> m.weight.detach(), m.bias.detach()
        (tensor([1., 1.]), tensor([0., 0.]))
        """
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input`` per channel.

        In training mode, with the batch's mean and biased variance, and
        (when ``track_running_stats``) the running statistics move towards
        the batch's: ``stat = (1 - momentum) * stat + momentum * batch_stat``
        with the unbiased variance, or with ``momentum=None`` their
        cumulative average (factor ``1 / num_batches_tracked``). In eval
        mode, with the running statistics (or, without them, the batch's).

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, *)``.

        Returns
        -------
        Tensor
            Of the input's shape.

        Raises
        ------
        ValueError
            For an input of the wrong rank, or a single value per channel
            in training mode.
        """
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with _c.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        # the batch's statistics in training mode, and in eval mode when
        # there are no running ones
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep_stats else None,
                            self.running_var if keep_stats else None, self.weight, self.bias, use_batch, factor,
                            self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation (Ioffe and Szegedy, 2015) of an input of shape
    ``(N, C)`` or ``(N, C, L)``, per channel ``C``.

    ``y = (x - mean) / sqrt(var + eps) * weight + bias``, the statistics
    over the batch (and length) in training mode, the running ones in eval
    mode; see :meth:`forward`.

    Parameters
    ----------
    num_features : int
        The channels ``C``.
    eps : float, optional
        Added to the variance for stability (default 1e-5).
    momentum : float or None, optional
        The running statistics' update factor (default 0.1); None for a
        cumulative moving average.
    affine : bool, optional
        Learn a per-channel ``weight`` (initialised to ones) and ``bias``
        (zeros) (default True).
    track_running_stats : bool, optional
        Keep the buffers ``running_mean`` (zeros), ``running_var`` (ones) and
        ``num_batches_tracked`` (0, int64) (default True); without them
        eval mode uses the batch's statistics too.
    device : str or Device, optional
        Where the parameters and buffers live (default: the CPU).
    dtype : dtype, optional
        The parameters' and running statistics' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).
    bias : bool, optional
        Keyword-only: learn the bias (default True; only with ``affine``).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.BatchNorm1d(2)
    >>> m
    BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> x = rg.tensor([[1.0, 10.0], [3.0, 30.0]])
    >>> m(x).detach()
    tensor([[-0.999995  , -0.99999994],
            [ 0.999995  ,  0.99999994]])
    >>> m.running_mean
    tensor([0.2, 2. ])
    >>> m.eval()(x).shape
    (2, 2)
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of an input of shape ``(N, C, H, W)``, per
    channel ``C``, the statistics over the batch and both spatial dims.

    Parameters
    ----------
    num_features : int
        The channels ``C``.
    eps : float, optional
        Added to the variance for stability (default 1e-5).
    momentum : float or None, optional
        The running statistics' update factor (default 0.1); None for a
        cumulative moving average.
    affine : bool, optional
        Learn a per-channel ``weight`` (ones) and ``bias`` (zeros) (default True).
    track_running_stats : bool, optional
        Keep ``running_mean``, ``running_var`` and ``num_batches_tracked``
        (default True).
    device : str or Device, optional
        Where the parameters and buffers live (default: the CPU).
    dtype : dtype, optional
        The parameters' and running statistics' dtype (default: the default dtype, :func:`retrograd.get_default_dtype`).
    bias : bool, optional
        Keyword-only: learn the bias (default True; only with ``affine``).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.BatchNorm2d(3, momentum=None, affine=False)
    >>> m
    BatchNorm2d(3, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=True)
    >>> m(rg.randn(4, 3, 5, 5)).shape
    (4, 3, 5, 5)
    >>> m.num_batches_tracked
    tensor(1)
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of an input of shape ``(N, C, D, H, W)``, per
    channel ``C``, the statistics over the batch and the three spatial dims
    (volumetric or spatio-temporal batch normalisation).

    Parameters
    ----------
    num_features : int
        The channels ``C``.
    eps : float, optional
        Added to the variance for stability (default 1e-5).
    momentum : float or None, optional
        The running statistics' update factor (default 0.1); None for a
        cumulative moving average.
    affine : bool, optional
        Learn a per-channel ``weight`` (ones) and ``bias`` (zeros) (default True).
    track_running_stats : bool, optional
        Keep ``running_mean``, ``running_var`` and ``num_batches_tracked``
        (default True).
    device : str or Device, optional
        Where the parameters and buffers live (default: the CPU).
    dtype : dtype, optional
        The parameters' and running statistics' dtype (default: the default dtype,
        :func:`retrograd.get_default_dtype`).
    bias : bool, optional
        Keyword-only: learn the bias (default True; only with ``affine``).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.BatchNorm3d(4)
    >>> m
    BatchNorm3d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> y = m(rg.randn(2, 4, 3, 5, 5))
    >>> y.shape
    (2, 4, 3, 5, 5)
    >>> bool(abs(float(y[:, 0].mean())) < 1e-5)
    True
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")
