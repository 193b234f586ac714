"""rg.nn: neural-network building blocks. So far the functional interface,
``rg.nn.functional`` (torch.nn.functional's signatures and semantics)."""
from retrograd.nn import functional  # noqa: F401

__all__ = ["functional"]
