"""Op samples of the sorting, selection and logical entries (sort, argsort,
topk, any, all, isnan, isinf, isfinite, t, unbind) and of the eigh, qr,
pinv and lstsq entries, spliced into op_samples.OP_DB (the classes are
passed in: no circular import).

Differentiable samples avoid ties and NaN (finite differences are
meaningless at a tie, and NaN poisons them); the orders of ties and NaN
are checked against torch in test_sort_topk.py. The factorizations' samples
fix the sign gauge of their factors (eigenvectors by their first entry, Q's
columns and R's rows by R's diagonal), as torch's own OpInfos do, so that
values and gradients are unique.
"""
from __future__ import annotations

import numpy as np

import retrograd as rg
from retrograd.core import abi as _abi


def sort_linalg_ops(OpInfo, SampleInput):
    S = SampleInput

    # --- sort / argsort / topk -----------------------------------------------------
    def distinct(g, *shape):
        # distinct values, shuffled: no ties for finite differences
        n = int(np.prod(shape)) if shape else 1
        vals = (np.arange(n) - n / 2) * 0.37 + g(n, low=-0.05, high=0.05)
        return np.asarray(g.rng.permutation(vals).reshape(shape), dtype=g.dtype)

    def sort_samples(g):
        return [
            S((distinct(g, 5),), desc="vector"),
            S((distinct(g, 3, 4),), desc="last_dim"),
            S((distinct(g, 3, 4), 0), desc="dim0"),
            S((distinct(g, 2, 3, 4), 1, True), desc="descending"),
            S((distinct(g, 2, 3, 4),), {"dim": -2, "descending": True, "stable": True}, desc="stable_kw"),
            S((distinct(g),), desc="zero_d"),
            S((distinct(g, 1, 4), 0), desc="size1_dim"),
        ]

    def sort_values(lib):
        def fn(x, *args, **kw):
            return lib.sort(x, *args, **kw).values
        return fn

    def int_sort_samples(g):
        ints = np.random.default_rng(3).integers(-3, 4, size=(3, 6)).astype(np.int64)
        return sort_samples(g) + [
            S((ints,), {"stable": True}, desc="int_ties_stable"),
            S((ints,), {"dim": 0, "descending": True, "stable": True}, desc="int_ties_descending"),
            S((ints > 0,), {"stable": True}, desc="bool"),
        ]

    def topk_samples(g):
        return [
            S((distinct(g, 6), 3), desc="vector"),
            S((distinct(g, 3, 5), 2), desc="last_dim"),
            S((distinct(g, 3, 5), 2, 0), desc="dim0"),
            S((distinct(g, 2, 3, 4), 2, 1, False), desc="smallest"),
            S((distinct(g, 3, 4), 4), {"dim": -1, "largest": True, "sorted": True}, desc="k_is_size"),
            S((distinct(g, 3, 4), 0), desc="k0"),
            S((distinct(g), 1), desc="zero_d"),
        ]

    def topk_values(lib):
        def fn(x, *args, **kw):
            return lib.topk(x, *args, **kw).values
        return fn

    def logical_samples(g):
        x = g(3, 4)
        x[0, 1] = 0.0
        x[2, :] = 0.0
        ints = np.random.default_rng(4).integers(0, 2, size=(2, 3, 4)).astype(np.int64)
        # (uint8 inputs give uint8 results, as torch: test_sort_topk.py)
        return [
            S((x,), desc="all_dims"),
            S((x, 1), desc="dim"),
            S((x, 0, True), desc="keepdim"),
            S((x,), {"dim": (0, 1)}, desc="dim_tuple"),
            S((ints,), {"dim": -1}, desc="int"),
            S((ints > 0,), {"dim": (0, 2), "keepdim": True}, desc="bool_tuple_keepdim"),
            S((np.asarray(0.0, dtype=g.dtype),), desc="zero_d"),
        ]

    def torch_logical(name):
        def fn(torch, x, dim=None, keepdim=False):
            f = getattr(torch, name)
            if dim is None:
                return f(x) if not keepdim else f(x, dim=tuple(range(x.dim())), keepdim=True)
            return f(x, dim, keepdim)
        return fn

    def special(g):
        x = g(3, 4)
        x[0, 0], x[1, 2], x[2, 3] = np.nan, np.inf, -np.inf
        return [S((x,), desc="nan_inf"), S((g(5),), desc="finite"),
                S((np.arange(-2, 3, dtype=np.int64),), desc="int"),
                S((np.asarray(np.nan, dtype=g.dtype),), desc="zero_d_nan")]

    def logical_pair_samples(g):
        # zeros, NaN (nonzero, so True) and other dtypes on either side
        x = g(3, 4)
        x[0, 1], x[1, :] = 0.0, 0.0
        x[2, 3] = np.nan
        y = g(4)
        y[2] = 0.0
        ints = np.arange(-1, 3, dtype=np.int64)
        return [S((x, y), desc="broadcast"), S((x, ints), desc="float_int"),
                S((g.mask(2, 3), g.mask(2, 3)), desc="bool"), S((g(), x), desc="zero_d")]

    def logical_not_samples(g):
        x = g(3, 4)
        x[0, 1], x[2, 3] = 0.0, np.nan
        return [S((x,), desc="float"), S((np.arange(-2, 3, dtype=np.int64),), desc="int"),
                S((g.mask(5),), desc="bool"), S((np.asarray(0.0, dtype=g.dtype),), desc="zero_d")]

    def bitwise_pair_samples(g):
        rng = np.random.default_rng(7)
        a = rng.integers(-40, 40, size=(3, 4))
        b = rng.integers(-40, 40, size=(4,))
        return [S((g.mask(3, 4), g.mask(4)), desc="bool"),
                S((a, b), desc="int64_broadcast"),
                S((a.astype(np.int32), b), desc="int32_int64"),
                S((a.astype(np.int32), 6), desc="python_int"),
                S((g.mask(2, 2), 1), desc="bool_python_int"),
                S((np.asarray(5), a), desc="zero_d")]

    def bitwise_not_samples(g):
        rng = np.random.default_rng(8)
        return [S((g.mask(3, 4),), desc="bool"),
                S((rng.integers(-40, 40, size=(5,)),), desc="int64"),
                S((rng.integers(-40, 40, size=(2, 3)).astype(np.int32),), desc="int32"),
                S((np.asarray(0),), desc="zero_d")]

    def t_samples(g):
        return [S((g(3, 4),), desc="matrix"), S((g(5),), desc="vector"), S((g(),), desc="zero_d"),
                S((g(1, 3),), desc="row")]

    def unbind_samples(g):
        return [S((g(3, 4),), desc="dim0"), S((g(2, 3, 4), 1), desc="dim1"),
                S((g(2, 3, 4), -1), desc="negative_dim"), S((g(4),), desc="vector")]

    def unbind_stacked(lib):
        # the pieces, stacked back along the dim they came from (one result,
        # every piece weighted by its own slice of the upstream gradient)
        def fn(x, dim=0):
            return lib.stack(lib.unbind(x, dim), dim)
        return fn

    # --- eigh, qr, pinv, lstsq -----------------------------------------------------
    def sym(x):
        return (x + x.mT) * 0.5

    def eigh_samples(g):
        # random symmetric matrices have distinct eigenvalues
        return [S((g(3, 3),), desc="3x3"), S((g(2, 4, 4),), desc="batched"), S((g(1, 1),), desc="1x1"),
                S((g(3, 3),), {"UPLO": "U"}, desc="upper")]

    def eigh_all(lib):
        def fn(a, UPLO="L"):
            L, V = lib.linalg.eigh(sym(a), UPLO=UPLO)
            V = V * V[..., :1, :].sign()
            bs = tuple(L.shape[:-1])
            return lib.cat([L, V.reshape(bs + (-1,))], -1)
        return fn

    def qr_samples(g):
        return [S((g(4, 3),), desc="tall"), S((g(3, 3),), desc="square"), S((g(3, 5),), desc="wide"),
                S((g(2, 4, 2),), desc="batched_tall"), S((g(2, 2, 4),), desc="batched_wide"),
                S((g(3, 5), "complete"), desc="complete_wide"), S((g(3, 3), "complete"), desc="complete_square")]

    def qr_all(lib):
        def fn(a, mode="reduced"):
            Q, R = lib.linalg.qr(a, mode)
            d = lib.diagonal(R, 0, -2, -1).sign()
            k = d.shape[-1]
            Q = lib.cat([Q[..., :, :k] * d.unsqueeze(-2), Q[..., :, k:]], -1)
            R = R * d.unsqueeze(-1)
            bs = tuple(Q.shape[:-2])
            return lib.cat([Q.reshape(bs + (-1,)), R.reshape(bs + (-1,))], -1)
        return fn

    def spaced(g, n):
        # a well-conditioned square matrix of the sample dtype
        return np.asarray(g(n, n) + 2 * np.eye(n), dtype=g.dtype)

    def pinv_samples(g):
        return [S((g(4, 3),), desc="tall"), S((spaced(g, 3),), desc="square"),
                S((g(2, 5),), desc="wide"), S((g(2, 3, 2),), desc="batched")]

    def lstsq_samples(g):
        return [
            S((g(5, 3), g(5, 2)), desc="tall"),
            S((spaced(g, 3), g(3, 2)), desc="square"),
            S((g(2, 4), g(2, 3)), desc="wide_min_norm"),
            S((g(5, 3), g(5)), desc="vector_rhs"),
            S((g(2, 4, 3), g(1, 4, 2)), desc="batched_A"),
            S((g(2, 4, 3), g(2, 4)), desc="batched_vectors"),
            S((g(1, 4, 2), g(3, 4, 1)), desc="batched_B"),
        ]

    def lstsq_solution(lib):
        def fn(a, b, **kw):
            return lib.linalg.lstsq(a, b, **kw).solution
        return fn

    return [
        OpInfo("_sort", sort_samples, op=sort_values(rg),
               torch_fn=lambda torch, *a, **k: sort_values(torch)(*a, **k)),
        OpInfo("argsort", int_sort_samples,
               torch_fn=lambda torch, x, *a, **k: torch.argsort(x, *a, **k), differentiable=False),
        OpInfo("_topk", topk_samples, op=topk_values(rg),
               torch_fn=lambda torch, *a, **k: topk_values(torch)(*a, **k)),
        OpInfo("any", logical_samples, torch_fn=torch_logical("any"), differentiable=False),
        OpInfo("all", logical_samples, torch_fn=torch_logical("all"), differentiable=False),
        OpInfo("isnan", special, differentiable=False),
        OpInfo("isinf", special, differentiable=False),
        OpInfo("isfinite", special, differentiable=False),
        *[OpInfo(f"logical_{n}", logical_pair_samples, differentiable=False) for n in ("and", "or", "xor")],
        OpInfo("logical_not", logical_not_samples, differentiable=False),
        *[OpInfo(f"bitwise_{n}", bitwise_pair_samples, differentiable=False) for n in ("and", "or", "xor")],
        OpInfo("bitwise_not", bitwise_not_samples, differentiable=False),
        OpInfo("t", t_samples),
        OpInfo("unbind", unbind_samples, op=unbind_stacked(rg),
               torch_fn=lambda torch, *a, **k: unbind_stacked(torch)(*a, **k)),
        OpInfo("_linalg_eigh", eigh_samples, op=eigh_all(rg),
               torch_fn=lambda torch, *a, **k: eigh_all(torch)(*a, **k), f32_rtol=1e-3, f32_atol=1e-4),
        OpInfo("_linalg_qr", qr_samples, op=qr_all(rg),
               torch_fn=lambda torch, *a, **k: qr_all(torch)(*a, **k), f32_rtol=1e-3, f32_atol=1e-4),
        OpInfo("_linalg_pinv", pinv_samples, op=_abi._linalg_pinv_op,
               torch_fn=lambda torch, a: torch.linalg.pinv(a), f32_rtol=1e-3, f32_atol=1e-4),
        OpInfo("_linalg_lstsq", lstsq_samples, op=lstsq_solution(rg),
               torch_fn=lambda torch, *a, **k: lstsq_solution(torch)(*a, **k), f32_rtol=1e-3, f32_atol=1e-4),
    ]
