"""Each optimizer against torch's: 100 float64 steps over a grid of its options,
parameters and every state entry equal to 1e-12 (relative) after every step;
float32 runs, parameter groups, state-dict round trips and continuing from a
loaded state, all against torch."""
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

# torch on CPU picks its for-loop implementation; say so, so that the
# comparison does not depend on that default.
FOR_LOOP = {"foreach": False}


def _grid(**options):
    names = list(options)
    return [dict(zip(names, values)) for values in itertools.product(*options.values())]


SGD_GRID = [kw for kw in _grid(lr=[0.05], momentum=[0.0, 0.9], dampening=[0.0, 0.5], weight_decay=[0.0, 0.1],
                               nesterov=[False, True], maximize=[False, True])
            if not (kw["nesterov"] and (kw["momentum"] == 0 or kw["dampening"] != 0))]
ADAM_GRID = _grid(lr=[0.05], betas=[(0.9, 0.999), (0.3, 0.8)], weight_decay=[0.0, 0.1], amsgrad=[False, True],
                  maximize=[False, True]) + [dict(lr=0.05, eps=1e-3), dict(lr=0.05, decoupled_weight_decay=True,
                                                                          weight_decay=0.2)]
ADAMW_GRID = _grid(lr=[0.05], weight_decay=[0.01, 0.5], amsgrad=[False, True], maximize=[False, True])
RMSPROP_GRID = _grid(lr=[0.01], alpha=[0.99, 0.3], momentum=[0.0, 0.9], centered=[False, True],
                     weight_decay=[0.0, 0.1]) + [dict(lr=0.01, maximize=True, centered=True, momentum=0.5),
                                                 dict(lr=0.01, eps=1e-2, maximize=True)]
ADAGRAD_GRID = _grid(lr=[0.1], lr_decay=[0.0, 0.05], weight_decay=[0.0, 0.1], initial_accumulator_value=[0.0, 0.5],
                     maximize=[False, True]) + [dict(lr=0.1, eps=1e-3)]


def _ids(grid):
    return ["-".join(f"{k}={v}" for k, v in kw.items()) for kw in grid]


@pytest.mark.parametrize("kwargs", SGD_GRID, ids=_ids(SGD_GRID))
def test_sgd_matches_torch(kwargs):
    run_against_torch(torch, rg.optim.SGD, torch.optim.SGD, kwargs, torch_kwargs=FOR_LOOP)


@pytest.mark.parametrize("kwargs", ADAM_GRID, ids=_ids(ADAM_GRID))
def test_adam_matches_torch(kwargs):
    run_against_torch(torch, rg.optim.Adam, torch.optim.Adam, kwargs, torch_kwargs=FOR_LOOP)


@pytest.mark.parametrize("kwargs", ADAMW_GRID, ids=_ids(ADAMW_GRID))
def test_adamw_matches_torch(kwargs):
    run_against_torch(torch, rg.optim.AdamW, torch.optim.AdamW, kwargs, torch_kwargs=FOR_LOOP)


@pytest.mark.parametrize("kwargs", RMSPROP_GRID, ids=_ids(RMSPROP_GRID))
def test_rmsprop_matches_torch(kwargs):
    run_against_torch(torch, rg.optim.RMSprop, torch.optim.RMSprop, kwargs, torch_kwargs=FOR_LOOP)


@pytest.mark.parametrize("kwargs", ADAGRAD_GRID, ids=_ids(ADAGRAD_GRID))
def test_adagrad_matches_torch(kwargs):
    run_against_torch(torch, rg.optim.Adagrad, torch.optim.Adagrad, kwargs, torch_kwargs=FOR_LOOP)


