"""The op sample registry (PyTorch's OpInfo, in small): one `OpInfo` per op of
derivatives.yaml, each with sample inputs that cover broadcasting, Python
scalars, 0-d tensors, keyword parameters and the shape cases of the op.

Every check in tests/ops and tests/oracle is driven by this registry, and
tests/ops/test_op_registry.py fails when a public op of the table has no
entry here: a new table entry needs samples before the suite passes.

A sample's positional arguments that are ``np.ndarray`` become tensors (those
of a floating dtype require grad and are differentiated); everything else
(Python floats, shapes, dims, indices) is passed through as is.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import retrograd as rg
from retrograd.core import _generated_ops_info

TABLE = _generated_ops_info.OPS


# ---------------------------------------------------------------------------
# Samples

@dataclass
class SampleInput:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    desc: str = ""

    def __repr__(self):
        def r(a):
            if isinstance(a, np.ndarray):
                return f"arr{tuple(a.shape)}:{a.dtype}"
            return repr(a)
        parts = [r(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.desc or 'sample'}({', '.join(parts)})"

    def tensor_positions(self):
        return [i for i, a in enumerate(self.args) if isinstance(a, np.ndarray)]

    def diff_positions(self):
        return [i for i, a in enumerate(self.args)
                if isinstance(a, np.ndarray) and a.dtype.kind == "f"]

    def with_args(self, args):
        return SampleInput(tuple(args), dict(self.kwargs), self.desc)


class _Gen:
    """Draws the arrays of one op's samples (deterministic per op and dtype)."""

    def __init__(self, rng, dtype):
        self.rng = rng
        self.dtype = np.dtype(dtype)

    def __call__(self, *shape, low=-2.0, high=2.0, away=0.0):
        """A float array of `shape`, uniform in [low, high], with |x - k| >= away
        for the kinks k of non-smooth ops (away > 0 avoids 0)."""
        a = self.rng.uniform(low, high, size=shape)
        if away:
            bump = away * (1.0 + self.rng.uniform(size=shape))
            a = np.where(np.abs(a) < away, np.where(a < 0, -bump, bump), a)
        return np.asarray(a, dtype=self.dtype)

    def pos(self, *shape, low=0.5, high=2.0):
        return self(*shape, low=low, high=high)

    def mask(self, *shape):
        m = self.rng.uniform(size=shape) > 0.5
        return np.asarray(m)


@dataclass
class OpInfo:
    name: str
    sample_fn: Callable                  # (gen) -> list[SampleInput]
    op: Callable | None = None           # retrograd callable; default rg.<name>
    torch_fn: Callable | None = None     # (torch, *args, **kwargs); default torch.<name>
    differentiable: bool = True
    gradgrad: bool = True                # formulas are differentiable (second order checked)
    atol: float = 1e-6
    rtol: float = 1e-5
    f32_rtol: float = 2e-4
    f32_atol: float = 2e-5
    fd_eps: float = 1e-6                 # finite-difference step
    noncontig: bool = True               # non-contiguous inputs are valid (view() is not)
    notes: str = ""

    def __post_init__(self):
        if self.op is None:
            self.op = getattr(rg, self.name)

    def samples(self, dtype=np.float64, seed=0):
        seed = (seed * 1000003 + sum(map(ord, self.name))) % (2 ** 32)
        return self.sample_fn(_Gen(np.random.default_rng(seed), dtype))

    def torch_call(self, torch, *args, **kwargs):
        if self.torch_fn is not None:
            return self.torch_fn(torch, *args, **kwargs)
        return getattr(torch, self.name)(*args, **kwargs)


# --- sample builders ---------------------------------------------------------

def _binary_samples(g, *, pos_other=False, pos_self=False, scalar=2.5, away=0.0, rscalar=True):
    """Elementwise binary op samples: equal shapes, broadcasting both ways,
    0-d tensors, Python float operands."""
    a = (lambda *s: g.pos(*s)) if pos_self else (lambda *s: g(*s, away=away))
    b = (lambda *s: g.pos(*s)) if pos_other else (lambda *s: g(*s, away=away))
    out = [
        SampleInput((a(3, 4), b(3, 4)), desc="same_shape"),
        SampleInput((a(3, 4), b(4)), desc="broadcast_row"),
        SampleInput((a(4), b(3, 4)), desc="broadcast_self"),
        SampleInput((a(2, 1, 3), b(4, 1)), desc="broadcast_both"),
        SampleInput((a(3, 1), b(1, 3)), desc="outer_broadcast"),
        SampleInput((a(), b()), desc="zero_d"),
        SampleInput((a(2, 3), b()), desc="zero_d_other"),
        SampleInput((a(), b(2, 3)), desc="zero_d_self"),
        SampleInput((a(2, 3), scalar), desc="python_scalar"),
    ]
    if rscalar:
        out.append(SampleInput((scalar, b(2, 3)), desc="python_scalar_self"))
    return out


def _unary_samples(g, *, low=-2.0, high=2.0, away=0.0):
    return [
        SampleInput((g(3, 4, low=low, high=high, away=away),), desc="matrix"),
        SampleInput((g(5, low=low, high=high, away=away),), desc="vector"),
        SampleInput((g(low=low, high=high, away=away),), desc="zero_d"),
        SampleInput((g(2, 3, 2, low=low, high=high, away=away),), desc="3d"),
    ]


def _add_samples(g):
    return _binary_samples(g) + [
        SampleInput((g(3, 4), g(4)), {"alpha": 2.5}, desc="alpha"),
        SampleInput((g(2, 3), 1.5), {"alpha": -2}, desc="alpha_scalar"),
    ]


def _div_samples(g):
    return _binary_samples(g, away=0.5, scalar=-1.5)


def _pow_samples(g):
    # self > 0 wherever the exponent is a tensor (x**p is real only there);
    # integer-valued and fractional Python exponents on signed bases.
    return _binary_samples(g, pos_self=True, scalar=2.5) + [
        SampleInput((g(3, 4), 2.0), desc="square"),
        SampleInput((g(3, 4), 3), desc="int_cube"),
        SampleInput((g(2, 3, away=0.3), -2), desc="negative_int"),
        SampleInput((g.pos(2, 3), 0.5), desc="sqrt"),
        SampleInput((g(2, 3), 0.0), desc="zero_exponent"),
        SampleInput((g(2, 3), 1), desc="unit_exponent"),
    ]


