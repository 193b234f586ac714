"""rg.linalg's LU family, solve_triangular, matrix_exp and pinv, and torch's
older top-level forms (rg.lu, lu_unpack, lu_solve, triangular_solve,
matrix_exp, pinverse) with their Tensor methods: values and gradients
against torch (float64), singular and non-square matrices, errors."""
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.oracle,
              pytest.mark.filterwarnings("ignore:torch.(lu|lu_solve|triangular_solve) is deprecated")]

R = np.random.default_rng(7)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a.detach().numpy(), dtype=float), b.detach().numpy().astype(float),
                               rtol=tol, atol=tol)


def _pair(arr):
    return rg.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)


def _backward_both(out_r, out_t):
    g = R.standard_normal(tuple(out_t.shape))
    out_r.backward(rg.tensor(g))
    out_t.backward(torch.tensor(g))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (4, 3), (3, 5), (2, 1, 3, 2)])
def test_lu_factor_ex_and_lu_match_torch(shape):
    a = R.standard_normal(shape)
    A, T = _pair(a)
    r, t = rg.linalg.lu_factor_ex(A), torch.linalg.lu_factor_ex(T)
    _close(r.LU, t.LU)
    assert r.pivots.tolist() == t.pivots.tolist() and str(r.pivots.dtype) == "int32"
    assert r.info.tolist() == t.info.tolist() and tuple(r.info.shape) == tuple(t.info.shape)
    _backward_both(r.LU, t.LU)
    _close(A.grad, T.grad, 1e-9)
    A.grad, T.grad = None, None
    (P, L, U), (Pt, Lt, Ut) = rg.linalg.lu(A), torch.linalg.lu(T)
    for x, y in ((P, Pt), (L, Lt), (U, Ut)):
        _close(x, y)
    g1, g2 = R.standard_normal(tuple(Lt.shape)), R.standard_normal(tuple(Ut.shape))
    ((L * rg.tensor(g1)).sum() + (U * rg.tensor(g2)).sum()).backward()
    ((Lt * torch.tensor(g1)).sum() + (Ut * torch.tensor(g2)).sum()).backward()
    _close(A.grad, T.grad, 1e-9)


def test_singular_matrices_report_info_and_lu_factor_raises():
    s = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
    r, t = rg.linalg.lu_factor_ex(rg.tensor(s)), torch.linalg.lu_factor_ex(torch.tensor(s))
    _close(r.LU, t.LU)
    assert r.pivots.tolist() == t.pivots.tolist() and r.info.tolist() == t.info.tolist() == [2, 0, 1]
    with pytest.raises(RuntimeError, match=r"\(Batch element 0\): U\[2,2\] is zero"):
        rg.linalg.lu_factor(rg.tensor(s))
    with pytest.raises(RuntimeError, match=r"U\[2,2\] is zero"):
        rg.linalg.lu_factor_ex(rg.tensor(s[0]), check_errors=True)
    LU, piv, info = rg.lu(rg.tensor(s[0]), get_infos=True)     # no error with the infos
    assert info.item() == 2 and type(rg.lu(rg.tensor(s[0]))) is tuple


def test_lu_empty_and_errors():
    r, t = rg.linalg.lu_factor(rg.zeros(2, 0, 3)), torch.linalg.lu_factor(torch.zeros(2, 0, 3))
    assert tuple(r.LU.shape) == tuple(t.LU.shape) and tuple(r.pivots.shape) == tuple(t.pivots.shape)
    with pytest.raises(RuntimeError, match="Expected tensor with 2 or more dimensions"):
        rg.linalg.lu_factor(rg.ones(3))
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        rg.linalg.lu_factor(rg.eye(2), pivot=False)
    with pytest.raises(RuntimeError, match="LU without pivoting"):
        rg.lu(rg.eye(2), pivot=False)
    with pytest.raises(NotImplementedError, match="lu_cpu"):
        rg.linalg.lu_factor(rg.tensor([[1, 2], [3, 4]]))
    with pytest.raises(TypeError, match="pivot"):
        rg.linalg.lu_factor(rg.eye(2), pivot="yes")


def test_lu_gradcheck_and_double_backward():
    A = rg.tensor(R.standard_normal((2, 3, 3)), requires_grad=True)
    assert gradcheck(lambda x: rg.linalg.lu_factor(x).LU, (A,))
    assert gradgradcheck(lambda x: rg.linalg.lu_factor(x).LU, (A,))
    W = rg.tensor(R.standard_normal((2, 4)), requires_grad=True)
    assert gradcheck(lambda x: rg.linalg.lu(x).U, (W,))


