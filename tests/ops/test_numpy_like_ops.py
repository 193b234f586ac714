"""torch's functions written as composites in core (_numpy_like.py and
_numpy_like_shape.py) and their Tensor methods: values and gradients
against torch (float64), gradcheck, and the error cases."""
from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

R = np.random.default_rng(41)
A = R.uniform(-2, 2, (3, 4))
B = R.uniform(-2, 2, (3, 4))
P = R.uniform(0.1, 0.9, (3, 4))
V = R.uniform(-2, 2, (4,))
M = R.uniform(-2, 2, (3, 3))
I = np.array([2, 0, 2])
SPD = M @ M.T + 3 * np.eye(3)

# (name, args, kwargs); arrays of floats are differentiated
CASES = [
    ("deg2rad", (A,), {}), ("rad2deg", (A,), {}), ("frac", (A * 3,), {}), ("logit", (P,), {}),
    ("logit", (P,), {"eps": 0.2}), ("xlogy", (A, np.abs(B) + 0.1), {}),
    ("xlogy", (np.where(A > 0, A, 0.0), np.abs(B) + 0.1), {}), ("hypot", (A, B), {}),
    ("logaddexp", (A, B), {}), ("logaddexp2", (A, B), {}), ("copysign", (A, B), {}),
    ("sinc", (A,), {}), ("nan_to_num", (A,), {}), ("float_power", (np.abs(A) + 0.1, B), {}),
    ("nansum", (A,), {"dim": 1}), ("nanmean", (A,), {"dim": 0, "keepdim": True}),
    ("var_mean", (A,), {"dim": 1}), ("std_mean", (A,), {"dim": 0, "correction": 0}),
    ("ravel", (A,), {}), ("atleast_2d", (V,), {}), ("atleast_3d", (A,), {}),
    ("hstack", ([A, B],), {}), ("vstack", ([V, V],), {}), ("dstack", ([A, B],), {}),
    ("column_stack", ([V, V],), {}), ("row_stack", ([A, B],), {}),
    ("tensor_split", (A, 3), {"dim": 1}), ("tensor_split", (A, [1, 3]), {"dim": 1}),
    ("hsplit", (A, 2), {}), ("vsplit", (np.vstack([A, B]), [2, 5]), {}),
    ("fliplr", (A,), {}), ("flipud", (A,), {}), ("rot90", (A,), {}), ("rot90", (A, 3, [1, 0]), {}),
    ("rot90", (A, 2), {}), ("diag", (V,), {}), ("diag", (V, 1), {}), ("diag", (M, -1), {}),
    ("diagflat", (A[:2, :2], 1), {}), ("diag_embed", (A,), {}), ("diag_embed", (A, -1, 0, 2), {}),
    ("trace", (M,), {}), ("kron", (A[:2, :2], M), {}), ("take", (A, np.array([0, 5, 11])), {}),
    ("repeat_interleave", (A, 2), {"dim": 0}), ("repeat_interleave", (V, np.array([1, 0, 2, 1])), {}),
    ("cartesian_prod", (V, V[:2]), {}), ("combinations", (V,), {"r": 3}),
    ("block_diag", (A[:2, :3], M), {}), ("vander", (V,), {"N": 3}), ("cummax", (A, 1), {}),
    ("cummin", (A, 0), {}), ("logcumsumexp", (A, 1), {}), ("index_add", (A, 0, I, B), {"alpha": 2}),
    ("index_copy", (A, 1, np.array([3, 0]), B[:, :2]), {}), ("index_fill", (A, 1, np.array([1, 2]), -1.5), {}),
    ("diff", (A,), {}), ("diff", (A,), {"n": 2, "dim": 0, "prepend": A[:1]}), ("msort", (A,), {}),
    ("inner", (A, B), {}), ("mv", (M, V[:3]), {}), ("cdist", (A, B[:2]), {}), ("cdist", (A, B), {"p": 1.0}),
    ("aminmax", (A,), {"dim": 1}),
    # linear algebra shortcuts (_numpy_like_linalg.py)
    ("det", (M,), {}), ("inverse", (M,), {}), ("logdet", (SPD,), {}), ("cholesky", (SPD,), {}),
    ("cholesky", (SPD,), {"upper": True}), ("matrix_power", (M, 3), {}), ("matrix_power", (M, -2), {}),
    ("matrix_power", (M, 0), {}), ("addmv", (V[:3], M, V[:3]), {"beta": 0.5, "alpha": 2}),
    ("addr", (M, V[:3], V[1:]), {}), ("baddbmm", (M, M[None], M[None]), {"alpha": 0.5}),
    ("addbmm", (M, np.stack([M, M]), np.stack([M, M.T])), {}), ("cov", (A,), {}), ("cov", (A,), {"correction": 0}),
    ("cov", (A,), {"fweights": np.array([1, 2, 1, 3])}), ("corrcoef", (A,), {}), ("cross", (M, M.T), {"dim": 0}),
    ("cross", (A[:, :3], B[:, :3]), {"dim": 1}), ("dist", (A, B), {}), ("dist", (A, B, 1), {}),
    ("vdot", (V, V), {}), ("chain_matmul", (M, M, M), {}), ("trapezoid", (A,), {}),
    ("trapezoid", (A, V), {}), ("cumulative_trapezoid", (A,), {"dim": 0}),
    ("ldexp", (A, np.array([1.0, -2.0, 0.0, 3.0])), {}), ("constant_pad_nd", (A, [1, 2]), {}),
    # order statistics and functional writes (_numpy_like_select.py)
    ("median", (A,), {}), ("median", (A, 1), {}), ("nanmedian", (np.where(A > 1, np.nan, A), 1), {}),
    ("kthvalue", (A, 2, 0), {}), ("quantile", (A, 0.3), {}), ("quantile", (A, 0.25, 0), {"interpolation": "nearest"}),
    ("quantile", (A, 0.4, 1), {"interpolation": "higher"}), ("quantile", (A, 0.6, 1), {"interpolation": "lower"}),
    ("nanquantile", (np.where(A > 1, np.nan, A), 0.7, 1), {"interpolation": "midpoint"}),
    ("scatter", (A, 1, np.array([[0, 1], [2, 3], [3, 0]]), B[:, :2]), {}),
    # a repeated position: the last write wins, and every duplicate gets the gradient there (torch's rule)
    ("scatter", (A, 1, np.array([[0, 1], [2, 2], [3, 0]]), B[:, :2]), {}),
    ("diagonal_scatter", (M, V[:3]), {}), ("select_scatter", (A, V, 0, 2), {}),
    ("slice_scatter", (A, B[:, :2], 1, 1, 4, 2), {}), ("renorm", (A, 2, 0, 1.0), {}),
    ("masked_scatter", (A, A > 0, B * 10), {}), ("put", (A, np.array([1, 7]), V[:2]), {}),
    ("index_put", (A, (np.array([0, 0]), np.array([1, 1])), V[:2], True), {}),
    ("cholesky_solve", (A[:3, :2], np.linalg.cholesky(SPD)), {}), ("cholesky_inverse", (np.linalg.cholesky(SPD),), {}),
    ("sgn", (A,), {}),
]


