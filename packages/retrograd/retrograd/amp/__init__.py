"""rg.amp: torch.amp's mixed-precision API.

retrograd runs every op in the dtype of its inputs (NumPy's rules): it has
no per-op casting table. So :class:`autocast` is a no-op where it changes
nothing in torch either (disabled, or float32/float64), and refuses a
float16/bfloat16 region clearly rather than silently computing in float32;
cast the model and data yourself (``model.to(rg.float16)``). The
:class:`GradScaler` is torch's: it scales the loss, unscales the gradients,
skips steps with inf/nan gradients and adapts the scale.
"""
from retrograd.amp.autocast_mode import autocast, is_autocast_available
from retrograd.amp.grad_scaler import GradScaler

__all__ = ["autocast", "is_autocast_available", "GradScaler"]
