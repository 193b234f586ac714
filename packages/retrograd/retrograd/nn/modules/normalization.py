"""LayerNorm."""

__all__: list[str] = []
