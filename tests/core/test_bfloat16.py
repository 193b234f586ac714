"""bfloat16 against torch.bfloat16 (torch 2.13, CPU): every op of the table,
the nn functions a network calls, factories, conversions, gradients,
optimizers stepping bfloat16 parameters, and small networks trained under
``rg.autocast("cpu")``.

Both libraries get the same values, in bfloat16; the results must have
torch's dtype and agree to bfloat16's resolution (compared in float64,
relative to each result's largest magnitude), and so must the gradients
(to a few bfloat16 roundings: a backward formula is several ops, each
rounding, in both libraries, in different orders). Where torch refuses an op for bfloat16, retrograd must refuse it with the
same exception class.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")
torch = pytest.importorskip("torch")

import retrograd as rg  # noqa: E402
import retrograd.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))
from op_samples import OP_DB  # noqa: E402

pytestmark = [pytest.mark.oracle, pytest.mark.float32_default]

TF = torch.nn.functional
BF = np.dtype(ml_dtypes.bfloat16)
RTOL = 1e-2
GRAD_RTOL = 3e-2


# --- helpers -----------------------------------------------------------------

def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def _f64(t):
    """A result as a float64 (or integer / bool) NumPy array."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return t.double().numpy() if t.is_floating_point() else t.numpy()
    a = np.asarray(t.detach())
    return a.astype(np.float64) if a.dtype == BF or a.dtype.kind == "f" else a


def _close(out, ref, what, rtol=RTOL):
    """``out`` (retrograd) has ``ref``'s (torch) dtype and shape, and its values to ``rtol``."""
    assert _dtype_name(out) == _dtype_name(ref), f"{what}: dtype {out.dtype} vs torch {ref.dtype}"
    assert tuple(out.shape) == tuple(ref.shape), f"{what}: shape {tuple(out.shape)} vs torch {tuple(ref.shape)}"
    a, b = _f64(out), _f64(ref)
    if b.dtype.kind != "f":
        np.testing.assert_array_equal(a, b, err_msg=what)
        return
    finite = np.isfinite(b)
    scale = float(np.max(np.abs(b[finite]), initial=0.0))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale + 1e-30, equal_nan=True, err_msg=what)


def _results(r):
    if isinstance(r, (tuple, list)):
        return list(r)
    if hasattr(r, "values") and hasattr(r, "indices") and not isinstance(r, (rg.Tensor, torch.Tensor)):
        return [r.values, r.indices]
    return [r]


def _rg_arg(a, grad):
    if isinstance(a, np.ndarray):
        if a.dtype.kind == "f":
            return rg.from_numpy(a.astype(BF)).requires_grad_(grad)
        return rg.from_numpy(a.copy())
    return a


def _torch_arg(a, grad):
    if isinstance(a, np.ndarray):
        if a.dtype.kind == "f":
            return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16).requires_grad_(grad)
        return torch.from_numpy(a.copy())
    return a


def _refuses_alike(rg_call, torch_error, what):
    with pytest.raises(type(torch_error)):
        rg_call()


def check(rg_fn, torch_fn, *args, grad=True, rtol=RTOL, grad_rtol=GRAD_RTOL, what="", **kwargs):
    """Run ``rg_fn`` and ``torch_fn`` on ``args`` (float NumPy arrays become
    bfloat16 tensors, other arrays tensors of their dtype, the rest passes
    through), compare the results, then the gradients of every floating
    argument for one random upstream gradient (itself bfloat16)."""
    targs = [_torch_arg(a, grad) for a in args]
    try:
        ref = torch_fn(*targs, **kwargs)
    except Exception as e:                 # torch refuses: so must retrograd, alike
        _refuses_alike(lambda: rg_fn(*[_rg_arg(a, False) for a in args], **kwargs), e, what)
        return None
    rargs = [_rg_arg(a, grad) for a in args]
    out = rg_fn(*rargs, **kwargs)
    outs, refs = _results(out), _results(ref)
    assert len(outs) == len(refs), what
    for i, (o, r) in enumerate(zip(outs, refs)):
        if isinstance(r, torch.Tensor):
            _close(o, r, f"{what} result {i}", rtol)
    if not grad:
        return out
    tleaves = [t for t in targs if isinstance(t, torch.Tensor) and t.requires_grad]
    rleaves = [t for t in rargs if isinstance(t, rg.Tensor) and t.requires_grad]
    pairs = [(o, r) for o, r in zip(outs, refs) if isinstance(r, torch.Tensor) and r.requires_grad]
    if not tleaves or not pairs:
        return out
    rng = np.random.default_rng(5)
    vs = [rng.standard_normal(tuple(r.shape)).astype(np.float32).astype(BF) for _, r in pairs]
    tg = torch.autograd.grad([r for _, r in pairs], tleaves,
                             [torch.from_numpy(v.astype(np.float32)).to(r.dtype) for v, (_, r) in zip(vs, pairs)],
                             allow_unused=True)
    rgr = rg.autograd.grad([o for o, _ in pairs], rleaves,
                           [rg.from_numpy(v).to(o.dtype) for v, (o, _) in zip(vs, pairs)], allow_unused=True)
    for i, (g, t) in enumerate(zip(rgr, tg)):
        if t is None:
            assert g is None or not np.any(_f64(g)), f"{what}: gradient {i} should be zero"
            continue
        assert g is not None, f"{what}: gradient {i} missing"
        _close(g, t, f"{what} gradient {i}", max(rtol, grad_rtol))
    return out


