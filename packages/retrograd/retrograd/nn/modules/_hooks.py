"""Module backward hooks, built on autograd nodes (torch's BackwardHook)."""

__all__: list[str] = []
