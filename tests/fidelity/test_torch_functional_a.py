"""Behaviours from torch's test/autograd/test_functional.py, translated (part a: vjp, jvp, jacobian).

That file holds 54 tests: 52 in TestAutogradFunctional and 2 in the device-type class. All 52 of
TestAutogradFunctional are translated, plain tensors only, in two files: 28 here (the vjp, jvp,
standard-basis, vectorize-warning and jacobian tests) and 24 in test_torch_functional_b.py. Tests
parametrized over ``vectorize`` keep that parameter. Merged or split:
- test_jacobian_vectorize_raises_no_warnings and test_hessian_vectorize_raises_no_warnings are
  test_vectorize_raises_no_warnings[jacobian|hessian].
- test_construct_standard_basis_for is split into one case per set of tensors; it checks retrograd's
  private counterpart of torch's ``_construct_standard_basis_for``
  (``retrograd.autograd.functional._standard_basis_for``, same arguments and contract).

EXCLUDED (from the whole torch file; both halves list them):
- every ``logging_tensor`` variant (the ``ctors`` parameter of each test): LoggingTensor is a
  torch ``__torch_dispatch__`` tensor subclass; retrograd has no dispatch subclasses.
- TestAutogradFunctionalDeviceType.test_construct_standard_basis_for: accelerator devices only
  (instantiated except for CPU).
- TestAutogradFunctionalDeviceType.test_jacobian_vectorize_correctness_different_devices:
  accelerator devices only (instantiated except for CPU).
"""
import warnings

import numpy as np
import pytest

import retrograd as rg

from _torch_functional_shared import (  # noqa: E402
    _HAS_FORWARD_AD, F, gradcheck, gradgradcheck, DT, _np, _check_like, _check_blocks, _same, _all_zero,
    _three_first, _with_str, _cut_off,
)


def _row_sums(x):
    return x.sum(dim=1)


def _tile4(x):
    return x.unsqueeze(0).repeat(4)


# -- vjp -----------------------------------------------------------------------

