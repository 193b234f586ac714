"""MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR, CyclicLR,
CosineAnnealingWarmRestarts, SequentialLR and ChainedScheduler against torch:
the learning rates (and cycled momenta) of every parameter group over 30
steps, alone and combined; state dicts; the argument checks with torch's
messages."""
import warnings

import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

STEPS = 30


def _optimizers(opt_name="SGD", **kwargs):
    """The same two-group optimizer in both libraries."""
    rps = [rg.zeros(2, requires_grad=True), rg.zeros(3, requires_grad=True)]
    tps = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]
    ro = getattr(rg.optim, opt_name)([{"params": rps[:1]}, {"params": rps[1:], "lr": 0.03}], lr=0.1, **kwargs)
    to = getattr(torch.optim, opt_name)([{"params": tps[:1]}, {"params": tps[1:], "lr": 0.03}], lr=0.1, **kwargs)
    return ro, to


def _close(a, b):
    return abs(a - b) <= 1e-12 * max(abs(b), 1e-300)


def _assert_same(rs, ts, ro, to, what):
    r_last, t_last = rs.get_last_lr(), ts.get_last_lr()
    assert len(r_last) == len(t_last), what
    assert all(_close(a, b) for a, b in zip(r_last, t_last)), f"{what}: {r_last} != {t_last}"
    for i, (rg_group, t_group) in enumerate(zip(ro.param_groups, to.param_groups)):
        assert _close(rg_group["lr"], t_group["lr"]), f"{what}: group {i} lr {rg_group['lr']} != {t_group['lr']}"
        for key in ("momentum", "betas"):
            if key in t_group:
                a, b = rg_group[key], t_group[key]
                if key == "betas":
                    a, b = a[0], b[0]
                assert _close(a, b), f"{what}: group {i} {key} {a} != {b}"


def run_both(make, steps=STEPS, opt_name="SGD", opt_kwargs=None, epochs=None):
    """Build the schedule with ``make(lr_scheduler_module, optimizer)`` in both
    libraries and step both, comparing the rates after construction and each step."""
    ro, to = _optimizers(opt_name, **(opt_kwargs or {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (the deprecated step(epoch) warns in both)
        rs, ts = make(rg.optim.lr_scheduler, ro), make(torch.optim.lr_scheduler, to)
        _assert_same(rs, ts, ro, to, "construction")
        for k in range(steps):
            ro.step()
            to.step()
            if epochs is None:
                rs.step()
                ts.step()
            else:
                rs.step(epochs[k])
                ts.step(epochs[k])
            _assert_same(rs, ts, ro, to, f"step {k}")
    return ro, to, rs, ts


M = rg.optim.lr_scheduler  # (only for the ids below)
SINGLE = {
    "multiplicative": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.95),
    "multiplicative-per-group": lambda s, o: s.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1.0 / (1 + 0.1 * e)]),
    "constant": lambda s, o: s.ConstantLR(o),
    "constant-0.5-7": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=7),
    "constant-0": lambda s, o: s.ConstantLR(o, factor=0.0, total_iters=0),
    "linear": lambda s, o: s.LinearLR(o),
    "linear-down": lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=12),
    "linear-to-zero": lambda s, o: s.LinearLR(o, start_factor=0.9, end_factor=0.0, total_iters=10),
    "polynomial": lambda s, o: s.PolynomialLR(o),
    "polynomial-2-20": lambda s, o: s.PolynomialLR(o, total_iters=20, power=2.0),
    "polynomial-half": lambda s, o: s.PolynomialLR(o, total_iters=8, power=0.5),
    "cyclic": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "cyclic-down": lambda s, o: s.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=3,
                                           step_size_down=5),
    "cyclic-triangular2": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="triangular2"),
    "cyclic-exp_range": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.9),
    "cyclic-scale_fn": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=lambda x: 1 / (1 + x)),
    "cyclic-scale_fn-iterations": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_mode="iterations",
                                                          scale_fn=lambda x: 0.97 ** x),
    "cyclic-no-momentum": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=5, cycle_momentum=False),
    "warm-restarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=5),
    "warm-restarts-mult": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.001),
    "warm-restarts-mult3": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=3),
}


