"""rg.optim.swa_utils against torch.optim.swa_utils: AveragedModel with SWA and
EMA (functions of one tensor and of lists, with and without buffers) along a
training run, SWALR's learning-rate sequences, update_bn on BatchNorm models,
state dicts, and the errors."""
import io

import numpy as np
import pytest

import retrograd as rg
from retrograd.optim import swa_utils as rswa

torch = pytest.importorskip("torch")
from torch.optim import swa_utils as tswa  # noqa: E402

pytestmark = pytest.mark.oracle


@pytest.fixture(autouse=True)
def _torch_float64_default():
    # both sides build float64 models (the suite's retrograd default is float64)
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _np(t):
    return t.detach().numpy()


def _models():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    rm = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.BatchNorm1d(4), rg.nn.Tanh(), rg.nn.Linear(4, 2))
    with rg.no_grad():
        for (name, p), (tname, tp) in zip(rm.named_parameters(), tm.named_parameters()):
            assert name == tname
            p.copy_(rg.tensor(_np(tp)))
    return rm, tm


def _assert_same_state(r_module, t_module, rtol=1e-12):
    rsd, tsd = r_module.state_dict(), t_module.state_dict()
    assert list(rsd) == list(tsd)
    for key, tv in tsd.items():
        rv = rsd[key]
        assert rv.dtype == np.dtype(str(tv.dtype).replace("torch.", "")), key
        np.testing.assert_allclose(_np(rv), _np(tv), rtol=rtol, atol=rtol, err_msg=key)


def _train(rm, tm, r_avg, t_avg, steps=8, every=1, seed=0):
    """SGD on both models, folding them into the averaged models after each step (every `every` steps)."""
    rng = np.random.default_rng(seed)
    r_opt = rg.optim.SGD(rm.parameters(), lr=0.1, momentum=0.5)
    t_opt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.5)
    for k in range(steps):
        x = rng.standard_normal((6, 3))
        y = rng.standard_normal((6, 2))
        for model, opt, lib in ((rm, r_opt, rg), (tm, t_opt, torch)):
            opt.zero_grad()
            ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean().backward()
            opt.step()
        if k % every == 0:
            r_avg.update_parameters(rm)
            t_avg.update_parameters(tm)
            _assert_same_state(r_avg, t_avg)
            # the averaged model is a separate copy: training does not touch it
            assert all(a is not b for a, b in zip(r_avg.module.parameters(), rm.parameters()))


AVERAGING = {
    "swa": ({}, {}),
    "swa-fn": ({"avg_fn": rswa.get_swa_avg_fn()}, {"avg_fn": tswa.get_swa_avg_fn()}),
    "ema-fn": ({"avg_fn": rswa.get_ema_avg_fn(0.7)}, {"avg_fn": tswa.get_ema_avg_fn(0.7)}),
    "ema-multi": ({"multi_avg_fn": rswa.get_ema_multi_avg_fn(0.7)},
                  {"multi_avg_fn": tswa.get_ema_multi_avg_fn(0.7)}),
    "swa-multi": ({"multi_avg_fn": rswa.get_swa_multi_avg_fn()}, {"multi_avg_fn": tswa.get_swa_multi_avg_fn()}),
}


# (torch's list SWA refuses the int64 num_batches_tracked buffer: tested below)
CASES = [(name, use_buffers) for name in AVERAGING for use_buffers in (False, True)
         if not (name == "swa-multi" and use_buffers)]


@pytest.mark.parametrize("name, use_buffers", CASES)
def test_averaged_model_matches_torch(name, use_buffers):
    r_kw, t_kw = AVERAGING[name]
    rm, tm = _models()
    r_avg = rswa.AveragedModel(rm, use_buffers=use_buffers, **r_kw)
    t_avg = tswa.AveragedModel(tm, use_buffers=use_buffers, **t_kw)
    _assert_same_state(r_avg, t_avg)
    _train(rm, tm, r_avg, t_avg)
    assert int(r_avg.n_averaged) == 8 and r_avg.n_averaged.dtype == np.int64
    # forward runs the averaged copy
    x = np.random.default_rng(9).standard_normal((5, 3))
    r_avg.eval()
    t_avg.eval()
    np.testing.assert_allclose(_np(r_avg(rg.tensor(x))), _np(t_avg(torch.tensor(x))), rtol=1e-12, atol=1e-12)


