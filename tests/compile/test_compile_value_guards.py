"""Python values a compiled function reads from outside (a global or
closure number, flag or short list, a module's attribute) are baked into
its program at trace time. A call that finds another value retraces, as
torch.compile's guards do; unchanged values (NaN included) never do.
Without these guards the old value would be used silently."""
import types

import numpy as np

import retrograd as rg
import retrograd.compile

SCALE = 2.0
SETTINGS = types.ModuleType("settings_for_a_test")
SETTINGS.depth = 2
NAN_SHIFT = float("nan")


def _x():
    return rg.tensor(np.arange(1.0, 4.0), requires_grad=True)


class _Traces:
    """Counts traces of a function (calls made while rg.compile traces)."""

    def __init__(self):
        self.n = 0

    def saw(self):
        if rg.compile.is_compiling():
            self.n += 1


def test_a_rebound_global_number_retraces():
    global SCALE
    traces = _Traces()

    @rg.compile(backend="numpy")
    def f(x):
        traces.saw()
        return (x * SCALE).sum()
    try:
        assert f(_x()).item() == 12.0
        first = traces.n
        assert f(_x()).item() == 12.0 and traces.n == first        # unchanged: no retrace
        SCALE = 5.0
        x = _x()
        out = f(x)
        out.backward()
        assert out.item() == 30.0 and traces.n > first
        np.testing.assert_array_equal(x.grad.numpy(), 5.0)
        assert f.cache_info() == {"compiled": 1, "eager": 0}
    finally:
        SCALE = 2.0


def test_a_rebound_closure_variable_and_a_list_changed_in_place_retrace():
    steps = 2
    weights = [1.0, 3.0]

    @rg.compile(backend="numpy")
    def f(x):
        y = x
        for _ in range(steps):
            y = y * weights[0] + weights[1]
        return y.sum()

    def eager(x):
        y = x
        for _ in range(steps):
            y = y * weights[0] + weights[1]
        return y.sum()
    assert f(_x()).item() == eager(_x()).item()
    steps = 3
    assert f(_x()).item() == eager(_x()).item()
    weights[1] = -1.0                     # in place: the list is compared item by item
    assert f(_x()).item() == eager(_x()).item()


def test_a_module_attribute_read_through_a_global_module_retraces():
    @rg.compile(backend="numpy")
    def f(x):
        y = x
        for _ in range(SETTINGS.depth):
            y = y.sin()
        return y.sum()
    try:
        np.testing.assert_allclose(f(_x()).item(), np.sin(np.sin(np.arange(1.0, 4.0))).sum())
        SETTINGS.depth = 3
        np.testing.assert_allclose(f(_x()).item(), np.sin(np.sin(np.sin(np.arange(1.0, 4.0)))).sum())
    finally:
        SETTINGS.depth = 2


def test_a_nan_that_stays_nan_does_not_retrace():
    traces = _Traces()

    @rg.compile(backend="numpy")
    def f(x):
        traces.saw()
        return (x + NAN_SHIFT).sum()
    f(_x())
    first = traces.n
    for _ in range(3):
        assert np.isnan(f(_x()).item())
    assert traces.n == first


def test_a_value_the_function_changes_itself_is_not_guarded():
    seen = []                  # appended to by every run of the body: a side effect
    traces = _Traces()

    @rg.compile(backend="numpy")
    def f(x):
        traces.saw()
        seen.append(len(seen))
        return (x * 2.0).sum()
    f(_x())
    first = traces.n
    for _ in range(3):
        assert f(_x()).item() == 12.0
    assert traces.n == first               # no retrace on every call


def test_module_state_is_guarded_train_eval_attributes_and_replaced_parameters():
    import retrograd.nn as nn

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)
            self.drop = nn.Dropout(0.5)
            self.scale = 2.0

        def forward(self, x):
            return self.drop(self.lin(x)) * self.scale

    rg.manual_seed(3)
    m = Scaled()
    x = rg.tensor(np.ones((5, 4)))
    for f in (rg.compile(m, backend="numpy"), rg.compile(m.forward, backend="numpy")):
        m.train()
        f(x)
        m.eval()                          # dropout off: eager gives no zeros
        np.testing.assert_allclose(f(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-12)
        m.scale = 10.0
        np.testing.assert_allclose(f(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-12)
        m.lin.weight = nn.Parameter(rg.zeros(3, 4))
        np.testing.assert_allclose(f(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-12)
        m.scale = 2.0
        m.lin.weight = nn.Parameter(rg.ones(3, 4))


OFFSET = 1.0


def _shift(x):
    return x + OFFSET                      # a helper's global


def test_a_helpers_global_and_a_plain_objects_attribute_are_guarded():
    global OFFSET

    class Scaler:
        def __init__(self):
            self.k = 3.0

        def __call__(self, x):
            return (_shift(x) * self.k).sum()

    s = Scaler()
    f = rg.compile(s.__call__, backend="numpy")
    try:
        assert f(_x()).item() == s(_x()).item()
        OFFSET = -2.0
        assert f(_x()).item() == s(_x()).item()
        s.k = 0.5
        assert f(_x()).item() == s(_x()).item()
    finally:
        OFFSET = 1.0
