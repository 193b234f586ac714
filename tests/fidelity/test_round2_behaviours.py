"""Behaviours from the second fidelity round, each side by side with torch
2.13 (the oracle) where torch is installed."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")


def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if "use_reentrant" in str(w.message)]


@pytest.mark.parametrize("lib", ["rg", "torch"])
def test_checkpoint_without_use_reentrant_warns(lib):
    if lib == "rg":
        model, x = rg.nn.Sequential(rg.nn.Linear(2, 2), rg.nn.ReLU()), rg.randn(3, 2, requires_grad=True)
        seq, one = checkpoint_sequential, checkpoint
    else:
        from torch.utils.checkpoint import checkpoint as one, checkpoint_sequential as seq
        model, x = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU()), torch.randn(3, 2, requires_grad=True)
    assert len(_warned(lambda: seq(model, 1, x))) == 1
    assert len(_warned(lambda: one(model, x))) == 1
    assert _warned(lambda: seq(model, 1, x, use_reentrant=False)) == []
    assert _warned(lambda: one(model, x, use_reentrant=False)) == []


@pytest.mark.parametrize("slope,refused", [(-0.1, True), (0.0, False), (0.2, False)])
def test_inplace_leaky_relu_with_a_negative_slope_refuses_at_backward(slope, refused):
    for lib, fn in ((rg, F.leaky_relu_), (torch, torch.nn.functional.leaky_relu_)):
        x = lib.tensor(np.array([-1.0, 2.0]), requires_grad=True)
        y = x.clone()
        fn(y, slope)                     # the forward runs in both
        if refused:
            with pytest.raises(RuntimeError, match="negative slope"):
                y.sum().backward()
        else:
            y.sum().backward()
            np.testing.assert_allclose(np.asarray(x.grad), [slope, 1.0])


def test_inplace_leaky_relu_of_a_tensor_without_grad_is_fine():
    y = rg.tensor([-1.0, 2.0])
    F.leaky_relu_(y, -0.5)
    assert y.tolist() == [0.5, 2.0]


def test_detach_function_form():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    d = rg.detach(x)
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 5.0                              # shares the data, as torch.detach
    assert x.tolist() == [5.0, 2.0]
    with pytest.raises(TypeError, match="must be Tensor"):
        rg.detach([1.0])


@pytest.mark.parametrize("index", [
    [[0, 1], [1, 0]],                        # a list of lists: a tuple of index lists
    [[0, 1], slice(None)],
    [0, [1, 2]],
    [slice(1, None), None],
    [0, 1],                                  # plain integers: one index array
    [[0, 1]],
])
def test_list_indices_read_and_write_as_torch(index):
    data = np.arange(12.0).reshape(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # torch's deprecation of non-tuple sequences
        want = torch.tensor(data)[index]
        got = rg.tensor(data)[index]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        x, tx = rg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        y, ty = x * 1.0, tx * 1.0
        y[index] = 0.0
        ty[index] = 0.0
        (y * y).sum().backward()
        (ty * ty).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("case", [
    lambda L, t: L.select(t, 1, -1),
    lambda L, t: t.select(0, 2),
    lambda L, t: L.unflatten(t, 1, (2, 2)),
    lambda L, t: t.unflatten(0, (-1, 1)),
])
def test_select_and_unflatten_as_torch(case):
    data = np.arange(12.0).reshape(3, 4)
    x, tx = rg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    y, ty = case(rg, x), case(torch, tx)
    assert tuple(y.shape) == tuple(ty.shape) and y._is_view() and ty._is_view()
    w = np.random.default_rng(0).standard_normal(tuple(ty.shape))
    (y * rg.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("bad", [
    lambda L, t: L.select(t, 0, 3),
    lambda L, t: L.select(t, 2, 0),
    lambda L, t: L.unflatten(t, 1, (3, 2)),
    lambda L, t: L.unflatten(t, 1, ()),
])
def test_select_and_unflatten_errors_as_torch(bad):
    data = np.zeros((3, 4))
    with pytest.raises(Exception) as want:
        bad(torch, torch.tensor(data))
    with pytest.raises(type(want.value)):
        bad(rg, rg.tensor(data))


def test_singular_det_gradient_is_the_adjugate():
    # torch 2.13 gives 0 for a singular matrix of rank n-1; the true gradient
    # is the adjugate's transpose (finite differences agree), which retrograd gives
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])
    x = rg.tensor(a, requires_grad=True)
    rg.linalg.det(x).backward()
    fd = np.zeros_like(a)
    for i in range(3):
        for j in range(3):
            d = np.zeros_like(a)
            d[i, j] = 1e-6
            fd[i, j] = (np.linalg.det(a + d) - np.linalg.det(a - d)) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), fd, atol=1e-6)


@pytest.mark.parametrize("order", ["first", "last", "both"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_skips_legacy_empty_1d_tensors_as_torch(order, dim):
    a = np.arange(6.0).reshape(2, 3)
    for lib in (rg, torch):
        x = lib.tensor(a, requires_grad=True)
        e = lib.tensor(np.zeros(0), requires_grad=True)
        parts = {"first": [e, x], "last": [x, e], "both": [e, x, e]}[order]
        y = lib.cat(parts, dim)
        w = lib.tensor(np.arange(float(np.prod(tuple(y.shape)))).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        if lib is rg:
            got = (tuple(y.shape), x.grad.numpy().copy(), tuple(e.grad.shape))
        else:
            want = (tuple(y.shape), x.grad.numpy().copy(), tuple(e.grad.shape))
    assert got[0] == want[0] and got[2] == want[2]
    np.testing.assert_array_equal(got[1], want[1])


def test_cat_of_legacy_empty_keeps_its_dtype_in_the_promotion():
    got = rg.cat([rg.zeros(0, dtype=rg.float64), rg.ones(2, 3, dtype=rg.float32)])
    want = torch.cat([torch.zeros(0, dtype=torch.float64), torch.ones(2, 3)])
    assert str(got.dtype) == str(want.dtype).replace("torch.", "")


def _graph(fn):
    if fn is None:
        return "None"
    name = fn.name().replace("torch::autograd::", "")
    return name + "(" + ", ".join(_graph(n) for n, _ in fn.next_functions) + ")"


@pytest.mark.parametrize("shape", [(4, 3), (3,), (5, 4, 3), (2, 0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_records_torchs_nodes(shape, bias):
    graphs, values = [], []
    for lib in (rg, torch):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2, bias=bias)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=m.weight.dtype))
            if bias:
                m.bias.copy_(lib.tensor([0.25, -0.5], dtype=m.weight.dtype))
        x = lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), dtype=m.weight.dtype,
                       requires_grad=True)
        y = m(x)
        (y * y).sum().backward()
        graphs.append(_graph(y.grad_fn))
        values.append((y.detach().numpy(), x.grad.numpy(), m.weight.grad.numpy()))
    if len(shape) == 2 or bias:
        assert graphs[0] == graphs[1]
    for a, b in zip(*values):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_addmm_matches_torch_with_scales_and_a_nan_ignored_at_beta_zero():
    a, b = np.random.default_rng(1).standard_normal((2, 3, 4))[:2], np.random.default_rng(2).standard_normal((4, 2))
    c = np.array([np.nan, 1.0])
    out = rg.addmm(rg.tensor(c), rg.tensor(a[0]), rg.tensor(b), beta=0, alpha=2.0)
    ref = torch.addmm(torch.tensor(c), torch.tensor(a[0]), torch.tensor(b), beta=0, alpha=2.0)
    np.testing.assert_allclose(out.numpy(), ref.numpy())
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        rg.addmm(rg.ones(2), rg.ones(2, 3), rg.ones(4, 2))


def test_inference_tensors_have_no_version_counter():
    with rg.inference_mode():
        t = rg.ones(3)
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        t._version
    assert rg.ones(2)._version == 0


def test_inplace_on_a_view_made_in_inference_mode_names_inference_mode():
    for lib in (rg, torch):
        x = lib.ones(3, requires_grad=True)
        with lib.inference_mode():
            v = x.view(3)
        with pytest.raises(RuntimeError, match="A view was created in inference mode and is being modified "
                                               "inplace in normal mode"):
            v.add_(1)


def test_real_tensors_list_imag_and_refuse_it():
    for lib in (rg, torch):
        x = lib.ones(2)
        assert "imag" in dir(x) and "real" in dir(x)
        assert x.real is x or bool((x.real == x).all())
        with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
            x.imag


@pytest.mark.parametrize("call", [
    lambda L, x: L.add(x, [1.0, 2.0, 3.0]), lambda L, x: L.atan2(x, [1.0, 2.0, 3.0]),
    lambda L, x: L.exp(2.0), lambda L, x: L.exp([1.0]), lambda L, x: L.maximum(1.0, x),
    lambda L, x: L.cat([x, [1.0]]), lambda L, x: L.stack([x, 1.0]), lambda L, x: L.gather(x, 0, [0]),
    lambda L, x: x.mul((1.0, 2.0, 3.0)), lambda L, x: L.nn.functional.mse_loss(x, [1.0, 2.0, 3.0]),
    lambda L, x: L.nn.functional.softplus(1.0), lambda L, x: L.sum(10), lambda L, x: L.narrow(True, 0, 0, 1),
])
def test_a_list_or_a_number_where_torch_wants_a_tensor_is_a_type_error(call):
    for lib in (rg, torch):
        with pytest.raises((TypeError, AttributeError)):
            call(lib, lib.ones(3))


def test_numbers_and_arrays_still_taken_where_torch_takes_a_scalar():
    x = rg.tensor([1.0, 2.0])
    assert rg.add(2, x).tolist() == [3.0, 4.0] and rg.pow(2, x).tolist() == [2.0, 4.0]
    assert (2 - x).tolist() == [1.0, 0.0] and rg.mul(x, 3).tolist() == [3.0, 6.0]
    assert rg.maximum(x, np.array([1.5, 1.5])).tolist() == [1.5, 2.0]
    assert rg.exp(np.zeros(2)).tolist() == [1.0, 1.0]
    # NumPy's functions keep NumPy's meaning for lists and leading numbers
    assert np.maximum(1.5, x).tolist() == [1.5, 2.0] and np.add(x, [1, 1]).tolist() == [2.0, 3.0]
    assert np.maximum(1.5, rg.tensor([1.0], dtype=rg.float32)).dtype == rg.float32


def test_gradcheck_reports_the_backward_mismatch_before_the_forward_ad_one():
    class Wrong(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

        @staticmethod
        def jvp(ctx, t):
            return t * 4

    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(rg.autograd.GradcheckError, match="Jacobian mismatch") as info:
        rg.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True)
    assert "forward" not in str(info.value).split("\n")[0].lower()


def test_a_custom_function_the_requested_inputs_do_not_need_is_not_run():
    class MustNotRun(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("this node should not be executed")

    y, z = rg.randn(1, requires_grad=True), rg.randn(1, requires_grad=True)
    out = MustNotRun.apply(rg.randn(1, requires_grad=True) * 2)
    assert rg.autograd.grad(out, (y,), allow_unused=True) == (None,)
    out = MustNotRun.apply(rg.randn(1, requires_grad=True) * 2)
    gy, gz = rg.autograd.grad(out + z, (y, z), allow_unused=True)
    assert gy is None and gz.tolist() == [1.0]
    out = MustNotRun.apply(rg.randn(1, requires_grad=True) * 2)
    rg.autograd.backward(out, inputs=(y,))
    assert y.grad is None
