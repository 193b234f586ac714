"""The layers of rg.nn against their torch twins: the same parameters copied
across, then forward values, input and parameter gradients (float64), reprs,
state_dict keys, train/eval behaviour and default initialisation."""
import math
import re

import numpy as np
import pytest

import retrograd as rg

nn = rg.nn
torch = pytest.importorskip("torch")
tnn = torch.nn

pytestmark = [pytest.mark.oracle,
              pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths:UserWarning")]

RNG = np.random.default_rng(61)


def _r(*shape):
    return RNG.standard_normal(shape)


def _copy_params(rm, tm):
    """torch's module gets retrograd's parameters and buffers (float64)."""
    tm.double()
    tstate = tm.state_dict()
    rstate = rm.state_dict()
    assert list(rstate) == list(tstate)
    with torch.no_grad():
        for k, v in rstate.items():
            tstate[k].copy_(torch.tensor(np.asarray(v)))


def _check(rm, tm, inputs, rtol=1e-11, atol=1e-12, grad_inputs=True):
    """Forward outputs and gradients of the inputs and parameters."""
    _copy_params(rm, tm)
    rin = [rg.tensor(a, requires_grad=grad_inputs and a.dtype.kind == "f") for a in inputs]
    tin = [torch.tensor(a, requires_grad=grad_inputs and a.dtype.kind == "f") for a in inputs]
    ro, to = rm(*rin), tm(*tin)
    np.testing.assert_allclose(np.asarray(ro.detach()), to.detach().numpy(), rtol=rtol, atol=atol)
    if not to.requires_grad:
        return ro, to
    v = RNG.standard_normal(tuple(to.shape))
    (ro * rg.tensor(v)).sum().backward()
    (to * torch.tensor(v)).sum().backward()
    for a, b in zip(rin, tin):
        if b.requires_grad:
            np.testing.assert_allclose(np.asarray(a.grad), b.grad.numpy(), rtol=rtol * 10, atol=atol * 10)
    tparams = dict(tm.named_parameters())
    for name, p in rm.named_parameters():
        tp = tparams[name]
        if tp.grad is None:
            assert p.grad is None or not np.asarray(p.grad).any()
        else:
            np.testing.assert_allclose(np.asarray(p.grad), tp.grad.numpy(), rtol=rtol * 10, atol=atol * 10,
                                       err_msg=name)
    return ro, to


# (retrograd factory, torch factory, input shapes) for layers of one input
CASES = {
    "linear": (lambda m: m.Linear(5, 3), [(4, 5)]),
    "linear-nobias-3d": (lambda m: m.Linear(5, 3, bias=False), [(2, 4, 5)]),
    "linear-1d-input": (lambda m: m.Linear(5, 3), [(5,)]),
    "identity": (lambda m: m.Identity(3, x=1), [(2, 3)]),
    "conv1d": (lambda m: m.Conv1d(4, 6, 3, stride=2, padding=1), [(2, 4, 9)]),
    "conv1d-groups-dil": (lambda m: m.Conv1d(4, 6, 3, dilation=2, groups=2, bias=False), [(2, 4, 11)]),
    "conv1d-same-reflect": (lambda m: m.Conv1d(3, 2, 4, padding="same", padding_mode="reflect"), [(2, 3, 8)]),
    "conv1d-circular-unbatched": (lambda m: m.Conv1d(3, 2, 3, padding=2, padding_mode="circular"), [(3, 7)]),
    "conv2d": (lambda m: m.Conv2d(3, 4, 3), [(2, 3, 7, 6)]),
    "conv2d-full": (lambda m: m.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
                    [(2, 4, 8, 7)]),
    "conv2d-same": (lambda m: m.Conv2d(3, 4, (4, 3), padding="same", dilation=(1, 2)), [(1, 3, 6, 7)]),
    "conv2d-valid": (lambda m: m.Conv2d(3, 4, 2, padding="valid"), [(1, 3, 5, 5)]),
    "conv2d-reflect": (lambda m: m.Conv2d(3, 4, 3, padding=(1, 2), padding_mode="reflect"), [(2, 3, 6, 5)]),
    "conv2d-replicate": (lambda m: m.Conv2d(3, 4, 3, stride=2, padding=1, padding_mode="replicate"), [(2, 3, 6, 5)]),
    "conv2d-circular": (lambda m: m.Conv2d(3, 4, 3, padding=2, padding_mode="circular"), [(2, 3, 6, 5)]),
    "conv2d-same-circular-unbatched": (lambda m: m.Conv2d(2, 3, 4, padding="same", padding_mode="circular"),
                                       [(2, 6, 6)]),
    "maxpool2d": (lambda m: m.MaxPool2d(2), [(2, 3, 6, 7)]),
    "maxpool2d-full": (lambda m: m.MaxPool2d((3, 2), stride=(2, 1), padding=1, dilation=(1, 2), ceil_mode=True),
                       [(2, 3, 7, 8)]),
    "avgpool2d": (lambda m: m.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                  [(2, 3, 7, 8)]),
    "avgpool2d-divisor": (lambda m: m.AvgPool2d(2, divisor_override=3), [(1, 2, 4, 4)]),
    "adaptiveavgpool2d": (lambda m: m.AdaptiveAvgPool2d((3, None)), [(2, 3, 7, 5)]),
    "adaptiveavgpool2d-int": (lambda m: m.AdaptiveAvgPool2d(4), [(2, 3, 9, 6)]),
    "flatten": (lambda m: m.Flatten(), [(2, 3, 4, 5)]),
    "flatten-range": (lambda m: m.Flatten(0, 2), [(2, 3, 4, 5)]),
    "unflatten": (lambda m: m.Unflatten(1, (3, -1)), [(2, 12)]),
    "unflatten-neg": (lambda m: m.Unflatten(-1, [2, 2]), [(2, 3, 4)]),
    "layernorm": (lambda m: m.LayerNorm(5), [(3, 5)]),
    "layernorm-2d": (lambda m: m.LayerNorm((4, 5), eps=1e-3), [(2, 3, 4, 5)]),
    "layernorm-nobias": (lambda m: m.LayerNorm([5], bias=False), [(3, 5)]),
    "layernorm-noaffine": (lambda m: m.LayerNorm(5, elementwise_affine=False), [(3, 5)]),
    "relu": (lambda m: m.ReLU(), [(3, 4)]),
    "leakyrelu": (lambda m: m.LeakyReLU(0.2), [(3, 4)]),
    "gelu": (lambda m: m.GELU(), [(3, 4)]),
    "gelu-tanh": (lambda m: m.GELU("tanh"), [(3, 4)]),
    "silu": (lambda m: m.SiLU(), [(3, 4)]),
    "tanh": (lambda m: m.Tanh(), [(3, 4)]),
    "sigmoid": (lambda m: m.Sigmoid(), [(3, 4)]),
    "softmax": (lambda m: m.Softmax(dim=1), [(3, 4)]),
    "softmax-neg": (lambda m: m.Softmax(-1), [(2, 3, 4)]),
    "logsoftmax": (lambda m: m.LogSoftmax(dim=0), [(3, 4)]),
    "bilinear": (lambda m: m.Bilinear(3, 4, 5), [(6, 3), (6, 4)]),
    "bilinear-nobias-3d": (lambda m: m.Bilinear(3, 4, 5, bias=False), [(2, 6, 3), (2, 6, 4)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_layer_matches_torch(name):
    factory, shapes = CASES[name]
    rm, tm = factory(nn), factory(tnn)
    _check(rm, tm, [_r(*s) for s in shapes])
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in rm.named_parameters()] == [n for n, _ in tm.named_parameters()]


REPRS = [
    lambda m: m.Conv2d(3, 8, (3, 5), stride=2, padding=1, dilation=2, bias=False, padding_mode="reflect"),
    lambda m: m.Conv2d(4, 8, 3, padding="same", groups=2),
    lambda m: m.Conv1d(3, 8, 3, padding="valid"),
    lambda m: m.MaxPool2d((2, 3), 1, 1, 2, True, True),
    lambda m: m.AvgPool2d(2, ceil_mode=True, divisor_override=3),
    lambda m: m.Dropout(0.25, inplace=True),
    lambda m: m.LayerNorm([2, 3], elementwise_affine=False, bias=False),
    lambda m: m.BatchNorm1d(3),
    lambda m: m.BatchNorm2d(3, momentum=None, affine=False, track_running_stats=False),
    lambda m: m.BatchNorm2d(3, eps=1e-3, bias=False),
    lambda m: m.Embedding(10, 3),
    lambda m: m.Embedding(10, 3, padding_idx=-1, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True),
    lambda m: m.ReLU(True), lambda m: m.LeakyReLU(), lambda m: m.LeakyReLU(0.2, True), lambda m: m.SiLU(True),
    lambda m: m.Softmax(), lambda m: m.LogSoftmax(2),
    lambda m: m.CrossEntropyLoss(), lambda m: m.NLLLoss(ignore_index=3), lambda m: m.MSELoss(),
    lambda m: m.L1Loss(), lambda m: m.BCEWithLogitsLoss(), lambda m: m.HuberLoss(delta=2.0),
    lambda m: m.Sequential(m.Conv2d(1, 4, 3), m.BatchNorm2d(4), m.ReLU(), m.MaxPool2d(2), m.Flatten(),
                           m.Linear(4, 2)),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_repr_matches_torch(i):
    assert repr(REPRS[i](nn)) == repr(REPRS[i](tnn))


# --- constructor errors ----------------------------------------------------------------

ERRORS = [
    lambda m: m.Conv2d(3, 4, 3, groups=0),
    lambda m: m.Conv2d(3, 4, 3, groups=2),
    lambda m: m.Conv2d(4, 3, 3, groups=2),
    lambda m: m.Conv2d(3, 4, 3, padding="full"),
    lambda m: m.Conv2d(3, 4, 3, stride=2, padding="same"),
    lambda m: m.Conv1d(3, 4, 3, padding_mode="mirror"),
    lambda m: m.Dropout(1.5),
    lambda m: m.Dropout(-0.1),
    lambda m: m.Embedding(10, 3, padding_idx=10),
    lambda m: m.Embedding(10, 3, padding_idx=-11),
    lambda m: m.Embedding(10, 3, _weight=rg.ones(3, 3) if m is nn else torch.ones(3, 3)),
    lambda m: m.Embedding.from_pretrained(rg.ones(3) if m is nn else torch.ones(3)),
    lambda m: m.Unflatten(1, (2, "a")),
    lambda m: m.Unflatten(1, 5),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_constructor_errors_match_torch(i):
    with pytest.raises(Exception) as te:
        ERRORS[i](tnn)
    with pytest.raises(type(te.value)) as re_:
        ERRORS[i](nn)
    # the message up to where torch lists values (a set: its order varies)
    assert re.split(r"[:({\[]", str(te.value))[0].strip() in str(re_.value)


def test_forward_errors_match_torch():
    for make, shape in [(lambda m: m.BatchNorm1d(3), (2, 3, 4, 5)), (lambda m: m.BatchNorm2d(3), (2, 3)),
                        (lambda m: m.Unflatten(1, (2, 3)), (2, 7))]:
        with pytest.raises(Exception) as te:
            make(tnn)(torch.ones(*shape))
        with pytest.raises(type(te.value), match=str(te.value).replace("[", r"\[").replace("(", r"\(")
                           .replace(")", r"\)").replace("]", r"\]")):
            make(nn)(rg.ones(*shape))


# --- BatchNorm -----------------------------------------------------------------------------

@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)),
                                       ("BatchNorm2d", (4, 3, 5, 2))])
@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
@pytest.mark.parametrize("affine", [True, False])
def test_batchnorm_training_steps_and_eval_match_torch(cls, shape, momentum, affine):
    rm = getattr(nn, cls)(3, momentum=momentum, affine=affine)
    tm = getattr(tnn, cls)(3, momentum=momentum, affine=affine)
    if affine:
        with rg.no_grad():
            rm.weight.copy_(rg.tensor(_r(3)))
            rm.bias.copy_(rg.tensor(_r(3)))
    assert rm.training
    # the first step also compares the gradients (batch statistics in the graph)
    _check(rm, tm, [_r(*shape) * 3 + 1])
    for _ in range(4):
        x = _r(*shape) * 2 + 0.5
        ro = rm(rg.tensor(x))
        to = tm(torch.tensor(x))
        np.testing.assert_allclose(np.asarray(ro.detach()), to.detach().numpy(), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(np.asarray(rm.running_mean), tm.running_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(rm.running_var), tm.running_var.numpy(), rtol=1e-12)
    assert int(rm.num_batches_tracked) == int(tm.num_batches_tracked) == 5
    assert rm.num_batches_tracked.dtype == np.int64
    rm.eval()
    tm.eval()
    x = _r(*shape)
    mean_before = np.asarray(rm.running_mean).copy()
    _check(rm, tm, [x])
    np.testing.assert_array_equal(np.asarray(rm.running_mean), mean_before)
    assert int(rm.num_batches_tracked) == 5


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    rm = nn.BatchNorm2d(3, track_running_stats=False)
    tm = tnn.BatchNorm2d(3, track_running_stats=False)
    assert rm.running_mean is None and rm.num_batches_tracked is None
    assert list(rm.state_dict()) == list(tm.state_dict()) == ["weight", "bias"]
    rm.eval()
    tm.eval()
    _check(rm, tm, [_r(2, 3, 4, 4)])


def test_batchnorm_float32_buffers_and_reset():
    m = nn.BatchNorm1d(4, dtype=rg.float32)
    assert m.weight.dtype == m.running_var.dtype == np.float32 and m.num_batches_tracked.dtype == np.int64
    m(rg.tensor(_r(5, 4), dtype=rg.float32))
    assert m.running_mean.dtype == np.float32 and int(m.num_batches_tracked) == 1
    m.reset_running_stats()
    np.testing.assert_array_equal(np.asarray(m.running_var), np.ones(4))
    assert int(m.num_batches_tracked) == 0
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        m(rg.ones(1, 4, dtype=rg.float32))


def test_batchnorm_state_dict_roundtrip_restores_running_stats():
    a, b = nn.BatchNorm1d(3), nn.BatchNorm1d(3)
    for _ in range(3):
        a(rg.tensor(_r(8, 3)))
    b.load_state_dict(a.state_dict())
    for k in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_array_equal(np.asarray(getattr(b, k)), np.asarray(getattr(a, k)))


# --- Dropout ------------------------------------------------------------------------------------

def test_dropout_train_and_eval():
    m = nn.Dropout(0.3)
    x = rg.tensor(np.ones((200, 50)), requires_grad=True)
    rg.manual_seed(0)
    y = m(x)
    kept = np.asarray(y.detach()) != 0
    np.testing.assert_allclose(np.asarray(y.detach())[kept], 1 / 0.7)
    assert abs(kept.mean() - 0.7) < 0.02
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), kept / 0.7)
    m.eval()
    assert m(x) is x
    h = x * 1.0
    assert nn.Dropout(0.5, inplace=True)(h) is h
    assert repr(nn.Dropout()) == repr(tnn.Dropout())


