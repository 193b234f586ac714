"""rg.nn.parallel.comm across virtual CPU devices: values, devices, and gradcheck."""
import pytest

import retrograd as rg
from retrograd.nn.parallel import comm


@pytest.fixture(autouse=True)
def devices():
    before = rg.num_virtual_cpu_devices()
    rg.set_virtual_cpu_devices(max(before, 3))
    yield
    rg.set_virtual_cpu_devices(before)


def x64(*shape):
    rg.manual_seed(0)
    return rg.randn(*shape, dtype=rg.float64, requires_grad=True)


def test_broadcast_copies_and_its_backward_is_reduce_add():
    x = x64(3)
    outs = comm.broadcast(x, ["cpu:1", "cpu:2"])
    assert [o.device.index for o in outs] == [1, 2]
    assert all((o.detach().cpu() == x.detach()).all() for o in outs)
    assert outs[0].grad_fn is not None and outs[0].grad_fn is outs[1].grad_fn
    (outs[0].sum().cpu() + 3 * outs[1].sum().cpu()).backward()
    assert x.grad.tolist() == [4.0] * 3
    assert rg.autograd.gradcheck(lambda t: comm.broadcast(t, ["cpu:1", "cpu:2", "cpu"]), (x64(2, 3),))


def test_reduce_add_sums_across_devices_and_broadcasts_back():
    a = x64(2, 2).detach().to("cpu:1").requires_grad_()
    b = x64(2, 2).detach().to("cpu:2").requires_grad_()
    s = comm.reduce_add([a, b], destination="cpu")
    assert s.device == rg.device("cpu")
    assert (s.detach() == (a.detach().cpu() + b.detach().cpu())).all()
    assert rg.autograd.gradcheck(lambda p, q: comm.reduce_add([p, q], destination="cpu:3"), (a, b))
    with pytest.raises(ValueError, match="same shape"):
        comm.reduce_add([a, rg.ones(3)])


def test_scatter_and_gather_are_each_others_backward():
    x = x64(5, 2)
    parts = comm.scatter(x, ["cpu:1", "cpu:2"], chunk_sizes=[2, 3])
    assert [tuple(p.shape) for p in parts] == [(2, 2), (3, 2)]
    assert [p.device.index for p in parts] == [1, 2]
    assert rg.autograd.gradcheck(lambda t: comm.scatter(t, ["cpu:1", "cpu:2"], dim=1), (x,))
    pieces = (x64(2, 3).detach().to("cpu:1").requires_grad_(), x64(1, 3).detach().to("cpu:2").requires_grad_())
    g = comm.gather(pieces, dim=0, destination="cpu")
    assert tuple(g.shape) == (3, 3) and g.device == rg.device("cpu")
    assert rg.autograd.gradcheck(lambda p, q: comm.gather([p, q], destination="cpu:3"), pieces)
    # second order: Scatter's backward is a Gather that records its own backward
    assert rg.autograd.gradgradcheck(lambda t: comm.scatter(t * t, ["cpu:1", "cpu:2"]), (x64(4),))
    with pytest.raises(ValueError, match="add up to the size of dim 0"):
        comm.scatter(x, ["cpu:1", "cpu:2"], chunk_sizes=[1, 1])


def test_broadcast_coalesced_and_errors():
    a, b = x64(2), x64(3)
    rows = comm.broadcast_coalesced([a, b], ["cpu:1", "cpu:2"])
    assert [[tuple(t.shape) for t in row] for row in rows] == [[(2,), (3,)], [(2,), (3,)]]
    sum(t.sum().cpu() for row in rows for t in row).backward()
    assert a.grad.tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="non-empty list of devices"):
        comm.broadcast(a, [])
    with pytest.raises(TypeError, match="expected `tensor` to be a Tensor"):
        comm.broadcast([1.0], ["cpu:1"])