def _rg_args(args, grad: bool):
    leaves, out = [], []
    for a in args:
        if isinstance(a, tuple):            # index_put's indices
            out.append(tuple(rg.tensor(x) for x in a))
            continue
        if isinstance(a, np.ndarray):
            t = rg.tensor(a, requires_grad=grad and a.dtype.kind == "f")
            if t.requires_grad:
                leaves.append(t)
            out.append(t)
        elif isinstance(a, list) and a and isinstance(a[0], np.ndarray):
            ts = [rg.tensor(x, requires_grad=grad) for x in a]
            leaves += ts if grad else []
            out.append(ts)
        else:
            out.append(a)
    return out, leaves


def _torch_args(args, grad: bool):
    leaves, out = [], []
    for a in args:
        if isinstance(a, tuple):
            out.append(tuple(torch.tensor(x) for x in a))
            continue
        if isinstance(a, np.ndarray):
            t = torch.tensor(a, requires_grad=grad and a.dtype.kind == "f")
            if t.requires_grad:
                leaves.append(t)
            out.append(t)
        elif isinstance(a, list) and a and isinstance(a[0], np.ndarray):
            ts = [torch.tensor(x, requires_grad=grad) for x in a]
            leaves += ts if grad else []
            out.append(ts)
        else:
            out.append(a)
    return out, leaves


