"""SavedVariable: version checks at unpack, and saving an op's own output
without a reference cycle."""
import gc
import re
import weakref

import numpy as np
import pytest

import retrograd as rg


def leaf(values=(1.0, 2.0)):
    return rg.tensor(list(values), requires_grad=True)


def _modified_message(node_name, shape, now, saved):
    return (re.escape(f"tensor of shape {shape}") + r".*" + re.escape(f"saved by {node_name}")
            + r".*" + re.escape(f"at version {now}; expected version {saved}"))


def test_inplace_change_of_a_saved_output():
    x = leaf()
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=_modified_message("ExpBackward0", "(2,)", 1, 0)):
        y.sum().backward()


def test_inplace_change_of_a_saved_input_names_node_shape_and_versions():
    x = rg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    h = x * 1
    y = h * h
    h.mul_(2)
    h.mul_(2)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert re.search(_modified_message("MulBackward0", "(1, 3)", 2, 0), msg)
    assert "inplace" in msg and "clone" in msg          # says what to do


def test_inplace_change_of_a_saved_constant():
    x = leaf()
    c = rg.tensor([3.0, 4.0])
    y = x * c
    c.add_(1)
    with pytest.raises(RuntimeError, match=_modified_message("MulBackward0", "(2,)", 1, 0)):
        y.sum().backward()


def test_change_through_a_view_or_detach_is_seen():
    x = leaf([1.0, 2.0, 3.0])
    y = x.sigmoid()
    with rg.no_grad():
        y[1:].mul_(2)
    with pytest.raises(RuntimeError, match="SigmoidBackward0"):
        y.sum().backward()
    z = x.tanh()
    z.detach().mul_(0)
    with pytest.raises(RuntimeError, match="TanhBackward0"):
        z.sum().backward()


def test_unpacking_saved_property_checks_the_version_too():
    x = leaf()
    y = x.exp()
    assert y.grad_fn._saved_result.tolist() == y.tolist()
    with rg.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="ExpBackward0"):
        y.grad_fn._saved_result


def test_unchanged_saved_tensors_unpack_fine_after_unrelated_inplace():
    x = leaf()
    y = x.exp()
    other = x * 1
    other.add_(1)                 # not saved by anything y needs
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]))


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "relu"])
def test_saved_output_unpacks_with_its_node_as_grad_fn(op):
    x = leaf([0.5, -1.0])
    y = getattr(x, op)()
    saved = y.grad_fn._saved_result
    assert saved is not y                        # rebuilt, not the output tensor itself
    assert saved.grad_fn is y.grad_fn
    assert saved.tolist() == y.tolist()
    assert np.shares_memory(saved.detach().numpy(), y.detach().numpy())


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "relu"])
def test_saving_the_output_creates_no_cycle(op):
    gc.collect()
    gc.disable()
    try:
        x = leaf([0.5, -1.0])
        y = getattr(x, op)()
        node = weakref.ref(y.grad_fn)
        arr = weakref.ref(y.detach().numpy())
        del y
        assert node() is None and arr() is None      # freed by reference counting alone
    finally:
        gc.enable()


def test_saved_leaf_and_saved_non_leaf_unpack_to_the_right_tensors():
    a = leaf()
    h = a * 2
    y = a * h
    assert y.grad_fn._saved_self is a
    saved_other = y.grad_fn._saved_other
    assert saved_other.grad_fn is h.grad_fn and saved_other.tolist() == h.tolist()


def test_saved_tensor_versions_survive_retain_graph():
    x = leaf()
    y = x.exp()
    loss = y.sum()
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    with rg.no_grad():
        y.add_(0)                     # any in-place bumps the version
    with pytest.raises(RuntimeError, match="expected version 0"):
        loss.backward()
