"""Differentiable collectives (``torch.distributed.nn.functional``).

Each is a custom autograd Function whose backward is the adjoint
collective, as torch's: the gradient of an all-reduce (SUM or AVG) is the
all-reduce of the gradients; of a broadcast, their sum on the source (zero
elsewhere); of an all-gather, the reduce-scatter of the gradients; of a
reduce-scatter, the all-gather. Every rank must run the backward, because
it communicates. The inputs are not modified (forward works on copies).
"""
from __future__ import annotations

import retrograd.core as _core
from retrograd.core.extending import CustomFunction as Function
from retrograd.distributed import _collectives as c
from retrograd.distributed import _group
from retrograd.distributed._reduce_op import ReduceOp

__all__ = ["all_reduce", "broadcast", "all_gather", "reduce_scatter"]


def _world(group):
    return _group.group.WORLD if group is None else group


# (core's CustomFunction: forward without ctx, which setup_context fills)
def _keep_op_and_group(ctx, inputs, output):
    ctx.op, ctx.group = inputs[0], inputs[1]


class _AllReduce(Function):
    @staticmethod
    def forward(op, group, tensor):
        out = tensor.clone()
        c.all_reduce(out, op=op, group=group)
        return out

    setup_context = staticmethod(_keep_op_and_group)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise RuntimeError(f"all_reduce's backward is defined for ReduceOp.SUM and ReduceOp.AVG, "
                               f"not {ctx.op}")
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad_output)


class _Broadcast(Function):
    @staticmethod
    def forward(src, group, tensor):
        out = tensor.clone()
        c.broadcast(out, src=src, group=group)
        return out

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.src, ctx.group = inputs[0], inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        g = _group.resolve(ctx.group)
        grad = _AllReduce.apply(ReduceOp.SUM, ctx.group, grad_output)
        if g.rank() != g._group_rank(ctx.src):
            # only the source's value reached the outputs
            grad = grad * 0
        return None, None, grad


class _AllGather(Function):
    @staticmethod
    def forward(group, tensor):
        g = _group.resolve(group)
        outs = [_core.empty_like(tensor) for _ in range(g.size())]
        c.all_gather(outs, tensor, group=group)
        return tuple(outs)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.group = inputs[0]

    @staticmethod
    def backward(ctx, *grad_outputs):
        return (None, _ReduceScatter.apply(ReduceOp.SUM, ctx.group, _core.empty_like(grad_outputs[0]),
                                           *grad_outputs))


class _ReduceScatter(Function):
    @staticmethod
    def forward(op, group, output, *inputs):
        stacked = _core.stack(list(inputs))
        out = _core.empty_like(output)
        c.reduce_scatter_tensor(out, stacked, op=op, group=group)
        return out

    setup_context = staticmethod(_keep_op_and_group)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.op is not ReduceOp.SUM:
            raise RuntimeError(f"reduce_scatter's backward is defined for ReduceOp.SUM, not {ctx.op}")
        return (None, None, None) + _AllGather.apply(ctx.group, grad_output)


def _check(t, name, op_name):
    if not isinstance(t, _core.Tensor):
        raise TypeError(f"{op_name}: `{name}` must be a Tensor, got {type(t).__name__}")


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """All-reduce that autograd differentiates (``torch.distributed.nn.functional.all_reduce``).

    Returns a new tensor, the reduction of every rank's ``tensor``; its
    backward all-reduces the gradients with the same op (SUM or AVG only).

    Parameters
    ----------
    tensor : Tensor
        This rank's input (not modified).
    op : ReduceOp, optional
        SUM (default) or AVG for a differentiable result; others reduce but
        their backward raises.
    group : ProcessGroup, optional
        Default: the default group.

    Returns
    -------
    Tensor
        The reduction, with a backward node.

    Raises
    ------
    TypeError
        ``tensor`` is not a Tensor.
    RuntimeError
        Backward through an op other than SUM or AVG.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> from retrograd.distributed.nn.functional import all_reduce
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> all_reduce(x).sum().backward()
    >>> x.grad
    tensor([1., 1.])
    >>> dist.destroy_process_group()
    """
    _check(tensor, "tensor", "all_reduce")
    return _AllReduce.apply(op, _world(group), tensor)


