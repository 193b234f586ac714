"""Behaviours from torch's test/test_autograd.py, translated (part a2 of a1-a3).

The second of three modules for the first 92,000 characters of that file; the
docstring of test_torch_autograd_a1.py gives the counts and every exclusion.
"""
import math
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.function import Function


def _arr(t):
    return np.asarray(t.detach()) if isinstance(t, rg.Tensor) else np.asarray(t)


def _close(actual, expected, **kw):
    np.testing.assert_allclose(_arr(actual), _arr(expected), **kw)


def test_multiply_by_constant_does_not_save_the_tensor():
    mu = rg.ones(1, requires_grad=True)
    buf = rg.empty(1)
    total = 0
    for i in range(3):
        buf.detach_()
        buf.copy_(mu + i)
        total = total + (buf * rg.tensor([float(i)])).sum()
    total.backward()
    _close(mu.grad, [3.0])


def test_no_grad_context_and_decorator():
    leaf = rg.ones(4, 4, requires_grad=True)
    other = rg.ones(4, 4) * 4
    with rg.no_grad():
        w = leaf + other

    @rg.no_grad()
    def plus(a, b):
        return a + b

    z = plus(leaf, other)
    for t in (w, z):
        assert not t.requires_grad
        assert t.grad_fn is None
        with pytest.raises(RuntimeError):
            t.backward(rg.ones(4, 4))
    with rg.no_grad():
        assert not rg.is_grad_enabled()
        plus(leaf, other)
        assert not rg.is_grad_enabled()
    assert rg.is_grad_enabled()


def test_grad_mode_decorators_on_generators():
    @rg.no_grad()
    def off():
        for i in range(5):
            assert not rg.is_grad_enabled()
            yield i

    @rg.enable_grad()
    def on():
        for i in range(5):
            assert rg.is_grad_enabled()
            yield i

    with rg.enable_grad():
        for _ in off():
            assert rg.is_grad_enabled()
    with rg.no_grad():
        for _ in on():
            assert not rg.is_grad_enabled()


def test_custom_function_under_no_grad():
    class PlusOne(Function):
        @staticmethod
        def forward(ctx, t):
            return t + 1

        @staticmethod
        def backward(ctx, g):
            return g

    leaf = rg.ones(4, 4, requires_grad=True)
    with rg.no_grad():
        out = PlusOne.apply(leaf)
    assert not out.requires_grad
    assert out.grad_fn is None


def _index_case(src, idx, np_idx=None):
    """Index a leaf with idx; values must match NumPy's and the grad must mark the picked cells."""
    np_idx = idx if np_idx is None else np_idx
    leaf = rg.tensor(src.copy(), requires_grad=True)
    picked = leaf[idx]
    _close(picked, src[np_idx])
    picked.sum().backward()
    want = np.zeros_like(src)
    want[np_idx] = 1
    _close(leaf.grad, want)


def test_indexing_grad_2d():
    src = np.arange(1.0, 17).reshape(4, 4)
    mask = np.random.default_rng(0).random((4, 4)) > 0.5
    cases = [1, (1, 1), slice(1, None), slice(None, 2), (slice(None, 2), 2), (slice(1, 2), 2),
             (1, slice(2, None)), (slice(None), slice(2, None)), (Ellipsis, slice(2, None)),
             ([0], [0]), ([1, 2, 3], [0]), ([1, 2], [2, 1]), ([[1, 2], [3, 0]], [[0, 1], [2, 3]]), [0], ([0],)]
    for idx in cases:
        _index_case(src, idx)
    _index_case(src, rg.tensor([0, 2]), np.array([0, 2]))
    _index_case(src, rg.tensor(mask), mask)


def test_indexing_grad_3d():
    src = np.arange(1.0, 49).reshape(4, 3, 4)
    cases = [(slice(None), [0], [0]), ([0], [0], slice(None)), (slice(None), [0, 1, 2], [0]),
             ([0, 1, 2], [0], slice(None)), (slice(None), [1, 2], [2, 1]), ([1, 2], [2, 1], slice(None)),
             (slice(None), [[1, 2], [2, 0]], [[0, 1], [2, 3]]), ([[1, 2], [3, 0]], [[0, 1], [2, 2]], slice(None)),
             (slice(None), slice(None), [2, 1]), (slice(None), [2, 1], slice(None)),
             ([2, 1], slice(None), slice(None)), ([0],), ([0], slice(None)), ([0], Ellipsis),
             ([1, 2], [0, 1]), ([1, 2], [0, 1], Ellipsis), (Ellipsis, [1, 2], [0, 1])]
    for idx in cases:
        _index_case(src, idx)


