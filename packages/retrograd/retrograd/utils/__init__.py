"""retrograd.utils (``torch.utils``): activation checkpointing."""
from retrograd.utils import checkpoint  # noqa: F401

__all__ = ["checkpoint"]
