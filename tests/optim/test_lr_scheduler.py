"""rg.optim.lr_scheduler against torch.optim.lr_scheduler: the learning rates
(and cycled momenta) epoch by epoch, state dicts, errors and warnings."""
import math
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.optim import lr_scheduler as rg_sched


def _rg_opt(cls_name="SGD", lrs=(0.1, 0.02), **kwargs):
    groups = [{"params": [rg.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    return getattr(rg.optim, cls_name)(groups, **kwargs)


def _torch_opt(torch, cls_name="SGD", lrs=(0.1, 0.02), **kwargs):
    groups = [{"params": [torch.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    return getattr(torch.optim, cls_name)(groups, **kwargs)


SCHEDULES = [
    ("StepLR", dict(step_size=7, gamma=0.3), "SGD", {}),
    ("MultiStepLR", dict(milestones=[3, 10, 10, 25], gamma=0.5), "SGD", {}),
    ("ExponentialLR", dict(gamma=0.93), "SGD", {}),
    ("CosineAnnealingLR", dict(T_max=12, eta_min=0.001), "SGD", {}),
    ("CosineAnnealingLR", dict(T_max=5), "Adam", {}),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e + 0.01 * e), "SGD", {}),
    ("OneCycleLR", dict(max_lr=[1.0, 0.3], total_steps=60), "SGD", dict(momentum=0.9)),
    ("OneCycleLR", dict(max_lr=0.5, epochs=6, steps_per_epoch=10, anneal_strategy="linear"), "SGD",
     dict(momentum=0.9)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=60, three_phase=True, pct_start=0.25), "Adam", {}),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=60, three_phase=True, anneal_strategy="linear",
                        cycle_momentum=False), "SGD", {}),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=60, base_momentum=[0.8, 0.7], max_momentum=0.99,
                        div_factor=10.0, final_div_factor=100.0), "AdamW", {}),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(SCHEDULES)]


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


@pytest.mark.oracle
@pytest.mark.parametrize("name, kwargs, opt_name, opt_kwargs", SCHEDULES, ids=IDS)
def test_learning_rates_equal_torchs_epoch_by_epoch(name, kwargs, opt_name, opt_kwargs):
    torch = pytest.importorskip("torch")
    ro, to = _rg_opt(opt_name, **opt_kwargs), _torch_opt(torch, opt_name, **opt_kwargs)
    rs = getattr(rg_sched, name)(ro, **kwargs)
    ts = getattr(torch.optim.lr_scheduler, name)(to, **kwargs)
    epochs = 59 if name == "OneCycleLR" else 60
    for epoch in range(epochs):
        assert rs.get_last_lr() == ts.get_last_lr(), epoch
        assert [g["lr"] for g in ro.param_groups] == [g["lr"] for g in to.param_groups], epoch
        assert _momenta(ro) == _momenta(to), epoch
        assert rs.last_epoch == ts.last_epoch
        ro.step()
        to.step()
        rs.step()
        ts.step()
    assert rs.get_last_lr() == ts.get_last_lr()
    assert sorted(rs.state_dict()) == sorted(ts.state_dict())


@pytest.mark.oracle
@pytest.mark.parametrize("name, kwargs", [("StepLR", dict(step_size=3, gamma=0.5)),
                                          ("MultiStepLR", dict(milestones=[2, 5], gamma=0.1)),
                                          ("ExponentialLR", dict(gamma=0.9)),
                                          ("CosineAnnealingLR", dict(T_max=10, eta_min=0.01))])
def test_step_with_an_epoch_uses_the_closed_form_as_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    ro, to = _rg_opt(), _torch_opt(torch)
    rs = getattr(rg_sched, name)(ro, **kwargs)
    ts = getattr(torch.optim.lr_scheduler, name)(to, **kwargs)
    for epoch in [4, 7, 2, 15]:
        ro.step()
        to.step()
        with pytest.warns(UserWarning, match="epoch parameter"):
            rs.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ts.step(epoch)
        assert rs.get_last_lr() == ts.get_last_lr(), epoch


