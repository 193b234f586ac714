"""swap_in_optimizer_params_and_state: an optimizer temporarily running on other parameters and state."""
from __future__ import annotations

__all__: list[str] = []
