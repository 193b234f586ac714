"""Activation checkpointing (``torch.utils.checkpoint``), non-reentrant mode.

See Note [non-reentrant checkpoint]: the forward runs ``fn`` under
saved-tensor hooks whose pack keeps only a small handle (the arrays ``fn``'s
ops would have saved are freed as soon as ``fn`` returns); the first unpack
in backward reruns ``fn`` once, under enable_grad, with the random state of
the forward restored (NumPy's global state and retrograd's generator, so
dropout replays identically), and serves each handle the tensor the rerun
saved in the same position. ``fn`` therefore runs exactly twice per forward +
backward. Works with ``backward()`` and ``autograd.grad()``, and nests (an
inner checkpoint pushes its own hooks, so its saves never reach the outer's).
"""
from __future__ import annotations

import contextlib
import warnings
import weakref

import numpy as np

from retrograd.core import enable_grad
from retrograd.core import get_rng as _get_rng
from retrograd.autograd._saved_hooks import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError",
           "set_checkpoint_early_stop"]

_DETERMINISM_MODES = ("default", "none")
_early_stop_enabled = True


class CheckpointError(RuntimeError):
    """The recomputation did not reproduce what the forward saved.

    Raised in backward by a non-reentrant :func:`checkpoint` when the rerun
    of the checkpointed function saves tensors of other shapes, dtypes or
    devices, or fewer or more of them, than the forward did; or when a saved
    tensor is read twice in one backward. A RuntimeError, as torch's.
    """


