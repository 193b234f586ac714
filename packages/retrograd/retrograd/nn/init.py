"""rg.nn.init: in-place initialisation of parameters, with torch's distributions."""

__all__: list[str] = []
