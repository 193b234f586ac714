"""Engine, backward() and grad() where torch 2.13 has a rule retrograd must
keep: freed graphs, calls of a grad_fn, materialize_grads, what the engine
runs for inputs=..., grad_outputs of GradientEdges, warnings, numpy() under
no_grad and is_multithreading_enabled."""
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.graph import get_gradient_edge

SECOND = "backward through the graph a second time"


def _leaf(n=4):
    return rg.tensor(np.arange(1.0, n + 1.0), requires_grad=True)


# -- a second backward through indexing / __setitem__ graphs ----------------

@pytest.mark.parametrize("index", [[0, 1], np.array([0, 2]), np.array([True, False, True, False])],
                         ids=["list", "int-array", "mask"])
def test_second_backward_through_advanced_indexing_raises(index):
    x = _leaf()
    y = x[index].sum()
    y.backward()
    with pytest.raises(RuntimeError, match=SECOND):
        y.backward()


def test_second_backward_through_basic_slice_is_allowed_as_in_torch():
    x = _leaf()
    y = x[1:3].sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 2.0, 2.0, 0.0])


@pytest.mark.parametrize("setitem", [
    lambda z, w: z.__setitem__(0, 5.0),
    lambda z, w: z.__setitem__(slice(1, 3), w),
    lambda z, w: z.__setitem__([0, 2], w),
    lambda z, w: z.__setitem__([0, 2], 3.0),
    lambda z, w: z.__setitem__(np.array([True, False, True, False]), w),
], ids=["int-const", "slice", "list", "list-const", "mask"])
def test_second_backward_through_setitem_raises(setitem):
    x = _leaf()
    w = rg.tensor(np.ones(2), requires_grad=True)
    z = x.clone()
    setitem(z, w)
    y = z.sum()
    y.backward()
    with pytest.raises(RuntimeError, match=SECOND):
        y.backward()


def test_setitem_graph_retained_runs_twice():
    x = _leaf()
    w = rg.tensor(np.ones(2), requires_grad=True)
    z = x.clone()
    z[[0, 2]] = w * 2
    y = (z * z).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * 2 * (2 * np.ones(2)) * 2)


# -- calling a grad_fn -------------------------------------------------------

def test_grad_fn_call_with_wrong_number_of_arguments_raises_type_error():
    x = _leaf()
    y = x * x
    with pytest.raises(TypeError, match="expected 1 arguments, got 0 instead"):
        y.grad_fn()
    with pytest.raises(TypeError, match="expected 1 arguments, got 2 instead"):
        y.grad_fn(rg.ones(4), rg.ones(4))
    with pytest.raises(TypeError, match="argument 0 is not a Variable"):
        y.grad_fn(3.0)
    gx, gy = y.grad_fn(rg.ones(4))         # (grad * other, grad * self)
    np.testing.assert_allclose(gx.numpy(), x.detach().numpy())
    np.testing.assert_allclose(gy.numpy(), x.detach().numpy())
    assert y.grad_fn(None) == (None, None)


# -- materialize_grads -------------------------------------------------------

def test_materialize_grads_zeros_require_grad_under_create_graph():
    x, unused = _leaf(), _leaf()
    y = (x * x).sum()
    gx, gu = rg.autograd.grad(y, [x, unused], create_graph=True, materialize_grads=True)
    assert gu.requires_grad and gu.is_leaf
    np.testing.assert_allclose(gu.detach().numpy(), np.zeros(4))
    assert gx.requires_grad
    gx2, gu2 = rg.autograd.grad((x * x).sum(), [x, unused], materialize_grads=True)
    assert not gu2.requires_grad


def test_materialize_grads_with_unused_gradient_edge_input_raises():
    x, unused = _leaf(), _leaf()
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given input "
                                           "is a GradientEdge"):
        rg.autograd.grad(y, [x, get_gradient_edge(unused * 1)], materialize_grads=True,
                         retain_graph=True)
    # a GradientEdge that does receive a gradient is fine
    (g,) = rg.autograd.grad(y, [get_gradient_edge(x)], materialize_grads=True)
    np.testing.assert_allclose(g.numpy(), 2 * np.ones(4))


# -- the engine runs only what the requested inputs need ---------------------

class _Tracked(rg.autograd.Function):
    ran = []

    @staticmethod
    def forward(ctx, a, tag):
        ctx.tag = tag
        return a * 2

    @staticmethod
    def backward(ctx, g):
        _Tracked.ran.append(ctx.tag)
        return g * 2, None


def test_engine_skips_nodes_the_inputs_do_not_need_grad():
    a, b = _leaf(), _leaf()
    _Tracked.ran = []
    out = (_Tracked.apply(a, "a") + _Tracked.apply(b, "b")).sum()
    (ga,) = rg.autograd.grad(out, [a])
    assert _Tracked.ran == ["a"]
    np.testing.assert_allclose(ga.numpy(), 2 * np.ones(4))