def test_vjp_err_check():
    """Bad inputs, outputs and v are refused; a good call mirrors the input."""
    x, v = rg.rand(4), rg.ones(3)
    with pytest.raises(TypeError, match="The inputs given to vjp must be either a Tensor"):
        F.vjp(_three_first, (x, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to vjp must"):
        F.vjp(_with_str, x, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns"):
        F.vjp(_three_first, x)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        F.vjp(_three_first, x, (rg.ones(4), rg.ones(4)))
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        F.vjp(_three_first, x, v[:2])
    _check_like(F.vjp(_three_first, x, v)[1], x)


def test_vjp_err_check_strict():
    """strict=True refuses outputs that do not depend on the input; strict=False gives zeros."""
    x, v = rg.rand(4), rg.rand(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        F.vjp(lambda a: a.detach(), x, v, strict=True)
    _, g = F.vjp(lambda a: a.detach(), x, v, strict=False)
    _check_like(g, x)
    assert _all_zero(g)

    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        F.vjp(_cut_off, x, v, strict=True)
    _, g = F.vjp(_cut_off, x, v, strict=False)
    _check_like(g, x)
    assert _all_zero(g)

    x.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        F.vjp(lambda a: a.clone(), x, v, create_graph=True, strict=True)
    _, g = F.vjp(lambda a: a.clone(), x, v, create_graph=True, strict=False)
    _check_like(g, x)
    _same(g, v)


def test_vjp_no_grad():
    """Under no_grad the results have no history, unless create_graph=True asks for it."""
    x, v = rg.rand(4, 4), rg.ones(4)
    with rg.no_grad():
        out, g = F.vjp(_row_sums, x, v)
    assert out.grad_fn is None and g.grad_fn is None
    assert not _all_zero(g)

    x.requires_grad_()
    v.requires_grad_()
    with rg.no_grad():
        out, g = F.vjp(_row_sums, x, v, create_graph=True)
    assert out.grad_fn is not None and g.grad_fn is not None
    assert not _all_zero(g)


def test_vjp_output():
    """One or several inputs and outputs: the product is shaped like the inputs, with no history."""
    x = rg.rand(4, 4)
    out, g = F.vjp(_row_sums, x, rg.ones(4))
    _check_like(g, x)
    assert out.grad_fn is None and g.grad_fn is None

    pair = (rg.rand(2), rg.rand(2))
    out, g = F.vjp(lambda a, b: 2 * a + 3 * b, pair, rg.ones(2))
    _check_like(g, pair)
    assert out.grad_fn is None and all(t.grad_fn is None for t in g)

    pair = (rg.rand(2), rg.rand(2))
    out, g = F.vjp(lambda a, b: (2 * a + 3 * b, a + b), pair,
                   (rg.tensor([1.0, 0.0]), rg.tensor([1.0, 0.0])))
    _check_like(g, pair)
    assert all(t.grad_fn is None for t in out + g)


def test_vjp_scalar():
    """0-d outputs (v may be omitted) and 0-d inputs."""
    x, v = rg.rand(4, 4), rg.ones([])
    for out, g in (F.vjp(lambda t: t.sum(), x, v), F.vjp(lambda t: t.sum(), x)):
        _check_like(out, v)
        _check_like(g, x)

    s, v = rg.rand([]), rg.ones(4)
    out, g = F.vjp(_tile4, s, v)
    _check_like(out, v)
    _check_like(g, s)


def test_vjp_create_graph():
    """With create_graph the vjp is itself differentiable, twice, and composes in a bigger function."""
    x = rg.rand(2, 2, dtype=DT).requires_grad_()
    v = rg.ones(2, dtype=DT).requires_grad_()
    out, g = F.vjp(_row_sums, x, v, create_graph=True)
    _check_like(g, x)
    assert out.grad_fn is not None and g.grad_fn is not None
    assert gradcheck(lambda a, w: F.vjp(_row_sums, a, w, create_graph=True), (x, v))
    assert gradgradcheck(lambda a, w: F.vjp(_row_sums, a, w, create_graph=True), (x, v))

    def lin_and_prod(a, b):
        return 2 * a + 3 * b, a * b

    args = (rg.rand(2, dtype=DT, requires_grad=True), rg.rand(2, dtype=DT, requires_grad=True),
            rg.tensor([1.0, 0.0], dtype=DT, requires_grad=True),
            rg.tensor([1.0, 0.0], dtype=DT, requires_grad=True))

    def just_vjp(*a):
        return F.vjp(lin_and_prod, a[:2], a[2:], create_graph=True)[1]

    assert gradcheck(just_vjp, args)
    assert gradgradcheck(just_vjp, args)

    def composed(a, b, *w):
        a = a.cos()
        (o1, o2), (g1, g2) = F.vjp(lin_and_prod, (a, b), w, create_graph=True)
        return o1.exp() + o2.exp() + g1.exp() + g2.exp() + a.exp() + b.exp()

    assert gradcheck(composed, args)
    assert gradgradcheck(composed, args)


# -- jvp -----------------------------------------------------------------------

def test_jvp_err_check():
    """Bad inputs, outputs and v are refused; a good call mirrors the output."""
    x, v = rg.rand(4), rg.rand(4)
    with pytest.raises(TypeError, match="The inputs given to jvp must be either a Tensor"):
        F.jvp(_three_first, (x, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jvp must"):
        F.jvp(_with_str, x, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the user-provided function"):
        F.jvp(_three_first, x)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        F.jvp(_three_first, x, (v, v))
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        F.jvp(_three_first, x, v[:2])
    _check_like(F.jvp(_three_first, x, v)[1], _three_first(x))


def test_jvp_err_check_strict():
    """strict=True refuses outputs that do not depend on the input; strict=False gives zeros."""
    x, v = rg.rand(4), rg.rand(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        F.jvp(lambda a: a.detach(), x, v, strict=True)
    out, g = F.jvp(lambda a: a.detach(), x, v, strict=False)
    _check_like(g, out)
    assert _all_zero(g)

    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        F.jvp(_cut_off, x, v, strict=True)
    out, g = F.jvp(_cut_off, x, v, strict=False)
    _check_like(g, out)
    assert _all_zero(g)

    x.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        F.jvp(lambda a: a.clone(), x, v, create_graph=True, strict=True)
    _, g = F.jvp(lambda a: a.clone(), x, v, create_graph=True, strict=False)
    _check_like(g, x)
    _same(g, v)


def test_jvp_no_grad():
    """Under no_grad the results have no history, unless create_graph=True asks for it."""
    x, v = rg.rand(4, 4), rg.ones(4, 4)
    with rg.no_grad():
        out, g = F.jvp(_row_sums, x, v)
    assert out.grad_fn is None and g.grad_fn is None
    assert not _all_zero(g)

    x.requires_grad_()
    v.requires_grad_()
    with rg.no_grad():
        out, g = F.jvp(_row_sums, x, v, create_graph=True)
    assert out.grad_fn is not None and g.grad_fn is not None
    assert not _all_zero(g)


def test_jvp_output():
    """One or several inputs and outputs: the product is shaped like the outputs, with no history."""
    x = rg.rand(4, 4)
    out, g = F.jvp(_row_sums, x, rg.ones(4, 4))
    _check_like(g, out)
    assert out.grad_fn is None and g.grad_fn is None

    pair = (rg.rand(2), rg.rand(2))
    out, g = F.jvp(lambda a, b: 2 * a + 3 * b, pair, (rg.ones(2), rg.ones(2)))
    _check_like(g, out)
    assert out.grad_fn is None and g.grad_fn is None

    pair = (rg.rand(2), rg.rand(2))
    out, g = F.jvp(lambda a, b: (2 * a + 3 * b, a + b), pair,
                   (rg.tensor([1.0, 0.0]), rg.tensor([1.0, 0.0])))
    _check_like(g, out)
    assert all(t.grad_fn is None for t in out + g)


def test_jvp_scalar():
    """0-d outputs, and 0-d inputs (for which v may be omitted)."""
    out, g = F.jvp(lambda t: t.sum(), rg.rand(4, 4), rg.ones(4, 4))
    _check_like(out, rg.zeros([]))
    _check_like(g, out)

    s = rg.rand([])
    for out, g in (F.jvp(_tile4, s, rg.ones([])), F.jvp(_tile4, s)):
        _check_like(out, rg.zeros(4))
        _check_like(g, out)


def test_jvp_create_graph():
    """With create_graph the jvp is itself differentiable, twice, and composes in a bigger function."""
    x = rg.rand(2, 2, dtype=DT).requires_grad_()
    v = rg.ones(2, 2, dtype=DT).requires_grad_()
    out, g = F.jvp(_row_sums, x, v, create_graph=True)
    _check_like(g, out)
    assert out.grad_fn is not None and g.grad_fn is not None
    assert gradcheck(lambda a, w: F.jvp(_row_sums, a, w, create_graph=True), (x, v))
    assert gradgradcheck(lambda a, w: F.jvp(_row_sums, a, w, create_graph=True), (x, v))

    def lin_and_prod(a, b):
        return 2 * a + 3 * b, a * b

    args = (rg.rand(2, dtype=DT, requires_grad=True), rg.rand(2, dtype=DT, requires_grad=True),
            rg.tensor([1.0, 0.0], dtype=DT, requires_grad=True),
            rg.tensor([1.0, 0.0], dtype=DT, requires_grad=True))

    def just_jvp(*a):
        return F.jvp(lin_and_prod, a[:2], a[2:], create_graph=True)[1]

    assert gradcheck(just_jvp, args)
    assert gradgradcheck(just_jvp, args)

    def composed(a, b, *w):
        a = a.cos()
        (o1, o2), (g1, g2) = F.jvp(lin_and_prod, (a, b), w, create_graph=True)
        return o1.exp() + o2.exp() + g1.exp() + g2.exp() + a.exp() + b.exp()

    assert gradcheck(composed, args)
    assert gradgradcheck(composed, args)


# -- the standard basis, and warnings of the vectorized paths -------------------

@pytest.mark.parametrize("shapes", [
    [(2, 3)], [(1,)], [()], [(1,), (), ()], [(2,), (3,), ()], [(2,), (), (3,)],
    [(2, 3), (3,), (3, 4, 2)], "mixed-dtypes",
], ids=lambda s: s if isinstance(s, str) else repr(s))
def test_construct_standard_basis_for(shapes):
    """The chunks keep each tensor's dtype and device and, side by side, form the identity."""
    if shapes == "mixed-dtypes":
        tensors = (rg.randn(2, dtype=rg.float64), rg.randn(3, dtype=rg.float32))
    else:
        tensors = tuple(rg.randn(s) for s in shapes)
    counts = tuple(t.numel() for t in tensors)
    chunks = F._standard_basis_for(tensors, counts)
    assert len(chunks) == len(tensors)
    for chunk, t in zip(chunks, tensors):
        assert chunk.dtype == t.dtype
        assert chunk.device == t.device
    side_by_side = np.concatenate([_np(c).astype(np.float32) for c in chunks], axis=1)
    np.testing.assert_array_equal(side_by_side, np.eye(sum(counts), dtype=np.float32))


@pytest.mark.parametrize("api", ["jacobian", "hessian"])
def test_vectorize_raises_no_warnings(api):
    """jacobian/hessian with vectorize=True warn about nothing (torch's two tests, one per api)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(F, api)(lambda a: (a ** 2).sum(), rg.randn(3), vectorize=True)
    assert [str(w.message) for w in caught] == []


# -- jacobian ------------------------------------------------------------------

@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_err_check(vectorize):
    """Bad inputs and outputs are refused; good calls give one block per (output, input)."""
    x = rg.rand(4)
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor"):
        F.jacobian(_three_first, (x, 2), vectorize=vectorize)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jacobian must"):
        F.jacobian(_with_str, x, vectorize=vectorize)
    _check_blocks(F.jacobian(_three_first, x, vectorize=vectorize), _three_first(x), x)

    def swap(a, b):
        return b, 3 * a.narrow(0, 0, 3)

    pair = (rg.rand(4), rg.rand(5))
    _check_blocks(F.jacobian(swap, pair, vectorize=vectorize), swap(*pair), pair)


def test_jacobian_err_check_strict():
    """strict=True refuses outputs that do not depend on the input; strict=False gives zeros."""
    x = rg.rand(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        F.jacobian(lambda a: a.detach(), x, strict=True)
    jac = F.jacobian(lambda a: a.detach(), x, strict=False)
    _check_blocks(jac, x, x)
    assert _all_zero(jac)

    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 0."):
        F.jacobian(_cut_off, x, strict=True)
    jac = F.jacobian(_cut_off, x, strict=False)
    _check_blocks(jac, x, x)
    assert _all_zero(jac)

    x.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        F.jacobian(lambda a: a.clone(), x, create_graph=True, strict=True)
    jac = F.jacobian(lambda a: a.clone(), x, create_graph=True, strict=False)
    _check_blocks(jac, x, x)
    np.testing.assert_array_equal(_np(jac), np.eye(4))


def test_jacobian_err_check_strict_vectorize():
    with pytest.raises(RuntimeError, match="not supported together"):
        F.jacobian(lambda a: a, rg.rand(4), strict=True, vectorize=True)


def test_jacobian_no_grad():
    """Under no_grad the Jacobian has no history, unless create_graph=True asks for it."""
    x = rg.rand(4, 4)

    def exp_rows(t):
        return t.exp().sum(dim=1)

    with rg.no_grad():
        jac = F.jacobian(exp_rows, x)
    assert jac.grad_fn is None
    assert not _all_zero(jac)
    with rg.no_grad():
        jac = F.jacobian(exp_rows, x, create_graph=True)
    assert jac.grad_fn is not None
    assert not _all_zero(jac)


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_output(vectorize):
    """Shapes of the blocks, no history, and the identity's Jacobian is the identity matrix."""
    def exp_rows(t):
        return t.exp().sum(dim=1)

    x = rg.rand(4, 4)
    jac = F.jacobian(exp_rows, x, vectorize=vectorize)
    _check_blocks(jac, exp_rows(x), x)
    assert jac.grad_fn is None

    x = rg.rand(4)
    jac = F.jacobian(lambda t: t.clone(), x, vectorize=vectorize)
    _check_blocks(jac, x, x)
    assert jac.grad_fn is None
    np.testing.assert_array_equal(_np(jac), np.eye(4))

    def sum_with_exp(a, b):
        return (a + b.exp()).sum(dim=1)

    pair = (rg.rand(4, 4), rg.rand(4, 4))
    jac = F.jacobian(sum_with_exp, pair, vectorize=vectorize)
    _check_blocks(jac, sum_with_exp(*pair), pair)
    assert jac[0].grad_fn is None and jac[1].grad_fn is None


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_scalar(vectorize):
    """A 0-d output gives a block shaped like the input; a 0-d input one shaped like the output."""
    x = rg.rand(4, 4)
    _check_like(F.jacobian(lambda t: t.sum(), x, vectorize=vectorize), x)
    _check_like(F.jacobian(_tile4, rg.rand([]), vectorize=vectorize), rg.zeros(4))


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_create_graph(vectorize):
    """With create_graph the Jacobian is differentiable, twice, and composes in a bigger function."""
    def exp_rows(t):
        return t.exp().sum(dim=1)

    def jac_of(fn):
        return lambda *a: F.jacobian(fn, a, create_graph=True, vectorize=vectorize)

    x = rg.rand(4, 4, dtype=DT, requires_grad=True)
    jac = F.jacobian(exp_rows, x, create_graph=True, vectorize=vectorize)
    _check_blocks(jac, exp_rows(x), x)
    assert jac.grad_fn is not None

    def single(a):
        return F.jacobian(exp_rows, a, create_graph=True, vectorize=vectorize)

    assert gradcheck(single, (x,))
    assert gradgradcheck(single, (x,))

    def exp_of_sum(a, b):
        return (a + b).exp().sum(dim=1)

    pair = (rg.rand(4, 4, dtype=DT, requires_grad=True), rg.rand(4, 4, dtype=DT, requires_grad=True))
    jac = F.jacobian(exp_of_sum, pair, create_graph=True, vectorize=vectorize)
    _check_blocks(jac, exp_of_sum(*pair), pair)
    assert jac[0].grad_fn is not None and jac[1].grad_fn is not None
    assert gradcheck(jac_of(exp_of_sum), pair)
    assert gradgradcheck(jac_of(exp_of_sum), pair)

    def composed(a, b):
        a = a.cos()
        ja, jb = F.jacobian(exp_of_sum, (a, b), create_graph=True, vectorize=vectorize)
        total = ja[0].exp().sum() + ja[1].exp().sum() + jb[0].exp().sum()
        return total + jb[1].exp().sum() + a.exp().sum() + b.exp().sum()

    assert gradcheck(composed, pair)
    assert gradgradcheck(composed, pair)


def _jacobian_three_ways(fn, inputs, forward=True):
    """vectorize=True (and forward mode) agree with the row-by-row Jacobian."""
    want = F.jacobian(fn, inputs, vectorize=False)
    _same(F.jacobian(fn, inputs, vectorize=True), want)
    if forward and _HAS_FORWARD_AD:     # (the install sets without retrograd-forward-ad check the rest)
        _same(F.jacobian(fn, inputs, strategy="forward-mode", vectorize=True), want)


def test_jacobian_vectorize_correctness_simple():
    _jacobian_three_ways(lambda x: 3 * x ** 2, rg.randn(2, 3, 5))


def test_jacobian_vectorize_correctness_multi_input():
    _jacobian_three_ways(lambda x, y: (x.cos() * x) @ y.sin(), (rg.randn(2, 3), rg.randn(3, 5)))


def test_jacobian_vectorize_correctness_multi_input_multi_output():
    def three_outputs(x, y):
        return (x * x) @ y, x @ (x.sum(1) * y), y.sum()

    _jacobian_three_ways(three_outputs, (rg.randn(5, 3), rg.randn(3, 5)))


def test_jacobian_vectorize_correctness_unrelated_outputs():
    _jacobian_three_ways(lambda x, y: (x, y, x, y), (rg.randn(2), rg.randn(3)))


def test_jacobian_vectorize_correctness_zero_dim():
    """0-d outputs, a 0-d input, and both together."""
    _jacobian_three_ways(lambda x, y: (x.sum(), y.sum(), x * y), (rg.randn(3), rg.randn(3)))
    _jacobian_three_ways(lambda x: rg.stack([x, x, x]), rg.randn([]))
    _jacobian_three_ways(lambda x, y: (y.sum(), x * y), (rg.randn([]), rg.randn(1)))


def test_jacobian_vectorize_correctness_different_dtype():
    """Reverse mode, vectorized or not, gives the same blocks (dtypes included) for mixed-dtype outputs."""
    def two_dtypes(x, y):
        return (x * y).float(), (x * y).double()

    pair = (rg.randn(3), rg.randn(3))
    _jacobian_three_ways(two_dtypes, pair, forward=False)
    for row in F.jacobian(two_dtypes, pair, vectorize=True):
        assert [b.dtype for b in row] == [t.dtype for t in pair]      # reverse mode: the input's dtype
