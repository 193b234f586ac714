"""A compiled program must never bake in a value the ops did not compute:
a mask or indices that a backward formula or a composite made in NumPy can
be the same on the traced inputs and on every rerun, and wrong for the
next call's. Each case here was wrong before rg.compile refused such
values; now the key runs eagerly and agrees with eager on other inputs."""
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