def broadcast(tensor, src, group=None):
    """Broadcast that autograd differentiates (``torch.distributed.nn.functional.broadcast``).

    Returns a copy of rank ``src``'s ``tensor`` on every rank; backward
    gives ``src`` the sum of every rank's gradient and the others zero.

    Parameters
    ----------
    tensor : Tensor
        The data on ``src``; its shape and dtype elsewhere.
    src : int
        The global rank the data comes from.
    group : ProcessGroup, optional
        Default: the default group.

    Returns
    -------
    Tensor
        The broadcast value, with a backward node.

    Raises
    ------
    TypeError
        ``tensor`` is not a Tensor.
    ValueError
        ``src`` is not in the group.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> from retrograd.distributed.nn.functional import broadcast
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> (broadcast(x, src=0) * 3).sum().backward()
    >>> x.grad
    tensor([3., 3.])
    >>> dist.destroy_process_group()
    """
    _check(tensor, "tensor", "broadcast")
    return _Broadcast.apply(src, _world(group), tensor)


def all_gather(tensor, group=None):
    """All-gather that autograd differentiates (``torch.distributed.nn.functional.all_gather``).

    Returns every rank's ``tensor`` (a tuple indexed by group rank);
    backward reduce-scatters the gradients, so each rank's input gets the
    sum of the gradients of its copies.

    Parameters
    ----------
    tensor : Tensor
        This rank's part, the same shape and dtype on every rank.
    group : ProcessGroup, optional
        Default: the default group.

    Returns
    -------
    tuple of Tensor
        One tensor per rank of the group.

    Raises
    ------
    TypeError
        ``tensor`` is not a Tensor.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> from retrograd.distributed.nn.functional import all_gather
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> parts = all_gather(x)
    >>> (parts[0] * 2).sum().backward()
    >>> len(parts), x.grad
    (1, tensor([2., 2.]))
    >>> dist.destroy_process_group()
    """
    _check(tensor, "tensor", "all_gather")
    return _AllGather.apply(_world(group), tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None):
    """Reduce-scatter that autograd differentiates (``torch.distributed.nn.functional.reduce_scatter``).

    Rank ``i`` gets the reduction of every rank's ``input_list[i]``;
    backward all-gathers the gradients (SUM only).

    Parameters
    ----------
    output : Tensor
        Gives the result's shape and dtype (not written: the result is a
        new tensor, as torch's returns).
    input_list : list of Tensor
        ``world_size`` tensors of ``output``'s shape.
    op : ReduceOp, optional
        SUM (default); backward raises for other ops.
    group : ProcessGroup, optional
        Default: the default group.

    Returns
    -------
    Tensor
        This rank's reduced part, with a backward node.

    Raises
    ------
    TypeError
        Arguments that are not Tensors.
    ValueError
        ``input_list``'s length is not the group's size.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> from retrograd.distributed.nn.functional import reduce_scatter
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = reduce_scatter(rg.zeros(2), [x])
    >>> (y * 5).sum().backward()
    >>> y.detach(), x.grad
    (tensor([1., 2.]), tensor([5., 5.]))
    >>> dist.destroy_process_group()
    """
    _check(output, "output", "reduce_scatter")
    if not isinstance(input_list, (list, tuple)):
        raise TypeError(f"reduce_scatter: input_list must be a list of Tensors, got {type(input_list).__name__}")
    for i, t in enumerate(input_list):
        _check(t, f"input_list[{i}]", "reduce_scatter")
    g = _group.resolve(group)
    if g is not None and len(input_list) != g.size():
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors; the group has "
                         f"{g.size()} ranks")
    return _ReduceScatter.apply(op, _world(group), output, *input_list)
