"""Behaviours from torch's test/test_autograd.py, translated (part a3).

The third of three modules for the first 92,000 characters of that file; the
docstring of test_torch_autograd_a1.py gives the counts and every exclusion.
"""
import gc
import pickle

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.function import Function, once_differentiable


def _arr(t):
    return np.asarray(t.detach()) if isinstance(t, rg.Tensor) else np.asarray(t)


def _close(actual, expected, **kw):
    np.testing.assert_allclose(_arr(actual), _arr(expected), **kw)


class _Boom(Function):
    """Identity forward whose backward always raises."""

    @staticmethod
    def forward(ctx, inp):
        return inp.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        raise Exception("deliberate failure inside backward")


class _Ident(Function):
    @staticmethod
    def forward(ctx, t):
        return t

    @staticmethod
    def backward(ctx, g):
        return g


def test_node_metadata_survives_its_output():
    leaf = rg.zeros(1, requires_grad=True)
    out = _Ident.apply(leaf)
    out.backward()
    out.grad_fn.metadata["tag"] = 1
    node = out.grad_fn
    del out
    gc.collect()
    assert node.metadata == {"tag": 1}


def test_repeated_second_order_grads_agree():
    def product(t):
        return t.prod(dim=-1).prod(dim=-1)

    class Product(Function):
        @staticmethod
        def forward(ctx, t):
            out = product(t)
            ctx.save_for_backward(t, out)
            return out

        @staticmethod
        def backward(ctx, g):
            t, out = ctx.saved_tensors
            return (g * out)[:, None, None] / t

    def check(leaf, out):
        results = []
        for _ in range(2):
            g1, = rg.autograd.grad(out[0], leaf, create_graph=True)
            g2, = rg.autograd.grad(g1[0, 0, 0], leaf, retain_graph=True)
            results.append(_arr(g2)[0, 0, 1])
        assert results[0] == results[1]

    leaf = rg.ones(2, 4, 4).requires_grad_()
    check(leaf, product(leaf))
    check(leaf, Product.apply(leaf))


def _square_fns():
    class Square(Function):
        @staticmethod
        def forward(ctx, t):
            out = t ** 2
            ctx.save_for_backward(t, out)
            return out

        @staticmethod
        def backward(ctx, g):
            t, _ = ctx.saved_tensors
            return g * 2 * t

    class SquareFromOutput(Square):
        @staticmethod
        def backward(ctx, g):
            t, out = ctx.saved_tensors
            return g * 2 * out / t

    return Square, SquareFromOutput


def test_custom_function_saving_its_output_is_not_freed_early():
    leaf = rg.tensor(2).double().requires_grad_()
    for fn in _square_fns():
        assert rg.autograd.gradcheck(fn.apply, leaf)
        assert rg.autograd.gradgradcheck(fn.apply, leaf)
        out = fn.apply(leaf)
        rg.autograd.grad(out, leaf, create_graph=True)
        g, = rg.autograd.grad(out, leaf)
        _close(g, 4.0)


def test_detach_cuts_the_graph():
    leaf = rg.randn(6, 6, requires_grad=True)
    cut = (leaf + 2).detach()
    assert not cut.requires_grad
    assert not (cut * 4 + 2).requires_grad
    cut = (leaf * 2).detach()
    assert cut.grad_fn is None
    (leaf + cut).sum().backward()
    _close(leaf.grad, np.ones((6, 6)))


def test_detach_in_place():
    p = rg.randn(6, 6, requires_grad=True)
    q = rg.randn(6, 6, requires_grad=True)
    mid = p * 2
    (q + mid).sum().backward(retain_graph=True)
    mid.detach_()
    assert not mid.requires_grad
    (q + mid).sum().backward()
    _close(p.grad, np.full((6, 6), 2.0))
    _close(q.grad, np.full((6, 6), 2.0))


def test_detach_in_place_refused_on_view():
    view = rg.randn(6, 6, requires_grad=True).narrow(0, 1, 4)
    with pytest.raises(RuntimeError, match="view"):
        view.detach_()


