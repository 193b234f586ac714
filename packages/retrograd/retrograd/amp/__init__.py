"""rg.amp: torch.amp's mixed-precision API.

:class:`autocast` casts the inputs of the ops in torch's autocast lists
(matrix products and convolutions to float16 or bfloat16, range-sensitive
ops to float32), as torch does on the CPU and on CUDA; bfloat16 needs the
ml_dtypes package. :func:`custom_fwd`/:func:`custom_bwd` adapt custom
Functions to it. The :class:`GradScaler` is torch's: it scales the loss,
unscales the gradients, skips steps with inf/nan gradients and adapts the
scale.
"""
from retrograd.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from retrograd.amp.grad_scaler import GradScaler

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "GradScaler"]