def test_swa_is_the_mean_of_the_visited_weights():
    model = rg.nn.Linear(2, 2)
    avg = rswa.AveragedModel(model)
    seen = []
    for k in range(5):
        with rg.no_grad():
            for p in model.parameters():
                p.add_(float(k + 1))
        seen.append([_np(p).copy() for p in model.parameters()])
        avg.update_parameters(model)
    for i, p in enumerate(avg.module.parameters()):
        np.testing.assert_allclose(_np(p), np.mean([s[i] for s in seen], axis=0), rtol=1e-14)


@pytest.mark.float32_default
def test_list_swa_weight_is_of_the_default_dtype_as_torch():
    # torch computes the weight 1 / (n + 1) as a tensor of its default dtype
    # (float32 here): float64 averages take the float32-rounded weight; so does retrograd.
    torch.set_default_dtype(torch.float32)
    tm = torch.nn.Linear(3, 2).double()
    rm = rg.nn.Linear(3, 2, dtype=rg.float64)
    with rg.no_grad():
        rm.weight.copy_(rg.tensor(_np(tm.weight)))
        rm.bias.copy_(rg.tensor(_np(tm.bias)))
    r_avg = rswa.AveragedModel(rm, multi_avg_fn=rswa.get_swa_multi_avg_fn())
    t_avg = tswa.AveragedModel(tm, multi_avg_fn=tswa.get_swa_multi_avg_fn())
    exact = rswa.AveragedModel(rm)      # the default on the CPU divides exactly, as torch's
    for k in range(4):
        with torch.no_grad(), rg.no_grad():
            for rp, tp in zip(rm.parameters(), tm.parameters()):
                tp.mul_(-1.3).add_(0.7)
                rp.copy_(rg.tensor(_np(tp)))
        r_avg.update_parameters(rm)
        t_avg.update_parameters(tm)
        exact.update_parameters(rm)
    for rp, tp in zip(r_avg.parameters(), t_avg.parameters()):
        np.testing.assert_allclose(_np(rp), _np(tp), rtol=1e-14, atol=1e-14)
    # the float32-rounded weights 1/3 leave the list average off the exact mean by float32 rounding
    diff = max(float(np.max(np.abs(_np(a) - _np(b)))) for a, b in zip(r_avg.parameters(), exact.parameters()))
    assert 1e-12 < diff < 1e-6


def test_list_swa_refuses_integer_buffers_as_torch():
    rm, tm = _models()
    r_avg = rswa.AveragedModel(rm, multi_avg_fn=rswa.get_swa_multi_avg_fn(), use_buffers=True)
    t_avg = tswa.AveragedModel(tm, multi_avg_fn=tswa.get_swa_multi_avg_fn(), use_buffers=True)
    for avg, model in ((r_avg, rm), (t_avg, tm)):
        avg.update_parameters(model)
        with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
            avg.update_parameters(model)


def test_buffers_follow_the_model_without_use_buffers():
    rm, tm = _models()
    r_avg = rswa.AveragedModel(rm)
    rm.train()
    rm(rg.tensor(np.random.default_rng(1).standard_normal((5, 3))))
    r_avg.update_parameters(rm)
    np.testing.assert_array_equal(_np(r_avg.module[1].running_mean), _np(rm[1].running_mean))
    assert r_avg.module[1].running_mean is not rm[1].running_mean
    assert int(r_avg.module[1].num_batches_tracked) == 1


def test_averaged_model_state_dict_and_copy():
    rm, tm = _models()
    r_avg = rswa.AveragedModel(rm)
    t_avg = tswa.AveragedModel(tm)
    assert list(r_avg.state_dict()) == list(t_avg.state_dict())
    assert "n_averaged" in r_avg.state_dict()
    r_avg.update_parameters(rm)
    buf = io.BytesIO()
    rg.save(r_avg.state_dict(), buf)
    buf.seek(0)
    other = rswa.AveragedModel(rm)
    other.load_state_dict(rg.load(buf))
    assert int(other.n_averaged) == 1
    # parameters of the average are parameters of the AveragedModel (for an optimizer or a checkpoint)
    assert len(list(r_avg.parameters())) == len(list(rm.parameters()))
    # the copy is deep: changing the model leaves the average
    with rg.no_grad():
        rm[0].weight.fill_(5.0)
    assert not np.allclose(_np(r_avg.module[0].weight), 5.0)
    # device: the copy moved there
    on_cpu = rswa.AveragedModel(rm, device="cpu")
    assert str(on_cpu.module[0].weight.device) == "cpu" and str(on_cpu.n_averaged.device) == "cpu"


