"""rg.nn.parallel: data parallelism and the device comm ops (torch.nn.parallel).

:class:`DataParallel` (and its pieces ``replicate``, ``scatter``,
``parallel_apply``, ``gather``, ``data_parallel``) splits each batch over the
devices of one process: CUDA devices, or virtual CPU devices
(``rg.set_virtual_cpu_devices``). ``DistributedDataParallel`` needs the
``retrograd-distributed`` distribution (``pip install
'retrograd[distributed]'``), imported when a model is wrapped; ``comm``
needs only retrograd itself.
"""
from retrograd.nn.parallel import comm  # noqa: F401
from retrograd.nn.parallel.data_parallel import (DataParallel, data_parallel, gather, parallel_apply, replicate,
                                                 scatter)
from retrograd.nn.parallel.distributed import DistributedDataParallel

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel", "comm"]
