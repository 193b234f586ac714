"""swap_in_optimizer_params_and_state: an optimizer temporarily running on other parameters and state."""
from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from retrograd.core import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state: Any) -> dict:
    # optimizer.state_dict()'s "state": packed integer ids -> per-parameter dicts
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids "
                           f"to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_group(idx: int, live: dict, group: Any) -> list:
    if not isinstance(group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed "
                           "by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the live "
                           "optimizer param group.")
    swapin_only = [k for k in group if k not in live]
    live_only = [k for k in live if k not in group]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the "
                           f"live optimizer group keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys "
                           f"only in live: {live_only}.")
    return ids


def _prepare(optimizer: Any, swapin_parameters: dict, swapin_optim_state: Any) -> tuple[dict, list]:
    """Check the swap-in values against the live optimizer; pair each live group with its swap-in group and tensors."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
                           f"dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    # state_dicts name parameters by packed ids in param_groups order; the explicit tensors come in
    # the same order, so group i takes the next len(params) of them
    flat = list(swapin_parameters.values())
    offset = 0
    seen: set[int] = set()
    pairs = []
    for idx, (live, group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _check_group(idx, live, group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        pairs.append((live, group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, pairs


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Any, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Run an optimizer on other parameters and state for the duration of a ``with`` block.

    Inside the block the optimizer's param groups hold ``swapin_parameters``
    (and the swap-in groups' hyperparameters) and its ``state`` is
    ``swapin_optim_state['state']``, keyed by those tensors: ``step()``
    updates them, not the live parameters. On exit (also after an
    exception) the live groups and state come back. Unlike
    ``load_state_dict``, which only replaces the state, this swaps the
    parameters too.

    The per-parameter state dicts are shallow copies: a tensor updated in
    place (``exp_avg``, ``momentum_buffer``) changes the tensor in
    ``swapin_optim_state``, while entries the step adds or replaces (a new
    ``step`` count, say) are dropped on exit.

    Parameters
    ----------
    optimizer : Optimizer
        The live optimizer; it must have state already (a step taken).
    swapin_parameters : dict of str to Tensor
        The tensors to optimize instead, in the order of the optimizer's
        parameters (usually ``model.named_parameters()`` order).
    swapin_optim_state : dict
        A ``optimizer.state_dict()``-shaped dict: ``"state"`` keyed by packed
        integer ids, ``"param_groups"`` mirroring ``optimizer.param_groups``
        with those ids as ``"params"`` and the same hyperparameter keys.

    Yields
    ------
    None
        The optimizer is swapped while the block runs.

    Raises
    ------
    RuntimeError
        An optimizer without state, or swap-in values that do not match its
        groups (number of groups or parameters, group keys, ids).

    Examples
    --------
    >>> import copy
    >>> import retrograd as rg
    >>> p = rg.nn.Parameter(rg.tensor([1.0, 2.0]))
    >>> opt = rg.optim.SGD([p], lr=0.1, momentum=0.9)
    >>> p.grad = rg.ones(2)
    >>> opt.step()
    >>> q = rg.tensor([10.0, 20.0])
    >>> q.grad = rg.ones(2)
    >>> saved = copy.deepcopy(opt.state_dict())   # a copy: state_dict() shares the live state's tensors
    >>> with rg.optim.swap_in_optimizer_params_and_state(opt, {"p": q}, saved):
    ...     opt.step()
    >>> q                     # stepped with the copied momentum: 10 - 0.1 * (0.9 * 1 + 1)
    tensor([ 9.81, 19.81])
    >>> p                     # the live parameter is untouched
    Parameter containing:
    tensor([0.9, 1.9], requires_grad=True)
    """
    state, pairs = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    # shallow copies keep the identity of each group's params list, for callers that compare with `is`
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict[Tensor, Any] = defaultdict(dict)
        for live, group, params in pairs:
            live["params"] = params
            for key, value in group.items():
                if key != "params":
                    live[key] = value
            for param, pid in zip(params, group["params"]):
                swapped[param] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for live, snapshot in zip(optimizer.param_groups, snapshots):
            live.clear()
            live.update(snapshot)
        optimizer.state = original_state
