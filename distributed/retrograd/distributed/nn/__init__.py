"""rg.distributed.nn: collectives that autograd differentiates (torch.distributed.nn).

``functional`` needs the umbrella ``retrograd`` (its ``rg.autograd.Function``),
imported when the module is: ``import retrograd.distributed`` alone does not.
"""
from retrograd.distributed.nn import functional  # noqa: F401

__all__ = ["functional"]
