"""Tensor.backward, autograd.backward and autograd.grad: every argument, and
the misuse errors PyTorch raises (RuntimeError unless torch says otherwise)."""
import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")


def leaf(data, dtype=np.float64):
    return rg.tensor(values(data, dtype=dtype), requires_grad=True)


def tleaf(data):
    return torch.tensor(values(data, dtype=np.float64), requires_grad=True)


def assert_same(a, b, rtol=1e-10, atol=1e-12):
    """``a`` a retrograd Tensor, ``b`` a torch tensor or an array."""
    if hasattr(b, "detach"):
        b = b.detach().numpy()
    np.testing.assert_allclose(values(a), values(b), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# retain_graph

def test_second_backward_without_retain_graph_raises():
    x = leaf([1.0, 2.0, 3.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_second_grad_without_retain_graph_raises():
    x = leaf([1.0, 2.0, 3.0])
    y = x.sin().sum()
    rg.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        rg.autograd.grad(y, x)


def test_retain_graph_accumulates_exactly():
    x = leaf([1.0, 2.0, 3.0])
    y = (x * x * 3.0).sum()
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 12.0, 18.0])
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [12.0, 24.0, 36.0])
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [18.0, 27.0 + 9.0, 54.0])
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_retain_graph_defaults_to_create_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    (g,) = rg.autograd.grad(y, x, create_graph=True)      # keeps the graph
    (g2,) = rg.autograd.grad(y, x)                        # so this works
    np.testing.assert_array_equal(g.detach().numpy(), g2.numpy())


# ---------------------------------------------------------------------------
# create_graph: higher-order derivatives

def _three_derivatives(lib, fn, x):
    y = fn(x).sum()
    (g1,) = lib.autograd.grad(y, x, create_graph=True)
    (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = lib.autograd.grad(g2.sum(), x)
    return g1, g2, g3


XS = [0.3, -1.2, 2.0, 0.7]


@pytest.mark.parametrize("name,fn,analytic", [
    ("cube", lambda t: t ** 3, lambda a: (3 * a ** 2, 6 * a, 6 * np.ones_like(a))),
    ("mul3", lambda t: t * t * t, lambda a: (3 * a ** 2, 6 * a, 6 * np.ones_like(a))),
    ("sin", lambda t: t.sin(), lambda a: (np.cos(a), -np.sin(a), -np.cos(a))),
    ("tanh", lambda t: t.tanh(),
     lambda a: (1 - np.tanh(a) ** 2, -2 * np.tanh(a) * (1 - np.tanh(a) ** 2),
                (1 - np.tanh(a) ** 2) * (6 * np.tanh(a) ** 2 - 2))),
    ("exp_sin", lambda t: (t.sin()).exp(), None),
    ("sigmoid_mul", lambda t: t.sigmoid() * t, None),
])
def test_higher_order_derivatives(name, fn, analytic):
    a = np.array(XS)
    got = _three_derivatives(rg, fn, leaf(a))
    want = _three_derivatives(torch, fn, tleaf(a))
    for g, w in zip(got, want):
        assert_same(g, w)
    if analytic is not None:
        for g, w in zip(got, analytic(a)):
            assert_same(g, w)
    # First and second derivatives are differentiable; the third is not.
    assert got[0].requires_grad and got[1].requires_grad
    assert not got[2].requires_grad


def test_higher_order_matmul():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((3, 4))
    v0 = rng.standard_normal(4)

    def fn(lib, v, Wt):
        return ((Wt @ v).tanh() * (Wt @ v)).sum()

    for_rg = (leaf(v0), rg.tensor(W))
    for_t = (tleaf(v0), torch.tensor(W))
    got, want = [], []
    for lib, (v, Wt), out in ((rg, for_rg, got), (torch, for_t, want)):
        y = fn(lib, v, Wt)
        (g1,) = lib.autograd.grad(y, v, create_graph=True)
        (g2,) = lib.autograd.grad((g1 * g1).sum(), v, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), v)
        out += [g1, g2, g3]
    for g, w in zip(got, want):
        assert_same(g, w, rtol=1e-9)


