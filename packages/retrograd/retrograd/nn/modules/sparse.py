"""Embedding."""

__all__: list[str] = []
