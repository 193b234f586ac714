"""rg.optim.Optimizer: the base class of the optimizers, as ``torch.optim.Optimizer``.

An optimizer holds parameter groups (dicts of tensors and their options) and
a per-parameter ``state``; ``step()`` updates the parameters in place from
their ``.grad``. The updates of retrograd's optimizers run on the tensors'
arrays directly (no graph is recorded) and follow the arithmetic of torch's
single-tensor ("for-loop") implementations, so that in float64 they agree
with torch to rounding.

The optimizer step can also run *inside* backward, one parameter at a time,
through ``Tensor.register_post_accumulate_grad_hook``: see the last example
of :class:`Optimizer`.
"""
from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable
from copy import deepcopy
from typing import Any, TypeAlias

from retrograd.core import Tensor, tensor, enable_grad, get_default_dtype, is_floating_dtype
from retrograd.utils.hooks import RemovableHandle
from retrograd.core.extending import increment_version as _increment_version

__all__ = ["Optimizer"]

ParamsT: TypeAlias = "Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]"
StateDict: TypeAlias = "dict[str, Any]"


class _RequiredParameter:
    """The default of an option that every parameter group must give (torch's ``required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


_global_optimizer_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable] = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Register a hook that runs before the ``step()`` of every optimizer.

    Parameters
    ----------
    hook : callable
        ``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)``;
        ``args`` starts with the optimizer itself, as in torch.

    Returns
    -------
    handle
        ``handle.remove()`` unregisters the hook.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.optim.optimizer import register_optimizer_step_pre_hook
    >>> p = rg.tensor([1.0], requires_grad=True)
    >>> p.grad = rg.tensor([1.0])
    >>> h = register_optimizer_step_pre_hook(lambda opt, args, kwargs: print("before", type(opt).__name__))
    >>> rg.optim.SGD([p], lr=0.5).step()
    before SGD
    >>> h.remove()
    """
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Register a hook that runs after the ``step()`` of every optimizer.

    Parameters
    ----------
    hook : callable
        ``hook(optimizer, args, kwargs) -> None``.

    Returns
    -------
    handle
        ``handle.remove()`` unregisters the hook.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.optim.optimizer import register_optimizer_step_post_hook
    >>> p = rg.tensor([1.0], requires_grad=True)
    >>> p.grad = rg.tensor([1.0])
    >>> h = register_optimizer_step_post_hook(lambda opt, args, kwargs: print("after", p))
    >>> rg.optim.SGD([p], lr=0.5).step()
    after tensor([0.5], requires_grad=True)
    >>> h.remove()
    """
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _typename(obj: object) -> str:
    if isinstance(obj, Tensor):
        return "retrograd.Tensor"
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _hook_step(func: Callable) -> Callable:
    """Wrap a ``step`` method so that it runs the step pre- and post-hooks around it."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        # The common case, no hooks at all, costs four dict truth tests. A
        # subclass's step that calls super().step() runs the hooks once: only
        # the outermost wrapped step runs them.
        if self._in_hooked_step or not (_global_optimizer_pre_hooks or self._optimizer_step_pre_hooks
                                        or self._optimizer_step_post_hooks or _global_optimizer_post_hooks):
            return func(*args, **kwargs)
        for pre_hook in itertools.chain(_global_optimizer_pre_hooks.values(),
                                        self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
        self._in_hooked_step = True
        try:
            out = func(*args, **kwargs)
        finally:
            self._in_hooked_step = False
        for post_hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                         _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True  # type: ignore[attr-defined]
    return wrapper


def _scalar_dtype() -> str:
    # torch keeps `step` in its default float dtype (Note [Default dtype])
    return str(get_default_dtype())


def _new_step() -> Tensor:
    """A fresh ``step`` counter: a 0-d float tensor on the CPU, as torch's for-loop optimizers keep it."""
    return tensor(0.0, dtype=_scalar_dtype())


def _value(x: Any) -> Any:
    """A hyperparameter as a Python number (a one-element tensor gives its value)."""
    return x.item() if isinstance(x, Tensor) else x


def _as_real(a: Any) -> Any:
    """A complex array as its real view (torch's ``view_as_real``): the update then treats
    the real and imaginary parts as separate entries, as torch's optimizers do."""
    if a.dtype.kind != "c":
        return a
    return a[..., None].view(a.real.dtype)


def _check_implementation_flags(*, differentiable: bool = False, capturable: bool = False,
                                fused: bool | None = None) -> None:
    """Refuse the options that select torch implementations retrograd does not have."""
    if differentiable:
        raise NotImplementedError(
            "differentiable=True is not supported: retrograd's optimizers update the parameters' arrays in "
            "place outside the autograd graph. Write the update with tensor ops yourself to differentiate "
            "through it.")
    if capturable:
        raise NotImplementedError(
            "capturable=True (CUDA-graph capture) is not supported by retrograd; leave capturable=False.")
    if fused:
        raise NotImplementedError(
            "fused=True is not supported: retrograd has one implementation of each optimizer (torch's for-loop "
            "arithmetic); leave fused=None.")


class Optimizer:
    """Base class of all optimizers, as ``torch.optim.Optimizer``.

    An optimizer keeps a list of parameter groups (``param_groups``), each a
    dict with the key ``"params"`` (a list of tensors) and the group's
    options, and a ``state`` dict keyed by parameter. Subclasses implement
    :meth:`step`.

    Parameters
    ----------
    params : iterable
        The tensors to optimize: an iterable of tensors, of ``(name, tensor)``
        pairs (``module.named_parameters()``), or of dicts each defining a
        parameter group (the key ``"params"`` and options that override
        ``defaults``). Use ordered collections (not sets) so that the order
        is the same in every run.
    defaults : dict
        The default options of a parameter group.

    Raises
    ------
    TypeError
        If ``params`` is a single tensor, or holds something that is not a tensor.
    ValueError
        If ``params`` is empty, holds a non-leaf tensor, or a parameter is in
        two groups.

    Notes
    -----
    The parameters may be any tensors that are leaves (``rg.nn.Parameter``
    or plain tensors made with ``requires_grad=True``). Parameters whose
    ``.grad`` is None are skipped by ``step()``. Each update writes the
    parameter's array in place and bumps its version counter, so a graph
    that saved the old value refuses to backward through it.

    Examples
    --------
    The ordinary loop:

    >>> import retrograd as rg
    >>> w = rg.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = rg.optim.SGD([w], lr=0.1)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     loss = (w * w).sum()
    ...     loss.backward()
    ...     opt.step()
    >>> w
    tensor([ 0.51199996, -1.0239999 ], requires_grad=True)

    Parameter groups with their own options:

    >>> a = rg.zeros(2, requires_grad=True)
    >>> b = rg.zeros(3, requires_grad=True)
    >>> opt = rg.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.01]

    The optimizer step inside backward. A hook registered with
    ``Tensor.register_post_accumulate_grad_hook`` runs as soon as a
    parameter's gradient is accumulated; stepping one optimizer per
    parameter there, and zeroing its gradient, frees each gradient during
    backward instead of keeping all of them until ``opt.step()``. The
    result is the same as the ordinary loop with SGD on both tensors:

    >>> w = rg.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], requires_grad=True)
    >>> b = rg.zeros(2, requires_grad=True)
    >>> optimizers = {p: rg.optim.SGD([p], lr=0.1) for p in (w, b)}
    >>> def step_in_backward(p):
    ...     optimizers[p].step()
    ...     optimizers[p].zero_grad()
    >>> handles = [p.register_post_accumulate_grad_hook(step_in_backward) for p in (w, b)]
    >>> x = rg.ones(4, 3)
    >>> loss = (x @ w + b).square().sum()
    >>> loss.backward()
    >>> b
    tensor([-1.6, -1.6], requires_grad=True)
    >>> w.grad is None and b.grad is None
    True
    >>> for h in handles:
    ...     h.remove()
    """

    _in_hooked_step = False   # set on the instance while a hooked step runs

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))

        self.state: defaultdict[Any, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups: list[Any] = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # -- pickling and copying ------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def _steps_to_tensors(self) -> None:
        """After loading: a ``step`` saved as a number becomes a tensor again (torch's ``__setstate__``)."""
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state and "step" in p_state and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = tensor(float(p_state["step"]), dtype=_scalar_dtype())

    def __repr__(self) -> str:
        """torch's layout: the class name, then each group's options sorted by name.

        Examples
        --------
        >>> import retrograd as rg
        >>> print(rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=0.1))
        SGD (
        Parameter Group 0
            dampening: 0
            differentiable: False
            foreach: None
            fused: None
            lr: 0.1
            maximize: False
            momentum: 0
            nesterov: False
            weight_decay: 0
        )
        """
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # -- hooks -----------------------------------------------------------------

    def _patch_step_function(self) -> None:
        # As torch: the class's step is wrapped once, so that the step hooks
        # run around every subclass's step without each subclass doing it.
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = _hook_step(cls.step)  # type: ignore[method-assign]

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Register a hook that runs before each ``step()`` of this optimizer.

        Parameters
        ----------
        hook : callable
            ``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)``.
            ``args`` are the positional arguments of ``step`` starting with the
            optimizer itself; returning a pair replaces them and ``kwargs``.

        Returns
        -------
        handle
            ``handle.remove()`` unregisters the hook.

        Raises
        ------
        RuntimeError
            At ``step()``, if the hook returns something other than None or a pair.

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([1.0], requires_grad=True)
        >>> p.grad = rg.tensor([1.0])
        >>> opt = rg.optim.SGD([p], lr=0.5)
        >>> h = opt.register_step_pre_hook(lambda o, args, kwargs: print("stepping", len(o.param_groups), "group"))
        >>> opt.step()
        stepping 1 group
        >>> h.remove()
        >>> opt.step()
        >>> p
        tensor([0.], requires_grad=True)
        """
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Register a hook that runs after each ``step()`` of this optimizer.

        Parameters
        ----------
        hook : callable
            ``hook(optimizer, args, kwargs) -> None``.

        Returns
        -------
        handle
            ``handle.remove()`` unregisters the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([1.0], requires_grad=True)
        >>> p.grad = rg.tensor([1.0])
        >>> opt = rg.optim.SGD([p], lr=0.5)
        >>> h = opt.register_step_post_hook(lambda o, args, kwargs: print("now", p))
        >>> opt.step()
        now tensor([0.5], requires_grad=True)
        """
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register a hook ``hook(optimizer) -> None`` that runs before :meth:`state_dict` builds its dict.

        Parameters
        ----------
        hook : callable
            Called with the optimizer.
        prepend : bool, default False
            Run it before the hooks already registered rather than after.

        Returns
        -------
        handle
            ``handle.remove()`` unregisters the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)])
        >>> h = opt.register_state_dict_pre_hook(lambda o: print("saving"))
        >>> sd = opt.state_dict()
        saving
        """
        handle = RemovableHandle(self._optimizer_state_dict_pre_hooks)
        self._optimizer_state_dict_pre_hooks[handle.id] = hook
        if prepend:
            self._optimizer_state_dict_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register a hook ``hook(optimizer, state_dict) -> state_dict or None`` that runs on
        :meth:`state_dict`'s result; a returned dict replaces it.

        Parameters
        ----------
        hook : callable
            Called with the optimizer and the state dict.
        prepend : bool, default False
            Run it before the hooks already registered rather than after.

        Returns
        -------
        handle
            ``handle.remove()`` unregisters the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)])
        >>> def tag(o, sd):
        ...     sd["tag"] = "v1"
        >>> h = opt.register_state_dict_post_hook(tag)
        >>> opt.state_dict()["tag"]
        'v1'
        """
        handle = RemovableHandle(self._optimizer_state_dict_post_hooks)
        self._optimizer_state_dict_post_hooks[handle.id] = hook
        if prepend:
            self._optimizer_state_dict_post_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register a hook ``hook(optimizer, state_dict) -> state_dict or None`` that runs before
        :meth:`load_state_dict` loads; a returned dict is loaded instead.

        Parameters
        ----------
        hook : callable
            Called with the optimizer and a shallow copy of the dict being loaded.
        prepend : bool, default False
            Run it before the hooks already registered rather than after.

        Returns
        -------
        handle
            ``handle.remove()`` unregisters the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=0.1)
        >>> sd = opt.state_dict()
        >>> def halve_lr(o, sd):
        ...     sd["param_groups"][0]["lr"] /= 2
        >>> h = opt.register_load_state_dict_pre_hook(halve_lr)
        >>> opt.load_state_dict(sd)
        >>> opt.param_groups[0]["lr"]
        0.05
        """
        handle = RemovableHandle(self._optimizer_load_state_dict_pre_hooks)
        self._optimizer_load_state_dict_pre_hooks[handle.id] = hook
        if prepend:
            self._optimizer_load_state_dict_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register a hook ``hook(optimizer) -> None`` that runs after :meth:`load_state_dict`.

        Parameters
        ----------
        hook : callable
            Called with the optimizer.
        prepend : bool, default False
            Run it before the hooks already registered rather than after.

        Returns
        -------
        handle
            ``handle.remove()`` unregisters the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=0.1)
        >>> h = opt.register_load_state_dict_post_hook(lambda o: print("loaded"))
        >>> opt.load_state_dict(opt.state_dict())
        loaded
        """
        handle = RemovableHandle(self._optimizer_load_state_dict_post_hooks)
        self._optimizer_load_state_dict_post_hooks[handle.id] = hook
        if prepend:
            self._optimizer_load_state_dict_post_hooks.move_to_end(handle.id, last=False)
        return handle

    # -- state dicts -----------------------------------------------------------

    def state_dict(self) -> StateDict:
        """The optimizer's state as a dict, in torch's layout.

        ``"state"`` maps each parameter's index (its position counting through
        the groups in order) to its state dict; ``"param_groups"`` lists each
        group's options with ``"params"`` as the list of its indices (and
        ``"param_names"`` when the group was given names). The parameters
        themselves are not saved. As in torch, the per-parameter state dicts
        are the optimizer's own (not copies).

        Returns
        -------
        dict
            ``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``.

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = rg.optim.SGD([p], lr=0.1, momentum=0.9)
        >>> p.grad = rg.tensor([1.0, 1.0])
        >>> opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"]
        {0: {'momentum_buffer': tensor([1., 1.])}}
        >>> sd["param_groups"][0]["params"], sd["param_groups"][0]["momentum"]
        ([0], 0.9)
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param: Tensor, value: Tensor, param_id: Any,
                                                 param_groups: list[dict[str, Any]], key: Hashable = None) -> Tensor:
        # `step` stays as saved (a CPU scalar); every other state tensor moves
        # to the parameter's device and, for floating parameters, its dtype.
        # As torch's Tensor.to, nothing is copied when nothing changes.
        if key == "step":
            return value
        if is_floating_dtype(param.dtype):
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a state dict made by :meth:`state_dict`.

        The saved groups are matched to this optimizer's groups in order, and
        the saved indices to the parameters in order; the groups' options
        (learning rates, ...) are replaced by the saved ones. State tensors
        are moved to their parameter's device and cast to its dtype when it
        is a floating dtype (``step`` stays as saved). As in torch, a state
        tensor that needs no cast is shared with ``state_dict``, not copied.

        Parameters
        ----------
        state_dict : dict
            A dict returned by :meth:`state_dict` (possibly saved and loaded
            with ``rg.save`` / ``rg.load``).

        Raises
        ------
        ValueError
            If the number of groups, or the size of a group, differs from
            this optimizer's.

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = rg.optim.Adam([p], lr=0.1)
        >>> p.grad = rg.tensor([1.0, -1.0])
        >>> opt.step()
        >>> q = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> opt2 = rg.optim.Adam([q])
        >>> opt2.load_state_dict(opt.state_dict())
        >>> opt2.param_groups[0]["lr"], opt2.state[q]["step"]
        (0.1, tensor(1.))
        """
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])

        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")

        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        def _cast(param: Tensor, value: Any, param_id: Any = None, param_groups: Any = None,
                  key: Hashable = None) -> Any:
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                        for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(_cast(param, v, param_id=param_id, param_groups=param_groups) for v in value)
            return value

        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k, param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- the loop's verbs --------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all the optimized tensors.

        Parameters
        ----------
        set_to_none : bool, default True
            Set each ``.grad`` to None (no memory kept, and the next
            ``step()`` skips a parameter that gets no gradient) rather than
            filling it with zeros (a zero gradient still moves a parameter
            under momentum or weight decay).

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = rg.optim.SGD([p])
        >>> (p * p).sum().backward()
        >>> opt.zero_grad(set_to_none=False)
        >>> p.grad
        tensor([0., 0.])
        >>> opt.zero_grad()
        >>> p.grad is None
        True
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters from their gradients (one optimization step).

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss; run with grad enabled
            before the update, and its result returned.

        Returns
        -------
        object
            The closure's result, or None.

        Raises
        ------
        NotImplementedError
            In the base class: each optimizer implements its update.

        Examples
        --------
        >>> import retrograd as rg
        >>> p = rg.tensor([1.0], requires_grad=True)
        >>> opt = rg.optim.SGD([p], lr=0.25)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (p * p).sum()
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)
        tensor(1., grad_fn=<SumBackward0>)
        >>> p
        tensor([0.5], requires_grad=True)
        """
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group to ``param_groups``.

        Useful when fine-tuning: layers unfrozen later are added with their
        own options. Options the group does not give take the optimizer's
        defaults. The dict itself is kept (and completed), as in torch.

        Parameters
        ----------
        param_group : dict
            ``"params"``: a tensor, or an ordered iterable of tensors or of
            ``(name, tensor)`` pairs; other keys override the defaults.

        Raises
        ------
        TypeError
            If ``param_group`` is not a dict, ``"params"`` is a set, or holds
            something that is not a tensor.
        ValueError
            If a tensor is not a leaf, a parameter is already in another
            group, a required option is missing, or names are given for some
            parameters and not for others.

        Examples
        --------
        >>> import retrograd as rg
        >>> a = rg.zeros(2, requires_grad=True)
        >>> opt = rg.optim.SGD([a], lr=0.1)
        >>> b = rg.zeros(3, requires_grad=True)
        >>> opt.add_param_group({"params": b, "lr": 0.01, "momentum": 0.9})
        >>> [(g["lr"], g["momentum"]) for g in opt.param_groups]
        [(0.1, 0), (0.01, 0.9)]
        >>> opt.add_param_group({"params": [a]})
        Traceback (most recent call last):
        ...
        ValueError: some parameters appear in more than one parameter group
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)

        extracted_param_tensors = []
        extracted_param_names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                extracted_param_names.append(param[0])
                extracted_param_tensors.append(param[1])
            else:
                extracted_param_tensors.append(param)
        param_group["params"] = extracted_param_tensors
        if len(extracted_param_names) != 0:
            if len(extracted_param_names) == len(extracted_param_tensors):
                param_group["param_names"] = extracted_param_names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error", stacklevel=3)

        param_set: set[Tensor] = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current_group_txt} to the optimizer")

        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)

    # -- what the subclasses share -------------------------------------------------

    def _run_closure(self, closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    @staticmethod
    def _bump_versions(params: list[Tensor]) -> None:
        # The arrays were written in place: a graph that saved a parameter's
        # old value must see that it changed (as after torch's param.add_()).
        if params:
            _increment_version(params)