def test_hessian_vector_product_wrt_matrix():
    rng = np.random.default_rng(1)
    A0, B0 = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    res = []
    for lib, mk in ((rg, leaf), (torch, tleaf)):
        A, B = mk(A0), mk(B0)
        y = ((A @ B).sin() * (A @ B)).sum()
        gA, gB = lib.autograd.grad(y, [A, B], create_graph=True)
        hA, hB = lib.autograd.grad((gA * gA).sum() + gB.sum(), [A, B])
        res.append((gA, gB, hA, hB))
    for g, w in zip(*res):
        assert_same(g, w, rtol=1e-9)


def test_backward_with_create_graph_gives_differentiable_grad():
    x = leaf([1.0, 2.0, 3.0])
    (x * x * x).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    np.testing.assert_allclose(g.detach().numpy(), [3.0, 12.0, 27.0])
    x.grad = None
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0, 18.0])


def test_grad_without_create_graph_returns_plain_tensors():
    x = leaf([1.0, 2.0])
    (g,) = rg.autograd.grad((x * x).sum(), x)
    assert not g.requires_grad and g.grad_fn is None
    assert x.grad is None               # grad() never touches .grad


# ---------------------------------------------------------------------------
# allow_unused, materialize_grads

def test_unused_input_error_names_index():
    x, z = leaf([1.0, 2.0]), leaf([3.0])
    with pytest.raises(RuntimeError, match=r"inputs\[1\]") as info:
        rg.autograd.grad((x * x).sum(), [x, z])
    assert "allow_unused=True" in str(info.value)


def test_allow_unused_returns_none():
    x, z = leaf([1.0, 2.0]), leaf([3.0])
    gx, gz = rg.autograd.grad((x * x).sum(), [x, z], allow_unused=True)
    np.testing.assert_array_equal(gx.numpy(), [2.0, 4.0])
    assert gz is None


def test_materialize_grads():
    x, z = leaf([1.0, 2.0]), leaf([[3.0, 4.0]])
    gx, gz = rg.autograd.grad((x * x).sum(), [x, z], materialize_grads=True)
    np.testing.assert_array_equal(gx.numpy(), [2.0, 4.0])
    assert isinstance(gz, rg.Tensor)
    np.testing.assert_array_equal(gz.numpy(), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="allow_unused"):
        rg.autograd.grad((x * x).sum(), [x, z], materialize_grads=True, allow_unused=False)


def test_unused_input_that_is_a_nonleaf():
    x = leaf([1.0, 2.0])
    m = x * 2.0          # in the graph of nothing we differentiate
    out = (x * 3.0).sum()
    with pytest.raises(RuntimeError, match=r"inputs\[0\]"):
        rg.autograd.grad(out, [m])
    assert rg.autograd.grad(out, [m], allow_unused=True) == (None,)


# ---------------------------------------------------------------------------
# backward(inputs=...)

def test_backward_inputs_restricts_accumulation():
    a, b, c = leaf([1.0, 2.0]), leaf([3.0, 4.0]), leaf([5.0, 6.0])
    out = (a * b * c).sum()
    out.backward(inputs=[b])
    assert a.grad is None and c.grad is None
    np.testing.assert_array_equal(b.grad.numpy(), [5.0, 12.0])


def test_backward_inputs_nonleaf_gets_grad():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    m = a * b
    (m * a).sum().backward(inputs=[b, m])
    assert a.grad is None
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 4.0])        # a * a
    np.testing.assert_array_equal(m.grad.numpy(), [1.0, 2.0])        # a
    # Compare with torch.
    ta, tb = tleaf([1.0, 2.0]), tleaf([3.0, 4.0])
    tm = ta * tb
    (tm * ta).sum().backward(inputs=[tb, tm])
    assert ta.grad is None
    assert_same(m.grad, tm.grad)
    assert_same(b.grad, tb.grad)


def test_backward_inputs_single_tensor_and_autograd_backward():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    rg.autograd.backward((a * b).sum(), inputs=a)
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])
    assert b.grad is None


def test_backward_empty_inputs_raises():
    a = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="inputs"):
        (a * a).sum().backward(inputs=[])


def test_backward_inputs_not_requiring_grad_raises():
    a, b = leaf([1.0, 2.0]), rg.tensor([3.0, 4.0])
    with pytest.raises(RuntimeError, match="require"):
        (a * b).sum().backward(inputs=[b])


# ---------------------------------------------------------------------------
# gradients given by the caller