def _where_samples(g):
    return [
        SampleInput((g.mask(3, 4), g(3, 4), g(3, 4)), desc="same_shape"),
        SampleInput((g.mask(3, 4), g(4), g(3, 1)), desc="broadcast"),
        SampleInput((g.mask(4), g(3, 4), g()), desc="broadcast_cond"),
        SampleInput((g.mask(2, 3), g(2, 3), 0.0), desc="python_scalar_other"),
        SampleInput((g.mask(2, 3), -1.5, g(2, 3)), desc="python_scalar_self"),
        SampleInput((np.asarray(True), g(), g()), desc="zero_d"),
    ]


def _reduction_samples(g):
    x = lambda: g(2, 3, 4)  # noqa: E731
    return [
        SampleInput((x(),), desc="all"),
        SampleInput((x(),), {"dim": 1}, desc="dim"),
        SampleInput((x(),), {"dim": -1}, desc="negative_dim"),
        SampleInput((x(),), {"dim": 0, "keepdim": True}, desc="keepdim"),
        SampleInput((x(),), {"dim": (0, 2)}, desc="dim_tuple"),
        SampleInput((x(),), {"dim": (-1, 0), "keepdim": True}, desc="dim_tuple_neg_keepdim"),
        SampleInput((x(),), {"dim": [1]}, desc="dim_list"),
        SampleInput((x(),), {"keepdim": True}, desc="all_keepdim"),
        SampleInput((g(5),), {"dim": 0}, desc="vector_dim"),
        SampleInput((g(),), desc="zero_d"),
        SampleInput((g(),), {"dim": 0}, desc="zero_d_dim"),
        SampleInput((g(),), {"dim": -1, "keepdim": True}, desc="zero_d_keepdim"),
        SampleInput((g(3, 4),), {"dim": 1, "dtype": np.float64}, desc="dtype"),
    ]


def _matmul_samples(g):
    return [
        SampleInput((g(3), g(3)), desc="dot"),
        SampleInput((g(2, 3), g(3)), desc="matvec"),
        SampleInput((g(3), g(3, 4)), desc="vecmat"),
        SampleInput((g(2, 3), g(3, 4)), desc="mm"),
        SampleInput((g(2, 2, 3), g(2, 3, 4)), desc="bmm"),
        SampleInput((g(2, 2, 3), g(3, 4)), desc="batch_broadcast_other"),
        SampleInput((g(2, 3), g(2, 3, 4)), desc="batch_broadcast_self"),
        SampleInput((g(2, 1, 2, 3), g(3, 3, 2)), desc="batch_broadcast_both"),
        SampleInput((g(3), g(2, 3, 4)), desc="vec_batched"),
        SampleInput((g(2, 2, 3), g(3)), desc="batched_vec"),
    ]


def _reshape_samples(g):
    return [
        SampleInput((g(2, 3, 4), (6, 4)), desc="merge"),
        SampleInput((g(2, 3, 4), (4, -1)), desc="infer"),
        SampleInput((g(6), (2, 1, 3)), desc="split"),
        SampleInput((g(), (1, 1)), desc="zero_d_up"),
        SampleInput((g(1, 1), ()), desc="to_zero_d"),
        SampleInput((g(3, 4), (-1,)), desc="flatten"),
    ]


def _transpose_samples(g):
    return [
        SampleInput((g(3, 4), 0, 1), desc="matrix"),
        SampleInput((g(2, 3, 4), -1, 0), desc="negative_dims"),
        SampleInput((g(2, 3, 4), 1, 1), desc="same_dim"),
        SampleInput((g(), 0, -1), desc="zero_d"),
    ]


def _permute_samples(g):
    return [
        SampleInput((g(2, 3, 4), (2, 0, 1)), desc="cycle"),
        SampleInput((g(2, 3, 4), (-1, 0, -2)), desc="negative_dims"),
        SampleInput((g(3, 4), (1, 0)), desc="matrix"),
        SampleInput((g(), ()), desc="zero_d"),
    ]


def _expand_samples(g):
    return [
        SampleInput((g(3, 1), (3, 4)), desc="singleton"),
        SampleInput((g(3, 1), (2, 3, 4)), desc="new_leading"),
        SampleInput((g(1, 4), (2, -1, 4)), desc="minus_one"),
        SampleInput((g(), (2, 3)), desc="zero_d"),
        SampleInput((g(4), (3, -1)), desc="keep_last"),
    ]


def _broadcast_to_samples(g):
    return [
        SampleInput((g(3, 1), (3, 4)), desc="singleton"),
        SampleInput((g(4), (2, 3, 4)), desc="new_leading"),
        SampleInput((g(), (2, 3)), desc="zero_d"),
        SampleInput((g(2, 1, 3), (2, 4, 3)), desc="middle"),
    ]


GETITEM_INDICES = [
    ("int", (1,)),
    ("negative_int", -1),
    ("slice", (slice(1, 3),)),
    ("step", (slice(None, None, 2), slice(1, None))),
    ("negative_step", (slice(None, None, -1), slice(3, 0, -2))),
    ("none", (None, slice(None), 0)),
    ("ellipsis", (Ellipsis, 1)),
    ("ellipsis_none", (0, Ellipsis, None)),
    ("int_int", (2, 1)),
    ("mixed", (slice(None, None, -2), None, Ellipsis, 3)),
    ("empty_slice", (slice(2, 2),)),
    ("int_list", ([0, 2, 0],)),           # advanced, with a repeated row
    ("int_array_dim1", (slice(None), np.array([3, 1, 1]))),
]


def _getitem_samples(g):
    out = [SampleInput((g(3, 4), idx), desc=d) for d, idx in GETITEM_INDICES]
    out += [
        SampleInput((g(2, 3, 4), (Ellipsis, slice(None, None, -1))), desc="3d_ellipsis_reverse"),
        SampleInput((g(5), 3), desc="vector_to_zero_d"),
        SampleInput((g(), Ellipsis), desc="zero_d_ellipsis"),
        SampleInput((g(), None), desc="zero_d_none"),
    ]
    return out


