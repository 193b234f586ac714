"""Masks and shape constants under rg.compile: the masks of backward
formulas (maximum, clamp, softplus, amax, ...) are ops, replayed per call,
and the indices, masks and fills a composite makes from shapes alone
(roll, pad, tril, triu) are factories the program makes per call. So these
functions compile, and stay right on values the trace never saw."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.compile
import retrograd.nn.functional as F

_CASES = {
    "maximum": lambda x: rg.maximum(x, x.flip(0) * 0.5),
    "clamp": lambda x: x.clamp(-0.3, 0.4) * x,
    "clamp_tensor_bounds": lambda x: rg.clamp(x, x * 0 - 0.2, 0.5),
    "softplus": lambda x: F.softplus(x * 3.0, beta=2.0, threshold=1.0),
    "amax_ties": lambda x: (x.round() * x.sign()).amax(dim=0),
    "std": lambda x: x.std(dim=1) * x.mean(),
    "norm1": lambda x: x.norm(p=1) + x.norm(),
    "pow_tensor": lambda x: x.abs().add(0.1) ** x.cos(),
    "atan2": lambda x: rg.atan2(x, x.flip(1)),
    "tril_attention": lambda x: (x @ x.T).tril().softmax(1),
    "triu": lambda x: (x.triu(1) * x).sum(1),
    "roll": lambda x: x.roll(1, 0) * x.roll(-2, 1),
    "pad_reflect": lambda x: rg.pad(x[None], (2, 1), mode="reflect") ** 2,
    "pad_constant": lambda x: F.pad(x, (1, 2, 0, 1), value=0.5) * 3,
}


@pytest.mark.parametrize("name", list(_CASES))
def test_compiles_and_matches_eager_on_new_values(name):
    fn = _CASES[name]
    f = rg.compile(fn, backend="numpy")
    rng = np.random.default_rng(11)
    for call in range(4):
        a = rng.standard_normal((4, 5)) * (1 + call)
        if call == 3:
            a[0, :] = a[1, :]            # ties
        x, xe = rg.tensor(a, requires_grad=True), rg.tensor(a, requires_grad=True)
        out, want = f(x), fn(xe)
        w = rg.tensor(rng.standard_normal(want.shape))
        (out * w).sum().backward()
        (want * w).sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(x.grad.numpy(), xe.grad.numpy(), rtol=1e-12, atol=1e-14)
    assert f.cache_info() == {"compiled": 1, "eager": 0}

