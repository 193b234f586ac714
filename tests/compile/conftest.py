import numpy as np
import pytest

import retrograd as rg


@pytest.fixture
def assert_matches_eager():
    """``check(compiled, fn, a, ...)``: a call of ``compiled`` on a tensor
    of ``a`` gives ``fn``'s scalar result and, by backward, its gradient
    (within the tolerances given)."""
    def check(compiled, fn, a, rtol=1e-12, grad_rtol=1e-12, atol=0.0):
        x, x2 = rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
        out, want = compiled(x), fn(x2)
        out.backward()
        want.backward()
        np.testing.assert_allclose(out.item(), want.item(), rtol=rtol, atol=atol)
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=grad_rtol, atol=atol)
    return check