def test_grad_outputs_wrong_shape_raises():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2.0
    with pytest.raises(RuntimeError, match="shape"):
        rg.autograd.grad(y, x, rg.tensor([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="shape"):
        y.backward(rg.ones(3, 1))
    with pytest.raises(RuntimeError, match="shape"):
        rg.autograd.backward([y], [rg.ones(1)])


def test_grad_outputs_complex_for_real_output_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="dtype"):
        rg.autograd.grad(x * 2.0, x, rg.tensor([1j, 1j]))


def test_grad_outputs_non_numeric_dtype_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="dtype"):
        # rg.tensor refuses strings; a wrapped string array still must not pass
        rg.autograd.grad(x * 2.0, x, rg.from_numpy(np.array(["a", "b"])))


@pytest.mark.parametrize("gdtype", [np.float32, np.int64, np.bool_])
def test_grad_outputs_other_real_dtype_is_cast(gdtype):
    # torch accepts them and casts to the output's dtype.
    x = leaf([1.0, 2.0, 3.0])
    go = np.array([1, 0, 1]).astype(gdtype)
    (g,) = rg.autograd.grad(x * 2.0, x, rg.tensor(go))
    assert g.dtype == np.float64
    tx = tleaf([1.0, 2.0, 3.0])
    (tg,) = torch.autograd.grad(tx * 2.0, tx, torch.from_numpy(go))
    assert_same(g, tg)


def test_grad_outputs_float64_for_float32_output():
    x = leaf([1.0, 2.0], dtype=np.float32)
    (g,) = rg.autograd.grad(x * 2.0, x, rg.ones(2))
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), [2.0, 2.0])


def test_grad_outputs_count_mismatch_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError):
        rg.autograd.grad([x * 2.0], x, [rg.ones(2), rg.ones(2)])


def test_grad_outputs_not_a_tensor_raises_type_error():
    x = leaf([1.0, 2.0])
    with pytest.raises(TypeError):
        rg.autograd.grad(x * 2.0, x, [[1.0, 1.0]])


def test_backward_on_nonscalar_without_gradient_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="scalar"):
        (x * 2.0).backward()
    with pytest.raises(RuntimeError, match="scalar"):
        rg.autograd.grad(x * 2.0, x)


def test_backward_on_nonscalar_with_gradient():
    x = leaf([1.0, 2.0])
    (x * x).backward(rg.tensor([1.0, 10.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 40.0])


def test_backward_on_single_element_nonscalar():
    x = leaf([3.0])
    (x * x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0])


def test_output_not_requiring_grad_raises():
    a = rg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        (a * 2.0).sum().backward()
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        rg.autograd.grad((a * 2.0).sum(), x)
    with rg.no_grad():
        y = (x * 2.0).sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_input_not_requiring_grad_raises():
    a = rg.tensor([1.0, 2.0])
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        rg.autograd.grad((x * a).sum(), [x, a])


def test_inputs_and_outputs_type_errors():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="all inputs have to be Tensors"):     # torch's class
        rg.autograd.grad((x * 2).sum(), [np.ones(1)])
    with pytest.raises(TypeError):
        rg.autograd.backward(3.0)


# ---------------------------------------------------------------------------
# several roots, several inputs

def test_multiple_roots_with_gradients():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    ya, yb = a * a, (b * b).sum()
    rg.autograd.backward([ya, yb], [rg.tensor([1.0, 10.0]), rg.tensor(2.0)])
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 40.0])
    np.testing.assert_array_equal(b.grad.numpy(), [12.0, 16.0])


def test_multiple_roots_sharing_a_graph():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    z = y * y
    rg.autograd.backward([z, y], [rg.ones(2), rg.tensor([1.0, -1.0])])
    tx = tleaf([1.0, 2.0])
    ty = tx * 3.0
    torch.autograd.backward([ty * ty, ty], [torch.ones(2, dtype=torch.float64),
                                            torch.tensor([1.0, -1.0], dtype=torch.float64)])
    assert_same(x.grad, tx.grad)


def test_multiple_roots_with_none_gradient_for_scalar():
    a, b = leaf([1.0, 2.0]), leaf([3.0])
    rg.autograd.backward([a * 2.0, (b * b).sum()], [rg.ones(2), None])
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(b.grad.numpy(), [6.0])


