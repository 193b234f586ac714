"""rg.amp (autocast, GradScaler) and rg.cuda.amp against torch 2.13's CPU
GradScaler: the same scale, skipped steps and parameters, step by step."""
import warnings

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.float32_default


def _run(L, grads_seq, **kw):
    w = L.nn.Parameter(L.tensor([1.0, -2.0]))
    opt = L.optim.SGD([w], lr=0.1)
    scaler = L.amp.GradScaler("cpu", **kw)
    scales, params = [], []
    for g in grads_seq:
        opt.zero_grad()
        loss = (w * L.tensor(g)).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        params.append(np.asarray(w.detach()).copy())
    return scales, params, scaler.state_dict()


def test_scaler_matches_torch_with_inf_steps_and_growth():
    seq = [[1.0, 2.0], [float("inf"), 1.0], [0.5, 0.5], [1.0, 1.0], [float("nan"), 0.0], [2.0, 1.0]]
    ours = _run(rg, seq, init_scale=256.0, growth_interval=2)
    theirs = _run(torch, seq, init_scale=256.0, growth_interval=2)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert {k: float(v) for k, v in ours[2].items()} == {k: float(v) for k, v in theirs[2].items()}


def test_unscale_then_clip_as_torch():
    out = {}
    for L in (rg, torch):
        w = L.nn.Parameter(L.tensor([3.0, 4.0]))
        opt = L.optim.SGD([w], lr=1.0)
        scaler = L.amp.GradScaler("cpu", init_scale=64.0)
        scaler.scale((w * w).sum()).backward()
        scaler.unscale_(opt)
        L.nn.utils.clip_grad_norm_([w], 1.0)
        scaler.step(opt)
        scaler.update()
        out[L.__name__] = np.asarray(w.detach())
        # twice before update(): refused, as torch
        scaler.scale((w * w).sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called"):
            scaler.unscale_(opt)
    np.testing.assert_allclose(out["retrograd"], out["torch"], rtol=1e-6)


def test_disabled_scaler_passes_through():
    w = rg.nn.Parameter(rg.tensor([1.0]))
    opt = rg.optim.SGD([w], lr=0.5)
    s = rg.amp.GradScaler("cpu", enabled=False)
    loss = (w * 2).sum()
    assert s.scale(loss) is loss and s.get_scale() == 1.0 and s.state_dict() == {}
    loss.backward()
    s.step(opt)
    s.update()
    np.testing.assert_allclose(w.detach().numpy(), [0.0])


def test_cuda_scaler_without_cuda_disables_itself_with_a_warning():
    if rg.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        s = rg.cuda.amp.GradScaler()
    assert not s.is_enabled()
    with pytest.warns(UserWarning, match="CUDA is not available"):
        assert not rg.amp.GradScaler().is_enabled()


def test_closure_is_refused_while_enabled_as_torch():
    for L in (rg, torch):
        w = L.nn.Parameter(L.tensor([1.0]))
        opt = L.optim.SGD([w], lr=0.1)
        with pytest.raises(RuntimeError, match="Closure"):
            L.amp.GradScaler("cpu").step(opt, closure=lambda: None)


def test_autocast_disabled_regions():
    # (the casting itself: test_autocast.py)
    with rg.autocast("cpu", enabled=False):
        y = rg.ones(2) @ rg.ones(2)
    assert y.dtype == np.float32
    with pytest.warns(UserWarning, match="not supported"):
        with rg.amp.autocast("cpu", dtype=rg.float32):
            assert not rg.is_autocast_enabled("cpu")
    if not rg.cuda.is_available():
        # as torch without CUDA: a warning, and the region is off
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with rg.cuda.amp.autocast():
                assert not rg.is_autocast_enabled("cuda")
    with pytest.raises(RuntimeError):
        rg.amp.autocast("tpu")

    @rg.amp.autocast("cpu", enabled=False)
    def f(x):
        return x * 2
    assert f(rg.ones(1)).item() == 2.0


def test_names_as_torch():
    for name in ("autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"):
        assert hasattr(torch.amp, name) and hasattr(rg.amp, name)
    for name in ("autocast", "GradScaler"):
        assert hasattr(torch.cuda.amp, name) and hasattr(rg.cuda.amp, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert sorted(rg.amp.GradScaler("cpu").state_dict()) == sorted(torch.amp.GradScaler("cpu").state_dict())