# --- Embedding ----------------------------------------------------------------------------------

@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_matches_torch(padding_idx):
    rm = nn.Embedding(6, 3, padding_idx=padding_idx)
    tm = tnn.Embedding(6, 3, padding_idx=padding_idx)
    if padding_idx is not None:
        assert not np.asarray(rm.weight.detach())[padding_idx].any()
        assert rm.padding_idx == tm.padding_idx
    idx = np.array([[0, 2, 5, 2], [5, 1, 1, 0]])
    _check(rm, tm, [idx])
    if padding_idx is not None:
        assert not np.asarray(rm.weight.grad)[padding_idx].any()


def test_embedding_options_match_torch():
    rm = nn.Embedding(6, 3, max_norm=0.5, scale_grad_by_freq=True)
    tm = tnn.Embedding(6, 3, max_norm=0.5, scale_grad_by_freq=True)
    _copy_params(rm, tm)
    idx = np.array([1, 1, 4, 0])
    ro, to = rm(rg.tensor(idx)), tm(torch.tensor(idx))
    (ro ** 2).sum().backward()
    (to ** 2).sum().backward()
    np.testing.assert_allclose(np.asarray(ro.detach()), to.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(rm.weight.detach()), tm.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(rm.weight.grad), tm.weight.grad.numpy(), rtol=1e-12)


