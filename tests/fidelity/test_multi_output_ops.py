"""Ops with several results, each one table entry computed once
(derivatives.yaml's `-> (...)` entries): linalg.svd / svdvals, max / min
with a dim, linalg.slogdet. Against torch: the graph (one node, output
numbers, node names), gradients with only some results used, double
backward, gradcheck; and that the SVD runs once per forward and never in
backward. Their forward AD: tests/forward_ad/test_multi_output_jvp.py."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd as rg  # noqa: E402
from _arrays import values  # noqa: E402

RNG = np.random.default_rng(15)


@pytest.fixture
def svd_calls(monkeypatch):
    """Counts np.linalg.svd calls (the kernel looks it up at each call)."""
    calls = []
    real = np.linalg.svd

    def counting(*args, **kwargs):
        calls.append(kwargs.get("compute_uv", True))
        return real(*args, **kwargs)
    monkeypatch.setattr(np.linalg, "svd", counting)
    return calls


# --- SVD -----------------------------------------------------------------------------

def _gauge_loss(lib, U, S, Vh, w):
    # invariant to the sign of each singular vector (U's columns, Vh's rows)
    wu, ws, wv = w
    lu = (U[..., :1, :] * U * lib.tensor(wu)).sum()
    lv = (Vh[..., :, :1] * Vh * lib.tensor(wv)).sum()
    return lu, (S * lib.tensor(ws)).sum(), lv


def _svd_weights(shape):
    m, n = shape[-2:]
    k = min(m, n)
    bs = shape[:-2]
    return (RNG.standard_normal(bs + (m, k)), RNG.standard_normal(bs + (k,)),
            RNG.standard_normal(bs + (k, n)))


def test_svd_runs_once_per_forward_and_never_in_backward(svd_calls):
    a = RNG.standard_normal((4, 3))
    x = rg.tensor(a, requires_grad=True)
    U, S, Vh = rg.linalg.svd(x, full_matrices=False)
    assert len(svd_calls) == 1
    lu, ls, lv = _gauge_loss(rg, U, S, Vh, _svd_weights(a.shape))
    g, = rg.autograd.grad(lu + ls + lv, x, create_graph=True)
    assert len(svd_calls) == 1                      # backward reuses the saved U, S, Vh
    gg, = rg.autograd.grad(g.sum(), x)              # and so does double backward
    assert len(svd_calls) == 1
    rg.linalg.svdvals(x).sum().backward()
    assert len(svd_calls) == 2
    with rg.no_grad():                              # nothing to differentiate: S only
        rg.linalg.svdvals(x)
    assert svd_calls[-1] is False and len(svd_calls) == 3


def test_svd_graph_matches_torch():
    a = RNG.standard_normal((3, 5))
    U, S, Vh = rg.linalg.svd(rg.tensor(a, requires_grad=True), full_matrices=False)
    tU, tS, tVh = torch.linalg.svd(torch.tensor(a, requires_grad=True), full_matrices=False)
    assert U.grad_fn is S.grad_fn is Vh.grad_fn
    assert U.grad_fn.name() == tU.grad_fn.name() == "LinalgSvdBackward0"
    assert [t.output_nr for t in (U, S, Vh)] == [t.output_nr for t in (tU, tS, tVh)] == [0, 1, 2]
    # the saved factors are the results themselves
    np.testing.assert_array_equal(values(U.grad_fn._saved_S), values(S))
    sv = rg.linalg.svdvals(rg.tensor(a, requires_grad=True))
    tsv = torch.linalg.svdvals(torch.tensor(a, requires_grad=True))
    assert sv.grad_fn.name() == tsv.grad_fn.name() and sv.output_nr == tsv.output_nr == 1


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (3, 3), (2, 4, 2)])
@pytest.mark.parametrize("used", [(0,), (1,), (2,), (0, 1), (1, 2), (0, 2), (0, 1, 2)])
def test_svd_gradient_of_some_results_matches_torch(shape, used):
    a = RNG.standard_normal(shape)
    w = _svd_weights(shape)
    x, tx = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    parts = _gauge_loss(rg, *rg.linalg.svd(x, full_matrices=False), w)
    tparts = _gauge_loss(torch, *torch.linalg.svd(tx, full_matrices=False), w)
    loss = sum(parts[i] for i in used)
    tloss = sum(tparts[i] for i in used)
    g, = rg.autograd.grad(loss, x, create_graph=True)
    tg, = torch.autograd.grad(tloss, tx, create_graph=True)
    np.testing.assert_allclose(values(g), tg.detach().numpy(), rtol=1e-9, atol=1e-10)
    v = RNG.standard_normal(shape)
    gg, = rg.autograd.grad((g * rg.tensor(v)).sum(), x)
    tgg, = torch.autograd.grad((tg * torch.tensor(v)).sum(), tx)
    np.testing.assert_allclose(values(gg), tgg.numpy(), rtol=1e-7, atol=1e-9)


def test_svd_gradcheck_and_gradgradcheck():
    a = rg.tensor(RNG.standard_normal((2, 4, 3)), requires_grad=True)
    w = _svd_weights((2, 4, 3))

    def f(x):
        lu, ls, lv = _gauge_loss(rg, *rg.linalg.svd(x, full_matrices=False), w)
        return lu + ls * 2 + lv
    assert rg.autograd.gradcheck(f, (a,))
    assert rg.autograd.gradgradcheck(f, (a,))


def test_svd_saved_factor_modified_in_place_is_refused():
    U, S, Vh = rg.linalg.svd(rg.tensor(RNG.standard_normal((3, 3)), requires_grad=True),
                             full_matrices=False)
    tU, tS, tVh = torch.linalg.svd(torch.randn(3, 3, dtype=torch.float64, requires_grad=True),
                                   full_matrices=False)
    with torch.no_grad():
        tS.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tU.sum().backward()
    with rg.no_grad():
        S.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*output 1 of LinalgSvdBackward0"):
        U.sum().backward()


# --- max / min with a dim -----------------------------------------------------------

@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_graph_matches_torch(name):
    a = RNG.standard_normal((3, 4))
    res = getattr(rg, name)(rg.tensor(a, requires_grad=True), 1)
    tres = getattr(torch, name)(torch.tensor(a, requires_grad=True), 1)
    assert type(res).__name__ == type(tres).__name__ == name
    assert res.values.grad_fn.name() == tres.values.grad_fn.name()
    assert res.values.output_nr == tres.values.output_nr == 0
    assert not res.indices.requires_grad and res.indices.grad_fn is None
    assert res.indices.requires_grad == tres.indices.requires_grad
    np.testing.assert_array_equal(values(res.values.grad_fn._saved_indices), tres.indices.numpy())
    # the method form is the same op
    assert getattr(rg.tensor(a, requires_grad=True), name)(0).values.grad_fn.name() == \
        tres.values.grad_fn.name()


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_double_backward_matches_torch(name, keepdim):
    a = RNG.standard_normal((3, 4, 2))
    w = RNG.standard_normal((3, 1, 2) if keepdim else (3, 2))
    x, tx = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    v = getattr(rg, name)(x, 1, keepdim).values
    tv = getattr(torch, name)(tx, 1, keepdim).values
    g, = rg.autograd.grad((v * v * rg.tensor(w)).sum(), x, create_graph=True)
    tg, = torch.autograd.grad((tv * tv * torch.tensor(w)).sum(), tx, create_graph=True)
    np.testing.assert_allclose(values(g), tg.detach().numpy(), rtol=1e-12)
    gg, = rg.autograd.grad(g.sum(), x)
    tgg, = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(values(gg), tgg.numpy(), rtol=1e-12)
    assert rg.autograd.gradcheck(lambda t: getattr(rg, name)(t, 1, keepdim).values, (x,))
    assert rg.autograd.gradgradcheck(lambda t: getattr(rg, name)(t, 1, keepdim).values ** 2, (x,))


def test_max_dim_indices_modified_in_place_is_refused_as_torch():
    x = rg.tensor(RNG.standard_normal(3), requires_grad=True)
    v, i = rg.max(x, 0)
    tv, ti = torch.max(torch.tensor(values(x), requires_grad=True), 0)
    ti.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tv.backward()
    i.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        v.backward()


# --- slogdet ---------------------------------------------------------------------------

def _square(*shape):
    n = shape[-1]
    a = RNG.standard_normal(shape) / (2 * n) + np.eye(n)
    a[..., 0, :] *= -1
    return a


def test_slogdet_graph_matches_torch():
    a = _square(2, 3, 3)
    s, l = rg.linalg.slogdet(rg.tensor(a, requires_grad=True))
    ts, tl = torch.linalg.slogdet(torch.tensor(a, requires_grad=True))
    assert type(rg.linalg.slogdet(rg.tensor(a))).__name__ == type(torch.slogdet(torch.tensor(a))).__name__
    assert s.grad_fn is l.grad_fn and s.grad_fn.name() == ts.grad_fn.name()
    assert (s.requires_grad, l.requires_grad) == (ts.requires_grad, tl.requires_grad)
    assert (s.output_nr, l.output_nr) == (ts.output_nr, tl.output_nr) == (0, 1)
    np.testing.assert_array_equal(values(s), ts.detach().numpy())
    assert s.dtype == np.float64 and l.dtype == np.float64


def test_slogdet_gradient_of_the_sign_alone_is_none_as_torch():
    a = _square(3, 3)
    x, tx = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    g, = rg.autograd.grad(rg.linalg.slogdet(x).sign.sum(), x, allow_unused=True)
    tg, = torch.autograd.grad(torch.linalg.slogdet(tx).sign.sum(), tx, allow_unused=True)
    assert g is None and tg is None


def test_slogdet_both_results_and_double_backward_match_torch():
    a = _square(2, 3, 3)
    x, tx = rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    s, l = rg.linalg.slogdet(x)
    ts, tl = torch.linalg.slogdet(tx)
    g, = rg.autograd.grad((s * 3 + l * l).sum(), x, create_graph=True)
    tg, = torch.autograd.grad((ts * 3 + tl * tl).sum(), tx, create_graph=True)
    np.testing.assert_allclose(values(g), tg.detach().numpy(), rtol=1e-10)
    gg, = rg.autograd.grad((g * g).sum(), x)
    tgg, = torch.autograd.grad((tg * tg).sum(), tx)
    np.testing.assert_allclose(values(gg), tgg.numpy(), rtol=1e-9)
    xx = rg.tensor(a, requires_grad=True)
    assert rg.autograd.gradcheck(lambda t: rg.linalg.slogdet(t).logabsdet, (xx,))
    assert rg.autograd.gradgradcheck(lambda t: rg.linalg.slogdet(t).logabsdet, (xx,))


# --- saved-tensor hooks see the saved results as torch's ------------------------------

@pytest.mark.parametrize("case", ["svd", "max"])
def test_saved_results_go_through_saved_tensor_hooks_as_torch(case):
    a = RNG.standard_normal((4, 3))

    def run(lib, graph):
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return t

        x = lib.tensor(a, requires_grad=True)
        with graph.saved_tensors_hooks(pack, lambda t: t):
            if case == "svd":
                U, S, Vh = lib.linalg.svd(x, full_matrices=False)
                loss = S.sum() + (U[..., :1, :] * U).sum()
            else:
                loss = lib.max(x, 1).values.sum()
        g, = lib.autograd.grad(loss, x)
        return sorted(packed), values(g.detach() if lib is torch else g)

    packed, g = run(rg, rg.autograd.graph)
    tpacked, tg = run(torch, torch.autograd.graph)
    assert packed == tpacked
    np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("a", [
    [[1.0, 2.0], [2.0, 4.0]],
    [[0.0, 0.0], [0.0, 0.0]],
    [[0.0, 1.0], [0.0, 1.0]],
    [[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]],
], ids=["rank1", "zero", "zero_column", "batch_one_singular"])
def test_slogdet_gradient_of_a_singular_matrix_is_inf_nan_as_torch(a):
    # torch solves with the LU factors without checking the pivots: the
    # gradient is not finite there, and no error is raised. (Which of inf and
    # nan comes out where a pivot is zero follows LAPACK's order of
    # operations, which retrograd's elimination does not copy.)
    x, tx = rg.tensor(a, requires_grad=True), torch.tensor(a, dtype=torch.float64, requires_grad=True)
    rg.linalg.slogdet(x).logabsdet.sum().backward()
    torch.linalg.slogdet(tx).logabsdet.sum().backward()
    got, want = values(x.grad), tx.grad.numpy()
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    np.testing.assert_allclose(got[np.isfinite(got)], want[np.isfinite(want)])
    assert not np.isfinite(got).all()