class _StopRecomputation(Exception):
    pass


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Choose whether the recomputation stops early (a context manager).

    By default a non-reentrant :func:`checkpoint` stops rerunning its
    function as soon as every tensor backward needs is recomputed (at the
    last save the forward made), skipping the rest of the function. Inside
    ``set_checkpoint_early_stop(False)``, checkpoints created there rerun
    the function to the end (for functions with side effects that must
    happen). The setting is read when ``checkpoint`` is called; its
    ``early_stop=`` argument overrides it.

    Parameters
    ----------
    enable : bool
        True to stop early, False to run the function to the end.

    Yields
    ------
    None

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    >>> def f(x):
    ...     y = x.sin()
    ...     print("reached the end")
    ...     return y
    >>> x = rg.tensor([0.0, 1.0], requires_grad=True)
    >>> y = checkpoint(f, x)
    reached the end
    >>> y.sum().backward()                   # the rerun stops at sin's save
    >>> with set_checkpoint_early_stop(False):
    ...     y = checkpoint(f, x)
    reached the end
    >>> y.sum().backward()                   # the rerun runs f to the end
    reached the end
    """
    global _early_stop_enabled
    prev = _early_stop_enabled
    _early_stop_enabled = bool(enable)
    try:
        yield
    finally:
        _early_stop_enabled = prev


_MISSING = object()
_UNPACKED = object()     # a recomputed tensor already handed out in this graph task


def _current_graph_task_id():
    # The backward call this unpack runs in (-1: none); without the engine
    # no backward can be running.
    try:
        from retrograd.engine import current_graph_task_id
    except ImportError:
        return -1
    return current_graph_task_id()


class _Holder:
    """What a node keeps for a tensor saved inside a checkpointed region.
    `tensor` holds the saved tensor only while the checkpointed function
    runs (its graph keeps those alive then anyway), so that a backward
    inside the function itself can unpack it."""
    __slots__ = ("index", "tensor", "__weakref__")

    def __init__(self, index, tensor):
        self.index = index
        self.tensor = tensor


def _rng_state():
    return np.random.get_state(), _get_rng().bit_generator.state


def _set_rng_state(state):
    np_state, rg_state = state
    np.random.set_state(np_state)
    _get_rng().bit_generator.state = rg_state


def _metadata(t):
    return (tuple(t.shape), t.dtype, str(t.device))


class _Frame:
    """One checkpointed call: how to rerun it and what its forward saved."""

    def __init__(self, fn, args, kwargs, preserve_rng_state, recompute_ctx, determinism_check,
                 early_stop):
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.rng_state = _rng_state() if preserve_rng_state else None
        self.recompute_ctx = recompute_ctx   # entered by the (first) rerun
        self.determinism_check = determinism_check
        self.early_stop = early_stop
        self.weak_holders = []       # weakref to each _Holder, in save order
        self.metadata = []           # (shape, dtype, device) of each saved tensor
        self.recomputed = {}         # graph task id -> {holder index: recomputed tensor, or _UNPACKED}
        self.forward_done = False

    def pack(self, t):
        holder = _Holder(len(self.weak_holders), t.detach())
        self.weak_holders.append(weakref.ref(holder))
        self.metadata.append(_metadata(t))
        return holder

    def end_forward(self):
        # From here on, only the handles are kept: the arrays are freed.
        self.forward_done = True
        for ref in self.weak_holders:
            h = ref()
            if h is not None:
                h.tensor = None

    def unpack(self, holder):
        if not self.forward_done:
            # a backward inside the checkpointed function: still at hand
            return holder.tensor
        # As torch: one recomputation per graph task (each backward/grad
        # call), whose tensors are handed out once each; an unpack outside
        # any backward (grad_fn._saved_result) recomputes every time.
        gid = _current_graph_task_id()
        outside = gid == -1
        if outside:
            gid = object()
        recomputed = self.recomputed.get(gid)
        if recomputed is None:
            recomputed = self.recomputed[gid] = {}
            try:
                self.recompute(recomputed)
            except BaseException:
                del self.recomputed[gid]
                raise
        value = recomputed.get(holder.index, _MISSING)
        if outside:
            del self.recomputed[gid]
        if value is _UNPACKED:
            raise CheckpointError(
                "checkpoint: Unpack is being triggered for a tensor that was already unpacked "
                "once. If you are calling ctx.saved_tensors in backward, make sure to do so only "
                "once (keep the tensors it returns instead of reading it again).")
        if value is _MISSING:
            raise CheckpointError(
                "checkpoint: the recomputation saved no tensor in the place of one the forward "
                "saved; the checkpointed function must do the same operations when rerun.")
        # Handed out once: the caller's reference is the only one left, so
        # the recomputed tensor lives no longer than the node that uses it.
        recomputed[holder.index] = _UNPACKED
        return value

    def recompute(self, recomputed):
        holders = self.weak_holders
        n = len(holders)
        # Only handles still held by some node need a value (a node that has
        # run and released its saved tensors drops its handle).
        wanted = sum(1 for h in holders if h() is not None)
        count = [0, 0]                # saves seen, wanted ones filled

        def pack(t):
            i = count[0]
            count[0] += 1
            if i >= n:
                raise CheckpointError(
                    "checkpoint: trying to save more tensors during recomputation than during "
                    "the original forward pass; the checkpointed function must do the same "
                    "operations when rerun (no data-dependent control flow on random values).")
            if self.determinism_check == "default" and _metadata(t) != self.metadata[i]:
                raise CheckpointError(
                    "checkpoint: recomputed values for the following tensors have different "
                    f"metadata than during the forward pass.\ntensor at position {i}:\n"
                    f"saved metadata: {self.metadata[i]}\nrecomputed metadata: {_metadata(t)}\n"
                    "Make the checkpointed function deterministic (same shapes and dtypes each "
                    "run), or pass determinism_check='none'.")
            t = t.detach()
            if holders[i]() is not None:
                recomputed[i] = t
                count[1] += 1
            if self.early_stop and count[0] == n:
                # torch's early stop: the rerun ends at the last save the
                # forward made; what follows it is not needed for backward.
                raise _StopRecomputation
            return t

        def unpack(t):
            return t

        if wanted == 0:
            return
        ctx, self.recompute_ctx = self.recompute_ctx, contextlib.nullcontext()
        saved_state = _rng_state() if self.rng_state is not None else None
        try:
            if self.rng_state is not None:
                _set_rng_state(self.rng_state)
            with saved_tensors_hooks(pack, unpack), enable_grad(), ctx:
                self.fn(*self.args, **self.kwargs)
        except _StopRecomputation:
            pass
        finally:
            if saved_state is not None:
                # like torch's fork_rng: the rerun does not advance the caller's streams
                _set_rng_state(saved_state)
        if count[1] < wanted and self.determinism_check == "default":
            raise CheckpointError(
                "checkpoint: a different number of tensors was saved during the original forward "
                f"and the recomputation: {n} saved in forward, {count[0]} in recomputation. The "
                "checkpointed function must do the same operations when rerun.")


def _warn_use_reentrant(where):
    # torch warns here too (and will raise): the two implementations differ in
    # what they support, and the default differs between torch and retrograd
    warnings.warn(f"{where}: the use_reentrant parameter should be passed explicitly. Without it retrograd "
                  "uses use_reentrant=False (torch uses True, and will refuse a call without it); pass "
                  "use_reentrant=False, which torch recommends, or use_reentrant=True.", stacklevel=3)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, early_stop=None, **kwargs):
    """Run ``function`` without keeping what its ops save for backward; rerun it in backward.

    Activation checkpointing trades compute for memory: the tensors that
    the ops inside ``function(*args, **kwargs)`` save for backward are freed
    as soon as it returns, and the first time backward needs one of them the
    function runs again (under ``enable_grad``) to recompute them. The
    function therefore runs twice per forward and backward, and must do the
    same operations both times.

    The non-reentrant implementation (``use_reentrant=False``) is built on
    saved-tensor hooks: it works with ``backward()`` and
    ``autograd.grad()``, with inputs that do not require grad, with keyword
    arguments, and nests. ``use_reentrant=True`` dispatches to the reentrant
    implementation (a custom Function that runs a backward of its own).

    Differences from torch: when ``use_reentrant`` is not given, both warn
    that it should be passed, but torch then uses the reentrant
    implementation and retrograd the non-reentrant one, which torch
    recommends. ``debug=True`` is refused (retrograd records no operator
    traces).

    Parameters
    ----------
    function : callable
        What to run: ``function(*args, **kwargs)``.
    *args
        Its positional arguments.
    use_reentrant : bool, optional
        False (the default when None) for the non-reentrant implementation,
        True for the reentrant one.
    context_fn : callable, optional
        Returns two context managers: the first wraps the forward, the
        second the recomputation (non-reentrant only).
    determinism_check : {"default", "none"}, optional
        ``"default"`` compares the shape, dtype and device of each recomputed
        saved tensor with the forward's; ``"none"`` skips the check.
    debug : bool, optional
        Must be False (torch's operator-trace debug mode is not available).
    preserve_rng_state : bool, optional
        Restore NumPy's global random state and retrograd's generator for
        the rerun, so random ops (dropout) replay identically. Default True.
    early_stop : bool, optional
        Stop the rerun once every needed tensor is recomputed; None (the
        default) follows :func:`set_checkpoint_early_stop`.
    **kwargs
        Keyword arguments of ``function`` (non-reentrant only).

    Returns
    -------
    object
        What ``function`` returns.

    Raises
    ------
    TypeError
        When ``function`` is not callable.
    ValueError
        For ``debug=True``, an unknown ``determinism_check``, a
        ``context_fn`` that does not return two context managers, or
        ``context_fn``/keyword arguments with ``use_reentrant=True``.
    CheckpointError
        In backward, when the rerun does not save what the forward saved.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.checkpoint import checkpoint
    >>> from retrograd.autograd.graph import saved_tensors_report
    >>> def block(x):
    ...     return (x.tanh() * x).exp()
    >>> x = rg.tensor([0.5, 1.0], requires_grad=True)
    >>> y = checkpoint(block, x, use_reentrant=False).sum()
    >>> saved_tensors_report(y).total_bytes      # nothing kept for backward
    0
    >>> y.backward()                             # reruns block
    >>> x.grad
    tensor([1.0776725, 2.5305507])

    The gradient is the one without checkpointing:

    >>> x2 = rg.tensor([0.5, 1.0], requires_grad=True)
    >>> block(x2).sum().backward()
    >>> x2.grad
    tensor([1.0776725, 2.5305507])
    """
    if not callable(function):
        raise TypeError(f"checkpoint(): function must be callable, got {type(function).__name__}")
    if use_reentrant is None:
        _warn_use_reentrant("retrograd.utils.checkpoint")
        use_reentrant = False
    if use_reentrant:
        if context_fn is not None or debug:
            raise ValueError("checkpoint(): passing context_fn or debug is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs)
                             + " (keyword arguments of the function are only supported when "
                             "use_reentrant=False)")
        from retrograd.utils._checkpoint_reentrant import _checkpoint_reentrant
        return _checkpoint_reentrant(function, *args, preserve_rng_state=preserve_rng_state)
    if debug:
        raise ValueError("checkpoint(debug=True): retrograd does not record the operator traces "
                         "torch's debug mode prints; pass debug=False (use "
                         "retrograd.autograd.set_detect_anomaly(True) to locate a failing op).")
    if determinism_check not in _DETERMINISM_MODES:
        raise ValueError(f"checkpoint(): determinism_check should be one of {list(_DETERMINISM_MODES)}, "
                         f"but got {determinism_check!r}")
    if context_fn is not None:
        contexts = context_fn()
        if not (isinstance(contexts, tuple) and len(contexts) == 2):
            raise ValueError("checkpoint(): context_fn must return a tuple of two context managers "
                             "(one for the forward, one for the recomputation)")
        fwd_ctx, recompute_ctx = contexts
    else:
        fwd_ctx, recompute_ctx = contextlib.nullcontext(), contextlib.nullcontext()
    frame = _Frame(function, args, kwargs, preserve_rng_state, recompute_ctx, determinism_check,
                   _early_stop_enabled if early_stop is None else bool(early_stop))
    try:
        with saved_tensors_hooks(frame.pack, frame.unpack), fwd_ctx:
            out = function(*args, **kwargs)
    finally:
        frame.end_forward()
    return out


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of functions in chunks, checkpointing every chunk but the last.

    As ``torch.utils.checkpoint.checkpoint_sequential``: the functions (or
    the children of a module such as ``nn.Sequential``) are applied in
    order to ``input``, split into ``segments`` chunks of
    ``len(functions) // segments`` functions (the last chunk takes the
    rest). Each chunk but the last runs under :func:`checkpoint`, so only
    the chunks' boundary outputs are kept for backward; the last chunk runs
    normally, since backward needs its saves at once. As for
    ``checkpoint``, a missing ``use_reentrant`` warns (as torch) and
    defaults to False (torch: True).

    Parameters
    ----------
    functions : sequence of callable, or a module with ``children()``
        The functions to run in order, each taking one input.
    segments : int
        The number of chunks (at least 1).
    input : Tensor
        The input of the first function.
    use_reentrant : bool, optional
        As for :func:`checkpoint` (None means False).
    **kwargs
        Only ``preserve_rng_state`` (bool, default True).

    Returns
    -------
    Tensor
        The output of the last function.

    Raises
    ------
    ValueError
        When ``segments`` is not a positive int, or for another keyword
        argument.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.utils.checkpoint import checkpoint_sequential
    >>> layers = [lambda t: t.tanh(), lambda t: t * 2, lambda t: t.exp(), lambda t: t.sin()]
    >>> x = rg.tensor([0.5, 1.0], requires_grad=True)
    >>> out = checkpoint_sequential(layers, 2, x, use_reentrant=False)
    >>> out
    tensor([ 0.5823809 , -0.99212736], grad_fn=<SinBackward0>)
    >>> out.sum().backward()
    >>> x.grad
    tensor([-3.2220733 , -0.48248494])
    """
    if use_reentrant is None:
        _warn_use_reentrant("retrograd.utils.checkpoint.checkpoint_sequential")
        use_reentrant = False
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError(f"checkpoint_sequential(): unexpected keyword arguments {sorted(kwargs)}")
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    functions = list(functions)
    if not isinstance(segments, int) or segments < 1:
        raise ValueError(f"checkpoint_sequential(): segments must be a positive int, got {segments!r}")

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