def test_embedding_from_pretrained_and_weight():
    table = _r(4, 3)
    m = nn.Embedding.from_pretrained(rg.tensor(table))
    assert not m.weight.requires_grad and isinstance(m.weight, nn.Parameter)
    np.testing.assert_array_equal(np.asarray(m(rg.tensor([3, 0]))), table[[3, 0]])
    m2 = nn.Embedding.from_pretrained(rg.tensor(table), freeze=False, padding_idx=1)
    tm2 = tnn.Embedding.from_pretrained(torch.tensor(table), freeze=False, padding_idx=1)
    assert repr(m2) == repr(tm2) and m2.weight.requires_grad
    np.testing.assert_array_equal(np.asarray(m2.weight.detach())[1], table[1])    # not zeroed, as torch
    m2(rg.tensor([1, 2])).sum().backward()
    np.testing.assert_array_equal(np.asarray(m2.weight.grad), [[0] * 3, [0] * 3, [1] * 3, [0] * 3])
    m3 = nn.Embedding(4, 3, _weight=rg.tensor(table), _freeze=True)
    assert not m3.weight.requires_grad
    with pytest.raises(ValueError, match="sparse"):
        nn.Embedding(4, 3, sparse=True)


# --- losses -----------------------------------------------------------------------------------

LOSSES = [
    (lambda m, T: m.CrossEntropyLoss(), "cls"),
    (lambda m, T: m.CrossEntropyLoss(weight=T([0.5, 1.0, 2.0, 1.5]), ignore_index=1, label_smoothing=0.1), "cls"),
    (lambda m, T: m.CrossEntropyLoss(reduction="sum"), "cls"),
    (lambda m, T: m.CrossEntropyLoss(reduction="none", label_smoothing=0.2), "prob"),
    (lambda m, T: m.NLLLoss(), "cls"),
    (lambda m, T: m.NLLLoss(weight=T([0.5, 1.0, 2.0, 1.5]), reduction="sum", ignore_index=0), "cls"),
    (lambda m, T: m.MSELoss(), "same"),
    (lambda m, T: m.MSELoss(reduction="none"), "same"),
    (lambda m, T: m.L1Loss(), "same"),
    (lambda m, T: m.L1Loss(reduction="sum"), "same"),
    (lambda m, T: m.BCEWithLogitsLoss(), "unit"),
    (lambda m, T: m.BCEWithLogitsLoss(weight=T([1.0, 2.0, 0.5, 1.0]), pos_weight=T([3.0, 1.0, 0.5, 2.0])), "unit"),
    (lambda m, T: m.HuberLoss(), "same"),
    (lambda m, T: m.HuberLoss(reduction="sum", delta=0.5), "same"),
]


