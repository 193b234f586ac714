"""rg.lstm / rg.gru / rg.rnn_tanh / rg.rnn_relu (torch's ATen recurrent ops,
both overloads) and rg.embedding_bag (ATen's four results) against torch:
values, every gradient, and the errors."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

T, N, I, H = 4, 3, 3, 4
_MODULES = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn_tanh": torch.nn.RNN, "rnn_relu": torch.nn.RNN}


def _torch_layer(name, layers, bias, bidirectional, proj=0):
    kw = {"nonlinearity": "relu"} if name == "rnn_relu" else {}
    if proj:
        kw["proj_size"] = proj
    torch.manual_seed(0)
    return _MODULES[name](I, H, num_layers=layers, bias=bias, bidirectional=bidirectional, dtype=torch.float64, **kw)


def _leaves(arrays):
    # the same values as torch leaves and retrograd leaves
    return ([torch.tensor(a, requires_grad=True) for a in arrays], [rg.tensor(a, requires_grad=True) for a in arrays])


def _compare(out_t, out_r, leaves_t, leaves_r):
    assert len(out_t) == len(out_r)
    for a, b in zip(out_t, out_r):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10, atol=1e-12)
    rng = np.random.default_rng(1)
    seeds = [rng.standard_normal(tuple(a.shape)) for a in out_t]
    g_t = torch.autograd.grad(list(out_t), leaves_t, [torch.tensor(s) for s in seeds], allow_unused=True)
    g_r = rg.autograd.grad(list(out_r), leaves_r, [rg.tensor(s) for s in seeds], allow_unused=True)
    for a, b in zip(g_t, g_r):
        if a is None:
            assert b is None or not np.any(b.numpy())
        else:
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-9, atol=1e-11)


def _states(name, layers, dirs, batch, proj=0):
    rng = np.random.default_rng(2)
    h = rng.standard_normal((layers * dirs, batch, proj or H))
    if name == "lstm":
        return [h, rng.standard_normal((layers * dirs, batch, H))]
    return [h]


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("layers,bias,bidirectional,batch_first", [
    (1, True, False, False), (2, False, True, True), (2, True, True, False)])
def test_padded_overload_matches_torch(name, layers, bias, bidirectional, batch_first):
    dirs = 2 if bidirectional else 1
    params = [p.detach().numpy() for p in _torch_layer(name, layers, bias, bidirectional)._flat_weights]
    x = np.random.default_rng(3).standard_normal((N, T, I) if batch_first else (T, N, I))
    arrays = [x] + _states(name, layers, dirs, N) + params
    lt, lr = _leaves(arrays)
    ns = len(arrays) - len(params) - 1
    hx_t = (lt[1], lt[2]) if name == "lstm" else lt[1]
    hx_r = (lr[1], lr[2]) if name == "lstm" else lr[1]
    args = (bias, layers, 0.0, False, bidirectional, batch_first)
    out_t = getattr(torch, name)(lt[0], hx_t, lt[1 + ns:], *args)
    out_r = getattr(rg, name)(lr[0], hx_r, lr[1 + ns:], *args)
    assert isinstance(out_r, tuple) and len(out_r) == (3 if name == "lstm" else 2)
    _compare(out_t, out_r, lt, lr)


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_overload_matches_torch(name, bidirectional):
    dirs = 2 if bidirectional else 1
    params = [p.detach().numpy() for p in _torch_layer(name, 2, True, bidirectional)._flat_weights]
    lengths = [4, 3, 1]
    padded = np.random.default_rng(4).standard_normal((T, N, I))
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(padded), lengths)
    arrays = [packed.data.numpy()] + _states(name, 2, dirs, N) + params
    lt, lr = _leaves(arrays)
    ns = 2 if name == "lstm" else 1
    hx_t = tuple(lt[1:3]) if name == "lstm" else lt[1]
    hx_r = tuple(lr[1:3]) if name == "lstm" else lr[1]
    bs_t = packed.batch_sizes
    bs_r = rg.tensor(bs_t.numpy())
    out_t = getattr(torch, name)(lt[0], bs_t, hx_t, lt[1 + ns:], True, 2, 0.0, False, bidirectional)
    # (the keyword form picks the packed overload by its argument names)
    out_r = getattr(rg, name)(data=lr[0], batch_sizes=bs_r, hx=hx_r, params=lr[1 + ns:], has_biases=True,
                              num_layers=2, dropout=0.0, train=False, bidirectional=bidirectional)
    _compare(out_t, out_r, lt, lr)


def test_lstm_projection_and_keywords_match_torch():
    params = [p.detach().numpy() for p in _torch_layer("lstm", 2, True, True, proj=2)._flat_weights]
    x = np.random.default_rng(5).standard_normal((T, N, I))
    arrays = [x] + _states("lstm", 2, 2, N, proj=2) + params
    lt, lr = _leaves(arrays)
    kw = dict(has_biases=True, num_layers=2, dropout=0.0, train=False, bidirectional=True, batch_first=False)
    out_t = torch.lstm(input=lt[0], hx=(lt[1], lt[2]), params=lt[3:], **kw)
    out_r = rg.lstm(input=lr[0], hx=[lr[1], lr[2]], params=lr[3:], **kw)
    assert out_r[0].shape == (T, N, 4) and out_r[1].shape == (4, N, 2) and out_r[2].shape == (4, N, H)
    _compare(out_t, out_r, lt, lr)


def test_dropout_between_layers_matches_torch():
    # p=1 zeroes the first layer's output (the same on both sides); train=False leaves it out
    params = [p.detach().numpy() for p in _torch_layer("gru", 2, True, False)._flat_weights]
    x = np.random.default_rng(6).standard_normal((T, N, I))
    arrays = [x] + _states("gru", 2, 1, N) + params
    for p, train in ((1.0, True), (0.5, False)):
        lt, lr = _leaves(arrays)
        out_t = torch.gru(lt[0], lt[1], lt[2:], True, 2, p, train, False, False)
        out_r = rg.gru(lr[0], lr[1], lr[2:], True, 2, p, train, False, False)
        _compare(out_t, out_r, lt, lr)


def test_the_layers_still_agree_with_the_twins():
    # nn.LSTM and rg.lstm run through one function: the same numbers from the same weights
    rg.manual_seed(0)
    layer = rg.nn.LSTM(I, H, num_layers=2, batch_first=True, dtype=rg.float64)
    x = rg.randn(N, T, I, dtype=rg.float64)
    h0 = rg.zeros(2, N, H, dtype=rg.float64)
    out, (h, c) = layer(x, (h0, h0))
    twin = rg.lstm(x, (h0, h0), layer._flat_weights, True, 2, 0.0, False, False, True)
    for a, b in zip((out, h, c), twin):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _lstm_args(**change):
    m = _torch_layer("lstm", 2, True, False)
    h = torch.zeros(2, N, H, dtype=torch.float64)
    args = dict(input=torch.zeros(T, N, I, dtype=torch.float64), hx=[h, h], params=list(m._flat_weights),
                has_biases=True, num_layers=2, dropout=0.0, train=False, bidirectional=False, batch_first=False)
    args.update(change)
    return args


def _to_rg(v):
    if isinstance(v, torch.Tensor):
        return rg.tensor(v.detach().numpy())
    if isinstance(v, list):
        return [_to_rg(e) for e in v]
    return v


@pytest.mark.parametrize("change,cls,piece", [
    (dict(params="drop"), RuntimeError, "incorrect number of RNN parameters"),
    (dict(num_layers=1), RuntimeError, "Expected more hidden states in stacked_rnn"),
    (dict(has_biases=False), RuntimeError, "Expected more weights in stacked_rnn"),
    (dict(hx="three"), RuntimeError, "lstm expects two hidden states"),
    (dict(input="empty"), RuntimeError, "Expected sequence length to be larger than 0"),
    (dict(dropout=1.5, train=True), RuntimeError, "dropout probability has to be between 0 and 1"),
])
def test_lstm_errors_as_torch(change, cls, piece):
    args = _lstm_args()
    fix = {"drop": args["params"][:7], "three": args["hx"] + args["hx"][:1],
           "empty": args["input"][:0]}
    args.update({k: fix.get(v, v) if isinstance(v, str) else v for k, v in change.items()})
    with pytest.raises(cls, match=piece):
        torch.lstm(**args)
    with pytest.raises(cls, match=piece):
        rg.lstm(**{k: _to_rg(v) for k, v in args.items()})


def test_signature_shape_and_dtype_errors():
    args = {k: _to_rg(v) for k, v in _lstm_args().items()}
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        rg.lstm(args["input"], args["hx"], args["params"], True, 2, 0.0, False, False)
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        rg.gru(args["input"], args["hx"], args["params"], True, 2, 0.0, False, False, False)   # gru's hx: a Tensor
    small = rg.zeros(2, 1, H, dtype=rg.float64)
    with pytest.raises(RuntimeError, match="hidden state"):            # torch: a broadcasting RuntimeError
        rg.lstm(args["input"], [small, small], args["params"], True, 2, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="dtype"):                   # torch: an mkldnn dtype RuntimeError
        rg.lstm(args["input"].float(), args["hx"], args["params"], True, 2, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="3-D input"):
        rg.lstm(args["input"][None], args["hx"], args["params"], True, 2, 0.0, False, False, False)
    bad = rg.tensor([1, 2, 2])
    with pytest.raises(RuntimeError, match="non-increasing"):
        rg.gru(rg.zeros(5, I, dtype=rg.float64), bad, rg.zeros(1, 2, H, dtype=rg.float64),
               [rg.zeros(3 * H, I, dtype=rg.float64), rg.zeros(3 * H, H, dtype=rg.float64)], False, 1, 0.0, False,
               False)


# --- embedding_bag -------------------------------------------------------------------------------------

_IDX = np.array([0, 2, 2, 5, 1, 3, 3])


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("offsets,last", [([0, 3, 3, 5], False), ([0, 0, 3, 7], True), ([0, 7], False)])
@pytest.mark.parametrize("padding_idx", [None, 2, -3])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_embedding_bag_matches_torch(mode, offsets, last, padding_idx, dtype):
    w = np.random.default_rng(7).standard_normal((6, 3)).astype(dtype)
    wt, wr = torch.tensor(w, requires_grad=True), rg.tensor(w, requires_grad=True)
    args = (False, mode, False, None, last, padding_idx)
    out_t = torch.embedding_bag(wt, torch.tensor(_IDX), torch.tensor(offsets), *args)
    out_r = rg.embedding_bag(wr, rg.tensor(_IDX), rg.tensor(offsets), *args)
    tol = 1e-12 if dtype == "float64" else 1e-6
    np.testing.assert_allclose(out_r[0].detach().numpy(), out_t[0].detach().numpy(), rtol=tol, atol=tol)
    for a, b in zip(out_t[1:], out_r[1:]):
        assert b.dtype == np.int64 and b.tolist() == a.tolist()
    seed = np.random.default_rng(8).standard_normal(tuple(out_t[0].shape)).astype(dtype)
    (gt,) = torch.autograd.grad(out_t[0], wt, torch.tensor(seed))
    (gr,) = rg.autograd.grad(out_r[0], wr, rg.tensor(seed))
    np.testing.assert_allclose(gr.numpy(), gt.numpy(), rtol=tol, atol=tol)


def _bag_grads(args_t, args_r, leaves_t, leaves_r):
    out_t, out_r = torch.embedding_bag(*args_t), rg.embedding_bag(*args_r)
    np.testing.assert_allclose(out_r[0].detach().numpy(), out_t[0].detach().numpy(), rtol=1e-12)
    assert [a.tolist() for a in out_r[1:]] == [a.tolist() for a in out_t[1:]]
    seed = np.random.default_rng(11).standard_normal(tuple(out_t[0].shape))
    g_t = torch.autograd.grad(out_t[0], leaves_t, torch.tensor(seed))
    g_r = rg.autograd.grad(out_r[0], leaves_r, rg.tensor(seed))
    for a, b in zip(g_t, g_r):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)


def test_embedding_bag_per_sample_weights_and_frequency_scaling():
    w = np.random.default_rng(9).standard_normal((6, 3))
    psw = np.random.default_rng(10).random(7)
    wt, wr = torch.tensor(w, requires_grad=True), rg.tensor(w, requires_grad=True)
    pt, pr = torch.tensor(psw, requires_grad=True), rg.tensor(psw, requires_grad=True)
    off = [0, 2, 5]
    _bag_grads((wt, torch.tensor(_IDX), torch.tensor(off), False, 0, False, pt),
               (wr, rg.tensor(_IDX), rg.tensor(off), False, 0, False, pr), [wt, pt], [wr, pr])
    # scale_grad_by_freq with every index equally frequent: torch's CPU kernel divides a row's gradient by
    # the count of the index at the row's rank among the sorted indices, which agrees with the row's own
    # count only then (retrograd divides by the row's own count, as the CUDA kernel and the docs say)
    idx = np.array([4, 1, 1, 4, 0, 0])
    for mode in (0, 1):
        _bag_grads((wt, torch.tensor(idx), torch.tensor(off), True, mode),
                   (wr, rg.tensor(idx), rg.tensor(off), True, mode), [wt], [wr])


def test_embedding_bag_int32_indices_weight_without_grad_and_max_frequency():
    w = np.random.default_rng(12).standard_normal((6, 3))
    off = [0, 2, 5]
    # int32 indices and offsets: int32 auxiliary results; a weight without grad: bag_size as long as offsets
    ends = [0, 2, 7]
    res_t = torch.embedding_bag(torch.tensor(w), torch.tensor(_IDX, dtype=torch.int32),
                                torch.tensor(ends, dtype=torch.int32), include_last_offset=True)
    res_r = rg.embedding_bag(rg.tensor(w), rg.tensor(_IDX.astype(np.int32)), rg.tensor(np.int32(ends)),
                             include_last_offset=True)
    np.testing.assert_allclose(res_r[0].numpy(), res_t[0].numpy(), rtol=1e-12)
    for a, b in zip(res_t[1:], res_r[1:]):
        assert b.dtype == np.int32 and b.tolist() == a.tolist()
    # max mode ignores scale_grad_by_freq, as ATen does (F.embedding_bag refuses the pair)
    wt, wr = torch.tensor(w, requires_grad=True), rg.tensor(w, requires_grad=True)
    _bag_grads((wt, torch.tensor(_IDX), torch.tensor(off), True, 2), (wr, rg.tensor(_IDX), rg.tensor(off), True, 2),
               [wt], [wr])
    with pytest.raises(RuntimeError, match="1-D indices"):
        rg.embedding_bag(wr, rg.tensor(_IDX[:6].reshape(2, 3)), rg.tensor([0, 1]))


@pytest.mark.parametrize("call,cls,piece", [
    (lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, 3), RuntimeError, "`mode` must be sum, mean, or max"),
    (lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, 1, False, lib.ones(7, dtype=w.dtype)), RuntimeError,
     "per_sample_weights only supported with mode='sum'"),
    (lambda lib, w, i, o: lib.embedding_bag(w, i, o, False, 1, False, None, False, 9), RuntimeError,
     "padding_idx must be within the number of embeddings"),
    (lambda lib, w, i, o: lib.embedding_bag(w, i, o + 1), RuntimeError, "offsets\\[0\\] has to be 0"),
    (lambda lib, w, i, o: lib.embedding_bag(w, i.double(), o), RuntimeError, "'indices'"),
])
def test_embedding_bag_errors_as_torch(call, cls, piece):
    w = np.ones((6, 3))
    with pytest.raises(cls, match=piece):
        call(torch, torch.tensor(w), torch.tensor(_IDX), torch.tensor([0, 3]))
    with pytest.raises(cls, match=piece):
        call(rg, rg.tensor(w), rg.tensor(_IDX), rg.tensor([0, 3]))
