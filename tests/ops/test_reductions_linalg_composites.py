"""Focused tests of the reduction and linear algebra composites that the
sample registry cannot express (several results, varargs): max/min with
values and indices, einsum with any number of operands, tensordot,
rg.linalg.norm / matrix_norm / slogdet's sign, method forms, errors, and
torch's edge rules (zero subgradients, zeros in prod/cumprod)."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import retrograd as rg  # noqa: E402
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _grads_match(rg_fn, torch_fn, *arrays, second=True, rtol=1e-10, atol=1e-12):
    """Value, gradient (random upstream) and second-order gradient of rg_fn
    match torch_fn on float64 inputs."""
    xs = [rg.tensor(a.copy(), requires_grad=True) for a in arrays]
    ts = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    out, tout = rg_fn(*xs), torch_fn(*ts)
    np.testing.assert_allclose(values(out), tout.detach().numpy(), rtol=rtol, atol=atol)
    v = RNG.standard_normal(tuple(out.shape))
    gs = rg.autograd.grad(out, xs, grad_outputs=rg.tensor(v), create_graph=second, allow_unused=True)
    tgs = torch.autograd.grad(tout, ts, grad_outputs=torch.tensor(v), create_graph=second, allow_unused=True)
    for g, tg, x in zip(gs, tgs, xs):
        ref = np.zeros(x.shape) if tg is None else tg.detach().numpy(force=True)
        np.testing.assert_allclose(np.zeros(x.shape) if g is None else values(g), ref, rtol=rtol, atol=atol)
    if not second:
        return
    w = [RNG.standard_normal(tuple(x.shape)) for x in xs]
    terms = [(g * rg.tensor(wi)).sum() for g, wi in zip(gs, w) if g is not None and g.requires_grad]
    tterms = [(g * torch.tensor(wi)).sum() for g, wi in zip(tgs, w) if g is not None and g.requires_grad]
    if not tterms:
        return
    t2 = torch.autograd.grad(sum(tterms[1:], tterms[0]), ts, allow_unused=True)
    if not terms:
        # a piecewise-linear op (max of |x| sums): our first gradient is a
        # constant, torch's records a graph whose derivative is zero
        for tg in t2:
            assert tg is None or not tg.detach().numpy(force=True).any()
        return
    s2 = rg.autograd.grad(sum(terms[1:], terms[0]), xs, allow_unused=True)
    for g, tg, x in zip(s2, t2, xs):
        ref = np.zeros(x.shape) if tg is None else tg.detach().numpy(force=True)
        np.testing.assert_allclose(np.zeros(x.shape) if g is None else values(g), ref, rtol=rtol, atol=atol)


# --- max / min -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (-1, False), (2, True)])
def test_max_min_dim_values_indices(name, dim, keepdim):
    a = RNG.standard_normal((2, 3, 4))
    a[0, 1, 2] = a[0, 1, 0]              # a tie: torch's gradient goes to the selected index only
    x = rg.tensor(a, requires_grad=True)
    res = getattr(rg, name)(x, dim, keepdim)
    tres = getattr(torch, name)(torch.tensor(a), dim, keepdim)
    assert type(res).__name__ == name and res._fields == ("values", "indices")
    vals, indices = res
    np.testing.assert_array_equal(values(vals), tres.values.numpy())
    np.testing.assert_array_equal(values(indices), tres.indices.numpy())
    assert indices.dtype == np.int64 and not indices.requires_grad
    assert vals.requires_grad
    m = getattr(x, name)(dim=dim, keepdim=keepdim)
    np.testing.assert_array_equal(values(m.values), values(vals))
    _grads_match(lambda t: getattr(rg, name)(t, dim, keepdim).values,
                 lambda t: getattr(torch, name)(t, dim, keepdim).values, a)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_full_reduction_ties_split_evenly(name):
    a = np.array([[1.0, 3.0, 3.0], [-2.0, 0.5, 3.0]])
    if name == "min":
        a = -a
    x = rg.tensor(a, requires_grad=True)
    out = getattr(rg, name)(x)
    assert out.shape == () and out.grad_fn is not None
    _grads_match(lambda t: getattr(rg, name)(t), lambda t: getattr(torch, name)(t), a)
    assert getattr(x, name)().item() == out.item()


@pytest.mark.parametrize("name", ["amax", "amin"])
@pytest.mark.parametrize("dim,keepdim", [((), False), (1, False), ((0, 1), True), (0, True)])
def test_amax_amin_ties_split_evenly(name, dim, keepdim):
    a = np.array([[1.0, 3.0, 3.0], [-2.0, -2.0, 3.0]])
    _grads_match(lambda t: getattr(rg, name)(t, dim, keepdim),
                 lambda t: getattr(torch, name)(t, dim, keepdim), a)


def test_max_integer_input_and_binary_form():
    x = rg.tensor(np.array([[1, 5, 2], [7, 0, 7]]))
    v, i = rg.max(x, 1)
    assert v.tolist() == [5, 7] and i.tolist() == [1, 0] and not v.requires_grad
    assert rg.max(x).item() == 7
    a, b = rg.tensor([1.0, 4.0]), rg.tensor([3.0, 2.0])
    if hasattr(rg, "maximum"):
        assert rg.max(a, b).tolist() == [3.0, 4.0]
        assert rg.min(a, b).tolist() == [1.0, 2.0]
    else:
        with pytest.raises(NotImplementedError):
            rg.max(a, b)


def test_max_errors():
    with pytest.raises(IndexError):
        rg.max(rg.ones((2, 3)), 2)
    with pytest.raises(RuntimeError):
        rg.max(rg.ones((0,)))
    with pytest.raises(IndexError):                 # torch's type for argmax of an empty tensor
        rg.argmax(rg.ones((0,)))


def test_argmax_argmin_match_torch():
    a = RNG.standard_normal((3, 4, 5))
    for dim, keepdim in [(None, False), (None, True), (0, False), (-1, True)]:
        for name in ("argmax", "argmin"):
            got = getattr(rg, name)(rg.tensor(a), dim, keepdim)
            ref = getattr(torch, name)(torch.tensor(a), dim, keepdim)
            np.testing.assert_array_equal(values(got), ref.numpy())
            assert got.dtype == np.int64 and not got.requires_grad


# --- einsum / tensordot -------------------------------------------------------------

@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("bij,bjk,bkl->bl", [(2, 3, 4), (2, 4, 2), (2, 2, 3)]),
    ("i,i,i->", [(4,), (4,), (4,)]),
    ("ij,jk,ki->", [(2, 3), (3, 4), (4, 2)]),
    ("ii,ij,j->i", [(3, 3), (3, 2), (2,)]),
    ("...ij,jk->...ik", [(2, 2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),        # ellipsis broadcasting
    ("i j , j k", [(2, 3), (3, 2)]),                           # spaces, implicit output
    ("ba,ab", [(3, 3), (3, 3)]),
    ("Ab,bC->AC", [(2, 3), (3, 2)]),
    ("iji->j", [(2, 3, 2)]),
    ("ij,ij,ij->ij", [(2, 3), (1, 3), (2, 1)]),                # size-1 broadcasting
])
def test_einsum_matches_torch(eq, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    _grads_match(lambda *xs: rg.einsum(eq, *xs), lambda *ts: torch.einsum(eq, *ts), *arrays)
    # the list form
    out = rg.einsum(eq, [rg.tensor(a) for a in arrays])
    np.testing.assert_allclose(values(out), torch.einsum(eq, *[torch.tensor(a) for a in arrays]).numpy(),
                               rtol=1e-12, atol=1e-12)


def test_einsum_errors():
    a = rg.ones((2, 3))
    for bad in (lambda: rg.einsum("ij,jk->ik", a), lambda: rg.einsum("ij->ik", a),
                lambda: rg.einsum("ijk->i", a), lambda: rg.einsum("ij,jk->ik", a, rg.ones((2, 2))),
                lambda: rg.einsum("ij->ii", a), lambda: rg.einsum("i1->i", a)):
        with pytest.raises(RuntimeError):
            bad()


@pytest.mark.parametrize("dims,sa,sb", [
    (2, (2, 3, 4), (3, 4, 5)), (1, (2, 3), (3, 4)), (0, (2,), (3,)),
    (([1, 0], [0, 1]), (2, 3, 4), (3, 2, 5)), (([2], [0]), (2, 3, 4), (4, 2)),
])
def test_tensordot_matches_torch(dims, sa, sb):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    _grads_match(lambda x, y: rg.tensordot(x, y, dims), lambda x, y: torch.tensordot(x, y, dims), a, b)


def test_tensordot_errors():
    with pytest.raises(RuntimeError, match="contracted dimensions"):
        rg.tensordot(rg.ones((2, 3)), rg.ones((4, 2)), 1)


# --- mm / bmm / dot / outer errors -----------------------------------------------------

def test_matrix_product_shape_errors():
    for bad in (lambda: rg.mm(rg.ones((2, 3)), rg.ones((2, 3))), lambda: rg.mm(rg.ones(3), rg.ones((3, 2))),
                lambda: rg.bmm(rg.ones((2, 2, 3)), rg.ones((3, 3, 2))), lambda: rg.bmm(rg.ones((2, 3)), rg.ones((2, 3))),
                lambda: rg.dot(rg.ones(3), rg.ones(4)), lambda: rg.dot(rg.ones((3, 1)), rg.ones(3)),
                lambda: rg.outer(rg.ones((2, 2)), rg.ones(2))):
        with pytest.raises(RuntimeError):
            bad()
    x = rg.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    assert x.mm(rg.ones((3, 2))).grad_fn.name() == "MmBackward0"


# --- norms ----------------------------------------------------------------------------

@pytest.mark.parametrize("p", [2, 1, 3, 1.5, float("inf"), "fro"])
def test_norm_at_zero_has_zero_subgradient(p):
    a = np.zeros((2, 3))
    a[1] = RNG.standard_normal(3)
    _grads_match(lambda t: rg.norm(t, p, 1), lambda t: torch.norm(t, p, 1), a, second=False)
    x = rg.tensor(np.zeros(4), requires_grad=True)
    g, = rg.autograd.grad(x.norm(p), x)
    assert np.all(np.isfinite(values(g)))


@pytest.mark.parametrize("ord,dim,shape", [
    (None, None, (3, 4)), (None, None, (2, 3, 4)), (None, 1, (3, 4)), (None, (0, 2), (2, 3, 4)),
    ("fro", None, (3, 4)), (1, None, (3, 4)), (-1, None, (3, 4)), (float("inf"), None, (3, 4)),
    (float("-inf"), None, (3, 4)), (3, None, (5,)), (1, (2, 0), (3, 4, 5)),
    (float("inf"), (-1, -2), (2, 3, 4)), (0.5, 1, (3, 4)),
])
def test_linalg_norm_matches_torch(ord, dim, shape):
    a = RNG.uniform(0.2, 2.0, shape) * RNG.choice([-1.0, 1.0], shape)
    for keepdim in (False, True):
        _grads_match(lambda t: rg.linalg.norm(t, ord, dim, keepdim),
                     lambda t: torch.linalg.norm(t, ord, dim, keepdim), a)


def test_vector_and_matrix_norm():
    a = RNG.standard_normal((2, 3, 4))
    _grads_match(lambda t: rg.linalg.vector_norm(t, 3, (0, 2)), lambda t: torch.linalg.vector_norm(t, 3, (0, 2)), a)
    _grads_match(lambda t: rg.linalg.matrix_norm(t, 1), lambda t: torch.linalg.matrix_norm(t, 1), a)
    _grads_match(lambda t: rg.linalg.matrix_norm(t, "nuc"), lambda t: torch.linalg.matrix_norm(t, "nuc"), a)


# --- prod / cumprod with zeros, second order against torch --------------------------

def test_prod_and_cumprod_with_zeros_second_order():
    a = RNG.uniform(0.5, 1.5, (3, 5))
    a[0, 2] = 0.0
    a[1, 1] = a[1, 3] = 0.0
    _grads_match(lambda t: rg.prod(t, 1), lambda t: torch.prod(t, 1), a)
    _grads_match(lambda t: rg.prod(t), lambda t: torch.prod(t), a)
    _grads_match(lambda t: rg.cumprod(t, 1), lambda t: torch.cumprod(t, 1), a)
    b = a.copy()
    b[1] = RNG.uniform(0.5, 1.5, 5)          # a single zero in the whole tensor
    _grads_match(lambda t: rg.prod(t), lambda t: torch.prod(t), b)


def test_var_std_forms():
    a = RNG.standard_normal((3, 4))
    x = rg.tensor(a)
    t = torch.tensor(a)
    np.testing.assert_allclose(values(x.var()), t.var().numpy())
    np.testing.assert_allclose(values(x.var(1, keepdim=True)), t.var(1, keepdim=True).numpy())
    np.testing.assert_allclose(values(rg.std(x, unbiased=False)), torch.std(t, unbiased=False).numpy())
    np.testing.assert_allclose(values(rg.std(x, 0, correction=0)), torch.std(t, 0, correction=0).numpy())
    with pytest.raises(RuntimeError):
        rg.var(x, 1, unbiased=True, correction=1)
    with pytest.raises(RuntimeError):
        rg.var(rg.tensor([1, 2, 3]))
    # std at a constant slice: zero gradient, not nan (torch's rule)
    c = rg.tensor(np.ones((2, 3)), requires_grad=True)
    g, = rg.autograd.grad(rg.std(c, 1).sum(), c)
    assert np.all(values(g) == 0)


def test_logsumexp_is_stable():
    x = rg.tensor(np.array([1000.0, 1000.0, -np.inf]), requires_grad=True)
    out = rg.logsumexp(x, 0)
    np.testing.assert_allclose(out.item(), 1000.0 + np.log(2.0))
    g, = rg.autograd.grad(out, x)
    np.testing.assert_allclose(values(g), [0.5, 0.5, 0.0])


def test_integer_inputs_do_not_require_grad():
    x = rg.tensor(np.arange(1, 7).reshape(2, 3))
    for out in (rg.prod(x, 1), rg.amax(x), rg.cumsum(x, 0), rg.cumprod(x, 1), rg.mm(x, x.T)):
        assert out.dtype.kind == "i" and not out.requires_grad
    assert rg.cumsum(x, 0).dtype == np.int64


# --- linalg ---------------------------------------------------------------------------

def test_slogdet_sign_and_named_tuple():
    a = np.eye(3) + RNG.standard_normal((3, 3)) / 6
    a[0] *= -1
    x = rg.tensor(a, requires_grad=True)
    res = rg.linalg.slogdet(x)
    assert res._fields == ("sign", "logabsdet")
    ref = torch.linalg.slogdet(torch.tensor(a))
    assert res.sign.item() == ref.sign.item() == -1.0
    # both results require grad, as torch's (the sign's gradient is ignored)
    tref = torch.linalg.slogdet(torch.tensor(a, requires_grad=True))
    assert res.sign.requires_grad == tref.sign.requires_grad and res.logabsdet.requires_grad
    assert res.sign.grad_fn is res.logabsdet.grad_fn and res.sign.grad_fn.name() == tref.sign.grad_fn.name()
    np.testing.assert_allclose(res.logabsdet.item(), ref.logabsdet.item())


def test_linalg_errors_are_linalg_errors():
    sing = rg.tensor(np.ones((3, 3)))
    with pytest.raises(rg.linalg.LinAlgError):
        rg.linalg.inv(sing)
    with pytest.raises(RuntimeError):
        rg.linalg.cholesky(rg.tensor(-np.eye(2)))
    with pytest.raises(RuntimeError, match="square"):
        rg.linalg.det(rg.ones((2, 3)))
    with pytest.raises(RuntimeError):
        rg.linalg.solve(rg.tensor(np.eye(3)), rg.ones((2, 2)))
    assert issubclass(rg.linalg.LinAlgError, RuntimeError)


def test_solve_left_false_and_cholesky_upper():
    a = np.eye(3) + RNG.standard_normal((3, 3)) / 6
    b = RNG.standard_normal((2, 3))
    _grads_match(lambda x, y: rg.linalg.solve(x, y, left=False),
                 lambda x, y: torch.linalg.solve(x, y, left=False), a, b)
    s = a @ a.T
    _grads_match(lambda x: rg.linalg.cholesky((x + x.mT) * 0.5, upper=True),
                 lambda x: torch.linalg.cholesky((x + x.mT) * 0.5, upper=True), s)


def test_tensor_methods():
    a = np.eye(3) + RNG.standard_normal((3, 3)) / 6
    x = rg.tensor(a)
    np.testing.assert_allclose(values(x.inverse()), np.linalg.inv(a))
    np.testing.assert_allclose(x.det().item(), np.linalg.det(a))
    for m in ("prod", "amax", "amin", "var", "std", "logsumexp", "norm", "argmax", "argmin"):
        np.testing.assert_allclose(values(getattr(x, m)()), values(getattr(rg, m)(x)))
    np.testing.assert_allclose(values(x.cumsum(0)), np.cumsum(a, 0))


def test_det_gradient_at_singular_matrices():
    # rank 2 and rank 1 3x3 matrices, batched: torch's cofactor gradient
    a = RNG.standard_normal((2, 3, 3))
    a[0, 2] = a[0, 0] + a[0, 1]
    a[1, 1] = 2 * a[1, 0]
    a[1, 2] = -a[1, 0]
    _grads_match(lambda t: rg.linalg.det(t), lambda t: torch.linalg.det(t), a, second=False, atol=1e-10)


def test_einsum_sublist_form():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    _grads_match(lambda x, y: rg.einsum(x, [0, 1], y, [1, 2], [0, 2]),
                 lambda x, y: torch.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b)
    _grads_match(lambda x: rg.einsum(x, [Ellipsis, 1]), lambda x: torch.einsum(x, [Ellipsis, 1]), a)
    with pytest.raises(RuntimeError):
        rg.einsum(rg.tensor(a), [0, 99])
