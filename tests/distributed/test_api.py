"""The API in one process (world_size 1) and its errors, with torch's classes and messages."""
import datetime

import pytest

import retrograd as rg

from _dist_mpi import needs_mpi

dist = rg.distributed


def test_before_init_every_call_says_to_init():
    assert not dist.is_initialized()
    for call in (dist.get_rank, dist.get_world_size, dist.barrier, lambda: dist.all_reduce(rg.ones(1)),
                 dist.destroy_process_group):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()


def test_nccl_and_unknown_backends_are_refused_clearly():
    with pytest.raises(RuntimeError, match="'nccl' backend is not available yet"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="Invalid backend: 'gloo'"):
        dist.init_process_group("gloo")
    assert not dist.is_nccl_available()
    with pytest.raises(ValueError, match="init_method 'tcp://"):
        dist.init_process_group("mpi", init_method="tcp://127.0.0.1:1234")


@needs_mpi
def test_single_process_group_and_argument_errors(monkeypatch):
    with pytest.raises(ValueError, match="world_size argument is 2, but the MPI launcher started this process as rank 0 of 1"):
        dist.init_process_group("mpi", world_size=2)
    monkeypatch.setenv("RANK", "1")
    with pytest.raises(ValueError, match="RANK environment variable is 1"):
        dist.init_process_group("mpi")
    monkeypatch.delenv("RANK")
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=30))
    try:
        with pytest.raises(ValueError, match="trying to initialize the default process group twice!"):
            dist.init_process_group("mpi")
        assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "mpi")
        t = rg.tensor([1.0, 2.0])
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        assert t.tolist() == [1.0, 2.0]
        with pytest.raises(TypeError, match="Expected parameter `tensor` of type Tensor"):
            dist.all_reduce([t])
        with pytest.raises(TypeError, match="op must be a ReduceOp"):
            dist.all_reduce(t, op="sum")
        with pytest.raises(RuntimeError, match="ReduceOp.AVG needs a floating-point"):
            dist.all_reduce(rg.tensor([1]), op=dist.ReduceOp.AVG)
        with pytest.raises(ValueError, match="Global rank 3 is not part of group"):
            dist.broadcast(t, src=3)
        with pytest.raises(ValueError, match="must hold world_size"):
            dist.all_gather_into_tensor(rg.zeros(3), t)
        with pytest.raises(RuntimeError, match="expected length 1"):
            dist.all_gather([rg.zeros(2), rg.zeros(2)], t)
        with pytest.raises(ValueError, match="destination rank should not be the same"):
            dist.send(t, dst=0)
        with pytest.raises(ValueError, match="out of range"):
            dist.new_group([5])
        work = dist.all_reduce(t, async_op=True)
        assert work.wait() is True and work.is_completed() and work.exception() is None
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