def test_indexing_with_lists_read_as_tuples():
    src2 = np.arange(1.0, 17).reshape(4, 4)
    _index_case(src2, [slice(None), [2, 3]], (slice(None), [2, 3]))
    _index_case(src2, [[2, 3], slice(None)], ([2, 3], slice(None)))
    src3 = np.arange(1.0, 49).reshape(4, 3, 4)
    _index_case(src3, [rg.tensor([0, 1]), Ellipsis], (np.array([0, 1]), Ellipsis))


def test_indexing_with_repeated_indices_accumulates():
    def grad_of(shape, idx):
        leaf = rg.tensor(np.arange(1.0, 1 + np.prod(shape)).reshape(shape), requires_grad=True)
        leaf[idx].sum().backward()
        return _arr(leaf.grad)

    rows = [1, 1, 3, 2, 1, 2]
    want = np.zeros((4, 4))
    np.add.at(want, np.array(rows), 1)
    _close(grad_of((4, 4), rg.tensor(rows)), want)
    want = np.zeros((4, 4))
    np.add.at(want, (np.array(rows), 0), 1)
    _close(grad_of((4, 4), [rows, [0]]), want)
    _close(grad_of((4, 4), [[[1, 2], [0, 0]], [[0, 1], [1, 1]]]),
           [[0, 2, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0]])
    want = np.zeros((4, 4, 4))
    want[1] = 3
    _close(grad_of((4, 4, 4), [[1, 1, 1], slice(None), slice(None)]), want)


def test_masked_self_assignment_backward():
    flags = rg.tensor([1.0, 0, 0])
    leaf = rg.zeros(3, requires_grad=True)
    mid = leaf + 0
    mid[flags != 0] = mid[flags != 0]
    mid.backward(rg.zeros_like(mid))
    _close(leaf.grad, np.zeros(3))


