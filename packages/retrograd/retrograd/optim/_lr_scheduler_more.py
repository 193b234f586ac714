"""More learning-rate schedules, as torch.optim.lr_scheduler's (re-exported by ``rg.optim.lr_scheduler``).

MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR, CyclicLR,
CosineAnnealingWarmRestarts, and the two combinators SequentialLR and
ChainedScheduler. The rates equal torch's step by step: the chainable ones
use torch's recursive formulas, ``step(epoch)`` the closed forms.
"""
from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal, TypeVar

from retrograd.optim.lr_scheduler import (LRScheduler, ReduceLROnPlateau, _enable_get_lr_call, _format_param,
                                          _param_groups_val_list, _update_param_group_val,
                                          _warn_get_lr_called_within_step)
from retrograd.optim.optimizer import Optimizer

__all__ = ["MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR", "CyclicLR", "CosineAnnealingWarmRestarts",
           "SequentialLR", "ChainedScheduler"]

# Shared parameter texts, filled into the class docstrings with % formatting.
_DOCS = {
    "optimizer": "optimizer : Optimizer\n"
                 "        The optimizer whose learning rates are scheduled.",
    "last_epoch": "last_epoch : int, default -1\n"
                  "        The index of the last epoch; leave -1 to start (see :class:`LRScheduler`).",
    "schedulers": "It refuses ReduceLROnPlateau (its ``step`` needs the metric) and\n"
                  "    schedulers of another optimizer.",
}

_C = TypeVar("_C", bound=type)


def _fill_doc(cls: _C) -> _C:
    cls.__doc__ = (cls.__doc__ or "") % _DOCS
    return cls


def _lambdas_state_dict(scheduler: LRScheduler, attribute: str) -> dict[str, Any]:
    # As torch: of the functions, only callable objects' __dict__ is saved (plain functions and lambdas give None).
    state_dict = {key: value for key, value in scheduler.__dict__.items() if key not in ("optimizer", attribute)}
    state_dict[attribute] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                             for fn in getattr(scheduler, attribute)]
    return state_dict


def _check_schedulers(owner: str, optimizer: Any, schedulers: Sequence[LRScheduler]) -> None:
    for scheduler_idx, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {scheduler_idx} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                f"specified when calling `step`, but got one at index {scheduler_idx} in the given schedulers "
                "sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got scheduler "
                f"{scheduler.__class__.__name__} at index {scheduler_idx} has {scheduler.optimizer}, which is "
                f"different from {optimizer.__class__.__name__}.")