@pytest.mark.parametrize("name", list(SINGLE))
def test_schedule_matches_torch(name):
    run_both(SINGLE[name], opt_kwargs={"momentum": 0.9})


@pytest.mark.parametrize("name", ["cyclic", "cyclic-triangular2", "cyclic-exp_range"])
def test_cyclic_momentum_cycles_adams_beta1_as_torch(name):
    ro, to, _, _ = run_both(SINGLE[name], opt_name="Adam")
    assert ro.param_groups[0]["betas"][1] == 0.999
    assert ro.param_groups[0]["max_momentum"] == to.param_groups[0]["max_momentum"] == 0.9


def test_cyclic_momentum_needs_momentum_or_betas_as_torch():
    for lib in (rg, torch):
        opt = lib.optim.Adagrad([lib.zeros(2, requires_grad=True)])
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1 with `cycle_momentum`"):
            lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1)
        lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, cycle_momentum=False)


def test_warm_restarts_with_fractional_epochs_matches_torch():
    iters = 4
    epochs = [e + i / iters for e in range(8) for i in range(iters)][:STEPS]
    run_both(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.002), epochs=epochs)
    run_both(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3), epochs=epochs)


def test_warm_restarts_jumping_to_epochs_matches_torch():
    epochs = [0, 5, 1.5, 13, 2.25, 40, 6.9, 7, 100.5, 3]
    run_both(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2), steps=len(epochs), epochs=epochs)
    run_both(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3), steps=len(epochs), epochs=epochs)


@pytest.mark.parametrize("name", ["constant-0.5-7", "linear-down", "polynomial-2-20"])
def test_closed_forms_of_step_epoch_match_torch(name):
    epochs = [3, 0, 11, 7, 25, 1, 19, 2, 30, 5]
    run_both(SINGLE[name], steps=len(epochs), epochs=epochs)


COMBOS = {
    "sequential-warmup-cosine": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=5), s.CosineAnnealingLR(o, T_max=20)], milestones=[5]),
    "sequential-three": lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, factor=0.5, total_iters=10), s.ExponentialLR(o, gamma=0.9),
            s.PolynomialLR(o, total_iters=15, power=2.0)], milestones=[4, 12]),
    "sequential-multiplicative-step": lambda s, o: s.SequentialLR(
        o, [s.MultiplicativeLR(o, lambda e: 0.9), s.StepLR(o, step_size=3, gamma=0.5)], milestones=[7]),
    "sequential-warm-restarts": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.2, total_iters=3), s.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2)],
        milestones=[3]),
    "chained": lambda s, o: s.ChainedScheduler([s.ConstantLR(o, factor=0.1, total_iters=4),
                                                s.ExponentialLR(o, gamma=0.9)]),
    "chained-with-optimizer": lambda s, o: s.ChainedScheduler(
        [s.LinearLR(o, start_factor=0.5, total_iters=6), s.MultiStepLR(o, milestones=[8, 16], gamma=0.3),
         s.PolynomialLR(o, total_iters=40)], optimizer=o),
    "chained-of-sequential": lambda s, o: s.ChainedScheduler(
        [s.SequentialLR(o, [s.LinearLR(o, start_factor=0.25, total_iters=4), s.ExponentialLR(o, gamma=0.95)],
                        milestones=[4]),
         s.MultiplicativeLR(o, lambda e: 0.99)], optimizer=o),
}


@pytest.mark.parametrize("name", list(COMBOS))
def test_combination_matches_torch(name):
    run_both(COMBOS[name])


class Halving:
    """A callable object: its attributes go into the state dict (functions do not)."""

    def __init__(self):
        self.factor = 0.5

    def __call__(self, epoch):
        return self.factor


