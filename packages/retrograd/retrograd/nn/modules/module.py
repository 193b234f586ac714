"""rg.nn.Module: the base class of every layer and model."""

__all__: list[str] = []