def test_detaching_base_keeps_view_attached():
    base = rg.randn(6, 6, requires_grad=True)
    view = base.narrow(0, 1, 4)
    base.detach_()
    assert not base.requires_grad
    assert view.requires_grad
    assert view.grad_fn is not None
    assert view._base is base


def test_backward_through_dtype_casts_keeps_leaf_dtype():
    single = rg.randn(4, 4).float().requires_grad_()
    single.double().sum().backward()
    assert single.grad.dtype == rg.float32
    _close(single.grad, np.ones((4, 4)))
    double = rg.randn(4, 4).double().requires_grad_()
    double.float().sum().backward()
    assert double.grad.dtype == rg.float64
    _close(double.grad, np.ones((4, 4)))


def test_integer_branch_does_not_block_backward():
    p = rg.randn(4, 4, requires_grad=True)
    q = rg.randn(4, 4, requires_grad=True)
    s = p + q
    idx = rg.max(s, 1, True)[1].repeat(1, 4).double()
    assert not idx.requires_grad
    (idx + s).sum().backward()
    _close(p.grad, np.ones((4, 4)))


def test_shape_attribute():
    t = rg.randn(3, 4)
    assert len(t.shape) == 2
    assert t.shape[0] == 3 and t.shape[1] == 4


def test_numpy_of_tensor_requiring_grad():
    needs = rg.randn(2, 2, requires_grad=True)
    msg = r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead."
    with pytest.raises(RuntimeError, match=msg):
        needs.numpy()
    with rg.no_grad():
        assert needs.numpy().shape == (2, 2)
    plain = rg.randn(2, 2)
    assert plain.numpy().shape == (2, 2)
    with rg.no_grad():
        assert plain.numpy().shape == (2, 2)


def test_function_returning_an_input_leaf():
    class PassAndAdd(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gb):
            return ga + gb, gb

    seen = []
    p = rg.randn(4, 4, requires_grad=True)
    q = rg.randn(4, 4, requires_grad=True)
    first, second = PassAndAdd.apply(p, q)
    first.register_hook(lambda g: seen.append(_arr(g).copy()))
    (first + second + p).sum().backward()
    _close(p.grad, np.full((4, 4), 3.0))
    _close(q.grad, np.ones((4, 4)))
    assert len(seen) == 1
    _close(seen[0], np.ones((4, 4)))


