"""Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop and SparseAdam against torch:
float64 trajectories over their options (parameters and every state entry
equal to 1e-10 after every step), a small network trained through backward,
float32 and complex parameters, state dicts (layout, round trips, torch's
converted), and the argument checks with torch's messages."""
import itertools
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import retrograd as rg  # noqa: E402
from _optim_oracle import compare_state, make_params, run_against_torch, set_grads  # noqa: E402

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

FOR_LOOP = {"foreach": False}
RTOL = 1e-10


@pytest.fixture(autouse=True)
def _torch_float64_default():
    # The 0-d state entries (step, NAdam's mu_product, ASGD's eta and mu) are
    # in the default dtype: float64 on both sides, as the suite's retrograd default.
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _grid(**options):
    names = list(options)
    return [dict(zip(names, values)) for values in itertools.product(*options.values())]


GRIDS = {
    "Adadelta": _grid(lr=[1.0, 0.3], rho=[0.9, 0.5], weight_decay=[0.0, 0.1], maximize=[False, True])
    + [dict(eps=1e-3)],
    "Adamax": _grid(lr=[0.05], betas=[(0.9, 0.999), (0.5, 0.8)], weight_decay=[0.0, 0.1], maximize=[False, True])
    + [dict(lr=0.05, eps=1e-2)],
    "NAdam": _grid(lr=[0.05], betas=[(0.9, 0.999), (0.5, 0.8)], weight_decay=[0.0, 0.1],
                   decoupled_weight_decay=[False, True], maximize=[False, True])
    + [dict(lr=0.05, momentum_decay=0.05), dict(lr=0.05, eps=1e-3)],
    "RAdam": _grid(lr=[0.05], betas=[(0.9, 0.999), (0.5, 0.8)], weight_decay=[0.0, 0.1],
                   decoupled_weight_decay=[False, True], maximize=[False, True])
    + [dict(lr=0.05, eps=1e-3)],
    "ASGD": _grid(lr=[0.05], lambd=[1e-4, 0.05], t0=[1e6, 4.0], weight_decay=[0.0, 0.1], maximize=[False, True])
    + [dict(lr=0.05, alpha=0.5, t0=0.0)],
    "Rprop": _grid(lr=[0.05], etas=[(0.5, 1.2), (0.3, 1.7)], step_sizes=[(1e-6, 50), (1e-2, 0.1)],
                   maximize=[False, True]),
}
CASES = [(name, kw) for name, grid in GRIDS.items() for kw in grid]
IDS = [f"{name}-" + "-".join(f"{k}={v}" for k, v in kw.items()) for name, kw in CASES]

# One representative configuration per optimizer, for the other tests.
ONE = {
    "Adadelta": dict(lr=0.5, weight_decay=0.1),
    "Adamax": dict(lr=0.05, weight_decay=0.1),
    "NAdam": dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True),
    "RAdam": dict(lr=0.05, weight_decay=0.1),
    "ASGD": dict(lr=0.05, t0=3.0, lambd=0.01),
    "Rprop": dict(lr=0.05, etas=(0.4, 1.3)),
}
NAMES = list(ONE)


@pytest.mark.parametrize("name, kwargs", CASES, ids=IDS)
def test_trajectory_matches_torch(name, kwargs):
    # 30 steps of random gradients (a parameter without gradient every other step, one never).
    run_against_torch(torch, getattr(rg.optim, name), getattr(torch.optim, name), kwargs, steps=30, rtol=RTOL,
                      torch_kwargs=FOR_LOOP)


@pytest.mark.parametrize("name", NAMES)
def test_param_groups_with_their_own_options_match_torch(name):
    groups = [{"params": [0, 3]}, {"params": [1, 2, 4], "lr": 0.003}]
    run_against_torch(torch, getattr(rg.optim, name), getattr(torch.optim, name), ONE[name], steps=15, rtol=RTOL,
                      groups=groups, torch_kwargs=FOR_LOOP)