def _rand(*shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


# --- every op of the table -----------------------------------------------------------

# ops whose backward torch itself refuses in bfloat16 (its forward works):
# only the forward is compared
_TORCH_NO_BF16_BACKWARD = {"_i1"}


@pytest.mark.parametrize("op", OP_DB, ids=lambda o: o.name)
def test_table_op_matches_torch_in_bfloat16(op):
    samples = [s for s in op.samples(np.float32)
               if any(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in s.args)]
    if not samples:
        pytest.skip("no floating-point sample")
    for i, s in enumerate(samples):
        check(op.op, lambda *a, **k: op.torch_call(torch, *a, **k), *s.args,
              grad=op.differentiable and op.name not in _TORCH_NO_BF16_BACKWARD,
              what=f"{op.name} sample {i} {s.desc}", **s.kwargs)


# --- nn functions ----------------------------------------------------------------------

_X = _rand(2, 3, 5, 5, seed=1)
_SEQ = _rand(2, 3, 7, seed=2)
_M = _rand(4, 6, seed=3)
_W46 = _rand(5, 6, seed=4)
_B5 = _rand(5, seed=5)
_G3 = _rand(3, seed=6, low=0.5, high=1.5)
_B3 = _rand(3, seed=7)
_LBL = np.array([1, 0, 4, 2])


def _nn_cases():
    k2 = _rand(4, 3, 3, 3, seed=8)
    k1 = _rand(4, 3, 3, seed=9)
    kt = _rand(3, 2, 3, 3, seed=10)
    ln_w, ln_b = _rand(5, seed=11, low=0.5, high=1.5), _rand(5, seed=12)
    return {
        "relu": (F.relu, TF.relu, (_M,), {}),
        "gelu": (F.gelu, TF.gelu, (_M,), {}),
        "gelu_tanh": (F.gelu, TF.gelu, (_M,), {"approximate": "tanh"}),
        "silu": (F.silu, TF.silu, (_M,), {}),
        "sigmoid": (F.sigmoid, TF.sigmoid, (_M,), {}),
        "tanh": (F.tanh, TF.tanh, (_M,), {}),
        "leaky_relu": (F.leaky_relu, TF.leaky_relu, (_M, 0.1), {}),
        "elu": (F.elu, TF.elu, (_M,), {}),
        "softplus": (F.softplus, TF.softplus, (_M,), {}),
        "mish": (F.mish, TF.mish, (_M,), {}),
        "hardswish": (F.hardswish, TF.hardswish, (_M,), {}),
        "hardtanh": (F.hardtanh, TF.hardtanh, (_M,), {}),
        "relu6": (F.relu6, TF.relu6, (_M,), {}),
        "selu": (F.selu, TF.selu, (_M,), {}),
        "softmax": (F.softmax, TF.softmax, (_M,), {"dim": -1}),
        "log_softmax": (F.log_softmax, TF.log_softmax, (_M,), {"dim": 0}),
        "logsigmoid": (F.logsigmoid, TF.logsigmoid, (_M,), {}),
        "linear": (F.linear, TF.linear, (_M, _W46, _B5), {}),
        "linear_no_bias": (F.linear, TF.linear, (_M, _W46), {}),
        "matmul": (rg.matmul, torch.matmul, (_M, _W46.T.copy()), {}),
        "mm": (rg.mm, torch.mm, (_M, _W46.T.copy()), {}),
        "bmm": (rg.bmm, torch.bmm, (_rand(2, 3, 4, seed=13), _rand(2, 4, 5, seed=14)), {}),
        "einsum": (lambda a, b: rg.einsum("ij,kj->ik", a, b), lambda a, b: torch.einsum("ij,kj->ik", a, b),
                   (_M, _W46), {}),
        "tensordot": (lambda a, b: rg.tensordot(a, b, dims=([1], [1])),
                      lambda a, b: torch.tensordot(a, b, dims=([1], [1])), (_M, _W46), {}),
        "conv1d": (F.conv1d, TF.conv1d, (_SEQ, k1, _rand(4, seed=15)), {"padding": 1}),
        "conv2d": (F.conv2d, TF.conv2d, (_X, k2, _rand(4, seed=16)), {"stride": 2, "padding": 1}),
        "conv2d_no_bias": (F.conv2d, TF.conv2d, (_X, k2), {}),
        "conv_transpose2d": (F.conv_transpose2d, TF.conv_transpose2d, (_X, kt, _rand(2, seed=17)),
                             {"stride": 2}),
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (5,), w, b), lambda x, w, b: TF.layer_norm(x, (5,), w, b),
                       (_X, ln_w, ln_b), {}),
        "layer_norm_plain": (lambda x: F.layer_norm(x, (5, 5)), lambda x: TF.layer_norm(x, (5, 5)), (_X,), {}),
        "group_norm": (lambda x, w, b: F.group_norm(x, 1, w, b), lambda x, w, b: TF.group_norm(x, 1, w, b),
                       (_X, _G3, _B3), {}),
        "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                             lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True), (_X, _G3, _B3), {}),
        "batch_norm_eval": (lambda x, w, b: F.batch_norm(x, rg.from_numpy(_B3.astype(BF)), rg.from_numpy(_G3.astype(BF)),
                                                         w, b),
                            lambda x, w, b: TF.batch_norm(x, torch.from_numpy(_B3).bfloat16(),
                                                          torch.from_numpy(_G3).bfloat16(), w, b), (_X, _G3, _B3), {}),
        "batch_norm_f32_weights": (lambda x: F.batch_norm(x, rg.zeros(3), rg.ones(3), rg.ones(3), rg.zeros(3)),
                                   lambda x: TF.batch_norm(x, torch.zeros(3), torch.ones(3), torch.ones(3),
                                                           torch.zeros(3)), (_X,), {}),
        "layer_norm_f32_weights": (lambda x: F.layer_norm(x, (5,), rg.ones(5), rg.zeros(5)),
                                   lambda x: TF.layer_norm(x, (5,), torch.ones(5), torch.zeros(5)), (_X,), {}),
        "rms_norm": (lambda x, w: F.rms_norm(x, (5,), w), lambda x, w: TF.rms_norm(x, (5,), w), (_X, ln_w), {}),
        "instance_norm": (F.instance_norm, TF.instance_norm, (_X,), {}),
        "max_pool2d": (F.max_pool2d, TF.max_pool2d, (_X, 2), {}),
        "max_pool2d_pad": (F.max_pool2d, TF.max_pool2d, (_X, 3), {"stride": 2, "padding": 1}),
        "avg_pool2d": (F.avg_pool2d, TF.avg_pool2d, (_X, 2), {}),
        "adaptive_avg_pool2d": (F.adaptive_avg_pool2d, TF.adaptive_avg_pool2d, (_X, (2, 3)), {}),
        "adaptive_max_pool2d": (F.adaptive_max_pool2d, TF.adaptive_max_pool2d, (_X, 2), {}),
        "max_pool1d": (F.max_pool1d, TF.max_pool1d, (_SEQ, 2), {}),
        "avg_pool1d": (F.avg_pool1d, TF.avg_pool1d, (_SEQ, 2), {}),
        "embedding": (lambda i, w: F.embedding(i, w), lambda i, w: TF.embedding(i, w),
                      (np.array([[1, 3], [0, 1]]), _rand(5, 3, seed=18)), {}),
        "cross_entropy": (F.cross_entropy, TF.cross_entropy, (_rand(4, 5, seed=19), _LBL), {}),
        "cross_entropy_smooth": (F.cross_entropy, TF.cross_entropy, (_rand(4, 5, seed=19), _LBL),
                                 {"label_smoothing": 0.1}),
        "nll_loss": (F.nll_loss, TF.nll_loss, (_rand(4, 5, seed=20), _LBL), {}),
        "mse_loss": (F.mse_loss, TF.mse_loss, (_M, _rand(4, 6, seed=21)), {}),
        "l1_loss": (F.l1_loss, TF.l1_loss, (_M, _rand(4, 6, seed=21)), {}),
        "smooth_l1_loss": (F.smooth_l1_loss, TF.smooth_l1_loss, (_M, _rand(4, 6, seed=21)), {}),
        "bce_with_logits": (F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits,
                            (_M, _rand(4, 6, seed=22, low=0.0, high=1.0)), {}),
        "binary_cross_entropy": (F.binary_cross_entropy, TF.binary_cross_entropy,
                                 (_rand(4, 6, seed=23, low=0.1, high=0.9), _rand(4, 6, seed=22, low=0.0, high=1.0)),
                                 {}),
        "kl_div": (F.kl_div, TF.kl_div, (_M, _rand(4, 6, seed=22, low=0.1, high=1.0)), {"reduction": "batchmean"}),
        "scaled_dot_product_attention": (F.scaled_dot_product_attention, TF.scaled_dot_product_attention,
                                         (_rand(1, 2, 4, 8, seed=24), _rand(1, 2, 4, 8, seed=25),
                                          _rand(1, 2, 4, 8, seed=26)), {}),
        "sdpa_causal": (F.scaled_dot_product_attention, TF.scaled_dot_product_attention,
                        (_rand(1, 2, 4, 8, seed=24), _rand(1, 2, 4, 8, seed=25), _rand(1, 2, 4, 8, seed=26)),
                        {"is_causal": True}),
        "pad_constant": (F.pad, TF.pad, (_X, (1, 2, 0, 1)), {"value": 0.5}),
        "pad_reflect": (F.pad, TF.pad, (_X, (1, 2, 0, 1)), {"mode": "reflect"}),
        "pad_replicate": (F.pad, TF.pad, (_X, (1, 2)), {"mode": "replicate"}),
        "normalize": (F.normalize, TF.normalize, (_M,), {}),
        "cosine_similarity": (F.cosine_similarity, TF.cosine_similarity, (_M, _rand(4, 6, seed=27)), {}),
        "interpolate_nearest": (F.interpolate, TF.interpolate, (_X,), {"scale_factor": 2}),
        "interpolate_bilinear": (F.interpolate, TF.interpolate, (_X,), {"scale_factor": 2, "mode": "bilinear"}),
        "one_hot_float": (lambda i: F.one_hot(i, 5).to(rg.bfloat16), lambda i: TF.one_hot(i, 5).to(torch.bfloat16),
                          (_LBL,), {}),
        "dropout_eval": (lambda x: F.dropout(x, 0.3, training=False), lambda x: TF.dropout(x, 0.3, training=False),
                         (_M,), {}),
        "alpha_dropout_eval": (lambda x: F.alpha_dropout(x, 0.3, training=False),
                               lambda x: TF.alpha_dropout(x, 0.3, training=False), (_M,), {}),
        "dropout2d_eval": (lambda x: F.dropout2d(x, 0.3, training=False),
                           lambda x: TF.dropout2d(x, 0.3, training=False), (_X,), {}),
        "prelu": (F.prelu, TF.prelu, (_X, _G3), {}),
        "glu": (F.glu, TF.glu, (_M,), {}),
        "celu": (F.celu, TF.celu, (_M,), {}),
        "hardsigmoid": (F.hardsigmoid, TF.hardsigmoid, (_M,), {}),
        "softsign": (F.softsign, TF.softsign, (_M,), {}),
        "softmin": (F.softmin, TF.softmin, (_M,), {"dim": 1}),
        "threshold": (F.threshold, TF.threshold, (_M, 0.1, -1.0), {}),
        "pixel_shuffle": (F.pixel_shuffle, TF.pixel_shuffle, (_rand(1, 4, 2, 3, seed=31), 2), {}),
        "unfold": (F.unfold, TF.unfold, (_X, 2), {}),
        "fold": (F.fold, TF.fold, (_rand(1, 4, 4, seed=32), (3, 3), 2), {}),
        "conv3d": (F.conv3d, TF.conv3d, (_rand(1, 2, 4, 4, 4, seed=33), _rand(3, 2, 2, 2, 2, seed=34)), {}),
        "conv_transpose1d": (F.conv_transpose1d, TF.conv_transpose1d, (_SEQ, _rand(3, 2, 3, seed=35)), {}),
        "max_pool3d": (F.max_pool3d, TF.max_pool3d, (_rand(1, 2, 4, 4, 4, seed=36), 2), {}),
        "adaptive_avg_pool3d": (F.adaptive_avg_pool3d, TF.adaptive_avg_pool3d, (_rand(1, 2, 4, 4, 4, seed=36), 2),
                                {}),
        "avg_pool3d_refused": (F.avg_pool3d, TF.avg_pool3d, (_rand(1, 2, 4, 4, 4, seed=36), 2), {}),
        "pdist_refused": (F.pdist, TF.pdist, (_M,), {}),
        "cdist_refused": (rg.cdist, torch.cdist, (_M, _M), {}),
        "multi_margin_refused": (F.multi_margin_loss, TF.multi_margin_loss, (_rand(4, 5, seed=19), _LBL), {}),
        "embedding_bag": (lambda i, w: F.embedding_bag(i, w), lambda i, w: TF.embedding_bag(i, w),
                          (np.array([[1, 3], [0, 1]]), _rand(5, 3, seed=18)), {}),
        "grid_sample": (lambda x, g: F.grid_sample(x, g, align_corners=False),
                        lambda x, g: TF.grid_sample(x, g, align_corners=False),
                        (_X, _rand(2, 3, 2, 2, seed=37, low=-1, high=1)), {}),
        "interpolate_bicubic": (F.interpolate, TF.interpolate, (_X,), {"scale_factor": 2, "mode": "bicubic"}),
        "pairwise_distance": (F.pairwise_distance, TF.pairwise_distance, (_M, _rand(4, 6, seed=27)), {}),
        "triplet_margin_loss": (F.triplet_margin_loss, TF.triplet_margin_loss,
                                (_M, _rand(4, 6, seed=27), _rand(4, 6, seed=28)), {}),
        "margin_ranking_loss": (F.margin_ranking_loss, TF.margin_ranking_loss,
                                (_rand(6, seed=38), _rand(6, seed=39), np.sign(_rand(6, seed=40))), {}),
        "huber_loss": (F.huber_loss, TF.huber_loss, (_M, _rand(4, 6, seed=21)), {}),
        "poisson_nll_loss": (F.poisson_nll_loss, TF.poisson_nll_loss, (_M, _rand(4, 6, seed=22, low=0, high=2)), {}),
        "multilabel_soft_margin_loss": (F.multilabel_soft_margin_loss, TF.multilabel_soft_margin_loss,
                                        (_M, (_rand(4, 6, seed=22) > 0).astype(np.float32)), {}),
    }