def test_grad_of_several_outputs_and_inputs_matches_torch():
    rng = np.random.default_rng(2)
    a0, b0 = rng.standard_normal(3), rng.standard_normal(3)
    res = []
    for lib, mk in ((rg, leaf), (torch, tleaf)):
        a, b = mk(a0), mk(b0)
        m = a * b
        outs = [(m.sin() * a).sum(), (m * m).sum(), m.tanh()]
        gos = [None, None, mk(np.arange(3.0)).detach()]
        res.append(lib.autograd.grad(outs, [a, m, b], gos))
    for g, w in zip(*res):
        assert_same(g, w)


def test_grad_wrt_output_itself():
    x = leaf([1.0, 2.0])
    y = (x * 2.0).sum()
    (g,) = rg.autograd.grad(y, y)
    assert float(g) == 1.0


def test_grad_with_duplicate_inputs():
    x = leaf([1.0, 2.0])
    gx1, gx2 = rg.autograd.grad((x * x).sum(), [x, x])
    np.testing.assert_array_equal(gx1.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(gx2.numpy(), [2.0, 4.0])


def test_backward_on_a_leaf():
    x = leaf([1.0, 2.0])
    x.backward(rg.tensor([3.0, 4.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])


def test_diamond_graph_sums_gradients():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2.0
    out = (y * y + y.sin() + y).sum()
    out.backward()
    tx = tleaf([1.0, 2.0, 3.0])
    ty = tx * 2.0
    (ty * ty + ty.sin() + ty).sum().backward()
    assert_same(x.grad, tx.grad)


def test_broadcasting_gradients_are_summed():
    x = leaf([[1.0], [2.0]])              # (2, 1)
    w = leaf([1.0, 2.0, 3.0])             # (3,)
    (x * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[6.0], [6.0]])
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0, 3.0])


def test_user_gradient_is_never_modified():
    # The engine adds in place into buffers it owns; the user's array is not one.
    x = leaf([1.0, 2.0])
    go = rg.tensor([1.0, 1.0])
    y = x * 1.0
    (y + y).backward(go)
    np.testing.assert_array_equal(go.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    x.grad = None
    x.backward(go)
    (x * 1.0).backward(go)
    np.testing.assert_array_equal(go.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_grad_leaves_existing_grad_untouched():
    x = leaf([1.0, 2.0])
    x.grad = rg.tensor([5.0, 5.0])
    (g,) = rg.autograd.grad((x * x).sum(), x)
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])


def test_hooks_see_ndarray_backed_tensors_on_the_right_device():
    # 0-d NumPy arithmetic returns scalars; hooks must still get Tensors whose
    # data is an ndarray.
    x = leaf([1.0, 2.0])
    y = x.sum()
    z = y * y
    seen = []
    y.register_hook(lambda g: seen.append(g))
    z.grad_fn.register_hook(lambda gi, go: seen.extend(gi))
    z.backward()
    assert len(seen) == 3               # MulBackward0's two grad_inputs, then y's hook
    for g in seen:
        assert isinstance(g, rg.Tensor)
        assert type(g._array) is np.ndarray
        assert g.device == rg.device("cpu")
    assert [float(g) for g in seen] == [3.0, 3.0, 6.0]


# ---------------------------------------------------------------------------
# Misuse errors

def test_saved_tensor_modified_in_place_mul_():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    z = y.sin()
    y.mul_(2.0)
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    msg = str(info.value)
    assert "SinBackward0" in msg
    assert "(3,)" in msg
    assert "version 1" in msg and "version 0" in msg
    assert "inplace" in msg or "in-place" in msg


def test_saved_tensor_modified_in_place_iadd():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x * 1.0
    z = y.sin()
    y += 1.0
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    msg = str(info.value)
    assert "SinBackward0" in msg and "(2, 2)" in msg
    assert "version 1" in msg and "version 0" in msg


def test_saved_tensor_modified_twice_reports_current_version():
    x = leaf([1.0, 2.0])
    y = x * 1.0
    z = y.sin()
    with rg.no_grad():
        y.add_(1.0)
        y.add_(1.0)
    with pytest.raises(RuntimeError, match="version 2"):
        z.sum().backward()


def test_in_place_on_input_of_op_saving_its_result_is_fine():
    # tanh saves its output, not its input (as in torch).
    x = leaf([1.0, 2.0])
    y = x * 1.0
    z = y.tanh()
    with rg.no_grad():
        y.add_(1.0)
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 - np.tanh([1.0, 2.0]) ** 2)


