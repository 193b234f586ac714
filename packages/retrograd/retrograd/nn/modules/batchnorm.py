"""BatchNorm1d and BatchNorm2d."""

__all__: list[str] = []