def test_in_place_function_on_input_not_requiring_grad():
    class AddInto(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.mark_dirty(a)
            return a.add_(b), b + 2

        @staticmethod
        def backward(ctx, ga, gb):
            return ga, ga + gb

    target = rg.randn(4, 4)
    leaf = rg.randn(4, 4, requires_grad=True)
    first, _ = AddInto.apply(target, leaf)
    assert first is target
    assert type(first.grad_fn).__name__ == "AddIntoBackward"
    assert first.requires_grad
    first.sum().backward()
    _close(leaf.grad, np.ones((4, 4)))


def test_assigning_grad_tensors_into_a_plain_tensor():
    dst = rg.randn(5, 5)
    p = rg.randn(5, requires_grad=True)
    q = rg.randn(5, requires_grad=True)
    dst[0] = p
    dst[1] = 2 * q
    assert dst.requires_grad
    assert dst.grad_fn is not None
    dst.sum().backward()
    _close(p.grad, np.ones(5))
    _close(q.grad, np.full(5, 2.0))


def test_assignment_under_no_grad_keeps_leaf():
    leaf = rg.randn(5, 5, requires_grad=True)
    with rg.no_grad():
        leaf[0] = rg.randn(5)
    assert leaf.requires_grad
    assert leaf.grad_fn is None


def test_in_place_under_no_grad_still_bumps_version():
    p = rg.randn(5, requires_grad=True)
    q = rg.randn(5, requires_grad=True)
    out = (p * q).sum()
    with rg.no_grad():
        p *= 2
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_custom_function_no_graph_under_no_grad():
    leaf = rg.randn(5, requires_grad=True)
    with rg.no_grad():
        out = _Ident.apply(leaf)
    assert leaf.requires_grad
    assert out.grad_fn is None


def test_grad_buffered_in_several_places_is_not_shared():
    p = rg.ones(4, 4, requires_grad=True)
    q = rg.ones(4, 4, requires_grad=True)
    a, b, c = p + 2, q + 2, p + 2
    joined = a + b + c
    for _ in range(4):
        a, b, c = a * 2, b * 2, c * 2
    (joined + a + b + c).backward(rg.ones(4, 4))
    _close(p.grad, np.full((4, 4), 34.0))
    _close(q.grad, np.full((4, 4), 17.0))


def test_save_for_backward_accepts_none():
    nones = []

    class Square(Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(None, t, None)
            return t * t

        @staticmethod
        def backward(ctx, g):
            n1, t, n2 = ctx.saved_tensors
            nones.append((n1, n2))
            return 2 * t * g

    leaf = rg.randn(4, requires_grad=True)
    Square.apply(leaf).sum().backward()
    assert nones == [(None, None)]
    _close(leaf.grad, 2 * _arr(leaf))


def test_extra_none_grads_from_backward_are_ignored():
    class Extra(Function):
        @staticmethod
        def forward(ctx, t):
            return t

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    leaf = rg.randn(4, 4, requires_grad=True)
    Extra.apply(leaf).sum().backward()
    _close(leaf.grad, np.ones((4, 4)))


def test_pickle_round_trip_keeps_values_and_requires_grad():
    pair = [rg.randn(6, 6, requires_grad=True), rg.randn(6, 6)]
    for proto in range(3):
        back = pickle.loads(pickle.dumps(pair, protocol=proto))
        for orig, copy in zip(pair, back):
            _close(copy, orig)
            assert copy.requires_grad == orig.requires_grad


def test_non_differentiable_output_fed_into_another_function():
    class WithNoise(Function):
        @staticmethod
        def forward(ctx, t):
            noise = rg.randn(*t.shape)
            ctx.mark_non_differentiable(noise)
            return t, noise

        @staticmethod
        def backward(ctx, g, _ignored):
            return g

    class First(Function):
        @staticmethod
        def forward(ctx, t, _ignored):
            return t

        @staticmethod
        def backward(ctx, g):
            return g, None

    leaf = rg.randn(5, requires_grad=True)
    kept, noise = WithNoise.apply(leaf)
    noise = noise + 1
    assert kept.requires_grad and not noise.requires_grad
    out = First.apply(kept, noise)
    out.backward(rg.ones(*out.shape))
    _close(leaf.grad, np.ones(5))


def test_set_grad_enabled_context_and_call():
    leaf = rg.tensor([1.0], requires_grad=True)
    with rg.set_grad_enabled(False):
        assert not (leaf * 2).requires_grad
    with rg.set_grad_enabled(True):
        assert (leaf * 2).requires_grad
    with rg.set_grad_enabled(False):
        rg.set_grad_enabled(True)
        assert (leaf * 2).requires_grad
    assert rg.is_grad_enabled()


def test_reentrant_backward_inside_custom_backward():
    other = rg.randn(2, 2)

    class Reenter(Function):
        @staticmethod
        def forward(ctx, t):
            with rg.enable_grad():
                ctx.inner = t.detach().requires_grad_(True)
                ctx.out = ctx.inner * other.clone().requires_grad_(True)
            return ctx.out.detach()

        @staticmethod
        def backward(ctx, g):
            with rg.enable_grad():
                ctx.out.sum().backward()
            return ctx.inner.grad * g

    leaf = rg.randn(2, 2, requires_grad=True)
    Reenter.apply(leaf).sum().backward()
    _close(leaf.grad, other)


def test_error_in_reentrant_child_reaches_parent():
    a = rg.rand(3, 3, requires_grad=True)
    parent = a * a
    b = rg.rand(3, 3, requires_grad=True)
    child_root = _Boom.apply(b * b).sum()

    class CallsChild(Function):
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, g):
            child_root.backward()
            return g

    with pytest.raises(Exception, match="deliberate failure inside backward") as info:
        CallsChild.apply(parent).sum().backward()
    assert info.type is Exception


def _functional_check(fn, *args, gradgrad=True):
    """gradcheck (and gradgradcheck) fn, and check that grad mode does not change its value."""
    assert rg.autograd.gradcheck(fn, args, eps=1e-6, atol=1e-4)
    if gradgrad:
        assert rg.autograd.gradgradcheck(fn, args)
    plain = [a.detach() if isinstance(a, rg.Tensor) else a for a in args]
    _close(fn(*args), fn(*plain))


def test_cat_dim0():
    _functional_check(lambda a, b, c, d: rg.cat((a, b, c), d),
                      rg.randn(1, 5, 5, requires_grad=True), rg.randn(2, 5, 5, requires_grad=True),
                      rg.randn(3, 5, 5, requires_grad=True), 0)


def test_cat_last_dim_negative():
    _functional_check(lambda a, b, c, d: rg.cat((a, b, c), d),
                      rg.randn(5, 5, 1, requires_grad=True), rg.randn(5, 5, 2, requires_grad=True),
                      rg.randn(5, 5, 3, requires_grad=True), -1)


def test_cat_middle_dim_negative():
    _functional_check(lambda a, b, c, d: rg.cat((a, b, c), d),
                      rg.randn(5, 1, 5, requires_grad=True), rg.randn(5, 2, 5, requires_grad=True),
                      rg.randn(5, 3, 5, requires_grad=True), -2)


def test_cat_with_legacy_1d_empty():
    _functional_check(lambda a, b: rg.cat((a, b)), rg.randn(0, requires_grad=True),
                      rg.randn(5, 5, requires_grad=True), gradgrad=False)


def test_cat_with_empty_rows():
    _functional_check(lambda a, b: rg.cat((a, b)), rg.randn(0, 5, requires_grad=True),
                      rg.randn(5, 5, requires_grad=True))


def _spd(dims, seed):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal(dims)
    return m @ np.swapaxes(m, -1, -2) + dims[-1] * np.eye(dims[-1])


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("dims", [(3, 3), (4, 3, 2, 2)])
def test_cholesky_gradients(upper, dims):
    def f(root):
        return rg.linalg.cholesky(root @ root.transpose(-1, -2) + 1e-5, upper=upper)

    root = rg.rand(*dims, requires_grad=True)
    assert rg.autograd.gradcheck(f, [root])
    assert rg.autograd.gradgradcheck(f, [root])
    spd = rg.tensor(_spd(dims, 7), requires_grad=True)
    rg.linalg.cholesky(spd, upper=upper).sum().backward()
    _close(spd.grad, np.swapaxes(_arr(spd.grad), -1, -2), atol=1e-10)


@pytest.mark.parametrize("uplo", ["U", "L"])
@pytest.mark.parametrize("dims", [(3, 3), (5, 3, 3), (4, 3, 2, 2)])
def test_symmetric_eigendecomposition_gradients(uplo, dims):
    def f(root):
        return rg.linalg.eigh(0.5 * (root + root.transpose(-2, -1)), UPLO=uplo)

    root = rg.rand(*dims, requires_grad=True)
    assert rg.autograd.gradcheck(f, [root])
    assert rg.autograd.gradgradcheck(f, [root])
    sym = np.random.default_rng(11).standard_normal(dims)
    sym = rg.tensor(sym + np.swapaxes(sym, -1, -2), requires_grad=True)
    vals, vecs = rg.linalg.eigh(sym)
    (vals.sum() + vecs.sum()).backward()
    _close(sym.grad, np.swapaxes(_arr(sym.grad), -1, -2), atol=1e-10)
