"""retrograd.utils (``torch.utils``): activation checkpointing, data loading and DLPack."""
from retrograd.utils import checkpoint, data, dlpack  # noqa: F401

__all__ = ["checkpoint", "data", "dlpack"]
