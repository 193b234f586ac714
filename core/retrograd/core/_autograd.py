"""backward() and grad(): argument checking in front of the engine slot.

What this module must never do: run graph nodes itself. It validates what
the user passed, turns it into root edges and root gradients, and hands them
to the engine that retrograd-engine registers in core's slot.
"""
from __future__ import annotations

import sys as _sys
import warnings as _warnings
from collections.abc import Sequence

import numpy as np

from retrograd.core import abi as _abi
from retrograd.core.abi import Tensor, Edge
from retrograd.core._dtypes import is_floating_dtype as _is_floating_dtype

__all__ = ["backward", "grad", "set_warn_always", "is_warn_always_enabled"]


def _tensor_tuple(x, what):
    if type(x) is tuple:
        return x               # (the common call: Tensor.backward passes one)
    if isinstance(x, Tensor):
        return (x,)
    if _is_gradient_edge(x):
        return (x,)
    if isinstance(x, Sequence) and not isinstance(x, (str, bytes)):
        return tuple(x)
    if type(x).__name__ == "Tensor" and type(x).__module__.split(".")[0] == "torch":
        raise RuntimeError(f"all {what} have to be Tensors or GradientEdges, but got torch.Tensor: the "
                           "libraries were mixed; pass retrograd tensors")
    if isinstance(x, str) and what == "inputs":
        return tuple(x)          # as torch: each character is then refused as a non-tensor input
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, got {type(x).__name__}")


def _is_gradient_edge(x):
    return not isinstance(x, Tensor) and hasattr(x, "node") and hasattr(x, "output_nr")


def _make_grads(outputs, grads, create_graph, what="grad_tensors"):
    if grads is None:
        grads = (None,) * len(outputs)
    else:
        grads = _tensor_tuple(grads, what) if not isinstance(grads, Tensor) else (grads,)
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"got {len(grads)} {what} for {len(outputs)} outputs: pass one gradient (or None) per output")
    new = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if _is_gradient_edge(out):
            new.append(_edge_grad(out, g, i, create_graph))
            continue
        if g is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError(
                        f"grad can be implicitly created only for scalar outputs, but output {i} has "
                        f"shape {tuple(out.shape)}: pass `gradient=` (or grad_outputs=) with that shape")
                if not _is_floating_dtype(out.dtype):
                    # (torch: complex too; the gradient of a complex scalar
                    # is not 1, and the user must say which one they mean)
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got {out.dtype}: "
                        f"pass `gradient=` (or grad_outputs=), or take .real or .abs() of the output first")
                ones = np.ones_like(out._array)        # numpy or cupy, like the output
                if create_graph:
                    ones = _abi._wrap(ones, out.device)
                    if _abi._trace_slot_filled():
                        # a compiled program makes its own (abi.pxd's RG_TRACE_FACTORY)
                        _abi._trace_python_event(
                            _abi._TRACE_FACTORY, "ones_like", (), (ones,),
                            lambda s=out.shape, d=out.dtype, dev=out.device: _abi._wrap(np.ones(s, d), dev))
                new.append(ones)
            else:
                new.append(None)
            continue
        _check_grad_is_tensor(g, i)
        if tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] "
                f"has a shape of {tuple(out.shape)}. Pass a gradient with the output's shape.")
        _check_grad_dtype(g.dtype, out.dtype, i)
        if g.device != out.device:
            raise RuntimeError(
                f"grad_output[{i}] is on {g.device} but output[{i}] is on {out.device}: move it with .to()")
        if create_graph:
            new.append(g if g.dtype == out.dtype else g.to(out.dtype))
        else:
            arr = g._array
            new.append(arr if arr.dtype == out.dtype else arr.astype(out.dtype))
    return tuple(new)


def _check_grad_is_tensor(g, i):
    if not isinstance(g, Tensor):
        raise TypeError(
            f"gradients can be either Tensors or None, but got {type(g).__name__} for output {i}: "
            "wrap it with retrograd.tensor(...)")


def _edge_grad(edge, g, i, create_graph):
    # The gradient for an output given as a GradientEdge: what the edge's
    # input metadata says it must be (torch: ones for a one-element edge).
    meta = edge.node.input_metadata[edge.output_nr]
    if g is None:
        if int(np.prod(meta.shape)) != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs, but output {i} is a "
                f"GradientEdge of shape {tuple(meta.shape)}: pass grad_outputs= with that shape")
        ones = np.ones(meta.shape, dtype=meta.dtype)
        return _abi._wrap(ones, meta.device) if create_graph else ones
    _check_grad_is_tensor(g, i)
    if tuple(g.shape) != tuple(meta.shape):
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] "
            f"(a GradientEdge) has a shape of {tuple(meta.shape)}. Pass a gradient with that shape.")
    # The same dtype rules as for a Tensor output, against the dtype the
    # edge's node expects (its input metadata), as torch's _make_grads.
    _check_grad_dtype(g.dtype, meta.dtype, i)
    return g if create_graph else g._array