@pytest.mark.parametrize("name", NAMES)
def test_training_a_small_network_matches_torch(name):
    # Linear-Tanh-Linear from torch's initial parameters, real backward passes, zero_grad in the loop.
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    rnet = rg.nn.Sequential(rg.nn.Linear(3, 5), rg.nn.Tanh(), rg.nn.Linear(5, 2))
    for rp, tp in zip(rnet.parameters(), tnet.parameters()):
        rp.detach().numpy()[...] = tp.detach().numpy()
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 2))
    ro = getattr(rg.optim, name)(rnet.parameters(), **ONE[name])
    to = getattr(torch.optim, name)(tnet.parameters(), **ONE[name], **FOR_LOOP)
    for k in range(20):
        ro.zero_grad()
        to.zero_grad()
        rl = ((rnet(rg.tensor(x)) - rg.tensor(y)) ** 2).mean()
        tl = ((tnet(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
        rl.backward()
        tl.backward()
        ro.step()
        to.step()
        assert abs(rl.item() - tl.item()) <= RTOL * abs(tl.item()), k
        compare_state(ro, to, list(rnet.parameters()), list(tnet.parameters()), RTOL, f"{name} network step {k}")


@pytest.mark.parametrize("name", NAMES)
def test_float32_matches_torch(name):
    torch.set_default_dtype(torch.float32)
    rg.set_default_dtype("float32")
    try:
        _, _, rps, _ = run_against_torch(torch, getattr(rg.optim, name), getattr(torch.optim, name), ONE[name],
                                         steps=30, dtype=np.float32, rtol=2e-5, torch_kwargs=FOR_LOOP)
    finally:
        rg.set_default_dtype("float64")
    assert all(p.dtype == np.float32 for p in rps)


@pytest.mark.parametrize("name", NAMES)
def test_complex_parameters_match_torch(name):
    # A complex entry is a pair of reals, as torch's view_as_real.
    rng = np.random.default_rng(3)
    init = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    rp = rg.tensor(init.copy(), requires_grad=True)
    tp = torch.tensor(init.copy(), requires_grad=True)
    ro = getattr(rg.optim, name)([rp], **ONE[name])
    to = getattr(torch.optim, name)([tp], **ONE[name], **FOR_LOOP)
    for k in range(20):
        g = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
        rp.grad = rg.tensor(g + 0.5 * rp.detach().numpy())
        tp.grad = torch.tensor(g + 0.5 * tp.detach().numpy())
        ro.step()
        to.step()
        compare_state(ro, to, [rp], [tp], RTOL, f"complex {name} step {k}")


@pytest.mark.parametrize("name", NAMES)
def test_tensor_lr_matches_torch(name):
    kwargs = dict(ONE[name])
    run_against_torch(torch, getattr(rg.optim, name), getattr(torch.optim, name), dict(kwargs, lr=0.05), steps=5,
                      rtol=RTOL, torch_kwargs=FOR_LOOP)
    rng, rps, tps = make_params(torch)
    ro = getattr(rg.optim, name)(rps, **dict(kwargs, lr=rg.tensor(0.05)))
    to = getattr(torch.optim, name)(tps, **dict(kwargs, lr=torch.tensor(0.05)), **FOR_LOOP)
    for k in range(5):
        set_grads(torch, rng, k, rps, tps, np.float64)
        ro.step()
        to.step()
    for rp, tp in zip(rps, tps):
        np.testing.assert_allclose(rp.detach().numpy(), tp.detach().numpy(), rtol=RTOL, atol=RTOL)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_layout_matches_torch(name):
    ro, to, _, _ = run_against_torch(torch, getattr(rg.optim, name), getattr(torch.optim, name), ONE[name],
                                     steps=3, rtol=RTOL, torch_kwargs=FOR_LOOP)
    rsd, tsd = ro.state_dict(), to.state_dict()
    assert list(rsd) == list(tsd) == ["state", "param_groups"]
    for rg_group, t_group in zip(rsd["param_groups"], tsd["param_groups"], strict=True):
        assert list(rg_group) == list(t_group)
        for key in t_group:
            if key != "foreach":
                assert rg_group[key] == t_group[key], key
    assert sorted(rsd["state"]) == sorted(tsd["state"])
    for idx, t_state in tsd["state"].items():
        assert list(rsd["state"][idx]) == list(t_state)


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_continues_as_torch(name):
    # 10 steps, a state dict with its tensors copied, loaded into a fresh
    # optimizer over fresh parameters holding the same values: 10 more steps equal torch's.
    ro, to, rps, tps = run_against_torch(torch, getattr(rg.optim, name), getattr(torch.optim, name), ONE[name],
                                         steps=10, rtol=RTOL, torch_kwargs=FOR_LOOP)
    saved = ro.state_dict()
    saved = {"state": {i: {k: v.clone() for k, v in s.items()} for i, s in saved["state"].items()},
             "param_groups": saved["param_groups"]}
    fresh = [rg.tensor(p.detach().numpy().copy(), requires_grad=True) for p in rps]
    ro2 = getattr(rg.optim, name)(fresh, lr=123.0)
    ro2.load_state_dict(saved)
    assert ro2.param_groups[0]["lr"] == ONE[name]["lr"]
    rng = np.random.default_rng(99)
    for k in range(10, 20):
        set_grads(torch, rng, k, fresh, tps, np.float64)
        ro2.step()
        to.step()
        compare_state(ro2, to, fresh, tps, RTOL, f"loaded {name} step {k}")


@pytest.mark.parametrize("name", NAMES)
def test_torch_state_dict_converts_and_continues(name):
    rng, rps, tps = make_params(torch)
    to = getattr(torch.optim, name)(tps, **ONE[name], **FOR_LOOP)
    for k in range(8):
        set_grads(torch, rng, k, rps, tps, np.float64)
        to.step()
    for rp, tp in zip(rps, tps):
        rp.detach().numpy()[...] = tp.detach().numpy()
    tsd = to.state_dict()
    converted = {"state": {i: {k: rg.tensor(v.numpy().copy()) for k, v in s.items()}
                           for i, s in tsd["state"].items()},
                 "param_groups": tsd["param_groups"]}
    ro = getattr(rg.optim, name)(rps)
    ro.load_state_dict(converted)
    for k in range(8, 16):
        set_grads(torch, rng, k, rps, tps, np.float64)
        ro.step()
        to.step()
        compare_state(ro, to, rps, tps, RTOL, f"{name} from torch's state, step {k}")


def test_state_saved_as_numbers_becomes_tensors_again():
    # An old checkpoint may hold `step` (and NAdam's mu_product, ASGD's eta and mu) as numbers.
    p = rg.tensor([1.0, 2.0], requires_grad=True)
    for cls, keys in ((rg.optim.NAdam, ("step", "mu_product")), (rg.optim.ASGD, ("step", "eta", "mu"))):
        opt = cls([p], lr=0.1)
        p.grad = rg.tensor([1.0, -1.0])
        opt.step()
        sd = opt.state_dict()
        sd["state"][0] = {k: (float(v) if k in keys else v) for k, v in sd["state"][0].items()}
        opt2 = cls([p], lr=0.1)
        opt2.load_state_dict(sd)
        for key in keys:
            assert isinstance(opt2.state[p][key], rg.Tensor) and opt2.state[p][key].shape == ()
            assert float(opt2.state[p][key]) == float(sd["state"][0][key])


def test_defaults_match_torch():
    for name in NAMES + ["SparseAdam"]:
        rp = [rg.zeros(2, requires_grad=True)]
        tp = [torch.zeros(2, requires_grad=True)]
        r_defaults = getattr(rg.optim, name)(rp).defaults
        t_defaults = getattr(torch.optim, name)(tp).defaults
        assert list(r_defaults) == list(t_defaults), name
        assert r_defaults == t_defaults, name


BAD = [
    ("Adadelta", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(eps=-1.0), "Invalid epsilon value: -1.0"),
    ("Adadelta", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("Adamax", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("Adamax", dict(eps=-1.0), "Invalid epsilon value: -1.0"),
    ("Adamax", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
    ("NAdam", dict(momentum_decay=-1.0), "Invalid momentum_decay value: -1.0"),
    ("NAdam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    ("NAdam", dict(lr=-0.5), "Invalid learning rate: -0.5"),
    ("RAdam", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
    ("RAdam", dict(betas=(-0.1, 0.9)), "Invalid beta parameter at index 0: -0.1"),
    ("ASGD", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("ASGD", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
    ("Rprop", dict(etas=(1.0, 1.2)), "Invalid eta values: 1.0, 1.2"),
    ("Rprop", dict(etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
    ("Rprop", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("SparseAdam", dict(lr=0.0), "Invalid learning rate: 0.0"),
    ("SparseAdam", dict(eps=0.0), "Invalid epsilon value: 0.0"),
    ("SparseAdam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
]


@pytest.mark.parametrize("name, kwargs, message", BAD, ids=[f"{b[0]}-{b[2]}" for b in BAD])
def test_invalid_arguments_raise_as_torch(name, kwargs, message):
    with pytest.raises(ValueError, match=message) as t_err:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as r_err:
        getattr(rg.optim, name)([rg.zeros(2, requires_grad=True)], **kwargs)
    assert str(r_err.value) == str(t_err.value)


@pytest.mark.parametrize("name", NAMES + ["SparseAdam"])
def test_two_element_tensor_lr_is_refused_as_torch(name):
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], lr=torch.tensor([0.1, 0.2]))
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        getattr(rg.optim, name)([rg.zeros(2, requires_grad=True)], lr=rg.tensor([0.1, 0.2]))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("flag", ["differentiable", "capturable"])
def test_differentiable_and_capturable_are_refused_clearly(name, flag):
    p = rg.zeros(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match=f"{flag}=True"):
        getattr(rg.optim, name)([p], **{flag: True})
    # accepted as False, and foreach as given, as torch
    opt = getattr(rg.optim, name)([p], **{flag: False}, foreach=True)
    assert opt.param_groups[0][flag] is False and opt.param_groups[0]["foreach"] is True


@pytest.mark.parametrize("name", NAMES)
def test_parameters_without_gradient_are_left_alone(name):
    a = rg.tensor([1.0, 2.0], requires_grad=True)
    b = rg.tensor([3.0], requires_grad=True)
    opt = getattr(rg.optim, name)([a, b], **ONE[name])
    a.grad = rg.tensor([0.5, -0.5])
    opt.step()
    assert b.tolist() == [3.0] and len(opt.state[b]) == 0
    assert a.tolist() != [1.0, 2.0]


def test_closure_result_is_returned():
    p = rg.tensor([1.0, -2.0], requires_grad=True)
    for name in NAMES:
        opt = getattr(rg.optim, name)([p], **ONE[name])

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        loss = opt.step(closure)
        assert isinstance(loss, rg.Tensor) and loss.grad_fn is not None


def test_an_update_bumps_the_version_so_a_stale_graph_refuses_backward():
    p = rg.tensor([1.0, 2.0], requires_grad=True)
    opt = rg.optim.RAdam([p], lr=0.1)
    y = (p * p).sum()       # saves p
    p.grad = rg.tensor([1.0, 1.0])
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# -- SparseAdam: retrograd's gradients are dense, which torch's SparseAdam refuses ---------------------------------

def test_sparse_adam_refuses_dense_gradients_as_torch():
    tp = torch.tensor([1.0, 2.0], requires_grad=True)
    topt = torch.optim.SparseAdam([tp])
    (tp * tp).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam") as te:
        topt.step()
    rp = rg.tensor([1.0, 2.0], requires_grad=True)
    ropt = rg.optim.SparseAdam([rp])
    (rp * rp).sum().backward()
    with pytest.raises(RuntimeError) as re_:
        ropt.step()
    assert str(re_.value).startswith(str(te.value))
    assert "rg.optim.Adam" in str(re_.value)
    assert rp.tolist() == [1.0, 2.0] and len(ropt.state) == 0


def test_sparse_adam_without_gradients_runs_the_closure_and_changes_nothing():
    for lib, cls in ((torch, torch.optim.SparseAdam), (rg, rg.optim.SparseAdam)):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = cls([p], lr=0.1, maximize=True)
        assert opt.step(lambda: 7.0) == 7.0
        assert p.tolist() == [1.0, 2.0]
        assert opt.state_dict()["state"] == {}
        assert opt.state_dict()["param_groups"][0] == {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-08,
                                                       "maximize": True, "params": [0]}


def test_sparse_adam_refuses_complex_parameters_as_torch():
    t_params = [torch.zeros(2, requires_grad=True), torch.zeros(2, dtype=torch.complex128, requires_grad=True)]
    r_params = [rg.zeros(2, requires_grad=True), rg.zeros(2, dtype="complex128", requires_grad=True)]
    with pytest.raises(ValueError) as te:
        torch.optim.SparseAdam(t_params)
    with pytest.raises(ValueError) as re_:
        rg.optim.SparseAdam(r_params)
    assert str(re_.value) == str(te.value) == ("Complex params at indices [[0, 1]]: SparseAdam does not support "
                                               "complex parameters")


def test_sparse_adam_state_dict_round_trip():
    p = rg.zeros(3, requires_grad=True)
    opt = rg.optim.SparseAdam([p], lr=0.01, betas=(0.8, 0.9))
    opt2 = rg.optim.SparseAdam([rg.zeros(3, requires_grad=True)])
    opt2.load_state_dict(opt.state_dict())
    assert opt2.param_groups[0]["lr"] == 0.01 and opt2.param_groups[0]["betas"] == (0.8, 0.9)


@pytest.mark.parametrize("name", NAMES + ["SparseAdam", "LBFGS"])
def test_signature_matches_torch(name):
    # the same parameters, in the same order, of the same kinds (positional or keyword-only), with the same defaults
    import inspect

    r_sig = inspect.signature(getattr(rg.optim, name).__init__).parameters
    t_sig = inspect.signature(getattr(torch.optim, name).__init__).parameters
    assert [(p.name, p.kind, p.default) for p in r_sig.values()] == [(p.name, p.kind, p.default)
                                                                      for p in t_sig.values()]