def _comparison_samples(g):
    return [
        SampleInput((g(3, 4), g(4)), desc="broadcast"),
        SampleInput((g(2, 3), 0.5), desc="python_scalar"),
        SampleInput((g(), g(2, 2)), desc="zero_d"),
    ]


def _to_dtype_samples(g):
    other = np.float32 if g.dtype == np.float64 else np.float64
    return [
        SampleInput((g(3, 4), other), desc="cast"),
        SampleInput((g(), other), desc="zero_d"),
    ]


# --- torch name mapping ----------------------------------------------------------

def _torch_dtype(torch, d):
    return {np.dtype(np.float64): torch.float64, np.dtype(np.float32): torch.float32,
            np.dtype(np.int64): torch.int64, np.dtype(bool): torch.bool}[np.dtype(d)]


def _torch_reduction(name):
    def fn(torch, x, dim=None, keepdim=False, dtype=None):
        kw = {}
        if dtype is not None:
            kw["dtype"] = _torch_dtype(torch, dtype)
        if dim is None:
            if keepdim:
                # torch.sum(x, dim=None, keepdim=True) keeps every dim
                dim = tuple(range(x.dim()))
                return getattr(torch, name)(x, dim=dim, keepdim=True, **kw) if dim else \
                    getattr(torch, name)(x, **kw)
            return getattr(torch, name)(x, **kw)
        if isinstance(dim, list):
            dim = tuple(dim)
        return getattr(torch, name)(x, dim=dim, keepdim=keepdim, **kw)
    return fn


def torch_getitem(torch, x, index):
    """NumPy basic indexing (negative steps too) and a single advanced index,
    spelt in differentiable torch ops (torch rejects negative slice steps)."""
    if not isinstance(index, tuple):
        index = (index,)
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    if any(i is Ellipsis for i in index):
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (x.dim() - n_real) + index[k + 1:]
    d = 0
    for i in index:
        if i is None:
            x = x.unsqueeze(d)
            d += 1
        elif isinstance(i, (int, np.integer)):
            x = x.select(d, int(i))
        elif isinstance(i, slice):
            rng = range(*i.indices(x.shape[d]))
            x = torch.index_select(x, d, torch.tensor(list(rng), dtype=torch.int64))
            d += 1
        else:
            idx = torch.as_tensor(np.asarray(i), dtype=torch.int64)
            x = torch.index_select(x, d, idx)
            d += 1
    return x


def _rg_to_dtype(x, dtype):
    return x.to(dtype)


# ---------------------------------------------------------------------------
# The registry

# --- nn.functional ---
def _softmax_samples(g):
    return [
        SampleInput((g(3, 4), 1), desc="rows"),
        SampleInput((g(3, 4), 0), desc="cols"),
        SampleInput((g(2, 3, 4), -1), desc="3d_last"),
        SampleInput((g(2, 3, 4), 1), desc="3d_middle"),
        SampleInput((g(5, low=-30.0, high=30.0), 0), desc="large_logits"),
        SampleInput((g(), 0), desc="zero_d"),
    ]


