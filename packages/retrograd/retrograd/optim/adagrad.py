"""Adagrad."""

__all__: list[str] = []
