"""A compiled program must never bake in a value the ops did not compute:
a mask or indices that a backward formula or a composite made in NumPy can
be the same on the traced inputs and on every rerun, and wrong for the
next call's. Each case here was wrong before rg.compile refused such
values; now the key runs eagerly, or the value is computed per call (a
formula's mask made as ops), and agrees with eager on other inputs. An
array that is one of the function's own arguments is different: the guard
key holds it by value, so a call with other values traces anew."""
import warnings

import numpy as np

import retrograd as rg
import retrograd.nn.functional as F


def _grad(fn, values):
    x = rg.tensor(values, requires_grad=True)
    fn(x).backward()
    return x.grad.numpy()


def test_a_mask_that_every_rerun_leaves_unchanged():
    def f(x):
        return (rg.clamp(x, min=100.0) * x).sum()
    cf = rg.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _grad(cf, np.linspace(1.0, 2.0, 5))              # every value below the bound
        big = np.array([1.0, 150.0, 2.0, 200.0, 3.0])
        np.testing.assert_array_equal(_grad(cf, big), _grad(f, big))


def test_target_indices_of_a_one_class_first_batch():
    def loss(x, t):
        return F.cross_entropy(x, t)
    cl = rg.compile(loss)
    x = rg.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cl(x, rg.tensor([0, 0, 0, 0]))
        t = rg.tensor([2, 1, 0, 2])
        assert cl(x, t).item() == loss(x, t).item()


def test_an_index_array_argument_is_guarded_by_value_not_refused():
    def pick(x, idx):
        return (x[:, idx] * 2.0).sum()
    cf = rg.compile(pick, backend="numpy")
    a = np.random.default_rng(1).standard_normal((3, 4))
    for idx in (np.array([3, 1, 1]), np.array([3, 1, 1]), np.array([0, 2, 2])):
        x, xe = rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
        cf(x, idx).backward()
        pick(xe, idx).backward()
        np.testing.assert_array_equal(x.grad.numpy(), xe.grad.numpy())
    # the same values share a key; other values trace a key of their own
    assert cf.cache_info() == {"compiled": 2, "eager": 0}


def test_an_index_array_from_a_closure_is_not_baked_in():
    idx = np.array([3, 1, 1])

    def pick(x):
        return (x[:, idx] * 2.0).sum()
    cf = rg.compile(pick, backend="numpy")
    a = np.random.default_rng(2).standard_normal((3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(rg.tensor(a, requires_grad=True))
        idx[:] = [0, 0, 2]            # (no guard watches a closure's array)
        x, xe = rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
        cf(x).backward()
    pick(xe).backward()
    np.testing.assert_array_equal(x.grad.numpy(), xe.grad.numpy())
    assert cf.cache_info() == {"compiled": 0, "eager": 1}
