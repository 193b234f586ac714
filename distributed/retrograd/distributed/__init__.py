"""retrograd-distributed: process groups and collectives, as torch.distributed.

``import retrograd as rg; rg.distributed.init_process_group("mpi")`` under
an MPI launcher (``mpiexec -n 2 python train.py``, or
``python -m retrograd.distributed.run --nproc 2 train.py``), then the
collectives (``all_reduce``, ``broadcast``, ...) and
``rg.nn.parallel.DistributedDataParallel``. mpi4py is imported only by
``init_process_group``: importing this package starts no MPI.
"""
from retrograd.distributed._errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from retrograd.distributed._reduce_op import ReduceOp
from retrograd.distributed._work import Work
from retrograd.distributed._group import (
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    new_group,
)
from retrograd.distributed._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    irecv,
    isend,
    recv,
    reduce_scatter_tensor,
    send,
)
from retrograd.distributed._version import __version__  # noqa: F401

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "is_available",
           "is_mpi_available", "is_nccl_available", "new_group", "get_rank", "get_world_size",
           "get_backend", "get_process_group_ranks", "group", "GroupMember", "ProcessGroup", "Work",
           "ReduceOp", "DistError", "DistBackendError", "DistNetworkError", "DistStoreError",
           "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor",
           "barrier", "send", "recv", "isend", "irecv"]
