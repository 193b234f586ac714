"""retrograd.utils (``torch.utils``): activation checkpointing and data loading."""
from retrograd.utils import checkpoint, data  # noqa: F401

__all__ = ["checkpoint", "data"]
