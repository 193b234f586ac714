"""retrograd.autograd.graph: the graph's node type (``torch.autograd.graph``)."""
from retrograd.core.abi import Node, Edge, RemovableHandle  # noqa: F401

__all__ = ["Node", "Edge", "RemovableHandle"]
