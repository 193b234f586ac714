"""retrograd.autograd.graph: the graph's node type (``torch.autograd.graph``)."""
from retrograd.core.abi import Node, Edge, RemovableHandle  # noqa: F401

from retrograd.autograd._saved_hooks import (  # noqa: F401
    saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks, increment_version)
from retrograd.autograd._saved_report import (  # noqa: F401
    saved_tensors_report, SavedTensorsReport, SavedTensorRow)

__all__ = ["Node", "Edge", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "increment_version", "saved_tensors_report"]

# --- gradient edges, multi-grad hooks, final callbacks (issue 4) -------------
from retrograd.autograd._graph_api import (  # noqa: E402,F401
    GradientEdge, get_gradient_edge, queue_callback, register_multi_grad_hook,
)

__all__ += ["GradientEdge", "get_gradient_edge", "register_multi_grad_hook", "queue_callback"]