STATEFUL = {
    "multiplicative": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.9),
    "constant": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=15),
    "linear": lambda s, o: s.LinearLR(o, start_factor=0.2, total_iters=15),
    "polynomial": lambda s, o: s.PolynomialLR(o, total_iters=25, power=1.5),
    "cyclic": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.95),
    "warm-restarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    "sequential": COMBOS["sequential-three"],
    "chained": COMBOS["chained"],
}


@pytest.mark.parametrize("name", list(STATEFUL))
def test_state_dict_round_trip_continues_as_torch(name):
    # 10 steps; a fresh optimizer and scheduler loaded from the state dicts continue as torch's.
    ro, to, rs, ts = run_both(STATEFUL[name], steps=10, opt_kwargs={"momentum": 0.9})
    r_sd, t_sd = rs.state_dict(), ts.state_dict()
    assert set(r_sd) == set(t_sd)
    for key, value in t_sd.items():
        if key not in ("_schedulers", "lr_lambdas", "base_lrs", "_last_lr", "max_lrs", "base_momentums",
                       "max_momentums", "_scale_fn_custom"):
            assert r_sd[key] == value, key
    if "_schedulers" in t_sd:
        for r_inner, t_inner in zip(r_sd["_schedulers"], t_sd["_schedulers"], strict=True):
            assert set(r_inner) == set(t_inner)
            assert r_inner["last_epoch"] == t_inner["last_epoch"]
    opt_state = ro.state_dict()
    ro2, _ = _optimizers(momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs2 = STATEFUL[name](rg.optim.lr_scheduler, ro2)
    ro2.load_state_dict(opt_state)
    rs2.load_state_dict(r_sd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(10, 25):
            ro2.step()
            to.step()
            rs2.step()
            ts.step()
            _assert_same(rs2, ts, ro2, to, f"loaded, step {k}")


def test_callable_objects_state_is_saved_as_torch():
    for lib in (rg, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
        sched = lib.optim.lr_scheduler.MultiplicativeLR(opt, Halving())
        sd = sched.state_dict()
        assert sd["lr_lambdas"] == [{"factor": 0.5}]
        sd["lr_lambdas"][0]["factor"] = 0.25
        sched.load_state_dict(sd)
        assert sched.lr_lambdas[0].factor == 0.25 and "lr_lambdas" in sd

        cyc = lib.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, scale_fn=Halving())
        csd = cyc.state_dict()
        assert csd["_scale_fn_custom"] == {"factor": 0.5} and "_scale_fn_ref" not in csd
        csd["_scale_fn_custom"]["factor"] = 0.125
        cyc.load_state_dict(csd)
        assert cyc.scale_fn(1) == 0.125


def _raises_as_torch(exc, match, build):
    with pytest.raises(exc, match=match) as t_err:
        build(torch)
    with pytest.raises(exc) as r_err:
        build(rg)
    assert str(r_err.value) == str(t_err.value)


def _opt(lib):
    return lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)


@pytest.mark.parametrize("exc, match, build", [
    (ValueError, "Constant multiplicative factor expected to be between 0 and 1.",
     lambda lib: lib.optim.lr_scheduler.ConstantLR(_opt(lib), factor=1.5)),
    (ValueError, "Starting multiplicative factor expected to be greater than 0",
     lambda lib: lib.optim.lr_scheduler.LinearLR(_opt(lib), start_factor=0.0)),
    (ValueError, "Ending multiplicative factor expected to be between 0 and 1.",
     lambda lib: lib.optim.lr_scheduler.LinearLR(_opt(lib), end_factor=1.5)),
    (ValueError, "Expected 1 lr_lambdas, but got 2",
     lambda lib: lib.optim.lr_scheduler.MultiplicativeLR(_opt(lib), [lambda e: 1.0, lambda e: 1.0])),
    (TypeError, "lr_lambda should be a function, but got float",
     lambda lib: lib.optim.lr_scheduler.MultiplicativeLR(_opt(lib), 0.5)),
    (ValueError, "mode is invalid and scale_fn is None",
     lambda lib: lib.optim.lr_scheduler.CyclicLR(_opt(lib), 0.1, 1.0, mode="square")),
    (ValueError, "max_lr must have the same length as optimizer.param_groups",
     lambda lib: lib.optim.lr_scheduler.CyclicLR(_opt(lib), 0.1, [1.0, 2.0])),
    (TypeError, "list is not an Optimizer", lambda lib: lib.optim.lr_scheduler.CyclicLR([], 0.1, 1.0)),
    (ValueError, "Expected positive integer T_0, but got 0",
     lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(lib), T_0=0)),
    (ValueError, "Expected positive integer T_0, but got 2.5",
     lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(lib), T_0=2.5)),
    (ValueError, "Expected integer T_mult >= 1, but got 0",
     lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(lib), T_0=2, T_mult=0)),
    (ValueError, "Expected float or int eta_min",
     lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(lib), T_0=2, eta_min="0")),
    (ValueError, "Expected non-negative epoch, but got -1",
     lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(lib), T_0=2).step(-1)),
    (ValueError, "SequentialLR expects at least one scheduler, but got no scheduler.",
     lambda lib: lib.optim.lr_scheduler.SequentialLR(_opt(lib), [], milestones=[])),
    (ValueError, "Sequential Schedulers expects number of schedulers provided to be one more",
     lambda lib: (lambda o: lib.optim.lr_scheduler.SequentialLR(
         o, [lib.optim.lr_scheduler.ConstantLR(o), lib.optim.lr_scheduler.ConstantLR(o)], milestones=[]))(_opt(lib))),
    (ValueError, "SequentialLR does not support `ReduceLROnPlateau` scheduler",
     lambda lib: (lambda o: lib.optim.lr_scheduler.SequentialLR(
         o, [lib.optim.lr_scheduler.ReduceLROnPlateau(o)], milestones=[]))(_opt(lib))),
    (TypeError, "SequentialLR at index 0 should have `optimizer` as its attribute.",
     lambda lib: lib.optim.lr_scheduler.SequentialLR(_opt(lib), [object()], milestones=[])),
    (ValueError, "ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.",
     lambda lib: lib.optim.lr_scheduler.ChainedScheduler([])),
    (ValueError, "ChainedScheduler does not support `ReduceLROnPlateau` scheduler",
     lambda lib: lib.optim.lr_scheduler.ChainedScheduler([lib.optim.lr_scheduler.ReduceLROnPlateau(_opt(lib))])),
])
def test_invalid_arguments_raise_as_torch(exc, match, build):
    _raises_as_torch(exc, match, build)


def test_schedulers_of_another_optimizer_are_refused():
    for lib, combinator in ((rg, "SequentialLR"), (torch, "SequentialLR"), (rg, "ChainedScheduler"),
                            (torch, "ChainedScheduler")):
        o1, o2 = _opt(lib), _opt(lib)
        s1, s2 = lib.optim.lr_scheduler.ExponentialLR(o1, 0.9), lib.optim.lr_scheduler.ExponentialLR(o2, 0.9)
        with pytest.raises(ValueError, match=f"{combinator} expects all schedulers to belong to the same optimizer"):
            if combinator == "SequentialLR":
                lib.optim.lr_scheduler.SequentialLR(o1, [s1, s2], milestones=[3])
            else:
                lib.optim.lr_scheduler.ChainedScheduler([s1, s2])


def test_names_are_exported():
    names = ["MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR", "CyclicLR", "CosineAnnealingWarmRestarts",
             "SequentialLR", "ChainedScheduler"]
    for name in names:
        assert name in rg.optim.lr_scheduler.__all__
        assert issubclass(getattr(rg.optim.lr_scheduler, name), rg.optim.lr_scheduler.LRScheduler)
