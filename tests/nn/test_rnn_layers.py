"""rg.nn.RNN, LSTM and GRU against torch 2.13: outputs, final states and the
gradients of the input, the initial states and every parameter, for padded,
batch-first, unbatched and packed inputs; dropout; parameter names, repr and
the error cases."""
import warnings

import numpy as np
import pytest

import retrograd as rg
from retrograd.nn.utils import rnn as rg_rnn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

class _Float64Torch:
    """torch, as seen by the error cases: tensors in float64, as the double() layers."""
    float32 = torch.float32

    @staticmethod
    def ones(*shape, dtype=torch.float64):
        return torch.ones(*shape, dtype=dtype)


RNG = np.random.default_rng(0)


def _pair(name, *args, **kwargs):
    """A torch layer (float64) and a retrograd layer with its parameters, loaded from its state dict."""
    tm = getattr(torch.nn, name)(*args, **kwargs).double()
    rm = getattr(rg.nn, name)(*args, **kwargs)
    result = rm.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    return tm, rm


def _leaves(*arrays):
    return ([torch.tensor(a, requires_grad=True) for a in arrays], [rg.tensor(a, requires_grad=True) for a in arrays])


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), rtol=tol, atol=tol)


def _loss(lib, out, hidden):
    # weights the outputs and states unevenly, so that every element's gradient differs
    states = hidden if isinstance(hidden, tuple) else (hidden,)
    total = (out * lib.sin(out)).sum()
    for i, s in enumerate(states):
        total = total + (lib.cos(s) * (i + 2)).sum()
    return total


def _compare(tm, rm, x, states, packed_lengths=None, batch_first=False, tol=1e-10):
    (xt, *st), (xr, *sr) = _leaves(x, *states)
    hx_t = None if not st else (tuple(st) if len(st) == 2 else st[0])
    hx_r = None if not sr else (tuple(sr) if len(sr) == 2 else sr[0])
    in_t, in_r = xt, xr
    if packed_lengths is not None:
        in_t = torch.nn.utils.rnn.pack_padded_sequence(xt, packed_lengths, batch_first, enforce_sorted=False)
        in_r = rg_rnn.pack_padded_sequence(xr, packed_lengths, batch_first, enforce_sorted=False)
    out_t, hid_t = tm(in_t, hx_t)
    out_r, hid_r = rm(in_r, hx_r)
    if packed_lengths is not None:
        assert isinstance(out_r, rg_rnn.PackedSequence)
        assert out_r.batch_sizes.tolist() == out_t.batch_sizes.tolist()
        assert out_r.sorted_indices.tolist() == out_t.sorted_indices.tolist()
        out_t = torch.nn.utils.rnn.pad_packed_sequence(out_t, batch_first)[0]
        out_r = rg_rnn.pad_packed_sequence(out_r, batch_first)[0]
    assert out_r.shape == tuple(out_t.shape)
    _close(out_t, out_r, tol)
    for a, b in zip(hid_t if isinstance(hid_t, tuple) else (hid_t,), hid_r if isinstance(hid_r, tuple) else (hid_r,)):
        assert b.shape == tuple(a.shape)
        _close(a, b, tol)
    _loss(torch, out_t, hid_t).backward()
    _loss(rg, out_r, hid_r).backward()
    for a, b in zip([xt, *st], [xr, *sr]):
        _close(a.grad, b.grad, tol)
    names_t = [n for n, _ in tm.named_parameters()]
    names_r = [n for n, _ in rm.named_parameters()]
    assert names_t == names_r
    for (n, p), q in zip(tm.named_parameters(), rm.parameters()):
        assert q.grad is not None, n
        _close(p.grad, q.grad, tol)


CONFIGS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"num_layers": 2, "bidirectional": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"num_layers": 2, "proj_size": 3}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 2, "bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "bidirectional": True}),
    ("GRU", {"bias": False, "num_layers": 2}),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}" for n, kw in CONFIGS]


def _states(name, kw, batch, unbatched=False):
    dirs = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    out = kw.get("proj_size") or 5
    shape = (layers * dirs,) + (() if unbatched else (batch,))
    h = RNG.standard_normal(shape + (out,))
    if name == "LSTM":
        return [h, RNG.standard_normal(shape + (5,))]
    return [h]


