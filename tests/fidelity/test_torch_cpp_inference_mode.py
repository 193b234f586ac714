"""Behaviours from torch's test/cpp/api/inference_mode.cpp, translated.

The C++ file (InferenceModeTest) has 28 tests; 25 are translated here, one test
function each, looping over requires_grad (as a parameter) where the original
does. ``c10::InferenceMode`` becomes ``rg.inference_mode()``, ``AutoGradMode(false)``
becomes ``rg.set_grad_enabled(False)``, ``is_view()`` becomes ``_is_view()``.
``view_as(other)`` is written ``view(other.shape)`` and ``split_with_sizes(sizes)``
is written ``split(sizes)``, which is what they do in torch (retrograd has neither
method). A view's CreationMeta is checked through what it decides: which in-place
ops on the view are refused, and with which error.

Partly translated:
TestInferenceTensorInNormalModeInplaceOp: only requires_grad=False; with requires_grad=True, Python's mul_ on
    the leaf raises torch 2.13's leaf-in-place error first, not the inference-tensor one
TestNormalTensorViewOutputInInferenceMode: ``is_leaf`` after the in-place op only for requires_grad=False; with
    True, Python's ``is_leaf`` reads ``grad_fn``, which raises on torch 2.13 (C++ reads the field directly)
TestTLSState: only the Python-visible state (inference mode and grad mode); dispatch-key TLS is C++-only
TestMixInferenceAndNormalTensorInplaceOp: without the ``mul_out`` (``out=``) calls; retrograd has no out= variants
TestAccessVersionCounter: without "bump_version outside InferenceMode raises": its Python equivalent,
    ``increment_version`` on an inference tensor, does not raise on torch 2.13

Excluded:
TestComplexViewInInferenceMode: needs view_as_complex / view_as_real, which retrograd does not have
TestComplexViewInNormalMode: needs view_as_complex / view_as_real, which retrograd does not have
TestLegacyAutoNonVariableTypeModeWarning: C++-only guard (at::AutoNonVariableTypeMode)
"""
import numpy as np
import pytest

import retrograd as rg

OUTSIDE_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed"
NOT_SAVABLE = "Inference tensors cannot be saved for backward"
INFERENCE_VIEW = "A view was created in inference mode and is being modified inplace"
NO_VERSION = "Inference tensors do not track version counter"

both = pytest.mark.parametrize("requires_grad", [True, False])


def _ones(requires_grad=False):
    return rg.ones(1, 2, 3).requires_grad_(requires_grad)


def _square(t):
    return t * t


def _touch(t):
    t.mul_(1)


def _reshape(t):
    return t.view(2, 3)


def _made_inside(requires_grad=False):
    with rg.inference_mode():
        return _ones(requires_grad)


def _state():
    return rg.is_inference_mode_enabled(), rg.is_grad_enabled()


def test_mode_state_nests():
    assert _state() == (False, True)
    with rg.inference_mode():
        assert _state() == (True, False)
        with rg.inference_mode(False):
            assert _state() == (False, True)
        assert _state() == (True, False)
    assert _state() == (False, True)


def test_tensors_made_inside_are_inference_tensors():
    with rg.inference_mode():
        plain = rg.ones(1, 2, 3)
        assert not plain.requires_grad
        assert plain.is_inference()
        flagged = _ones(True)
        assert flagged.requires_grad
        assert flagged.is_inference()
        unflagged = _ones(False)
        assert not unflagged.requires_grad
        assert unflagged.is_inference()


