"""The layer classes of rg.nn (torch.nn's modules). Each topic file lists
its public classes in ``__all__``; this package re-exports them all."""
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
from retrograd.nn.modules import (module as _m, container as _c, linear as _l, conv as _cv, pooling as _p,
                                  flatten as _f, dropout as _d, normalization as _n, batchnorm as _b,
                                  sparse as _s, activation as _a, loss as _lo)

__all__ = [name for mod in (_m, _c, _l, _cv, _p, _f, _d, _n, _b, _s, _a, _lo) for name in mod.__all__]
del _m, _c, _l, _cv, _p, _f, _d, _n, _b, _s, _a, _lo
