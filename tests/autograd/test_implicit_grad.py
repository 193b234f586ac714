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
