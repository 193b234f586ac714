"""rg.compile merges common subexpressions: a call repeated on the same
values runs once, in the forward and in the backward, and nothing that
must stay apart (random draws, results, values that differ only in a
constant's type or sign) is merged."""
import numpy as np
import pytest

import retrograd as rg


def _x(n=6, seed=0):
    return rg.tensor(np.random.default_rng(seed).uniform(-1.5, 1.5, n), requires_grad=True)


def _branches(x):
    # four identical branches: a trace records each op four times
    outs = []
    for _ in range(4):
        y = x
        for _ in range(3):
            y = (y * 1.01).tanh()
        outs.append(y.sum())
    return outs[0] + outs[1] + outs[2] + outs[3]


@pytest.mark.parametrize("backend", ["numpy", "auto"])
def test_repeated_branches_run_once_forward_and_backward(backend):
    f = rg.compile(_branches, backend=backend, fullgraph=True)
    for seed in range(3):
        x, ex = _x(seed=seed), _x(seed=seed)
        out = f(x)
        out.backward()
        want = _branches(ex)
        want.backward()
        np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), ex.grad.numpy(), rtol=1e-12)
    f.wait()
    (entry,) = f._cache.values()
    fwd = [st.name for st in entry._fwd_steps]
    bwd = [st.name for st in entry._bwd_steps]
    assert fwd.count("tanh") == 3 and fwd.count("sum") == 1
    # the four branch gradients are one: three tanh backwards, not twelve
    assert bwd.count("tanh_backward") + bwd.count("mul") <= 3 * 3 + 3


def test_random_draws_are_never_merged():
    def f(x):
        return x * (rg.rand(200) - rg.rand(200))

    cf = rg.compile(f)
    for _ in range(3):
        out = cf(_x(200))
        assert np.abs(out.detach().numpy()).max() > 0


def test_constants_that_differ_by_sign_or_type_are_not_merged():
    def f(x):
        # 1/(+0) + 1/(-0) is inf - inf: nan; merged, it would be inf
        return 1.0 / (x * 0.0) + 1.0 / (x * -0.0), (x * 2) + (x * 2.0) + (x * True)

    cf = rg.compile(f)
    for _ in range(3):
        x = rg.tensor([1.0, 2.0, 3.0])
        got, want = cf(x), f(x)
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
        assert np.isnan(got[0].numpy()).all()
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())


def test_equal_results_are_arrays_of_their_own():
    cf = rg.compile(lambda x: (x.sin(), x.sin()))
    for _ in range(3):
        a, b = cf(_x())
    assert not np.shares_memory(a.detach().numpy(), b.detach().numpy())
    with rg.no_grad():
        a.mul_(0.0)
    assert np.abs(b.detach().numpy()).max() > 0


def test_views_of_a_merged_value_keep_its_buffer_alive(assert_matches_eager):
    # the second x * 2 is the first; a view of it is read after many
    # other values (whose buffers could otherwise take the first's memory)
    def f(x):
        a = (x * 2.0).sum()
        b = (x * 2.0)[1:]
        y = x
        for _ in range(6):
            y = (y + 1.0).exp().log()
        return (b * y[1:]).sum() + a

    cf = rg.compile(f, backend="numpy", fullgraph=True)
    for seed in range(3):
        assert_matches_eager(cf, f, np.random.default_rng(seed).standard_normal((4, 5)))
