"""MaxPool2d, AvgPool2d and AdaptiveAvgPool2d."""

__all__: list[str] = []
