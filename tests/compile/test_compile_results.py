"""A compiled function may return any nest of tuples, lists, named tuples
and dicts of tensors, with None, bools, numbers and strings among them
(torch.compile returns such structures as they are)."""
import collections
import warnings

import numpy as np
import pytest

import retrograd as rg

Pair = collections.namedtuple("Pair", ["loss", "scale"])
CALLS = 0


def _x(seed):
    return np.random.default_rng(seed).standard_normal(4)


def _no_break(cf, f, make_args, check):
    """Three calls of ``cf`` and ``f`` on fresh arguments, compared by
    ``check(got, want)``; no warning (no graph break, no eager key)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(3):
            check(cf(*make_args(seed)), f(*make_args(seed)))
    assert cf.cache_info() == {"compiled": 1, "eager": 0}


def _same(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_a_dict_of_tensors_and_its_backward():
    def f(x):
        h = x.tanh()
        return {"loss": (h ** 2).sum(), "h": h, "note": "tanh"}
    cf = rg.compile(f, backend="numpy")

    def check(got, want):
        assert list(got) == ["loss", "h", "note"] and got["note"] == "tanh"
        _same(got["loss"], want["loss"])
        _same(got["h"], want["h"])
    _no_break(cf, f, lambda s: (rg.tensor(_x(s), requires_grad=True),), check)
    x, xe = rg.tensor(_x(7), requires_grad=True), rg.tensor(_x(7), requires_grad=True)
    cf(x)["loss"].backward()
    f(xe)["loss"].backward()
    np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-12)


def test_nested_results_with_constants_are_made_anew_per_call():
    def f(x):
        return x.sin(), [x.cos(), None, 3, (True, 2.5)]
    cf = rg.compile(f, backend="numpy")

    def check(got, want):
        assert type(got) is tuple and type(got[1]) is list
        assert got[1][1:] == [None, 3, (True, 2.5)]
        _same(got[0], want[0])
        _same(got[1][0], want[1][0])
    _no_break(cf, f, lambda s: (rg.tensor(_x(s)),), check)
    first = cf(rg.tensor(_x(0)))
    first[1].append("changed by the caller")
    assert len(cf(rg.tensor(_x(0)))[1]) == 4


def test_a_named_tuple_keeps_its_type():
    def f(x, w):
        return Pair((x * w).sum(), 0.5)
    cf = rg.compile(f, backend="numpy")

    def check(got, want):
        assert type(got) is Pair and got.scale == 0.5
        _same(got.loss, want.loss)
    _no_break(cf, f, lambda s: (rg.tensor(_x(s), requires_grad=True), rg.tensor(_x(s + 1))), check)


def test_a_constant_that_changes_between_calls_runs_eagerly():
    # the function counts its calls: a result read from the count cannot be
    # baked in, so the key runs eagerly and each call sees its own count
    def f(x):
        global CALLS
        CALLS += 1
        return x.exp(), CALLS
    cf = rg.compile(f, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counts = [cf(rg.tensor(_x(s)))[1] for s in range(3)]
    assert counts[1] == counts[0] + 1 and counts[2] == counts[1] + 1
    assert cf.cache_info()["eager"] == 1


@pytest.mark.parametrize("result", [
    lambda x: {"n": 3},                            # no tensor
    lambda x: (x.sin(), np.zeros(2)),              # an array
    lambda x: (x.sin(), object()),
])
def test_other_results_run_eagerly_with_a_warning(result):
    cf = rg.compile(result, backend="numpy")
    with pytest.warns(RuntimeWarning, match="graph break|result"):
        out = cf(rg.tensor(_x(0)))
    assert type(out) is type(result(rg.tensor(_x(0))))
