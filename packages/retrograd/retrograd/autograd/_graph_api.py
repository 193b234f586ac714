"""GradientEdge, get_gradient_edge, register_multi_grad_hook and queue_callback
(``torch.autograd.graph``).

What this module must never do: run graph nodes or keep per-backward state
past the backward it belongs to (the multi-grad hooks key their state by the
engine's graph task id and drop it when that graph task ends).
"""
from __future__ import annotations

import threading
from typing import Any, NamedTuple, Optional

from retrograd.core import Node, Tensor
from retrograd.core import extending as _ext

__all__ = ["GradientEdge", "get_gradient_edge", "register_multi_grad_hook", "queue_callback"]


def _engine():
    from retrograd import _optional
    return _optional.require("engine", "retrograd-engine")


class GradientEdge(NamedTuple):
    """Where a gradient flows in the graph: input ``output_nr`` of ``node``.

    A named tuple ``(node, output_nr, ownership_token)``. ``autograd.grad``
    accepts one among ``inputs`` (the gradient flowing into the edge is
    returned, without naming the tensor, which may be gone) and among
    ``outputs`` (the backward starts there). Get one with
    ``get_gradient_edge(tensor)``.

    Parameters
    ----------
    node : Node
        The node that receives the gradient.
    output_nr : int
        Which of the node's gradient inputs (the forward output's index).
    ownership_token : object, optional
        torch's field that keeps Python-defined nodes' graphs alive; a node
        here holds its graph itself, so it stays None unless a caller sets it.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import get_gradient_edge
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> h = x * 2
    >>> y = (h * h).sum()
    >>> edge = get_gradient_edge(h)
    >>> edge.node.name(), edge.output_nr, edge.ownership_token
    ('MulBackward0', 0, None)
    >>> del h                                # the edge still names dy/dh = 2h
    >>> rg.autograd.grad(y, edge)
    (tensor([4., 8.]),)
    """

    node: Node
    output_nr: int
    # torch's field (it keeps Python-defined nodes' graphs alive); a node here
    # holds its graph itself, so this stays None unless a caller sets it.
    ownership_token: Optional[Any] = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which the gradient of ``tensor`` flows.

    ``(grad_fn, output_nr)`` for a non-leaf, ``(its AccumulateGrad, 0)`` for
    a leaf (created if needed). ``grad(loss, get_gradient_edge(x))`` equals
    ``grad(loss, x)``; the edge stays valid after ``tensor`` is gone, or
    after ``tensor`` is modified in place (the edge names the gradient of
    the value it had then), as in torch.

    Parameters
    ----------
    tensor : Tensor
        A tensor that requires grad.

    Returns
    -------
    GradientEdge
        ``(node, output_nr)``.

    Raises
    ------
    TypeError
        When ``tensor`` is not a Tensor.
    RuntimeError
        When ``tensor`` does not require grad.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import get_gradient_edge
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> edge = get_gradient_edge(x)
    >>> edge.node.name(), edge.output_nr
    ('AccumulateGrad', 0)
    >>> loss = (x ** 3).sum()
    >>> rg.autograd.grad(loss, edge)
    (tensor([ 3., 12.]),)
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"get_gradient_edge expects a Tensor, got {type(tensor).__name__}")
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients: set requires_grad=True on it (or on the tensors it is computed from) first")
    edge = _ext.gradient_edge(tensor)
    return GradientEdge(edge.function, edge.input_nr)


def queue_callback(callback) -> None:
    """Run ``callback()`` when the backward now running on this thread ends.

    PyTorch's ``Variable._execution_engine.queue_callback`` (torch has no
    public name for it in ``torch.autograd.graph``). Call it from a hook or
    a Function's backward. Callbacks run after every node of that backward,
    on the thread that started it, in the order they were queued; a
    callback may queue more. Under reentrant backward, the innermost
    backward running on the thread is the one it attaches to.

    Parameters
    ----------
    callback : callable
        Called with no arguments; its return value is ignored.

    Raises
    ------
    RuntimeError
        Outside a backward (no backward runs on this thread).
    ImportError
        Without the ``retrograd-engine`` distribution.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import queue_callback
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> def hook(grad):
    ...     queue_callback(lambda: print("backward finished; x.grad =", x.grad))
    ...     print("hook ran")
    >>> handle = x.register_hook(hook)
    >>> (x * 2).sum().backward()
    hook ran
    backward finished; x.grad = tensor([2., 2.])
    """
    _engine().queue_callback(callback)