def test_lu_unpack_matches_torch():
    a = R.standard_normal((2, 4, 3))
    A, T = _pair(a)
    (P, L, U), (Pt, Lt, Ut) = rg.lu_unpack(*rg.linalg.lu_factor(A)), torch.lu_unpack(*torch.linalg.lu_factor(T))
    for x, y in ((P, Pt), (L, Lt), (U, Ut)):
        _close(x, y)
    _close(P @ L @ U, T)
    (L.sum() + (U * U).sum()).backward()
    (Lt.sum() + (Ut * Ut).sum()).backward()
    _close(A.grad, T.grad, 1e-9)
    LU, piv = rg.linalg.lu_factor(rg.tensor(a[0]))
    P, L, U = rg.lu_unpack(LU, piv, unpack_data=False)
    assert tuple(P.shape) == (4, 4) and tuple(L.shape) == (0,) and tuple(U.shape) == (0,)
    P, L, U = rg.lu_unpack(LU, piv, unpack_pivots=False)
    assert tuple(P.shape) == (0,) and tuple(L.shape) == (4, 3)
    with pytest.raises(RuntimeError, match="torch.int32"):
        rg.lu_unpack(LU, piv.long())


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_matches_torch(left, adjoint):
    a, b = R.standard_normal((2, 3, 3)), R.standard_normal((3, 2) if left else (2, 3))
    A, T = _pair(a)
    B, TB = _pair(b)
    LU, piv = rg.linalg.lu_factor(A)
    LUt, pivt = torch.linalg.lu_factor(T)
    x = rg.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint)
    xt = torch.linalg.lu_solve(LUt, pivt, TB, left=left, adjoint=adjoint)
    _close(x, xt)
    _backward_both(x, xt)
    _close(A.grad, T.grad, 1e-9)
    _close(B.grad, TB.grad, 1e-9)


def test_old_lu_solve_and_method_forms():
    a, b = R.standard_normal((3, 3)), R.standard_normal((3, 2))
    LU, piv = rg.lu(rg.tensor(a))
    LUt, pivt = torch.lu(torch.tensor(a))
    _close(rg.lu_solve(rg.tensor(b), LU, piv), torch.lu_solve(torch.tensor(b), LUt, pivt))
    _close(rg.tensor(b).lu_solve(LU, piv), torch.tensor(b).lu_solve(LUt, pivt))
    _close(rg.tensor(a).lu()[0], torch.tensor(a).lu()[0])
    with pytest.raises(RuntimeError, match="int32"):
        rg.linalg.lu_solve(LU, piv.long(), rg.tensor(b))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        rg.linalg.lu_solve(LU, piv, rg.ones(3))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x1\)"):
        rg.linalg.lu_solve(LU, piv, rg.ones(4, 1))


def test_deprecated_forms_warn_once():
    import retrograd.core._numpy_like_linalg as m
    m._warned.discard("lu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rg.lu(rg.eye(2))
        rg.lu(rg.eye(2))
    assert sum("torch.lu is deprecated" in str(w.message) for w in caught) == 1


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular_matches_torch(upper, left, unit):
    a = R.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = R.standard_normal((1, 3, 2) if left else (2, 3))
    A, T = _pair(a)
    B, TB = _pair(b)
    x = rg.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)
    xt = torch.linalg.solve_triangular(T, TB, upper=upper, left=left, unitriangular=unit)
    _close(x, xt)
    _backward_both(x, xt)
    _close(A.grad, T.grad, 1e-9)
    _close(B.grad, TB.grad, 1e-9)


def test_solve_triangular_zero_diagonal_and_errors():
    x = rg.linalg.solve_triangular(rg.zeros(2, 2), rg.ones(2, 1), upper=True)
    xt = torch.linalg.solve_triangular(torch.zeros(2, 2), torch.ones(2, 1), upper=True)
    np.testing.assert_array_equal(x.numpy(), xt.numpy())          # [[nan], [inf]], no error
    with pytest.raises(TypeError):
        rg.linalg.solve_triangular(rg.eye(3), rg.ones(3, 1))       # upper is required
    with pytest.raises(RuntimeError, match="B must have at least 2 dimensions"):
        rg.linalg.solve_triangular(rg.eye(3), rg.ones(3), upper=True)
    with pytest.raises(RuntimeError, match="square matrices, but they are 3 by 4"):
        rg.linalg.solve_triangular(rg.ones(3, 4), rg.ones(3, 1), upper=True)
    with pytest.raises(RuntimeError, match=r"\(3x3 and 4x2\)"):
        rg.linalg.solve_triangular(rg.eye(3), rg.ones(4, 2), upper=True)


@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("upper", [True, False])
def test_triangular_solve_matches_torch(transpose, upper):
    a, b = R.standard_normal((3, 3)) + 3 * np.eye(3), R.standard_normal((2, 3, 2))
    A, T = _pair(a)
    B, TB = _pair(b)
    r = rg.triangular_solve(B, A, upper=upper, transpose=transpose)
    t = torch.triangular_solve(TB, T, upper=upper, transpose=transpose)
    assert type(r).__name__ == "triangular_solve" and r._fields == ("solution", "cloned_coefficient")
    _close(r.solution, t.solution)
    _close(r.cloned_coefficient, t.cloned_coefficient)
    g1, g2 = R.standard_normal(tuple(t.solution.shape)), R.standard_normal(tuple(t.cloned_coefficient.shape))
    ((r.solution * rg.tensor(g1)).sum() + (r.cloned_coefficient * rg.tensor(g2)).sum()).backward()
    ((t.solution * torch.tensor(g1)).sum() + (t.cloned_coefficient * torch.tensor(g2)).sum()).backward()
    _close(A.grad, T.grad, 1e-9)
    _close(B.grad, TB.grad, 1e-9)
    _close(B.triangular_solve(A, upper, transpose).solution, TB.triangular_solve(T, upper, transpose).solution)
    with pytest.raises(RuntimeError, match="Expected b to have at least 2 dimensions"):
        rg.triangular_solve(rg.ones(3), A)


