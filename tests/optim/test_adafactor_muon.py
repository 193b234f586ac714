"""Adafactor and Muon against torch: float64 trajectories over their options
(parameters and every state entry to 1e-10 after every step), float32,
a small network trained through backward, state dicts, and the argument
checks with torch's messages.

Muon's Newton-Schulz iteration runs in bfloat16 in torch; retrograd rounds
each of its float32 operations to bfloat16, which reproduces torch's numbers
bit for bit for the small matrices used here (the float32 sums inside the
products round as torch's), so its float64 trajectories are compared to 1e-10
too. For larger matrices torch's oneDNN kernels sum in their own order and a
few entries round the other way: those are compared at bfloat16's precision."""
import itertools
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import retrograd as rg  # noqa: E402
from _optim_oracle import assert_close  # noqa: E402

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RTOL = 1e-10

ADAFACTOR_SHAPES = [(5, 3), (3,), (), (2, 3, 4), (4, 1), (2,)]
MUON_SHAPES = [(5, 3), (3, 5), (4, 4), (1, 6), (2, 3)]
# the parameter at index -1 gets a gradient every other step only


@pytest.fixture(autouse=True)
def _torch_float64_default():
    # `step` is a 0-d tensor of the default dtype: float64 on both sides.
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _np(t):
    return t.detach().numpy()


