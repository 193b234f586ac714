"""DistributedDataParallel's reducer: gradient buckets and their all-reduces.

What torch's C++ Reducer does, in Python over retrograd.distributed:

- Parameters are bucketed in reverse registration order (backward produces
  the last layers' gradients first), at most ``bucket_cap_mb`` per bucket
  and 1 MB for the first one (torch's ``_DEFAULT_FIRST_BUCKET_BYTES``: the
  first bucket is launched sooner), one dtype per bucket.
- A post-accumulate-grad hook on each parameter copies its gradient into
  its bucket's flat buffer; when the bucket's last gradient is in, the
  bucket's all-reduce starts, asynchronously. Buckets start strictly in
  bucket order, on every rank, so that every rank issues the same
  sequence of collectives (MPI matches collectives by order).
- The hooks also poll the running all-reduces: without a progress thread,
  MPI advances a non-blocking collective only when called.
- The first hook of a backward queues a callback on the engine; at the end
  of backward it waits for every bucket, averages, and writes the
  gradients back, before ``backward()`` returns.
"""
from __future__ import annotations

import time

import numpy as np

from retrograd.core import extending as _ext
from retrograd.core.grad_mode import no_grad

_FIRST_BUCKET_BYTES = 1024 * 1024


def _array(t):
    with no_grad():
        return t.detach().numpy()


