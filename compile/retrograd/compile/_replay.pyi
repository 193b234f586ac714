# Type stub of _replay.pyx (the numpy backend's replayed runs).
from collections.abc import Sequence
from typing import Any

import numpy as np

class Chunk:
    def __init__(self, ops: list[Any], inputs: list[Any], ndims: list[int], outputs: list[int]) -> None: ...
    def __call__(self, *args: np.ndarray) -> None: ...

def chunk_function(ops: Sequence[Any], inputs: Sequence[Any], ndims: Sequence[int],
                   outputs: Sequence[int]) -> Chunk: ...