NN = _nn_cases()


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_function_matches_torch_in_bfloat16(name):
    rg_fn, torch_fn, args, kwargs = NN[name]
    check(rg_fn, torch_fn, *args, what=name, **kwargs)


@pytest.mark.parametrize("name,rg_fn,torch_fn,arr", [
    ("dropout", F.dropout, TF.dropout, _M),
    ("alpha_dropout", F.alpha_dropout, TF.alpha_dropout, _M),
    ("feature_alpha_dropout", F.feature_alpha_dropout, TF.feature_alpha_dropout, _X),
    ("dropout1d", F.dropout1d, TF.dropout1d, _SEQ),
    ("dropout2d", F.dropout2d, TF.dropout2d, _X),
    ("dropout3d", F.dropout3d, TF.dropout3d, _X),
])
def test_dropout_in_training_keeps_bfloat16(name, rg_fn, torch_fn, arr):
    x = rg.from_numpy(arr.astype(BF)).requires_grad_()
    y = rg_fn(x, 0.4, training=True)
    ty = torch_fn(torch.from_numpy(arr).to(torch.bfloat16), 0.4, training=True)
    assert _dtype_name(y) == _dtype_name(ty) == "bfloat16"
    y.sum().backward()
    assert x.grad.dtype == rg.bfloat16
    if name == "dropout":       # the survivors are scaled by 1 / (1 - p), in bfloat16
        kept = _f64(y) != 0
        np.testing.assert_allclose(_f64(y)[kept], (_f64(x) / 0.6)[kept], rtol=RTOL)