def _flat(out):
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_torch(name, args, kwargs):
    ra, rl = _rg_args(args, True)
    ta, tl = _torch_args(args, True)
    rk = {k: rg.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    r = _flat(getattr(rg, name)(*ra, **rk))
    t = _flat(getattr(torch, name)(*ta, **tk))
    assert len(r) == len(t)
    for x, y in zip(r, t):
        assert tuple(x.shape) == tuple(y.shape), name
        np.testing.assert_allclose(np.asarray(x.detach()), y.detach().numpy(), rtol=1e-10, atol=1e-12)
        assert np.asarray(x.detach()).dtype == y.detach().numpy().dtype, name
    diff = [(x, y) for x, y in zip(r, t) if y.requires_grad]
    if not diff or name in NO_TORCH_GRAD:
        return
    ws = [R.standard_normal(tuple(y.shape)) for _, y in diff]
    gr = rg.autograd.grad([x for x, _ in diff], rl, grad_outputs=[rg.tensor(w) for w in ws], allow_unused=True)
    gt = torch.autograd.grad([y for _, y in diff], tl, grad_outputs=[torch.tensor(w) for w in ws],
                             allow_unused=True)
    for a, b in zip(gr, gt):
        if a is None or b is None:
            # a zero gradient: torch hands out zeros where retrograd's graph has no edge (copysign's other)
            assert (a is None or not np.asarray(a).any()) and (b is None or not b.numpy().any()), name
            continue
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-10, atol=1e-12)


# torch's own backward fails on these samples (vander's modifies a saved tensor in place): gradcheck only
# (sgn's: a ZeroTensor the oracle cannot read; retrograd's is sign's zero gradient)
NO_TORCH_GRAD = {"vander", "sgn"}

GRADCHECK = ["median", "quantile", "scatter", "masked_scatter", "slice_scatter", "renorm", "vander", "logdet", "cov", "corrcoef", "cross", "matrix_power", "addbmm", "logit", "xlogy", "hypot", "logaddexp", "copysign", "sinc", "kron", "index_add", "logcumsumexp",
             "diag_embed", "cdist"]


@pytest.mark.parametrize("name", GRADCHECK)
def test_gradcheck(name):
    name_, args, kwargs = next(c for c in CASES if c[0] == name)
    ra, rl = _rg_args(args, True)

    def fn(*leaves):
        it = iter(leaves)
        a = [next(it) if isinstance(x, rg.Tensor) and x.requires_grad else x for x in ra]
        return getattr(rg, name)(*a, **kwargs)
    assert rg.autograd.gradcheck(fn, tuple(rl))


def test_predicates_and_bools():
    x = np.array([1.0, -0.0, np.inf, -np.inf, np.nan, 2.0])
    for name in ("signbit", "isposinf", "isneginf", "isreal"):
        np.testing.assert_array_equal(np.asarray(getattr(rg, name)(rg.tensor(x))),
                                      getattr(torch, name)(torch.tensor(x)).numpy(), err_msg=name)
    np.testing.assert_array_equal(np.asarray(rg.nan_to_num(rg.tensor(x), nan=1.5, neginf=-7.0)),
                                  torch.nan_to_num(torch.tensor(x), nan=1.5, neginf=-7.0).numpy())
    a, b = rg.tensor([1.0, np.nan, 2.0]), rg.tensor([1.0 + 1e-9, np.nan, 2.1])
    ta, tb = torch.tensor([1.0, np.nan, 2.0]), torch.tensor([1.0 + 1e-9, np.nan, 2.1])
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.1}):
        np.testing.assert_array_equal(np.asarray(rg.isclose(a, b, **kw)), torch.isclose(ta, tb, **kw).numpy())
        assert rg.allclose(a, b, **kw) == torch.allclose(ta, tb, **kw)
    assert rg.equal(rg.tensor([1, 2]), rg.tensor([1, 2])) and not rg.equal(rg.tensor([1, 2]), rg.tensor([1]))
    np.testing.assert_array_equal(np.asarray(rg.count_nonzero(rg.tensor(A > 0), dim=1)),
                                  torch.count_nonzero(torch.tensor(A > 0), dim=1).numpy())
    h = rg.heaviside(rg.tensor([-1.0, 0.0, 2.0]), rg.tensor([0.5]))
    np.testing.assert_array_equal(np.asarray(h), [0.0, 0.5, 1.0])
    assert rg.is_complex(rg.tensor([1j])) and not rg.is_floating_point(rg.tensor([1]))
    assert rg.is_signed(rg.tensor([1.0])) and not rg.is_signed(rg.tensor([1], dtype=rg.uint8))
    assert rg.is_nonzero(rg.tensor([2.0])) and rg.numel(rg.zeros(2, 3)) == 6
    assert rg.is_same_size(rg.zeros(2), rg.ones(2))
    s = rg.scalar_tensor(3)
    assert s.shape == () and s.dtype == rg.get_default_dtype()
    assert not rg.is_conj(s) and not rg.is_neg(s) and rg.resolve_conj(s) is s and rg.resolve_neg(s) is s


