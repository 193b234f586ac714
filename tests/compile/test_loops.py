"""The numpy backend's C loops (_loops.pyx): relu and relu's backward give
NumPy's values bit for bit, special values included, fall back to NumPy
for arrays they do not take, and a compiled MLP's programs use them (relu's
backward as one step, log_softmax as one kernel) with eager's values."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.compile  # noqa: F401
from retrograd.compile import _kernels, _loops

SPECIAL = [0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e308, -1e308]


def _special(dtype, n, order=1):
    # (1e308 is inf in float32; inf * 0 is NaN: NumPy warns of both)
    with np.errstate(all="ignore"):
        return np.resize(np.array(SPECIAL[::order] + [0.0, 2.0] * (order < 0), dtype), n)


def _same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 7, 64, 1000, 70000])     # (the last: without the GIL)
def test_relu_is_numpys_maximum_bit_for_bit(dtype, n):
    x = _special(dtype, n)
    with np.errstate(all="ignore"):
        x = x * np.resize([1, 2, 3], n).astype(dtype)
    out = np.empty_like(x)
    assert _loops.relu(x, out) is out
    assert _same_bits(out, np.maximum(x, 0))
    y = x.copy()
    _loops.relu(y, y)                                       # in place
    assert _same_bits(y, np.maximum(x, 0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 9, 1000, 70000])
def test_mask_mul_is_grad_times_the_nonzero_mask_bit_for_bit(dtype, n):
    rng = np.random.default_rng(0)
    g = _special(dtype, n)
    y = _special(dtype, n, order=-1)
    rng.shuffle(y)
    with np.errstate(all="ignore"):
        want = np.multiply(g, y != 0)
    out = np.empty_like(g)
    assert _same_bits(_loops.mask_mul(g, y, out), want)
    h = g.copy()
    assert _same_bits(_loops.mask_mul(h, y, h), want)       # over the gradient


def test_arrays_the_loops_do_not_take_fall_back_to_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 8))
    cases = [x[:, ::2], x.T, x.astype(">f8"), x.astype(np.int64), x.astype(np.float16)]
    for a in cases:
        out = np.empty(a.shape, np.result_type(a))
        np.testing.assert_array_equal(_loops.relu(a, out), np.maximum(a, 0))
        g = np.ones(a.shape)
        np.testing.assert_array_equal(_loops.mask_mul(g, a, np.empty(a.shape)), g * (a != 0))
    # a mask of another shape broadcasts, as NumPy's multiply does
    g = rng.standard_normal((6, 8))
    np.testing.assert_array_equal(_loops.mask_mul(g, x[0], np.empty((6, 8))), g * (x[0] != 0))
    with pytest.raises(ValueError):
        _loops.relu(x, np.empty((8, 6)))                    # NumPy's own error


def test_an_mlp_compiles_relu_backward_as_one_step_and_log_softmax_as_a_kernel():
    rng = np.random.default_rng(2)
    ws = [rng.standard_normal((20, 16)) / 4, rng.standard_normal((16, 5)) / 4]
    x = rng.standard_normal((8, 20))

    def loss(x, w0, w1):
        return -(x @ w0).relu().matmul(w1).log_softmax(1)[:, 0].sum()

    f = rg.compile(loss, backend="numpy")
    for _ in range(2):
        got = [rg.tensor(w, requires_grad=True) for w in ws]
        want = [rg.tensor(w, requires_grad=True) for w in ws]
        out = f(rg.tensor(x), *got)
        ref = loss(rg.tensor(x), *want)
        out.backward()
        ref.backward()
        assert out.item() == ref.item()
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.grad.numpy(), w.grad.numpy())
    (entry,) = f._cache.values()
    fwd, bwd = entry.progs
    assert any(st.name == _kernels.MASK_MUL for st in bwd.steps)
    assert not any(st.name == "ne" for st in bwd.steps)
    assert "log_softmax" in [st.name for st in fwd.steps]
    assert "_W(" not in fwd.source       # (every step a kernel: none runs the op on tensors)
