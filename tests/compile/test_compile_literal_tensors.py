"""Tensors a compiled function makes from Python numbers (rg.tensor(2.5),
rg.tensor([1.0, 2.0])) are remade at each call, so the key compiles; their
values come from literals or from values the guards hold."""
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.compile import api

COEFS = [0.5, -1.0, 2.0]
NESTED = [[1.0, 2.0], [3.0, 4.0]]


def _x(seed, n=3):
    return np.random.default_rng(seed).standard_normal(n)


@pytest.mark.parametrize("make", [
    lambda: rg.tensor([1.0, -2.0, 0.5]),
    lambda: rg.tensor((1, 2, 3), dtype=rg.float64),
    lambda: rg.tensor(2.5),
    lambda: rg.tensor([True, False, True]).double(),
])
def test_a_literal_tensor_compiles_and_gives_eager_values(make, assert_matches_eager):
    def f(x):
        return (x * make()).sin().sum()
    cf = rg.compile(f, backend="numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(3):
            assert_matches_eager(cf, f, _x(seed))
    assert cf.cache_info() == {"compiled": 1, "eager": 0}


def test_the_literal_is_remade_per_call_not_shared_with_the_caller():
    # the function changes its literal in place: each call starts from the
    # literal again, and no call's result shares memory with another's
    def f(x):
        c = rg.tensor([1.0, 2.0, 3.0])
        c.mul_(2.0)
        return x * c
    cf = rg.compile(f, backend="numpy")
    outs = [cf(rg.tensor(np.ones(3), requires_grad=True)) for _ in range(3)]
    for o in outs:
        np.testing.assert_array_equal(o.detach().numpy(), [2.0, 4.0, 6.0])
    assert cf.cache_info() == {"compiled": 1, "eager": 0}


def test_a_global_list_changed_between_calls_retraces(assert_matches_eager):
    def f(x):
        return (x * rg.tensor(COEFS)).exp().sum()
    cf = rg.compile(f, backend="numpy")
    try:
        assert_matches_eager(cf, f, _x(0))
        COEFS[1] = 3.0                          # in place: the guard compares items
        assert_matches_eager(cf, f, _x(1))
    finally:
        COEFS[1] = -1.0
    assert cf.cache_info()["compiled"] == 1


def test_a_nested_global_list_is_never_baked_in():
    # nested lists are not guarded: such a tensor is not remade, the key runs
    # eagerly, and a change is seen
    def f(x):
        return (x * rg.tensor(NESTED)).sum()
    cf = rg.compile(f, backend="numpy")
    a = np.ones((2, 2))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert cf(rg.tensor(a)).item() == 10.0
            NESTED[0][0] = 11.0
            assert cf(rg.tensor(a)).item() == 20.0
    finally:
        NESTED[0][0] = 1.0


def test_core_remakes_as_many_numbers_as_the_guards_hold():
    from retrograd.core import _creation
    assert _creation._MAX_LITERAL == api._MAX_GUARDED_LEN
