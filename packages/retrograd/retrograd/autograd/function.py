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
    processes once forward has returned
    (``torch.autograd.function.FunctionCtx``). Other objects that backward
    needs are stored as attributes of ``ctx``.

    Examples
    --------
    >>> import retrograd as rg
    >>> class Exp(rg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         out = x.exp()
    ...         ctx.save_for_backward(out)
    ...         return out
    ...
    ...     @staticmethod
    ...     def backward(ctx, grad_out):
    ...         (out,) = ctx.saved_tensors
    ...         return grad_out * out
    >>> x = rg.tensor([0.0, 1.0], requires_grad=True)
    >>> y = Exp.apply(x)
    >>> y.grad_fn.name()
    'ExpBackward'
    """

    def save_for_backward(self, *tensors):
        """Save tensors for ``backward``.

        ``backward`` reads them back as ``ctx.saved_tensors``, checked for
        in-place changes made since (a changed one raises RuntimeError).
        Call it at most once per forward; store other objects as attributes
        of ``ctx``. Saving through this method, rather than as attributes,
        is what lets autograd check versions and free them after backward.

        Parameters
        ----------
        *tensors : Tensor or None
            Inputs, outputs or intermediate tensors of forward.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Exp(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         out = x.exp()
        ...         ctx.save_for_backward(out)
        ...         return out
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad_out):
        ...         (out,) = ctx.saved_tensors
        ...         return grad_out * out
        >>> x = rg.tensor([0.0, 1.0], requires_grad=True)
        >>> Exp.apply(x).sum().backward()
        >>> x.grad
        tensor([1.      , 2.718282])
        """
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors for ``jvp`` (forward-mode AD).

        ``jvp`` reads them back as ``ctx.saved_tensors``.

        Parameters
        ----------
        *tensors : Tensor or None
            The tensors ``jvp`` needs.

        Raises
        ------
        AssertionError
            When an argument is not a Tensor or None (torch's exception).

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> class Square(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_forward(x)
        ...         return x * x
        ...
        ...     @staticmethod
        ...     def jvp(ctx, x_t):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * x_t
        >>> with fwAD.dual_level():
        ...     y = Square.apply(fwAD.make_dual(rg.tensor(3.0), rg.tensor(1.0)))
        ...     print(fwAD.unpack_dual(y).tangent)
        tensor(6.)
        """
        for tensor in tensors:
            if not (isinstance(tensor, Tensor) or tensor is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should "
                    "save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark input tensors that forward modified in place.

        Each must also be returned as an output; its history moves onto this
        Function's node, as for a built-in in-place op.

        Parameters
        ----------
        *args : Tensor
            The inputs forward changed in place.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Double_(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         x.mul_(2)
        ...         ctx.mark_dirty(x)
        ...         return x
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return 2 * grad
        >>> a = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> b = a.clone()
        >>> c = Double_.apply(b)
        >>> c is b, b.grad_fn.name()
        (True, 'Double_Backward')
        >>> c.sum().backward()
        >>> a.grad
        tensor([2., 2.])
        """
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Mark outputs as not differentiable.

        They do not require grad, and ``backward`` receives zeros (or None,
        see :meth:`set_materialize_grads`) as their gradients. For outputs
        such as indices.

        Parameters
        ----------
        *args : Tensor
            Outputs of forward.

        Examples
        --------
        >>> import retrograd as rg
        >>> class MaxWithIndex(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         idx = x.argmax()
        ...         ctx.mark_non_differentiable(idx)
        ...         ctx.save_for_backward(idx)
        ...         ctx.size = x.shape[0]
        ...         return x.max(), idx
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad_max, grad_idx):
        ...         (idx,) = ctx.saved_tensors
        ...         return rg.where(rg.arange(ctx.size) == idx, grad_max, 0.0)
        >>> x = rg.tensor([1.0, 3.0, 2.0], requires_grad=True)
        >>> m, i = MaxWithIndex.apply(x)
        >>> i.requires_grad
        False
        >>> m.backward()
        >>> x.grad
        tensor([0., 1., 0.])
        """
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """Choose whether undefined output gradients reach backward as zeros.

        When an output does not take part in the loss, its gradient is
        undefined. With True (the default) backward receives a tensor of
        zeros in its place; with False it receives None, which saves the
        allocation when backward handles None.

        Parameters
        ----------
        value : bool
            True to materialise zeros, False to pass None.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Two(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.set_materialize_grads(False)
        ...         return x * 2, x * 3
        ...
        ...     @staticmethod
        ...     def backward(ctx, g2, g3):
        ...         print("g3 is None:", g3 is None)
        ...         return 2 * g2
        >>> x = rg.tensor(1.0, requires_grad=True)
        >>> a, b = Two.apply(x)
        >>> a.backward()
        g3 is None: True
        """
        self.materialize_grads = bool(value)

    def mark_shared_storage(self, *pairs):
        """Deprecated, does nothing: shared storage is tracked by itself.

        Kept for torch's API; it warns with a FutureWarning, as torch does.

        Parameters
        ----------
        *pairs : tuple
            Ignored.

        Examples
        --------
        >>> import warnings
        >>> import retrograd as rg
        >>> class Double(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.mark_shared_storage((x, x))
        ...         return x * 2
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return 2 * grad
        >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     y = Double.apply(x)
        >>> caught[0].category.__name__
        'FutureWarning'
        >>> y
        tensor([2., 4.], grad_fn=<DoubleBackward>)
        """
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

    Subclass it and write static methods: ``forward`` computes the outputs
    (under no_grad), ``backward`` returns one gradient (or None) per
    argument of forward given one gradient per output, and ``jvp`` (for
    forward-mode AD) one tangent per output given one per input. Call it as
    ``MyFunction.apply(*args)``, never by instantiating it: each call records
    one node, ``<Name>Backward``, which is also the ``ctx`` that forward and
    backward receive.

    ``forward(ctx, *args)`` may prepare ``ctx`` itself, or ``forward(*args)``
    may leave that to a separate ``setup_context(ctx, inputs, output)``, as in
    torch. Decorate ``backward`` with :func:`once_differentiable` when it is
    not itself differentiable.

    Examples
    --------
    >>> import retrograd as rg
    >>> class Exp(rg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         out = x.exp()
    ...         ctx.save_for_backward(out)
    ...         return out
    ...
    ...     @staticmethod
    ...     def backward(ctx, grad_out):
    ...         (out,) = ctx.saved_tensors
    ...         return grad_out * out
    >>> x = rg.tensor([0.0, 1.0], requires_grad=True)
    >>> y = Exp.apply(x)
    >>> y
    tensor([1.      , 2.718282], grad_fn=<ExpBackward>)
    >>> y.sum().backward()
    >>> x.grad
    tensor([1.      , 2.718282])
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
        """Compute the outputs of the Function; override it.

        ``forward(ctx, *args)``, or ``forward(*args)`` when
        ``setup_context`` is overridden. It runs under no_grad: the
        operations it performs are not recorded; the call records one node
        instead.

        Parameters
        ----------
        *args : Any
            ``ctx`` (unless ``setup_context`` is overridden), then the
            arguments given to ``apply``.
        **kwargs : Any
            Keyword arguments given to ``apply``.

        Returns
        -------
        Tensor or tuple
            The outputs.

        Raises
        ------
        NotImplementedError
            When the subclass does not override it.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Cube(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(x):
        ...         return x ** 3
        ...
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         (ctx.x,) = inputs
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return 3 * ctx.x ** 2 * grad
        >>> x = rg.tensor(2.0, requires_grad=True)
        >>> Cube.apply(x).backward()
        >>> x.grad
        tensor(12.)
        """
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Fill ``ctx`` from the inputs and output of a ctx-less ``forward``.

        Override it together with a ``forward(*args)`` that takes no ctx.

        Parameters
        ----------
        ctx : FunctionCtx
            The node being recorded.
        inputs : tuple
            The arguments of ``apply`` (defaults filled in).
        output : Tensor or tuple
            What ``forward`` returned.

        Raises
        ------
        NotImplementedError
            When neither it nor a ctx-taking forward is defined.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Scale(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(x, factor=2.0):
        ...         return x * factor
        ...
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         ctx.factor = inputs[1]
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad * ctx.factor, None
        >>> x = rg.tensor(1.0, requires_grad=True)
        >>> Scale.apply(x, factor=5.0).backward()
        >>> x.grad
        tensor(5.)
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Compute the gradients of the Function's inputs; override it.

        Parameters
        ----------
        ctx : FunctionCtx
            The node, with what forward saved.
        *grad_outputs : Tensor
            One gradient per output of forward.

        Returns
        -------
        Tensor, None or tuple
            One gradient per argument of forward (None for arguments that
            are not tensors or need no gradient).

        Raises
        ------
        NotImplementedError
            When the subclass defines neither ``backward`` nor ``vjp``.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Mul(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, a, b):
        ...         ctx.save_for_backward(a, b)
        ...         return a * b
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         a, b = ctx.saved_tensors
        ...         return grad * b, grad * a
        >>> a = rg.tensor(2.0, requires_grad=True)
        >>> b = rg.tensor(3.0, requires_grad=True)
        >>> Mul.apply(a, b).backward()
        >>> a.grad, b.grad
        (tensor(3.), tensor(2.))
        """
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
        """Compute the tangents of the outputs (forward-mode AD); override it.

        Parameters
        ----------
        ctx : FunctionCtx
            The node, with what forward saved (``save_for_forward``).
        *grad_inputs : Tensor
            One tangent per input of forward.

        Returns
        -------
        Tensor or tuple
            One tangent per output.

        Raises
        ------
        NotImplementedError
            When the Function is used in forward mode without a ``jvp``.

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> class Double(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return 2 * x
        ...
        ...     @staticmethod
        ...     def jvp(ctx, x_t):
        ...         return 2 * x_t
        >>> with fwAD.dual_level():
        ...     y = Double.apply(fwAD.make_dual(rg.tensor(1.0), rg.tensor(5.0)))
        ...     print(fwAD.unpack_dual(y).tangent)
        tensor(10.)
        """
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the Function on ``args`` and record one node for the call.

        Parameters
        ----------
        *args : Any
            The arguments of forward (after ``ctx``).
        **kwargs : Any
            Keyword arguments of forward (tensors given by keyword are inputs
            too).

        Returns
        -------
        Tensor or tuple
            forward's outputs; those that are differentiable require grad and
            have the new node as their ``grad_fn``.

        Raises
        ------
        TypeError
            When the arguments do not match forward's signature.

        Examples
        --------
        >>> import retrograd as rg
        >>> class Neg(rg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return -x
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return -grad
        >>> Neg.apply(rg.tensor(1.0, requires_grad=True))
        tensor(-1., grad_fn=<NegBackward>)
        """
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
    """Mark a Function's ``backward`` as not itself differentiable.

    The decorated backward runs under no_grad (so it may use NumPy freely),
    and differentiating its results (a double backward through it) raises
    a RuntimeError instead of silently giving wrong gradients
    (``torch.autograd.function.once_differentiable``).

    Parameters
    ----------
    fn : callable
        The ``backward`` static method.

    Returns
    -------
    callable
        The wrapped backward.

    Examples
    --------
    >>> import numpy as np
    >>> import retrograd as rg
    >>> from retrograd.autograd import once_differentiable
    >>> class Sin(rg.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x.sin()
    ...
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return grad * rg.tensor(np.cos(np.asarray(x)))
    >>> x = rg.tensor(0.0, requires_grad=True)
    >>> (g,) = rg.autograd.grad(Sin.apply(x) ** 2, x, create_graph=True)
    >>> g.requires_grad                # the gradient reaching Sin required grad
    True
    >>> g.backward()                     # (grad(g, x) says x is unused: the Error node reaches no input)
    Traceback (most recent call last):
      ...
    RuntimeError: trying to differentiate twice a function that was marked with @once_differentiable
    (raised while running Error during backward)
    """

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

    # the mark a tracer reads (rg.compile leaves such a backward to eager)
    setattr(wrapper, _ext.ONCE_DIFFERENTIABLE, True)
    return wrapper
