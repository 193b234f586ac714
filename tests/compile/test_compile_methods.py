"""``@rg.compile`` on a method: it binds as the plain function would
(torch.compile returns a function), each instance gets its own compiled
bound method, and the guards watch that instance's attributes."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.compile  # noqa: F401


class Scaler:
    def __init__(self, w, k):
        self.w = rg.tensor(np.asarray(w, dtype=float))
        self.k = k

    @rg.compile
    def apply(self, x):
        return (x * self.w * self.k).sum()


def _x():
    return rg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)


def test_a_compiled_method_binds_and_runs_compiled_per_instance():
    a, b = Scaler([1.0, 1.0, 1.0], 2.0), Scaler([0.0, 1.0, 2.0], 3.0)
    for _ in range(3):
        x = _x()
        y = a.apply(x)
        y.backward()
        assert y.grad_fn.name() == "CompiledFunctionBackward"
        np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])
        assert b.apply(_x()).item() == pytest.approx(3.0 * (0 + 2 + 6))
    assert Scaler.apply.cache_info() == {"compiled": 2, "eager": 0}
    assert Scaler.__dict__["apply"].__get__(None, Scaler) is Scaler.__dict__["apply"]


def test_rebinding_an_attribute_of_the_instance_retraces():
    s = Scaler([1.0, 1.0, 1.0], 2.0)
    x = _x()
    assert s.apply(x).item() == pytest.approx(12.0)
    s.w = rg.tensor(np.array([1.0, 0.0, 0.0]))       # another tensor: identity guard
    assert s.apply(x).item() == pytest.approx(2.0)
    s.k = 5.0                                        # another number: value guard
    assert s.apply(x).item() == pytest.approx(5.0)


def test_reset_of_the_method_forgets_every_instance():
    s = Scaler([1.0, 1.0, 1.0], 1.0)
    s.apply(_x())
    assert Scaler.apply.cache_info()["compiled"] >= 1
    Scaler.apply.reset()
    assert Scaler.apply.cache_info() == {"compiled": 0, "eager": 0}


def test_a_compiled_forward_of_a_module():
    class Net(rg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = rg.nn.Linear(3, 2)

        @rg.compile
        def forward(self, x):
            return self.lin(x).relu().sum()

    net = Net()
    x = rg.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    for _ in range(2):
        net.zero_grad()
        net(x).backward()
    got = [p.grad.numpy().copy() for p in net.parameters()]
    net.zero_grad()
    type(net).forward.__wrapped__(net, x).backward()        # eager
    for g, p in zip(got, net.parameters()):
        np.testing.assert_allclose(g, p.grad.numpy())
    assert type(net).forward.cache_info()["compiled"] == 1


def test_an_instance_without_weak_references_still_binds():
    class Slotted:
        __slots__ = ("k",)

        def __init__(self, k):
            self.k = k

        @rg.compile
        def twice(self, x):
            return x * 2

    out = Slotted(1).twice(rg.ones(2))
    np.testing.assert_allclose(out.numpy(), [2.0, 2.0])
