"""retrograd.autograd.graph: the graph's node type (``torch.autograd.graph``)."""
from retrograd.core.abi import Node, Edge, RemovableHandle  # noqa: F401

from retrograd.autograd._saved_hooks import (  # noqa: F401
    saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks, increment_version)
from retrograd.autograd._saved_report import (  # noqa: F401
    saved_tensors_report, SavedTensorsReport, SavedTensorRow)

__all__ = ["Node", "Edge", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "increment_version", "saved_tensors_report"]
