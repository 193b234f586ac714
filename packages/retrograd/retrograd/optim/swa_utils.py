"""Stochastic weight averaging and EMA of models, as ``torch.optim.swa_utils``.

:class:`AveragedModel` keeps a copy of a model whose parameters are a running
average of the model's (the equal-weight average of SWA, an exponential
moving average, or a function of your own); :class:`SWALR` anneals the
learning rate to the constant one SWA trains with; :func:`update_bn`
recomputes BatchNorm's running statistics for the averaged weights.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

from retrograd.core import Tensor, is_floating_dtype, no_grad, tensor
from retrograd.nn.modules.batchnorm import _BatchNorm
from retrograd.nn.modules.instancenorm import _InstanceNorm
from retrograd.nn.modules.module import Module
from retrograd.optim.lr_scheduler import LRScheduler, _format_param, _warn_get_lr_called_within_step
from retrograd.optim.optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]

_DECAY_DOC = """decay : float, default 0.999
        The EMA's decay :math:`\\beta` in ``[0, 1]``: each update gives
        ``ema = decay * ema + (1 - decay) * current``."""
_DECAY_RAISES = """Raises
    ------
    ValueError
        If ``decay`` is outside ``[0, 1]``."""


def _fill(func: Any) -> Any:
    func.__doc__ = func.__doc__.format(decay=_DECAY_DOC, raises=_DECAY_RAISES)
    return func


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _is_float_or_complex(t: Tensor) -> bool:
    return is_floating_dtype(t.dtype) or t.dtype.kind == "c"


@_fill
def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """The in-place EMA update of lists of tensors, for ``AveragedModel(multi_avg_fn=...)``.

    Parameters
    ----------
    {decay}

    Returns
    -------
    callable
        ``f(ema_params, current_params, num_averaged)``, which moves each
        tensor of ``ema_params`` towards its ``current_params`` counterpart in place.

    {raises}

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.optim.swa_utils import get_ema_multi_avg_fn
    >>> ema = [rg.zeros(2)]
    >>> get_ema_multi_avg_fn(0.75)(ema, [rg.ones(2)], 1)
    >>> ema
    [tensor([0.25, 0.25])]
    """
    _check_decay(decay)

    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        with no_grad():
            if _is_float_or_complex(ema_param_list[0]):
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """The in-place equal-weight (SWA) update of lists of tensors, for ``AveragedModel(multi_avg_fn=...)``.

    With ``n`` models averaged so far, each tensor moves to
    ``avg + (current - avg) / (n + 1)``. As torch's, a tensor ``n`` makes the
    weight ``1 / (n + 1)`` a tensor of the default dtype (float32 unless
    changed), so float64 averages take that float32-rounded weight; the
    default update of :class:`AveragedModel` on the CPU divides exactly.

    Returns
    -------
    callable
        ``f(averaged_params, current_params, num_averaged)``, updating ``averaged_params`` in place.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.optim.swa_utils import get_swa_multi_avg_fn
    >>> avg = [rg.tensor([1.0, 2.0])]
    >>> get_swa_multi_avg_fn()(avg, [rg.tensor([4.0, 8.0])], 2)
    >>> avg
    [tensor([2., 4.])]
    """

    def swa_update(averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST,
                   num_averaged: Tensor | int) -> None:
        with no_grad():
            if _is_float_or_complex(averaged_param_list[0]):
                weight = 1 / (num_averaged + 1)
                w = weight.item() if isinstance(weight, Tensor) else weight
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    p_avg.lerp_(p_model, w)
                return
            if isinstance(num_averaged, Tensor):
                # torch's _foreach_addcdiv_ refuses integer tensors; the same error here
                raise RuntimeError("Integer division with addcdiv is no longer supported: average integer "
                                   "tensors with get_swa_avg_fn (the default of AveragedModel) instead.")
            raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number: "
                               "average integer tensors with get_swa_avg_fn (the default of AveragedModel) instead.")

    return swa_update


@_fill
def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The EMA update of one tensor, for ``AveragedModel(avg_fn=...)``.

    Parameters
    ----------
    {decay}

    Returns
    -------
    callable
        ``f(ema_param, current_param, num_averaged)``, returning
        ``decay * ema_param + (1 - decay) * current_param``.

    {raises}

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.optim.swa_utils import get_ema_avg_fn
    >>> get_ema_avg_fn(0.9)(rg.tensor([1.0]), rg.tensor([2.0]), 3)
    tensor([1.1])
    """
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The equal-weight (SWA) update of one tensor, for ``AveragedModel(avg_fn=...)``.

    Returns
    -------
    callable
        ``f(averaged_param, current_param, num_averaged)``, returning
        ``averaged_param + (current_param - averaged_param) / (num_averaged + 1)``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.optim.swa_utils import get_swa_avg_fn
    >>> get_swa_avg_fn()(rg.tensor([1.0]), rg.tensor([4.0]), 2)
    tensor([2.])
    """

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of a model whose parameters are a running average of the model's (SWA or EMA).

    Stochastic weight averaging (Izmailov et al., 2018) averages the weights
    visited late in training with equal weights; an exponential moving
    average weighs recent ones more. The constructor deep-copies ``model``
    (to ``device`` if given); each :meth:`update_parameters` call then
    folds the model's current parameters into the copy's: the first call
    copies them, later calls apply the averaging function with the number
    of models averaged so far, kept in the ``n_averaged`` buffer (an int64
    0-d tensor, part of the state dict). Calling the averaged model runs the copy.

    Parameters
    ----------
    model : Module
        The model to average.
    device : str or Device, optional
        Where the copy lives (default: the model's device).
    avg_fn : callable, optional
        ``avg_fn(averaged_param, model_param, num_averaged) -> Tensor``, the
        new value of one averaged tensor (see :func:`get_ema_avg_fn`).
    multi_avg_fn : callable, optional
        ``multi_avg_fn(averaged_params, model_params, num_averaged)``, which
        updates lists of tensors in place (see :func:`get_ema_multi_avg_fn`).
        With neither function, the equal-weight average (SWA).
    use_buffers : bool, default False
        Average the buffers too (BatchNorm's running statistics, ...); if
        False, the buffers are copied from the model at each update.

    Raises
    ------
    AssertionError
        If both ``avg_fn`` and ``multi_avg_fn`` are given (torch's class of error).

    Notes
    -----
    The averaging functions are not saved in the state dict. With BatchNorm
    layers, recompute their statistics for the averaged weights with
    :func:`update_bn`, or average the buffers (``use_buffers=True``).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.optim.swa_utils import AveragedModel
    >>> model = rg.nn.Linear(1, 1, bias=False)
    >>> swa_model = AveragedModel(model)
    >>> for value in (1.0, 2.0, 6.0):
    ...     with rg.no_grad():
    ...         _ = model.weight.fill_(value)
    ...     swa_model.update_parameters(model)
    >>> swa_model.module.weight
    Parameter containing:
    tensor([[3.]], requires_grad=True)
    >>> swa_model.n_averaged
    tensor(3)
    >>> swa_model(rg.tensor([[2.0]]))
    tensor([[6.]], grad_fn=<MmBackward0>)

    An exponential moving average of the weights and the buffers:

    >>> from retrograd.optim.swa_utils import get_ema_multi_avg_fn
    >>> ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9), use_buffers=True)
    """

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
                 multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Any], None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype="int64", device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the average.

        The first call copies them; each later call applies the averaging
        function. Without ``use_buffers``, the buffers are copied from
        ``model``. ``n_averaged`` then grows by one.

        Parameters
        ----------
        model : Module
            A model with the same structure as the averaged one (typically the one being trained).

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.optim.swa_utils import AveragedModel, get_ema_avg_fn
        >>> model = rg.nn.Linear(1, 1, bias=False)
        >>> ema = AveragedModel(model, avg_fn=get_ema_avg_fn(0.5))
        >>> for value in (4.0, 2.0, 0.0):
        ...     with rg.no_grad():
        ...         _ = model.weight.fill_(value)
        ...     ema.update_parameters(model)
        >>> ema.module.weight.item()
        1.5
        """
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers
                      else self.parameters())
        model_param = (itertools.chain(model.parameters(), model.buffers()) if self.use_buffers
                       else model.parameters())
        self_param_detached: list[Tensor] = []
        model_param_detached: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        with no_grad():
            # as torch's: zip stops at the shorter list
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_averaged.device)
                self_param_detached.append(p_averaged.detach())
                model_param_detached.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)

            avg_fn_one = self.avg_fn
            if self.n_averaged > 0:
                if self.multi_avg_fn is not None or avg_fn_one is None:
                    for device, self_params, model_params in _group_by_device_and_dtype(
                            self_param_detached, model_param_detached):
                        n_averaged = self.n_averaged.to(device)
                        if self.multi_avg_fn is not None:
                            self.multi_avg_fn(self_params, model_params, n_averaged)
                        elif device.type_name == "cuda":
                            # torch's foreach path on its accelerators: lerp with weight 1 / (n + 1)
                            get_swa_multi_avg_fn()(self_params, model_params, n_averaged)
                        else:
                            avg_fn = get_swa_avg_fn()
                            for p_averaged, p_model in zip(self_params, model_params, strict=True):
                                p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
                else:
                    for p_averaged, p_model in zip(self_param_detached, model_param_detached, strict=True):
                        n_averaged = self.n_averaged.to(p_averaged.device)
                        p_averaged.detach().copy_(avg_fn_one(p_averaged.detach(), p_model, n_averaged))

            if not self.use_buffers:
                # the buffers follow the model's (recompute BatchNorm's with update_bn)
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def _group_by_device_and_dtype(averaged: list[Tensor], current: list[Tensor]) -> list[tuple[Any, list, list]]:
    """``(device, averaged, current)`` per device and dtype of the averaged tensors, in first-seen order."""
    groups: dict[tuple[str, str], tuple[Any, list[Tensor], list[Tensor]]] = {}
    for a, c in zip(averaged, current, strict=True):
        group = groups.setdefault((str(a.device), str(a.dtype)), (a.device, [], []))
        group[1].append(a)
        group[2].append(c)
    return list(groups.values())


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of the model's BatchNorm layers with one pass over ``loader``.

    The running mean and variance of each BatchNorm layer are reset and
    replaced by their cumulative average over the batches (momentum None
    during the pass); the layers' momenta and the model's training mode are
    restored afterwards. Use it after averaging weights with
    :class:`AveragedModel`, whose BatchNorm statistics do not match the
    averaged weights. Instance normalization layers are left alone, as in torch.

    Parameters
    ----------
    loader : iterable
        Batches: each a tensor, or a list or tuple whose first element is
        the input tensor (a ``DataLoader`` of ``(input, target)`` pairs).
    model : Module
        The model (or :class:`AveragedModel`) to update.
    device : str or Device, optional
        Where to move each batch before running the model.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.optim.swa_utils import update_bn
    >>> model = rg.nn.Sequential(rg.nn.Linear(2, 2), rg.nn.BatchNorm1d(2))
    >>> data = [rg.tensor([[1.0, 2.0], [3.0, 4.0]]), rg.tensor([[5.0, 6.0], [7.0, 8.0]])]
    >>> with rg.no_grad():
    ...     _ = model[0].weight.copy_(rg.eye(2))
    ...     _ = model[0].bias.zero_()
    >>> update_bn(data, model.eval())
    >>> model[1].running_mean
    tensor([4., 5.])
    >>> model.training, model[1].momentum
    (False, 0.1)
    """
    with no_grad():
        momenta: dict[Module, Any] = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to a constant ``swa_lr``, for stochastic weight averaging.

    Over ``anneal_epochs`` steps the rate moves from its current value to
    ``swa_lr`` (along a half cosine, or linearly), then stays there. As
    torch's, the schedule is recursive: each step interpolates from the
    rate the group holds, so it can take over from another scheduler.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates are scheduled.
    swa_lr : float or list of float
        The final rate, for all groups or one per group (stored as ``group["swa_lr"]``).
    anneal_epochs : int, default 10
        Number of steps of the annealing (0: ``swa_lr`` at once).
    anneal_strategy : {"cos", "linear"}, default "cos"
        The shape of the annealing.
    last_epoch : int, default -1
        The index of the last epoch (see :class:`~retrograd.optim.lr_scheduler.LRScheduler`).

    Raises
    ------
    ValueError
        For an unknown ``anneal_strategy``, a negative or non-integer
        ``anneal_epochs``, or a list ``swa_lr`` of the wrong length.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.optim.swa_utils import SWALR
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.2, anneal_epochs=4, anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(5):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.8, 0.6, 0.4, 0.2, 0.2]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: Literal["cos", "linear"] = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        """The next rates: a step of the annealing from each group's current rate towards ``swa_lr``.

        Called by :meth:`~retrograd.optim.lr_scheduler.LRScheduler.step`; to read the current rates use
        :meth:`~retrograd.optim.lr_scheduler.LRScheduler.get_last_lr`.

        Returns
        -------
        list
            One learning rate per parameter group.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.optim.swa_utils import SWALR
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = SWALR(opt, swa_lr=0.5, anneal_epochs=2)
        >>> opt.step()
        >>> sched.step()
        >>> sched.get_last_lr()
        [0.75]
        """
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # the rate the annealing would have started from, recovered from the group's current one
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: Literal["cos", "linear"]) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func: Callable[[float], float] = (self._cosine_anneal if anneal_strategy == "cos"
                                                      else self._linear_anneal)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state: every attribute except the optimizer and the annealing function.

        Returns
        -------
        dict
            ``last_epoch``, ``anneal_epochs``, ``_anneal_strategy``, ``base_lrs``, ...

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.optim.swa_utils import SWALR
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sd = SWALR(opt, swa_lr=0.1, anneal_strategy="linear").state_dict()
        >>> sd["_anneal_strategy"], sd["anneal_epochs"], "anneal_func" in sd
        ('linear', 10, False)
        """
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state made by :meth:`state_dict` (the annealing function follows the saved strategy).

        Parameters
        ----------
        state_dict : dict
            The scheduler's saved state.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.optim.swa_utils import SWALR
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> saved = SWALR(opt, swa_lr=0.1, anneal_strategy="linear").state_dict()
        >>> sched = SWALR(opt, swa_lr=0.1)
        >>> sched.load_state_dict(saved)
        >>> sched.anneal_func(0.25)
        0.25
        """
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)

