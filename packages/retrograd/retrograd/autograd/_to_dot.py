"""rg.autograd.graph.to_dot: a Graphviz picture of the backward graph."""

__all__: list[str] = []