def test_engine_skips_nodes_the_inputs_do_not_need_backward_inputs():
    a, b = _leaf(), _leaf()
    _Tracked.ran = []
    out = (_Tracked.apply(a, "a") * _Tracked.apply(b, "b")).sum()
    out.backward(inputs=[b])
    assert _Tracked.ran == ["b"]
    assert a.grad is None and b.grad is not None


def test_engine_stops_at_a_non_leaf_input():
    a = _leaf()
    _Tracked.ran = []
    mid = _Tracked.apply(a, "below")
    out = (mid * 3).sum()
    (g,) = rg.autograd.grad(out, [mid])
    assert _Tracked.ran == []
    np.testing.assert_allclose(g.numpy(), 3 * np.ones(4))


# -- grad_outputs for GradientEdge outputs ------------------------------------

def test_gradient_edge_output_checks_grad_output_shape_and_dtype():
    x = _leaf(3)
    y = x * 2
    e = get_gradient_edge(y)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\]"):
        rg.autograd.grad(e, x, rg.ones(2, dtype=np.float64), retain_graph=True)
    with pytest.raises(RuntimeError, match="For complex Tensors, both grad_output and output are "
                                           "required to have the same dtype"):
        rg.autograd.grad(e, x, rg.tensor(np.ones(3, dtype=np.complex128)), retain_graph=True)
    # a real gradient of another dtype is cast, as in torch
    (g,) = rg.autograd.grad(e, x, rg.tensor(np.ones(3, dtype=np.float32)), retain_graph=True)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g.numpy(), 2 * np.ones(3))


# -- warnings -----------------------------------------------------------------

@pytest.fixture
def warn_always():
    rg.set_warn_always(True)
    yield
    rg.set_warn_always(False)


def test_backward_with_create_graph_warns_once_unless_warn_always(run_python):
    # torch's TORCH_WARN_ONCE: once per process; every time under set_warn_always
    code = """
import warnings, retrograd as rg
x = rg.ones(2, requires_grad=True)
def count():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            (x * x).sum().backward(create_graph=True)
    return sum("reference cycle" in str(m.message) for m in w)
first = count()
rg.set_warn_always(True)
print(first, count(), rg.is_warn_always_enabled())
"""
    res = run_python(code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["1", "3", "True"]


def test_backward_with_create_graph_warns_about_the_reference_cycle(warn_always):
    x = _leaf()
    with pytest.warns(UserWarning, match="Using backward\\(\\) with create_graph=True will create "
                                         "a reference cycle") as rec:
        (x * x).sum().backward(create_graph=True)
    assert rec[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rg.autograd.grad((x * x).sum(), x, create_graph=True)   # grad() does not warn
        (x * x).sum().backward()                                   # nor a plain backward


def test_reading_grad_of_a_non_leaf_warns():
    x = _leaf()
    y = x * 2
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf "
                                         "Tensor is being accessed") as rec:
        assert y.grad is None
    assert rec[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None                   # a leaf
        y.retain_grad()
        assert y.grad is None                   # retains grad
        y.sum().backward()
        assert y.grad is not None
        z = rg.ones(2)
        assert z.grad is None                   # no graph at all


# -- numpy() -----------------------------------------------------------------

def test_numpy_of_a_tensor_that_requires_grad_works_under_no_grad():
    x = _leaf()
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    with rg.no_grad():
        a = x.numpy()
    np.testing.assert_allclose(a, [1.0, 2.0, 3.0, 4.0])
    with rg.inference_mode():
        assert x.numpy() is a


def test_is_multithreading_enabled():
    assert rg.autograd.is_multithreading_enabled() is True
    with rg.autograd.set_multithreading_enabled(False):
        assert rg.autograd.is_multithreading_enabled() is False
    assert rg.autograd.is_multithreading_enabled() is True
    assert "is_multithreading_enabled" in rg.autograd.__all__


def test_saved_index_of_advanced_indexing_is_freed_by_backward():
    x = _leaf()
    y = x[[0, 2]]
    np.testing.assert_array_equal(np.asarray(y.grad_fn._saved_index), [0, 2])
    y.sum().backward()
    with pytest.raises(RuntimeError, match=SECOND):
        y.grad_fn._saved_index
    z = x[1:3]                 # basic indexing saves no tensor: still readable
    z.sum().backward()
    assert z.grad_fn._saved_index == slice(1, 3)


# -- messages of grad()/backward() argument errors, as torch ------------------

def test_empty_inputs_and_unused_input_messages():
    x, unused = _leaf(), _leaf()
    with pytest.raises(RuntimeError, match="^`inputs` argument to `backward\\(\\)` cannot be empty"):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="^`inputs` argument to `grad\\(\\)` cannot be empty"):
        rg.autograd.grad((x * 2).sum(), [])
    with pytest.raises(RuntimeError, match="^The differentiated Tensor at index 1 appears to not "
                                           "have been used in the graph. Set allow_unused=True"):
        rg.autograd.grad((x * 2).sum(), [x, unused])


def test_only_inputs_false_warns_as_deprecated():
    x = _leaf()
    with pytest.warns(UserWarning, match="only_inputs argument is deprecated and is ignored"):
        rg.autograd.grad((x * 2).sum(), [x], only_inputs=False)
