"""Finite-difference gradient checks for the op samples (float64 central
differences against the analytical VJP; second order by differentiating a
random projection of the first gradient). retrograd's own gradcheck comes
later; this one is deliberately small and independent of it.
"""
from __future__ import annotations

import numpy as np

import retrograd as rg

from op_samples import make_tensors

EPS = 1e-6


def _as_array(x):
    return np.asarray(x._array if isinstance(x, rg.Tensor) else x)


def forward(op, sample, args=None):
    """The op's result as an ndarray, without recording a graph."""
    sample = sample if args is None else sample.with_args(args)
    targs, _ = make_tensors(sample, requires_grad=False)
    with rg.no_grad():
        return np.array(_as_array(op.op(*targs, **sample.kwargs)), dtype=np.float64)


def vjp(op, sample, v, *, transform=None, v_transform=None):
    """(output, grads) with grads[i] the gradient of <v, op(...)> w.r.t. the
    i-th differentiable argument (zeros where unused)."""
    targs, leaves = make_tensors(sample, transform=transform)
    out = op.op(*targs, **sample.kwargs)
    vv = v_transform(v) if v_transform is not None else v.copy()
    grads = rg.autograd.grad(out, leaves, grad_outputs=rg.from_numpy(vv), allow_unused=True)
    res = []
    for leaf, g in zip(leaves, grads):
        if g is None:
            res.append(np.zeros(leaf.shape, dtype=leaf.dtype))
        else:
            assert isinstance(g, rg.Tensor), type(g)
            assert g.grad_fn is None, "gradient without create_graph must not record a graph"
            res.append(g)
    return out, res