def _check_grad_dtype(gdt, odt, i):
    if gdt.kind not in "fciub" and not _is_floating_dtype(gdt):
        raise RuntimeError(
            f"Mismatch in dtype: grad_output[{i}] has dtype {gdt}, which cannot be a gradient "
            f"of output[{i}] of dtype {odt}")
    if (gdt.kind == "c") != (odt.kind == "c"):
        raise RuntimeError(
            f"For complex Tensors, both grad_output and output are required to have the same "
            f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {gdt} and output[{i}] has "
            f"a dtype of {odt}; convert the gradient with .to({odt}).")


def _root_edges(outputs):
    edges = []
    for i, t in enumerate(outputs):
        if _is_gradient_edge(t):
            edges.append(Edge(t.node, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"output {i} is a {type(t).__name__}, not a Tensor")
        e = _abi._gradient_edge(t)
        if e is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn: "
                "nothing recorded a graph for it (was it computed under no_grad, or from tensors "
                "without requires_grad=True?)")
        edges.append(e)
    return tuple(edges)


def _input_edges(inputs, accumulate):
    edges = []
    for i, t in enumerate(inputs):
        if _is_gradient_edge(t):
            edges.append(Edge(t.node, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            # torch's class (RuntimeError) for a non-tensor inside the sequence
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__} (inputs[{i}]); pass the tensors to differentiate")
        if not t.requires_grad:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}) does not require grad: "
                "set requires_grad=True on it before the forward")
        if accumulate and not t.is_leaf:
            t.retain_grad()
        edges.append(_abi._gradient_edge(t))
    return tuple(edges)


def _warn_level():
    # Point a warning at the user's call: past this module and Tensor.backward
    # (which lives in core's compiled module and has no frame of its own).
    level, f = 1, _sys._getframe(1)
    while f is not None and f.f_globals.get("__name__") == __name__:
        level += 1
        f = f.f_back
    return level


_warn_always = [False]
_warned_create_graph = [False]


def set_warn_always(b):
    """Issue the warnings that torch gives once per process every time (``torch.set_warn_always``).

    Parameters
    ----------
    b : bool
        True: every time; False (the default): once per process.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.set_warn_always(True)
    >>> rg.is_warn_always_enabled()
    True
    >>> rg.set_warn_always(False)
    """
    _warn_always[0] = bool(b)


def is_warn_always_enabled():
    """Whether :func:`set_warn_always` is on (``torch.is_warn_always_enabled``).

    Returns
    -------
    bool

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.is_warn_always_enabled()
    False
    """
    return _warn_always[0]