def _grad_fn_or_grad_acc(t: Tensor):
    if t.grad_fn is not None:
        return t.grad_fn
    if t.requires_grad:
        return _ext.grad_accumulator(t)
    return None


class _MultiHandle:
    """The handle of a multi-grad hook: ``remove()`` removes every tensor hook
    it registered (idempotent)."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """Register ``fn`` to run once per backward over several tensors.

    As ``torch.autograd.graph.register_multi_grad_hook``. With
    ``mode="all"``, ``fn(grads)`` runs once the gradient of every tensor that
    this backward computes is there; ``grads`` has one entry per tensor, None
    for those this backward does not compute (not in the graph, or not needed
    for its ``inputs``). With ``mode="any"``, ``fn(grad)`` runs once, with the
    first gradient computed. The state is per backward call, so the hook
    fires again in the next one. ``fn``'s return value is ignored: it cannot
    replace gradients.

    Parameters
    ----------
    tensors : sequence of Tensor
        The tensors to watch (a list or tuple, not one Tensor).
    fn : callable
        ``fn(grads)`` (mode "all") or ``fn(grad)`` (mode "any").
    mode : {"all", "any"}, optional
        When ``fn`` runs. Default ``"all"``.

    Returns
    -------
    handle
        ``handle.remove()`` removes the hook (also a context manager that
        removes it on exit).

    Raises
    ------
    ValueError
        When ``mode`` is neither "all" nor "any".
    TypeError
        When ``fn`` is not callable, or ``tensors`` is a Tensor or holds
        something else.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import register_multi_grad_hook
    >>> a = rg.tensor(1.0, requires_grad=True)
    >>> b = rg.tensor(2.0, requires_grad=True)
    >>> handle = register_multi_grad_hook((a, b), lambda grads: print("all:", grads))
    >>> (a * b).backward()
    all: [tensor(2.), tensor(1.)]
    >>> handle.remove()
    >>> handle = register_multi_grad_hook((a, b), lambda grad: print("any:", grad), mode="any")
    >>> (a * 5).backward()
    any: tensor(5.)
    >>> handle.remove()
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if isinstance(tensors, Tensor):
        raise TypeError("register_multi_grad_hook expects a sequence of Tensors, got one Tensor: "
                        "wrap it in a list")
    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"tensors[{i}] is a {type(t).__name__}, not a Tensor")
    engine = _engine()
    # The engine's device workers may run two of these hooks at once: all the
    # bookkeeping is under one lock; fn itself runs outside it.
    lock = threading.Lock()

    if mode == "all":
        grad_fns = [_grad_fn_or_grad_acc(t) for t in tensors]
        n = len(tensors)
        state: dict = {}       # graph task id -> [calls so far, calls expected, grads]

        def forget(gid):
            with lock:
                state.pop(gid, None)

        def get_inner_hook(idx):
            def inner_hook(grad):
                gid = _current_graph_task_id(engine)
                with lock:
                    st = state.get(gid)
                    if st is None:
                        # First gradient of this backward: how many will come.
                        expected = sum(1 for f in grad_fns
                                       if f is not None and engine.will_engine_execute_node(f))
                        st = state[gid] = [0, expected, [None] * n]
                        # Never carry state into the next backward (one whose
                        # expected gradients do not all arrive, e.g. an error).
                        engine.queue_callback(lambda: forget(gid))
                    st[2][idx] = grad
                    st[0] += 1
                    done = st[0] == st[1]
                    if done:
                        del state[gid]
                if done:
                    fn(st[2])
            return inner_hook

        handles = [t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors)]
    else:
        ran = set()      # ids of the graph tasks in which fn already ran

        def forget_any(gid):
            with lock:
                ran.discard(gid)

        def wrapped_fn(grad):
            gid = _current_graph_task_id(engine)
            with lock:
                if gid in ran:
                    return
                ran.add(gid)
                engine.queue_callback(lambda: forget_any(gid))
            fn(grad)

        handles = [t.register_hook(wrapped_fn) for t in tensors if t.requires_grad]
    return _MultiHandle(handles)


def _current_graph_task_id(engine):
    gid = engine.current_graph_task_id()
    if gid == -1:
        raise RuntimeError(
            "a multi-grad hook ran outside a backward call (it is a tensor hook that only the "
            "autograd engine may call)")
    return gid