def test_saved_variables_warns_deprecated():
    class Sum2(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a + b

        @staticmethod
        def backward(ctx, g):
            ctx.saved_variables
            return g, g

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Sum2.apply(rg.randn(3, 3, requires_grad=True), rg.randn(3, 3, requires_grad=True)).sum().backward()
    texts = [str(w.message) for w in caught]
    assert any("deprecated" in t and "saved_variables" in t for t in texts)


def test_requires_grad_propagation_skips_plain_tensors():
    p, q = rg.randn(4, 4), rg.randn(4, 4)
    r = rg.randn(4, 4, requires_grad=True)
    plain = p + q
    assert not plain.requires_grad
    mixed = plain + r
    assert mixed.requires_grad
    mixed.backward(rg.ones(4, 4))
    assert p.grad is None and q.grad is None and plain.grad is None
    _close(r.grad, np.ones((4, 4)))


def test_requires_grad_underscore_method():
    plain = rg.randn(4, 4)
    leaf = rg.randn(4, 4, requires_grad=True)
    for t in (plain, leaf):
        assert t.requires_grad_() is t and t.requires_grad
        assert t.requires_grad_(True) is t and t.requires_grad
    prod = plain * leaf
    with pytest.raises(RuntimeError):
        prod.requires_grad_(False)
    assert prod.requires_grad_() is prod and prod.requires_grad
    assert prod.requires_grad_(True) is prod and prod.requires_grad
    for t in (plain, leaf):
        assert t.requires_grad_(False) is t and not t.requires_grad


def test_in_place_add_of_grad_tensor_sets_requires_grad():
    for start in (rg.randn(4, 4), rg.randn(4, 4) + 0):
        start += rg.randn(4, 4, requires_grad=True)
        assert start.requires_grad


def test_in_place_before_requires_grad_and_refusal_after():
    a = rg.randn(2, 3)
    a.add_(5)
    a.requires_grad = True
    a.sum().backward()
    _close(a.grad, np.ones((2, 3)))
    a = rg.randn(2, 3)
    a[:].add_(5)
    a.requires_grad = True
    a.sum().backward()
    _close(a.grad, np.ones((2, 3)))
    a = rg.randn(2, 3)
    view = a[:]
    a.requires_grad = True
    with pytest.raises(RuntimeError):
        a.add_(5)
    with pytest.raises(RuntimeError):
        view.add_(5)


def test_deleting_tensor_attributes():
    t = rg.randn(4, 4, requires_grad=True)
    t.sum().backward()
    del t.grad
    assert t.grad is None
    with pytest.raises(RuntimeError):
        del t.data
    with pytest.raises(TypeError):
        t.data = None
    with pytest.raises(RuntimeError):
        del t.requires_grad


def test_deleting_private_autograd_attributes():
    t = rg.randn(4, 4, requires_grad=True)
    with pytest.raises(RuntimeError):
        del t._grad_fn
    with pytest.raises(RuntimeError):
        del t._backward_hooks


def test_same_root_twice_in_backward():
    a = rg.randn(4, 4, requires_grad=True)
    b = rg.randn(4, 4, requires_grad=True)
    prod = a * b
    seed = rg.randn_like(prod)
    rg.autograd.backward([prod, prod], [seed, seed])
    _close(a.grad, _arr(b) * _arr(seed) * 2)
    _close(b.grad, _arr(a) * _arr(seed) * 2)


def test_backward_non_scalar_with_none_grad_raises():
    out = rg.randn(4, 4, requires_grad=True) + 2
    with pytest.raises(RuntimeError):
        rg.autograd.backward([out], [None])


def _index_put_graph():
    src = rg.randn(3, requires_grad=True)
    dst = rg.zeros(3)
    dst[[1, 2]] = src[[1, 1]]
    return src, dst


def test_second_backward_through_freed_index_put_raises():
    _, dst = _index_put_graph()
    dst.backward(rg.ones(3))
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        dst.backward(rg.ones(3))


def test_second_backward_with_retained_graph():
    src, dst = _index_put_graph()
    dst.backward(rg.ones(3), retain_graph=True)
    dst.backward(rg.ones(3))
    _close(src.grad, [0.0, 4.0, 0.0])


def test_second_backward_without_saved_values():
    src = rg.randn(3, requires_grad=True)
    out = src + 1
    out.backward(rg.ones(3))
    out.backward(rg.ones(3))
    _close(src.grad, [2.0, 2.0, 2.0])


def test_next_functions_of_add():
    p = rg.randn(4, 4, requires_grad=True)
    q = rg.randn(4, 4, requires_grad=True)
    s = p + q
    nxt = s.grad_fn.next_functions
    assert len(nxt) == 2
    for node, nr in nxt:
        assert type(node).__name__ == "AccumulateGrad"
        assert nr == 0
    nxt = (s + 5).grad_fn.next_functions
    assert len(nxt) == 2
    assert nxt[0][0] is s.grad_fn
    assert nxt[1][0] is None


def test_in_place_dirties_only_saving_nodes():
    p = rg.ones(4, 4, requires_grad=True)
    q = (rg.ones(4, 4) * 4).requires_grad_(True)
    prod = p * q
    added, multiplied = prod + q, prod * q
    prod.add_(2)
    added.backward(rg.ones(4, 4), retain_graph=True)
    with pytest.raises(RuntimeError):
        multiplied.backward(rg.ones(4, 4))
    prod = p * q
    multiplied, added = prod * q, prod + q
    result = prod.add_(q)
    result.backward(rg.ones(4, 4), retain_graph=True)
    added.backward(rg.ones(4, 4), retain_graph=True)
    with pytest.raises(RuntimeError):
        multiplied.backward(rg.ones(4, 4))


def test_in_place_exp_bumps_version_and_keeps_other_paths():
    p = rg.ones(4, 4, requires_grad=True)
    q = (rg.ones(4, 4) * 4).requires_grad_(True)
    base = p / 2 + q / 8
    multiplied, added = base * q, base + q
    before = base._version
    result = base.exp_()
    assert base._version != before
    added.backward(rg.ones(4, 4), retain_graph=True)
    _close(p.grad, np.full((4, 4), 0.5))
    result.backward(rg.ones(4, 4), retain_graph=True)
    _close(p.grad, np.full((4, 4), (1 + math.e) / 2))
    with pytest.raises(RuntimeError):
        multiplied.backward(rg.ones(4, 4))


def test_in_place_on_clone_of_leaf():
    leaf = rg.ones(4, 4, requires_grad=True)
    copy = leaf.clone()
    copy.add_(10)
    _close(copy, np.full((4, 4), 11.0))
    shifted = copy + 2
    shifted.backward(rg.ones(4, 4))
    _close(leaf.grad, np.ones((4, 4)))
    prod = copy * shifted
    copy.add_(2)
    with pytest.raises(RuntimeError):
        prod.backward(rg.ones(4, 4))


def test_mark_non_differentiable_mask_output():
    class Positive(Function):
        @staticmethod
        def forward(ctx, t):
            out = t > 0
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return (g * 0).to(rg.float64)

    leaf = rg.randn(4, 4, requires_grad=True)
    mask = Positive.apply(leaf)
    assert not mask.requires_grad
    leaf.masked_fill(mask, 0).sum().backward()
    _close(leaf.grad, ~_arr(mask) * 1.0)


def test_mark_non_differentiable_one_of_two_outputs():
    seen = []

    class TwoOut(Function):
        @staticmethod
        def forward(ctx, t):
            first, second = t + 1, t + 2
            ctx.mark_non_differentiable(first)
            return first, second

        @staticmethod
        def backward(ctx, g_first, g_second):
            seen.append((_arr(g_first).copy(), _arr(g_second).copy()))
            return g_second

    leaf = rg.randn(4, 4, requires_grad=True)
    first, second = TwoOut.apply(leaf)
    assert not first.requires_grad
    assert second.requires_grad
    second.sum().backward()
    assert (seen[0][0] == 0).all() and (seen[0][1] == 1).all()
    _close(leaf.grad, np.ones((4, 4)))


def test_mark_non_differentiable_with_none_backward():
    class Frozen(Function):
        @staticmethod
        def forward(ctx, t):
            out = t.clone()
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return None

    leaf = rg.randn(4, 4, requires_grad=True)
    frozen = Frozen.apply(leaf * leaf)
    (frozen * leaf).sum().backward()
    _close(leaf.grad, _arr(frozen))


def test_function_returning_same_tensor_twice():
    class Twice(Function):
        @staticmethod
        def forward(ctx, t):
            out = t * 2
            return out, out

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 2

    def f(t):
        a, b = Twice.apply(t)
        assert a is b
        return a + b

    leaf = rg.randn(4, 4, requires_grad=True)
    assert rg.autograd.gradcheck(f, [leaf])
    assert rg.autograd.gradgradcheck(f, [leaf])


def test_in_place_function_returning_input_twice():
    class DoubleInPlace(Function):
        @staticmethod
        def forward(ctx, t):
            t.mul_(2)
            ctx.mark_dirty(t)
            return t, t

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 2

    def f(t):
        a, b = DoubleInPlace.apply(t.clone())
        assert a is b
        return a + b

    leaf = rg.randn(4, 4, requires_grad=True)
    assert rg.autograd.gradcheck(f, [leaf])
    assert rg.autograd.gradgradcheck(f, [leaf])


def _assign_case(shape, idx, np_idx, with_tensor):
    leaf = rg.ones(*shape, requires_grad=True)
    out = leaf + 2
    before = out._version
    value = None
    if with_tensor:
        value = rg.full(tuple(leaf[idx].shape), 7.0).requires_grad_()
        out[idx] = value
    else:
        out[idx] = 2
    assert out._version != before
    out.backward(rg.ones(*shape))
    want = np.ones(shape)
    want[np_idx] = 0
    _close(leaf.grad, want)
    if with_tensor:
        _close(value.grad, np.ones(tuple(value.shape)))


_PLAIN_ASSIGN = [((5, 5), 1), ((5,), 1), ((1,), 0), ((10,), [[0, 4, 2]]), ((5, 5), [[0, 4], [2, 2]]),
                 ((5, 5, 5), [slice(None), slice(None), [1, 3]]), ((5, 5, 5), [slice(None), [1, 3], slice(None)]),
                 ((5, 5, 5), [[1, 3], slice(None), slice(None)]), ((5, 5, 5), [slice(None), [2, 4], [1, 3]]),
                 ((5, 5, 5), [[1, 3], [2, 4], slice(None)])]
_TENSOR_ASSIGN = [((5, 5), 3), ((5, 5), [[0, 1], [1, 0]]), ((5,), 3), ((5,), [[0, 1, 2, 3]]),
                  ((5, 5, 5), [slice(None), slice(None), [1, 3]]), ((5, 5, 5), [slice(None), [1, 3], slice(None)]),
                  ((5, 5, 5), [[1, 3], slice(None), slice(None)]), ((5, 5, 5), [slice(None), [2, 4], [1, 3]]),
                  ((5, 5, 5), [[1, 3], [2, 4], slice(None)])]


def test_setitem_with_scalar_value():
    for shape, idx in _PLAIN_ASSIGN:
        _assign_case(shape, idx, tuple(idx) if isinstance(idx, list) else idx, False)


def test_setitem_with_tensor_value():
    for shape, idx in _TENSOR_ASSIGN:
        _assign_case(shape, idx, tuple(idx) if isinstance(idx, list) else idx, True)
    _assign_case((5,), rg.tensor([3]).sum(), 3, True)
    _assign_case((5, 5, 5), [rg.tensor([1, 3]), [2, 4], slice(None)], ([1, 3], [2, 4], slice(None)), True)
    small = rg.randn(4, requires_grad=True)
    big = rg.zeros(2, 3, 4)
    big[1] = small
    big.backward(rg.randn(2, 3, 4))
    assert tuple(small.grad.shape) == tuple(small.shape)


def test_setitem_with_bool_mask():
    mask = np.random.default_rng(1).random((5, 5)) > 0.5
    mask[0, 0] = True
    for shape, m in (((5, 5), mask), ((5,), mask[0]), ((1,), mask[0, 0:1])):
        _assign_case(shape, rg.tensor(m), m, False)
    for shape, m in (((5, 5), mask), ((5,), mask[0])):
        _assign_case(shape, rg.tensor(m), m, True)


def test_select_then_sum_gradchecks():
    leaf = rg.randn(10, requires_grad=True)

    def f(t):
        return t.select(0, 1).sum()

    assert rg.autograd.gradcheck(f, [leaf])
    assert rg.autograd.gradgradcheck(f, [leaf])


def _three(shape):
    return [rg.randn(*shape, requires_grad=True) for _ in range(3)]


def test_stack_backward_splits_grad():
    parts = _three((6, 6))
    seed = rg.randn(3, 6, 6)
    rg.stack(parts, 0).backward(seed)
    for i, p in enumerate(parts):
        _close(p.grad, _arr(seed)[i])


def test_hstack_backward_splits_grad():
    parts = _three((6, 6))
    seed = rg.randn(6, 18)
    np.hstack(parts).backward(seed)
    for i, p in enumerate(parts):
        _close(p.grad, _arr(seed)[:, 6 * i:6 * i + 6])
    parts = _three((6,))
    seed = rg.randn(18)
    np.hstack(parts).backward(seed)
    for i, p in enumerate(parts):
        _close(p.grad, _arr(seed)[6 * i:6 * i + 6])


def test_vstack_backward_splits_grad():
    parts = _three((6, 6))
    seed = rg.randn(18, 6)
    np.vstack(parts).backward(seed)
    for i, p in enumerate(parts):
        _close(p.grad, _arr(seed)[6 * i:6 * i + 6])


def test_dstack_backward_splits_grad():
    parts = _three((6, 6))
    seed = rg.randn(6, 6, 3)
    np.dstack(parts).backward(seed)
    for i, p in enumerate(parts):
        _close(p.grad, _arr(seed)[:, :, i])


def test_unbind_backward_all_and_single_output():
    whole = rg.randn(3, 5, 5, requires_grad=True)
    seed = rg.randn(3, 5, 5)
    rg.autograd.backward(list(whole.unbind()), list(seed.unbind()))
    _close(whole.grad, seed)
    for i in range(3):
        whole = rg.randn(3, 5, 5, requires_grad=True)
        piece = seed.unbind()[i]
        g, = rg.autograd.grad(whole.unbind()[i], whole, piece)
        want = np.zeros((3, 5, 5))
        want[i] = _arr(piece)
        _close(g, want)


def test_fill_on_clone_gradchecks():
    leaf = rg.randn(4, 5, requires_grad=True)

    def f(t):
        out = t.clone()
        out.fill_(2)
        return out

    assert rg.autograd.gradcheck(f, [leaf])
    assert rg.autograd.gradgradcheck(f, [leaf])


def test_chunk_with_only_one_output_used():
    leaf = rg.randn(10, 10, requires_grad=True)
    ((leaf.chunk(5)[2]) * 4 + 2).sum().backward()
    want = np.zeros((10, 10))
    want[4:6] = 4
    _close(leaf.grad, want)
    leaf.grad = None
    seed = rg.randn(2, 10)
    leaf.chunk(5)[0].backward(seed)
    want = np.zeros((10, 10))
    want[:2] = _arr(seed)
    _close(leaf.grad, want)
