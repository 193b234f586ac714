"""Shared by the optim tests that compare against torch: run one optimizer in
retrograd and in torch on the same parameters and gradients, step by step."""
from __future__ import annotations

import numpy as np

import retrograd as rg

# Parameters of several ranks; the last two test the skipping of parameters
# without a gradient: one gets a gradient every other step, one never.
SHAPES = [(5, 3), (3,), (), (4,), (2,)]
NEVER = 4
EVERY_OTHER = 3


def assert_close(actual, expected, rtol, scale, what):
    """``actual`` equals ``expected`` to ``rtol`` relative to ``scale`` (the size of the quantity)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    err = float(np.max(np.abs(actual - expected), initial=0.0))
    assert err <= rtol * scale, f"{what}: max abs error {err:.3e} > {rtol:.0e} * {scale:.3e}"


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def compare_state(ro, to, rps, tps, rtol, what):
    """Parameters, and every state entry of every parameter, equal torch's; the state
    dicts hold the same keys. Tolerances are relative to the largest value of each quantity."""
    # Parameters: relative to the largest parameter entry.
    scale = max(max(float(np.max(np.abs(_np(t)), initial=0.0)) for t in tps), 1e-300)
    for i, (rp, tp) in enumerate(zip(rps, tps)):
        assert_close(_np(rp), _np(tp), rtol, scale, f"{what}: param {i}")
    rsd, tsd = ro.state_dict(), to.state_dict()
    assert sorted(rsd["state"]) == sorted(tsd["state"]), f"{what}: parameters with state differ"
    keys = {k for s in tsd["state"].values() for k in s}
    for key in keys:
        scale = max(max(float(np.max(np.abs(_np(s[key])), initial=0.0)) for s in tsd["state"].values()), 1e-300)
        for idx, t_state in tsd["state"].items():
            r_state = rsd["state"][idx]
            assert sorted(r_state) == sorted(t_state), f"{what}: state keys of param {idx}"
            if key == "step":
                assert float(r_state[key]) == float(t_state[key]), f"{what}: step of param {idx}"
                assert r_state[key].shape == () and isinstance(r_state[key], rg.Tensor)
            else:
                assert isinstance(r_state[key], rg.Tensor), f"{what}: {key} is not a tensor"
                assert_close(_np(r_state[key]), _np(t_state[key]), rtol, scale, f"{what}: {key} of param {idx}")


def make_params(torch, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    rps = [rg.tensor(a.copy(), requires_grad=True) for a in init]
    tps = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    return rng, rps, tps


def set_grads(torch, rng, k, rps, tps, dtype):
    """The gradient of step k: a fixed random draw plus a term in the parameter itself
    (so that the trajectories would drift apart if an update differed)."""
    for i, (rp, tp) in enumerate(zip(rps, tps)):
        noise = rng.standard_normal(SHAPES[i]).astype(dtype)
        if i == NEVER or (i == EVERY_OTHER and k % 2):
            rp.grad = None
            tp.grad = None
            continue
        rp.grad = rg.tensor((noise + dtype(0.5) * _np(rp)).astype(dtype))
        tp.grad = torch.tensor((noise + dtype(0.5) * _np(tp)).astype(dtype))


def run_against_torch(torch, rg_cls, torch_cls, kwargs, *, steps=100, dtype=np.float64, rtol=1e-12, groups=None,
                      torch_kwargs=None):
    """Step both optimizers ``steps`` times, comparing parameters and state after every step."""
    rng, rps, tps = make_params(torch, dtype)
    if groups is None:
        ro = rg_cls(rps, **kwargs)
        to = torch_cls(tps, **kwargs, **(torch_kwargs or {}))
    else:
        ro = rg_cls([dict(g, params=[rps[i] for i in g["params"]]) for g in groups], **kwargs)
        to = torch_cls([dict(g, params=[tps[i] for i in g["params"]]) for g in groups], **kwargs,
                       **(torch_kwargs or {}))
    for k in range(steps):
        set_grads(torch, rng, k, rps, tps, dtype)
        ro.step()
        to.step()
        compare_state(ro, to, rps, tps, rtol, f"{rg_cls.__name__}{kwargs} step {k}")
    return ro, to, rps, tps
