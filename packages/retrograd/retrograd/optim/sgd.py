"""SGD."""

__all__: list[str] = []
