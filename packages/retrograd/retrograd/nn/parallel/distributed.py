"""DistributedDataParallel (``torch.nn.parallel.DistributedDataParallel``)."""
from __future__ import annotations

import contextlib

import numpy as np

from retrograd.core import extending as _ext
from retrograd.core.grad_mode import is_grad_enabled, no_grad
from retrograd.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]


def _distributed():
    from retrograd import _optional
    return _optional.require("distributed", "retrograd-distributed")


class DistributedDataParallel(Module):
    """Data parallelism across processes: gradients averaged during backward.

    ``torch.nn.parallel.DistributedDataParallel``. Every rank holds a
    replica of ``module`` (rank 0's parameters and buffers are broadcast at
    construction) and runs it on its own part of the batch; backward then
    averages the gradients over the ranks. Gradients are packed into
    buckets in reverse registration order, and each bucket's all-reduce
    starts as soon as its last gradient has been accumulated, while
    backward goes on; all are awaited and written to ``param.grad``
    before ``backward()`` returns. Needs
    :func:`retrograd.distributed.init_process_group` first.

    Parameters
    ----------
    module : Module
        The model; the same architecture on every rank.
    device_ids, output_device, dim : optional
        Accepted for torch's signature; the replica stays where it is.
    broadcast_buffers : bool, optional
        Broadcast rank 0's buffers (batch-norm statistics) at every forward
        (default True).
    process_group : ProcessGroup, optional
        Default: the default group.
    bucket_cap_mb : float, optional
        Bucket size in MiB (default 25; the first bucket is at most 1 MiB).
    find_unused_parameters : bool, optional
        Walk the graph from forward's outputs to find parameters that get
        no gradient in this iteration, and reduce without waiting for them.
    check_reduction : bool, optional
        Ignored (deprecated in torch).
    gradient_as_bucket_view : bool, optional
        Make ``param.grad`` views of the bucket buffers (saves one copy and
        the memory of the gradients).
    static_graph : bool, optional
        Must be False (not supported).

    Raises
    ------
    ValueError
        No default process group; ``static_graph=True``.
    RuntimeError
        A module with no parameter that requires grad; replicas of
        different shapes on different ranks.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> _ = rg.manual_seed(0)
    >>> model = rg.nn.parallel.DistributedDataParallel(rg.nn.Linear(3, 1))
    >>> model(rg.ones(4, 3)).sum().backward()
    >>> model.module.weight.grad.shape
    (1, 3)
    >>> dist.destroy_process_group()
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        dist = _distributed()
        from retrograd.nn.parallel._reducer import Reducer
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps an rg.nn.Module, got {type(module).__name__}")
        if static_graph:
            raise ValueError("DistributedDataParallel: static_graph=True is not supported by retrograd")
        if not dist.is_initialized():
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any "
                               "parameter that requires a gradient.")
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        if not cap > 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        # Every replica starts from rank 0's state (torch's _sync_module_states).
        _broadcast_coalesced(dist, list(module.parameters()) + list(module.buffers()), process_group)
        self.reducer = Reducer(params, process_group, self.bucket_bytes_cap, find_unused_parameters,
                               gradient_as_bucket_view)

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                _broadcast_coalesced(_distributed(), buffers, self.process_group)
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(output)
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Skip the gradient all-reduce for the backwards run inside this block.

        Gradients accumulate locally in ``param.grad``; the first backward
        after the block reduces the accumulated gradients (torch's
        gradient accumulation pattern).

        Yields
        ------
        None

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> model = rg.nn.parallel.DistributedDataParallel(rg.nn.Linear(2, 1))
        >>> with model.no_sync():
        ...     model(rg.ones(1, 2)).sum().backward()
        >>> model(rg.ones(1, 2)).sum().backward()
        >>> model.module.bias.grad
        tensor([2.])
        >>> dist.destroy_process_group()
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        self.reducer.sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
            self.reducer.sync = old

    def __getstate__(self):
        raise TypeError("DistributedDataParallel cannot be pickled: save model.module's state_dict instead")


def _broadcast_coalesced(dist, tensors, group):
    """Broadcast tensors from rank 0, one flat buffer per dtype."""
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(str(t.dtype), []).append(t)
    with no_grad():
        for ts in by_dtype.values():
            arrays = [t.detach().numpy() for t in ts]
            flat = np.concatenate([a.reshape(-1) for a in arrays]) if arrays else None
            dist.broadcast(_ext.wrap(flat), src=dist.get_process_group_ranks(group)[0], group=group)
            offset = 0
            for a in arrays:
                a[...] = flat[offset:offset + a.size].reshape(a.shape)
                offset += a.size
            _ext.increment_version(ts)
