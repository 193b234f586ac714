"""Lazy modules: parameters shaped at the first call (LazyModuleMixin, LazyLinear, ...).

A lazy layer is built without its input size: its parameters (and, for the
norms, running statistics) are :class:`~retrograd.nn.UninitializedParameter`
and :class:`~retrograd.nn.UninitializedBuffer` placeholders. A forward
pre-hook reads the size from the first input, materializes and initializes
them (``initialize_parameters``), removes itself, and the module becomes its
ordinary class (``cls_to_become``): a ``LazyLinear`` is a ``Linear`` from then
on, as in torch.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from retrograd.core import Tensor, no_grad, tensor
from retrograd.nn.modules import batchnorm as _bn
from retrograd.nn.modules import conv as _conv
from retrograd.nn.modules import instancenorm as _in
from retrograd.nn.modules.linear import Linear
from retrograd.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """A mixin for modules whose parameters are shaped at their first call (torch's ``LazyModuleMixin``).

    A lazy module subclasses its ordinary class after this mixin (``class
    LazyLinear(LazyModuleMixin, Linear)``), creates placeholders
    (:class:`~retrograd.nn.UninitializedParameter`,
    :class:`~retrograd.nn.UninitializedBuffer`) for what depends on the input,
    and implements ``initialize_parameters(*args, **kwargs)``, which gets the
    first call's arguments and materializes them. The mixin registers the
    forward pre-hook that calls it; then the module's class becomes
    ``cls_to_become``, when set.

    A state dict can be loaded into a module that is still uninitialized:
    each placeholder takes the shape of its entry. Its ``in_features`` (or
    ``in_channels``, ``num_features``) are then read at the first call.

    Parameters
    ----------
    *args, **kwargs
        Passed to the next ``__init__`` in the MRO (the ordinary class's).

    Examples
    --------
    >>> import retrograd as rg
    >>> class LazyScale(rg.nn.modules.lazy.LazyModuleMixin, rg.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.weight = rg.nn.UninitializedParameter()
    ...     def initialize_parameters(self, x):
    ...         if self.has_uninitialized_params():
    ...             self.weight.materialize((x.shape[-1],))
    ...             with rg.no_grad():
    ...                 self.weight.fill_(2.0)
    ...     def forward(self, x):
    ...         return x * self.weight
    >>> m = LazyScale()
    >>> m.has_uninitialized_params()
    True
    >>> m(rg.ones(3))
    tensor([2., 2., 2.], grad_fn=<MulBackward0>)
    >>> m.weight.shape
    (3,)
    """

    cls_to_become: type | None = None

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self: Any, destination: dict, prefix: str, keep_vars: bool) -> None:
        # a placeholder is saved as itself: detach() would make it a plain
        # empty tensor, and a module loading it must see it is uninitialized
        super()._save_to_state_dict(destination, prefix, keep_vars)  # type: ignore[misc]
        for name, t in itertools.chain(self._parameters.items(), self._buffers.items()):
            if is_lazy(t) and prefix + name in destination:
                destination[prefix + name] = t

    def _load_from_state_dict(self: Any, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        # torch's _lazy_load_hook: a placeholder takes the shape of its entry
        # (which the loading below then copies in); an entry that is itself
        # a placeholder leaves it uninitialized
        both_lazy = []
        for name, param in itertools.chain(self._parameters.items(),
                                           self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                source = state_dict[key]
                if not is_lazy(source):
                    with no_grad():
                        param.materialize(source.shape)
                else:
                    both_lazy.append(key)
        if both_lazy:
            state_dict = {k: v for k, v in state_dict.items() if k not in both_lazy}
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,  # type: ignore[misc]
                                      missing_keys, unexpected_keys, error_msgs)
        missing_keys[:] = [k for k in missing_keys if k not in both_lazy]

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize and initialize the placeholders from the first call's arguments.

        Each lazy module implements it; the mixin's raises.

        Parameters
        ----------
        *args, **kwargs
            The arguments of the first call.

        Raises
        ------
        NotImplementedError
            Always, for the mixin itself.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LazyLinear(2)
        >>> m.initialize_parameters(rg.ones(4, 3))
        >>> m.weight.shape
        (2, 3)
        """
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self: Any) -> bool:
        """Whether a parameter or buffer of this module (not its children) is still a placeholder.

        Returns
        -------
        bool

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LazyLinear(2)
        >>> m.has_uninitialized_params()
        True
        >>> _ = m(rg.ones(1, 5))
        >>> type(m).__name__, m.in_features
        ('Linear', 5)
        """
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self: Any, module: Any, args: tuple, kwargs: dict | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


_FACTORY = """device, dtype : optional
        The parameters' device and dtype (default dtype: the default dtype)."""


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`~retrograd.nn.Linear` whose ``in_features`` is the last dim of its first input.

    Until the first call, ``weight`` and ``bias`` are placeholders and
    ``in_features`` is 0; the call materializes them, initializes them as
    ``Linear`` does, and the module becomes a ``Linear``.

    Parameters
    ----------
    out_features : int
        The size of each output sample.
    bias : bool, optional
        Learn an additive bias (default True).
    {factory}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.LazyLinear(3)
    >>> m
    LazyLinear(in_features=0, out_features=3, bias=True)
    >>> m(rg.ones(2, 5)).shape
    (2, 3)
    >>> m
    Linear(in_features=5, out_features=3, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        # bias=False: no tensor that would be replaced at once
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self: Any) -> None:
        """Initialize as :class:`~retrograd.nn.Linear` does, once the shapes are known.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LazyLinear(2)
        >>> m.reset_parameters()          # nothing to do yet
        >>> m.has_uninitialized_params()
        True
        """
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self: Any, input: Tensor) -> None:
        """Shape the parameters for ``input``'s last dim and initialize them.

        Parameters
        ----------
        input : Tensor
            The first input, ``(*, in_features)``.

        Raises
        ------
        AssertionError
            If the parameters were loaded from a state dict for another ``in_features``.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LazyLinear(4, bias=False)
        >>> m.initialize_parameters(rg.ones(3))
        >>> m.weight.shape, m.in_features
        ((4, 3), 3)
        """
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            # loaded from a state dict before the first call
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    # what the lazy convolutions share: in_channels from the first input

    def reset_parameters(self: Any) -> None:
        """Initialize as the convolution does, once the shapes are known.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LazyConv1d(2, 3)
        >>> m.reset_parameters()          # nothing to do yet
        >>> m.has_uninitialized_params()
        True
        """
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self: Any, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """Shape the weight and bias for ``input``'s channels and initialize them.

        Parameters
        ----------
        input : Tensor
            The first input, ``(N, C, *spatial)`` or ``(C, *spatial)``.
        *args, **kwargs
            The call's other arguments (a transposed convolution's ``output_size``), unused.

        Raises
        ------
        RuntimeError
            For an input of the wrong rank.
        ValueError
            If the channels are not divisible by ``groups``.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LazyConv2d(4, 3)
        >>> m.initialize_parameters(rg.ones(1, 2, 5, 5))
        >>> m.weight.shape
        (4, 2, 3, 3)
        """
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        groups = self.groups
        kernel = tuple(self.kernel_size)
        if self.transposed:
            shape = (self.in_channels, self.out_channels // groups) + kernel
        else:
            shape = (self.out_channels, self.in_channels // groups) + kernel
        with no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _lazy_weights(self: Any, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.register_parameter("weight", UninitializedParameter(device=device, dtype=dtype))
        self.out_channels = out_channels
        if bias:
            self.register_parameter("bias", UninitializedParameter(device=device, dtype=dtype))

    def _get_in_channels(self: Any, input: Tensor) -> int:
        n = self._n
        unbatched, batched = n + 1, n + 2
        if input.dim() not in (unbatched, batched):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {batched}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {tuple(input.shape)}")
        return input.shape[1] if input.dim() == batched else input.shape[0]


_CONV_ARGS = """out_channels : int
        The number of output channels.
    kernel_size : int or tuple
        The kernel's size.
    stride, padding, dilation : int or tuple, optional
        As the convolution's (defaults 1, 0, 1).
    groups : int, optional
        Default 1; the input's channels must be divisible by it.
    bias : bool, optional
        Learn a bias (default True).
    padding_mode : str, optional
        ``'zeros'`` (default), ``'reflect'``, ``'replicate'`` or ``'circular'``.
    {factory}"""
_CONVT_ARGS = """out_channels : int
        The number of output channels.
    kernel_size : int or tuple
        The kernel's size.
    stride, padding, output_padding : int or tuple, optional
        As the transposed convolution's (defaults 1, 0, 0).
    groups : int, optional
        Default 1.
    bias : bool, optional
        Learn a bias (default True).
    dilation : int or tuple, optional
        Default 1.
    padding_mode : str, optional
        Only ``'zeros'``.
    {factory}"""
_LAZY_CONV_DOC = """A :class:`~retrograd.nn.{base}` whose ``in_channels`` is read from its first input.

    Until the first call, ``weight`` and ``bias`` are placeholders and
    ``in_channels`` is 0; the call materializes them, initializes them as
    ``{base}`` does, and the module becomes a ``{base}``.

    Parameters
    ----------
    {args}

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Lazy{base}(4, 3)
    >>> m(rg.ones(1, 2{spatial})).shape[1]
    4
    >>> type(m).__name__, m.weight.shape[:2]
    ('{base}', {wshape})
    """


class LazyConv1d(_LazyConvXdMixin, _conv.Conv1d):
    cls_to_become = _conv.Conv1d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        # (0 channels, no bias: nothing allocated that is replaced at once)
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._lazy_weights(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvXdMixin, _conv.Conv2d):
    cls_to_become = _conv.Conv2d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        # (0 channels, no bias: nothing allocated that is replaced at once)
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._lazy_weights(out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvXdMixin, _conv.Conv3d):
    cls_to_become = _conv.Conv3d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        # (0 channels, no bias: nothing allocated that is replaced at once)
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._lazy_weights(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvXdMixin, _conv.ConvTranspose1d):
    cls_to_become = _conv.ConvTranspose1d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._lazy_weights(out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvXdMixin, _conv.ConvTranspose2d):
    cls_to_become = _conv.ConvTranspose2d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._lazy_weights(out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvXdMixin, _conv.ConvTranspose3d):
    cls_to_become = _conv.ConvTranspose3d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._lazy_weights(out_channels, bias, device, dtype)


_conv_classes: list[tuple[type, str, str, str]] = [
    (LazyConv1d, _CONV_ARGS, ", 5", "(4, 2)"), (LazyConv2d, _CONV_ARGS, ", 5, 5", "(4, 2)"),
    (LazyConv3d, _CONV_ARGS, ", 4, 4, 4", "(4, 2)"), (LazyConvTranspose1d, _CONVT_ARGS, ", 5", "(2, 4)"),
    (LazyConvTranspose2d, _CONVT_ARGS, ", 5, 5", "(2, 4)"), (LazyConvTranspose3d, _CONVT_ARGS, ", 4, 4, 4", "(2, 4)")]

for _cls, _args, _spatial, _wshape in _conv_classes:
    _cls.__doc__ = _LAZY_CONV_DOC.format(base=getattr(_cls, "cls_to_become").__name__,
                                         args=_args.format(factory=_FACTORY), spatial=_spatial, wshape=_wshape)
LazyLinear.__doc__ = str(LazyLinear.__doc__).replace("{factory}", _FACTORY)


# --- the norms -----------------------------------------------------------------------------

class _LazyNormBase(LazyModuleMixin, _bn._BatchNorm):
    # what the lazy batch and instance norms share: num_features from dim 1

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        # (0 features, no affine, no statistics: nothing allocated that is replaced at once)
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=np.int64, device=device)

    def reset_parameters(self: Any) -> None:
        """Reset as the norm does, once the shapes are known.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LazyBatchNorm1d()
        >>> m.reset_parameters()          # nothing to do yet
        >>> m.has_uninitialized_params()
        True
        """
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self: Any, input: Tensor) -> None:
        """Shape the weight, bias and running statistics for ``input``'s dim 1, and reset them.

        Parameters
        ----------
        input : Tensor
            The first input, ``(N, C, *)``.

        Examples
        --------
        >>> import retrograd as rg
        >>> m = rg.nn.LazyBatchNorm2d()
        >>> m.initialize_parameters(rg.ones(2, 3, 4, 4))
        >>> m.weight.shape, m.running_var.tolist()
        ((3,), [1.0, 1.0, 1.0])
        """
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with no_grad():
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


_NORM_DOC = """A :class:`~retrograd.nn.{base}` whose ``num_features`` is the size of dim 1 of its first input.

    Until the first call, the weight, bias and running statistics are
    placeholders and ``num_features`` is 0; the call materializes and resets
    them, and the module becomes a ``{base}``. (As torch's, ``affine`` and
    ``track_running_stats`` default to True here, for the instance norms too.)

    Parameters
    ----------
    eps : float, optional
        Added to the variance (default 1e-5).
    momentum : float or None, optional
        The running statistics' update factor (default 0.1; None: a cumulative average).
    affine : bool, optional
        Learn a per-channel scale and shift (default True).
    track_running_stats : bool, optional
        Keep running statistics for eval mode (default True).
    {factory}
    bias : bool, optional
        Keyword-only: learn the shift (default True; only with ``affine``).

    Examples
    --------
    >>> import retrograd as rg
    >>> m = rg.nn.Lazy{base}()
    >>> _ = m(rg.randn(2, 3{spatial}))
    >>> type(m).__name__, m.num_features, m.running_mean.shape
    ('{base}', 3, (3,))
    """


def _check_like(self: Any, input: Tensor) -> None:
    # the input ranks of the class the module becomes
    self.cls_to_become._check_input_dim(self, input)


class LazyBatchNorm1d(_LazyNormBase, _bn._BatchNorm):
    cls_to_become = _bn.BatchNorm1d
    _check_input_dim = _check_like


class LazyBatchNorm2d(_LazyNormBase, _bn._BatchNorm):
    cls_to_become = _bn.BatchNorm2d
    _check_input_dim = _check_like


class LazyBatchNorm3d(_LazyNormBase, _bn._BatchNorm):
    cls_to_become = _bn.BatchNorm3d
    _check_input_dim = _check_like


class LazyInstanceNorm1d(_LazyNormBase, _in._InstanceNorm):
    cls_to_become = _in.InstanceNorm1d
    _no_batch_dim = _in.InstanceNorm1d._no_batch_dim


class LazyInstanceNorm2d(_LazyNormBase, _in._InstanceNorm):
    cls_to_become = _in.InstanceNorm2d
    _no_batch_dim = _in.InstanceNorm2d._no_batch_dim


class LazyInstanceNorm3d(_LazyNormBase, _in._InstanceNorm):
    cls_to_become = _in.InstanceNorm3d
    _no_batch_dim = _in.InstanceNorm3d._no_batch_dim


_norm_classes: list[tuple[type, str]] = [
    (LazyBatchNorm1d, ""), (LazyBatchNorm2d, ", 2, 2"), (LazyBatchNorm3d, ", 2, 2, 2"), (LazyInstanceNorm1d, ", 4"), (LazyInstanceNorm2d, ", 2, 2"),
    (LazyInstanceNorm3d, ", 2, 2, 2")]

for _cls, _spatial in _norm_classes:
    _cls.__doc__ = _NORM_DOC.format(base=getattr(_cls, "cls_to_become").__name__,
                                    factory=_FACTORY, spatial=_spatial)
del _cls, _spatial, _args, _wshape
