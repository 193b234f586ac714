"""Calling a module with other parameters and buffers (functional_call)."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from retrograd.core import Tensor

__all__ = ["functional_call"]

# a name the module did not have before the call (it is deleted afterwards)
_MISSING = object()


def _get_submodule(module: Any, path: str, memo: dict) -> Any:
    if not path:
        return module
    if path in memo:
        return memo[path]
    from retrograd.nn.modules.module import Module
    prefix, _, attr = path.rpartition(".")
    parent = _get_submodule(module, prefix, memo)
    try:
        sub = getattr(parent, attr)
    except AttributeError as ex:
        raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
    if not isinstance(sub, Module):
        raise TypeError(f"{sub!r} is not an instance of rg.nn.Module")
    memo[path] = sub
    return sub


def _swap(module: Any, name: str, value: Any, memo: dict) -> Any:
    """Put ``value`` under dotted ``name`` and return what was there
    (``_MISSING`` when nothing was). A parameter or buffer slot takes the
    value as it is (a plain tensor included), as torch's accessor does."""
    path, _, attr = name.rpartition(".")
    owner = _get_submodule(module, path, memo)
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of rg.Tensor")
    if attr in owner._parameters:
        orig = owner._parameters[attr]
    elif attr in owner._buffers:
        orig = owner._buffers[attr]
    elif hasattr(owner, attr):
        orig = getattr(owner, attr)
    else:
        orig = _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of rg.Tensor")
    if value is _MISSING:
        if hasattr(owner, attr):
            delattr(owner, attr)
    elif attr in owner._parameters:
        owner._parameters[attr] = value
    elif attr in owner._buffers:
        owner._buffers[attr] = value
    else:
        setattr(owner, attr, value)
    return orig


def _swap_all(module: Any, tensors: dict, memo: dict) -> dict:
    done: dict = {}
    try:
        for name, value in tensors.items():
            done[name] = _swap(module, name, value, memo)
    except Exception:
        # put back what was already swapped
        for name, orig in done.items():
            _swap(module, name, orig, memo)
        raise
    return done


def _untie(module: Any, given: dict) -> dict:
    # a value given for one name of tied tensors (one parameter under two
    # names) goes to all of them
    named: dict[str, Tensor] = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    by_tensor: dict[int, set[str]] = {}
    for name, t in named.items():
        by_tensor.setdefault(id(t), set()).add(name)
    tied = {name: names for names in by_tensor.values() if len(names) > 1 for name in names}
    given_tied = {name for name in given if name in tied}
    for name in given_tied:
        names = tied[name]
        if len(names & given_tied) > 1 and len({id(given[n]) for n in names if n in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(given)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = given[name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module: Any, parameters_and_buffers: dict, tie_weights: bool = False,
                          strict: bool = False) -> Iterator[None]:
    tensors = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(tensors)), sorted(set(tensors) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(msgs)))
    memo: dict = {}
    originals: dict = {}
    try:
        originals = _swap_all(module, tensors, memo)
        yield
    finally:
        # what the module holds now goes back into the caller's dict (a
        # forward may have replaced a buffer), and the originals return
        now = _swap_all(module, originals, memo)
        parameters_and_buffers.update({k: now[k] for k in parameters_and_buffers if k in now})


def functional_call(module: Any, parameters_and_buffers: dict[str, Tensor], args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module`` with some of its parameters and buffers replaced by the given tensors.

    For the call only, each dotted name of ``parameters_and_buffers``
    (``"0.weight"``, ``"bn.running_mean"``) holds the given tensor instead of
    the module's own; afterwards the module is as it was. The output is a
    function of the given tensors, so gradients flow to them (not to the
    module's parameters they stand in for): the way to differentiate a
    module with respect to weights held outside it (meta-learning,
    per-sample gradients, weights computed by a hypernetwork).

    Parameters
    ----------
    module : Module
        The module to call.
    parameters_and_buffers : dict of str to Tensor
        The tensors by dotted name. A name the module lacks is set as an
        attribute during the call (and removed afterwards), unless ``strict``.
    args : object or tuple, optional
        The positional arguments of the call (a non-tuple is the only one).
    kwargs : dict, optional
        The keyword arguments of the call.
    tie_weights : bool, optional
        Keyword-only (default True): a tensor given for one name of a
        parameter the module holds under several names (tied weights) is
        used for all of them.
    strict : bool, optional
        Keyword-only (default False): the names must be exactly the module's
        parameters and buffers.

    Returns
    -------
    object
        The module's output.

    Raises
    ------
    RuntimeError
        With ``strict``, for missing or unexpected names.
    ValueError
        With ``tie_weights``, for different tensors given for tied names.
    AttributeError
        For a name whose submodule does not exist.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.nn.utils.stateless import functional_call
    >>> lin = rg.nn.Linear(2, 1, bias=False)
    >>> w = rg.tensor([[1.0, 2.0]], requires_grad=True)
    >>> y = functional_call(lin, {"weight": w}, (rg.tensor([[3.0, 4.0]]),))
    >>> y
    tensor([[11.]], grad_fn=<MmBackward0>)
    >>> y.sum().backward()
    >>> w.grad, lin.weight.grad
    (tensor([[3., 4.]]), None)
    """
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
