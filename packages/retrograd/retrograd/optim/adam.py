"""Adam."""

__all__: list[str] = []