@pytest.mark.parametrize("i", range(len(LOSSES)))
def test_loss_layers_match_torch(i):
    make, kind = LOSSES[i]
    rm = make(nn, lambda v: rg.tensor(v))
    tm = make(tnn, lambda v: torch.tensor(v, dtype=torch.float64))
    x = _r(5, 4)
    if kind == "cls":
        y = np.array([0, 3, 1, 2, 1])
    elif kind == "prob":
        y = np.exp(_r(5, 4))
        y /= y.sum(1, keepdims=True)
    elif kind == "unit":
        y = RNG.random((5, 4))
    else:
        y = _r(5, 4)
    rx, tx = rg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ro, to = rm(rx, rg.tensor(y)), tm(tx, torch.tensor(y))
    np.testing.assert_allclose(np.asarray(ro.detach()), to.detach().numpy(), rtol=1e-12, atol=1e-14)
    ro.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(np.asarray(rx.grad), tx.grad.numpy(), rtol=1e-11, atol=1e-14)
    assert repr(rm) == repr(tm)
    assert list(rm.state_dict()) == list(tm.state_dict())


def test_loss_legacy_arguments_warn_as_torch():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead"):
        m = nn.MSELoss(size_average=False)
    assert m.reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.CrossEntropyLoss(reduce=False).reduction == "none"


