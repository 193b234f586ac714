"""The implicit gradient of a one-element output (``loss.backward()``,
``grad(loss, x)``): ones of the output's shape and dtype, a fresh array each
time, as torch."""
import numpy as np
import pytest
import torch

import retrograd as rg


@pytest.mark.parametrize("shape", [(), (1,), (1, 1, 1)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_implicit_ones_match_torch(shape, dtype):
    a = np.full(shape, 0.75, dtype=dtype)
    x, tx = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (x * 3.0).backward()
    (tx * 3.0).backward()
    assert x.grad.shape == tuple(tx.grad.shape) and x.grad.numpy().dtype == np.dtype(dtype)
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    (g,) = rg.autograd.grad(x.exp(), x)
    (tg,) = torch.autograd.grad(tx.exp(), tx)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-3)


@pytest.mark.parametrize("dtype", [">f8", ">f4"])
def test_implicit_ones_of_byte_swapped_data_keep_its_dtype(dtype):
    # (the root gradient is written in C for native float32 and float64;
    # other layouts take NumPy's fill, in the output's own dtype)
    x = rg.tensor(np.array([0.5], dtype), requires_grad=True)
    x.backward()
    assert x.grad.numpy().dtype == np.dtype(dtype) and x.grad.tolist() == [1.0]


def test_a_leafs_own_backward_gets_a_fresh_ones_each_time():
    # x.backward() on a leaf makes the ones x.grad itself: changing it must
    # not change the next backward's ones
    x = rg.tensor(2.0, requires_grad=True)
    x.backward()
    first = x.grad
    with rg.no_grad():
        first.mul_(10.0)
    y = rg.tensor(5.0, requires_grad=True)
    y.backward()
    assert y.grad.item() == 1.0 and first.item() == 10.0
    x.backward()
    assert x.grad.item() == 11.0


def test_outputs_the_implicit_gradient_does_not_cover_still_raise():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        rg.tensor(1.0).backward()
    (x.sum() * 2).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("retain", [None, False, True, 0, 1])
def test_tensor_backward_frees_or_keeps_the_graph_as_autograd_backward(retain):
    # Tensor.backward() without a gradient takes a path of its own; it must
    # free (or keep) the graph exactly as torch.autograd.backward does
    def run(lib, call):
        x = lib.tensor(np.array([0.5, -1.5]), requires_grad=True)
        y = (x.sin() * x).sum()
        call(lib, y)
        try:
            call(lib, y)
            second = "ran"
        except RuntimeError as exc:
            second = "raised" if "second time" in str(exc) else str(exc)
        return x.grad.detach().numpy(), second

    def method(lib, y):
        y.backward(retain_graph=retain)

    def function(lib, y):
        lib.autograd.backward(y, retain_graph=retain)

    tg, tsecond = run(torch, method)
    for call in (method, function):
        g, second = run(rg, call)
        assert second == tsecond
        np.testing.assert_allclose(g, tg, rtol=1e-12)


def test_tensor_backward_without_gradient_checks_inputs_and_create_graph_as_before():
    x = rg.tensor(1.5, requires_grad=True)
    w = rg.tensor(2.0, requires_grad=True)
    (x * w).backward(inputs=[x])
    assert w.grad is None and x.grad.item() == 2.0
    rg.set_warn_always(True)      # torch warns once per process otherwise
    try:
        with pytest.warns(UserWarning, match="reference cycle"):
            (x * x * w).backward(create_graph=True)
    finally:
        rg.set_warn_always(False)
    assert x.grad.requires_grad
