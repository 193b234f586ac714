"""rg.nn.Parameter: a tensor that a Module registers as one of its parameters."""

__all__: list[str] = []