ALL = [
    (rg.optim.SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    (rg.optim.Adam, torch.optim.Adam, dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    (rg.optim.AdamW, torch.optim.AdamW, dict(lr=0.05, amsgrad=True)),
    (rg.optim.RMSprop, torch.optim.RMSprop, dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    (rg.optim.Adagrad, torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
]
ALL_IDS = [c[0].__name__ for c in ALL]


@pytest.mark.parametrize("rg_cls, torch_cls, kwargs", ALL, ids=ALL_IDS)
def test_float32_matches_torch(rg_cls, torch_cls, kwargs):
    # float32 arithmetic stays in float32 (NumPy keeps Python scalars weak), as torch's.
    _, _, rps, _ = run_against_torch(torch, rg_cls, torch_cls, kwargs, dtype=np.float32, rtol=2e-5,
                                     torch_kwargs=FOR_LOOP)
    assert all(p.dtype == np.float32 for p in rps)


@pytest.mark.parametrize("rg_cls, torch_cls, kwargs", ALL, ids=ALL_IDS)
def test_param_groups_with_their_own_options_match_torch(rg_cls, torch_cls, kwargs):
    groups = [{"params": [0, 3]}, {"params": [1, 2, 4], "lr": 0.003, "weight_decay": 0.3}]
    run_against_torch(torch, rg_cls, torch_cls, kwargs, steps=40, groups=groups, torch_kwargs=FOR_LOOP)


@pytest.mark.parametrize("rg_cls, torch_cls, kwargs", ALL, ids=ALL_IDS)
def test_state_dict_layout_matches_torch(rg_cls, torch_cls, kwargs):
    ro, to, _, _ = run_against_torch(torch, rg_cls, torch_cls, kwargs, steps=3, torch_kwargs=FOR_LOOP)
    rsd, tsd = ro.state_dict(), to.state_dict()
    assert list(rsd) == list(tsd) == ["state", "param_groups"]
    # Same groups, same option keys in the same order, same values (torch's foreach=False aside).
    assert len(rsd["param_groups"]) == len(tsd["param_groups"])
    for rg_group, t_group in zip(rsd["param_groups"], tsd["param_groups"]):
        assert list(rg_group) == list(t_group)
        for key in t_group:
            if key != "foreach":
                assert rg_group[key] == t_group[key], key
    for idx, t_state in tsd["state"].items():
        assert list(rsd["state"][idx]) == list(t_state)


@pytest.mark.parametrize("rg_cls, torch_cls, kwargs", ALL, ids=ALL_IDS)
def test_loading_into_a_fresh_optimizer_continues_as_torch(rg_cls, torch_cls, kwargs):
    # 30 steps, then a state dict (as rg.save would write it: the state tensors
    # copied) loaded into a fresh optimizer over fresh parameters holding the
    # same values; 30 more steps of both must equal torch's 60.
    ro, to, rps, tps = run_against_torch(torch, rg_cls, torch_cls, kwargs, steps=30, torch_kwargs=FOR_LOOP)
    saved = ro.state_dict()
    saved = {"state": {i: {k: v.clone() for k, v in s.items()} for i, s in saved["state"].items()},
             "param_groups": saved["param_groups"]}
    fresh = [rg.tensor(p.detach().numpy().copy(), requires_grad=True) for p in rps]
    ro2 = rg_cls(fresh, lr=123.0)
    ro2.load_state_dict(saved)
    assert ro2.param_groups[0]["lr"] == kwargs["lr"]
    rng = np.random.default_rng(99)
    for k in range(30, 60):
        state = rng.bit_generator.state
        set_grads(torch, rng, k, fresh, tps, np.float64)
        rng.bit_generator.state = state
        set_grads(torch, rng, k, rps, tps, np.float64)
        ro.step()
        ro2.step()
        to.step()
        compare_state(ro2, to, fresh, tps, 1e-12, f"loaded {rg_cls.__name__} step {k}")
        compare_state(ro, to, rps, tps, 1e-12, f"original {rg_cls.__name__} step {k}")


def test_torch_state_dict_values_load_into_retrograd():
    # A torch state dict, converted tensor by tensor, loads and continues as torch.
    rng, rps, tps = make_params(torch)
    to = torch.optim.Adam(tps, lr=0.05, amsgrad=True, foreach=False)
    for k in range(10):
        set_grads(torch, rng, k, rps, tps, np.float64)
        to.step()
    for rp, tp in zip(rps, tps):
        rp.detach().numpy()[...] = tp.detach().numpy()
    tsd = to.state_dict()
    converted = {"state": {i: {k: rg.tensor(v.numpy().copy()) for k, v in s.items()} for i, s in tsd["state"].items()},
                 "param_groups": tsd["param_groups"]}
    ro = rg.optim.Adam(rps)
    ro.load_state_dict(converted)
    for k in range(10, 30):
        set_grads(torch, rng, k, rps, tps, np.float64)
        ro.step()
        to.step()
        compare_state(ro, to, rps, tps, 1e-12, f"Adam from torch's state, step {k}")


@pytest.mark.parametrize("rg_cls, torch_cls, kwargs", ALL, ids=ALL_IDS)
def test_load_casts_state_to_the_parameters_dtype_as_torch(rg_cls, torch_cls, kwargs):
    # State saved from float64 parameters, loaded for float32 ones: every state
    # tensor but `step` becomes float32 (torch's rule), and the steps continue as torch's.
    ro, to, rps, tps = run_against_torch(torch, rg_cls, torch_cls, kwargs, steps=5, torch_kwargs=FOR_LOOP)
    r32 = [rg.tensor(p.detach().numpy().astype(np.float32), requires_grad=True) for p in rps]
    t32 = [torch.tensor(p.detach().numpy().astype(np.float32), requires_grad=True) for p in tps]
    ro32, to32 = rg_cls(r32, **kwargs), torch_cls(t32, **kwargs, **FOR_LOOP)
    ro32.load_state_dict(ro.state_dict())
    to32.load_state_dict(to.state_dict())
    for idx, t_state in to32.state_dict()["state"].items():
        r_state = ro32.state_dict()["state"][idx]
        for key, value in t_state.items():
            if key == "step":   # kept as saved: retrograd's default float dtype
                assert r_state[key].dtype == np.float64
            else:
                assert str(r_state[key].dtype) == str(value.dtype).replace("torch.", ""), (key, r_state[key].dtype)
    rng = np.random.default_rng(5)
    for k in range(20):
        set_grads(torch, rng, k, r32, t32, np.float32)
        ro32.step()
        to32.step()
        compare_state(ro32, to32, r32, t32, 2e-5, f"float32 after load, step {k}")


def test_load_shares_state_tensors_that_need_no_cast_as_torch():
    # torch's load_state_dict keeps a state tensor that needs no cast (Tensor.to
    # returns it): the loaded optimizer and the state dict share it.
    for lib, cls in ((rg, rg.optim.SGD), (torch, torch.optim.SGD)):
        p = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        opt = cls([p], lr=0.1, momentum=0.9)
        p.grad = lib.tensor([1.0, 1.0], dtype=lib.float64)
        opt.step()
        sd = opt.state_dict()
        q = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        opt2 = cls([q], lr=0.1, momentum=0.9)
        opt2.load_state_dict(sd)
        assert opt2.state[q]["momentum_buffer"] is sd["state"][0]["momentum_buffer"]


def test_complex_parameters_match_torch():
    # Adam, RMSprop and Adagrad treat a complex entry as two reals (torch's view_as_real).
    rng = np.random.default_rng(3)
    init = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    for rg_cls, torch_cls, kwargs in ALL:
        rp = rg.tensor(init.copy(), requires_grad=True)
        tp = torch.tensor(init.copy(), requires_grad=True)
        ro, to = rg_cls([rp], **kwargs), torch_cls([tp], **kwargs, **FOR_LOOP)
        for k in range(50):
            g = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
            rp.grad = rg.tensor(g + 0.5 * rp.detach().numpy())
            tp.grad = torch.tensor(g + 0.5 * tp.detach().numpy())
            ro.step()
            to.step()
            compare_state(ro, to, [rp], [tp], 1e-12, f"complex {rg_cls.__name__} step {k}")


@pytest.mark.parametrize("rg_cls, torch_cls, kwargs", ALL, ids=ALL_IDS)
def test_training_through_backward_matches_torch(rg_cls, torch_cls, kwargs):
    # A least-squares fit with real backward passes and zero_grad in the loop.
    rng = np.random.default_rng(1)
    A, b = rng.standard_normal((20, 4)), rng.standard_normal(20)
    w0 = rng.standard_normal(4)
    rw = rg.tensor(w0.copy(), requires_grad=True)
    tw = torch.tensor(w0.copy(), requires_grad=True)
    ro, to = rg_cls([rw], **kwargs), torch_cls([tw], **kwargs, **FOR_LOOP)
    rA, rb, tA, tb = rg.tensor(A), rg.tensor(b), torch.tensor(A), torch.tensor(b)
    for k in range(100):
        ro.zero_grad()
        to.zero_grad()
        rl = ((rA @ rw - rb) ** 2).mean()
        tl = ((tA @ tw - tb) ** 2).mean()
        rl.backward()
        tl.backward()
        ro.step()
        to.step()
        assert abs(rl.item() - tl.item()) <= 1e-12 * abs(tl.item()), k
        compare_state(ro, to, [rw], [tw], 1e-12, f"least squares {rg_cls.__name__} step {k}")
