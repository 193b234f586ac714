"""rg.nn: neural-network building blocks, as torch.nn.

- :class:`Module` and :class:`Parameter`, the layers, containers,
  activations and losses (``rg.nn.Linear``, ``rg.nn.Sequential``, ...);
- ``rg.nn.functional``: the same operations as functions;
- ``rg.nn.init``: initialisation of parameters in place;
- ``rg.nn.utils``: gradient clipping and parameter/vector conversion;
- ``rg.nn.parallel``: DistributedDataParallel (with ``retrograd-distributed``)
  and the comm ops between devices.
"""
# Each topic file's names are star-imported from that file itself (not through
# the nn.modules package) and added with `__all__ += <file>.__all__`: the form
# mypy follows, so `rg.nn.Linear` is typed for users.
from retrograd.nn import parameter, modules  # noqa: F401
from retrograd.nn.modules import (module, container, linear, conv, pooling, flatten, dropout, normalization, batchnorm, sparse, activation, loss,
                                activation_more, rnn, attention, transformer, upsampling, pixelshuffle, padding, instancenorm, distance, loss_more, fold, lazy, adaptive, channelshuffle)
from retrograd.nn.parameter import *  # noqa: F401,F403
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
from retrograd.nn import functional, grad, init, utils  # noqa: F401
from retrograd.nn import parallel  # noqa: F401,E402
from retrograd.nn.parallel import DataParallel  # noqa: E402,F401

__all__ = ["functional", "grad", "init", "utils", "parallel", "DataParallel"]
__all__ += parameter.__all__
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

import typing as _typing  # noqa: E402
if not _typing.TYPE_CHECKING:   # (a type checker would accept every name)
    from retrograd._missing import module_getattr as _module_getattr
    __getattr__ = _module_getattr("torch.nn", __name__)   # torch names retrograd lacks say why
