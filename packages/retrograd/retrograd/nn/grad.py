"""Gradients of the convolutions with respect to their input and weight (torch.nn.grad)."""
from __future__ import annotations

__all__: list[str] = []
