"""rg.linalg.eigh / eigvalsh, qr and lstsq: what the registry's samples
(op_samples_sort_linalg.py) do not cover: UPLO, the modes of qr and their
backward errors, the results of each lstsq driver, rank deficiency,
repeated eigenvalues, and the errors; plus the existing svd and norms'
gradients, all against torch."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") and not isinstance(t, rg.Tensor) else np.asarray(t)


@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigh_reads_one_triangle_as_torch(UPLO):
    a = np.random.default_rng(0).standard_normal((2, 4, 4))      # not symmetric on purpose
    r = rg.linalg.eigh(rg.tensor(a), UPLO=UPLO)
    t = torch.linalg.eigh(torch.tensor(a), UPLO=UPLO)
    np.testing.assert_allclose(np.asarray(r.eigenvalues), _np(t.eigenvalues), atol=1e-12)
    # eigenvectors up to their signs
    v, tv = np.asarray(r.eigenvectors), _np(t.eigenvectors)
    np.testing.assert_allclose(np.abs(np.sum(v * tv, axis=-2)), 1.0, atol=1e-10)
    assert type(r).__name__ == "linalg_eigh" and r._fields == ("eigenvalues", "eigenvectors")
    np.testing.assert_allclose(np.asarray(rg.linalg.eigvalsh(rg.tensor(a), UPLO)), _np(t.eigenvalues), atol=1e-12)


def test_eigh_gradient_gauge_invariant_loss_vs_torch():
    rng = np.random.default_rng(1)
    b = rng.standard_normal((3, 3))
    a = b + b.T
    w = rng.standard_normal((3, 3))

    def loss(lib, x):
        L, V = lib.linalg.eigh(x)
        P = V @ (V * L.unsqueeze(-2)).mT           # = A, sign-free
        return (P * lib.tensor(w) if lib is rg else P * torch.tensor(w)).sum() + (V.abs() ** 2).sum() + L.sum()
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    loss(rg, x).backward()
    loss(torch, tx).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-10)


def test_eigh_repeated_eigenvalues_as_torch():
    # eigenvalues alone: finite; through the eigenvectors: the division by
    # L_j - L_i = 0 gives inf/nan, as in torch
    x = rg.eye(3, requires_grad=True)
    rg.linalg.eigh(x).eigenvalues.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.eye(3))
    x2 = rg.eye(3, requires_grad=True)
    tx = torch.eye(3, dtype=torch.float64, requires_grad=True)
    rg.linalg.eigh(x2).eigenvectors.sum().backward()
    torch.linalg.eigh(tx).eigenvectors.sum().backward()
    assert not np.isfinite(x2.grad.numpy()).all()
    assert not torch.isfinite(tx.grad).all()


def test_eigh_errors():
    with pytest.raises(RuntimeError, match="square"):
        rg.linalg.eigh(rg.zeros(3, 4))
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        rg.linalg.eigh(rg.eye(2), UPLO="X")
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        rg.linalg.eigh(rg.zeros(3))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_modes_values_as_torch(shape, mode):
    a = np.random.default_rng(2).standard_normal(shape)
    r = rg.linalg.qr(rg.tensor(a), mode=mode)
    t = torch.linalg.qr(torch.tensor(a), mode=mode)
    assert r.Q.shape == tuple(t.Q.shape) and r.R.shape == tuple(t.R.shape)
    np.testing.assert_allclose(np.asarray(r.R), _np(t.R), atol=1e-12)     # same LAPACK signs
    if mode != "r":
        np.testing.assert_allclose(np.asarray(r.Q), _np(t.Q), atol=1e-12)


def test_qr_backward_errors_as_torch():
    x = rg.tensor(np.random.default_rng(3).standard_normal((5, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'. Please use linalg.qr\\(A, mode='reduced'\\)"):
        rg.linalg.qr(x, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        rg.linalg.qr(x, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="unrecognized mode 'x'"):
        rg.linalg.qr(x, mode="x")


@pytest.mark.parametrize("shape,mode", [((5, 3), "reduced"), ((3, 5), "reduced"), ((3, 5), "complete"),
                                        ((3, 3), "complete")])
def test_qr_gradient_vs_torch(shape, mode):
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shape)
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    Q, R = rg.linalg.qr(x, mode)
    tQ, tR = torch.linalg.qr(tx, mode)
    wq, wr = rng.standard_normal(Q.shape), rng.standard_normal(R.shape)
    ((Q * rg.tensor(wq)).sum() + (R * rg.tensor(wr)).sum()).backward()
    ((tQ * torch.tensor(wq)).sum() + (tR * torch.tensor(wr)).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 3), (3,)), ((2, 5, 3), (2, 5, 1))])
def test_lstsq_results_per_driver_as_torch(driver, shapes):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    r = rg.linalg.lstsq(rg.tensor(a), rg.tensor(b), driver=driver)
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    assert type(r).__name__ == "linalg_lstsq"
    for name in ("solution", "residuals", "rank", "singular_values"):
        got, want = getattr(r, name), getattr(t, name)
        assert got.shape == tuple(want.shape), (name, got.shape, want.shape)
        assert got.dtype == np.dtype(str(want.dtype).replace("torch.", "")), name
        np.testing.assert_allclose(np.asarray(got), _np(want), atol=1e-10, err_msg=name)


def test_lstsq_rank_deficient_min_norm_and_gradient():
    a = np.ones((4, 3))
    b = np.random.default_rng(6).standard_normal((4, 1))
    r = rg.linalg.lstsq(rg.tensor(a), rg.tensor(b))
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(np.asarray(r.solution), _np(t.solution), atol=1e-12)
    assert r.rank.item() == t.rank.item() == 1
    # a full-rank problem: gradients of the solution in A and B as torch's
    rng = np.random.default_rng(7)
    a, b, w = rng.standard_normal((5, 3)), rng.standard_normal((5, 2)), rng.standard_normal((3, 2))
    x, y = rg.tensor(a, requires_grad=True), rg.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (rg.linalg.lstsq(x, y).solution * rg.tensor(w)).sum().backward()
    (torch.linalg.lstsq(tx, ty).solution * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), atol=1e-10)
    assert not rg.linalg.lstsq(x, y).rank.requires_grad


def test_lstsq_errors():
    with pytest.raises(RuntimeError, match="should match other.size"):
        rg.linalg.lstsq(rg.zeros(4, 3), rg.zeros(3, 2))
    with pytest.raises(RuntimeError, match="driver"):
        rg.linalg.lstsq(rg.zeros(4, 3), rg.zeros(4, 2), driver="magic")
    with pytest.raises(RuntimeError, match="same dtype"):
        rg.linalg.lstsq(rg.zeros(4, 3), rg.zeros(4, 2, dtype=rg.float32))
    with pytest.raises(RuntimeError, match="input.dim\\(\\) must be greater or equal to other.dim\\(\\)"):
        rg.linalg.lstsq(rg.zeros(4, 3), rg.zeros(2, 2, 4, 2))
    with pytest.raises(rg.linalg.LinAlgError, match="full rank"):
        rg.linalg.lstsq(rg.ones(4, 3), rg.zeros(4, 2), driver="gels")


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.linalg.svd(x, full_matrices=False).S.sum(),
    lambda lib, x: lib.linalg.matrix_norm(x, "nuc"),
    lambda lib, x: lib.linalg.matrix_norm(x, 2),
    lambda lib, x: lib.linalg.vector_norm(x, 3),
])
def test_svd_and_norms_exist_with_gradients(fn):
    a = np.random.default_rng(8).standard_normal((4, 3))
    x = rg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    fn(rg, x).backward()
    fn(torch, tx).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-10)
