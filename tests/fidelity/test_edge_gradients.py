"""Gradients (and values) at edge points are torch's, NaN positions included:
atan2 at the origin, abs/sign/norm/relu at NaN, amax/amin with NaN, prod and
cumprod with zeros and NaN, var/std without degrees of freedom, losses whose
every target is ignored, softmax with +inf."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from _arrays import values  # noqa: E402

torch = pytest.importorskip("torch")
TF = torch.nn.functional

nan, inf = float("nan"), float("inf")


def _run(lib, fn, arrays):
    """(value, grads) of fn(lib, functional, *tensors), backward of ones."""
    mod, fmod = (torch, TF) if lib == "torch" else (rg, F)
    ts = []
    for a in arrays:
        if a.dtype.kind == "f":
            ts.append(torch.tensor(a, requires_grad=True) if lib == "torch"
                      else rg.tensor(a, requires_grad=True))
        else:
            ts.append(torch.tensor(a) if lib == "torch" else rg.tensor(a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)        # torch's degrees-of-freedom warning
        out = fn(mod, fmod, *ts)
    leaves = [t for t in ts if t.requires_grad]
    ones = torch.ones_like(out) if lib == "torch" else rg.ones_like(out)
    grads = (torch.autograd.grad(out, leaves, ones) if lib == "torch"
             else rg.autograd.grad(out, leaves, ones))
    value = out.detach().numpy() if lib == "torch" else values(out)
    return value, [g.numpy() if lib == "torch" else values(g) for g in grads]


def _same(got, ref):
    got, ref = values(got, dtype=np.float64), values(ref, dtype=np.float64)
    assert got.shape == ref.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15, equal_nan=True)


def _check(fn, *arrays):
    rv, rgrads = _run("rg", fn, arrays)
    tv, tgrads = _run("torch", fn, arrays)
    _same(rv, tv)
    assert len(rgrads) == len(tgrads)
    for g, t in zip(rgrads, tgrads):
        _same(g, t)


CASES = {
    "atan2_origin": (lambda m, f, a, b: m.atan2(a, b), [0.0, 0.0, 1.0, -0.0], [0.0, 1.0, 0.0, -0.0]),
    "abs_nan": (lambda m, f, a: m.abs(a), [nan, 0.0, -1.0, 2.0]),
    "sign_nan": (lambda m, f, a: m.sign(a) * a, [nan, 0.0, -1.0, 3.0]),
    "relu_nan": (lambda m, f, a: m.relu(a), [nan, 0.0, -1.0, 2.0]),
    "F_relu_nan": (lambda m, f, a: f.relu(a), [nan, 0.0, -0.0, 2.0]),
    "norm2_nan": (lambda m, f, a: m.norm(a), [nan, 1.0, 2.0]),
    "norm2_zero": (lambda m, f, a: m.norm(a), [0.0, 0.0]),
    "norm1_nan": (lambda m, f, a: m.norm(a, p=1), [nan, 1.0, 0.0]),
    "norm3_nan": (lambda m, f, a: m.norm(a, p=3), [nan, 1.0, 0.0]),
    "norminf_nan": (lambda m, f, a: m.norm(a, p=inf), [nan, 1.0, 2.0]),
    "amax_nan": (lambda m, f, a: m.amax(a), [1.0, nan, 3.0, nan]),
    "amin_nan": (lambda m, f, a: m.amin(a), [1.0, nan, 3.0]),
    "amax_nan_dim": (lambda m, f, a: m.amax(a, dim=1), [[1.0, nan, 3.0], [2.0, 5.0, 5.0]]),
    "amin_nan_dim0": (lambda m, f, a: m.amin(a, dim=0), [[1.0, nan], [0.5, 5.0]]),
    "amax_ties": (lambda m, f, a: m.amax(a), [3.0, 1.0, 3.0]),
    "max_nan": (lambda m, f, a: m.max(a), [1.0, nan, 3.0]),
    "max_dim_nan": (lambda m, f, a: m.max(a, 0)[0], [1.0, nan, 3.0, nan]),
    "prod_one_zero": (lambda m, f, a: m.prod(a), [2.0, 0.0, 3.0]),
    "prod_two_zeros": (lambda m, f, a: m.prod(a), [2.0, 0.0, 0.0]),
    "prod_nan": (lambda m, f, a: m.prod(a), [2.0, nan, 3.0]),
    "prod_nan_zero": (lambda m, f, a: m.prod(a), [2.0, nan, 0.0]),
    "prod_dim_zeros": (lambda m, f, a: m.prod(a, 1),
                       [[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0], [nan, 0.0, 1.0]]),
    "cumprod_one_zero": (lambda m, f, a: m.cumprod(a, 0), [2.0, 0.0, 3.0, 4.0]),
    "cumprod_two_zeros": (lambda m, f, a: m.cumprod(a, 0), [2.0, 0.0, 3.0, 0.0, 5.0]),
    "cumprod_first_zero": (lambda m, f, a: m.cumprod(a, 0), [0.0, 2.0, 3.0]),
    "cumprod_nan": (lambda m, f, a: m.cumprod(a, 0), [2.0, nan, 3.0]),
    "cumprod_zero_then_nan": (lambda m, f, a: m.cumprod(a, 0), [2.0, 0.0, nan, 3.0]),
    "cumprod_nan_then_zero": (lambda m, f, a: m.cumprod(a, 0), [2.0, nan, 0.0, 3.0]),
    "cumprod_zeros_nan_after_second": (lambda m, f, a: m.cumprod(a, 0), [1.5, 0.0, 2.0, 0.0, nan]),
    "cumprod_inf_zero": (lambda m, f, a: m.cumprod(a, 0), [2.0, 0.0, inf, 3.0]),
    "cumprod_dim1_zeros": (lambda m, f, a: m.cumprod(a, 1),
                           [[2.0, 0.0, 3.0, nan], [1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 2.0, 1.0]]),
    "var_correction_eq_n": (lambda m, f, a: m.var(a, correction=3), [1.0, 2.0, 4.0]),
    "var_correction_gt_n": (lambda m, f, a: m.var(a, correction=5), [1.0, 2.0, 4.0]),
    "var_constant_no_dof": (lambda m, f, a: m.var(a, correction=3), [2.0, 2.0, 2.0]),
    "var_single": (lambda m, f, a: m.var(a), [1.0]),
    "std_correction_eq_n": (lambda m, f, a: m.std(a, correction=3), [1.0, 2.0, 4.0]),
    "std_correction_gt_n": (lambda m, f, a: m.std(a, correction=5), [1.0, 2.0, 4.0]),
    "std_single": (lambda m, f, a: m.std(a), [1.0]),
    "var_dim_no_dof": (lambda m, f, a: m.var(a, dim=1, correction=3), [[1.0, 2.0, 4.0], [1.0, 1.0, 1.0]]),
    "var_dim_negative_dof": (lambda m, f, a: m.var(a, dim=(0, 1), correction=7), [[1.0, 2.0, 4.0], [1.0, 1.0, 1.0]]),
    "std_dim_no_dof": (lambda m, f, a: m.std(a, dim=1, correction=3), [[1.0, 2.0, 4.0], [1.0, 1.0, 1.0]]),
    "softmax_pos_inf": (lambda m, f, a: m.softmax(a, 0), [inf, 1.0, 2.0]),
    "softmax_two_pos_inf": (lambda m, f, a: m.softmax(a, 0), [inf, inf, 2.0]),
    "softmax_neg_inf": (lambda m, f, a: m.softmax(a, 0), [-inf, 1.0, 2.0]),
    "softmax_all_neg_inf": (lambda m, f, a: m.softmax(a, 0), [-inf, -inf]),
    "softmax_rows_inf": (lambda m, f, a: m.softmax(a, 1), [[inf, 1.0], [0.5, 1.0]]),
    "log_softmax_pos_inf": (lambda m, f, a: m.log_softmax(a, 0), [inf, 1.0, 2.0]),
    "log_softmax_neg_inf": (lambda m, f, a: m.log_softmax(a, 0), [-inf, 1.0, 2.0]),
    "F_softmax_pos_inf": (lambda m, f, a: f.softmax(a, dim=1), [[inf, 1.0, 2.0], [1.0, 2.0, 3.0]]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_edge_gradient_matches_torch(case):
    fn, *arrays = CASES[case]
    _check(fn, *[np.array(a, dtype=np.float64) for a in arrays])


LOGITS = np.array([[1.0, 2.0, 0.5], [0.3, 0.1, 0.2], [2.0, 1.0, 0.1]])
WEIGHT = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target", [[-100, -100, -100], [1, -100, 2], [5, 5, 5]],
                         ids=["all_ignored", "some_ignored", "custom_index_all_ignored"])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss", "cross_entropy_weight",
                                  "cross_entropy_smoothing", "nll_loss_weight"])
def test_losses_with_ignored_targets_match_torch(loss, target, reduction):
    ignore = 5 if target[0] == 5 else -100
    t = np.array(target)
    if loss == "cross_entropy":
        def fn(m, f, x, t):
            return f.cross_entropy(x, t, reduction=reduction, ignore_index=ignore)
    elif loss == "nll_loss":
        def fn(m, f, x, t):
            return f.nll_loss(f.log_softmax(x, 1), t, reduction=reduction, ignore_index=ignore)
    elif loss == "nll_loss_weight":
        def fn(m, f, x, t):
            w = torch.tensor(WEIGHT) if m is torch else rg.tensor(WEIGHT)
            return f.nll_loss(x, t, weight=w, reduction=reduction, ignore_index=ignore)
    elif loss == "cross_entropy_weight":
        def fn(m, f, x, t):
            w = torch.tensor(WEIGHT) if m is torch else rg.tensor(WEIGHT)
            return f.cross_entropy(x, t, weight=w, reduction=reduction, ignore_index=ignore)
    else:
        def fn(m, f, x, t):
            return f.cross_entropy(x, t, reduction=reduction, ignore_index=ignore, label_smoothing=0.1)
    _check(fn, LOGITS, t)


def test_var_without_degrees_of_freedom_warns_as_torch():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        torch.var(torch.tensor([1.0, 2.0]), correction=2)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        rg.var(rg.tensor([1.0, 2.0]), correction=2)
    with pytest.warns(UserWarning, match=r"std\(\): degrees of freedom"):
        rg.std(rg.tensor([1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rg.var(rg.tensor([1.0, 2.0]))                       # one degree of freedom: silent


def test_cumprod_double_backward_with_zero():
    # create_graph keeps the O(n^2) differentiable formula; its first-order
    # values are the O(n) ones
    x0 = np.array([2.0, 0.0, 3.0, 4.0])
    x = rg.tensor(x0, requires_grad=True)
    (g,) = rg.autograd.grad(rg.cumprod(x, 0).sum(), [x], create_graph=True)
    (gg,) = rg.autograd.grad(g.sum(), [x])
    xt = torch.tensor(x0, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.cumprod(xt, 0).sum(), [xt], create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), [xt])
    _same(values(g.detach()), tg.detach().numpy())
    _same(values(gg), tgg.numpy())
