"""rg.nn.utils: gradient clipping, and parameters as one flat vector."""
from retrograd.nn.utils import clip_grad, convert_parameters
from retrograd.nn.utils import rnn, parametrize, parametrizations, weight_norm as _weight_norm_mod, spectral_norm as _spectral_norm_mod  # noqa: F401
from retrograd.nn.utils.clip_grad import *  # noqa: F401,F403
from retrograd.nn.utils.convert_parameters import *  # noqa: F401,F403

__all__: list[str] = []
__all__ += clip_grad.__all__
__all__ += convert_parameters.__all__