# --- default initialisation ---------------------------------------------------------------------

def _bound_check(t, bound):
    a = np.asarray(t.detach()).ravel()
    assert a.min() >= -bound and a.max() <= bound
    assert a.min() < -0.95 * bound and a.max() > 0.95 * bound
    np.testing.assert_allclose(a.std(), bound / math.sqrt(3), rtol=0.05)


@pytest.mark.parametrize("make,fan_in", [
    (lambda m: m.Linear(300, 200), 300),
    (lambda m: m.Conv2d(16, 64, 3), 16 * 9),
    (lambda m: m.Conv2d(16, 64, (3, 2), groups=4), 4 * 6),
    (lambda m: m.Conv1d(8, 400, 5), 40),
])
def test_default_init_of_linear_and_conv_matches_torch(make, fan_in):
    rg.manual_seed(0)
    m, t = make(nn), make(tnn)
    # torch's rule: weight U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform_ with a=sqrt(5)), bias alike
    bound = 1 / math.sqrt(fan_in)
    tb = t.weight.detach().abs().max().item()
    assert tb <= bound and m.weight.dtype == np.float64
    _bound_check(m.weight, bound)
    b = np.asarray(m.bias.detach())
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.5 * bound
    assert init_std_close(m.weight, t.weight)


def init_std_close(rw, tw):
    return abs(np.asarray(rw.detach()).std() - tw.detach().numpy().std()) < 0.05 * tw.detach().numpy().std()


