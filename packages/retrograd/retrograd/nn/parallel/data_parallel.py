"""DataParallel: one module replicated over the devices of one process."""
from __future__ import annotations

__all__: list[str] = []
