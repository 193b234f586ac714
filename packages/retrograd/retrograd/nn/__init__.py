"""rg.nn: neural-network building blocks, as torch.nn.

- :class:`Module` and :class:`Parameter`, the layers, containers,
  activations and losses (``rg.nn.Linear``, ``rg.nn.Sequential``, ...);
- ``rg.nn.functional``: the same operations as functions;
- ``rg.nn.init``: initialisation of parameters in place;
- ``rg.nn.utils``: gradient clipping and parameter/vector conversion.
"""
from retrograd.nn import parameter, modules
from retrograd.nn.parameter import *  # noqa: F401,F403
from retrograd.nn.modules import *  # noqa: F401,F403
from retrograd.nn import functional, init, utils  # noqa: F401

__all__ = ["functional", "init", "utils"]
__all__ += parameter.__all__
__all__ += modules.__all__
