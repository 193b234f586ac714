"""A live progress line for the demo (tqdm when installed)."""

__all__: list[str] = []