def _conv2d_samples(g):
    # (input, weight, stride, (top, bottom, left, right) padding, dilation, groups)
    return [
        SampleInput((g(2, 3, 5, 5), g(4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1), desc="plain"),
        SampleInput((g(2, 3, 5, 4), g(2, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1), desc="padding"),
        SampleInput((g(2, 4, 7, 6), g(6, 2, 3, 2), (2, 1), (1, 1, 0, 0), (1, 2), 2), desc="stride_dil_groups"),
        SampleInput((g(1, 2, 5, 6), g(3, 2, 2, 2), (1, 2), (1, 2, 0, 1), (1, 1), 1), desc="asym_padding"),
        SampleInput((g(3, 4, 3, 3), g(4, 1, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 4), desc="depthwise_1x1"),
    ]


def _conv2d_bias_samples(g):
    # (input, weight, bias, stride, padding, dilation, groups); images of
    # >= 64 pixels take the column-matrix kernels (bias added per image)
    return [
        SampleInput((g(2, 3, 5, 5), g(4, 3, 3, 3), g(4), (1, 1), (0, 0, 0, 0), (1, 1), 1), desc="plain"),
        SampleInput((g(2, 2, 8, 9), g(3, 2, 3, 3), g(3), (1, 1), (1, 1, 1, 1), (1, 1), 1), desc="cols"),
        SampleInput((g(1, 2, 8, 8), g(2, 2, 2, 3), g(2), (1, 1), (1, 0, 2, 1), (2, 1), 1),
                    desc="cols_asym_dilation"),
        SampleInput((g(2, 4, 7, 6), g(6, 2, 3, 2), g(6), (2, 1), (1, 1, 0, 0), (1, 2), 2), desc="stride_dil_groups"),
    ]


def _torch_conv2d_bias(torch, x, w, b, stride, padding, dilation, groups):
    F = torch.nn.functional
    x = F.pad(x, (padding[2], padding[3], padding[0], padding[1]))
    return F.conv2d(x, w, b, stride, 0, dilation, groups)


def _torch_conv2d(torch, x, w, stride, padding, dilation, groups):
    F = torch.nn.functional
    x = F.pad(x, (padding[2], padding[3], padding[0], padding[1]))
    return F.conv2d(x, w, None, stride, 0, dilation, groups)


def _max_pool2d_samples(g):
    return [
        SampleInput((g(2, 3, 6, 6), 2), desc="k2"),
        SampleInput((g(2, 3, 7, 6), 3, 2, 1), desc="overlap_pad"),
        SampleInput((g(3, 5, 5), (2, 3), (1, 2), (1, 1)), desc="unbatched_rect"),
        SampleInput((g(1, 2, 7, 7), 2, 1, 0, 2), desc="dilation"),
        # ceil_mode: the last window hangs past the input
        SampleInput((g(2, 2, 5, 6), 2), {"ceil_mode": True}, desc="ceil"),
        SampleInput((g(1, 2, 6, 7), 3, 2, 1), {"ceil_mode": True}, desc="ceil_pad"),
        SampleInput((g(2, 5, 7), (2, 3), (2, 2), 0, (2, 1)), {"ceil_mode": True}, desc="ceil_dilation"),
    ]


def _avg_pool2d_samples(g):
    return [
        SampleInput((g(2, 3, 6, 6), 2), desc="k2"),
        SampleInput((g(2, 3, 7, 6), 3, 2, 1), desc="overlap_pad"),
        SampleInput((g(2, 3, 7, 6), 3, 2, 1), {"count_include_pad": False}, desc="exclude_pad"),
        SampleInput((g(3, 5, 5), (2, 3), (1, 2), (1, 1)), desc="unbatched_rect"),
        SampleInput((g(1, 2, 5, 5), 2), {"divisor_override": 3}, desc="divisor_override"),
        SampleInput((g(2, 2, 5, 6), 2), {"ceil_mode": True}, desc="ceil"),
        SampleInput((g(1, 2, 6, 7), 3, 2, 1), {"ceil_mode": True}, desc="ceil_pad"),
        SampleInput((g(1, 2, 6, 7), 3, 2, 1), {"ceil_mode": True, "count_include_pad": False},
                    desc="ceil_pad_exclude"),
        SampleInput((g(3, 5, 5), (2, 3), (2, 2)), {"ceil_mode": True, "divisor_override": 2},
                    desc="ceil_divisor_override"),
    ]
# --- end nn.functional ---


OP_DB: list[OpInfo] = [
    OpInfo("add", _add_samples),
    OpInfo("sub", _add_samples),
    OpInfo("mul", _binary_samples),
    OpInfo("div", _div_samples),
    OpInfo("neg", _unary_samples),
    OpInfo("pow", _pow_samples),
    OpInfo("exp", _unary_samples),
    OpInfo("log", lambda g: _unary_samples(g, low=0.3, high=3.0)),
    OpInfo("sin", _unary_samples),
    OpInfo("cos", _unary_samples),
    OpInfo("tanh", _unary_samples),
    OpInfo("sigmoid", lambda g: _unary_samples(g, low=-4.0, high=4.0)),
    OpInfo("relu", lambda g: _unary_samples(g, away=0.05),
           notes="samples avoid the kink at 0"),
    OpInfo("where", _where_samples),
    OpInfo("sum", _reduction_samples, torch_fn=_torch_reduction("sum")),
    OpInfo("mean", _reduction_samples, torch_fn=_torch_reduction("mean")),
    OpInfo("matmul", _matmul_samples),
    OpInfo("reshape", _reshape_samples),
    OpInfo("view", _reshape_samples, torch_fn=lambda torch, x, shape: x.view(shape),
           noncontig=False),
    OpInfo("transpose", _transpose_samples),
    OpInfo("permute", _permute_samples),
    OpInfo("expand", _expand_samples, torch_fn=lambda torch, x, shape: x.expand(shape)),
    OpInfo("broadcast_to", _broadcast_to_samples),
    OpInfo("getitem", _getitem_samples, torch_fn=torch_getitem),
    OpInfo("clone", _unary_samples),
    OpInfo("_to_dtype", _to_dtype_samples, op=_rg_to_dtype, fd_eps=1e-2, atol=1e-5,
           torch_fn=lambda torch, x, dtype: x.to(_torch_dtype(torch, dtype))),
    OpInfo("lt", _comparison_samples, differentiable=False),
    OpInfo("le", _comparison_samples, differentiable=False),
    OpInfo("gt", _comparison_samples, differentiable=False),
    OpInfo("ge", _comparison_samples, differentiable=False),
    OpInfo("eq", _comparison_samples, differentiable=False),
    OpInfo("ne", _comparison_samples, differentiable=False),
    # --- nn.functional ---
    OpInfo("softmax", _softmax_samples),
    OpInfo("log_softmax", _softmax_samples),
    OpInfo("logsigmoid", lambda g: _unary_samples(g, low=-20.0, high=20.0),
           torch_fn=lambda torch, x: torch.nn.functional.logsigmoid(x)),
    OpInfo("_conv2d", _conv2d_samples, torch_fn=_torch_conv2d, f32_rtol=1e-3, f32_atol=1e-4),
    OpInfo("_conv2d_bias", _conv2d_bias_samples, torch_fn=_torch_conv2d_bias, f32_rtol=1e-3, f32_atol=1e-4),
    OpInfo("max_pool2d", _max_pool2d_samples,
           torch_fn=lambda torch, *a, **k: torch.nn.functional.max_pool2d(*a, **k)),
    OpInfo("avg_pool2d", _avg_pool2d_samples,
           torch_fn=lambda torch, *a, **k: torch.nn.functional.avg_pool2d(*a, **k)),
]

# --- shape and indexing ---
# Composite ops (written in terms of table ops: retrograd.core.SHAPE_COMPOSITES)
# are sampled here as well; TensorList ops take their tensors as separate
# positional arrays (so make_tensors turns them into leaves) and the list is
# rebuilt by the op wrapper. Ops returning tuples (split, chunk) are checked
# through a weighted cat of their pieces.

def _cat_samples(g):
    return [
        SampleInput((g(2, 3), g(4, 3)), desc="rows"),
        SampleInput((g(2, 3), g(2, 1), g(2, 2)), {"dim": 1}, desc="three_cols"),
        SampleInput((g(2, 3, 2), g(2, 3, 1)), {"dim": -1}, desc="negative_dim"),
        SampleInput((g(3),), desc="single"),
        SampleInput((g(2, 3), g(0, 3), g(1, 3)), desc="empty_piece"),
    ]


def _stack_samples(g):
    return [
        SampleInput((g(2, 3), g(2, 3)), desc="two"),
        SampleInput((g(2, 3), g(2, 3), g(2, 3)), {"dim": 1}, desc="dim1"),
        SampleInput((g(4), g(4)), {"dim": -1}, desc="negative_dim"),
        SampleInput((g(), g()), desc="zero_d"),
    ]


def _list_op(name):
    def op(*xs, dim=0):
        return getattr(rg, name)(list(xs), dim)
    return op


def _torch_list_op(name):
    def fn(torch, *xs, dim=0):
        return getattr(torch, name)(list(xs), dim)
    return fn


def _weighted_join(cat, pieces, dim):
    # every piece reaches the output, each with its own weight
    return cat([p * float(i + 1) for i, p in enumerate(pieces)], dim)


def _diagonal_samples(g):
    return [
        SampleInput((g(3, 4),), desc="matrix"),
        SampleInput((g(3, 4), 1), desc="offset"),
        SampleInput((g(4, 3), -2), desc="negative_offset"),
        SampleInput((g(2, 3, 4), 0, 2, 0), desc="dims_swapped"),
        SampleInput((g(2, 3, 4), -1, -1, 1), desc="negative_dims"),
        SampleInput((g(3, 3), 5), desc="empty"),
    ]


def _idx(*shape, high):
    return np.random.default_rng(sum(shape) + high).integers(0, high, size=shape)


def _gather_samples(g):
    return [
        SampleInput((g(3, 4), 1, _idx(3, 5, high=4)), desc="repeats"),
        SampleInput((g(3, 4), 0, _idx(2, 4, high=3)), desc="dim0"),
        SampleInput((g(3, 4, 2), -1, _idx(2, 3, 2, high=2)), desc="smaller_index"),
    ]


def _scatter_add_samples(g):
    return [
        SampleInput((g(3, 4), 1, _idx(3, 5, high=4), g(3, 5)), desc="repeats"),
        SampleInput((g(3, 4), 0, _idx(2, 4, high=3), g(2, 4)), desc="dim0"),
        # src larger than index has no gradient shape in torch either (its
        # engine rejects gather's index-shaped result), so src matches index
        SampleInput((g(3, 4, 2), -1, _idx(2, 3, 2, high=2), g(2, 3, 2)), desc="smaller_index"),
    ]


def _flatten_samples(g):
    return [
        SampleInput((g(2, 3, 4),), desc="all"),
        SampleInput((g(2, 3, 4), 1), desc="start"),
        SampleInput((g(2, 3, 4, 2), 1, -2), desc="middle"),
        SampleInput((g(),), desc="zero_d"),
    ]


def _squeeze_samples(g):
    return [
        SampleInput((g(3, 1, 4, 1),), desc="all"),
        SampleInput((g(3, 1, 4, 1), 1), desc="dim"),
        SampleInput((g(3, 1, 4, 1), 0), desc="not_one"),
        SampleInput((g(3, 1, 4, 1), (1, -1)), desc="tuple"),
        SampleInput((g(),), desc="zero_d"),
    ]


def _unsqueeze_samples(g):
    return [
        SampleInput((g(3, 4), 0), desc="front"),
        SampleInput((g(3, 4), -1), desc="back"),
        SampleInput((g(3, 4), 1), desc="middle"),
        SampleInput((g(), 0), desc="zero_d"),
    ]


def _swap_samples(g):
    return [
        SampleInput((g(2, 3, 4), 0, 2), desc="outer"),
        SampleInput((g(2, 3, 4), -1, 1), desc="negative"),
    ]


def _movedim_samples(g):
    return [
        SampleInput((g(2, 3, 4), 0, -1), desc="int"),
        SampleInput((g(2, 3, 4), (0, 1), (2, 0)), desc="tuple"),
        SampleInput((g(2, 3, 4, 5), -1, 1), desc="4d"),
    ]


def _split_samples(g):
    return [
        SampleInput((g(5, 3), 2), desc="size"),
        SampleInput((g(5, 3), [1, 3, 1]), desc="sections"),
        SampleInput((g(3, 6), 3, 1), desc="dim"),
        SampleInput((g(3, 4), [4, 0], -1), desc="empty_section"),
    ]


def _chunk_samples(g):
    return [
        SampleInput((g(5, 3), 2), desc="uneven"),
        SampleInput((g(3, 6), 3, 1), desc="even"),
        SampleInput((g(3, 2), 4, 1), desc="more_than_size"),
    ]


def _flip_samples(g):
    return [
        SampleInput((g(3, 4), (0,)), desc="dim0"),
        SampleInput((g(2, 3, 4), (0, -1)), desc="two_dims"),
    ]


def _roll_samples(g):
    return [
        SampleInput((g(3, 4), 1, 1), desc="dim"),
        SampleInput((g(3, 4), -5, 0), desc="negative_wrap"),
        SampleInput((g(2, 3, 4), (1, 2), (0, 2)), desc="two_dims"),
        SampleInput((g(3, 4), 5), desc="flattened"),
    ]


def _repeat_samples(g):
    return [
        SampleInput((g(2, 3), 2, 1), desc="rows"),
        SampleInput((g(2, 3), 2, 2, 3), desc="new_dim"),
        SampleInput((g(3), 1, 2), desc="vector"),
        SampleInput((g(), 3), desc="zero_d"),
    ]


def _tile_samples(g):
    return [
        SampleInput((g(2, 3), (2, 2)), desc="both"),
        SampleInput((g(2, 3), (3,)), desc="short"),
        SampleInput((g(2, 3), (2, 1, 2)), desc="long"),
    ]


def _pad_samples(g):
    return [
        SampleInput((g(2, 3), (1, 2)), desc="last_dim"),
        SampleInput((g(2, 3, 4), (1, 0, 2, 1)), {"value": 1.5}, desc="two_dims_value"),
        SampleInput((g(2, 5), (-1, 2)), desc="negative_crop"),
        SampleInput((g(2, 3, 5), (2, 1)), {"mode": "reflect"}, desc="reflect"),
        SampleInput((g(2, 3, 4, 5), (1, 1, 2, 0)), {"mode": "replicate"}, desc="replicate"),
        SampleInput((g(2, 3, 5), (2, 3)), {"mode": "circular"}, desc="circular"),
    ]


def _index_select_samples(g):
    return [
        SampleInput((g(3, 4), 0, np.array([2, 0, 2, 2])), desc="repeats"),
        SampleInput((g(3, 4), -1, np.array([3])), desc="one"),
        SampleInput((g(2, 3, 4), 1, np.array([], dtype=np.int64)), desc="empty"),
    ]


def _masked_fill_samples(g):
    return [
        SampleInput((g(3, 4), g.mask(3, 4), 0.5), desc="scalar"),
        SampleInput((g(3, 4), g.mask(4), -2.0), desc="broadcast_mask"),
        SampleInput((g(3, 4), g.mask(3, 1), g()), desc="tensor_value"),
    ]


def _take_along_dim_samples(g):
    return [
        SampleInput((g(3, 4), _idx(3, 2, high=4), 1), desc="dim"),
        SampleInput((g(3, 4), _idx(5, 1, high=3), 0), desc="broadcast"),
        SampleInput((g(3, 4), _idx(5, high=12)), desc="flat"),
    ]


def _narrow_samples(g):
    return [
        SampleInput((g(3, 5), 1, 1, 3), desc="middle"),
        SampleInput((g(3, 5), -1, -3, 2), desc="negative"),
        SampleInput((g(3, 5), 0, 0, 0), desc="empty"),
    ]


def _select_samples(g):
    return [
        SampleInput((g(3, 5), 1, 2), desc="middle"),
        SampleInput((g(3, 5), -2, -1), desc="negative"),
        SampleInput((g(4,), 0, 3), desc="to_0d"),
    ]


def _unflatten_samples(g):
    return [
        SampleInput((g(3, 6), 1, (2, 3)), desc="split_last"),
        SampleInput((g(6, 2), 0, (-1, 2)), desc="inferred"),
        SampleInput((g(4,), -1, (1, 4, 1)), desc="ones"),
    ]


def _tri_samples(g):
    return [
        SampleInput((g(3, 4),), desc="main"),
        SampleInput((g(4, 3), 1), desc="above"),
        SampleInput((g(2, 3, 4), -1), desc="batched_below"),
    ]


def _torch_pad(torch, x, pad, mode="constant", value=None):
    if mode == "constant":
        return torch.nn.functional.pad(x, pad, value=0.0 if value is None else value)
    return torch.nn.functional.pad(x, pad, mode=mode)


OP_DB += [
    OpInfo("cat", _cat_samples, op=_list_op("cat"), torch_fn=_torch_list_op("cat")),
    OpInfo("stack", _stack_samples, op=_list_op("stack"), torch_fn=_torch_list_op("stack")),
    OpInfo("concatenate", _cat_samples, op=_list_op("concatenate"),
           torch_fn=_torch_list_op("concatenate")),
    OpInfo("concat", _cat_samples, op=_list_op("concat"), torch_fn=_torch_list_op("concat")),
    OpInfo("diagonal", _diagonal_samples),
    OpInfo("gather", _gather_samples),
    OpInfo("scatter_add", _scatter_add_samples),
    OpInfo("flatten", _flatten_samples),
    OpInfo("squeeze", _squeeze_samples),
    OpInfo("unsqueeze", _unsqueeze_samples),
    OpInfo("swapaxes", _swap_samples),
    OpInfo("swapdims", _swap_samples),
    OpInfo("movedim", _movedim_samples),
    OpInfo("moveaxis", _movedim_samples),
    OpInfo("split", _split_samples,
           op=lambda x, s, dim=0: _weighted_join(rg.cat, rg.split(x, s, dim), dim),
           torch_fn=lambda torch, x, s, dim=0: _weighted_join(torch.cat, torch.split(x, s, dim), dim)),
    OpInfo("chunk", _chunk_samples,
           op=lambda x, c, dim=0: _weighted_join(rg.cat, rg.chunk(x, c, dim), dim),
           torch_fn=lambda torch, x, c, dim=0: _weighted_join(torch.cat, torch.chunk(x, c, dim), dim)),
    OpInfo("flip", _flip_samples),
    OpInfo("roll", _roll_samples),
    OpInfo("repeat", _repeat_samples, op=lambda x, *s: x.repeat(*s),
           torch_fn=lambda torch, x, *s: x.repeat(*s)),
    OpInfo("tile", _tile_samples),
    OpInfo("pad", _pad_samples, torch_fn=_torch_pad),
    OpInfo("index_select", _index_select_samples),
    OpInfo("masked_fill", _masked_fill_samples,
           torch_fn=lambda torch, x, m, v: torch.masked_fill(x, m, v)),
    OpInfo("take_along_dim", _take_along_dim_samples),
    OpInfo("narrow", _narrow_samples),
    OpInfo("select", _select_samples),
    OpInfo("unflatten", _unflatten_samples),
    OpInfo("tril", _tri_samples),
    OpInfo("triu", _tri_samples),

    # --- reductions and linear algebra --- (samples in op_samples_reductions_linalg.py)
    *__import__("op_samples_reductions_linalg").reductions_linalg_ops(OpInfo, SampleInput, _torch_dtype),

    # --- sorting, selection, logical reductions, eigh/qr/pinv/lstsq --- (op_samples_sort_linalg.py)
    *__import__("op_samples_sort_linalg").sort_linalg_ops(OpInfo, SampleInput),
]


# --- elementwise ops -------------------------------------------------------------
# Values stay away from singularities, kinks and ties (finite differences),
# except the samples that test ties on purpose (maximum/minimum split the
# gradient half/half, which central differences also give). Integer samples
# check that integer inputs work and give results that do not require grad.

def _ints(*shape, low=-5, high=6, seed=0):
    return np.random.default_rng(seed).integers(low, high, size=shape).astype(np.int64)


def _nz_ints(*shape, seed=1):
    a = _ints(*shape, seed=seed)
    return np.where(a == 0, 3, a)


def _floordiv_samples(g):
    return _binary_samples(g, away=0.5, scalar=-1.5) + [
        SampleInput((g(2, 3) * 4, 0.75), desc="python_scalar_fraction"),
    ]


def _torch_scalar_as(torch, a, like):
    return a if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=like.dtype)


def _torch_floor_divide(torch, a, b):
    like = a if isinstance(a, torch.Tensor) else b
    return torch.div(_torch_scalar_as(torch, a, like), _torch_scalar_as(torch, b, like),
                     rounding_mode="floor")


def _torch_binary_tensors(name):
    # torch.maximum / minimum / atan2 want tensors on both sides
    def fn(torch, a, b):
        like = a if isinstance(a, torch.Tensor) else b
        return getattr(torch, name)(_torch_scalar_as(torch, a, like), _torch_scalar_as(torch, b, like))
    return fn


def _unary_int_samples(g, **kw):
    # integer inputs: tests/ops/test_elementwise_ops.py (no gradient to check here)
    return _unary_samples(g, **kw)


def _atan2_samples(g):
    # torch's atan2/maximum/minimum take no number as their input
    # (Note [Non-Tensor arguments]): no python_scalar_self sample
    return _binary_samples(g, away=0.3, scalar=-1.5, rscalar=False)


def _gelu_samples(g):
    return _unary_samples(g, low=-3.0, high=3.0) + [
        SampleInput((g(3, 4, low=-3.0, high=3.0),), {"approximate": "tanh"}, desc="tanh"),
        SampleInput((g(low=-3.0, high=3.0),), {"approximate": "tanh"}, desc="tanh_zero_d"),
        SampleInput((g(2, 3),), {"approximate": "none"}, desc="none_explicit"),
    ]


def _away_from(a, k, d=0.1):
    """`a` with every element at least `d` from `k` (an array or scalar)."""
    k = np.broadcast_to(k, np.broadcast_shapes(np.shape(a), np.shape(k)))
    a = np.broadcast_to(a, k.shape).copy() if np.shape(a) != k.shape else a.copy()
    close = np.abs(a - k) < d
    a[close] = (k + np.where(a >= k, 2 * d, -2 * d))[close]
    return a


def _softplus_samples(g):
    x = _away_from(g(3, 4, low=-3, high=3), 0.5)          # kink at x*beta == threshold
    return _unary_samples(g, low=-3.0, high=3.0) + [
        SampleInput((x, 2.0, 1.0), desc="beta_threshold"),
        SampleInput((g(2, 3),), {"beta": 0.5}, desc="beta_kw"),
        SampleInput((_away_from(g(5, low=-3, high=3), 1.0),), {"threshold": 1.0}, desc="threshold_kw"),
        SampleInput((g(low=-1, high=1),), {"beta": 3, "threshold": 10}, desc="zero_d"),
    ]


def _clamp_samples(g):
    lo, hi = -0.5, 0.8
    x = _away_from(_away_from(g(3, 4), lo), hi)
    mn = g(3, 4, low=-1.5, high=0.0)
    mx = g(4, low=0.2, high=1.5)
    xt = _away_from(_away_from(g(3, 4), mn), mx)
    m0 = g()
    return [
        SampleInput((x, lo, hi), desc="scalars"),
        SampleInput((x, lo, None), desc="min_only"),
        SampleInput((x, None, hi), desc="max_only"),
        SampleInput((x, hi, lo), desc="min_above_max"),
        SampleInput((xt, mn, mx), desc="tensors"),
        SampleInput((xt, mn, None), desc="tensor_min_only"),
        SampleInput((xt, None, mx), desc="tensor_max_only"),
        SampleInput((_away_from(g(3, 4), mn), mn, 5.0), desc="tensor_min_scalar_max"),
        SampleInput((_away_from(g(), 0.1), 0.1, None), desc="zero_d"),
        SampleInput((_away_from(g(2, 3), m0), m0, None), desc="zero_d_min"),
    ]


def _torch_clamp(torch, x, min=None, max=None):
    if isinstance(min, torch.Tensor) or isinstance(max, torch.Tensor):
        min = min if min is None else _torch_scalar_as(torch, min, x)
        max = max if max is None else _torch_scalar_as(torch, max, x)
    return torch.clamp(x, min, max)


def _max_min_samples(g):
    # ties (the gradient is split half/half) are tested against torch in
    # test_elementwise_ops.py: finite differences of the first gradient jump there
    return _binary_samples(g, rscalar=False) + [SampleInput((g(2, 3), g(2, 3)), desc="same_shape_2")]


def _round_samples(g):
    return _unary_samples(g) + [
        SampleInput((g(3, 4),), {"decimals": 0}, desc="decimals_0"),
        SampleInput((g(2, 3),), {"decimals": 1}, desc="decimals_1"),
    ]


def _lerp_samples(g):
    return [
        SampleInput((g(3, 4), g(3, 4), 0.3), desc="scalar_weight_low"),
        SampleInput((g(3, 4), g(3, 4), 0.7), desc="scalar_weight_high"),
        SampleInput((g(3, 4), g(4), g.pos(3, 4, low=0.0, high=1.0)), desc="tensor_weight"),
        SampleInput((g(3, 1), g(1, 4), g(4)), desc="broadcast_all"),
        SampleInput((g(), g(), g()), desc="zero_d"),
        SampleInput((g(2, 3), g(2, 3), 1.5), desc="extrapolate"),
    ]


def _torch_lerp(torch, a, b, w):
    return torch.lerp(a, b, w)


def _fill_samples(g):
    return [
        SampleInput((g(3, 4), 2.5), desc="python_scalar"),
        SampleInput((g(3, 4), g()), desc="zero_d_value"),
        SampleInput((g(), g()), desc="zero_d"),
    ]


def _torch_fill(torch, x, value):
    return torch.fill(x, value)


def _rg_zero(x):
    return rg.mul(x, 1.0).zero_()


OP_DB += [
    OpInfo("true_divide", _div_samples),
    OpInfo("floor_divide", _floordiv_samples, torch_fn=_torch_floor_divide,
           notes="piecewise constant: zero gradient (torch's div(rounding_mode='floor'))"),
    OpInfo("remainder", _floordiv_samples, torch_fn=_torch_binary_tensors("remainder")),
    OpInfo("exp2", _unary_samples),
    OpInfo("log2", lambda g: _unary_samples(g, low=0.3, high=3.0)),
    OpInfo("log10", lambda g: _unary_samples(g, low=0.3, high=3.0)),
    OpInfo("log1p", lambda g: _unary_samples(g, low=-0.7, high=2.0)),
    OpInfo("expm1", _unary_samples),
    OpInfo("sqrt", lambda g: _unary_samples(g, low=0.3, high=3.0)),
    OpInfo("rsqrt", lambda g: _unary_samples(g, low=0.3, high=3.0)),
    OpInfo("square", _unary_int_samples),
    OpInfo("reciprocal", lambda g: _unary_samples(g, away=0.5)),
    # torch's double backward of abs hands out a ZeroTensor the oracle cannot
    # read: the same function spelt with where
    OpInfo("abs", lambda g: _unary_int_samples(g, away=0.1), notes="samples avoid the kink at 0",
           torch_fn=lambda torch, x: torch.where(x < 0, -x, x)),
    OpInfo("sign", lambda g: _unary_int_samples(g, away=0.1)),
    OpInfo("tan", lambda g: _unary_samples(g, low=-1.2, high=1.2)),
    OpInfo("asin", lambda g: _unary_samples(g, low=-0.9, high=0.9)),
    OpInfo("acos", lambda g: _unary_samples(g, low=-0.9, high=0.9)),
    OpInfo("atan", _unary_samples),
    OpInfo("atan2", _atan2_samples, torch_fn=_torch_binary_tensors("atan2")),
    OpInfo("sinh", _unary_samples),
    OpInfo("cosh", _unary_samples),
    OpInfo("gelu", _gelu_samples,
           torch_fn=lambda torch, x, approximate="none": torch.nn.functional.gelu(x, approximate=approximate)),
    OpInfo("silu", lambda g: _unary_samples(g, low=-4.0, high=4.0),
           torch_fn=lambda torch, x: torch.nn.functional.silu(x)),
    OpInfo("softplus", _softplus_samples,
           torch_fn=lambda torch, x, beta=1, threshold=20: torch.nn.functional.softplus(x, beta, threshold)),
    OpInfo("erf", lambda g: _unary_samples(g, low=-3.0, high=3.0)),
    OpInfo("clamp", _clamp_samples, torch_fn=_torch_clamp, notes="samples avoid x == min / max"),
    OpInfo("maximum", _max_min_samples, torch_fn=_torch_binary_tensors("maximum")),
    OpInfo("minimum", _max_min_samples, torch_fn=_torch_binary_tensors("minimum")),
    OpInfo("floor", _unary_samples),
    OpInfo("ceil", _unary_samples),
    OpInfo("round", _round_samples),
    OpInfo("trunc", _unary_samples),
    OpInfo("lerp", _lerp_samples, torch_fn=_torch_lerp),
    OpInfo("fill", _fill_samples, torch_fn=_torch_fill),
    OpInfo("_zero", _unary_samples, op=_rg_zero, torch_fn=lambda torch, x: (x * 1.0).zero_()),
]

# --- the entries added for torch's names (issue 41) --- (op_samples_coverage.py)
OP_DB += __import__("op_samples_coverage").coverage_ops(OpInfo, SampleInput, _binary_samples, _unary_samples,
                                                        _away_from, _torch_binary_tensors)
# --- torch's special functions (issue 41) --- (op_samples_special.py)
OP_DB += __import__("op_samples_special").special_ops(OpInfo, SampleInput)

OPS_BY_NAME = {o.name: o for o in OP_DB}

# Table ops that are checked through another op rather than sampled directly
# (private ops only; a public op is never allowed here).
COVERED_ELSEWHERE = {
    "_diagonal_backward": "the backward of diagonal: every diagonal sample's second-order check runs it",
    "_index_backward": "the backward of getitem: every getitem sample's second-order check runs it",
    "_to_device": "needs a second device: test_op_gradients.py::test_to_device_gradients "
                  "(virtual CPU device cpu:1)",
    "_view_scatter": "in-place ops on views (CopySlices): tests/core/test_copy_slices.py, vs torch",
    "_as_strided": "views re-derived after CopySlices: tests/core/test_copy_slices.py, vs torch",
    "_index_put": "tracked __setitem__: tests/core/test_copy_slices.py, vs torch",

    # --- nn.functional ---
    "_conv2d_input_grad": "the input backward of _conv2d: every _conv2d sample's second-order check runs it",
    "_conv2d_weight_grad": "the weight backward of _conv2d: every _conv2d sample's second-order check runs it",
    "_avg_pool2d_backward": "the backward of avg_pool2d: every avg_pool2d sample's second-order check runs it",
    "_max_pool2d_flat_index": "the positions max_pool2d's create_graph backward scatters to: every max_pool2d "
                              "sample's second-order check runs it",
}
# --- special functions ---
COVERED_ELSEWHERE["_not_implemented"] = (
    "raises by design (igamma's and igammac's derivative for their input, as torch): "
    "tests/ops/test_special_functions.py checks the error in backward and forward mode")
# --- reductions and linear algebra ---
COVERED_ELSEWHERE["_take_dim_backward"] = (
    "the backward of _take_dim (max/min values): every _take_dim sample's second-order check runs it")

DIFF_OPS = [o for o in OP_DB if o.differentiable]
GRADGRAD_OPS = [o for o in DIFF_OPS if o.gradgrad]


def all_samples(ops=None, dtype=np.float64):
    """(op, sample) pairs for pytest parametrization, with readable ids."""
    import pytest
    out = []
    for op in (OP_DB if ops is None else ops):
        for i, s in enumerate(op.samples(dtype)):
            out.append(pytest.param(op, s, id=f"{op.name}-{i}-{s.desc}"))
    return out


# ---------------------------------------------------------------------------
# Running a sample

def torch_tensors(torch, sample, requires_grad=True):
    """The sample's arguments with arrays as torch tensors (copies), floating
    ones requiring grad: (args, leaves), as make_tensors gives retrograd's."""
    args, leaves = [], []
    for a in sample.args:
        if isinstance(a, np.ndarray):
            t = torch.from_numpy(a.copy())
            if requires_grad and a.dtype.kind == "f":
                t.requires_grad_(True)
                leaves.append(t)
            args.append(t)
        else:
            args.append(a)
    return args, leaves


def make_tensors(sample, requires_grad=True, transform=None, device=None):
    """The sample's arguments with arrays as retrograd tensors (leaves); on
    `device` (a copy there) when given, else sharing a copy of the array."""
    args = []
    leaves = []
    for i, a in enumerate(sample.args):
        if isinstance(a, np.ndarray):
            arr = transform(a) if transform is not None else a.copy()
            diff = requires_grad and a.dtype.kind == "f"
            t = rg.from_numpy(arr) if device is None else rg.tensor(arr, device=device)
            if diff:
                t.requires_grad_(True)
                leaves.append(t)
            args.append(t)
        else:
            args.append(a)
    return args, leaves


def noncontiguous(a):
    """A copy of `a` with non-contiguous strides (every other element of a
    larger buffer, then transposed), same values."""
    if a.ndim == 0:
        return a.copy()
    buf = np.zeros(tuple(2 * s for s in a.shape[::-1]), dtype=a.dtype)
    view = buf[tuple(slice(None, None, 2) for _ in a.shape)].T
    view[...] = a
    assert view.shape == a.shape and (a.size <= 1 or not view.flags.c_contiguous)
    return view