def test_inplace_inside_invalidates_recorded_graph():
    a = _ones(True).clone()
    out = a * a
    with rg.inference_mode():
        _touch(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward(rg.ones_like(out))


@both
def test_functional_op_on_inference_tensor_inside(requires_grad):
    with rg.inference_mode():
        out = _square(_ones(requires_grad))
        assert out.is_inference()
        assert not out.requires_grad


@both
def test_inplace_op_on_inference_tensor_inside(requires_grad):
    with rg.inference_mode():
        t = _ones(requires_grad)
        _touch(t)
        assert t.is_inference()
        assert t.requires_grad == requires_grad


@both
def test_view_op_on_inference_tensor_inside(requires_grad):
    with rg.inference_mode():
        view = _reshape(_ones(requires_grad))
        assert view.is_inference()
        assert not view.requires_grad
        assert not view._is_view()


@pytest.mark.parametrize("requires_grad", [
    True, False,
])
def test_functional_op_on_inference_tensor_outside(requires_grad):
    out = _square(_made_inside(requires_grad))
    assert not out.is_inference()
    assert not out.requires_grad


def test_inplace_op_on_inference_tensor_outside_raises():
    t = _made_inside(False)
    with pytest.raises(RuntimeError, match=OUTSIDE_INPLACE):
        _touch(t)


@pytest.mark.parametrize("requires_grad", [
    True, False,
])
def test_view_op_on_inference_tensor_outside(requires_grad):
    out = _reshape(_made_inside(requires_grad))
    assert out.is_inference()
    assert not out.requires_grad
    assert not out._is_view()
    assert out.is_leaf


@both
def test_inplace_then_view_of_normal_tensor_inside(requires_grad):
    a = _ones(requires_grad).clone()
    with rg.inference_mode():
        for _ in range(2):
            _touch(a)
            assert not a.is_inference()
            assert a.requires_grad == requires_grad
        view = _reshape(a)
        assert not view.is_inference()
        assert view.requires_grad == requires_grad


@both
def test_normal_tensor_updated_inside_then_used_outside(requires_grad):
    a = _ones(requires_grad).clone()
    with rg.inference_mode():
        _touch(a)
        assert not a.is_inference()
        assert a.requires_grad == requires_grad
    out = _square(a)
    assert not out.is_inference()
    assert out.requires_grad == requires_grad
    _touch(a)
    assert not a.is_inference()
    assert a.requires_grad == requires_grad
    view = _reshape(a)
    assert not view.is_inference()
    assert view.requires_grad == requires_grad


@both
def test_views_of_normal_tensor_made_inside(requires_grad):
    a = _ones(requires_grad).clone()
    with rg.inference_mode():
        view = _reshape(a)
        assert not view.is_inference()
        assert view.requires_grad == requires_grad
        assert view.is_leaf
        nested = _reshape(view)
        assert not nested.is_inference()
        assert nested.requires_grad == requires_grad
        assert nested.is_leaf
        _touch(nested)
        assert not nested.is_inference()
        assert nested.requires_grad == requires_grad
        if not requires_grad:
            assert nested.is_leaf
        assert a._version == nested._version
    if requires_grad:
        with pytest.raises(RuntimeError, match=INFERENCE_VIEW):
            _touch(nested)


@both
def test_view_made_inside_used_outside(requires_grad):
    a = _ones(requires_grad).clone()
    with rg.inference_mode():
        view = _reshape(a)
        assert not view.is_inference()
        assert view.requires_grad == requires_grad
        assert view.is_leaf
    out = _square(view)
    assert not view.is_inference()
    assert out.requires_grad == requires_grad
    if requires_grad:
        with pytest.raises(RuntimeError, match=INFERENCE_VIEW):
            _touch(view)
    else:
        _touch(view)
    again = _reshape(view)
    assert not view.is_inference()
    assert again.requires_grad == requires_grad


@both
def test_functional_op_mixing_inference_and_normal_tensors(requires_grad):
    s = _ones(requires_grad)
    c = _made_inside(requires_grad)
    out = c.add(s)
    assert not out.is_inference()
    assert out.requires_grad == requires_grad
    if requires_grad:
        out.backward(rg.ones_like(out))
        np.testing.assert_array_equal(np.asarray(c.grad), np.ones((1, 2, 3)))
        with pytest.raises(RuntimeError, match=NOT_SAVABLE):
            c.mul(s)


@both
def test_inplace_op_with_inference_tensor_argument(requires_grad):
    s = _ones(requires_grad)
    a = s.clone()
    c = _made_inside()
    if requires_grad:
        with pytest.raises(RuntimeError, match=NOT_SAVABLE):
            a.mul_(c)
    else:
        a.mul_(c)
        np.testing.assert_array_equal(np.asarray(a), np.ones((1, 2, 3)))


@both
def test_view_op_mixing_inference_and_normal_tensors(requires_grad):
    s = _ones(requires_grad)
    c = _made_inside()
    shaped_like_normal = c.view(s.shape)
    assert shaped_like_normal.is_inference()
    assert not shaped_like_normal.requires_grad
    shaped_like_inference = s.view(c.shape)
    assert not shaped_like_inference.is_inference()
    assert shaped_like_inference.requires_grad == requires_grad


@both
def test_inplace_on_direct_view_made_inside(requires_grad):
    a = _ones(requires_grad).clone()
    with rg.inference_mode():
        view = _reshape(a)
    if requires_grad:
        with pytest.raises(RuntimeError, match=INFERENCE_VIEW):
            _touch(view)
    else:
        _touch(view)
        assert a._version == 1


@both
def test_grad_fn_of_view_made_inside_after_base_changes(requires_grad):
    a = _ones(requires_grad).clone()
    with rg.inference_mode():
        view = _reshape(a)
    _touch(a)
    if requires_grad:
        with pytest.raises(RuntimeError, match="its base or another view of its base has been modified inplace"):
            view.grad_fn
    else:
        assert view.grad_fn is None


def test_inference_view_meta_survives_a_no_grad_view():
    s = _ones(True)
    with rg.inference_mode():
        b = s.view(s.shape)
    with pytest.raises(RuntimeError, match=INFERENCE_VIEW):
        b.add_(1)
    with rg.set_grad_enabled(False):
        c = b.view(b.shape)
    with pytest.raises(RuntimeError, match=INFERENCE_VIEW):
        c.add_(1)


def test_split_inside_of_views_made_outside_and_inside():
    s = rg.ones(2, 2, 3).requires_grad_(True)
    outer_view = s.view(s.shape)
    with rg.inference_mode():
        from_outer = outer_view.split([1, 1])
        inner_view = s.view(s.shape)
        from_inner = inner_view.split([1, 1])
    for piece in list(from_outer) + list(from_inner):
        with pytest.raises(RuntimeError, match=INFERENCE_VIEW):
            piece.add_(1)


@both
def test_copy_into_inference_tensor(requires_grad):
    s = _ones(requires_grad)
    with rg.inference_mode():
        t = rg.ones(1, 2, 3)
        t.copy_(s)
        assert t.is_inference()
        assert not t.requires_grad
    with pytest.raises(RuntimeError, match=OUTSIDE_INPLACE):
        t.copy_(s)


def test_requires_grad_on_inference_tensor_outside():
    t = _made_inside()
    t.requires_grad_(False)
    assert not t.requires_grad
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor outside InferenceMode"):
        t.requires_grad_(True)


def test_inference_tensor_has_no_version_counter():
    with rg.inference_mode():
        t = rg.ones(1, 2, 3)
        with pytest.raises(RuntimeError, match=NO_VERSION):
            t._version
        rg.autograd.graph.increment_version(t)
    with pytest.raises(RuntimeError, match=NO_VERSION):
        t._version
    copy = t.clone()
    before = copy._version
    rg.autograd.graph.increment_version(copy)
    assert copy._version == before + 1


def test_inplace_between_inference_and_normal_tensors():
    s = rg.ones(1, 2, 3)
    with rg.inference_mode():
        t = rg.ones(1, 2, 3)
        s.copy_(t)
        s.add_(t)
        t.add_(s)
        t.copy_(s)
    s.copy_(t)
    s.add_(t)
    np.testing.assert_array_equal(np.asarray(s), np.full((1, 2, 3), 4.0))
    with pytest.raises(RuntimeError, match=OUTSIDE_INPLACE):
        t.copy_(s)
    with pytest.raises(RuntimeError, match=OUTSIDE_INPLACE):
        t.add_(s)


def test_custom_function_inside_saves_without_error():
    class Combine(rg.autograd.Function):
        @staticmethod
        def forward(ctx, a, factor, b):
            ctx.factor = factor
            ctx.save_for_backward(a, b)
            return a + factor * b + a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad + grad * b, None, grad * ctx.factor + grad * a

    with rg.inference_mode():
        first = rg.ones(3, 3).requires_grad_(True)
        second = first.clone()
        out = Combine.apply(first, 2, second)
        expected = first + 2 * second + first * second
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))
