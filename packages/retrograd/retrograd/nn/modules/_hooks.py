"""Module hooks: the handles that remove them, and the backward hooks built
on autograd nodes (torch's ``torch.utils.hooks.BackwardHook``).

A module's full backward hooks need the gradients with respect to the
module's inputs and outputs as one event. Autograd has no node for "the
module", so, as torch does, the module's tensor inputs and its tensor outputs
each pass through an identity :class:`BackwardHookFunction`: the node of the
outputs' pass sees ``grad_output`` first (the backward pre-hooks run there),
the node of the inputs' pass sees ``grad_input`` last (the backward hooks run
there, with the ``grad_output`` kept from before). The identity returns its
inputs as they are, so autograd treats its outputs as views made by a custom
Function, and modifying them in place is refused with autograd's error.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from retrograd.core import Tensor, is_grad_enabled
from retrograd.autograd.function import Function

__all__: list[str] = []

class BackwardHookFunction(Function):
    """The identity on tensors, as a custom Function: its node is where a
    module's backward hooks see the gradients (torch's BackwardHookFunction).
    Inputs that do not require grad are marked non-differentiable."""

    @staticmethod
    def forward(ctx: Any, *args: Tensor) -> tuple:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        return grads


def _pack(indices: Sequence[int], values: Sequence[Any], size: int) -> tuple:
    # the gradients of the tensor arguments, at their positions among all
    # `size` arguments (None for the arguments that are not tensors)
    res: list[Any] = [None] * size
    for i, v in zip(indices, values):
        res[i] = v
    return tuple(res)


class BackwardHook:
    """One forward call's full backward hooks (and backward pre-hooks).

    ``setup_input_hook(args)`` is called on the forward's positional
    arguments before ``forward``; ``setup_output_hook(result)`` on its result
    after the forward hooks. Each returns its argument with the tensors passed
    through :class:`BackwardHookFunction`.

    Parameters
    ----------
    module : Module
        The module whose hooks run; it is their first argument.
    user_hooks : list of callable
        ``hook(module, grad_input, grad_output)``, run in order once the
        gradients with respect to the inputs are known; each may return new
        ``grad_input``.
    user_pre_hooks : list of callable
        ``hook(module, grad_output)``, run in order when the gradients with
        respect to the outputs arrive; each may return new ``grad_output``.
    """

    def __init__(self, module: Any, user_hooks: list[Callable], user_pre_hooks: list[Callable]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = -1
        self.input_tensors_index: list[int] | None = None
        self.n_outputs = -1
        self.output_tensors_index: list[int] | None = None

    def _wrap_tensors(self, args: tuple, on_node: Callable[[Any], None]) -> tuple[tuple, list[int] | None]:
        # Passes the tensors among args through the identity Function and
        # gives its node to on_node. Nothing is done (and None comes back for
        # the indices) when no tensor requires grad or grad mode is off: no
        # gradient will come.
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        if isinstance(new, Tensor):
            new = (new,)
        node = next(t.grad_fn for t in new if t.grad_fn is not None)
        on_node(node)
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        # a namedtuple of arguments stays one
        return (tuple(out) if type(args) is tuple else type(args)(*out)), idx

    def setup_input_hook(self, args: tuple) -> tuple:
        """Route the tensors of ``args`` (the forward's positional arguments)
        through the node where the backward hooks will run."""
        def on_node(node: Any) -> None:
            def hook(grad_inputs: tuple, _grad_outputs: tuple) -> tuple | None:
                if self.grad_outputs is None:
                    # the gradient reached the inputs without passing through
                    # the module's outputs (double backward): not this call's
                    return None
                res = _pack(self.input_tensors_index or [], grad_inputs, self.n_inputs)
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError(
                            f"Backward hook returned an invalid number of grad_input, got {len(out)}, "
                            f"but expected {len(res)}")
                    res = tuple(out)
                self.grad_outputs = None
                return tuple(res[i] for i in self.input_tensors_index or [])
            node.register_hook(hook)

        res, self.input_tensors_index = self._wrap_tensors(args, on_node)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, result: Any) -> Any:
        """Route the tensors of the forward's result (a tensor or a tuple)
        through the node where the backward pre-hooks will run."""
        def on_node(node: Any) -> None:
            def hook(_grad_inputs: tuple, grad_outputs: tuple) -> tuple | None:
                self.grad_outputs = _pack(self.output_tensors_index or [], grad_outputs, self.n_outputs)
                for pre_hook in self.user_pre_hooks:
                    out = pre_hook(self.module, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(self.grad_outputs):
                        raise RuntimeError(
                            f"Backward pre hook returned an invalid number of grad_output, got {len(out)}, "
                            f"but expected {len(self.grad_outputs)}")
                    self.grad_outputs = tuple(out)
                grad_outputs_now = self.grad_outputs
                if self.input_tensors_index is None:
                    # No input requires grad: no gradient will reach an input
                    # node, so the backward hooks run here, with no grad_input.
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with respect to module "
                        "outputs since no inputs require gradients. See Module.register_full_backward_hook "
                        "for more details.", UserWarning, stacklevel=2)
                    empty = (None,) * self.n_inputs
                    for user_hook in self.user_hooks:
                        out = user_hook(self.module, empty, self.grad_outputs)
                        if out is not None and not (isinstance(out, tuple) and all(g is None for g in out)):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient should always "
                                "return None or None for all gradients.")
                    self.grad_outputs = None
                return tuple(grad_outputs_now[i] for i in self.output_tensors_index or [])
            node.register_hook(hook)

        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, self.output_tensors_index = self._wrap_tensors(args, on_node)
        self.n_outputs = len(args)
        return res if is_tuple else res[0]