def test_averaged_model_refuses_both_functions():
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        rswa.AveragedModel(rg.nn.Linear(1, 1), avg_fn=rswa.get_swa_avg_fn(),
                           multi_avg_fn=rswa.get_swa_multi_avg_fn())


@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_ema_decay_outside_unit_interval(decay):
    for lib in (rswa, tswa):
        for factory in (lib.get_ema_avg_fn, lib.get_ema_multi_avg_fn):
            with pytest.raises(ValueError, match=f"Invalid decay value {decay} provided"):
                factory(decay)


def test_averaging_functions_match_torch():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    pairs = [(rswa.get_ema_avg_fn(0.3), tswa.get_ema_avg_fn(0.3)), (rswa.get_swa_avg_fn(), tswa.get_swa_avg_fn())]
    for r_fn, t_fn in pairs:
        for n in (1, 4):
            got = r_fn(rg.tensor(a), rg.tensor(b), rg.tensor(n))
            want = t_fn(torch.tensor(a), torch.tensor(b), torch.tensor(n))
            np.testing.assert_allclose(_np(got), _np(want), rtol=1e-15)
    # the integer EMA (a buffer such as num_batches_tracked) truncates as torch's
    ri, ti = [rg.tensor([10, 3])], [torch.tensor([10, 3])]
    rswa.get_ema_multi_avg_fn(0.5)(ri, [rg.tensor([5, 8])], 1)
    tswa.get_ema_multi_avg_fn(0.5)(ti, [torch.tensor([5, 8])], 1)
    np.testing.assert_array_equal(_np(ri[0]), _np(ti[0]))


# -- SWALR ----------------------------------------------------------------------


def _lr_sequences(kwargs, *, groups=((0.5,),), steps=14, before=None, lrs_per_group=(1.0,)):
    out = []
    for lib, swa in ((rg, rswa), (torch, tswa)):
        params = [lib.zeros(1, requires_grad=True) for _ in lrs_per_group]
        opt = lib.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, lrs_per_group)], lr=1.0)
        seq = []
        if before is not None:
            # another schedule first, then SWALR takes over from the rate it left
            pre = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=before)
            for _ in range(before // 2):
                opt.step()
                pre.step()
        sched = swa.SWALR(opt, **kwargs)
        seq.append([g["lr"] for g in opt.param_groups])
        for _ in range(steps):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr())
        out.append(seq)
    return out


@pytest.mark.parametrize("kwargs", [
    dict(swa_lr=0.05), dict(swa_lr=0.05, anneal_strategy="linear"), dict(swa_lr=0.05, anneal_epochs=0),
    dict(swa_lr=0.05, anneal_epochs=1), dict(swa_lr=0.3, anneal_epochs=3, anneal_strategy="linear"),
    dict(swa_lr=2.0, anneal_epochs=4),
], ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_swalr_sequences_match_torch(kwargs):
    r_seq, t_seq = _lr_sequences(kwargs)
    np.testing.assert_allclose(np.array(r_seq), np.array(t_seq), rtol=1e-15, atol=0)
    assert r_seq[-1] == [pytest.approx(kwargs["swa_lr"])]


def test_swalr_per_group_rates_and_after_another_schedule_match_torch():
    kwargs = dict(swa_lr=[0.1, 0.02], anneal_epochs=5)
    r_seq, t_seq = _lr_sequences(kwargs, lrs_per_group=(1.0, 0.2), before=6)
    np.testing.assert_allclose(np.array(r_seq), np.array(t_seq), rtol=1e-15, atol=0)
    r_seq, t_seq = _lr_sequences(dict(swa_lr=0.01, anneal_strategy="linear"), lrs_per_group=(1.0, 0.2))
    np.testing.assert_allclose(np.array(r_seq), np.array(t_seq), rtol=1e-15, atol=0)


def test_swalr_state_dict_round_trip():
    opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    sched = rswa.SWALR(opt, swa_lr=0.1, anneal_epochs=6, anneal_strategy="linear")
    for _ in range(2):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    t_opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    t_sd = tswa.SWALR(t_opt, swa_lr=0.1).state_dict()
    assert sorted(sd) == sorted(t_sd)
    assert "anneal_func" not in sd and "optimizer" not in sd
    buf = io.BytesIO()
    rg.save(sd, buf)
    buf.seek(0)
    opt2 = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=opt.param_groups[0]["lr"])
    opt2.param_groups[0]["swa_lr"] = 0.1
    other = rswa.SWALR(opt2, swa_lr=0.1)          # cos, 10 epochs, until loaded
    other.load_state_dict(rg.load(buf))
    assert other.anneal_func is rswa.SWALR._linear_anneal and other.anneal_epochs == 6
    for _ in range(5):
        for o, s in ((opt, sched), (opt2, other)):
            o.step()
            s.step()
        assert other.get_last_lr() == pytest.approx(sched.get_last_lr(), rel=1e-15)


