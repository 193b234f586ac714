"""Placeholder until the breadth work merges."""
from __future__ import annotations

__all__: list[str] = []
