"""What the ``retrograd`` package (and any other extension of core) builds on.

The compiled classes and the ops are in :mod:`retrograd.core` itself; these
are the lower-level entry points that ``rg.autograd`` (custom Functions,
saved-tensor hooks, the graph API), ``rg.nn`` and ``rg.utils`` need. They
are public and keep their meaning within a core ABI major; other
distributions use nothing else of core's Python side (the seam test,
tests/abi/test_seam.py, checks it). Each entry below says what it takes and
returns.

Example::

    from retrograd.core import extending
    import numpy as np

    t = extending.wrap(np.ones(3), requires_grad=True)   # a leaf, no copy
    y = (t * 2).sum()
    edge = extending.gradient_edge(y)                   # (SumBackward0, 0)
"""
from __future__ import annotations

from retrograd.core import abi as _abi
from retrograd.core import _kernels_nn

__all__ = [
    "FunctionBase", "function_apply", "register_function_defaults", "delayed_error",
    "push_saved_tensors_hooks", "pop_saved_tensors_hooks", "saved_tensors_hooks_disabled_message",
    "disable_saved_tensors_hooks", "enable_saved_tensors_hooks", "increment_version",
    "gradient_edge", "grad_accumulator", "wrap", "check_tensor_arg", "composite_op", "max_pool2d_indices",
    "conv2d", "conv2d_bias", "conv2d_input_grad", "register_missing_attribute_hook",
    "CustomFunction", "ONCE_DIFFERENTIABLE", "register_module_type", "module_types",
]

# -- custom autograd Functions (rg.autograd.Function) -------------------------------
#: The compiled node base class of a custom Function's backward node
#: (``BackwardCFunction`` subclasses it, with the user's ``ctx`` methods).
FunctionBase = _abi._FunctionBase
#: ``function_apply(cls, args, kwargs)``: run ``cls.forward`` and record the node.
function_apply = _abi._function_apply
#: ``register_function_defaults(setup_context)``: the default ``setup_context``,
#: which tells a Function that overrides it from one that does not.
register_function_defaults = _abi._register_function_defaults
#: ``delayed_error(message, outputs)``: outputs whose backward raises
#: RuntimeError(message) (once_differentiable under create_graph).
delayed_error = _abi._delayed_error
#: The attribute that ``once_differentiable`` sets (to True) on the backward
#: it returns: a tracer that inlines custom Functions reads it to leave such
#: a backward to eager (its results must raise when differentiated).
ONCE_DIFFERENTIABLE = "once_differentiable"


class _CustomFunctionMeta(type):
    # Each class gets its node class, `<Name>Backward` (what grad_fn.name()
    # says), which is also the ctx its setup_context and backward receive.
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (_CustomFunctionNode,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})


class _CustomFunctionNode(FunctionBase):
    # the ctx methods a CustomFunction's setup_context uses
    def _get_user_fn(self):
        return self._forward_cls.backward

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors


class CustomFunction(metaclass=_CustomFunctionMeta):
    """A custom autograd Function for distributions below the umbrella.

    The same node as ``rg.autograd.Function`` records (``function_apply``),
    in its ``setup_context`` style only: ``forward(*args)`` computes the
    outputs under no_grad, ``setup_context(ctx, inputs, output)`` prepares
    ``ctx`` (``ctx.save_for_backward``, ``ctx.mark_non_differentiable``,
    attributes), ``backward(ctx, *grads)`` returns one gradient (or None)
    per argument. retrograd-compile's ``CompiledFunction`` and
    retrograd-distributed's differentiable collectives are built on it, so
    that neither needs the umbrella; users subclass ``rg.autograd.Function``.

    Examples
    --------
    >>> from retrograd.core import extending, tensor
    >>> class Double(extending.CustomFunction):
    ...     @staticmethod
    ...     def forward(x):
    ...         return x * 2
    ...
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> x = tensor([1.0, 2.0], requires_grad=True)
    >>> y = Double.apply(x)
    >>> y.grad_fn.name()
    'DoubleBackward'
    >>> y.sum().backward()
    >>> x.grad
    tensor([2., 2.])
    """

    @staticmethod
    def forward(*args):
        """Compute the outputs from the arguments of ``apply`` (override it)."""
        raise NotImplementedError("a CustomFunction defines forward(*args)")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Prepare ``ctx`` from ``inputs`` (apply's arguments) and ``output``."""
        return None

    @staticmethod
    def backward(ctx, *grads):
        """One gradient (or None) per argument, given one per output (override it)."""
        raise NotImplementedError("a CustomFunction defines backward(ctx, *grads)")

    @staticmethod
    def jvp(ctx, *tangents):
        """Forward-mode AD: none unless overridden."""
        raise NotImplementedError(
            "this CustomFunction has no jvp: forward-mode AD cannot go through it")

    @classmethod
    def apply(cls, *args):
        """Run ``forward`` on ``args`` and record one node for the call."""
        return function_apply(cls, args, {})


# -- saved-tensor hooks (rg.autograd.graph.saved_tensors_hooks) ----------------------
#: ``push_saved_tensors_hooks(pack_hook, unpack_hook)``: enter a pair on this thread.
push_saved_tensors_hooks = _abi._push_saved_tensors_hooks
#: ``pop_saved_tensors_hooks()``: leave the innermost pair.
pop_saved_tensors_hooks = _abi._pop_saved_tensors_hooks
#: ``saved_tensors_hooks_disabled_message()``: the message set by
#: disable_saved_tensors_hooks on this thread, or None when hooks are allowed.
saved_tensors_hooks_disabled_message = _abi._saved_tensors_hooks_get_disabled_error_message
#: ``disable_saved_tensors_hooks(message)``: entering hooks raises RuntimeError(message).
disable_saved_tensors_hooks = _abi._saved_tensors_hooks_disable
#: ``enable_saved_tensors_hooks()``: undo disable_saved_tensors_hooks.
enable_saved_tensors_hooks = _abi._saved_tensors_hooks_enable
#: ``increment_version(tensors)``: bump the version counters as an in-place op would.
increment_version = _abi._increment_version

# -- the graph (rg.autograd.graph) ----------------------------------------------------
#: ``gradient_edge(t)``: the Edge a gradient for ``t`` flows into, or None.
gradient_edge = _abi._gradient_edge
#: ``grad_accumulator(t)``: the AccumulateGrad node of leaf ``t``.
grad_accumulator = _abi._grad_accumulator

# -- tensors and ops ------------------------------------------------------------------
#: ``wrap(array, device=None, requires_grad=False)``: a new leaf Tensor around a
#: NumPy or CuPy array, without a copy.
wrap = _abi._wrap
#: ``check_tensor_arg(x, where, is_input=True)``: raise TypeError naming
#: ``where`` ("mse_loss(): argument 'target'") where torch's argument parser
#: refuses ``x`` for a Tensor parameter: a list, tuple, None, string or
#: torch tensor, and for an input (the op's first Tensor) a number. Tensors
#: and NumPy or CuPy arrays pass.
check_tensor_arg = _abi._check_tensor_arg
#: ``@composite_op(name)``: a Python function made of ops, named ``aten::<name>``
#: in profiles.
composite_op = _abi.composite_op
#: ``register_missing_attribute_hook(hook)``: ``hook(name)`` runs when a Tensor
#: attribute lookup fails (never on a hit): it raises AttributeError explaining
#: a name retrograd deliberately lacks, or returns. ``None`` clears it. The
#: umbrella registers its table of omissions (docs: omissions page).
register_missing_attribute_hook = _abi._register_missing_attribute_hook
#: ``max_pool2d_indices(x, kernel_size, stride, padding, dilation, ceil_mode)``:
#: the flat indices max_pool2d picks (return_indices=True), as an int64 array.
max_pool2d_indices = _kernels_nn._max_pool2d_indices
#: ``conv2d(input, weight, stride, padding, dilation, groups)``: the table's
#: 2-D convolution (NCHW, stride/padding/dilation as pairs), what
#: ``rg.nn.functional.conv2d`` builds on after checking its arguments.
conv2d = _abi._conv2d
#: ``conv2d_bias(input, weight, bias, stride, padding, dilation, groups)``: the
#: same with a bias of the input's dtype added in the kernel.
conv2d_bias = _abi._conv2d_bias
#: ``conv2d_input_grad(grad_out, weight, input_shape, stride, padding, dilation,
#: groups)``: conv2d's input gradient as an op of the table, which is the
#: transposed 2-D convolution (its double backward goes through the table);
#: what ``rg.nn.functional.conv_transpose2d`` builds on.
conv2d_input_grad = _abi._conv2d_input_grad


# -- module systems (the umbrella's nn.Module) -------------------------------------
# Code below the umbrella that must recognise its modules (rg.compile guards a
# compiled function's module state) reads them here; the umbrella registers
# nn.Module at its import, so nothing below it imports it (docs/design.md,
# "Layers").
_MODULE_TYPES: tuple = ()
_STATE_DICTS: tuple = ()


def register_module_type(cls: type, state_dicts: tuple = ()) -> None:
    """Register a module class whose instances hold parameters, buffers and children.

    The umbrella registers ``retrograd.nn.Module`` when it is imported;
    another module system registers its own the same way. Compiled
    functions (retrograd.compile) guard the state of such modules: they
    retrace when a module's plain attributes change (``eval()``), or when
    an entry of one of its ``state_dicts`` is replaced. ``cls`` instances
    must have a ``modules()`` method that yields the module and its
    submodules.

    Parameters
    ----------
    cls : type
        The module class (its subclasses are covered too).
    state_dicts : tuple of str, optional
        Names of the instance attributes (dicts) whose entries are guarded
        by identity.

    Raises
    ------
    TypeError
        If ``cls`` is not a class.

    Examples
    --------
    >>> from retrograd.core import extending
    >>> class Block:
    ...     def __init__(self):
    ...         self._params = {}
    ...
    ...     def modules(self):
    ...         yield self
    >>> extending.register_module_type(Block, ("_params",))
    >>> Block in extending.module_types()[0]
    True
    """
    global _MODULE_TYPES, _STATE_DICTS
    if not isinstance(cls, type):
        raise TypeError(f"register_module_type expects a class, got {type(cls).__name__}")
    if cls not in _MODULE_TYPES:
        _MODULE_TYPES = _MODULE_TYPES + (cls,)
    _STATE_DICTS = _STATE_DICTS + tuple(s for s in state_dicts if s not in _STATE_DICTS)


def module_types() -> tuple:
    """The registered module classes and the names of their state dicts: ``(types, state_dicts)``.

    Returns
    -------
    tuple
        ``(tuple of classes, tuple of str)``.

    Examples
    --------
    >>> from retrograd.core import extending
    >>> types, dicts = extending.module_types()
    >>> isinstance(types, tuple) and isinstance(dicts, tuple)
    True
    """
    return _MODULE_TYPES, _STATE_DICTS