def test_index_builders():
    for args in ((3, 4), (4, 3, 1), (3, 3, -1)):
        np.testing.assert_array_equal(np.asarray(rg.tril_indices(*args)), torch.tril_indices(*args).numpy())
        np.testing.assert_array_equal(np.asarray(rg.triu_indices(*args)), torch.triu_indices(*args).numpy())
    x = np.array([[0, 1, 0], [2, 0, 3]])
    np.testing.assert_array_equal(np.asarray(rg.argwhere(rg.tensor(x))), torch.argwhere(torch.tensor(x)).numpy())
    for a, b in zip(rg.nonzero(rg.tensor(x), as_tuple=True), torch.nonzero(torch.tensor(x), as_tuple=True)):
        np.testing.assert_array_equal(np.asarray(a), b.numpy())
    bounds = np.array([1, 3, 5, 7, 9])
    vals = np.array([[1, 5, 9], [0, 4, 10]])
    for right in (False, True):
        np.testing.assert_array_equal(np.asarray(rg.bucketize(rg.tensor(vals), rg.tensor(bounds), right=right)),
                                      torch.bucketize(torch.tensor(vals), torch.tensor(bounds), right=right).numpy())
        np.testing.assert_array_equal(
            np.asarray(rg.searchsorted(rg.tensor(bounds), rg.tensor(vals), right=right)),
            torch.searchsorted(torch.tensor(bounds), torch.tensor(vals), right=right).numpy())
    np.testing.assert_array_equal(np.asarray(rg.bincount(rg.tensor([0, 1, 1, 4]), minlength=6)),
                                  torch.bincount(torch.tensor([0, 1, 1, 4]), minlength=6).numpy())
    np.testing.assert_allclose(np.asarray(rg.logspace(0, 2, 5)), torch.logspace(0, 2, 5).numpy(), rtol=1e-6)
    for a, b in zip(rg.meshgrid(rg.tensor(V), rg.tensor(V[:2]), indexing="xy"),
                    torch.meshgrid(torch.tensor(V), torch.tensor(V[:2]), indexing="xy")):
        np.testing.assert_array_equal(np.asarray(a), b.numpy())
    x = rg.tensor(A)
    np.testing.assert_array_equal(np.asarray(rg.masked_select(x, x > 0)), A[A > 0])