@pytest.mark.oracle
@pytest.mark.parametrize("name, kwargs, opt_name, opt_kwargs", SCHEDULES, ids=IDS)
def test_state_dict_round_trip_continues_as_torch(name, kwargs, opt_name, opt_kwargs):
    torch = pytest.importorskip("torch")
    ro, to = _rg_opt(opt_name, **opt_kwargs), _torch_opt(torch, opt_name, **opt_kwargs)
    rs = getattr(rg_sched, name)(ro, **kwargs)
    ts = getattr(torch.optim.lr_scheduler, name)(to, **kwargs)
    for _ in range(20):
        ro.step()
        to.step()
        rs.step()
        ts.step()
    # A fresh optimizer and scheduler (made first, as torch asks), then both states loaded.
    ro2 = _rg_opt(opt_name, **opt_kwargs)
    rs2 = getattr(rg_sched, name)(ro2, **kwargs)
    ro2.load_state_dict(ro.state_dict())
    rs2.load_state_dict(rs.state_dict())
    for epoch in range(20, 40):
        ro2.step()
        to.step()
        rs2.step()
        ts.step()
        assert rs2.get_last_lr() == ts.get_last_lr(), epoch
        assert [g["lr"] for g in ro2.param_groups] == [g["lr"] for g in to.param_groups]
        assert _momenta(ro2) == _momenta(to)


REDUCE_GRID = [dict(mode=m, threshold_mode=t, cooldown=c, patience=p, min_lr=ml, factor=f)
               for m in ("min", "max") for t in ("rel", "abs") for c in (0, 2) for p in (0, 3)
               for ml, f in ((0, 0.5), ([0.05, 0.001], 0.1))]


@pytest.mark.oracle
@pytest.mark.parametrize("kwargs", REDUCE_GRID, ids=[str(i) for i in range(len(REDUCE_GRID))])
def test_reduce_on_plateau_equals_torch(kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    # A noisy metric that improves, then stalls, then improves a little.
    metrics = np.concatenate([np.linspace(1.0, 0.5, 10), 0.5 + 0.01 * rng.standard_normal(20),
                              np.linspace(0.5, 0.45, 10)])
    if kwargs["mode"] == "max":
        metrics = -metrics
    ro, to = _rg_opt(), _torch_opt(torch)
    rs = rg_sched.ReduceLROnPlateau(ro, **kwargs)
    ts = torch.optim.lr_scheduler.ReduceLROnPlateau(to, **kwargs)
    for epoch, m in enumerate(metrics):
        rs.step(float(m))
        ts.step(torch.tensor(float(m), dtype=torch.float64))
        assert rs.get_last_lr() == ts.get_last_lr(), epoch
        assert (rs.best, rs.num_bad_epochs, rs.cooldown_counter, rs.last_epoch) == \
            (ts.best, ts.num_bad_epochs, ts.cooldown_counter, ts.last_epoch), epoch
    assert sorted(rs.state_dict()) == sorted(ts.state_dict())
    fresh = rg_sched.ReduceLROnPlateau(_rg_opt())
    fresh.load_state_dict(rs.state_dict())
    assert (fresh.mode, fresh.best, fresh.num_bad_epochs) == (rs.mode, rs.best, rs.num_bad_epochs)


def test_reduce_on_plateau_takes_a_tensor_metric_and_eps():
    opt = _rg_opt(lrs=(1e-8,))
    sched = rg_sched.ReduceLROnPlateau(opt, patience=0, eps=1e-8)
    sched.step(rg.tensor(1.0))
    sched.step(rg.tensor(2.0))
    assert opt.param_groups[0]["lr"] == 1e-8     # a change below eps is skipped


def test_reduce_on_plateau_errors():
    with pytest.raises(ValueError, match="^Factor should be < 1.0.$"):
        rg_sched.ReduceLROnPlateau(_rg_opt(), factor=1.0)
    with pytest.raises(ValueError, match="^mode maximum is unknown!$"):
        rg_sched.ReduceLROnPlateau(_rg_opt(), mode="maximum")
    with pytest.raises(ValueError, match="^threshold mode relative is unknown!$"):
        rg_sched.ReduceLROnPlateau(_rg_opt(), threshold_mode="relative")
    with pytest.raises(ValueError, match="^expected 2 min_lrs, got 1$"):
        rg_sched.ReduceLROnPlateau(_rg_opt(), min_lr=[0.1])
    with pytest.raises(TypeError, match="^list is not an Optimizer$"):
        rg_sched.ReduceLROnPlateau([])
    opt = _rg_opt()
    sched = rg_sched.ReduceLROnPlateau(opt, min_lr=[0.0, 0.0], patience=0)
    opt.add_param_group({"params": [rg.zeros(1, requires_grad=True)], "lr": 0.5})
    sched.step(1.0)
    with pytest.raises(RuntimeError, match="differs from when `ReduceLROnPlateau` was initialized"):
        sched.step(2.0)


def test_one_cycle_errors():
    with pytest.raises(ValueError, match="^You must define either total_steps OR \\(epochs AND steps_per_epoch\\)$"):
        rg_sched.OneCycleLR(_rg_opt(momentum=0.9), max_lr=1.0)
    with pytest.raises(ValueError, match="^Expected positive integer total_steps, but got 0$"):
        rg_sched.OneCycleLR(_rg_opt(momentum=0.9), max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="^Expected positive integer epochs, but got -1$"):
        rg_sched.OneCycleLR(_rg_opt(momentum=0.9), max_lr=1.0, epochs=-1, steps_per_epoch=3)
    with pytest.raises(ValueError, match="^Expected float between 0 and 1 pct_start, but got 1.5$"):
        rg_sched.OneCycleLR(_rg_opt(momentum=0.9), max_lr=1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="^anneal_strategy must be one of 'cos' or 'linear', instead got exp$"):
        rg_sched.OneCycleLR(_rg_opt(momentum=0.9), max_lr=1.0, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="^max_lr must have the same length as optimizer.param_groups"):
        rg_sched.OneCycleLR(_rg_opt(momentum=0.9), max_lr=[1.0], total_steps=10)
    with pytest.raises(ValueError, match="^optimizer must support momentum or beta1 with `cycle_momentum`"):
        rg_sched.OneCycleLR(_rg_opt("Adagrad"), max_lr=1.0, total_steps=10)
    opt = _rg_opt(momentum=0.9)
    sched = rg_sched.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        opt.step()
        sched.step()
    with pytest.raises(ValueError, match="^Tried to step 4 times. The specified number of total steps is 3$"):
        sched.step()


def test_one_cycle_without_momentum_cycling_leaves_momentum():
    opt = _rg_opt("Adagrad")
    sched = rg_sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, cycle_momentum=False)
    opt.step()
    sched.step()
    assert "max_momentum" not in opt.param_groups[0]