@pytest.mark.parametrize("scale", [0.01, 1.0, 6.0, 40.0])
def test_matrix_exp_matches_scipy_and_torch(scale):
    scipy_linalg = pytest.importorskip("scipy.linalg")
    a = R.standard_normal((3, 4, 4)) * scale
    a[1] *= 0.05                     # matrices of one batch scaled by different powers of two
    A, T = _pair(a)
    e, et = rg.linalg.matrix_exp(A), torch.linalg.matrix_exp(T)
    ref = np.stack([scipy_linalg.expm(m) for m in a])
    # per matrix, relative to its size: within 2e-13 of SciPy, or no farther than torch's own result
    # (a large, non-normal matrix loses digits to its conditioning in any scaling-and-squaring method)
    scale_of = np.abs(ref).max(axis=(-1, -2))
    err = np.abs(e.detach().numpy() - ref).max(axis=(-1, -2)) / scale_of
    err_t = np.abs(et.detach().numpy() - ref).max(axis=(-1, -2)) / scale_of
    assert (err <= np.maximum(2e-13, 3 * err_t)).all(), (err, err_t)
    _backward_both(e, et)
    np.testing.assert_allclose(A.grad.numpy(), T.grad.numpy(), rtol=1e-10, atol=1e-10 * np.abs(T.grad.numpy()).max())


def test_matrix_exp_edges_gradcheck_and_errors():
    assert tuple(rg.matrix_exp(rg.zeros(0, 0)).shape) == (0, 0)
    _close(rg.tensor([[2.0]]).matrix_exp(), torch.tensor([[2.0]], dtype=torch.float64).matrix_exp())
    A = rg.tensor(R.standard_normal((2, 3, 3)), requires_grad=True)
    assert gradcheck(rg.linalg.matrix_exp, (A,))
    assert gradgradcheck(rg.matrix_exp, (A,))
    with pytest.raises(RuntimeError, match="square matrices, but they are 3 by 4"):
        rg.linalg.matrix_exp(rg.ones(3, 4))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        rg.linalg.matrix_exp(rg.ones(3))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        rg.linalg.matrix_exp(rg.tensor([[1, 2], [3, 4]]))


@pytest.mark.parametrize("shape, kwargs", [
    ((3, 4), {}), ((2, 4, 3), {"rtol": 0.3}), ((3, 5), {"atol": 0.5}), ((3, 3), {"hermitian": True}),
    ((3, 3), {"hermitian": True, "atol": 1.0}), ((4, 2), {"rcond": 0.2}),
])
def test_pinv_matches_torch(shape, kwargs):
    a = R.standard_normal(shape)
    if kwargs.get("hermitian"):
        a = a + np.swapaxes(a, -1, -2)
    A, T = _pair(a)
    if "rcond" in kwargs:
        p, pt = rg.linalg.pinv(A, kwargs["rcond"]), torch.linalg.pinv(T, kwargs["rcond"])
    else:
        p, pt = rg.linalg.pinv(A, **kwargs), torch.linalg.pinv(T, **kwargs)
    _close(p, pt, 1e-9)
    _backward_both(p, pt)
    _close(A.grad, T.grad, 1e-8)


def test_pinv_rank_deficient_gradients_and_pinverse():
    a = np.outer(R.standard_normal(3), R.standard_normal(4))      # rank 1
    A, T = _pair(a)
    p, pt = rg.pinverse(A), torch.pinverse(T)
    _close(p, pt, 1e-9)
    _backward_both(p, pt)
    _close(A.grad, T.grad, 1e-7)
    _close(rg.eye(3).pinverse(rcond=0.5), torch.eye(3, dtype=torch.float64).pinverse(rcond=0.5))
    X = rg.tensor(R.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda x: rg.linalg.pinv(x, rtol=0.1), (X,))
    assert gradgradcheck(lambda x: rg.linalg.pinv(x, atol=0.01), (X,))
    assert tuple(rg.linalg.pinv(rg.zeros(2, 3, 0)).shape) == (2, 0, 3)
    with pytest.raises(RuntimeError, match="expected a tensor with 2 or more dimensions"):
        rg.linalg.pinv(rg.ones(3))
    with pytest.raises(RuntimeError, match="expected a tensor with 2 or more dimensions"):
        rg.linalg.pinv(rg.tensor([[1, 2], [3, 4]]))
