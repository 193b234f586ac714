"""rg.optim.lr_scheduler: learning-rate schedules, as ``torch.optim.lr_scheduler``.

A scheduler rewrites ``group["lr"]`` of its optimizer's parameter groups
each time its ``step()`` is called (once per epoch, or once per batch for
:class:`OneCycleLR`), after the optimizer's own ``step()``. The values equal
torch's epoch by epoch: the chainable schedules update the current rate
with torch's recursive formulas, and ``step(epoch)`` uses the closed forms.
"""
from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, Literal, SupportsFloat
from weakref import ref

from retrograd.core import Tensor
from retrograd.optim.optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "OneCycleLR",
           "ReduceLROnPlateau"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please "
    "use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available.")


def _copy(value: Any) -> Any:
    # A tensor learning rate is copied so that a returned list never aliases a group's lr.
    return value.clone() if isinstance(value, Tensor) else value


def _format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per parameter group: a list or tuple of the right length, or a value repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(param)} "
                             f"values, param_groups has {len(optimizer.param_groups)}.")
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


def _param_groups_val_list(optimizer: Optimizer, key: str) -> list[Any]:
    return [_copy(group[key]) for group in optimizer.param_groups]


def _update_param_group_val(param_group: dict[str, Any], key: str, val: Any) -> None:
    # A tensor lr is filled in place, so that whoever holds it sees the new value.
    if isinstance(param_group[key], Tensor):
        param_group[key].fill_(val.item() if isinstance(val, Tensor) else val)
    else:
        param_group[key] = val


def _warn_get_lr_called_within_step(scheduler: LRScheduler) -> None:
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      UserWarning, stacklevel=3)


class _enable_get_lr_call:
    def __init__(self, o: LRScheduler) -> None:
        self.o = o

    def __enter__(self) -> _enable_get_lr_call:
        self.o._get_lr_called_within_step = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.o._get_lr_called_within_step = False


class _initial_mode:
    def __init__(self, o: LRScheduler) -> None:
        self.o = o

    def __enter__(self) -> None:
        self.o._is_initial = True

    def __exit__(self, *exc: object) -> None:
        self.o._is_initial = False