def backward(tensors: Tensor | Sequence[Tensor], grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
             retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables: Tensor | Sequence[Tensor | None] | None = None,
             inputs: Tensor | Sequence[Tensor] | None = None) -> None:
    """Accumulate into ``.grad`` of the leaves the gradients of ``tensors``.

    The gradient of the sum of ``tensors`` (each weighted by its entry of
    ``grad_tensors``) is computed with the chain rule through the graph they
    were made by, and added to the ``.grad`` of every leaf that requires grad
    (or only of ``inputs``). ``t.backward(g)`` is ``backward(t, g)``. As
    ``torch.autograd.backward``.

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        The outputs to differentiate.
    grad_tensors : Tensor, sequence of (Tensor or None), or None
        The gradient of something with respect to each of ``tensors`` (the
        "vector" of the vector-Jacobian product), same shape as its tensor.
        None for a tensor with one element means ``ones``; any other tensor
        needs one (RuntimeError: "grad can be implicitly created only for
        scalar outputs").
    retain_graph : bool or None
        Keep the graph's saved tensors so that it can be differentiated again.
        None means ``create_graph``.
    create_graph : bool
        Record the backward itself, so the accumulated gradients have a
        ``grad_fn`` and can be differentiated again (higher-order
        derivatives). Warns: ``.grad`` then holds a graph that references
        the parameter; prefer :func:`grad`.
    grad_variables : Tensor, sequence or None
        The deprecated name of ``grad_tensors``.
    inputs : Tensor, sequence of Tensor, or None
        Accumulate only into these tensors' ``.grad`` (leaves or not); None
        means every leaf that the graph reaches.

    Raises
    ------
    RuntimeError
        A tensor does not require grad, has no graph, a graph was already
        freed by an earlier backward, or a gradient has the wrong shape.

    See Also
    --------
    grad : the gradients returned instead of accumulated.

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1., 2., 3.], requires_grad=True)
    >>> rg.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4., 6.])

    A non-scalar output needs its gradient; gradients accumulate:

    >>> rg.autograd.backward(x * 2, grad_tensors=rg.ones(3))
    >>> x.grad
    tensor([4., 6., 8.])
    """
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("pass grad_tensors only; grad_variables is its deprecated name")
        grad_tensors = grad_variables
    outputs = _tensor_tuple(tensors, "tensors")
    if inputs is not None:
        inputs = _tensor_tuple(inputs, "inputs")
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    else:
        inputs = ()
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and (_warn_always[0] or not _warned_create_graph[0]):
        # torch warns once per process (every time under set_warn_always) on
        # a backward (not grad) that builds a graph of the gradients it
        # accumulates into .grad.
        _warned_create_graph[0] = True
        _warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.", UserWarning, stacklevel=_warn_level())
    fast = _abi._fast_backward_args(outputs, grad_tensors, bool(create_graph))
    if fast is not None:
        roots, grads = fast
    else:
        grads = _make_grads(outputs, grad_tensors, create_graph)
        roots = _root_edges(outputs)
    in_edges = _input_edges(inputs, True)
    _abi._run_backward(roots, grads, bool(retain_graph), bool(create_graph), in_edges, True)


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Tensor | Sequence[Tensor | None] | None = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Tensor, ...]:
    """Return the gradients of ``outputs`` with respect to ``inputs``.

    Computes the vector-Jacobian product of ``outputs`` (weighted by
    ``grad_outputs``) with respect to each of ``inputs`` and returns it,
    leaving every ``.grad`` untouched. As ``torch.autograd.grad``.

    Parameters
    ----------
    outputs : Tensor or sequence of Tensor
        The outputs to differentiate.
    inputs : Tensor or sequence of Tensor
        The tensors (leaves or not) to differentiate with respect to; each
        must require grad.
    grad_outputs : Tensor, sequence of (Tensor or None), or None
        The gradient with respect to each output, its shape. None for a
        one-element output means ``ones``.
    retain_graph : bool or None
        Keep the graph's saved tensors for another backward. None means
        ``create_graph``.
    create_graph : bool
        Record the backward, so the returned gradients can be differentiated
        again (Hessians, gradient penalties).
    only_inputs : bool
        Deprecated and ignored (warns when False).
    allow_unused : bool or None
        Return None for an input the outputs do not depend on, instead of
        raising. None means ``materialize_grads``.
    is_grads_batched : bool
        Treat the first dimension of every ``grad_outputs`` entry as a batch
        and compute one vector-Jacobian product per row, in one pass (rows
        of a Jacobian).
    materialize_grads : bool
        Return zeros instead of None for unused inputs.

    Returns
    -------
    tuple of Tensor
        One gradient per input, its shape (None for an unused input when
        ``allow_unused`` is set).

    Raises
    ------
    RuntimeError
        An input does not require grad, is unused (without
        ``allow_unused``), or the graph was freed by an earlier backward.
    ValueError
        ``materialize_grads=True`` with ``allow_unused=False``.

    See Also
    --------
    backward : accumulate into ``.grad`` instead.

    Examples
    --------
    >>> import retrograd as rg
    >>> a = rg.tensor(2., requires_grad=True)
    >>> b = rg.tensor(3., requires_grad=True)
    >>> rg.autograd.grad(a * b, [a, b])
    (tensor(3.), tensor(2.))

    A second derivative, through ``create_graph``:

    >>> (g,) = rg.autograd.grad(a ** 3, a, create_graph=True)
    >>> g
    tensor(12., grad_fn=<MulBackward0>)
    >>> rg.autograd.grad(g, a)
    (tensor(12.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False.")
    if not only_inputs:
        _warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "retrograd.autograd.backward.", UserWarning, stacklevel=2)
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _tensor_tuple(outputs, "outputs")
    ins = _tensor_tuple(inputs, "inputs")
    if len(ins) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outs, ins, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    fast = _abi._fast_backward_args(outs, grad_outputs, bool(create_graph))
    if fast is not None:
        roots, grads = fast
    else:
        grads = _make_grads(outs, grad_outputs, create_graph, "grad_outputs")
        roots = _root_edges(outs)
    in_edges = _input_edges(ins, False)
    captured = _abi._run_backward(roots, grads, bool(retain_graph), bool(create_graph), in_edges, False)
    result = []
    for i, (t, g) in enumerate(zip(ins, captured)):
        if g is None:
            if materialize_grads:
                g = _materialized_zeros(t, (), create_graph)
            elif not allow_unused:
                raise RuntimeError(_unused_message(t, i))
        elif not isinstance(g, Tensor):
            g = _abi._wrap(g, t.device if isinstance(t, Tensor) else None)
        result.append(g)
    return tuple(result)


def _batched_grad(outs, ins, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    # One graph task over the whole batch (the engine's Note [Batched
    # gradients]): every gradient carries the batch as its first dim.
    if grad_outputs is None:
        raise RuntimeError(
            "is_grads_batched=True needs grad_outputs: one batch of gradients per output, "
            "with the batch as the first dimension")
    gos = _tensor_tuple(grad_outputs, "grad_outputs") if not isinstance(grad_outputs, Tensor) \
        else (grad_outputs,)
    if len(gos) != len(outs):
        raise RuntimeError(
            f"got {len(gos)} grad_outputs for {len(outs)} outputs: pass one gradient (or None) per output")
    batch = None
    roots, grads = [], []
    for i, (out, g) in enumerate(zip(outs, gos)):
        if g is None:
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"grad_outputs[{i}] must be a Tensor or None, got {type(g).__name__}")
        if not _is_gradient_edge(out):
            if not isinstance(out, Tensor):
                raise TypeError(f"output {i} is a {type(out).__name__}, not a Tensor")
            if g.ndim == 0 or tuple(g.shape[1:]) != tuple(out.shape):
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each grad_output "
                    "as the batch dimension. The sizes of the remaining dimensions are expected to "
                    "match the shape of corresponding output, but a mismatch was detected: "
                    f"grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] has a shape "
                    f"of {tuple(out.shape)}. If you only want some tensors in `grad_output` to be "
                    "considered batched, consider using vmap.")
            if g.device != out.device:
                raise RuntimeError(
                    f"grad_output[{i}] is on {g.device} but output[{i}] is on {out.device}: move it with .to()")
            if not out.requires_grad:
                continue
        elif g.ndim == 0:
            raise RuntimeError(f"grad_output[{i}] must have a leading batch dimension, got a 0-d tensor")
        if batch is None:
            batch = g.shape[0]
        elif g.shape[0] != batch:
            raise RuntimeError(
                f"grad_outputs have different batch sizes ({batch} and {g.shape[0]} at "
                f"grad_output[{i}]): every batched gradient needs the same first dimension")
        roots.append(out)
        grads.append(g if create_graph else g._array)
    if batch is None:
        raise RuntimeError(
            "is_grads_batched=True needs at least one batched grad_output Tensor for an output "
            "that requires grad")
    if batch == 0:
        raise RuntimeError(
            "is_grads_batched=True got grad_outputs with an empty batch (first dimension 0): "
            "pass at least one gradient per output")
    captured = _abi._run_batched_backward(
        _root_edges(tuple(roots)), tuple(grads), bool(retain_graph), bool(create_graph),
        _input_edges(ins, False), batch)
    result = []
    for i, (t, g) in enumerate(zip(ins, captured)):
        if g is None:
            if materialize_grads:
                g = _materialized_zeros(t, (batch,), create_graph)
            elif not allow_unused:
                raise RuntimeError(_unused_message(t, i))
        elif not isinstance(g, Tensor):
            g = _abi._wrap(g, t.device if isinstance(t, Tensor) else None)
        result.append(g)
    return tuple(result)


def _unused_message(t, i):
    what = "GradientEdge" if _is_gradient_edge(t) else f"Tensor of shape {tuple(t.shape)}"
    return (f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
            f"Set allow_unused=True if this is the desired behavior. (inputs[{i}], a {what}, "
            "received no gradient: the outputs do not depend on it.)")


def _materialized_zeros(t, batch_shape, create_graph):
    # materialize_grads: zeros for an input the outputs do not depend on.
    # Under create_graph they require grad, as every other gradient of a
    # create_graph call may (torch: zeros_like(input, requires_grad=create_graph)).
    if not isinstance(t, Tensor):
        raise RuntimeError(
            "materialize_grads cannot be used when the given input is a GradientEdge: the outputs "
            "do not depend on it, and a GradientEdge has no tensor to make zeros like. Pass the "
            "tensor itself, or materialize_grads=False and handle the None")
    xp = np if isinstance(t._array, np.ndarray) else _array_module(t._array)
    z = _abi._wrap(xp.zeros(batch_shape + tuple(t.shape), dtype=t.dtype), t.device)
    if create_graph:
        z.requires_grad_(True)
    return z


def _array_module(array):
    import importlib
    return importlib.import_module(type(array).__module__.split(".")[0])