def test_nn_modules_keep_bfloat16():
    """Modules made in bfloat16 (dtype=, .to(), .bfloat16()) compute in it, as torch's."""
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                             torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(16, 5),
                             torch.nn.LayerNorm(5), torch.nn.GELU(), torch.nn.Dropout(0.1))
    rm = rg.nn.Sequential(rg.nn.Conv2d(3, 4, 3, padding=1), rg.nn.BatchNorm2d(4), rg.nn.ReLU(),
                          rg.nn.MaxPool2d(2), rg.nn.Flatten(), rg.nn.Linear(16, 5),
                          rg.nn.LayerNorm(5), rg.nn.GELU(), rg.nn.Dropout(0.1))
    rm.load_state_dict({k: rg.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tm.bfloat16().eval()
    assert rm.bfloat16() is rm
    rm.eval()
    assert all(p.dtype == rg.bfloat16 for p in rm.parameters())
    assert rm[1].running_mean.dtype == rg.bfloat16 and rm[1].num_batches_tracked.dtype == rg.int64
    x = _rand(2, 3, 4, 4, seed=30)
    out = rm(rg.from_numpy(x.astype(BF)))
    ref = tm(torch.from_numpy(x).to(torch.bfloat16))
    _close(out, ref, "bfloat16 Sequential", rtol=3e-2)
    lin = rg.nn.Linear(3, 2, dtype=rg.bfloat16)
    assert lin.weight.dtype == rg.bfloat16 and lin.bias.dtype == rg.bfloat16
    assert lin.float().weight.dtype == rg.float32
    assert lin.to(rg.bfloat16).weight.dtype == rg.bfloat16


# --- reductions and shape ops through Tensor methods --------------------------------

_R = _rand(3, 4, seed=40)


def _method_cases():
    idx = np.array([2, 0])
    gidx = np.array([[0, 1, 1, 3], [2, 0, 0, 1], [3, 3, 2, 0]])
    mask = _rand(3, 4, seed=41) > 0
    return {
        "sum": (lambda x: x.sum(), (_R,)),
        "sum_dim": (lambda x: x.sum(1, keepdim=True), (_R,)),
        "mean": (lambda x: x.mean(0), (_R,)),
        "max": (lambda x: x.max(), (_R,)),
        "max_dim": (lambda x: x.max(1), (_R,)),
        "min_dim": (lambda x: x.min(0), (_R,)),
        "amax": (lambda x: x.amax(1), (_R,)),
        "prod": (lambda x: x.prod(1), (_R,)),
        "var": (lambda x: x.var(1), (_R,)),
        "std": (lambda x: x.std(), (_R,)),
        "norm": (lambda x: x.norm(), (_R,)),
        "norm_dim": (lambda x: x.norm(dim=1), (_R,)),
        "cumsum": (lambda x: x.cumsum(1), (_R,)),
        "cumprod": (lambda x: x.cumprod(0), (_R,)),
        "logsumexp": (lambda x: x.logsumexp(1), (_R,)),
        "softmax": (lambda x: x.softmax(1), (_R,)),
        "log_softmax": (lambda x: x.log_softmax(0), (_R,)),
        "argmax": (lambda x: x.argmax(1), (_R,)),
        "sort": (lambda x: x.sort(1), (_R,)),
        "topk": (lambda x: x.topk(2), (_R,)),
        "abs": (lambda x: x.abs(), (_R,)),
        "pow_scalar": (lambda x: x ** 2, (_R,)),
        "rpow": (lambda x: 2 ** x, (_R,)),
        "add_scalar": (lambda x: x + 1.5, (_R,)),
        "mul_int": (lambda x: x * 3, (_R,)),
        "div_scalar": (lambda x: x / 3, (_R,)),
        "rsub": (lambda x: 1 - x, (_R,)),
        "add_float32": (lambda x, y: x + y.float(), (_R, _R)),
        "mul_float64": (lambda x, y: x * y.double(), (_R, _R)),
        "add_int8": (lambda x, i: x + i, (_R, np.arange(4, dtype=np.int8))),
        "clamp": (lambda x: x.clamp(-0.5, 0.5), (_R,)),
        "reshape": (lambda x: x.reshape(2, 6), (_R,)),
        "view": (lambda x: x.view(4, 3), (_R,)),
        "transpose": (lambda x: x.transpose(0, 1), (_R,)),
        "T": (lambda x: x.T, (_R,)),
        "flatten": (lambda x: x.flatten(), (_R,)),
        "getitem": (lambda x: x[1:, ::2], (_R,)),
        "getitem_adv": (lambda x: x[[0, 2], 1], (_R,)),
        "getitem_mask": (lambda x, m: x[m], (_R, mask)),
        "index_select": (lambda x, i: x.index_select(1, i), (_R, idx)),
        "gather": (lambda x, i: x.gather(1, i), (_R, gidx)),
        "scatter_add": (lambda x, i, s: x.scatter_add(1, i, s), (_R, gidx, _rand(3, 4, seed=42))),
        "masked_fill": (lambda x, m: x.masked_fill(m, -1.5), (_R, mask)),
        "masked_fill_inf": (lambda x, m: x.masked_fill(m, float("-inf")).softmax(-1), (_R, ~mask | np.eye(3, 4,
                                                                                                          dtype=bool))),
        "where": (lambda c, x, y: rg.where(c, x, y) if isinstance(x, rg.Tensor) else torch.where(c, x, y),
                  (mask, _R, _rand(3, 4, seed=43))),
        "where_scalar": (lambda c, x: x.where(c, 0.0), (mask, _R)),
        "cat": (lambda x, y: (rg if isinstance(x, rg.Tensor) else torch).cat([x, y], 1), (_R, _R)),
        "stack": (lambda x, y: (rg if isinstance(x, rg.Tensor) else torch).stack([x, y]), (_R, _R)),
        "chunk": (lambda x: x.chunk(2, 1), (_R,)),
        "split": (lambda x: x.split([1, 2], 0), (_R,)),
        "unsqueeze": (lambda x: x.unsqueeze(0).expand(2, 3, 4), (_R,)),
        "repeat": (lambda x: x.repeat(2, 1), (_R,)),
        "flip": (lambda x: x.flip(0), (_R,)),
        "roll": (lambda x: x.roll(1, 1), (_R,)),
        "tril": (lambda x: x.tril(), (_R,)),
        "contiguous": (lambda x: x.t().contiguous(), (_R,)),
        "clone": (lambda x: x.clone(), (_R,)),
        "to_float": (lambda x: x.float(), (_R,)),
        "to_double": (lambda x: x.double(), (_R,)),
        "to_half": (lambda x: x.half(), (_R,)),
        "to_float_to_bf16": (lambda x: (x.float() * 2).bfloat16(), (_R,)),
        "to_int": (lambda x: x.to(rg.int64 if isinstance(x, rg.Tensor) else torch.int64), (_R,)),
        "to_bool": (lambda x: x.bool(), (_R,)),
        "type_as": (lambda x, y: y.float().type_as(x), (_R, _R)),
        "comparison": (lambda x, y: x > y, (_R, _rand(3, 4, seed=44))),
        "isnan": (lambda x: x.isnan(), (_R,)),
        "nan_to_num": (lambda x: (x / 0).nan_to_num(), (_R,)),
        "lerp": (lambda x, y: x.lerp(y, 0.3), (_R, _rand(3, 4, seed=45))),
        "addcmul": (lambda x, y: x.addcmul(y, y, value=0.5), (_R, _rand(3, 4, seed=45))),
        "addmm": (lambda b, x, y: (rg if isinstance(x, rg.Tensor) else torch).addmm(b, x, y),
                  (_rand(4, seed=46), _R, _rand(4, 4, seed=47))),
        "outer": (lambda x, y: x.outer(y), (_rand(3, seed=48), _rand(4, seed=49))),
        "dot": (lambda x, y: x.dot(y), (_rand(4, seed=48), _rand(4, seed=49))),
        "mv": (lambda x, y: x.mv(y), (_R, _rand(4, seed=49))),
        "trace": (lambda x: x.trace(), (_rand(4, 4, seed=50),)),
        "diff": (lambda x: x.diff(dim=1), (_R,)),
        "sign": (lambda x: x.sign(), (_R,)),
        "round": (lambda x: (x * 3).round(), (_R,)),
        "floor": (lambda x: x.floor(), (_R,)),
        "fmod": (lambda x: x.fmod(0.7), (_R,)),
        "remainder": (lambda x: x.remainder(0.7), (_R,)),
        "square": (lambda x: x.square(), (_R,)),
        "sqrt": (lambda x: x.abs().sqrt(), (_R,)),
        "erf": (lambda x: x.erf(), (_R,)),
        "erfinv": (lambda x: (x / 3).erfinv(), (_R,)),
        "sinh": (lambda x: x.sinh(), (_R,)),
        "atan2": (lambda x, y: x.atan2(y), (_R, _rand(3, 4, seed=51))),
        "hypot": (lambda x, y: x.hypot(y), (_R, _rand(3, 4, seed=51))),
        "logaddexp": (lambda x, y: x.logaddexp(y), (_R, _rand(3, 4, seed=51))),
        "sigmoid": (lambda x: x.sigmoid(), (_R,)),
        "std_mean": (lambda x: (rg if isinstance(x, rg.Tensor) else torch).std_mean(x, 1), (_R,)),
        "median": (lambda x: x.median(), (_R,)),
        "aminmax": (lambda x: x.aminmax(), (_R,)),
        "allclose": (lambda x: x.isclose(x + 0.001), (_R,)),
    }


METHODS = _method_cases()


@pytest.mark.parametrize("name", sorted(METHODS))
def test_tensor_method_matches_torch_in_bfloat16(name):
    fn, args = METHODS[name]
    check(fn, fn, *args, what=name)


# --- factories, conversions, leaves ---------------------------------------------------

@pytest.mark.parametrize("name,make", [
    ("zeros", lambda lib: lib.zeros(2, 3, dtype=lib.bfloat16)),
    ("ones", lambda lib: lib.ones((2, 3), dtype=lib.bfloat16)),
    ("full", lambda lib: lib.full((2, 3), 1.7, dtype=lib.bfloat16)),
    ("empty", lambda lib: lib.empty(2, 3, dtype=lib.bfloat16).zero_()),
    ("eye", lambda lib: lib.eye(3, dtype=lib.bfloat16)),
    ("arange", lambda lib: lib.arange(0, 2, 0.25, dtype=lib.bfloat16)),
    ("linspace", lambda lib: lib.linspace(-1, 1, 7, dtype=lib.bfloat16)),
    ("tensor", lambda lib: lib.tensor([[1.1, 2.2], [3.3, -4.4]], dtype=lib.bfloat16)),
    ("tensor_int", lambda lib: lib.tensor([1, 2, 300], dtype=lib.bfloat16)),
    ("as_tensor", lambda lib: lib.as_tensor([0.1, 0.2], dtype=lib.bfloat16)),
    ("zeros_like", lambda lib: lib.zeros_like(lib.ones(2, dtype=lib.bfloat16))),
    ("full_like", lambda lib: lib.full_like(lib.ones(2, dtype=lib.bfloat16), 3.3)),
    ("ones_like_dtype", lambda lib: lib.ones_like(lib.ones(2), dtype=lib.bfloat16)),
    ("new_zeros", lambda lib: lib.ones(2, dtype=lib.bfloat16).new_zeros(3)),
    ("new_tensor", lambda lib: lib.ones(2, dtype=lib.bfloat16).new_tensor([0.3, 0.7])),
    ("tril_indices_float", lambda lib: lib.ones(3, 3, dtype=lib.bfloat16).tril()),
])
def test_factories_make_bfloat16(name, make):
    _close(make(rg), make(torch), name)


@pytest.mark.parametrize("name", ["randn", "rand", "randn_like", "empty", "normal_", "uniform_"])
def test_random_factories_make_bfloat16(name):
    x = {"randn": lambda: rg.randn(3, 4, dtype=rg.bfloat16),
         "rand": lambda: rg.rand(3, 4, dtype=rg.bfloat16),
         "randn_like": lambda: rg.randn_like(rg.zeros(3, 4, dtype=rg.bfloat16)),
         "empty": lambda: rg.empty(3, 4, dtype=rg.bfloat16),
         "normal_": lambda: rg.zeros(3, 4, dtype=rg.bfloat16).normal_(),
         "uniform_": lambda: rg.zeros(3, 4, dtype=rg.bfloat16).uniform_(-1, 1)}[name]()
    assert x.dtype == rg.bfloat16 and tuple(x.shape) == (3, 4)
    if name != "empty":
        assert np.isfinite(_f64(x)).all() and _f64(x).std() > 0


def test_dtype_attributes_and_finfo():
    x = rg.zeros(2, dtype=rg.bfloat16)
    tx = torch.zeros(2, dtype=torch.bfloat16)
    assert x.is_floating_point() and not x.is_complex() and rg.is_floating_point(x)
    assert x.element_size() == tx.element_size() == 2
    fi, tfi = rg.finfo(rg.bfloat16), torch.finfo(torch.bfloat16)
    for attr in ("eps", "max", "min", "tiny", "bits"):
        assert float(getattr(fi, attr)) == float(getattr(tfi, attr)), attr
    # (NumPy's resolution is 10**-precision rounded to the dtype, as for float16)
    assert abs(float(fi.resolution) - tfi.resolution) <= 1e-4
    assert rg.promote_types(rg.bfloat16, rg.float32) == rg.float32
    assert rg.promote_types(rg.bfloat16, rg.int8) == rg.bfloat16
    assert rg.result_type(x, 1.5) == rg.bfloat16
    assert rg.can_cast(rg.bfloat16, rg.float32)


def test_mixed_dtypes_promote_as_numpy():
    """bfloat16 with float32 or float16 is float32, with int8 or a Python number
    bfloat16, in both libraries; with an int64 tensor NumPy's rule gives
    float64 where torch keeps bfloat16, as for float32 with int64 (retrograd's
    documented rule: mixed dtypes promote as NumPy's)."""
    x = rg.from_numpy(_R.astype(BF))
    assert (x + x.float()).dtype == rg.float32 and (x * x.half()).dtype == rg.float32
    assert (x + rg.ones(4, dtype=rg.int8)).dtype == rg.bfloat16 and (x * 2.5).dtype == rg.bfloat16
    assert (2 - x).dtype == rg.bfloat16 and (x > 0.5).dtype == rg.bool
    assert (x + rg.arange(4)).dtype == rg.float64 and rg.promote_types(rg.bfloat16, rg.int64) == rg.float64


def test_requires_grad_leaves_and_backward():
    x = rg.zeros(2, 3, dtype=rg.bfloat16, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    y = rg.tensor([1.5, -2.0], dtype=rg.bfloat16).requires_grad_()
    ((x.sum(1) * y) ** 2).sum().backward()
    assert x.grad.dtype == rg.bfloat16 and y.grad.dtype == rg.bfloat16
    # a float32 leaf reached through .to(bfloat16) gets its gradient in float32 (as torch)
    w = rg.tensor(_R, requires_grad=True)
    tw = torch.tensor(_R, requires_grad=True)
    (w.to(rg.bfloat16).exp() * 3).sum().backward()
    (tw.to(torch.bfloat16).exp() * 3).sum().backward()
    _close(w.grad, tw.grad, "gradient through .to(bfloat16)")
    # and a bfloat16 leaf used in float32 gets a bfloat16 gradient
    b = rg.from_numpy(_R.astype(BF)).requires_grad_()
    tb = torch.from_numpy(_R).to(torch.bfloat16).requires_grad_()
    (b.float().sin() * 2).sum().backward()
    (tb.float().sin() * 2).sum().backward()
    _close(b.grad, tb.grad, "gradient through .float()")
    # gradient accumulation across two backward calls stays bfloat16
    (b * 2).sum().backward()
    (tb * 2).sum().backward()
    _close(b.grad, tb.grad, "accumulated gradient")
    # rg.autograd.gradcheck refuses bfloat16 as torch's (too imprecise for finite differences)


def test_save_and_load_with_torch(tmp_path):
    """bfloat16 tensors (views too) go through rg.save / torch.load and back."""
    x = rg.from_numpy(_R.astype(BF))
    rg.save({"x": x, "xt": x.t()}, tmp_path / "a.pt")
    t = torch.load(tmp_path / "a.pt")
    _close(x, t["x"], "saved by retrograd, loaded by torch", rtol=0)
    _close(x.t(), t["xt"], "a view, loaded by torch", rtol=0)
    torch.save({"w": t["x"] * 3}, tmp_path / "b.pt")
    _close(rg.load(tmp_path / "b.pt")["w"], t["x"] * 3, "saved by torch, loaded by retrograd", rtol=0)


def test_ops_torch_refuses_for_bfloat16_are_refused_alike():
    a = _rand(3, 3, seed=60) + 3 * np.eye(3, dtype=np.float32)
    spd = a @ a.T
    for name in ("inv", "det", "cholesky", "eigh", "svd", "qr", "solve"):
        fn = getattr(rg.linalg, name)
        tfn = getattr(torch.linalg, name)
        args = (spd, spd) if name == "solve" else (spd,)
        check(fn, tfn, *args, grad=False, what=f"linalg.{name}")


# --- optimizers --------------------------------------------------------------------

@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.01}), ("Adam", {"lr": 0.01, "amsgrad": True}), ("AdamW", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01}), ("Adagrad", {"lr": 0.1}),
])
def test_optimizers_step_bfloat16_parameters(name, kwargs):
    init = [_rand(4, 3, seed=70), _rand(3, seed=71)]
    rps = [rg.from_numpy(a.astype(BF)).requires_grad_() for a in init]
    tps = [torch.from_numpy(a).to(torch.bfloat16).requires_grad_() for a in init]
    ro = getattr(rg.optim, name)(rps, **kwargs)
    to = getattr(torch.optim, name)(tps, **kwargs)
    x = _rand(5, 4, seed=72)
    for _ in range(3):
        for opt, ps, lib, arr in ((ro, rps, rg, rg.from_numpy(x.astype(BF))),
                                  (to, tps, torch, torch.from_numpy(x).to(torch.bfloat16))):
            opt.zero_grad()
            ((arr @ ps[0] + ps[1]).tanh() ** 2).sum().backward()
            opt.step()
    for rp, tp in zip(rps, tps):
        _close(rp, tp, f"{name} parameter", rtol=2e-2)
    for rs, ts in zip(ro.state.values(), to.state.values()):
        for key, tv in ts.items():
            if isinstance(tv, torch.Tensor) and tv.is_floating_point() and key != "step":
                _close(rs[key], tv, f"{name} state {key}", rtol=3e-2)


