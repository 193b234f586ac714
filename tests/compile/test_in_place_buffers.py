"""The numpy backend writes an elementwise step's result over an operand
that dies at that step (one array fewer streamed through memory). These
tests pin where it may and where it must not: a value still read later
(through a view, as a saved value of the backward, as an argument or a
result) keeps its buffer, and every result equals eager's."""
import numpy as np
import pytest

import retrograd as rg
import retrograd.compile


def _entry(f):
    (entry,) = f._cache.values()
    return entry


def _eager_and_compiled(fn, make_args, calls=3):
    cf = rg.compile(fn, backend="numpy")
    rng = np.random.default_rng(7)
    for _ in range(calls):
        arrays = make_args(rng)
        want_args = [rg.tensor(a, requires_grad=True) for a in arrays]
        got_args = [rg.tensor(a, requires_grad=True) for a in arrays]
        want, got = fn(*want_args), cf(*got_args)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
        want.sum().backward()
        got.sum().backward()
        for w, g in zip(want_args, got_args):
            np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=1e-12, atol=1e-12)
        for a, t in zip(arrays, got_args):
            np.testing.assert_array_equal(t.detach().numpy(), a)       # arguments untouched
    # (a program that gave other values than eager at trace time would have
    # been dropped for an eager run of the key)
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
    return cf


def _layer_args(rng):
    return [rng.standard_normal((64, 48)), rng.standard_normal((48, 40)), rng.standard_normal(40)]


def test_bias_add_and_relu_after_a_matmul_write_over_its_result():
    def layer(x, w, b):
        return ((x @ w + b).relu() * 2.0 - 1.0).sum(1)
    cf = _eager_and_compiled(layer, _layer_args)
    fwd, bwd = _entry(cf).progs
    # + b and relu over the matmul's buffer (* 2 and - 1 may be a fused chunk)
    assert fwd.in_place >= 2


def test_a_value_with_a_view_read_later_keeps_its_buffer():
    def f(x, w, b):
        y = x @ w
        first_row = y[0]                 # a view of y, read after y + b
        z = (y + b).tanh()
        return z.sum(0) + first_row
    _eager_and_compiled(f, _layer_args)


def test_a_value_the_backward_reads_is_not_written_over():
    def f(x, w, b):
        y = (x @ w).tanh()               # tanh's backward reads its result
        p = y @ w.T                      # (a step between: no fused chunk)
        z = y * 3.0                      # y's last use in the forward
        return (p + z @ w.T).sum(0) + b.sum()
    _eager_and_compiled(f, _layer_args)


def test_an_argument_is_never_written_over():
    def f(x, w, b):
        return ((x * 2.0 + 1.0).exp() @ w + b).sum(0)
    cf = _eager_and_compiled(f, _layer_args)
    fwd, _ = _entry(cf).progs
    # x * 2 reads the argument: its result gets a buffer; + 1 and exp may
    # then write over that buffer
    assert fwd.in_place >= 1


def test_retain_graph_backward_twice_reads_intact_saved_values():
    @rg.compile(backend="numpy")
    def f(x, w, b):
        h = (x @ w + b).relu()
        return (h * h).sum()
    rng = np.random.default_rng(3)
    x, w, b = (rg.tensor(a, requires_grad=True) for a in _layer_args(rng))
    loss = f(x, w, b)
    (g1,) = rg.autograd.grad(loss, (w,), retain_graph=True)
    (g2,) = rg.autograd.grad(loss, (w,))
    np.testing.assert_array_equal(g1.numpy(), g2.numpy())
    xe, we, be = (rg.tensor(t.detach().numpy(), requires_grad=True) for t in (x, w, b))
    h = (xe @ we + be).relu()
    (ge,) = rg.autograd.grad((h * h).sum(), (we,))
    np.testing.assert_allclose(g1.numpy(), ge.numpy(), rtol=1e-12)
    assert f.cache_info() == {"compiled": 1, "eager": 0}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_operand_of_another_dtype_is_not_written_over(dtype):
    def f(x, w, b):
        y = x @ w
        m = (y > 0).to(y.dtype)          # a mask, cast: a value of its own
        return (y * m + b).sum(0)
    cf = rg.compile(f, backend="numpy")
    rng = np.random.default_rng(5)
    for _ in range(3):
        arrays = [a.astype(dtype) for a in _layer_args(rng)]
        got = cf(*[rg.tensor(a) for a in arrays]).numpy()
        want = f(*[rg.tensor(a) for a in arrays]).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5)
    assert cf.cache_info() == {"compiled": 1, "eager": 0}