class _Bucket:
    def __init__(self, index, params):
        self.index = index
        self.params = params
        sizes = [p.numel() for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
        self.buffer = np.zeros(self.offsets[-1], dtype=_array(params[0]).dtype)
        self.pending = len(params)
        self.work = None

    def slot(self, i):
        p = self.params[i]
        return self.buffer[self.offsets[i]:self.offsets[i + 1]].reshape(tuple(p.shape))


def compute_buckets(params, bucket_cap_bytes):
    """Lists of parameters, in reverse registration order, one dtype each."""
    buckets, open_by_dtype = [], {}
    first_cap = min(_FIRST_BUCKET_BYTES, bucket_cap_bytes)
    for p in reversed(params):
        key = (str(p.dtype), str(p.device))
        nbytes = p.numel() * np.dtype(_array(p).dtype).itemsize
        cur = open_by_dtype.get(key)
        if cur is None:
            cur = open_by_dtype[key] = [[], 0]
            buckets.append(cur)
        cur[0].append(p)
        cur[1] += nbytes
        cap = first_cap if len(buckets) == 1 and buckets[0] is cur else bucket_cap_bytes
        if cur[1] >= cap:
            del open_by_dtype[key]       # full: the next parameter of this dtype opens a new one
    return [b[0] for b in buckets]


class Reducer:
    """The buckets of one DistributedDataParallel and the state of one iteration."""

    def __init__(self, params, process_group, bucket_cap_bytes, find_unused_parameters,
                 gradient_as_bucket_view):
        import retrograd.distributed as dist
        self._dist = dist
        self.group = process_group
        self.world_size = dist.get_world_size(process_group)
        self.params = params
        self.find_unused = find_unused_parameters
        self.as_view = gradient_as_bucket_view
        self.buckets = [_Bucket(i, ps) for i, ps in enumerate(compute_buckets(params, bucket_cap_bytes))]
        self.where = {}
        for b in self.buckets:
            for i, p in enumerate(b.params):
                self.where[id(p)] = (b, i)
        self.index_of = {id(p): k for k, p in enumerate(params)}
        self.handles = [p.register_post_accumulate_grad_hook(self._hook) for p in params]
        self.sync = True          # False inside no_sync()
        self._reset()
        # timestamps of the last iteration (time.perf_counter()): the overlap
        # test and benchmarks/ddp.py read them
        self.first_launch_at = None
        self.last_ready_at = None
        self.finalize_started_at = None
        self.wait_seconds = 0.0

    def _reset(self):
        self.next_bucket = 0
        self.queued = False
        self.ready = set()
        self.unused = set()
        self.expecting = False
        for b in self.buckets:
            b.pending = len(b.params)
            b.work = None

    # -- forward ---------------------------------------------------------------------
    def prepare_for_backward(self, outputs):
        """Called after each forward that will be synchronized."""
        if any(b.work is not None for b in self.buckets) and self.next_bucket < len(self.buckets):
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. "
                "This error indicates that your module has parameters that were not used in producing "
                "loss. You can enable unused parameter detection by passing the keyword argument "
                "`find_unused_parameters=True` to `rg.nn.parallel.DistributedDataParallel`, and by "
                "making sure all `forward` function outputs participate in calculating loss.")
        self._reset()
        self.expecting = True
        if self.find_unused:
            used = _reachable_leaves(outputs)
            self.unused = {id(p) for p in self.params if id(p) not in used}
            for p in self.params:
                if id(p) in self.unused:
                    self._mark_ready(p, unused=True)

    # -- backward ----------------------------------------------------------------------
    def _hook(self, param):
        if not self.sync or not self.expecting:
            return
        if not self.queued:
            self.queued = True
            from retrograd.autograd.graph import queue_callback
            queue_callback(self._finalize)
        if id(param) in self.ready:
            raise RuntimeError(
                f"Expected to mark a variable ready only once: parameter of shape {tuple(param.shape)} "
                f"got its gradient twice in one backward (reentrant checkpointing, or a parameter "
                f"used in a backward that runs twice). Use rg.utils.checkpoint(..., use_reentrant=False)")
        self._mark_ready(param)
        self.last_ready_at = time.perf_counter()
        for b in self.buckets[:self.next_bucket]:
            if b.work is not None and not b.work.is_completed():
                pass     # is_completed() advances MPI's progress

    def _mark_ready(self, param, unused=False):
        bucket, i = self.where[id(param)]
        self.ready.add(id(param))
        slot = bucket.slot(i)
        if unused or param.grad is None:
            slot[...] = 0
        else:
            g = _array(param.grad)
            if not np.shares_memory(g, slot):
                slot[...] = g
        bucket.pending -= 1
        self._launch_ready()

    def _launch_ready(self):
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            b = self.buckets[self.next_bucket]
            t = _ext.wrap(b.buffer)
            b.work = self._dist.all_reduce(t, group=self.group, async_op=True)
            if self.next_bucket == 0:
                self.first_launch_at = time.perf_counter()
            self.next_bucket += 1

    def _finalize(self):
        self.finalize_started_at = time.perf_counter()
        self.expecting = False
        if self.next_bucket < len(self.buckets):
            missing = [tuple(p.shape) for b in self.buckets[self.next_bucket:] for p in b.params
                       if id(p) not in self.ready]
            self._abandon()
            raise RuntimeError(
                f"DistributedDataParallel: backward ended before {len(missing)} parameters got a "
                f"gradient (shapes {missing[:5]}{' ...' if len(missing) > 5 else ''}), so their buckets "
                f"could not be reduced. This error indicates that your module has parameters that were "
                f"not used in producing loss. You can enable unused parameter detection by passing the "
                f"keyword argument `find_unused_parameters=True` to "
                f"`rg.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function "
                f"outputs participate in calculating loss.")
        used_globally = None
        if self.find_unused:
            # Which parameters some rank used: a parameter no rank used keeps
            # its gradient (None stays None), as torch's reducer does.
            local = np.array([0 if id(p) in self.unused else 1 for p in self.params], dtype=np.int32)
            t = _ext.wrap(local)
            self._dist.all_reduce(t, op=self._dist.ReduceOp.MAX, group=self.group)
            used_globally = local
        t0 = time.perf_counter()
        for b in self.buckets:
            b.work.wait()
        self.wait_seconds = time.perf_counter() - t0
        with no_grad():
            for b in self.buckets:
                b.buffer /= self.world_size
                for i, p in enumerate(b.params):
                    if used_globally is not None and not used_globally[self.index_of[id(p)]]:
                        continue
                    slot = b.slot(i)
                    if self.as_view:
                        if p.grad is None or not np.shares_memory(_array(p.grad), slot):
                            p.grad = _ext.wrap(slot)
                    elif p.grad is None:
                        p.grad = _ext.wrap(slot.copy())
                    else:
                        _array(p.grad)[...] = slot
                        _ext.increment_version([p.grad])
        for b in self.buckets:
            b.work = None

    def _abandon(self):
        # The launched buckets must still complete on this rank (the other
        # ranks run them too); wait for them so the group stays in step.
        for b in self.buckets[:self.next_bucket]:
            if b.work is not None:
                b.work.wait()
                b.work = None
        self.next_bucket = len(self.buckets)

    def remove(self):
        for h in self.handles:
            h.remove()


def _reachable_leaves(outputs):
    """ids of the leaf tensors whose AccumulateGrad the graph of ``outputs`` reaches."""
    stack, seen, leaves = [], set(), set()
    for t in _tensors_in(outputs):
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        elif t.requires_grad:
            leaves.add(id(t))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return leaves


def _tensors_in(obj):
    from retrograd.core import Tensor
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors_in(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors_in(o)
