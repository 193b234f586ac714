"""Op samples of the reductions and linear algebra entries (prod, amax, amin,
var, std, logsumexp, norm, cumsum, cumprod, argmax, argmin, max/min with a
dim and their _take_dim, mm, bmm, dot, outer, einsum, linalg.*), spliced into
op_samples.OP_DB. Kept in their own module so the registry's list only
gains one line; the classes are passed in (no circular import)."""
from __future__ import annotations

import numpy as np

import retrograd as rg
from retrograd.core import abi as _abi


def reductions_linalg_ops(OpInfo, SampleInput, torch_dtype):
    S = SampleInput

    # --- reductions -------------------------------------------------------------
    def red(g, *, zero_d=True, dtype_kw=True, shape=(2, 3, 4), **kw):
        x = lambda: g(*shape, **kw)  # noqa: E731
        out = [
            S((x(),), desc="all"),
            S((x(),), {"dim": 1}, desc="dim"),
            S((x(),), {"dim": -1}, desc="negative_dim"),
            S((x(),), {"dim": 0, "keepdim": True}, desc="keepdim"),
            S((x(),), {"dim": (0, 2)}, desc="dim_tuple"),
            S((x(),), {"dim": (-1, 0), "keepdim": True}, desc="dim_tuple_neg_keepdim"),
            S((x(),), {"keepdim": True}, desc="all_keepdim"),
            S((g(5, **kw),), {"dim": 0}, desc="vector_dim"),
        ]
        if zero_d:
            out += [S((g(**kw),), desc="zero_d"), S((g(**kw),), {"dim": 0}, desc="zero_d_dim")]
        return out

    def torch_red(name, seq_dims=False):
        # torch.prod takes one int dim: reduce tuples one dim at a time
        def fn(torch, x, dim=None, keepdim=False, dtype=None, **kw):
            f = getattr(torch, name)
            if dtype is not None:
                kw["dtype"] = torch_dtype(torch, dtype)
            if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
                if keepdim:
                    if x.numel() == 0 and name in ("amax", "amin"):
                        # torch's own all-dims call (an explicit dim tuple
                        # raises a different error type on empty inputs)
                        return f(x, dim=(), keepdim=True, **kw)
                    dim = tuple(range(x.dim()))
                    if not dim:
                        return f(x, **kw)
                else:
                    return f(x, **kw)
            if isinstance(dim, int):
                return f(x, dim, keepdim=keepdim, **kw)
            if not seq_dims:
                return f(x, dim=tuple(dim), keepdim=keepdim, **kw)
            dims = sorted({d % max(x.dim(), 1) for d in dim}, reverse=True)
            for d in dims:
                x = f(x, d, keepdim=keepdim, **kw)
                kw.pop("dtype", None)
            return x
        return fn

    def prod_samples(g):
        z1 = g(3, 4, low=0.5, high=1.5)
        z1[1, 2] = 0.0
        z2 = g(3, 4, low=0.5, high=1.5)
        z2[0, 1] = z2[0, 3] = 0.0
        z2[2, 0] = 0.0
        return red(g, low=0.5, high=1.5) + [
            S((z1,), desc="one_zero_all"),
            S((z1.copy(),), {"dim": 1}, desc="one_zero_dim"),
            S((z2,), {"dim": 1, "keepdim": True}, desc="two_zeros_dim"),
            S((z2.copy(),), desc="two_zeros_all"),
            S((z2.copy(),), {"dim": (0, 1)}, desc="two_zeros_tuple"),
            S((g(3, 4, low=0.5, high=1.5),), {"dim": 1, "dtype": np.float64}, desc="dtype"),
        ]

    def extreme_samples(g):
        # ties (split evenly) are checked against torch in
        # test_reductions_linalg_composites.py: finite differences of the second
        # order are meaningless at a kink
        return red(g)

    def var_samples(g):
        x = lambda: g(2, 3, 4)  # noqa: E731
        return red(g, zero_d=False) + [
            S((x(),), {"dim": 1, "correction": 0}, desc="correction0"),
            S((x(),), {"dim": (0, 2), "correction": 2, "keepdim": True}, desc="correction2"),
            S((x(),), {"dim": 1, "unbiased": False}, desc="unbiased_false"),
            S((x(), False), desc="positional_unbiased"),
            S((x(), 2, True), desc="positional_unbiased_dim"),
        ]

    def torch_var(name):
        def fn(torch, x, dim=None, unbiased=None, keepdim=False, correction=None):
            f = getattr(torch, name)
            if isinstance(dim, bool):
                return f(x, dim)
            kw = {"keepdim": keepdim}
            if correction is not None:
                kw["correction"] = correction
            if dim is None and keepdim:
                dim = tuple(range(x.dim()))
            if unbiased is not None:
                return f(x, dim, unbiased, keepdim)
            return f(x, dim=dim, **kw)
        return fn

    def lse_samples(g):
        return red(g) + [
            S((g(3, 4) + 800.0,), {"dim": 1}, desc="large_values"),
            S((g(3, 4) - 800.0,), {"dim": (0, 1)}, desc="very_negative"),
        ]

    def torch_lse(torch, x, dim=None, keepdim=False):
        if dim is None:
            dim = tuple(range(x.dim())) if x.dim() else 0
        return torch.logsumexp(x, dim=dim, keepdim=keepdim)

    def norm_samples(g):
        out = red(g, away=0.05)
        x = lambda: g(3, 4, away=0.05)  # noqa: E731
        for p in (1, 2, 3, 1.5, 0.5, float("inf"), float("-inf"), "fro"):
            out.append(S((x(), p), desc=f"p={p}"))
            out.append(S((x(), p, 1), desc=f"p={p}_dim"))
            out.append(S((x(), p, (0, 1), True), desc=f"p={p}_tuple_keepdim"))
        out.append(S((x(), 0), {"dim": 1}, desc="p=0"))
        out.append(S((x(),), {"dtype": np.float64}, desc="dtype"))
        return out

    def torch_norm(torch, x, p="fro", dim=None, keepdim=False, dtype=None):
        kw = {} if dtype is None else {"dtype": torch_dtype(torch, dtype)}
        if p == "fro":                 # torch.norm's 'fro' over any dims is the 2-norm
            p = 2
        return torch.linalg.vector_norm(x, p, dim, keepdim, **kw)

    def cum_samples(g, zeros=False):
        out = [
            S((g(3, 4), 0), desc="dim0"),
            S((g(3, 4), 1), desc="dim1"),
            S((g(2, 3, 4), -2), desc="negative_dim"),
            S((g(5), 0), desc="vector"),
            S((g(), 0), desc="zero_d"),
            S((g(3, 4), 1), {"dtype": np.float64}, desc="dtype"),
        ]
        if zeros:
            z1 = g(3, 4)
            z1[1, 1] = 0.0
            z2 = g(3, 5)
            z2[0, 1] = z2[0, 3] = 0.0
            z2[2, 4] = 0.0
            out += [S((z1, 1), desc="one_zero"), S((z2, 1), desc="zeros"),
                    S((z2.copy(), 0), desc="zeros_dim0")]
        return out

    def torch_cum(name):
        def fn(torch, x, dim, dtype=None):
            kw = {} if dtype is None else {"dtype": torch_dtype(torch, dtype)}
            return getattr(torch, name)(x, dim, **kw)
        return fn

    def arg_samples(g):
        return [
            S((g(3, 4),), desc="all"),
            S((g(3, 4), 1), desc="dim"),
            S((g(2, 3, 4), -1, True), desc="keepdim"),
            S((g(2, 3, 4),), {"dim": 0}, desc="dim_kw"),
            S((g(),), desc="zero_d"),
        ]

    # max/min(dim)'s values: self at argmax indices along dim
    def take_samples(g):
        out = []
        for shape, dim, keepdim in [((3, 4), 1, False), ((3, 4), 0, True), ((2, 3, 4), -1, False),
                                    ((2, 3, 4), 1, True), ((5,), 0, False)]:
            x = g(*shape)
            idx = np.argmax(x, axis=dim, keepdims=True).astype(np.int64)
            out.append(S((x, idx, dim, keepdim), desc=f"{len(shape)}d_dim{dim}_keep{keepdim}"))
        return out

    def take_op(x, idx, dim, keepdim):
        return _abi._take_dim_op(x, np.asarray(idx), dim, keepdim)

    def torch_take(torch, x, idx, dim, keepdim):
        out = torch.take_along_dim(x, idx, dim)
        return out if keepdim else out.squeeze(dim)

    # --- linear algebra ---------------------------------------------------------
    def mm_samples(g):
        return [S((g(2, 3), g(3, 4)), desc="mm"), S((g(1, 5), g(5, 1)), desc="inner"),
                S((g(4, 1), g(1, 3)), desc="outer_like")]

    def addmm_samples(g):
        return [S((g(4), g(2, 3), g(3, 4)), desc="row_bias"), S((g(2, 4), g(2, 3), g(3, 4)), desc="full_self"),
                S((g(2, 1), g(2, 3), g(3, 1)), desc="column"),
                S((g(4), g(2, 3), g(3, 4)), {"beta": 0.5, "alpha": -2.0}, desc="scaled"),
                S((g(1, 4), g(3, 2), g(2, 4)), {"beta": 0}, desc="beta_zero")]

    def bmm_samples(g):
        return [S((g(2, 2, 3), g(2, 3, 4)), desc="bmm"), S((g(1, 3, 2), g(1, 2, 2)), desc="one_batch")]

    def dot_samples(g):
        return [S((g(3), g(3)), desc="dot"), S((g(1), g(1)), desc="single")]

    def outer_samples(g):
        return [S((g(3), g(4)), desc="outer"), S((g(1), g(2)), desc="small")]

    def einsum_samples(g):
        return [
            S((g(2, 3), g(3, 4), "ij,jk->ik"), desc="mm"),
            S((g(2, 3), g(2, 3), "ij,ij->"), desc="full_contraction"),
            S((g(3), g(4), "i,j->ij"), desc="outer"),
            S((g(2, 2, 3), g(2, 3, 4), "bij,bjk->bik"), desc="bmm"),
            S((g(3, 4), g(4), "ij,j->j"), desc="letter_only_in_a"),
            S((g(3, 4), g(4), "ij,j"), desc="implicit"),
            S((g(3, 3), None, "ii->i"), desc="diagonal"),
            S((g(3, 3), None, "ii->"), desc="trace"),
            S((g(3, 4), None, "ij->ji"), desc="transpose"),
            S((g(3, 4), None, "ij->"), desc="sum"),
            S((g(2, 2, 3), g(3), "iij,j->ij"), desc="diag_binary"),
            S((g(2, 3, 4), g(2, 4, 5), "...ij,...jk->...ik"), desc="ellipsis"),
            S((g(2, 3), g(3, 2), "ij,ji->i"), desc="diag_across"),
        ]

    def einsum_op(a, b, eq):
        return rg.einsum(eq, a) if b is None else rg.einsum(eq, a, b)

    def torch_einsum(torch, a, b, eq):
        return torch.einsum(eq, a) if b is None else torch.einsum(eq, a, b)

    def well_conditioned(g, *shape):
        n = shape[-1]
        return np.asarray(g(*shape) / (2 * n) + np.eye(n), dtype=g.dtype)

    def square_samples(g):
        neg = well_conditioned(g, 3, 3)
        neg[0] *= -1                          # a negative determinant
        return [
            S((well_conditioned(g, 3, 3),), desc="3x3"),
            S((well_conditioned(g, 2, 3, 3),), desc="batched"),
            S((well_conditioned(g, 2, 1, 2, 2),), desc="batched_2d"),
            S((well_conditioned(g, 1, 1),), desc="1x1"),
            S((neg,), desc="negative_det"),
        ]

    def solve_samples(g):
        return [
            S((well_conditioned(g, 3, 3), g(3, 2)), desc="matrix_rhs"),
            S((well_conditioned(g, 3, 3), g(3)), desc="vector_rhs"),
            S((well_conditioned(g, 2, 3, 3), g(3, 2)), desc="batched_A"),
            S((well_conditioned(g, 2, 3, 3), g(2, 3)), desc="batched_vectors"),
            S((well_conditioned(g, 3, 3), g(2, 3, 1)), desc="batched_B"),
        ]

    def spd(g, *shape):
        n = shape[-1]
        b = g(*shape)
        return np.asarray(b @ np.swapaxes(b, -1, -2) / n + np.eye(n), dtype=g.dtype)

    def chol_samples(g):
        return [S((spd(g, 3, 3),), desc="3x3"), S((spd(g, 2, 4, 4),), desc="batched"),
                S((spd(g, 1, 1),), desc="1x1")]

    def sym(x):
        return (x + x.mT) * 0.5

    # SVD: random Gaussian matrices have distinct, non-zero singular values;
    # tall, wide, square and batched shapes cover each branch of svd_backward
    def svd_samples(g):
        return [S((g(4, 3),), desc="tall"), S((g(3, 5),), desc="wide"), S((g(3, 3),), desc="square"),
                S((g(2, 4, 2),), desc="batched_tall"), S((g(2, 1, 2, 3),), desc="batched_wide"),
                S((g(4, 3),), {"full_matrices": True}, desc="full_tall"),
                S((g(2, 2, 4),), {"full_matrices": True}, desc="full_batched_wide")]

    # U and Vh are defined up to the sign of each singular vector: the samples
    # fix it by the sign of the vector's first entry (a gauge-invariant loss,
    # what torch's own svd OpInfo does), so values and gradients are unique
    def svd_u(lib, a):
        u = lib.linalg.svd(a, full_matrices=False).U
        return u * u[..., :1, :].sign()

    def svd_vh(lib, a):
        vh = lib.linalg.svd(a, full_matrices=False).Vh
        return vh * vh[..., :, :1].sign()

    # the three factors of one SVD (one node, three gradients in): U and Vh
    # sign-fixed as above, all three flattened into one result. With
    # full_matrices, the first k = min(m, n) columns of U and rows of Vh: the
    # others are any orthonormal completion (neither unique nor differentiable)
    def svd_all(lib, a, full_matrices=False):
        U, S, Vh = lib.linalg.svd(a, full_matrices=full_matrices)
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        U = U * U[..., :1, :].sign()
        Vh = Vh * Vh[..., :, :1].sign()
        bs = tuple(S.shape[:-1])
        return lib.cat([U.reshape(bs + (-1,)), S, Vh.reshape(bs + (-1,))], -1)

    # max/min with a dim: the values (indices carry no gradient; checked
    # against torch in tests/fidelity/test_multi_output_ops.py)
    def dim_samples(g):
        return [S((g(3, 4), 1), desc="dim"), S((g(3, 4), 0, True), desc="keepdim"),
                S((g(2, 3, 4), -1), desc="negative_dim"), S((g(5,), 0), desc="vector"),
                S((g(), 0), desc="zero_d")]

    def extreme_dim(name):
        def op(x, dim, keepdim=False):
            return getattr(rg, name)(x, dim, keepdim).values

        def torch_fn(torch, x, dim, keepdim=False):
            return getattr(torch, name)(x, dim, keepdim).values
        return op, torch_fn

    return [
        OpInfo("prod", prod_samples, torch_fn=torch_red("prod", seq_dims=True)),
        OpInfo("amax", extreme_samples, torch_fn=torch_red("amax")),
        OpInfo("amin", extreme_samples, torch_fn=torch_red("amin")),
        OpInfo("var", var_samples, torch_fn=torch_var("var")),
        OpInfo("std", var_samples, torch_fn=torch_var("std")),
        OpInfo("logsumexp", lse_samples, torch_fn=torch_lse),
        OpInfo("norm", norm_samples, torch_fn=torch_norm),
        OpInfo("cumsum", cum_samples, torch_fn=torch_cum("cumsum")),
        OpInfo("cumprod", lambda g: cum_samples(g, zeros=True), torch_fn=torch_cum("cumprod")),
        OpInfo("argmax", arg_samples, differentiable=False),
        OpInfo("argmin", arg_samples, differentiable=False),
        OpInfo("_take_dim", take_samples, op=take_op, torch_fn=torch_take),
        OpInfo("_max_dim", dim_samples, op=extreme_dim("max")[0], torch_fn=extreme_dim("max")[1]),
        OpInfo("_min_dim", dim_samples, op=extreme_dim("min")[0], torch_fn=extreme_dim("min")[1]),
        OpInfo("mm", mm_samples),
        OpInfo("addmm", addmm_samples),
        OpInfo("bmm", bmm_samples),
        OpInfo("dot", dot_samples),
        OpInfo("outer", outer_samples),
        OpInfo("_einsum", einsum_samples, op=einsum_op, torch_fn=torch_einsum),
        OpInfo("_linalg_inv", square_samples, op=rg.linalg.inv,
               torch_fn=lambda torch, a: torch.linalg.inv(a), f32_rtol=1e-3),
        OpInfo("_linalg_det", square_samples, op=rg.linalg.det,
               torch_fn=lambda torch, a: torch.linalg.det(a), f32_rtol=1e-3),
        OpInfo("_linalg_slogdet", square_samples, op=lambda a: rg.linalg.slogdet(a).logabsdet,
               torch_fn=lambda torch, a: torch.linalg.slogdet(a).logabsdet, f32_rtol=1e-3),
        OpInfo("_linalg_solve", solve_samples, op=rg.linalg.solve,
               torch_fn=lambda torch, a, b: torch.linalg.solve(a, b), f32_rtol=1e-3),
        # cholesky reads the lower triangle only: the samples symmetrize their
        # input so finite differences see torch's (symmetric) gradient
        OpInfo("_linalg_cholesky", chol_samples, op=lambda a: rg.linalg.cholesky(sym(a)),
               torch_fn=lambda torch, a: torch.linalg.cholesky(sym(a)), f32_rtol=1e-3),
        OpInfo("_linalg_svd", svd_samples, op=lambda a, **kw: svd_all(rg, a, **kw),
               torch_fn=lambda torch, a, **kw: svd_all(torch, a, **kw), f32_rtol=1e-3, f32_atol=1e-4),
    ]
