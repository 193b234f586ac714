"""Identity, Linear and Bilinear."""

__all__: list[str] = []
