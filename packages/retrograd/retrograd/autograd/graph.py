"""retrograd.autograd.graph: the graph's node type (``torch.autograd.graph``)."""
import abc

import retrograd.core as _core
from retrograd.core import Edge, RemovableHandle  # noqa: F401


class Node(abc.ABC):
    """The abstract type of autograd graph nodes (``torch.autograd.graph.Node``).

    Every tensor computed from tensors that require grad has a ``grad_fn``:
    the node that will compute the gradients of the op's inputs in backward.
    Nodes link to the nodes of their inputs through ``next_functions``; a
    leaf's gradient is accumulated by an ``AccumulateGrad`` node.

    As in torch, Node is a *virtual* base class: every node of retrograd's
    graph (the generated ``<Op>Backward0`` classes, ``AccumulateGrad``, a
    custom Function's ``<Name>Backward``, which is also its ``ctx``) is an
    instance, and every node class a subclass, through ``__subclasshook__``,
    without Node appearing in their MRO. The nodes themselves are instances
    of the compiled ``retrograd.core.abi.Node``; Node is not meant to be
    subclassed or instantiated by users.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.autograd.graph import Node
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> isinstance(y.grad_fn, Node)
    True
    >>> y.grad_fn.name()
    'SumBackward0'
    >>> [(fn.name(), nr) for fn, nr in y.grad_fn.next_functions]
    [('MulBackward0', 0)]
    """

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name, e.g. ``MulBackward0``.

        Generated op nodes are named ``<Op>Backward<k>``, a leaf's node
        ``AccumulateGrad`` and a custom Function's node ``<Name>Backward``,
        as in torch.

        Returns
        -------
        str
            The name of the node's class.

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * 3).grad_fn.name()
        'MulBackward0'
        >>> (x * 3).grad_fn.next_functions[0][0].name()
        'AccumulateGrad'
        """

    @property
    @abc.abstractmethod
    def next_functions(self):
        """``((node or None, input_nr), ...)``: where this node's gradients flow."""

    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict for users' own annotations of this node.

        Autograd never reads or writes it: it is empty until you put
        something in it, and lives as long as the node. On real nodes it is
        an attribute (``grad_fn.metadata``), as in torch.

        Returns
        -------
        dict
            The node's metadata dict (the same object on every access).

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x.exp()
        >>> y.grad_fn.metadata
        {}
        >>> y.grad_fn.metadata["step"] = 3
        >>> y.grad_fn.metadata
        {'step': 3}
        """

    @abc.abstractmethod
    def register_hook(self, fn):
        """Register ``fn(grad_inputs, grad_outputs)`` to run after the node runs.

        ``grad_inputs`` are the gradients the node computed for its inputs
        (what flows on along ``next_functions``), ``grad_outputs`` those it
        received. ``fn`` may return a tuple of tensors to use in place of
        ``grad_inputs``, or None to keep them.

        Parameters
        ----------
        fn : callable
            ``fn(grad_inputs, grad_outputs) -> tuple of Tensor or None``.

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` removes the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> y = (x * 3).sum()
        >>> mul = y.grad_fn.next_functions[0][0]
        >>> handle = mul.register_hook(lambda gin, gout: print(mul.name(), gin, gout))
        >>> y.backward()
        MulBackward0 (tensor([3., 3.]), None) (tensor([1., 1.]),)
        >>> handle.remove()
        """

    @abc.abstractmethod
    def register_prehook(self, fn):
        """Register ``fn(grad_outputs)`` to run before the node runs.

        ``fn`` may return a tuple of tensors to use in place of
        ``grad_outputs`` (what the node then computes with), or None to keep
        them.

        Parameters
        ----------
        fn : callable
            ``fn(grad_outputs) -> tuple of Tensor or None``.

        Returns
        -------
        RemovableHandle
            ``handle.remove()`` removes the hook.

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> y = (x * 3).sum()
        >>> mul = y.grad_fn.next_functions[0][0]
        >>> handle = mul.register_prehook(lambda gout: (gout[0] * 10,))
        >>> y.backward()
        >>> x.grad
        tensor([30., 30.])
        """

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node and isinstance(subclass, type) and issubclass(subclass, _core.Node):
            return True
        return NotImplemented


from retrograd.autograd._saved_hooks import (  # noqa: E402,F401
    saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks, increment_version)
from retrograd.autograd._saved_report import (  # noqa: E402,F401
    saved_tensors_report, SavedTensorsReport, SavedTensorRow)

__all__ = ["Node", "Edge", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "increment_version", "saved_tensors_report"]

# --- gradient edges, multi-grad hooks, final callbacks -----------------------
from retrograd.autograd._graph_api import (  # noqa: E402,F401
    GradientEdge, get_gradient_edge, queue_callback, register_multi_grad_hook,
)

__all__ += ["GradientEdge", "get_gradient_edge", "register_multi_grad_hook", "queue_callback"]

# --- a picture of the graph ---------------------------------------------------
from retrograd.autograd._to_dot import to_dot, DotSource  # noqa: E402,F401

__all__ += ["to_dot", "DotSource"]
