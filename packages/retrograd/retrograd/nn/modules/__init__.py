"""The layer classes of rg.nn (torch.nn's modules). Each topic file lists
its public classes in ``__all__``; this package re-exports them all (in the
``__all__ += module.__all__`` form that type checkers follow)."""
from retrograd.nn.modules import module
from retrograd.nn.modules import container
from retrograd.nn.modules import linear
from retrograd.nn.modules import conv
from retrograd.nn.modules import pooling
from retrograd.nn.modules import flatten
from retrograd.nn.modules import dropout
from retrograd.nn.modules import normalization
from retrograd.nn.modules import batchnorm
from retrograd.nn.modules import sparse
from retrograd.nn.modules import activation
from retrograd.nn.modules import loss
from retrograd.nn.modules import activation_more
from retrograd.nn.modules import rnn
from retrograd.nn.modules import attention
from retrograd.nn.modules import transformer
from retrograd.nn.modules import upsampling
from retrograd.nn.modules import pixelshuffle
from retrograd.nn.modules import padding
from retrograd.nn.modules import instancenorm
from retrograd.nn.modules import distance
from retrograd.nn.modules import loss_more
from retrograd.nn.modules import fold
from retrograd.nn.modules import lazy
from retrograd.nn.modules import adaptive
from retrograd.nn.modules import channelshuffle
from retrograd.nn.modules.module import *  # noqa: F401,F403
from retrograd.nn.modules.container import *  # noqa: F401,F403
from retrograd.nn.modules.linear import *  # noqa: F401,F403
from retrograd.nn.modules.conv import *  # noqa: F401,F403
from retrograd.nn.modules.pooling import *  # noqa: F401,F403
from retrograd.nn.modules.flatten import *  # noqa: F401,F403
from retrograd.nn.modules.dropout import *  # noqa: F401,F403
from retrograd.nn.modules.normalization import *  # noqa: F401,F403
from retrograd.nn.modules.batchnorm import *  # noqa: F401,F403
from retrograd.nn.modules.sparse import *  # noqa: F401,F403
from retrograd.nn.modules.activation import *  # noqa: F401,F403
from retrograd.nn.modules.loss import *  # noqa: F401,F403
from retrograd.nn.modules.activation_more import *  # noqa: F401,F403
from retrograd.nn.modules.rnn import *  # noqa: F401,F403
from retrograd.nn.modules.attention import *  # noqa: F401,F403
from retrograd.nn.modules.transformer import *  # noqa: F401,F403
from retrograd.nn.modules.upsampling import *  # noqa: F401,F403
from retrograd.nn.modules.pixelshuffle import *  # noqa: F401,F403
from retrograd.nn.modules.padding import *  # noqa: F401,F403
from retrograd.nn.modules.instancenorm import *  # noqa: F401,F403
from retrograd.nn.modules.distance import *  # noqa: F401,F403
from retrograd.nn.modules.loss_more import *  # noqa: F401,F403
from retrograd.nn.modules.fold import *  # noqa: F401,F403
from retrograd.nn.modules.lazy import *  # noqa: F401,F403
from retrograd.nn.modules.adaptive import *  # noqa: F401,F403
from retrograd.nn.modules.channelshuffle import *  # noqa: F401,F403

__all__: list[str] = []
__all__ += module.__all__
__all__ += container.__all__
__all__ += linear.__all__
__all__ += conv.__all__
__all__ += pooling.__all__
__all__ += flatten.__all__
__all__ += dropout.__all__
__all__ += normalization.__all__
__all__ += batchnorm.__all__
__all__ += sparse.__all__
__all__ += activation.__all__
__all__ += loss.__all__
__all__ += activation_more.__all__
__all__ += rnn.__all__
__all__ += attention.__all__
__all__ += transformer.__all__
__all__ += upsampling.__all__
__all__ += pixelshuffle.__all__
__all__ += padding.__all__
__all__ += instancenorm.__all__
__all__ += distance.__all__
__all__ += loss_more.__all__
__all__ += fold.__all__
__all__ += lazy.__all__
__all__ += adaptive.__all__
__all__ += channelshuffle.__all__
