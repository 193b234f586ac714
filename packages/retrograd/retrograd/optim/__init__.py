"""rg.optim: optimizers and learning-rate schedules, as torch.optim.

Updates run in place on the parameters' arrays, outside the graph.
"""
from retrograd.optim.optimizer import *  # noqa: F401,F403
from retrograd.optim.sgd import *  # noqa: F401,F403
from retrograd.optim.adam import *  # noqa: F401,F403
from retrograd.optim.adamw import *  # noqa: F401,F403
from retrograd.optim.rmsprop import *  # noqa: F401,F403
from retrograd.optim.adagrad import *  # noqa: F401,F403
from retrograd.optim import lr_scheduler  # noqa: F401
from retrograd.optim import (optimizer as _o, sgd as _s, adam as _a, adamw as _aw, rmsprop as _r,
                             adagrad as _ag)

__all__ = [name for mod in (_o, _s, _a, _aw, _r, _ag) for name in mod.__all__] + ["lr_scheduler"]
del _o, _s, _a, _aw, _r, _ag
