"""Tensors from outside a compiled function (buffers it reads from its
closure or module, arguments that do not require grad) may be changed in
place, as torch.compile allows: the program computes their new values and
the call writes them back, bumping their versions. The trace and its check
reruns leave them as they were, so each call changes them once."""
import warnings

import numpy as np
import pytest

import retrograd as rg


def _x(seed, shape=(3,)):
    return np.random.default_rng(seed).standard_normal(shape)


def _compiled_quietly(cf, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no graph break
        return cf(*args)


def test_a_buffer_updated_in_place_matches_eager_call_by_call():
    state = {"ours": (rg.zeros(3), rg.tensor(0)), "ref": (rg.zeros(3), rg.tensor(0))}

    def make(which):
        avg, count = state[which]

        def f(x):
            with rg.no_grad():
                avg.mul_(0.9).add_(x.detach() * 0.1)
                count.add_(1)
            return (x * avg).sum()
        return f

    cf, ref = rg.compile(make("ours"), backend="numpy"), make("ref")
    versions = []
    for seed in range(4):
        x, xe = rg.tensor(_x(seed), requires_grad=True), rg.tensor(_x(seed), requires_grad=True)
        out, want = _compiled_quietly(cf, x), ref(xe)
        out.backward()
        want.backward()
        np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(state["ours"][0].numpy(), state["ref"][0].numpy(), rtol=1e-12)
        assert int(state["ours"][1]) == int(state["ref"][1]) == seed + 1
        versions.append(state["ours"][0]._version)
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
    assert all(b > a for a, b in zip(versions, versions[1:]))      # each call bumps it


def test_an_argument_changed_in_place_is_written_back():
    def f(x, acc):
        acc.add_(x.detach())
        return x.sin().sum()
    cf = rg.compile(f, backend="numpy")
    acc = rg.zeros(3)
    for seed in range(3):
        v = acc._version
        _compiled_quietly(cf, rg.tensor(_x(seed), requires_grad=True), acc)
        assert acc._version > v
    np.testing.assert_allclose(acc.numpy(), sum(_x(s) for s in range(3)), rtol=1e-12)
    # a view argument writes through to its base
    base = rg.zeros((2, 3))
    cf(rg.tensor(_x(0), requires_grad=True), base[1])
    np.testing.assert_allclose(base.numpy()[1], _x(0))
    np.testing.assert_array_equal(base.numpy()[0], 0.0)


def test_a_break_after_a_buffer_update_changes_it_once():
    # the trace stops at .item() (a graph break) after changing the buffer:
    # put back, then the eager call changes it, once per call
    count = rg.tensor(0)

    def f(x):
        with rg.no_grad():
            count.add_(1)
        return x * float(x.sum().item())
    cf = rg.compile(f, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            cf(rg.tensor(_x(0)))
    assert int(count) == 3


@pytest.mark.parametrize("returned", [False, True])
def test_what_stays_eager_stays_right(returned):
    # a parameter changed in place (an optimizer step), and a buffer both
    # changed and returned, run eagerly
    w = rg.tensor(np.ones(3), requires_grad=True)
    buf = rg.zeros(3)

    def step(g):
        with rg.no_grad():
            if returned:
                buf.add_(g)
                return buf * 1.0, buf
            w.sub_(0.5 * g)
            return w * 1.0
    cf = rg.compile(step, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            cf(rg.tensor(np.ones(3)))
    assert cf.cache_info()["eager"] == 1
    if returned:
        np.testing.assert_array_equal(buf.numpy(), 2.0)
    else:
        np.testing.assert_array_equal(w.detach().numpy(), 0.0)


def test_batch_norm_training_compiles_with_its_running_statistics():
    def net():
        rg.manual_seed(0)
        return rg.nn.Sequential(rg.nn.Conv2d(3, 4, 3), rg.nn.BatchNorm2d(4), rg.nn.ReLU(),
                                rg.nn.Flatten(), rg.nn.Linear(64, 2))
    model, ref = net(), net()
    cf = rg.compile(model, backend="numpy")
    for seed in range(3):
        a = _x(seed, (2, 3, 6, 6))
        out, want = _compiled_quietly(cf, rg.tensor(a)), ref(rg.tensor(a))
        (out ** 2).sum().backward()
        (want ** 2).sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-10)
        for p, q in zip(model.parameters(), ref.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-14)
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(model[1], name).numpy(), getattr(ref[1], name).numpy(),
                                       rtol=1e-12)
        assert int(model[1].num_batches_tracked) == seed + 1
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
    model.eval(), ref.eval()
    a = _x(9, (2, 3, 6, 6))
    np.testing.assert_allclose(_compiled_quietly(cf, rg.tensor(a)).detach().numpy(),
                               ref(rg.tensor(a)).detach().numpy(), rtol=1e-10)
    assert int(model[1].num_batches_tracked) == 3
