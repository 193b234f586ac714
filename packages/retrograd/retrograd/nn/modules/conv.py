"""Conv1d and Conv2d."""

__all__: list[str] = []
