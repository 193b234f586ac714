"""RMSprop."""

__all__: list[str] = []
