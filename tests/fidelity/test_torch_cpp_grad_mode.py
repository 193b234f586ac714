"""Behaviours from torch's test/cpp/api/grad_mode.cpp, translated.

All 4 tests of the C++ file (GradModeTest) are translated, each looping over
requires_grad as the original does. ``torch::AutoGradMode(false)`` becomes
``rg.set_grad_enabled(False)``. The C++ checks of a view's CreationMeta are
checked through what that meta decides: an in-place op on the view (or on a
view of it) with grad mode back on is refused with the no_grad-view error.

Excluded: none.
"""
import numpy as np
import pytest

import retrograd as rg

NO_GRAD_VIEW = "created in no_grad mode and is being modified inplace"


def _ones_from(requires_grad):
    return rg.ones(1, 2, 3).requires_grad_(requires_grad)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_functional_op_under_disabled_grad_is_a_leaf(requires_grad):
    with rg.set_grad_enabled(False):
        src = _ones_from(requires_grad)
        out = src * src
        assert not out.requires_grad
        assert out.is_leaf


@pytest.mark.parametrize("requires_grad", [True, False])
def test_inplace_op_under_disabled_grad_keeps_requires_grad(requires_grad):
    with rg.set_grad_enabled(False):
        src = _ones_from(requires_grad)
        src.mul_(2)
        assert src.requires_grad == requires_grad
        np.testing.assert_allclose(np.asarray(src.detach()), 2 * np.ones((1, 2, 3)))


@pytest.mark.parametrize("requires_grad", [True, False])
def test_view_op_under_disabled_grad_inherits_requires_grad(requires_grad):
    with rg.set_grad_enabled(False):
        src = _ones_from(requires_grad)
        view = src.view(2, 3)
        assert view.requires_grad == requires_grad
        assert view.is_leaf


@pytest.mark.parametrize("requires_grad", [True, False])
def test_view_made_under_disabled_grad_used_after(requires_grad):
    base = _ones_from(requires_grad).clone()
    with rg.set_grad_enabled(False):
        view = base.view(2, 3)
        assert view.requires_grad == requires_grad
        assert view.is_leaf

    prod = view * view
    assert prod.requires_grad == requires_grad
    if requires_grad:
        prod.backward(rg.ones_like(prod))
        assert view.grad is None
        with pytest.raises(RuntimeError, match=NO_GRAD_VIEW):
            view.mul_(2)
    else:
        view.mul_(2)
        np.testing.assert_allclose(np.asarray(base.detach()), 2 * np.ones((1, 2, 3)))

    again = view.view(2, 3)
    assert again.requires_grad == requires_grad
    if requires_grad:
        with pytest.raises(RuntimeError, match=NO_GRAD_VIEW):
            again.mul_(2)
