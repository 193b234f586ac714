"""rg.nn.utils: gradient clipping, parameters as one flat vector,
parametrizations (``parametrize``, ``parametrizations``), the hook-based
weight and spectral normalisation, RNN sequence packing (``rnn``), fusing
batch norm into the layer before it, ``skip_init`` and ``stateless``
(``functional_call``).

As in torch, ``rg.nn.utils.weight_norm`` and ``rg.nn.utils.spectral_norm``
are the functions; their modules are reached with
``from retrograd.nn.utils.weight_norm import WeightNorm``.
"""
from retrograd.nn.utils import clip_grad, convert_parameters
from retrograd.nn.utils import rnn, parametrize, parametrizations  # noqa: F401
from retrograd.nn.utils import fusion, init, stateless  # noqa: F401
from retrograd.nn.utils.fusion import *  # noqa: F401,F403
from retrograd.nn.utils.init import *  # noqa: F401,F403
from retrograd.nn.utils.clip_grad import *  # noqa: F401,F403
from retrograd.nn.utils.convert_parameters import *  # noqa: F401,F403
from retrograd.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from retrograd.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = ["parametrizations", "parametrize", "rnn", "remove_spectral_norm", "remove_weight_norm", "spectral_norm",
           "weight_norm", "stateless"]
__all__ += clip_grad.__all__
__all__ += convert_parameters.__all__
__all__ += fusion.__all__
__all__ += init.__all__
