"""Tensor methods with torch's varargs forms (reshape(2, 3), permute(1, 0),
expand(2, -1), .T, .mT, flatten) reach the table's ops: same values, same
backward node, same gradients."""
import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

X = np.arange(24.0).reshape(2, 3, 4) / 7.0

CASES = [
    ("reshape_varargs", lambda t: t.reshape(6, 4), lambda t: rg.reshape(t, (6, 4)), "ReshapeBackward0"),
    ("reshape_tuple", lambda t: t.reshape((4, -1)), lambda t: rg.reshape(t, (4, -1)), "ReshapeBackward0"),
    ("view_varargs", lambda t: t.view(2, 12), lambda t: rg.view(t, (2, 12)), "ViewBackward0"),
    ("permute_varargs", lambda t: t.permute(2, 0, 1), lambda t: rg.permute(t, (2, 0, 1)), "PermuteBackward0"),
    ("permute_tuple", lambda t: t.permute((1, 2, 0)), lambda t: rg.permute(t, (1, 2, 0)), "PermuteBackward0"),
    ("T", lambda t: t.T, lambda t: rg.permute(t, (2, 1, 0)), "PermuteBackward0"),
    ("mT", lambda t: t.mT, lambda t: rg.transpose(t, -2, -1), "TransposeBackward0"),
    ("transpose", lambda t: t.transpose(0, -1), lambda t: rg.transpose(t, 0, 2), "TransposeBackward0"),
    ("expand_varargs", lambda t: t[:, :1].expand(2, 5, -1), lambda t: rg.expand(t[:, :1], (2, 5, 4)),
     "ExpandBackward0"),
    ("broadcast_to", lambda t: t.broadcast_to((3, 2, 3, 4)), lambda t: rg.broadcast_to(t, (3, 2, 3, 4)),
     "BroadcastToBackward0"),
    ("flatten", lambda t: t.flatten(), lambda t: rg.reshape(t, (-1,)), "ReshapeBackward0"),
    ("sum_positional", lambda t: t.sum(1, True), lambda t: rg.sum(t, dim=1, keepdim=True), "SumBackward0"),
    ("mean_kw", lambda t: t.mean(dim=(0, -1)), lambda t: rg.mean(t, (0, 2)), "MeanBackward0"),
]


@pytest.mark.parametrize("name,method,function,node", CASES, ids=[c[0] for c in CASES])
def test_method_forms(name, method, function, node):
    x = rg.tensor(X, requires_grad=True)
    a = method(x)
    b = function(x)
    assert a.grad_fn.name() == node
    np.testing.assert_array_equal(values(a), values(b))
    v = rg.from_numpy(np.random.default_rng(0).standard_normal(tuple(a.shape)))
    ga, = rg.autograd.grad(a, x, grad_outputs=v)
    gb, = rg.autograd.grad(b, x, grad_outputs=v)
    np.testing.assert_allclose(values(ga), values(gb))


def test_views_share_memory_and_version():
    x = rg.tensor(X.copy())
    for v in (rg.view(x, (6, 4)), rg.transpose(x, 0, 1), rg.permute(x, (2, 1, 0)), x[0, ::-1],
              rg.expand(x[:, :1], (2, 3, 4)), rg.broadcast_to(x, (2, 2, 3, 4))):
        assert np.shares_memory(values(v), values(x))
        assert v._base is x


def test_shape_errors_are_runtime_errors():
    x = rg.tensor(X)
    for bad in (lambda: rg.reshape(x, (5, 5)), lambda: rg.expand(x, (3, 3, 4)),
                lambda: rg.broadcast_to(x, (2, 2, 4)), lambda: rg.permute(x, (0, 1)),
                lambda: rg.permute(x, (0, 0, 1)), lambda: rg.matmul(x, rg.ones((5, 2))),
                lambda: rg.matmul(rg.tensor(1.0), x), lambda: rg.sum(x, (1, -2))):
        with pytest.raises(RuntimeError):
            bad()
    for bad in (lambda: rg.sum(x, 3), lambda: rg.transpose(x, 0, 3), lambda: rg.transpose(rg.tensor(1.0), 0, 1),
                lambda: rg.mean(x, -4)):
        with pytest.raises(IndexError, match="Dimension out of range"):
            bad()