def test_default_init_of_bilinear_norms_and_embedding():
    rg.manual_seed(1)
    m = nn.Bilinear(50, 30, 40)
    _bound_check(m.weight, 1 / math.sqrt(50))
    for norm in (nn.LayerNorm(7), nn.BatchNorm1d(7), nn.BatchNorm2d(7)):
        np.testing.assert_array_equal(np.asarray(norm.weight.detach()), np.ones(7))
        np.testing.assert_array_equal(np.asarray(norm.bias.detach()), np.zeros(7))
    e = np.asarray(nn.Embedding(500, 400).weight.detach())
    np.testing.assert_allclose(e.mean(), 0, atol=0.01)
    np.testing.assert_allclose(e.std(), 1, rtol=0.01)


def test_factory_kwargs_and_parameters():
    for m in (nn.Linear(3, 2, dtype=rg.float32), nn.Conv2d(2, 3, 3, dtype=rg.float32),
              nn.LayerNorm(3, dtype=rg.float32), nn.Embedding(4, 2, dtype=rg.float32),
              nn.Bilinear(2, 2, 2, dtype=rg.float32, device="cpu")):
        for p in m.parameters():
            assert p.dtype == np.float32 and isinstance(p, nn.Parameter) and p.requires_grad
    m = nn.Linear(3, 2, dtype=rg.float32)
    assert m(rg.ones(4, 3, dtype=rg.float32)).dtype == np.float32
    assert nn.Linear(3, 2, bias=False).bias is None
    assert [n for n, _ in nn.Conv1d(2, 2, 2, bias=False).named_parameters()] == ["weight"]
