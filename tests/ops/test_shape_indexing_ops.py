"""Shape and indexing ops beyond the sample registry: views and
version counters, TensorList graph structure, advanced indexing with repeated
indices (vs torch), NumPy's function protocol (vs torch), generator errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

import retrograd as rg
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(ROOT, "core", "retrograd", "core", "_codegen", "gen_ops.py")


def _pair(a):
    return rg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(a, b, **kw):
    if b is None:
        assert a is None or not values(a).any()
        return
    np.testing.assert_allclose(values(a), b.detach().numpy(), rtol=1e-10, atol=1e-12, **kw)


# --- views --------------------------------------------------------------------

VIEWS = [
    ("squeeze", lambda t: t[:, :1].squeeze(1)),
    ("unsqueeze", lambda t: t.unsqueeze(0)),
    ("diagonal", lambda t: t.diagonal(0, 1, 2)),
    ("narrow", lambda t: t.narrow(2, 1, 2)),
    ("movedim", lambda t: rg.movedim(t, 0, -1)),
    ("swapaxes", lambda t: t.swapaxes(0, 2)),
    ("flatten", lambda t: t.flatten(1)),
    ("split", lambda t: rg.split(t, 2, 2)[1]),
    ("chunk", lambda t: t.chunk(2, 1)[0]),
]


@pytest.mark.parametrize("name,fn", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_share_memory_and_version_counter(name, fn):
    x = rg.tensor(np.arange(24.0).reshape(2, 3, 4))
    v = fn(x)
    assert np.shares_memory(values(v), values(x)), name
    assert v._base is x
    before = v._version
    with rg.no_grad():
        x.add_(1.0)
    assert v._version == before + 1
    # writes through the view reach the base (diagonal too: a writable view)
    values(v)[...] = -1.0
    assert (values(x) == -1.0).sum() == v.numel()


def test_non_contiguous_views_stay_views():
    x = rg.tensor(np.arange(60.0).reshape(3, 4, 5))[:, ::2].transpose(0, 2)
    for v in (x.unsqueeze(1), x[:, :1].squeeze(), x.diagonal(), x.narrow(0, 1, 3)):
        assert np.shares_memory(values(v), values(x))


def test_view_backward_after_base_change_is_detected():
    x = rg.tensor(np.ones((3, 3)), requires_grad=True)
    y = x * 1.0
    d = y.diagonal()
    z = (d * d).sum()
    with rg.no_grad():
        y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


# --- TensorList ops ----------------------------------------------------------------

def test_cat_has_one_edge_per_tensor_and_skips_constants():
    a = rg.tensor(np.ones((2, 3)), requires_grad=True)
    b = rg.tensor(np.ones((1, 3)))                      # no grad
    c = rg.tensor(np.ones((4, 3)), requires_grad=True) * 2.0
    d = rg.tensor(np.ones((1, 3)), requires_grad=True)
    out = rg.cat([a, b, c, d])
    fns = out.grad_fn.next_functions
    assert len(fns) == 4
    assert fns[0][0].name() == "AccumulateGrad" and fns[1][0] is None
    assert fns[2][0].name() == "MulBackward0"
    w = rg.from_numpy(np.arange(24.0).reshape(8, 3))
    (out * w).sum().backward()
    np.testing.assert_array_equal(values(a.grad), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(values(d.grad), np.arange(21.0, 24.0).reshape(1, 3))


def test_cat_of_integer_tensors_does_not_require_grad():
    out = rg.cat([rg.tensor([1, 2]), rg.tensor([3])])
    assert out.dtype == np.int64 and not out.requires_grad
    s = rg.stack([rg.tensor([1.0]), rg.tensor([2.0])], 1)
    assert s.grad_fn is None and s.shape == (1, 2)


def test_cat_stack_double_backward_vs_torch():
    rng = np.random.default_rng(0)
    a0, b0 = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    (a, ta), (b, tb) = _pair(a0), _pair(b0)
    for f, tf in ((lambda x, y: rg.cat([x * x, y], 1), lambda x, y: torch.cat([x * x, y], 1)),
                  (lambda x, y: rg.stack([x * y, y * y], 0), lambda x, y: torch.stack([x * y, y * y], 0))):
        out, tout = f(a, b), tf(ta, tb)
        g = rg.autograd.grad(out.sum(), [a, b], create_graph=True)
        tg = torch.autograd.grad(tout.sum(), [ta, tb], create_graph=True)
        gg = rg.autograd.grad((g[0] * g[1]).sum(), [a, b], allow_unused=True)
        tgg = torch.autograd.grad((tg[0] * tg[1]).sum(), [ta, tb], allow_unused=True)
        for x, y in zip(gg, tgg):
            _close(x, y)


def test_cat_jvp_is_linear_in_each_element():
    # cat/stack's `result: auto_linear`: the op applied to the tangents
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((2, 3)) for _ in range(3)]
    ts = [rng.standard_normal((2, 3)) for _ in range(3)]
    eps = 1e-6
    for op in (rg.cat, rg.stack):
        fd = (values(op([rg.tensor(x + eps * t) for x, t in zip(xs, ts)], 1))
              - values(op([rg.tensor(x - eps * t) for x, t in zip(xs, ts)], 1))) / (2 * eps)
        np.testing.assert_allclose(values(op([rg.tensor(t) for t in ts], 1)), fd, rtol=1e-6)


def test_tensorlist_errors():
    x = rg.ones((2, 3))
    with pytest.raises(TypeError, match="tuple or list"):
        rg.cat(x)
    with pytest.raises(ValueError, match="non-empty"):       # torch's class for cat
        rg.cat([])
    with pytest.raises(RuntimeError, match="non-empty"):     # and for stack
        rg.stack([])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        rg.cat([x, rg.ones((2, 4))])
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        rg.cat([rg.tensor(1.0)])
    with pytest.raises(RuntimeError, match="equal size"):
        rg.stack([x, rg.ones((3, 2))])
    with pytest.raises(IndexError, match="Dimension out of range"):
        rg.cat([x, x], 2)


def _gen(tmp_path, text):
    table = tmp_path / "derivatives.yaml"
    table.write_text(text)
    tmpl = tmp_path / "_tensor.pxi"
    tmpl.write_text("cdef class Tensor:\n    pass\n    # @@GENERATED_METHODS@@ (here)\n")
    out = [str(tmp_path / n) for n in ("ops.pxi", "info.py", "tensor.pxi", "decls.pxi")]
    return subprocess.run([sys.executable, GEN, str(table), out[0], out[1], str(tmpl), out[2], out[3]],
                          capture_output=True, text=True, timeout=60), out


GOOD_LIST = ("- name: cat(TensorList tensors, int dim=0)\n  kernel: k_cat(tensors, dim)\n"
             "  tensors: cat_backward(grad, tensors_shapes, dim)\n  result: auto_linear\n")


def test_generator_tensorlist_entry(tmp_path):
    proc, out = _gen(tmp_path, GOOD_LIST)
    assert proc.returncode == 0, proc.stderr
    ops = open(out[0]).read()
    assert "cdef class CatBackward0(Node):" in ops and "node.set_next_edges(tuple(edges))" in ops


@pytest.mark.parametrize("text,msg", [
    ("- name: f(TensorList a, TensorList b)\n  kernel: k_f(a, b)\n  a: grad\n  b: grad\n",
     "2 TensorList parameters"),
    ("- name: f(TensorList a, Tensor b)\n  kernel: k_f(a, b)\n  a: grad\n  b: grad\n",
     "mixes Tensor and TensorList"),
    ("- name: f(int d, TensorList a)\n  kernel: k_f(a, d)\n  a: grad\n", "must come first"),
    ("- name: f(TensorList a)\n  kernel: k_f(a)\n  a: g(grad, a)\n", "unknown function"),
    ("- name: f(TensorList a)\n  kernel: k_f(a)\n  a: sum_backward(grad, a, 0, 0)\n",
     "cannot use 'a'"),
    ("- name: f(TensorList a)\n  kernel: k_f(a)\n  a: grad\n  result: a_t * 2\n",
     "only `auto_linear`"),
    ("- name: f(TensorList a)\n  kernel: k_f(a)\n  a: grad\n  view: always\n", "cannot be a view"),
    ("- name: f(TensorList a)\n  kernel: k_f(a)\n  nondifferentiable: true\n", "must be differentiable"),
    ("- name: f(TensorList a)\n  kernel: k_f(a)\n  a: grad\n  methods: [__add__]\n",
     "plain methods only"),
])
def test_generator_tensorlist_errors_name_file_and_line(tmp_path, text, msg):
    proc, _ = _gen(tmp_path, "# a comment\n\n" + text)
    assert proc.returncode != 0
    assert msg in proc.stderr, proc.stderr
    assert "derivatives.yaml:3:" in proc.stderr, proc.stderr


# --- advanced indexing ---------------------------------------------------------------

INDICES = [
    ("repeated_rows", lambda: (np.random.default_rng(0).integers(0, 7, 5000),)),
    ("repeated_cols", lambda: (slice(None), np.random.default_rng(1).integers(-5, 5, (40, 30)))),
    ("ellipsis_int", lambda: (Ellipsis, np.array([0, 0, 4, 4, 4]))),
    ("bool_mask", lambda: (np.random.default_rng(2).uniform(size=(7, 5)) > 0.3,)),
    ("bool_row_mask", lambda: (np.array([True, False, True, True, False, False, True]),)),
    ("two_arrays", lambda: (np.array([0, 6, 0, 6]), np.array([1, 1, 1, 2]))),
    ("none_and_array", lambda: (None, slice(1, 5), np.array([[2, 2], [0, 2]]))),
    ("int_and_array", lambda: (3, np.array([1, 1, 1]))),
    ("list", lambda: ([1, 1, 2],)),
    ("slice_step_array", lambda: (slice(None, None, 2), np.array([4, 4, 0]))),
]


@pytest.mark.parametrize("name,make", INDICES, ids=[i[0] for i in INDICES])
def test_advanced_indexing_matches_torch(name, make):
    index = make()
    a0 = np.random.default_rng(3).standard_normal((7, 5))
    a, ta = _pair(a0)
    out = a[index]
    tindex = tuple(torch.from_numpy(i) if isinstance(i, np.ndarray) else i for i in index)
    if name == "slice_step_array":
        tout = ta[::2][:, torch.from_numpy(index[1])]
    else:
        tout = ta[tindex]
    _close(out, tout)
    v = np.random.default_rng(4).standard_normal(tuple(out.shape))
    g, = rg.autograd.grad(out, a, grad_outputs=rg.from_numpy(v), retain_graph=True)
    tg, = torch.autograd.grad(tout, ta, grad_outputs=torch.from_numpy(v), retain_graph=True)
    _close(g, tg)
    # double backward goes through _index_backward (getitem again)
    vt, tvt = _pair(v)
    g, = rg.autograd.grad(out * out, a, grad_outputs=vt, create_graph=True)
    tg, = torch.autograd.grad(tout * tout, ta, grad_outputs=tvt, create_graph=True)
    gg = rg.autograd.grad((g * g).sum(), [a, vt])
    tgg = torch.autograd.grad((tg * tg).sum(), [ta, tvt])
    for x, y in zip(gg, tgg):
        _close(x, y)


def test_many_repeated_indices_float32_and_tensor_index():
    rng = np.random.default_rng(5)
    a0 = rng.standard_normal((50, 16)).astype(np.float32)
    idx = rng.integers(0, 50, 200_000)
    a, ta = _pair(a0)
    out = a[rg.from_numpy(idx)]
    tout = ta[torch.from_numpy(idx)]
    v = rng.standard_normal(out.shape).astype(np.float32)
    g, = rg.autograd.grad(out, a, grad_outputs=rg.from_numpy(v))
    tg, = torch.autograd.grad(tout, ta, grad_outputs=torch.from_numpy(v))
    assert g.dtype == np.float32
    np.testing.assert_allclose(values(g), tg.numpy(), rtol=2e-4, atol=2e-3)


def test_gather_scatter_add_many_repeats_vs_torch():
    rng = np.random.default_rng(6)
    x0 = rng.standard_normal((4, 6))
    idx = rng.integers(0, 6, (4, 3000))
    x, tx = _pair(x0)
    out = rg.gather(x, 1, idx)
    tout = torch.gather(tx, 1, torch.from_numpy(idx))
    v = rng.standard_normal(out.shape)
    g, = rg.autograd.grad(out, x, grad_outputs=rg.from_numpy(v))
    tg, = torch.autograd.grad(tout, tx, grad_outputs=torch.from_numpy(v))
    _close(g, tg)
    s0 = rng.standard_normal((4, 3000))
    s, ts = _pair(s0)
    _close(rg.scatter_add(x, 1, idx, s), torch.scatter_add(tx, 1, torch.from_numpy(idx), ts))


# --- other ops: errors and dtypes ------------------------------------------------------

def test_integer_inputs_give_results_without_grad():
    x = rg.tensor(np.arange(12).reshape(3, 4))
    for out in (x.flip(0), x.roll(1, 1), x.repeat(2, 1), rg.tile(x, (2,)), rg.pad(x, (1, 1)),
                x.tril(), x.triu(1), x.masked_fill(x > 5, -1), rg.index_select(x, 0, np.array([0, 0])),
                x.diagonal(), rg.gather(x, 1, np.zeros((3, 2), dtype=np.int64)), x.narrow(0, 1, 1)):
        assert out.dtype.kind == "i" and not out.requires_grad


def test_tril_triu_zero_out_inf():
    x = rg.tensor(np.full((3, 3), np.inf), requires_grad=True)
    y = x.tril()
    assert np.isfinite(values(y)[0, 1]) and values(y)[0, 1] == 0


def test_masked_fill_tensor_value_gets_gradient():
    x0 = np.random.default_rng(7).standard_normal((3, 4))
    (x, tx), (v, tv) = _pair(x0), _pair(np.array(2.5))
    m = x0 > 0
    out = x.masked_fill(rg.from_numpy(m), v)
    tout = tx.masked_fill(torch.from_numpy(m), tv)
    out.sum().backward()
    tout.sum().backward()
    _close(v.grad, tv.grad)
    _close(x.grad, tx.grad)


def test_shape_op_errors():
    x = rg.ones((2, 3))
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        x.narrow(1, 2, 2)
    with pytest.raises(RuntimeError, match="sum exactly"):
        rg.split(x, [1, 1], 1)
    with pytest.raises(RuntimeError, match="greater than 0"):
        x.chunk(0)
    with pytest.raises(RuntimeError, match="can not be smaller"):
        x.repeat(2)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        rg.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding size should be less"):
        rg.pad(rg.ones((1, 2, 3)), (3, 0), mode="reflect")
    with pytest.raises(RuntimeError, match="boolean masks"):
        x.masked_fill(rg.ones((2, 3)), 1.0)
    with pytest.raises(RuntimeError, match="identical"):
        x.diagonal(0, 1, 1)
    with pytest.raises(RuntimeError, match="out of bounds"):
        rg.gather(x, 1, np.array([[0, 3]]))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        rg.tril(rg.ones(3))
    with pytest.raises(RuntimeError, match="same number of dims"):
        rg.movedim(rg.ones((2, 3)), (0, 1), 0)


# --- NumPy's function protocol ---------------------------------------------------------

NP_CASES = [
    ("sum_axis", lambda a, b: np.sum(a, axis=0), lambda a, b: torch.sum(a, 0)),
    ("sum_keepdims", lambda a, b: np.sum(a, axis=(0, 1), keepdims=True),
     lambda a, b: torch.sum(a, (0, 1), keepdim=True)),
    ("mean", lambda a, b: np.mean(a), lambda a, b: torch.mean(a)),
    ("mean_axis", lambda a, b: np.mean(a, axis=-1, keepdims=True),
     lambda a, b: torch.mean(a, -1, keepdim=True)),
    ("dot", lambda a, b: np.dot(a, b.T), lambda a, b: a @ b.T),
    ("dot_1d", lambda a, b: np.dot(a[0], b[1]), lambda a, b: a[0] @ b[1]),
    ("concatenate", lambda a, b: np.concatenate([a, b]), lambda a, b: torch.cat([a, b])),
    ("concatenate_axis1", lambda a, b: np.concatenate([a, b], axis=1), lambda a, b: torch.cat([a, b], 1)),
    ("concatenate_none", lambda a, b: np.concatenate([a, b], axis=None),
     lambda a, b: torch.cat([a.reshape(-1), b.reshape(-1)])),
    ("stack", lambda a, b: np.stack([a, b], axis=1), lambda a, b: torch.stack([a, b], 1)),
    ("where", lambda a, b: np.where(values(a) > 0, a, b), lambda a, b: torch.where(a > 0, a, b)),
    ("reshape", lambda a, b: np.reshape(a, (4, 3)), lambda a, b: a.reshape(4, 3)),
    ("transpose", lambda a, b: np.transpose(a), lambda a, b: a.T),
    ("transpose_axes", lambda a, b: np.transpose(a[None], (2, 0, 1)), lambda a, b: a[None].permute(2, 0, 1)),
    ("squeeze", lambda a, b: np.squeeze(a[None]), lambda a, b: a[None].squeeze()),
    ("expand_dims", lambda a, b: np.expand_dims(a, (0, -1)), lambda a, b: a[None, :, :, None]),
    ("clip", lambda a, b: np.clip(a, -0.5, 0.5), lambda a, b: torch.clamp(a, -0.5, 0.5)),
    ("clip_low", lambda a, b: np.clip(a, -0.5, None), lambda a, b: torch.clamp(a, min=-0.5)),
    ("swapaxes", lambda a, b: np.swapaxes(a, 0, 1), lambda a, b: a.transpose(0, 1)),
    ("flip", lambda a, b: np.flip(a, 1), lambda a, b: torch.flip(a, (1,))),
    ("roll", lambda a, b: np.roll(a, 2, 1), lambda a, b: torch.roll(a, 2, 1)),
    ("tril", lambda a, b: np.tril(a, -1), lambda a, b: torch.tril(a, -1)),
    ("take_along_axis", lambda a, b: np.take_along_axis(a, np.array([[0, 0], [2, 1], [1, 1]]), 1),
     lambda a, b: torch.take_along_dim(a, torch.tensor([[0, 0], [2, 1], [1, 1]]), 1)),
    ("ravel", lambda a, b: np.ravel(a), lambda a, b: a.reshape(-1)),
]


@pytest.mark.parametrize("name,f,tf", NP_CASES, ids=[c[0] for c in NP_CASES])
def test_numpy_functions_record_the_graph(name, f, tf):
    rng = np.random.default_rng(8)
    (a, ta), (b, tb) = _pair(rng.standard_normal((3, 4))), _pair(rng.standard_normal((3, 4)))
    out = f(a, b)
    tout = tf(ta, tb)
    assert isinstance(out, rg.Tensor) and out.grad_fn is not None
    _close(out, tout)
    v = rng.standard_normal(tuple(out.shape))
    g = rg.autograd.grad(out, [a, b], grad_outputs=rg.from_numpy(v), allow_unused=True)
    tg = torch.autograd.grad(tout, [ta, tb], grad_outputs=torch.from_numpy(v), allow_unused=True)
    for x, y in zip(g, tg):
        if y is None:
            assert x is None or not values(x).any()
        else:
            _close(x, y)


def test_numpy_max_min_use_amax_when_available():
    a, ta = _pair(np.random.default_rng(9).standard_normal((3, 4)))
    if not hasattr(rg, "amax"):
        with pytest.raises(TypeError, match="numpy.max"):
            np.max(a, axis=0)
        return
    out = np.max(a, axis=0)
    _close(out, torch.amax(ta, 0))
    out.sum().backward()
    torch.amax(ta, 0).sum().backward()
    _close(a.grad, ta.grad)


def test_numpy_function_without_counterpart():
    a = rg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    with pytest.raises(TypeError, match="numpy.cumproduct|numpy.nancumsum"):
        np.nancumsum(a)
    with pytest.raises(TypeError, match="out="):
        np.sum(a, out=np.zeros(3))
    # raised whether or not a graph is at stake; the message says
    # what to do (plain arrays first)
    with pytest.raises(TypeError, match=r"numpy.nancumsum.*np.asarray\(t\)"):
        np.nancumsum(a.detach())
    with rg.no_grad():
        with pytest.raises(TypeError, match="numpy.nancumsum"):
            np.nancumsum(a)
    assert type(np.nancumsum(values(a.detach()))) is np.ndarray


# --- Tensor method forms (torch's varargs) --------------------------------------------

METHODS = [
    ("flip_varargs", lambda t: t.flip(0, 2), lambda t: torch.flip(t, (0, 2))),
    ("flip_tuple", lambda t: t.flip((1,)), lambda t: torch.flip(t, (1,))),
    ("repeat_tuple", lambda t: t.repeat((1, 2, 1)), lambda t: t.repeat(1, 2, 1)),
    ("tile_varargs", lambda t: t.tile(2, 1), lambda t: t.tile(2, 1)),
    ("squeeze_tuple", lambda t: t[:1, :, :1].squeeze((0, 2)), lambda t: t[:1, :, :1].squeeze((0, 2))),
    ("moveaxis", lambda t: t.moveaxis(-1, 0), lambda t: t.moveaxis(-1, 0)),
    ("swapdims", lambda t: t.swapdims(0, 1), lambda t: t.swapdims(0, 1)),
    ("roll_no_dims", lambda t: t.roll(3), lambda t: t.roll(3)),
    ("split_method", lambda t: t.split(1, 1)[2], lambda t: t.split(1, 1)[2]),
    ("index_select", lambda t: t.index_select(2, rg.tensor([3, 3, 0])),
     lambda t: t.index_select(2, torch.tensor([3, 3, 0]))),
    ("take_along_dim_flat", lambda t: t.take_along_dim(rg.tensor([0, 5, 5])),
     lambda t: t.take_along_dim(torch.tensor([0, 5, 5]))),
    ("gather", lambda t: t.gather(0, rg.tensor(np.zeros((1, 3, 4), np.int64))),
     lambda t: t.gather(0, torch.zeros((1, 3, 4), dtype=torch.int64))),
    ("scatter_add", lambda t: t.scatter_add(2, rg.tensor(np.ones((2, 3, 1), np.int64)), t[..., :1]),
     lambda t: t.scatter_add(2, torch.ones((2, 3, 1), dtype=torch.int64), t[..., :1])),
    ("flatten_method", lambda t: t.flatten(0, 1), lambda t: t.flatten(0, 1)),
    ("tril_method", lambda t: t.tril(-1), lambda t: t.tril(-1)),
]


@pytest.mark.parametrize("name,f,tf", METHODS, ids=[m[0] for m in METHODS])
def test_method_forms_match_torch(name, f, tf):
    x, tx = _pair(np.random.default_rng(10).standard_normal((2, 3, 4)))
    out, tout = f(x), tf(tx)
    _close(out, tout)
    v = np.random.default_rng(11).standard_normal(tuple(out.shape))
    g, = rg.autograd.grad(out, x, grad_outputs=rg.from_numpy(v))
    tg, = torch.autograd.grad(tout, tx, grad_outputs=torch.from_numpy(v))
    _close(g, tg)


def test_multi_array_index_with_repeats_vs_torch():
    rng = np.random.default_rng(12)
    a, ta = _pair(rng.standard_normal((6, 5, 3)))
    rows = rng.integers(-6, 6, (400, 2))
    cols = rng.integers(0, 5, (1, 2))
    out = a[rows, cols]
    tout = ta[torch.from_numpy(rows), torch.from_numpy(cols)]
    _close(out, tout)
    v = rng.standard_normal(tuple(out.shape))
    g, = rg.autograd.grad(out, a, grad_outputs=rg.from_numpy(v))
    tg, = torch.autograd.grad(tout, ta, grad_outputs=torch.from_numpy(v))
    _close(g, tg)


@pytest.mark.parametrize("dim, exc", [(0, IndexError), (1, RuntimeError)])
def test_index_select_refuses_positions_outside_the_dim_as_torch(dim, exc):
    import torch
    x = np.arange(6.0).reshape(2, 3)
    for bad in ([-1], [x.shape[dim]], [0, 7]):
        with pytest.raises(exc):
            torch.tensor(x).index_select(dim, torch.tensor(bad))
        # (NumPy alone would read -1 as the last one)
        with pytest.raises(exc, match="index out of range in self"):
            rg.tensor(x).index_select(dim, rg.tensor(bad))


def test_take_along_dim_counts_negative_positions_from_the_end_as_torch():
    import torch
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([[-1, 0], [2, -4], [-2, 3]])
    want = torch.take_along_dim(torch.tensor(x), torch.tensor(idx), 1).numpy()
    got = rg.take_along_dim(rg.tensor(x), rg.tensor(idx), 1).numpy()
    np.testing.assert_array_equal(got, want)
    # flattened (no dim): torch refuses a negative position, and so does gather
    with pytest.raises(RuntimeError):
        torch.take_along_dim(torch.tensor(x), torch.tensor([-1]))
    with pytest.raises(RuntimeError):
        rg.take_along_dim(rg.tensor(x), rg.tensor([-1]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64", "bool"])
@pytest.mark.parametrize("value", [1, 2.5, True])
def test_masked_fill_keeps_the_inputs_dtype_as_torch(dtype, value):
    import torch
    x = np.zeros(4, dtype=dtype)
    m = np.array([True, False, True, False])
    want = torch.tensor(x).masked_fill(torch.tensor(m), value)
    got = rg.tensor(x).masked_fill(rg.tensor(m), value)
    assert str(got.dtype) == str(want.dtype).replace("torch.", "")
    np.testing.assert_array_equal(got.numpy(), want.numpy())
