"""rg.distributed.nn: collectives that autograd differentiates (torch.distributed.nn).

``functional``'s collectives are core's custom Functions
(``retrograd.core.extending.CustomFunction``): no umbrella needed.
"""
from retrograd.distributed.nn import functional  # noqa: F401

__all__ = ["functional"]
