"""rg.linalg: torch.linalg's inv, solve, det, slogdet, norm, vector_norm,
matrix_norm and cholesky (implemented in retrograd.core.linalg)."""
from retrograd.core.linalg import *  # noqa: F401,F403
from retrograd.core.linalg import __all__  # noqa: F401