def test_lambda_lr_errors_and_callable_objects_in_state_dict():
    with pytest.raises(ValueError, match="^Expected 2 lr_lambdas, but got 1$"):
        rg_sched.LambdaLR(_rg_opt(), [lambda e: 1.0])

    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    sched = rg_sched.LambdaLR(_rg_opt(), [Decay(0.5), lambda e: 1.0])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"rate": 0.5}, None]
    other = rg_sched.LambdaLR(_rg_opt(), [Decay(0.9), lambda e: 1.0])
    other.load_state_dict(sd)
    assert other.lr_lambdas[0].rate == 0.5
    assert "lr_lambdas" in sd      # the caller's dict is left whole


def test_scheduler_needs_an_optimizer_and_initial_lr_to_resume():
    with pytest.raises(TypeError, match="^list is not an Optimizer$"):
        rg_sched.StepLR([], step_size=1)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        rg_sched.StepLR(_rg_opt(), step_size=1, last_epoch=3)
    opt = _rg_opt()
    rg_sched.StepLR(opt, step_size=1)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.02]
    resumed = rg_sched.ExponentialLR(opt, gamma=0.5, last_epoch=4)
    assert resumed.last_epoch == 5 and resumed.get_last_lr() == [0.1, 0.02]    # no extra decay at construction


def test_scheduler_stepped_before_the_optimizer_warns():
    opt = _rg_opt()
    sched = rg_sched.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    opt2 = _rg_opt()
    sched2 = rg_sched.StepLR(opt2, step_size=1)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_get_lr_outside_step_warns():
    sched = rg_sched.StepLR(_rg_opt(), step_size=1)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_optimizer_step_still_returns_the_closures_loss():
    p = rg.tensor([1.0], requires_grad=True)
    opt = rg.optim.SGD([p], lr=0.1)
    rg_sched.StepLR(opt, step_size=1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert float(opt.step(closure).detach()) == 1.0
    assert opt._opt_called


def test_tensor_learning_rate_is_filled_in_place():
    lr = rg.tensor(0.5)
    p = rg.zeros(1, requires_grad=True)
    opt = rg.optim.SGD([p], lr=lr)
    sched = rg_sched.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and float(lr) == 0.25
    last = sched.get_last_lr()[0]
    assert last is not lr and float(last) == 0.25


def test_cosine_annealing_closed_form_when_left_alone():
    opt = _rg_opt(lrs=(1.0,))
    sched = rg_sched.CosineAnnealingLR(opt, T_max=10, eta_min=0.1)
    for epoch in range(1, 11):
        opt.step()
        sched.step()
        expected = 0.1 + 0.9 * (1 + math.cos(math.pi * epoch / 10)) / 2
        assert abs(sched.get_last_lr()[0] - expected) < 1e-12
