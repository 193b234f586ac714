"""retrograd.autograd.graph: the graph's node type (``torch.autograd.graph``)."""
import abc

import retrograd.core as _core
from retrograd.core import Edge, RemovableHandle  # noqa: F401


class Node(abc.ABC):
    """The abstract type of autograd graph nodes (``torch.autograd.graph.Node``).

    As in torch it is a *virtual* base class: every node of retrograd's graph
    (the generated ``<Op>Backward0`` classes, ``AccumulateGrad``, a custom
    Function's ``<Name>Backward``, which is also its ``ctx``) is an instance,
    and every node class a subclass, through ``__subclasshook__``, without
    Node appearing in their MRO. The nodes themselves are instances of the
    compiled ``retrograd.core.abi.Node``."""

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name, e.g. ``MulBackward0``."""

    @property
    @abc.abstractmethod
    def next_functions(self):
        """``((node or None, input_nr), ...)``: where this node's gradients flow."""

    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict for users' own annotations of this node."""

    @abc.abstractmethod
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the node runs."""

    @abc.abstractmethod
    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before the node runs."""

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