class _Combinator(LRScheduler):
    """What SequentialLR and ChainedScheduler share: their state holds their schedulers' states."""

    _schedulers: Sequence[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """The state, with each inner scheduler's state dict under ``"_schedulers"``."""
        state_dict = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state_dict["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state made by :meth:`state_dict`, each inner scheduler's included."""
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers    # leave the caller's dict as it was
        for idx, s in enumerate(schedulers):
            self._schedulers[idx].load_state_dict(s)


@_fill_doc
class MultiplicativeLR(LRScheduler):
    """Multiply each group's rate by a function of the epoch, every epoch.

    ``lr = lr * lr_lambda(last_epoch)`` at each step (not at construction).

    Parameters
    ----------
    %(optimizer)s
    lr_lambda : callable or list of callables
        ``f(epoch) -> factor``, or one such function per parameter group.
    %(last_epoch)s

    Raises
    ------
    ValueError
        If a list of functions does not have one per parameter group.
    TypeError
        If a ``lr_lambda`` is not callable.

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.125]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; of the functions, only callable objects' ``__dict__`` is saved."""
        return _lambdas_state_dict(self, "lr_lambdas")

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state made by :meth:`state_dict` (callable objects get their saved ``__dict__`` back)."""
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas    # leave the caller's dict as it was
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)

    def get_lr(self) -> list[Any]:
        """The current rates times ``lr_lambda(last_epoch)`` (unchanged at construction)."""
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * lmbda(self.last_epoch) for lmbda, group in zip(self.lr_lambdas,
                                                                             self.optimizer.param_groups)]


@_fill_doc
class ConstantLR(LRScheduler):
    """Multiply the rates by a constant ``factor`` for the first ``total_iters`` epochs.

    From epoch ``total_iters`` on the rates are back to their initial values.

    Parameters
    ----------
    %(optimizer)s
    factor : float, default 1/3
        The factor, in ``[0, 1]``.
    total_iters : int, default 5
        Number of epochs with the reduced rates.
    %(last_epoch)s

    Raises
    ------
    ValueError
        If ``factor`` is outside ``[0, 1]``.

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The rates of ``last_epoch``: reduced at epoch 0, restored at ``total_iters``."""
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


@_fill_doc
class LinearLR(LRScheduler):
    """Change the rates linearly from ``start_factor`` to ``end_factor`` times the initial rates.

    The factor moves over ``total_iters`` epochs and then stays at ``end_factor``.

    Parameters
    ----------
    %(optimizer)s
    start_factor : float, default 1/3
        Factor at epoch 0, in ``(0, 1]``.
    end_factor : float, default 1.0
        Factor from epoch ``total_iters`` on, in ``[0, 1]``.
    total_iters : int, default 5
        Number of epochs of the change.
    %(last_epoch)s

    Raises
    ------
    ValueError
        If ``start_factor`` is outside ``(0, 1]`` or ``end_factor`` outside ``[0, 1]``.

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The rates of ``last_epoch`` by torch's recursive formula."""
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        # The ratio of this epoch's factor to the last one's.
        ratio = 1.0 + (self.end_factor - self.start_factor) / (
            self.total_iters * self.start_factor + (self.last_epoch - 1) * (self.end_factor - self.start_factor))
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


@_fill_doc
class PolynomialLR(LRScheduler):
    """Decay the rates polynomially to zero over ``total_iters`` epochs.

    ``lr = base_lr * (1 - min(t, total_iters) / total_iters) ** power``.

    Parameters
    ----------
    %(optimizer)s
    total_iters : int, default 5
        Number of epochs of the decay.
    power : float, default 1.0
        The power of the polynomial.
    %(last_epoch)s

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.5625, 0.25, 0.0625, 0.0]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The rates of ``last_epoch`` by torch's recursive formula."""
        _warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        decay_factor = ((1.0 - self.last_epoch / self.total_iters)
                        / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


@_fill_doc
class CyclicLR(LRScheduler):
    """Cycle the rates between ``base_lr`` and ``max_lr`` (cyclical learning rates).

    Each cycle rises over ``step_size_up`` steps and falls over
    ``step_size_down``; the amplitude is scaled by ``scale_fn`` (of the
    cycle number, or of the step count with ``scale_mode="iterations"``):
    1 in ``"triangular"``, halved each cycle in ``"triangular2"``,
    ``gamma ** step`` in ``"exp_range"``. With ``cycle_momentum`` the
    momentum (SGD's ``momentum``, or the first beta of Adam-like optimizers)
    moves the opposite way between ``max_momentum`` and ``base_momentum``.
    Step it after every batch.

    Parameters
    ----------
    %(optimizer)s
    base_lr : float or list of floats
        Lower rate of the cycle, per group if a list; written into the groups at construction.
    max_lr : float or list of floats
        Upper bound of the cycle (reached when the scale is 1).
    step_size_up : int, default 2000
        Steps of the rising half.
    step_size_down : int, optional
        Steps of the falling half; ``step_size_up`` when None.
    mode : {"triangular", "triangular2", "exp_range"}, default "triangular"
        The amplitude policy (ignored when ``scale_fn`` is given).
    gamma : float, default 1.0
        Base of ``"exp_range"``.
    scale_fn : callable, optional
        Custom amplitude scale ``f(x)`` with ``0 <= f(x) <= 1``.
    scale_mode : {"cycle", "iterations"}, default "cycle"
        What ``scale_fn`` is evaluated on.
    cycle_momentum : bool, default True
        Cycle the momentum inversely to the rate.
    base_momentum, max_momentum : float or list of floats, default 0.8, 0.9
        Momentum at the rate's peak and at its lowest.
    %(last_epoch)s

    Raises
    ------
    TypeError
        If ``optimizer`` is not an :class:`~retrograd.optim.Optimizer`.
    ValueError
        For an unknown ``mode`` without ``scale_fn``, lists of the wrong
        length, or ``cycle_momentum`` with an optimizer that has neither
        ``momentum`` nor ``betas``.

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = rg.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2, mode="triangular2")
    >>> lrs = []
    >>> for _ in range(9):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.1, 0.3, 0.5, 0.3, 0.1, 0.2, 0.3, 0.2, 0.1]
    >>> round(opt.param_groups[0]["momentum"], 4)
    0.8875
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float], max_lr: float | list[float],
                 step_size_up: int = 2000, step_size_down: int | None = None,
                 mode: Literal["triangular", "triangular2", "exp_range"] = "triangular", gamma: float = 1.0,
                 scale_fn: Callable[[float], float] | None = None,
                 scale_mode: Literal["cycle", "iterations"] = "cycle", cycle_momentum: bool = True,
                 base_momentum: float = 0.8, max_momentum: float = 0.9, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer

        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _update_param_group_val(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)

        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size

        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_ref: Callable[[float], float]
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in self.optimizer.defaults
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(self.max_momentums, self.base_momentums,
                                                         optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m_momentum, *group["betas"][1:])
                    else:
                        group["momentum"] = m_momentum
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: Any) -> float:
        """The amplitude scale at ``x`` (the cycle number or the step count): the custom one, or the mode's.

        Parameters
        ----------
        x : float
            The cycle number (``scale_mode="cycle"``) or the step count.

        Returns
        -------
        float
            The scale of the cycle's amplitude.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=0.1)
        >>> sched = rg.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="triangular2", cycle_momentum=False)
        >>> sched.scale_fn(3)
        0.25
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma ** x

    def get_lr(self) -> list[Any]:
        """The rates at step ``last_epoch`` of the cycle; with ``cycle_momentum`` it also sets the momentum."""
        _warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle) if self.scale_mode == "cycle" else self.scale_fn(self.last_epoch)

        lrs = [base_lr + (max_lr - base_lr) * scale_factor * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            momentums = [max_momentum - (max_momentum - base_momentum) * scale_factor * scale
                         for base_momentum, max_momentum in zip(self.base_momentums, self.max_momentums)]
            for param_group, momentum in zip(self.optimizer.param_groups, momentums):
                if self.use_beta1:
                    param_group["betas"] = (momentum, *param_group["betas"][1:])
                else:
                    param_group["momentum"] = momentum
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; a custom ``scale_fn`` is saved as its ``__dict__`` if it is a callable object."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state made by :meth:`state_dict`."""
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        state_dict["_scale_fn_custom"] = fn    # leave the caller's dict as it was
        if fn is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


@_fill_doc
class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing with warm restarts (SGDR).

    Within a period of :math:`T_i` epochs the rates follow
    :math:`\eta_{min} + \tfrac12(\eta_{base} - \eta_{min})(1 + \cos(\pi T_{cur}/T_i))`; then they
    restart at the initial rates and the next period is ``T_mult`` times
    longer. ``step(epoch)`` accepts a fractional epoch (as ``epoch + i / iters``
    within an epoch), and finds the period it falls in.

    Parameters
    ----------
    %(optimizer)s
    T_0 : int
        Length of the first period, a positive integer.
    T_mult : int, default 1
        Growth factor of the periods, an integer at least 1.
    eta_min : float, default 0.0
        The lowest learning rate.
    %(last_epoch)s

    Raises
    ------
    ValueError
        For a ``T_0`` that is not a positive integer, a ``T_mult`` that is
        not an integer at least 1, or an ``eta_min`` that is not a number;
        from ``step(epoch)``, for a negative epoch.

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    >>> lrs = []
    >>> for _ in range(7):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.5, 1.0, 0.8536, 0.5, 0.1464, 1.0]

    Stepping within epochs, by fractions:

    >>> sched = rg.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=1)
    >>> lrs = []
    >>> for i in range(4):
    ...     opt.step()
    ...     sched.step(i / 4)
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [1.0, 0.8536, 0.5, 0.1464]
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The rates at position ``T_cur`` of the current period."""
        _warn_get_lr_called_within_step(self)
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance by one epoch, or go to ``epoch`` (which may be fractional), and set the rates."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)

        with _enable_get_lr_call(self):
            for param_group, lr in zip(self.optimizer.param_groups, self.get_lr()):
                _update_param_group_val(param_group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


@_fill_doc
class SequentialLR(_Combinator):
    """Run schedulers one after the other, switching at the milestone epochs.

    Scheduler ``i`` drives the rates from ``milestones[i - 1]`` on; at each
    milestone the next scheduler starts from its own epoch 0 (its closed
    form at 0). Build the schedulers on the same optimizer first: the
    construction undoes their initial steps. %(schedulers)s

    Parameters
    ----------
    %(optimizer)s
    schedulers : list of LRScheduler
        The schedulers, in order.
    milestones : list of int
        The epochs of the switches, one fewer than the schedulers.
    %(last_epoch)s

    Raises
    ------
    ValueError
        For no scheduler, a ReduceLROnPlateau, a scheduler of another
        optimizer, or a wrong number of milestones.
    TypeError
        For a scheduler without an ``optimizer`` attribute.

    Examples
    --------
    Two epochs of warm-up, then exponential decay:

    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = rg.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = rg.optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int],
                 last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
                f"milestone points, but got number of schedulers {len(schedulers)} and the number of milestones to "
                f"be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer

        # Back to the initial rates, and the inner schedulers' initial steps undone:
        # only the scheduler of epoch 0 takes its initial step.
        for group in self.optimizer.param_groups:
            _update_param_group_val(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Step back ``last_epoch`` by one in every scheduler inside, nested combinators included.

        Parameters
        ----------
        sched : LRScheduler, optional
            Where to start; this scheduler when None.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> inner = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = rg.optim.lr_scheduler.SequentialLR(opt, [inner], milestones=[])
        >>> sched.recursive_undo()
        >>> inner.last_epoch
        -1
        """
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Advance by one epoch: step the current scheduler, or start the next one at a milestone."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


@_fill_doc
class ChainedScheduler(_Combinator):
    """Step several schedulers together, each applying its change to the rates in turn.

    The rates are the product of the chained schedules' changes (for
    multiplicative ones). %(schedulers)s

    Parameters
    ----------
    schedulers : sequence of LRScheduler
        The schedulers, stepped in order.
    optimizer : Optimizer, optional
        Their optimizer; that of the first scheduler when None.

    Raises
    ------
    ValueError
        For no scheduler, a ReduceLROnPlateau, or a scheduler of another optimizer.
    TypeError
        For a scheduler without an ``optimizer`` attribute.

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> s1 = rg.optim.lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2)
    >>> s2 = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = rg.optim.lr_scheduler.ChainedScheduler([s1, s2], optimizer=opt)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.1, 0.05, 0.25, 0.125]
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step every chained scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")