@pytest.mark.parametrize("kwargs, exc, message", [
    (dict(swa_lr=0.1, anneal_strategy="exp"), ValueError, "anneal_strategy must be one of 'cos' or 'linear'"),
    (dict(swa_lr=0.1, anneal_epochs=-1), ValueError, "anneal_epochs must be equal or greater than 0, got -1"),
    (dict(swa_lr=0.1, anneal_epochs=2.5), ValueError, "anneal_epochs must be equal or greater than 0, got 2.5"),
    (dict(swa_lr=[0.1, 0.2]), ValueError, "swa_lr must have the same length as optimizer.param_groups"),
])
def test_swalr_errors_match_torch(kwargs, exc, message):
    with pytest.raises(exc, match=message):
        tswa.SWALR(torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0), **kwargs)
    with pytest.raises(exc, match=message):
        rswa.SWALR(rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0), **kwargs)


def test_swalr_get_lr_outside_step_warns():
    sched = rswa.SWALR(rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0), swa_lr=0.1)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


# -- update_bn ---------------------------------------------------------------------


def _bn_models():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3, momentum=0.3), nn.ReLU(),
                             nn.InstanceNorm2d(3, affine=True, track_running_stats=True), nn.Flatten(),
                             nn.Linear(12, 4), nn.BatchNorm1d(4))
    tm, rm = build(torch), build(rg)
    with rg.no_grad():
        for (name, p), (tname, tp) in zip(rm.named_parameters(), tm.named_parameters()):
            assert name == tname
            p.copy_(rg.tensor(_np(tp)))
    return rm, tm


@pytest.mark.parametrize("batch_form", ["tensor", "pair", "dataloader"])
def test_update_bn_matches_torch(batch_form):
    rm, tm = _bn_models()
    rng = np.random.default_rng(2)
    data = [rng.standard_normal((5, 2, 4, 4)) * 3 + 1 for _ in range(4)]
    # statistics from an earlier pass, which update_bn throws away
    earlier = rng.standard_normal((5, 2, 4, 4))
    for model, lib in ((rm, rg), (tm, torch)):
        model.train()
        model(lib.tensor(earlier))
        model.eval()

    def loader(lib):
        if batch_form == "tensor":
            return [lib.tensor(x) for x in data]
        if batch_form == "pair":
            return [(lib.tensor(x), lib.zeros(5)) for x in data]
        ds = lib.utils.data.TensorDataset(lib.tensor(np.concatenate(data)), lib.zeros(20))
        return lib.utils.data.DataLoader(ds, batch_size=5)

    rswa.update_bn(loader(rg), rm, device="cpu" if batch_form == "pair" else None)
    tswa.update_bn(loader(torch), tm)
    _assert_same_state(rm, tm, rtol=1e-11)
    # the cumulative average over the batches, not a momentum average
    assert int(rm[1].num_batches_tracked) == 4
    # momenta and the training mode come back; instance norm is not reset (as torch's: not a _BatchNorm)
    assert rm[1].momentum == 0.3 and rm[6].momentum == 0.1 and rm[3].momentum == 0.1
    assert not rm.training and not rm[1].training


def test_update_bn_on_an_averaged_model_matches_torch():
    rm, tm = _models()
    r_avg, t_avg = rswa.AveragedModel(rm), tswa.AveragedModel(tm)
    _train(rm, tm, r_avg, t_avg, steps=4)
    rng = np.random.default_rng(7)
    data = [rng.standard_normal((6, 3)) for _ in range(3)]
    r_avg.train()
    rswa.update_bn([rg.tensor(x) for x in data], r_avg)
    tswa.update_bn([torch.tensor(x) for x in data], t_avg)
    _assert_same_state(r_avg, t_avg, rtol=1e-11)
    assert r_avg.training


def test_update_bn_without_batchnorm_does_nothing():
    model = rg.nn.Linear(2, 2).eval()
    calls = []
    model.register_forward_hook(lambda *args: calls.append(1))
    batches = iter([rg.zeros(1, 2)])
    rswa.update_bn(batches, model)
    assert calls == [] and not model.training
    assert next(batches).shape == (1, 2)       # the loader was not consumed


def test_public_names():
    assert set(rswa.__all__) == set(tswa.__all__)
    assert rg.optim.swa_utils is rswa
