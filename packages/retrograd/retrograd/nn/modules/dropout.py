"""Dropout."""

__all__: list[str] = []
