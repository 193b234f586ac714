"""Reentrant activation checkpointing: ``checkpoint(fn, *args, use_reentrant=True)``.

torch's CheckpointFunction, as a custom Function: forward runs ``fn`` under
no_grad and keeps only its inputs; backward recomputes ``fn`` under
enable_grad on detached copies of the inputs, with the random state the
forward saw (NumPy's global state and retrograd's generator), and runs a
nested (reentrant) backward through the recomputed graph. The gradients
that reach the detached inputs are the Function's gradients.

Must never: leave the caller's random state changed, or keep the
recomputed graph alive after backward.
"""
from __future__ import annotations

import warnings

import numpy as np

from retrograd.autograd.function import Function
from retrograd.core import get_rng as _get_rng
from retrograd.core import Tensor
from retrograd.core.grad_mode import enable_grad, no_grad
from retrograd.core import backward as _backward

__all__ = ["CheckpointFunction"]


def _get_rng_state():
    # retrograd's generator (rg.manual_seed replaces it; what matters is the
    # state of the one in use) and NumPy's legacy global state.
    return _get_rng().bit_generator.state, np.random.get_state()


def _set_rng_state(state):
    _get_rng().bit_generator.state = state[0]
    np.random.set_state(state[1])


class _fork_rng:
    """Restore the surrounding random state on exit (torch.random.fork_rng)."""

    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            self.saved = _get_rng_state()

    def __exit__(self, *exc):
        if self.enabled:
            _set_rng_state(self.saved)


def _detach_variable(inputs):
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            out.append(x)
        else:
            out.append(inp)
    return tuple(out)


class CheckpointFunction(Function):
    """See the module docstring. ``apply(run_function, preserve_rng_state, *args)``."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          UserWarning, stacklevel=4)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = _get_rng_state()
        # Non-tensor inputs are kept on ctx, tensors saved (version-checked)
        # with a placeholder filled in by backward.
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        from retrograd.engine import is_checkpoint_valid
        if not is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, retrograd.utils.checkpoint is incompatible with "
                ".grad() or passing an `inputs` parameter to .backward(). To resolve this "
                "error, you can either set use_reentrant=False, or call .backward() without "
                "passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = tensors[i]
        with _fork_rng(ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                _set_rng_state(ctx.fwd_rng_state)
            detached_inputs = _detach_variable(inputs)
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        # Backward only through outputs that require grad.
        outputs_with_grad = []
        grads_with_grad = []
        for out, g in zip(outputs, grads):
            if isinstance(out, Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                grads_with_grad.append(g)
        if not outputs_with_grad:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward(tuple(outputs_with_grad), tuple(grads_with_grad))
        return (None, None) + tuple(inp.grad if isinstance(inp, Tensor) else None
                                    for inp in detached_inputs)


def _checkpoint_reentrant(fn, *args, preserve_rng_state=True, **kwargs):
    """``checkpoint(fn, *args, use_reentrant=True)``: run ``fn(*args)``
    without keeping its graph, and recompute it during backward.

    Unlike the non-reentrant mode, keyword arguments for ``fn`` are not
    supported (as in torch), and backward must be ``.backward()`` (the
    recomputed graph's gradients land in ``.grad`` of the leaves it uses)."""
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not callable(fn):
        raise TypeError(f"checkpoint() expects a callable, got {type(fn).__name__}")
    return CheckpointFunction.apply(fn, preserve_rng_state, *args)
