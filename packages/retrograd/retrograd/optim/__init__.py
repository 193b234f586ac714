"""rg.optim: optimizers and learning-rate schedules, as torch.optim.

Updates run in place on the parameters' arrays, outside the graph. For the
optimizer step inside backward (through
``Tensor.register_post_accumulate_grad_hook``), see the last example of
:class:`Optimizer`.
"""
from retrograd.optim import optimizer, sgd, adam, adamw, rmsprop, adagrad
from retrograd.optim import adadelta, adamax, nadam, radam, asgd, rprop, sparse_adam, lbfgs
from retrograd.optim.optimizer import *  # noqa: F401,F403
from retrograd.optim.sgd import *  # noqa: F401,F403
from retrograd.optim.adam import *  # noqa: F401,F403
from retrograd.optim.adamw import *  # noqa: F401,F403
from retrograd.optim.rmsprop import *  # noqa: F401,F403
from retrograd.optim.adagrad import *  # noqa: F401,F403
from retrograd.optim.adadelta import *  # noqa: F401,F403
from retrograd.optim.adamax import *  # noqa: F401,F403
from retrograd.optim.nadam import *  # noqa: F401,F403
from retrograd.optim.radam import *  # noqa: F401,F403
from retrograd.optim.asgd import *  # noqa: F401,F403
from retrograd.optim.rprop import *  # noqa: F401,F403
from retrograd.optim.sparse_adam import *  # noqa: F401,F403
from retrograd.optim.lbfgs import *  # noqa: F401,F403
from retrograd.optim import _adafactor, _muon, _swap
from retrograd.optim._adafactor import *  # noqa: F401,F403
from retrograd.optim._muon import *  # noqa: F401,F403
from retrograd.optim._swap import *  # noqa: F401,F403
from retrograd.optim import lr_scheduler, swa_utils  # noqa: F401

__all__ = ["lr_scheduler", "swa_utils"]
__all__ += optimizer.__all__
__all__ += sgd.__all__
__all__ += adam.__all__
__all__ += adamw.__all__
__all__ += rmsprop.__all__
__all__ += adagrad.__all__
__all__ += adadelta.__all__
__all__ += adamax.__all__
__all__ += nadam.__all__
__all__ += radam.__all__
__all__ += asgd.__all__
__all__ += rprop.__all__
__all__ += sparse_adam.__all__
__all__ += lbfgs.__all__
__all__ += _adafactor.__all__
__all__ += _muon.__all__
__all__ += _swap.__all__

import typing as _typing  # noqa: E402
if not _typing.TYPE_CHECKING:   # (a type checker would accept every name)
    from retrograd._missing import module_getattr as _module_getattr
    __getattr__ = _module_getattr("torch.optim", __name__)   # torch names retrograd lacks say why
