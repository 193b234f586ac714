"""rg.nn.parallel: DistributedDataParallel and the device comm ops (torch.nn.parallel).

``DistributedDataParallel`` needs the ``retrograd-distributed``
distribution (``pip install 'retrograd[distributed]'``), imported when a
model is wrapped; ``comm`` needs only retrograd itself.
"""
from retrograd.nn.parallel import comm  # noqa: F401
from retrograd.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel", "comm"]