@pytest.mark.parametrize("name, kw", CONFIGS, ids=IDS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_padded_input_as_torch(name, kw, batch_first):
    tm, rm = _pair(name, 4, 5, batch_first=batch_first, **kw)
    x = RNG.standard_normal((3, 6, 4) if batch_first else (6, 3, 4))
    _compare(tm, rm, x, _states(name, kw, 3))


@pytest.mark.parametrize("name, kw", CONFIGS, ids=IDS)
def test_without_initial_state_and_unbatched_as_torch(name, kw):
    tm, rm = _pair(name, 4, 5, **kw)
    _compare(tm, rm, RNG.standard_normal((5, 2, 4)), [])
    tm, rm = _pair(name, 4, 5, **kw)
    _compare(tm, rm, RNG.standard_normal((5, 4)), _states(name, kw, 1, unbatched=True))
    tm, rm = _pair(name, 4, 5, batch_first=True, **kw)
    _compare(tm, rm, RNG.standard_normal((5, 4)), [])


@pytest.mark.parametrize("name, kw", CONFIGS, ids=IDS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_packed_unsorted_input_as_torch(name, kw, batch_first):
    tm, rm = _pair(name, 4, 5, batch_first=batch_first, **kw)
    lengths = [3, 7, 1, 7, 5]          # unsorted, with a tie and a length-1 sequence
    x = RNG.standard_normal((5, 7, 4) if batch_first else (7, 5, 4))
    _compare(tm, rm, x, _states(name, kw, 5), packed_lengths=lengths, batch_first=batch_first)
    tm, rm = _pair(name, 4, 5, batch_first=batch_first, **kw)
    _compare(tm, rm, x, [], packed_lengths=lengths, batch_first=batch_first)


def test_packed_sorted_sequence_list_as_torch():
    tm, rm = _pair("LSTM", 3, 5, num_layers=2, bidirectional=True)
    seqs = [RNG.standard_normal((n, 3)) for n in (6, 4, 4, 2)]
    (st, sr) = _leaves(*seqs)
    out_t, (h_t, c_t) = tm(torch.nn.utils.rnn.pack_sequence(st))
    out_r, (h_r, c_r) = rm(rg_rnn.pack_sequence(sr))
    assert out_r.sorted_indices is None and out_r.unsorted_indices is None
    _close(out_t.data, out_r.data)
    _close(h_t, h_r)
    _close(c_t, c_r)
    (out_t.data.sum() + h_t.sum() * 2 + c_t.sum() * 3).backward()
    (out_r.data.sum() + h_r.sum() * 2 + c_r.sum() * 3).backward()
    for a, b in zip(st, sr):
        _close(a.grad, b.grad)


def test_dropout_in_eval_mode_is_off_as_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, rm = _pair("GRU", 4, 5, num_layers=3, dropout=0.7)
    tm.eval()
    rm.eval()
    _compare(tm, rm, RNG.standard_normal((4, 2, 4)), _states("GRU", {"num_layers": 3}, 2))


def test_dropout_one_in_training_zeroes_the_next_layers_input_as_torch():
    tm, rm = _pair("LSTM", 4, 5, num_layers=2, dropout=1.0)
    assert tm.training and rm.training
    _compare(tm, rm, RNG.standard_normal((4, 2, 4)), [])


def _identity_relu_rnn(p, size):
    # layer 0 passes a positive input through, layer 1 passes dropout(layer 0) through
    m = rg.nn.RNN(size, size, num_layers=2, nonlinearity="relu", dropout=p)
    with rg.no_grad():
        for name, w in m.named_parameters():
            w.copy_(rg.eye(size) if name.startswith("weight_ih") else rg.zeros(w.shape))
    return m


def test_dropout_in_training_between_layers_statistics():
    rg.manual_seed(1)
    p, size = 0.3, 50
    m = _identity_relu_rnn(p, size)
    x = rg.tensor(RNG.uniform(1.0, 2.0, (40, 10, size)), requires_grad=True)
    out, _ = m(x)
    kept = out.detach().numpy() != 0
    assert abs(1 - kept.mean() - p) < 0.02
    np.testing.assert_allclose(out.detach().numpy()[kept], x.detach().numpy()[kept] / (1 - p), rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / (1 - p), rtol=1e-12)
    out2, _ = m(x)
    assert ((out2.detach().numpy() != 0) != kept).any()      # a new mask each call
    m.eval()
    np.testing.assert_array_equal(m(x)[0].detach().numpy(), x.detach().numpy())


@pytest.mark.float32_default
def test_float32_lstm_as_torch():
    tm = torch.nn.LSTM(6, 8, num_layers=2, bidirectional=True, batch_first=True)
    rm = rg.nn.LSTM(6, 8, num_layers=2, bidirectional=True, batch_first=True)
    rm.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    assert rm.weight_ih_l0.dtype == rg.float32
    x = RNG.standard_normal((3, 10, 6)).astype(np.float32)
    _compare(tm, rm, x, [], tol=1e-5)


def test_parameters_names_shapes_and_init_as_torch():
    tm = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=3)
    rm = rg.nn.LSTM(4, 6, num_layers=2, bidirectional=True, proj_size=3)
    assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
        [(n, p.shape) for n, p in rm.named_parameters()]
    assert all(p.dtype == rg.float64 for p in rm.parameters())     # the default dtype (float64 in the tests)
    assert [[tuple(w.shape) for w in ws] for ws in tm.all_weights] == [[w.shape for w in ws] for ws in rm.all_weights]
    assert rm.all_weights[3][0] is rm.weight_ih_l1_reverse
    bound = 1 / np.sqrt(6)
    values = np.concatenate([p.detach().numpy().ravel() for p in rm.parameters()])
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.8 * bound
    assert rm.flatten_parameters() is None
    rm.weight_hh_l0 = rg.nn.Parameter(rg.zeros(24, 3))        # a replaced parameter is used from then on
    assert rm.all_weights[0][1] is rm.weight_hh_l0
    gru = rg.nn.GRU(3, 4, dtype=rg.float32)
    assert gru.weight_ih_l0.dtype == rg.float32 and gru(rg.zeros(2, 1, 3, dtype=rg.float32))[0].dtype == rg.float32


def test_repr_as_torch():
    for args, kw in [((3, 4), {}), ((3, 4, 2), {"nonlinearity": "relu"}),
                     ((3, 4), {"num_layers": 2, "bias": False, "batch_first": True, "dropout": 0.25,
                               "bidirectional": True})]:
        assert repr(rg.nn.RNN(*args, **kw)) == repr(torch.nn.RNN(*args, **kw))
        kw.pop("nonlinearity", None)
        assert repr(rg.nn.GRU(*args, **kw)) == repr(torch.nn.GRU(*args, **kw))
        assert repr(rg.nn.LSTM(*args, proj_size=2, **kw)) == repr(torch.nn.LSTM(*args, proj_size=2, **kw))


def test_load_state_dict_from_torch_is_strict_about_names():
    tm = torch.nn.GRU(3, 4, bidirectional=True)
    sd = {k: rg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    with pytest.raises(RuntimeError, match="weight_ih_l0_reverse"):
        rg.nn.GRU(3, 4).load_state_dict(sd)


def _raises(cls, match, make, call=None):
    with pytest.raises(cls, match=match):
        m = make()
        if call is not None:
            call(m)


def test_constructor_errors_as_torch():
    for lib in (torch, rg):
        nn = lib.nn
        _raises(ValueError, "Unknown nonlinearity 'sigmoid'", lambda: nn.RNN(3, 4, nonlinearity="sigmoid"))
        _raises(ValueError, "proj_size argument is only supported for LSTM", lambda: nn.RNN(3, 4, proj_size=2))
        _raises(ValueError, "proj_size argument is only supported for LSTM", lambda: nn.GRU(3, 4, proj_size=2))
        _raises(ValueError, "proj_size has to be smaller than hidden_size", lambda: nn.LSTM(3, 4, proj_size=4))
        _raises(ValueError, "proj_size should be a positive integer", lambda: nn.LSTM(3, 4, proj_size=-1))
        _raises(ValueError, "dropout should be a number in range", lambda: nn.LSTM(3, 4, dropout=1.5))
        _raises(ValueError, "dropout should be a number in range", lambda: nn.LSTM(3, 4, dropout=True))
        _raises(ValueError, "Unrecognized RNN mode: FOO", lambda: nn.RNNBase("FOO", 3, 4))
        _raises(ValueError, "hidden_size must be greater than zero", lambda: nn.GRU(3, 0))
        _raises(ValueError, "num_layers must be greater than zero", lambda: nn.GRU(3, 2, 0))
        _raises(TypeError, "input_size should be of type int", lambda: nn.GRU(3.0, 2))
        _raises(TypeError, "batch_first should be of type bool", lambda: nn.GRU(3, 2, batch_first=1))
        with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
            nn.LSTM(3, 4, dropout=0.5)


def test_forward_errors_as_torch():
    cases = [
        (RuntimeError, "input.size\\(-1\\) must be equal to input_size. Expected 3, got 4",
         "LSTM", lambda lib: (lib.ones(5, 2, 4),)),
        (RuntimeError, "Expected hidden\\[1\\] size \\(1, 2, 4\\), got \\[1, 3, 4\\]",
         "LSTM", lambda lib: (lib.ones(5, 2, 3), (lib.ones(1, 2, 4), lib.ones(1, 3, 4)))),
        (RuntimeError, "Expected hidden\\[0\\] size \\(1, 2, 4\\), got \\[2, 2, 4\\]",
         "LSTM", lambda lib: (lib.ones(5, 2, 3), (lib.ones(2, 2, 4), lib.ones(1, 2, 4)))),
        (RuntimeError, "hx and cx should also be 3-D but got \\(3-D, 2-D\\) tensors",
         "LSTM", lambda lib: (lib.ones(5, 2, 3), (lib.ones(1, 2, 4), lib.ones(2, 4)))),
        (ValueError, "LSTM: Expected input to be 2D or 3D, got 4D instead", "LSTM", lambda lib: (lib.ones(5, 2, 3, 1),)),
        (ValueError, "RNN: Expected input to be 2D or 3D, got 1D tensor instead", "RNN", lambda lib: (lib.ones(3),)),
        (RuntimeError, "Expected hidden size \\(1, 2, 4\\), got \\[1, 3, 4\\]",
         "GRU", lambda lib: (lib.ones(5, 2, 3), lib.ones(1, 3, 4))),
        (RuntimeError, "For batched 3-D input, hx should also be 3-D but got 2-D tensor",
         "GRU", lambda lib: (lib.ones(5, 2, 3), lib.ones(3, 4))),
        (RuntimeError, "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor",
         "RNN", lambda lib: (lib.ones(5, 3), lib.ones(1, 1, 4))),
        (RuntimeError, "Expected sequence length to be larger than 0 in RNN", "GRU", lambda lib: (lib.ones(0, 2, 3),)),
        (RuntimeError, "dtype", "GRU", lambda lib: (lib.ones(5, 2, 3), lib.ones(1, 2, 4, dtype=lib.float32))),
        (RuntimeError, "dtype", "RNN", lambda lib: (lib.ones(5, 2, 3), lib.ones(1, 2, 4, dtype=lib.float32))),
        (ValueError, "RNN input dtype .*float32.* does not match weight dtype .*float64",
         "GRU", lambda lib: (lib.ones(5, 2, 3, dtype=lib.float32),)),
    ]
    for cls, match, name, args in cases:
        for lib in (torch, rg):
            m = getattr(lib.nn, name)(3, 4)
            if lib is torch:
                m = m.double()
            with pytest.raises(cls, match=match):
                m(*args(_Float64Torch if lib is torch else lib))
    with pytest.raises(TypeError, match="pair"):
        rg.nn.LSTM(3, 4)(rg.ones(5, 2, 3), rg.ones(1, 2, 4))


def test_gradcheck_small_layers():
    rg.manual_seed(0)
    for m in (rg.nn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=2), rg.nn.GRU(2, 3, bidirectional=True),
              rg.nn.RNN(2, 3, nonlinearity="relu")):
        x = rg.randn(3, 2, 2, requires_grad=True)

        def f(x, m=m):
            out, hidden = m(rg_rnn.pack_padded_sequence(x, [3, 2]))
            return out.data, (hidden[0] if isinstance(hidden, tuple) else hidden)

        assert rg.autograd.gradcheck(f, (x,))
