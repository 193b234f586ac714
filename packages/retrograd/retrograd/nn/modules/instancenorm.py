"""InstanceNorm1d/2d/3d."""
from __future__ import annotations

import warnings
from typing import Any

from retrograd.core import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.batchnorm import _BatchNorm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]

_PARAMS_DOC = """num_features : int
        The channels ``C``.
    eps : float, optional
        Added to the variance for stability (default 1e-5).
    momentum : float or None, optional
        The running statistics' update factor (default 0.1; None counts as 0).
    affine : bool, optional
        Learn a per-channel ``weight`` (ones) and ``bias`` (zeros) (default
        False, unlike BatchNorm).
    track_running_stats : bool, optional
        Keep ``running_mean``, ``running_var`` and ``num_batches_tracked``
        (default False); in eval mode the running statistics then normalise.
    device : str or Device, optional
        Where the parameters and buffers live (default: the CPU).
    dtype : dtype, optional
        The parameters' and running statistics' dtype (default: the default dtype,
        :func:`retrograd.get_default_dtype`).
    bias : bool, optional
        Keyword-only: learn the bias (default True; only with ``affine``)."""


class _InstanceNorm(_BatchNorm):
    """What InstanceNorm1d/2d/3d share; they differ in the ranks they accept."""

    # the rank of an input without its batch dim
    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        # checkpoints older than torch 0.4 (no version) kept running statistics
        # that an InstanceNorm without track_running_stats has no use for
        if local_metadata.get("version", None) is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                klass = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {} for {} with track_running_stats=False. If state_dict "
                    "is a checkpoint saved before 0.4.0, this may be expected because {} does not track running "
                    "stats by default since 0.4.0. Please remove these keys from state_dict. If the running stats "
                    "are actually needed, instead set track_running_stats=True in {} to enable them. See the "
                    "documentation of {} for details.".format(" and ".join(f'"{k}"' for k in keys), klass, klass,
                                                               klass, klass))
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input: Tensor) -> Tensor:
        """Normalise each sample's channels over their spatial dims.

        In training mode (or without running statistics) with each
        instance's mean and biased variance, the running statistics (when
        tracked) moving towards their batch average; in eval mode with
        ``track_running_stats``, with the running statistics. An input
        without a batch dim is normalised as a batch of one.

        Parameters
        ----------
        input : Tensor
            Of shape ``(N, C, *spatial)`` or ``(C, *spatial)``.

        Returns
        -------
        Tensor
            Of the input's shape.

        Raises
        ------
        ValueError
            For an input of the wrong rank, a channel count other than
            ``num_features`` with ``affine``, or a single spatial element.

        Warns
        -----
        UserWarning
            For a channel count other than ``num_features`` without ``affine``.
        """
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.ndim == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise ValueError(f"expected {self._no_batch_dim}D or {self._no_batch_dim + 1}D input "
                             f"(got {input.ndim}D input)")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation (Ulyanov et al., 2016) of an input of shape
    ``(N, C, L)`` or ``(C, L)``: each sample's channel normalised over ``L``.

    Parameters
    ----------
    {params}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.InstanceNorm1d(2)
    >>> m
    InstanceNorm1d(2, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    >>> m(rg.tensor([[[1.0, 3.0], [0.0, 10.0]]]))
    tensor([[[-0.999995  ,  0.999995  ],
             [-0.99999976,  0.99999976]]])
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of an input of shape ``(N, C, H, W)`` or
    ``(C, H, W)``: each sample's channel normalised over ``H`` and ``W``.

    Parameters
    ----------
    {params}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    >>> m(rg.randn(2, 3, 4, 4)).shape
    (2, 3, 4, 4)
    >>> sorted(m.state_dict())
    ['bias', 'num_batches_tracked', 'running_mean', 'running_var', 'weight']
    """

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of an input of shape ``(N, C, D, H, W)`` or
    ``(C, D, H, W)``: each sample's channel normalised over its volume.

    Parameters
    ----------
    {params}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.InstanceNorm3d(2)
    >>> m(rg.randn(2, 2, 3, 3, 3)).shape
    (2, 2, 3, 3, 3)
    """

    _no_batch_dim = 4


for _cls in (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d):
    _cls.__doc__ = _cls.__doc__.format(params=_PARAMS_DOC) if _cls.__doc__ else None
del _cls
