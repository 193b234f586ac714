"""linear_cross_entropy: a linear layer and cross-entropy in one, chunked over the batch."""
from __future__ import annotations

__all__: list[str] = []
