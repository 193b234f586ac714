"""The demo's data set, rendered procedurally (nothing is downloaded)."""

__all__: list[str] = []