def test_methods_and_inplace_methods():
    x, xt = rg.tensor(A), torch.tensor(A)
    for name, args in (("deg2rad", ()), ("kron", (M,)), ("index_fill", (1, np.array([0]), 2.0)),
                       ("nan_to_num", ()), ("diag_embed", ()), ("reshape_as", (np.zeros((4, 3)),)),
                       ("sum_to_size", ((1, 4),)), ("cummax", (1,)), ("tensor_split", (2,))):
        r = _flat(getattr(x, name)(*[rg.tensor(a) if isinstance(a, np.ndarray) else a for a in args]))
        t = _flat(getattr(xt, name)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]))
        for a, b in zip(r, t):
            np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-12, err_msg=name)
    for name, args in (("deg2rad_", ()), ("frac_", ()), ("logit_", ()), ("xlogy_", (np.abs(B) + 1,)),
                       ("hypot_", (B,)), ("copysign_", (B,)), ("sinc_", ()), ("nan_to_num_", ()),
                       ("index_add_", (0, I, B)), ("index_copy_", (0, np.array([1]), B[:1])),
                       ("index_fill_", (0, np.array([1]), 3.0))):
        a, at = rg.tensor(P), torch.tensor(P)
        assert getattr(a, name)(*[rg.tensor(v) if isinstance(v, np.ndarray) else v for v in args]) is a
        getattr(at, name)(*[torch.tensor(v) if isinstance(v, np.ndarray) else v for v in args])
        np.testing.assert_allclose(np.asarray(a), at.numpy(), rtol=1e-12, err_msg=name)
    # the gradient of an in-place composite reaches its tensor arguments
    src = rg.tensor(B, requires_grad=True)
    y = rg.tensor(A) * 1.0
    y.index_add_(0, rg.tensor(I), src, alpha=3)
    g, = rg.autograd.grad(y.sum(), src)
    np.testing.assert_array_equal(np.asarray(g), np.full(B.shape, 3.0))
    assert rg.zeros(1).is_cpu


def test_misc_against_torch():
    x = np.array([8.0, 0.75, -3.0])
    m, e = rg.frexp(rg.tensor(x))
    mt, et = torch.frexp(torch.tensor(x))
    np.testing.assert_array_equal(np.asarray(m), mt.numpy())
    np.testing.assert_array_equal(np.asarray(e), et.numpy())
    assert np.asarray(e).dtype == et.numpy().dtype
    d = np.array([0.5, 1.5, 1.7, 2.9, -1.0])
    np.testing.assert_array_equal(np.asarray(rg.histc(rg.tensor(d), bins=3, min=0, max=3)),
                                  torch.histc(torch.tensor(d), bins=3, min=0, max=3).numpy())
    np.testing.assert_array_equal(np.asarray(rg.histc(rg.tensor(d), bins=4)), torch.histc(torch.tensor(d), bins=4).numpy())
    h, edges = rg.histogram(rg.tensor(d), bins=3)
    ht, et = torch.histogram(torch.tensor(d), bins=3)
    np.testing.assert_allclose(np.asarray(h), ht.numpy())
    np.testing.assert_allclose(np.asarray(edges), et.numpy())
    np.testing.assert_array_equal(np.asarray(rg.isin(rg.tensor([1, 2, 3]), rg.tensor([2, 5]), invert=True)),
                                  torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 5]), invert=True).numpy())
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        np.testing.assert_array_equal(np.asarray(getattr(rg, name)(rg.tensor([1, 8, -4]), 2)),
                                      getattr(torch, name)(torch.tensor([1, 8, -4]), 2).numpy())
    for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"):
        for n, periodic in ((1, True), (5, True), (6, False)):
            np.testing.assert_allclose(np.asarray(getattr(rg, name)(n, periodic, dtype=rg.float64)),
                                       getattr(torch, name)(n, periodic, dtype=torch.float64).numpy(), atol=1e-12,
                                       err_msg=name)
    for a, b in zip(rg.unravel_index(rg.tensor([5, 1, -1]), (2, 3)), torch.unravel_index(torch.tensor([5, 1, -1]),
                                                                                      (2, 3))):
        np.testing.assert_array_equal(np.asarray(a), b.numpy())
    np.testing.assert_allclose(np.asarray(rg.rsub(rg.tensor(A), 2.0, alpha=3)),
                               torch.rsub(torch.tensor(A), 2.0, alpha=3).numpy())
    np.testing.assert_allclose(np.asarray(rg.range(1, 2, 0.25)), torch.range(1, 2, 0.25).numpy())
    q, r = rg.qr(rg.tensor(M))
    np.testing.assert_allclose(np.asarray(q @ r), M, atol=1e-12)
    u, s, v = rg.svd(rg.tensor(M))
    np.testing.assert_allclose(np.asarray(u @ rg.diag(s) @ v.mT), M, atol=1e-12)
    np.testing.assert_allclose(np.asarray(s), torch.svd(torch.tensor(M)).S.numpy())
    for a, b in zip(rg.split_with_sizes(rg.tensor(A), [1, 3], 1), torch.split_with_sizes(torch.tensor(A), [1, 3], 1)):
        np.testing.assert_array_equal(np.asarray(a), b.numpy())
    x = rg.tensor(V[:3])
    assert x.addmv_(rg.tensor(M), rg.tensor(V[:3])) is x
    np.testing.assert_allclose(np.asarray(x), torch.tensor(V[:3]).addmv_(torch.tensor(M), torch.tensor(V[:3])).numpy())
    np.testing.assert_allclose(np.asarray(rg.tensor(M).addmm_(rg.tensor(M), rg.tensor(M), beta=2)),
                               torch.tensor(M).addmm_(torch.tensor(M), torch.tensor(M), beta=2).numpy())
    for name in ("deg2rad_", "rad2deg_", "frac_", "sinc_", "nan_to_num_"):
        a, at = rg.tensor(P), torch.tensor(P)
        assert getattr(rg, name)(a) is a
        getattr(torch, name)(at)
        np.testing.assert_allclose(np.asarray(a), at.numpy(), rtol=1e-12, err_msg=name)
    assert rg.GradScaler is __import__("retrograd.amp", fromlist=["GradScaler"]).GradScaler


