"""rg.optim: optimizers and learning-rate schedules, as torch.optim.

Updates run in place on the parameters' arrays, outside the graph. For the
optimizer step inside backward (through
``Tensor.register_post_accumulate_grad_hook``), see the last example of
:class:`Optimizer`.
"""
from retrograd.optim import optimizer, sgd, adam, adamw, rmsprop, adagrad
from retrograd.optim.optimizer import *  # noqa: F401,F403
from retrograd.optim.sgd import *  # noqa: F401,F403
from retrograd.optim.adam import *  # noqa: F401,F403
from retrograd.optim.adamw import *  # noqa: F401,F403
from retrograd.optim.rmsprop import *  # noqa: F401,F403
from retrograd.optim.adagrad import *  # noqa: F401,F403
from retrograd.optim import lr_scheduler  # noqa: F401

__all__ = ["lr_scheduler"]
__all__ += optimizer.__all__
__all__ += sgd.__all__
__all__ += adam.__all__
__all__ += adamw.__all__
__all__ += rmsprop.__all__
__all__ += adagrad.__all__