# --- autocast("cpu") end to end -------------------------------------------------------

def _copy_params(tm, rm):
    rm.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Dropout(0.0), nn.Linear(16, 16), nn.ReLU(),
                         nn.LayerNorm(16), nn.Linear(16, 4))


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.SiLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 4))


def _encoder(lib):
    nn = lib.nn
    return nn.Sequential(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True),
                         nn.Flatten(), nn.Linear(40, 4))


@pytest.mark.parametrize("net,x_shape", [(_mlp, (8, 6)), (_cnn, (3, 2, 6, 6)), (_encoder, (3, 5, 8))])
def test_training_under_autocast_matches_torch(net, x_shape):
    """Three Adam steps under autocast("cpu"): each layer's output dtype as
    torch's, the losses, the first step's gradients (from the same
    parameters), and float32 parameters throughout."""
    torch.manual_seed(0)
    tm = net(torch)
    rm = net(rg)
    _copy_params(tm, rm)
    x = _rand(*x_shape, seed=80)
    y = np.random.default_rng(81).integers(0, 4, x_shape[0])
    lr = 1e-2
    ropt = rg.optim.Adam(rm.parameters(), lr=lr)
    topt = torch.optim.Adam(tm.parameters(), lr=lr)
    rdt, tdt = [], []
    for m, out in ((rm, rdt), (tm, tdt)):
        for layer in m.modules():
            if layer is not m and not isinstance(layer, (rg.nn.Sequential, torch.nn.Sequential)):
                layer.register_forward_hook(
                    lambda mod, inp, o, out=out: out.append((type(mod).__name__, _dtype_name(o)))
                    if hasattr(o, "dtype") else None)
    for step in range(3):
        rdt.clear()
        tdt.clear()
        with rg.autocast("cpu"):
            rlogits = rm(rg.tensor(x))
            rloss = F.cross_entropy(rlogits, rg.tensor(y))
        with torch.autocast("cpu"):
            tlogits = tm(torch.tensor(x))
            tloss = TF.cross_entropy(tlogits, torch.tensor(y))
        assert rdt == tdt, f"step {step}: layer dtypes {rdt} vs torch {tdt}"
        assert _dtype_name(rlogits) == _dtype_name(tlogits) == "bfloat16"
        assert _dtype_name(rloss) == _dtype_name(tloss) == "float32"
        np.testing.assert_allclose(float(rloss), float(tloss), rtol=2e-2, err_msg=f"loss at step {step}")
        ropt.zero_grad()
        topt.zero_grad()
        rloss.backward()
        tloss.backward()
        if step == 0:
            # relative to each gradient's size, or to 2% of the largest one:
            # a gradient that is exactly 0 in exact arithmetic (a bias before
            # a batch norm, the attention's key bias) is rounding noise in both
            top = max(float(tp.grad.abs().max()) for tp in tm.parameters())
            for (name, rp), tp in zip(rm.named_parameters(), tm.parameters()):
                assert rp.dtype == rg.float32 and rp.grad.dtype == rg.float32, name
                scale = max(float(tp.grad.abs().max()), 2e-2 * top)
                np.testing.assert_allclose(_f64(rp.grad), _f64(tp.grad), rtol=5e-2, atol=5e-2 * scale,
                                           err_msg=f"gradient of {name}")
        ropt.step()
        topt.step()
    # Adam moves each entry by about lr a step, whatever its gradient's size:
    # entries whose gradient is rounding noise may move either way, in either
    # library (up to 3 * lr each); the others move alike
    for (name, rp), tp in zip(rm.named_parameters(), tm.parameters()):
        assert rp.dtype == rg.float32 and isinstance(rp, rg.nn.Parameter), name
        np.testing.assert_allclose(_f64(rp), _f64(tp), rtol=0, atol=6 * lr, err_msg=f"{name} after 3 steps")
