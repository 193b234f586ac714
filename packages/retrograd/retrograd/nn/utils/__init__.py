"""rg.nn.utils: gradient clipping, and parameters as one flat vector."""
from retrograd.nn.utils.clip_grad import *  # noqa: F401,F403
from retrograd.nn.utils.convert_parameters import *  # noqa: F401,F403
from retrograd.nn.utils import clip_grad as _clip_grad, convert_parameters as _convert

__all__ = [*_clip_grad.__all__, *_convert.__all__]
del _clip_grad, _convert