class LRScheduler:
    """Base class of the learning-rate schedulers, as ``torch.optim.lr_scheduler.LRScheduler``.

    On construction with ``last_epoch=-1`` it records each group's starting
    rate as ``group["initial_lr"]`` (kept in ``base_lrs``) and takes step 0.
    Each later :meth:`step` advances ``last_epoch`` and writes the rates that
    :meth:`get_lr` computes into the groups. Subclasses implement
    :meth:`get_lr`.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates are scheduled.
    last_epoch : int, default -1
        The index of the last epoch; leave -1 to start, or give the epoch
        to resume from (the groups must then hold ``"initial_lr"``).

    Raises
    ------
    TypeError
        If ``optimizer`` is not an :class:`~retrograd.optim.Optimizer`.
    KeyError
        If resuming (``last_epoch >= 0``) and a group lacks ``"initial_lr"``.

    Examples
    --------
    >>> import retrograd as rg
    >>> class Halving(rg.optim.lr_scheduler.LRScheduler):
    ...     def get_lr(self):
    ...         return [base * 0.5 ** self.last_epoch for base in self.base_lrs]
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = Halving(opt)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr(), sched.last_epoch
    ([0.125], 3)
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer

        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                        "last_epoch >= 0.\nThis typically happens when:\n1. You're trying to resume training from "
                        "a checkpoint but haven't properly loaded the optimizer state\n2. You're using "
                        "last_epoch >= 0 for a fresh training run (not recommended)")
        self.base_lrs: list[Any] = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._patch_track_step_called()
        self._initial_step()

    def _patch_track_step_called(self) -> None:
        # As torch: mark the optimizer when its step runs, so that a
        # scheduler stepped first can warn that it skipped the first rate.
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        opt_ref = ref(opt)
        func = opt.step.__func__  # type: ignore[attr-defined]

        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            o = opt_ref()
            o._opt_called = True  # type: ignore[union-attr]
            return func.__get__(o, o.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
        opt.step = wrapper  # type: ignore[method-assign]

    def _initial_step(self) -> None:
        self._step_count = 0
        with _initial_mode(self):
            self.step()

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state: every attribute except the optimizer.

        Returns
        -------
        dict
            ``last_epoch``, ``base_lrs``, ``_last_lr``, the schedule's options, ...

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.StepLR(opt, step_size=2)
        >>> sd = sched.state_dict()
        >>> sd["step_size"], sd["last_epoch"], sd["base_lrs"]
        (2, 0, [1.0])
        """
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state made by :meth:`state_dict`.

        Parameters
        ----------
        state_dict : dict
            The scheduler's saved state.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> opt.step()
        >>> sched.step()
        >>> other = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> other.load_state_dict(sched.state_dict())
        >>> other.last_epoch
        1
        """
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[Any]:
        """The learning rates the last :meth:`step` set, one per parameter group.

        Returns
        -------
        list
            Copies of the groups' ``lr`` values.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> rg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5).get_last_lr()
        [1.0]
        """
        return self._last_lr

    def get_lr(self) -> list[Any]:
        """The learning rates of the current ``last_epoch``, one per group (subclasses implement it).

        Called by :meth:`step`; to read the current rates use :meth:`get_last_lr`.

        Returns
        -------
        list
            One learning rate per parameter group.

        Raises
        ------
        NotImplementedError
            In the base class.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5)
        >>> sched.get_last_lr()
        [0.5]
        """
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one epoch and write the new rates into the optimizer.

        Call it after the optimizer's ``step()``.

        Parameters
        ----------
        epoch : int, optional
            Deprecated, as in torch: jump to this epoch, using the schedule's
            closed form where it has one.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
        >>> lrs = []
        >>> for _ in range(4):
        ...     opt.step()
        ...     sched.step()
        ...     lrs.append(round(opt.param_groups[0]["lr"], 6))
        >>> lrs
        [1.0, 0.1, 0.1, 0.01]
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                    "initialization. Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`.",
                    UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. You should call them in the "
                    "opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                    "result in skipping the first value of the learning rate schedule.", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _enable_get_lr_call(self):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        for param_group, lr in zip(self.optimizer.param_groups, values):
            _update_param_group_val(param_group, "lr", lr)
        self._last_lr: list[Any] = _param_groups_val_list(self.optimizer, "lr")


class LambdaLR(LRScheduler):
    """Set each group's rate to its initial rate times a function of the epoch.

    ``lr = base_lr * lr_lambda(last_epoch)``.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer.
    lr_lambda : callable or list of callables
        ``f(epoch) -> factor``, or one such function per parameter group.
    last_epoch : int, default -1
        The index of the last epoch (see :class:`LRScheduler`).

    Raises
    ------
    ValueError
        If a list of functions does not have one per parameter group.

    Notes
    -----
    :meth:`state_dict` saves the ``__dict__`` of callable objects among the
    ``lr_lambda`` functions, and None for plain functions and lambdas.

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = rg.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> round(sched.get_last_lr()[0], 6)
    0.025
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
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; of the functions, only callable objects' ``__dict__`` is saved.

        Returns
        -------
        dict
            As :meth:`LRScheduler.state_dict`, with ``lr_lambdas`` a list of dicts or None.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=0.1)
        >>> rg.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0).state_dict()["lr_lambdas"]
        [None]
        """
        state_dict = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state_dict["lr_lambdas"] = [None] * len(self.lr_lambdas)
        for idx, fn in enumerate(self.lr_lambdas):
            if not isinstance(fn, types.FunctionType):
                state_dict["lr_lambdas"][idx] = fn.__dict__.copy()
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state made by :meth:`state_dict` (callable objects get their saved ``__dict__`` back).

        Parameters
        ----------
        state_dict : dict
            The scheduler's saved state.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=0.1)
        >>> sched = rg.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5 ** e)
        >>> opt.step()
        >>> sched.step()
        >>> fresh = rg.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5 ** e)
        >>> fresh.load_state_dict(sched.state_dict())
        >>> fresh.last_epoch
        1
        """
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas   # leave the caller's dict as it was
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)

    def get_lr(self) -> list[Any]:
        """``base_lr * lr_lambda(last_epoch)`` for each group.

        Returns
        -------
        list
            One learning rate per parameter group.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=2.0)
        >>> rg.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.25).get_last_lr()
        [0.5]
        """
        _warn_get_lr_called_within_step(self)
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """Multiply each group's rate by ``gamma`` every ``step_size`` epochs.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer.
    step_size : int
        Period of the decay, in epochs.
    gamma : float, default 0.1
        Multiplicative factor of the decay.
    last_epoch : int, default -1
        The index of the last epoch (see :class:`LRScheduler`).

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current rates, multiplied by ``gamma`` when ``last_epoch`` is a nonzero multiple of ``step_size``.

        Returns
        -------
        list
            One learning rate per parameter group.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        >>> opt.step()
        >>> sched.step()
        >>> sched.get_last_lr()
        [0.5]
        """
        _warn_get_lr_called_within_step(self)
        if (self.last_epoch == 0) or (self.last_epoch % self.step_size != 0):
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply each group's rate by ``gamma`` at each milestone epoch.

    A milestone listed ``n`` times multiplies by ``gamma ** n``.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer.
    milestones : iterable of int
        Epoch indices, increasing.
    gamma : float, default 0.1
        Multiplicative factor of the decay.
    last_epoch : int, default -1
        The index of the last epoch (see :class:`LRScheduler`).

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current rates, multiplied by ``gamma`` (per repetition) at a milestone.

        Returns
        -------
        list
            One learning rate per parameter group.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 1], gamma=0.5)
        >>> opt.step()
        >>> sched.step()
        >>> sched.get_last_lr()
        [0.25]
        """
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch] for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply each group's rate by ``gamma`` every epoch.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer.
    gamma : float
        Multiplicative factor of the decay.
    last_epoch : int, default -1
        The index of the last epoch (see :class:`LRScheduler`).

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.125]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current rates times ``gamma`` (unchanged at construction).

        Returns
        -------
        list
            One learning rate per parameter group.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.1)
        >>> opt.step()
        >>> sched.step()
        >>> sched.get_last_lr()
        [0.1]
        """
        _warn_get_lr_called_within_step(self)
        # A scheduler made to resume (last_epoch >= 0) must not decay once more at construction.
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Anneal each group's rate along a cosine from its initial rate down to ``eta_min``.

    The rates follow torch's recursive form, which for a schedule left to
    itself equals

    .. math::
        \eta_t = \eta_{min} + \tfrac12(\eta_{max} - \eta_{min})\left(1 + \cos\frac{\pi t}{T_{max}}\right)

    and, as torch's, keeps going past ``T_max`` (rising back up), and
    follows changes made to ``group["lr"]`` from outside.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer.
    T_max : int
        Number of epochs of the half period.
    eta_min : float, default 0.0
        The lowest learning rate.
    last_epoch : int, default -1
        The index of the last epoch (see :class:`LRScheduler`).

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The next rates by torch's recursive cosine formula.

        Returns
        -------
        list
            One learning rate per parameter group.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2, eta_min=0.5)
        >>> opt.step()
        >>> sched.step()
        >>> sched.get_last_lr()
        [0.75]
        """
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(self.last_epoch * math.pi / self.T_max))
                    / 2 for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm the rate up to ``max_lr``, then anneal it far below the start.

    The rate starts at ``max_lr / div_factor``, rises to ``max_lr`` over the
    first ``pct_start`` of ``total_steps``, then falls to
    ``initial_lr / final_div_factor``. With ``three_phase`` it first falls
    back to the initial rate symmetrically, and only then to the minimum.
    With ``cycle_momentum`` the momentum (SGD's ``momentum``, or the first
    beta of Adam-like optimizers) moves the opposite way between
    ``max_momentum`` and ``base_momentum``. Step it after every batch.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer.
    max_lr : float or list of floats
        Peak learning rate, per group if a list.
    total_steps : int, optional
        Steps in the cycle; else ``epochs * steps_per_epoch``.
    epochs, steps_per_epoch : int, optional
        Used when ``total_steps`` is not given.
    pct_start : float, default 0.3
        Fraction of the cycle spent raising the rate.
    anneal_strategy : {"cos", "linear"}, default "cos"
        Shape of each phase.
    cycle_momentum : bool, default True
        Cycle the momentum inversely to the rate.
    base_momentum, max_momentum : float or list of floats, default 0.85, 0.95
        Momentum at the rate's peak and at its ends.
    div_factor : float, default 25.0
        ``initial_lr = max_lr / div_factor``.
    final_div_factor : float, default 1e4
        ``min_lr = initial_lr / final_div_factor``.
    three_phase : bool, default False
        Use the three phases of the original paper.
    last_epoch : int, default -1
        The index of the last batch taken (see :class:`LRScheduler`).

    Raises
    ------
    ValueError
        For a non-positive or missing step count, ``pct_start`` outside
        ``[0, 1]``, an unknown ``anneal_strategy``, lists of the wrong
        length, ``cycle_momentum`` with an optimizer that has neither
        ``momentum`` nor ``betas``, or stepping past ``total_steps``.

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = rg.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> lrs = []
    >>> for _ in range(10):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.04, 0.52, 1.0, 0.9505, 0.8117, 0.6113, 0.3887, 0.1883, 0.0495, 0.0]
    >>> round(opt.param_groups[0]["momentum"], 4)
    0.945
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: Literal["cos", "linear"] = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85, max_momentum: float | list[float] = 0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer

        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

        # Each phase runs up to its end step (inclusive), from the group key
        # named start_* to the one named end_*.
        self._schedule_phases: list[dict[str, Any]]
        if three_phase:
            self._schedule_phases = [
                {"end_step": float(pct_start * self.total_steps) - 1, "start_lr": "initial_lr",
                 "end_lr": "max_lr", "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": float(2 * pct_start * self.total_steps) - 2, "start_lr": "max_lr",
                 "end_lr": "initial_lr", "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
                 "start_momentum": "max_momentum", "end_momentum": "max_momentum"},
            ]
        else:
            self._schedule_phases = [
                {"end_step": float(pct_start * self.total_steps) - 1, "start_lr": "initial_lr",
                 "end_lr": "max_lr", "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
            ]

        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy

        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for idx, group in enumerate(self.optimizer.param_groups):
                group["initial_lr"] = max_lrs[idx] / div_factor
                group["max_lr"] = max_lrs[idx]
                group["min_lr"] = group["initial_lr"] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            if "momentum" not in self.optimizer.defaults and "betas" not in self.optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in self.optimizer.defaults
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(max_momentums, base_momentums, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m_momentum, *group["betas"][1:])
                    else:
                        group["momentum"] = m_momentum
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start: float, end: float, pct: float) -> float:
        cos_out = math.cos(math.pi * pct) + 1
        return end + (start - end) / 2.0 * cos_out

    @staticmethod
    def _annealing_linear(start: float, end: float, pct: float) -> float:
        return (end - start) * pct + start

    def get_lr(self) -> list[Any]:
        """The rates at step ``last_epoch`` of the cycle; with ``cycle_momentum`` it also sets the momentum.

        Returns
        -------
        list
            One learning rate per parameter group.

        Raises
        ------
        ValueError
            When stepped more than ``total_steps`` times.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.Adam([rg.zeros(1, requires_grad=True)], lr=0.1)
        >>> sched = rg.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=4, anneal_strategy="linear")
        >>> sched.get_last_lr(), opt.param_groups[0]["betas"]
        ([0.04], (0.95, 0.999))
        """
        _warn_get_lr_called_within_step(self)
        lrs = []
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    computed_lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        computed_momentum = self._anneal_func(group[phase["start_momentum"]],
                                                              group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(computed_lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (computed_momentum, *group["betas"][1:])
                else:
                    group["momentum"] = computed_momentum
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Reduce the learning rates when a metric has stopped improving.

    Each :meth:`step` takes the metric of the epoch. A value better than the
    best so far (by more than ``threshold``, relative or absolute) resets the
    count of bad epochs; when the count exceeds ``patience``, each group's
    rate is multiplied by ``factor`` (not below its ``min_lr``, and only if
    it changes by more than ``eps``), and ``cooldown`` epochs follow in
    which bad epochs are not counted.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer.
    mode : {"min", "max"}, default "min"
        Whether the metric should decrease or increase.
    factor : float, default 0.1
        ``new_lr = lr * factor``; must be below 1.
    patience : int, default 10
        Bad epochs tolerated before reducing.
    threshold : float, default 1e-4
        How much better a value must be to count as an improvement.
    threshold_mode : {"rel", "abs"}, default "rel"
        ``best * (1 -+ threshold)`` or ``best -+ threshold``.
    cooldown : int, default 0
        Epochs to wait after a reduction before counting bad epochs again.
    min_lr : float or list of floats, default 0
        Lower bound of the rates, per group if a list.
    eps : float, default 1e-8
        Reductions smaller than this are skipped.

    Raises
    ------
    ValueError
        For ``factor >= 1``, an unknown ``mode`` or ``threshold_mode``, or a
        ``min_lr`` list of the wrong length.
    TypeError
        If ``optimizer`` is not an :class:`~retrograd.optim.Optimizer`.

    Examples
    --------
    >>> import retrograd as rg
    >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = rg.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [3.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0]:
    ...     sched.step(loss)
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, mode: Literal["min", "max"] = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: Literal["rel", "abs"] = "rel",
                 cooldown: int = 0, min_lr: list[float] | float = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer

        self.default_min_lr: float | None
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)

        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record the epoch's metric and reduce the rates if it has stopped improving.

        Parameters
        ----------
        metrics : float
            The monitored value (a number or a one-element tensor).
        epoch : int, optional
            Deprecated, as in torch: the epoch number to record.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=0)
        >>> sched.step(0.5)
        >>> sched.step(0.4)
        >>> opt.param_groups[0]["lr"]
        0.1
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch

        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1

        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0

        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0

        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _reduce_lr(self, epoch: int) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(self.optimizer.param_groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new "
                    "param group being added to the optimizer. Please modify the `min_lrs` field to match the "
                    "length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, param_group in enumerate(self.optimizer.param_groups):
            old_lr = float(param_group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _update_param_group_val(param_group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is in its cooldown after a reduction.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> rg.optim.lr_scheduler.ReduceLROnPlateau(opt).in_cooldown
        False
        """
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state made by :meth:`~retrograd.optim.lr_scheduler.LRScheduler.state_dict`.

        Parameters
        ----------
        state_dict : dict
            The scheduler's saved state.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = rg.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max")
        >>> sched.step(2.0)
        >>> fresh = rg.optim.lr_scheduler.ReduceLROnPlateau(opt)
        >>> fresh.load_state_dict(sched.state_dict())
        >>> fresh.mode, fresh.best
        ('max', 2.0)
        """
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


# The more recent schedules live in their own module (this one is long enough).
from retrograd.optim._lr_scheduler_more import (  # noqa: E402
    ChainedScheduler, ConstantLR, CosineAnnealingWarmRestarts, CyclicLR, LinearLR, MultiplicativeLR, PolynomialLR,
    SequentialLR)

__all__ += ["MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR", "CyclicLR", "CosineAnnealingWarmRestarts",
            "SequentialLR", "ChainedScheduler"]

import typing as _typing  # noqa: E402
if not _typing.TYPE_CHECKING:   # (a type checker would accept every name)
    from retrograd._missing import module_getattr as _module_getattr
    __getattr__ = _module_getattr("torch.optim.lr_scheduler", __name__)   # torch names retrograd lacks say why