def _params(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return rng, [rg.tensor(a.copy(), requires_grad=True) for a in init], [torch.tensor(a.copy(), requires_grad=True)
                                                                          for a in init]


def _set_grads(rng, k, shapes, rps, tps, dtype):
    # a random draw plus a term in the parameter (trajectories that differed would drift apart)
    for i, (rp, tp) in enumerate(zip(rps, tps)):
        noise = rng.standard_normal(shapes[i]).astype(dtype)
        if i == len(shapes) - 1 and k % 2:
            rp.grad = None
            tp.grad = None
            continue
        rp.grad = rg.tensor((noise + dtype(0.5) * _np(rp)).astype(dtype))
        tp.grad = torch.tensor((noise + dtype(0.5) * _np(tp)).astype(dtype))


def _run(rg_cls, torch_cls, shapes, kwargs, *, steps, dtype=np.float64, rtol=RTOL, torch_kwargs=None):
    rng, rps, tps = _params(shapes, dtype)
    ro = rg_cls(rps, **kwargs)
    to = torch_cls(tps, **kwargs, **(torch_kwargs or {}))
    for k in range(steps):
        _set_grads(rng, k, shapes, rps, tps, dtype)
        ro.step()
        to.step()
        compare_state(ro, to, rps, tps, rtol, f"{rg_cls.__name__}{kwargs} step {k}")
    return ro, to, rps, tps


def compare_state(ro, to, rps, tps, rtol, what):
    """Parameters and every state entry equal torch's, to ``rtol`` relative to each quantity's largest value
    (the state entries differ between parameters: factored for matrices, not for vectors)."""
    scale = max(max(float(np.max(np.abs(_np(t)), initial=0.0)) for t in tps), 1e-300)
    for i, (rp, tp) in enumerate(zip(rps, tps)):
        assert_close(_np(rp), _np(tp), rtol, scale, f"{what}: param {i}")
    rsd, tsd = ro.state_dict(), to.state_dict()
    assert sorted(rsd["state"]) == sorted(tsd["state"]), f"{what}: parameters with state differ"
    for idx, t_state in tsd["state"].items():
        r_state = rsd["state"][idx]
        assert list(r_state) == list(t_state), f"{what}: state keys of param {idx}"
        for key, t_value in t_state.items():
            assert isinstance(r_state[key], rg.Tensor), f"{what}: {key} is not a tensor"
            if key == "step":
                assert float(r_state[key]) == float(t_value) and r_state[key].shape == ()
                continue
            scale = max(float(np.max(np.abs(_np(t_value)), initial=0.0)), 1e-300)
            assert_close(_np(r_state[key]), _np(t_value), rtol, scale, f"{what}: {key} of param {idx}")


def _grid(**options):
    names = list(options)
    return [dict(zip(names, values)) for values in itertools.product(*options.values())]


ADAFACTOR_CASES = (_grid(lr=[1e-2, 0.3], weight_decay=[0.0, 0.1], maximize=[False, True])
                   + [dict(beta2_decay=-0.5), dict(beta2_decay=0.0), dict(eps=(1e-3, 1e-2)), dict(eps=(None, 0.5)),
                      dict(d=1.5, lr=0.2), dict(lr=rg.tensor(0.05))])
MUON_CASES = (_grid(lr=[0.02], momentum=[0.95, 0.5], nesterov=[True, False], weight_decay=[0.0, 0.1])
              + [dict(adjust_lr_fn="original"), dict(adjust_lr_fn="match_rms_adamw", lr=0.01),
                 dict(ns_steps=2), dict(ns_steps=0), dict(ns_coefficients=(2.0, -1.5, 0.5)), dict(eps=1e-3),
                 dict(lr=rg.tensor(0.05))])


def _torch_kwargs(kwargs):
    # a tensor lr goes to torch as a torch tensor
    return {k: (torch.tensor(v.item()) if isinstance(v, rg.Tensor) else v) for k, v in kwargs.items()}


def _ids(cases):
    return ["-".join(f"{k}={v}" for k, v in kw.items()) or "defaults" for kw in cases]


@pytest.mark.parametrize("kwargs", ADAFACTOR_CASES, ids=_ids(ADAFACTOR_CASES))
def test_adafactor_trajectory_matches_torch(kwargs):
    rng, rps, tps = _params(ADAFACTOR_SHAPES, np.float64)
    ro = rg.optim.Adafactor(rps, **kwargs)
    to = torch.optim.Adafactor(tps, **_torch_kwargs(kwargs))
    for k in range(25):
        _set_grads(rng, k, ADAFACTOR_SHAPES, rps, tps, np.float64)
        ro.step()
        to.step()
        compare_state(ro, to, rps, tps, RTOL, f"Adafactor{kwargs} step {k}")
    assert list(ro.state[rps[0]]) == list(to.state[tps[0]]) == ["step", "row_var", "col_var"]
    assert list(ro.state[rps[1]]) == list(to.state[tps[1]]) == ["step", "variance"]
    assert ro.state[rps[3]]["row_var"].shape == (2, 3, 1) and ro.state[rps[3]]["col_var"].shape == (2, 1, 4)


def test_adafactor_matches_torch_foreach():
    # torch's multi-tensor implementation does the same arithmetic, grouped
    _run(rg.optim.Adafactor, torch.optim.Adafactor, ADAFACTOR_SHAPES, dict(lr=0.1, weight_decay=0.05), steps=15,
         torch_kwargs={"foreach": True})


@pytest.mark.parametrize("kwargs", MUON_CASES, ids=_ids(MUON_CASES))
def test_muon_trajectory_matches_torch(kwargs):
    rng, rps, tps = _params(MUON_SHAPES, np.float64)
    ro = rg.optim.Muon(rps, **kwargs)
    to = torch.optim.Muon(tps, **_torch_kwargs(kwargs))
    for k in range(25):
        _set_grads(rng, k, MUON_SHAPES, rps, tps, np.float64)
        ro.step()
        to.step()
        compare_state(ro, to, rps, tps, RTOL, f"Muon{kwargs} step {k}")
    assert list(ro.state[rps[0]]) == ["momentum_buffer"]


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (16, 16), (24, 40), (64, 32)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_newton_schulz_equals_torch_bitwise(shape, dtype):
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns

    from retrograd.optim._muon import _zeropower_via_newtonschulz as rg_ns
    g = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype) * 3
    expected = torch_ns(torch.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7)
    assert expected.dtype == torch.bfloat16
    np.testing.assert_array_equal(rg_ns(g, (3.4445, -4.7750, 2.0315), 5, 1e-7), expected.float().numpy())
    # a zero gradient: the norm's floor eps keeps it finite (zero)
    zero = torch_ns(torch.zeros(shape, dtype=torch.float64), (3.4445, -4.7750, 2.0315), 5, 1e-7)
    np.testing.assert_array_equal(rg_ns(np.zeros(shape), (3.4445, -4.7750, 2.0315), 5, 1e-7), zero.float().numpy())


@pytest.mark.parametrize("shape", [(48, 80), (128, 128), (200, 100)])
def test_newton_schulz_of_larger_matrices_agrees_to_bfloat16_precision(shape):
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns

    from retrograd.optim._muon import _zeropower_via_newtonschulz as rg_ns
    g = np.random.default_rng(sum(shape)).standard_normal(shape)
    expected = torch_ns(torch.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7).float().numpy()
    actual = rg_ns(g, (3.4445, -4.7750, 2.0315), 5, 1e-7)
    # one-ulp roundings spread by the iteration: about 1% of the largest entry at most
    assert np.abs(actual - expected).max() <= 0.02 * np.abs(expected).max()
    # the same near-orthogonalisation: singular values alike
    np.testing.assert_allclose(np.linalg.svd(actual, compute_uv=False), np.linalg.svd(expected, compute_uv=False),
                               atol=0.02)