def upstream(op, sample, rng=None):
    """A random upstream gradient with the output's shape and dtype."""
    rng = rng or np.random.default_rng(1234)
    out = forward(op, sample)
    dtype = next((a.dtype for a in sample.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"),
                 np.dtype(np.float64))
    if "dtype" in sample.kwargs and sample.kwargs["dtype"] is not None:
        dtype = np.dtype(sample.kwargs["dtype"])
    return np.asarray(rng.standard_normal(out.shape), dtype=dtype)


def numerical_vjp(op, sample, v, eps=EPS):
    """Central differences of <v, op(x)> w.r.t. each differentiable argument."""
    pos = sample.diff_positions()
    grads = []
    for p in pos:
        base = [a.copy() if isinstance(a, np.ndarray) else a for a in sample.args]
        x = base[p]
        g = np.zeros(x.shape, dtype=np.float64)
        flat = x.reshape(-1)
        for k in range(flat.size):
            old = flat[k]
            flat[k] = old + eps
            fp = np.sum(v * forward(op, sample, base))
            flat[k] = old - eps
            fm = np.sum(v * forward(op, sample, base))
            flat[k] = old
            g.reshape(-1)[k] = (fp - fm) / (2 * eps)
        grads.append(g)
    return grads


def check_grad(op, sample, *, rtol=None, atol=None):
    """Analytical VJP (random upstream) == finite differences, float64."""
    v = upstream(op, sample)
    out, ana = vjp(op, sample, v)
    num = numerical_vjp(op, sample, v, eps=op.fd_eps)
    pos = sample.diff_positions()
    for p, a, n in zip(pos, ana, num):
        x = sample.args[p]
        a_arr = _as_array(a)
        assert a_arr.shape == x.shape, f"arg {p}: gradient shape {a_arr.shape} != input shape {x.shape}"
        assert a_arr.dtype == x.dtype, f"arg {p}: gradient dtype {a_arr.dtype} != input dtype {x.dtype}"
        np.testing.assert_allclose(a_arr, n, rtol=rtol or op.rtol * 100, atol=atol or op.atol * 10,
                                   err_msg=f"{op.name} {sample}: gradient of arg {p} vs finite differences")
    return out


def _first_grad_projection(op, sample, v, w, args=None):
    """s(x, v) = sum_i <w_i, d<v, op(x)>/dx_i>, computed WITHOUT create_graph
    (the array-mode formulas): the function whose derivatives gradgrad checks."""
    s = sample if args is None else sample.with_args(args)
    _, grads = vjp(op, s, v)
    return sum(float(np.sum(wi * _as_array(gi))) for wi, gi in zip(w, grads))


def check_gradgrad(op, sample, *, rtol=1e-4, atol=1e-6, eps=None):
    """Second order: the first gradient with create_graph=True (tensor-mode
    formulas), projected on random w, differentiated w.r.t. the inputs and the
    upstream gradient v, equals finite differences of the array-mode first
    gradient. Also checks that tensor mode and array mode agree on the first
    gradient itself."""
    rng = np.random.default_rng(99)
    eps = eps or op.fd_eps
    atol = max(atol, op.atol)
    v = upstream(op, sample, rng)
    pos = sample.diff_positions()
    if not pos:
        return
    targs, leaves = make_tensors(sample)
    out = op.op(*targs, **sample.kwargs)
    vt = rg.from_numpy(v.copy()).requires_grad_(True)
    grads = rg.autograd.grad(out, leaves, grad_outputs=vt, create_graph=True, allow_unused=True)
    w = [rng.standard_normal(leaf.shape) for leaf in leaves]
    # tensor mode == array mode on the first gradient
    _, arr_grads = vjp(op, sample, v)
    for i, (g, ga) in enumerate(zip(grads, arr_grads)):
        if g is not None:
            assert tuple(g.shape) == tuple(leaves[i].shape), \
                f"create_graph gradient of arg {pos[i]} has shape {g.shape}, input {leaves[i].shape}"
            assert g.dtype == leaves[i].dtype, \
                f"create_graph gradient of arg {pos[i]} has dtype {g.dtype}, input {leaves[i].dtype}"
            np.testing.assert_allclose(_as_array(g), _as_array(ga), rtol=1e-12, atol=1e-12,
                                       err_msg=f"{op.name} {sample}: create_graph gradient of arg "
                                               f"{pos[i]} differs from the plain one")
    terms = [(g * rg.from_numpy(wi)).sum() for g, wi in zip(grads, w)
             if g is not None and g.requires_grad]
    if not terms:
        return
    s = terms[0]
    for t in terms[1:]:
        s = s + t
    targets = leaves + [vt]
    second = rg.autograd.grad(s, targets, allow_unused=True)
    # numerical: w.r.t. each differentiable input ...
    for k, p in enumerate(pos):
        base = [a.copy() if isinstance(a, np.ndarray) else a for a in sample.args]
        x = base[p]
        flat = x.reshape(-1)
        num = np.zeros(x.size)
        for j in range(flat.size):
            old = flat[j]
            flat[j] = old + eps
            sp = _first_grad_projection(op, sample, v, w, base)
            flat[j] = old - eps
            sm = _first_grad_projection(op, sample, v, w, base)
            flat[j] = old
            num[j] = (sp - sm) / (2 * eps)
        ana = np.zeros(x.shape) if second[k] is None else _as_array(second[k])
        np.testing.assert_allclose(ana.reshape(-1), num, rtol=rtol, atol=atol,
                                   err_msg=f"{op.name} {sample}: second derivative w.r.t. arg {p}")
    # ... and w.r.t. the upstream gradient (the first gradient is linear in it)
    vflat = v.reshape(-1)
    num = np.zeros(v.size)
    for j in range(v.size):
        old = vflat[j]
        vflat[j] = old + eps
        sp = _first_grad_projection(op, sample, v, w)
        vflat[j] = old - eps
        sm = _first_grad_projection(op, sample, v, w)
        vflat[j] = old
        num[j] = (sp - sm) / (2 * eps)
    ana = np.zeros(v.shape) if second[-1] is None else _as_array(second[-1])
    np.testing.assert_allclose(ana.reshape(-1), num, rtol=rtol, atol=atol,
                               err_msg=f"{op.name} {sample}: second derivative w.r.t. grad_output")