def test_config_switches():
    import numpy
    rg.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert rg.are_deterministic_algorithms_enabled() and rg.is_deterministic_algorithms_warn_only_enabled()
        assert rg.get_deterministic_debug_mode() == 1
    finally:
        rg.use_deterministic_algorithms(False)
    assert rg.get_deterministic_debug_mode() == 0
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        rg.set_deterministic_debug_mode(5)
    with pytest.raises(RuntimeError, match="Invalid precision"):
        rg.set_float32_matmul_precision("low")
    assert rg.pi == torch.pi and rg.e == torch.e and rg.inf == torch.inf and rg.newaxis is None
    assert rg.promote_types(rg.int32, rg.float32) == numpy.float64
    for a, b in ((rg.float64, rg.float32), (rg.float32, rg.int32), (rg.int64, rg.bool), (rg.uint8, rg.int8)):
        ta, tb = getattr(torch, str(a)), getattr(torch, str(b))
        assert rg.can_cast(a, b) == torch.can_cast(ta, tb), (a, b)
    assert rg.typename(rg.zeros(1, dtype=rg.float64)) == torch.typename(torch.zeros(1, dtype=torch.float64))
    assert rg.result_type(rg.tensor([1.0], dtype=rg.float32), 2) == rg.float32
    _ = rg.manual_seed(7)
    assert rg.initial_seed() == 7
    s = rg.seed()
    assert rg.initial_seed() == s and s >= 0
    saved = numpy.get_printoptions()
    try:
        rg.set_printoptions(precision=2)
        assert repr(rg.tensor([1.23456])) == "tensor([1.23])"
        rg.set_printoptions(profile="default")
    finally:
        numpy.set_printoptions(**saved)
    assert rg.get_num_threads() >= 1
    with pytest.raises(RuntimeError, match="positive integer"):
        rg.set_num_threads(0)


def test_errors():
    with pytest.raises(RuntimeError, match="diag\\(\\): Supports 1D or 2D tensors"):
        rg.diag(rg.zeros(2, 2, 2))
    with pytest.raises(RuntimeError, match="expected rotation dims to be different"):
        rg.rot90(rg.zeros(2, 2), 1, (0, 0))
    with pytest.raises(RuntimeError, match="is not divisible by the split_size"):
        rg.hsplit(rg.zeros(2, 3), 2)
    with pytest.raises(RuntimeError, match="not expandable to size"):
        rg.zeros(2, 3).sum_to_size(4)
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        rg.masked_select(rg.zeros(2), rg.tensor([1, 0]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        rg.is_nonzero(rg.zeros(2))
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral inputs"):
        rg.bincount(rg.tensor([-1, 2]))
    with pytest.raises(TypeError, match="must be Tensor"):
        rg.deg2rad([1.0])
    with pytest.raises(TypeError, match="bool tensor is not supported"):
        rg.positive(rg.tensor([True]))
