"""Custom autograd Functions (``torch.autograd.function``).

Subclass :class:`Function`, write static ``forward`` and ``backward`` (and
optionally ``setup_context``), and call ``MyFn.apply(*args)``. The per-call
work (collecting inputs, building the node, wrapping outputs, saving
tensors) is Cython, in retrograd.core's ``_function.pxi``; this module only
holds the Python-visible classes, as torch's does.

Must never: do per-call work here beyond binding keyword arguments.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import warnings

from retrograd.core import Tensor
from retrograd.core import extending as _ext
from retrograd.core.grad_mode import no_grad, is_grad_enabled

__all__ = ["FunctionCtx", "BackwardCFunction", "FunctionMeta", "Function", "once_differentiable"]

_AUTOGRAD_FUNCTION_COUNTER = itertools.count()


class FunctionCtx:
    """What ``forward`` / ``setup_context`` use to prepare ``backward``.

    In a Function's forward, ``ctx`` is the graph node itself (the outputs'
    ``grad_fn``): these methods record their arguments, which ``apply``
    processes once forward has returned."""

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for ``backward``, which reads them back,
        checked for in-place changes, as ``ctx.saved_tensors``. Call at most
        once; save other objects as attributes of ctx."""
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors (or None) for ``jvp`` (forward-mode AD)."""
        for tensor in tensors:
            if not (isinstance(tensor, Tensor) or tensor is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should "
                    "save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark input tensors that forward modified in place. They must be
        returned as outputs; their history moves onto this Function."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Mark outputs that are not differentiable: they do not require
        grad, and backward receives zeros (or None) for them."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """Whether undefined output gradients reach backward as zeros (True,
        the default) or as None."""
        self.materialize_grads = bool(value)

    def mark_shared_storage(self, *pairs):
        warnings.warn(
            "`mark_shared_storage` is deprecated. Tensors with shared storages are automatically "
            "tracked.", FutureWarning, stacklevel=2)


class BackwardCFunction(_ext.FunctionBase, FunctionCtx):
    """Base of every ``<Name>Backward`` node class (internal)."""

    def _get_user_fn(self):
        fwd = self._forward_cls
        backward_fn = fwd.backward
        vjp_fn = fwd.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError(
                f"{fwd.__name__} implements both 'backward' and 'vjp'. Implementing both for a "
                "custom Function is not allowed; implement only one of them.")
        return vjp_fn if vjp_fn is not Function.vjp else backward_fn

    def apply(self, *args):
        """Run this Function's backward on output gradients ``args``."""
        if getattr(self._forward_cls, "boxed_grads_call", False):
            args = (list(args),)
        return self._get_user_fn()(self, *args)

    def apply_jvp(self, *args):
        """Run this Function's jvp on input tangents ``args``."""
        return self._forward_cls.jvp(self, *args)


class FunctionMeta(type):
    """Metaclass of Function: gives each Function class its node class
    ``_backward_cls``, named ``<Name>Backward`` (what ``grad_fn.name()`` says)."""

    def __init__(cls, name, bases, attrs):
        backward_fn = type(name + "Backward", (BackwardCFunction,),
                           {"_forward_cls": cls, "__module__": __name__})
        backward_fn._autograd_function_id = next(_AUTOGRAD_FUNCTION_COUNTER)
        cls._backward_cls = backward_fn
        cls._forward_signature = None      # inspect.Signature of forward, on first use
        cls._forward_plain = False         # forward has only positional parameters without defaults
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom autograd Functions (``torch.autograd.Function``).

    Example::

        class Exp(rg.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x.exp()
                ctx.save_for_backward(out)
                return out

            @staticmethod
            def backward(ctx, grad_out):
                out, = ctx.saved_tensors
                return grad_out * out

        y = Exp.apply(x)
    """

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        """Compute the outputs: ``forward(ctx, *args)``, or ``forward(*args)``
        when ``setup_context`` is overridden. Runs under no_grad."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Fill ``ctx`` from the inputs and output of a ctx-less ``forward``."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """One gradient per output in, one gradient (or None) per forward argument out."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    # Drop the saved tensors on the first access of ctx.saved_tensors (a second
    # access raises), so each can be freed as soon as backward is done with it.
    clear_saved_tensors_on_access = False

    # backward(ctx, grads) receives the gradients as one mutable list instead
    # of one argument each, so that it can drop them early.
    boxed_grads_call = False

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """One tangent per input in, one tangent per output out (forward-mode AD)."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` on ``args`` and record one node for the call."""
        if kwargs or cls.setup_context is not _BASE_SETUP_CONTEXT:
            args, kwargs = _bind(cls, args, kwargs)
        return _ext.function_apply(cls, args, kwargs)


_BASE_SETUP_CONTEXT = Function.setup_context
_ext.register_function_defaults(_BASE_SETUP_CONTEXT)


def _bind(cls, args, kwargs):
    # Keyword arguments become positional inputs (so that tensors passed by
    # keyword are inputs too); with setup_context, defaults are filled in,
    # so that `inputs` is complete (torch's bind_default_args).
    sig = cls.__dict__.get("_forward_signature")
    if sig is None:
        sig = inspect.signature(cls.forward)
        cls._forward_signature = sig
        cls._forward_plain = all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty
                                 for p in sig.parameters.values())
    with_ctx = cls.setup_context is _BASE_SETUP_CONTEXT
    if not kwargs and cls._forward_plain:
        return args, kwargs             # nothing to bind: positional, no defaults
    try:
        bound = sig.bind(None, *args, **kwargs) if with_ctx else sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{cls.__name__}.apply(): {exc}") from None
    if not with_ctx:
        bound.apply_defaults()
    pos = bound.args[1:] if with_ctx else bound.args
    return tuple(pos), dict(bound.kwargs)


_ONCE_DIFFERENTIABLE_MSG = (
    "trying to differentiate twice a function that was marked with @once_differentiable")


def once_differentiable(fn):
    """Decorate a Function's ``backward`` that is not itself differentiable:
    it runs under no_grad, and differentiating its results (double backward)
    raises instead of silently giving wrong gradients."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not is_grad_enabled():
            return outputs
        # If any incoming gradient requires grad (create_graph with a
        # differentiable upstream), the results must require grad too, but
        # differentiating them must fail: aliases behind a DelayedError.
        requires_grad = any(isinstance(arg, Tensor) and arg.requires_grad for arg in args)
        if not requires_grad:
            return outputs
        outputs_ = outputs if isinstance(outputs, tuple) else (outputs,)
        return _ext.delayed_error(_ONCE_DIFFERENTIABLE_MSG, tuple(outputs_))

    return wrapper