def test_in_place_on_unsaved_tensor_is_fine():
    x = leaf([1.0, 2.0])
    y = x * 2.0          # MulBackward0 by a constant saves no version of y
    y += 1.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_in_place_on_leaf_requiring_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf"):
        x.mul_(2.0)
    with pytest.raises(RuntimeError, match="leaf"):
        x += 1.0
    with rg.no_grad():
        x.mul_(2.0)      # allowed (an optimizer step)
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 4.0])


# ---------------------------------------------------------------------------
# is_grads_batched

def test_is_grads_batched_matches_torch():
    a = np.array([0.5, -1.0, 2.0])
    x, tx = leaf(a), tleaf(a)
    go = np.stack([np.eye(3)[0], np.eye(3)[2], np.arange(3.0)])
    (g,) = rg.autograd.grad(x.sin() * x, x, rg.tensor(go), is_grads_batched=True)
    (tg,) = torch.autograd.grad(tx.sin() * tx, tx, torch.tensor(go), is_grads_batched=True)
    assert g.shape == (3, 3)
    assert_same(g, tg)


def test_is_grads_batched_several_outputs_and_unused():
    x, z = leaf([1.0, 2.0]), leaf([3.0])
    y1, y2 = x * x, (x * 3.0).sum()
    gos = [rg.tensor([[1.0, 0.0], [0.0, 1.0]]), rg.tensor([1.0, 10.0])]
    gx, gz = rg.autograd.grad([y1, y2], [x, z], gos, is_grads_batched=True, allow_unused=True,
                              retain_graph=True)
    np.testing.assert_array_equal(gx.numpy(), [[2.0 + 3.0, 3.0], [30.0, 4.0 + 30.0]])
    assert gz is None
    gx, gz = rg.autograd.grad([y1, y2], [x, z], gos, is_grads_batched=True, materialize_grads=True,
                              retain_graph=True)
    np.testing.assert_array_equal(gz.numpy(), np.zeros((2, 1)))
    with pytest.raises(RuntimeError, match=r"inputs\[1\]"):
        rg.autograd.grad([y1, y2], [x, z], gos, is_grads_batched=True)


def test_is_grads_batched_checks_shapes_and_frees_the_graph():
    x = leaf([1.0, 2.0])
    y = x.sin()
    with pytest.raises(RuntimeError, match="batch dimension"):
        rg.autograd.grad(y, x, rg.ones(2), is_grads_batched=True)
    rg.autograd.grad(y, x, rg.ones(4, 2), is_grads_batched=True)
    with pytest.raises(RuntimeError, match="retain_graph"):
        rg.autograd.grad(y, x, rg.ones(2))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 16, 4096, 4097])
def test_fan_in_sums_every_gradient(dtype, n):
    # Many gradients into one buffer: small float32/float64 buffers take a
    # plain loop, the rest NumPy's; both must give torch's sum, never alias
    # the gradients they were given, and keep the dtype.
    base = np.linspace(-1.0, 1.0, n).astype(dtype)
    x = rg.tensor(base, requires_grad=True)
    scales = [0.5, -2.0, 3.0, 1e-3, 7.0]
    gos = [rg.tensor((np.arange(n) % 5 + 1).astype(dtype)) for _ in scales]
    before = [g.numpy().copy() for g in gos]
    rg.autograd.backward([x * s for s in scales], gos)
    tx = torch.tensor(base, requires_grad=True)
    torch.autograd.backward([tx * s for s in scales], [torch.tensor(g) for g in before])
    assert x.grad.dtype == np.dtype(dtype)
    tol = 1e-2 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    for g, b in zip(gos, before):
        np.testing.assert_array_equal(g.numpy(), b)


def test_fan_in_with_non_contiguous_gradients():
    # A transposed gradient (not C-contiguous) takes NumPy's path.
    x = leaf(np.arange(6.0).reshape(2, 3))
    g = rg.tensor(np.arange(6.0).reshape(3, 2).T)
    rg.autograd.backward([x * 1.0, x * 2.0], [g, g])
    np.testing.assert_array_equal(x.grad.numpy(), 3.0 * np.arange(6.0).reshape(3, 2).T)