@pytest.mark.parametrize("name, kwargs, shapes", [
    ("Adafactor", dict(lr=0.1, weight_decay=0.1), ADAFACTOR_SHAPES),
    ("Muon", dict(lr=0.02), MUON_SHAPES),
])
def test_float32_matches_torch(name, kwargs, shapes):
    # float32: the norms and sums round differently from torch's kernels; 1e-5 relative
    ro, to, rps, tps = _run(getattr(rg.optim, name), getattr(torch.optim, name), shapes, kwargs, steps=10,
                            dtype=np.float32, rtol=1e-5)
    for rp in rps:
        assert rp.dtype == np.float32
    for s in ro.state.values():
        for key, value in s.items():
            if key != "step":
                assert value.dtype == np.float32, key


def _copy_into(rg_model, torch_model):
    with rg.no_grad():
        for (name, p), (tname, tp) in zip(rg_model.named_parameters(), torch_model.named_parameters()):
            assert name == tname
            p.copy_(rg.tensor(_np(tp)))


def test_network_trained_through_backward_matches_torch():
    # Muon for the hidden matrices, Adafactor for the rest, as Muon's documentation advises
    tm = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 5), torch.nn.Tanh(),
                             torch.nn.Linear(5, 2))
    rm = rg.nn.Sequential(rg.nn.Linear(4, 6), rg.nn.Tanh(), rg.nn.Linear(6, 5), rg.nn.Tanh(), rg.nn.Linear(5, 2))
    _copy_into(rm, tm)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 4))
    y = rng.standard_normal((8, 2))

    def split(model):
        hidden = [model[0].weight, model[2].weight]
        rest = [p for p in model.parameters() if all(p is not h for h in hidden)]
        return hidden, rest

    r_hidden, r_rest = split(rm)
    t_hidden, t_rest = split(tm)
    r_opts = [rg.optim.Muon(r_hidden, lr=0.05), rg.optim.Adafactor(r_rest, lr=0.05)]
    t_opts = [torch.optim.Muon(t_hidden, lr=0.05), torch.optim.Adafactor(t_rest, lr=0.05)]
    losses = []
    for _ in range(20):
        for ro, to in zip(r_opts, t_opts):
            ro.zero_grad()
            to.zero_grad()
        r_loss = ((rm(rg.tensor(x)) - rg.tensor(y)) ** 2).mean()
        t_loss = ((tm(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
        r_loss.backward()
        t_loss.backward()
        for ro, to in zip(r_opts, t_opts):
            ro.step()
            to.step()
        assert abs(r_loss.item() - t_loss.item()) <= 1e-10 * max(1.0, abs(t_loss.item()))
        losses.append(r_loss.item())
    for rp, tp in zip(rm.parameters(), tm.parameters()):
        assert_close(_np(rp), _np(tp), RTOL, 1.0, "parameter")
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("name, kwargs, shapes", [
    ("Adafactor", dict(lr=0.1, weight_decay=0.1), ADAFACTOR_SHAPES),
    ("Muon", dict(lr=0.02, nesterov=False), MUON_SHAPES),
])
def test_state_dict_round_trip(name, kwargs, shapes):
    cls = getattr(rg.optim, name)
    rng, rps, tps = _params(shapes, np.float64)
    ro = cls(rps, **kwargs)
    to = getattr(torch.optim, name)(tps, **kwargs)
    for k in range(4):
        _set_grads(rng, k, shapes, rps, tps, np.float64)
        ro.step()
        to.step()
    sd = ro.state_dict()
    tsd = to.state_dict()
    # torch's layout: the same groups' options and per-parameter state keys
    assert sd["param_groups"] == [{k: v for k, v in g.items()} for g in tsd["param_groups"]]
    assert {i: list(s) for i, s in sd["state"].items()} == {i: list(s) for i, s in tsd["state"].items()}

    # a second optimizer on copies of the parameters continues exactly where the first stands
    copies = [rg.tensor(_np(p).copy(), requires_grad=True) for p in rps]
    ro2 = cls(copies, lr=0.5)
    ro2.load_state_dict(rg.load(_save(sd)))
    assert ro2.param_groups[0]["lr"] == kwargs["lr"]
    for k in range(4, 8):
        _set_grads(rng, k, shapes, rps, tps, np.float64)
        for p, c in zip(rps, copies):
            c.grad = None if p.grad is None else p.grad.clone()
        ro.step()
        ro2.step()
        to.step()
        for p, c, t in zip(rps, copies, tps):
            np.testing.assert_array_equal(_np(c), _np(p))
            assert_close(_np(p), _np(t), RTOL, 1.0, f"{name} param after reload")


def _save(obj):
    import io
    buf = io.BytesIO()
    rg.save(obj, buf)
    buf.seek(0)
    return buf


def test_adafactor_setstate_turns_a_numeric_step_into_a_tensor():
    p = rg.tensor([1.0, 2.0], requires_grad=True)
    opt = rg.optim.Adafactor([p])
    p.grad = rg.tensor([1.0, 1.0])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"] = 1.0
    del sd["param_groups"][0]["foreach"]
    opt.load_state_dict(sd)
    assert isinstance(opt.state[p]["step"], rg.Tensor) and float(opt.state[p]["step"]) == 1.0
    assert opt.param_groups[0]["foreach"] is None


@pytest.mark.parametrize("kwargs, message", [
    (dict(lr=-0.1), "Learning rate should be >= 0 but is: -0.1"),
    (dict(beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
    (dict(eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
    (dict(eps=(None, -1e-3)), "epsilon2 should be >= 0 but is: -0.001"),
    (dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    (dict(weight_decay=-0.1), "weight_decay should be >= 0 but is: -0.1"),
])
def test_adafactor_argument_errors_match_torch(kwargs, message):
    with pytest.raises(ValueError, match=message) as t_err:
        torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as r_err:
        rg.optim.Adafactor([rg.zeros(2, requires_grad=True)], **kwargs)
    assert str(r_err.value) == str(t_err.value)


@pytest.mark.parametrize("kwargs, message", [
    (dict(lr=-0.1), "Learning rate should be >= 0 but is: -0.1"),
    (dict(momentum=-0.5), "momentum should be >= 0 but is: -0.5"),
    (dict(weight_decay=-0.1), "weight decay should be >= 0 but is: -0.1"),
    (dict(adjust_lr_fn="spectral"), "Adjust learning rate function spectral is not supported"),
])
def test_muon_argument_errors_match_torch(kwargs, message):
    with pytest.raises(ValueError, match=message) as t_err:
        torch.optim.Muon([torch.zeros(2, 2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as r_err:
        rg.optim.Muon([rg.zeros(2, 2, requires_grad=True)], **kwargs)
    assert str(r_err.value) == str(t_err.value)


def test_tensor_lr_must_have_one_element():
    for cls in (rg.optim.Adafactor, rg.optim.Muon):
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            cls([rg.zeros(2, 2, requires_grad=True)], lr=rg.tensor([0.1, 0.2]))


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2), ()])
def test_muon_refuses_parameters_that_are_not_2d(shape):
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        torch.optim.Muon([torch.zeros(shape, requires_grad=True)])
    with pytest.raises(ValueError, match="Muon only supports 2D parameters whereas we found a parameter with size"):
        rg.optim.Muon([rg.zeros(2, 2, requires_grad=True), rg.zeros(shape, requires_grad=True)])
    # a group added later is refused by step(), as torch's
    opt = rg.optim.Muon([rg.zeros(2, 2, requires_grad=True)])
    v = rg.zeros(shape, requires_grad=True)
    opt.add_param_group({"params": [v]})
    v.grad = rg.ones(shape)
    with pytest.raises(ValueError, match="Param gradient must be a 2D matrix"):
        opt.step()


@pytest.mark.parametrize("kwargs, message", [
    (dict(ns_steps=100), "Number of steps must be less than 100"),
    (dict(ns_coefficients=(1.0, 2.0)), "Coefficients must be a tuple of exactly 3 values"),
])
def test_muon_step_errors_match_torch(kwargs, message):
    tp = torch.ones(2, 2, requires_grad=True)
    tp.grad = torch.ones(2, 2)
    with pytest.raises(ValueError, match=message):
        torch.optim.Muon([tp], **kwargs).step()
    rp = rg.ones(2, 2, requires_grad=True)
    rp.grad = rg.ones(2, 2)
    with pytest.raises(ValueError, match=message):
        rg.optim.Muon([rp], **kwargs).step()


@pytest.mark.parametrize("name, shape", [("Adafactor", (2,)), ("Muon", (2, 2))])
def test_complex_parameters_are_refused(name, shape):
    p = rg.zeros(shape, dtype=rg.complex128, requires_grad=True)
    p.grad = rg.ones(shape, dtype=rg.complex128)
    with pytest.raises(RuntimeError, match=f"{name} does not support complex parameters"):
        getattr(rg.optim, name)([p]).step()


def test_defaults_and_repr_match_torch():
    for name, shape in (("Adafactor", (2, 2)), ("Muon", (2, 2))):
        ro = getattr(rg.optim, name)([rg.zeros(shape, requires_grad=True)])
        to = getattr(torch.optim, name)([torch.zeros(shape, requires_grad=True)])
        assert ro.defaults == to.defaults
        assert repr(ro) == repr(to)
    assert "Adafactor" in rg.optim.__all__ and "Muon" in rg.optim.__all__


def test_step_with_closure_and_version_bump():
    p = rg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    for cls in (rg.optim.Adafactor, rg.optim.Muon):
        opt = cls([p], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        before = p._version
        loss = opt.step(closure)
        assert isinstance(loss, rg.Tensor) and loss.grad_fn is not None
        assert p._version > before
