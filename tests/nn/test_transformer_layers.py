"""The Transformer family against torch 2.13: torch's state dict loaded into
retrograd's modules, then outputs and every gradient compared (post-LN and
pre-LN, relu/gelu/callable activations, batch_first, masks, eval mode), the
clones of TransformerEncoder/Decoder, the causal mask, warnings and errors."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.oracle,
              # both libraries warn of bool padding masks beside float masks, and torch of its nested tensors
              pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]

RNG = np.random.default_rng(5)
D, H, FF, N = 8, 2, 12, 2


def _load(mr, mt):
    missing = mr.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    assert not missing.missing_keys and not missing.unexpected_keys


def _build(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # enable_nested_tensor's notice
        mt = make(torch.nn).double()
        mr = make(rg.nn)
    _load(mr, mt)
    return mr, mt


def _conv(kwargs, lib):
    return {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}


def _check(mr, mt, arrays, rtol=1e-9, **kw):
    ins_r = [rg.tensor(a, requires_grad=True) for a in arrays]
    ins_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    yr, yt = mr(*ins_r, **_conv(kw, rg)), mt(*ins_t, **_conv(kw, torch))
    assert yr.shape == tuple(yt.shape)
    np.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=1e-10)
    seed = RNG.standard_normal(tuple(yt.shape))
    yr.backward(rg.tensor(seed))
    yt.backward(torch.tensor(seed))
    for a, b in zip(ins_r, ins_t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=1e-10)
    grads = {n: p.grad for n, p in mr.named_parameters()}
    assert set(grads) == {n for n, _ in mt.named_parameters()}
    for name, p in mt.named_parameters():
        np.testing.assert_allclose(grads[name].numpy(), p.grad.numpy(), rtol=rtol, atol=1e-10, err_msg=name)
    return yr


def _seq(length, batch_first, unbatched=False):
    if unbatched:
        return RNG.standard_normal((length, D))
    return RNG.standard_normal((N, length, D) if batch_first else (length, N, D))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_as_torch(norm_first, batch_first, activation):
    mr, mt = _build(lambda nn: nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, activation=activation,
                                                          batch_first=batch_first, norm_first=norm_first))
    _check(mr, mt, [_seq(5, batch_first)])
    kpm = np.zeros((N, 5), bool)
    kpm[1, 3:] = True
    causal = np.triu(np.full((5, 5), -np.inf), 1)
    _check(mr, mt, [_seq(5, batch_first)], src_mask=causal, src_key_padding_mask=kpm)
    _check(mr, mt, [_seq(5, batch_first)], src_mask=causal, is_causal=True)


def test_encoder_layer_callable_activation_bias_eps_unbatched():
    mr, mt = _build(lambda nn: nn.TransformerEncoderLayer(
        D, H, FF, dropout=0.0, activation=(F.silu if nn is rg.nn else torch.nn.functional.silu),
        layer_norm_eps=1e-3, bias=False))
    assert mr.activation_relu_or_gelu == 0 and mr.norm1.eps == 1e-3 and mr.linear1.bias is None
    _check(mr, mt, [_seq(4, False)])
    _check(mr, mt, [_seq(4, False, unbatched=True)], src_mask=RNG.random((4, 4)) > 0.8)


def test_encoder_layer_eval_mode_turns_dropout_off():
    mr, mt = _build(lambda nn: nn.TransformerEncoderLayer(D, H, FF, dropout=0.3))
    mr.eval()
    mt.eval()
    _check(mr, mt, [_seq(5, False)])
    mr.train()
    x = rg.tensor(_seq(5, False))
    _ = rg.manual_seed(1)
    y1 = mr(x)
    _ = rg.manual_seed(1)
    y2 = mr(x)
    np.testing.assert_array_equal(y1.detach().numpy(), y2.detach().numpy())
    assert not np.allclose(y1.detach().numpy(), mr.eval()(x).detach().numpy())


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_as_torch(norm_first, batch_first):
    mr, mt = _build(lambda nn: nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, activation="gelu",
                                                          batch_first=batch_first, norm_first=norm_first))
    _check(mr, mt, [_seq(4, batch_first), _seq(6, batch_first)])
    tgt_kpm = np.zeros((N, 4), bool)
    tgt_kpm[0, 3] = True
    mem_kpm = np.zeros((N, 6), bool)
    mem_kpm[1, 4:] = True
    causal = np.triu(np.full((4, 4), -np.inf), 1)
    _check(mr, mt, [_seq(4, batch_first), _seq(6, batch_first)], tgt_mask=causal, tgt_is_causal=True,
           memory_mask=RNG.random((4, 6)) > 0.8, tgt_key_padding_mask=tgt_kpm, memory_key_padding_mask=mem_kpm)


@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_and_decoder_stacks_as_torch(batch_first):
    mr, mt = _build(lambda nn: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=batch_first), 2, norm=nn.LayerNorm(D)))
    assert [k for k in mr.state_dict()] == [k for k in mt.state_dict()]
    causal = np.triu(np.full((5, 5), -np.inf), 1)
    _check(mr, mt, [_seq(5, batch_first)], mask=causal)            # detected as causal
    kpm = np.zeros((N, 5), bool)
    kpm[0, 4] = True
    _check(mr, mt, [_seq(5, batch_first)], src_key_padding_mask=kpm)
    mr, mt = _build(lambda nn: nn.TransformerDecoder(
        nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=batch_first), 2, norm=nn.LayerNorm(D)))
    _check(mr, mt, [_seq(4, batch_first), _seq(6, batch_first)],
           tgt_mask=rg.nn.Transformer.generate_square_subsequent_mask(4).numpy())


def test_encoder_in_eval_without_grad_zeros_padding_as_torch():
    # torch's nested-tensor path drops the padded positions (zeros before `norm`)
    for norm in (False, True):
        mr, mt = _build(lambda nn: nn.TransformerEncoder(
            nn.TransformerEncoderLayer(D, H, FF, batch_first=True), 2, norm=nn.LayerNorm(D) if norm else None))
        mr.eval()
        mt.eval()
        x = _seq(5, True)
        for kpm in (np.array([[False] * 3 + [True] * 2, [False] * 5]),     # padding at the ends: dropped
                    np.array([[False, True, False, False, False], [False] * 5])):
            with torch.no_grad():
                yt = mt(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
            with rg.no_grad():
                yr = mr(rg.tensor(x), src_key_padding_mask=rg.tensor(kpm))
            np.testing.assert_allclose(yr.numpy(), yt.numpy(), rtol=1e-9, atol=1e-10)


def test_transformer_as_torch():
    mr, mt = _build(lambda nn: nn.Transformer(D, H, 2, 1, FF, dropout=0.0, batch_first=True))
    assert list(mr.state_dict()) == list(mt.state_dict())
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64).numpy()
    kpm = np.zeros((N, 6), bool)
    kpm[1, 5] = True
    _check(mr, mt, [_seq(6, True), _seq(4, True)], tgt_mask=tgt_mask, src_key_padding_mask=kpm,
           memory_key_padding_mask=kpm)
    mr, mt = _build(lambda nn: nn.Transformer(D, H, 1, 1, FF, dropout=0.0, norm_first=True, activation="gelu"))
    _check(mr, mt, [_seq(6, False), _seq(4, False)])


@pytest.mark.float32_default
def test_init_masks_clones_and_keys():
    _ = rg.manual_seed(0)
    m = rg.nn.Transformer(16, 4, 1, 1, 32, batch_first=True)
    w = m.encoder.layers[0].linear1.weight.detach().numpy()
    assert w.dtype == np.float32 and np.abs(w).max() <= np.sqrt(6.0 / (16 + 32))    # xavier_uniform_
    np.testing.assert_array_equal(rg.nn.Transformer.generate_square_subsequent_mask(4).numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())
    assert rg.nn.Transformer.generate_square_subsequent_mask(3, dtype=rg.float64).dtype == np.float64
    layer = rg.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    enc = rg.nn.TransformerEncoder(layer, 3)
    ps = [dict(enc.layers[i].named_parameters()) for i in range(3)]
    assert all(ps[0][k] is not ps[1][k] for k in ps[0])
    np.testing.assert_array_equal(ps[0]["linear1.weight"].detach().numpy(), ps[2]["linear1.weight"].detach().numpy())
    assert all(p is not q for p, q in zip(layer.parameters(), enc.layers[0].parameters()))
    for bias in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model_r, model_t = rg.nn.Transformer(8, 2, 1, 1, 16, bias=bias), torch.nn.Transformer(8, 2, 1, 1, 16, bias=bias)
        assert list(model_r.state_dict()) == list(model_t.state_dict())
        assert repr(model_r) == repr(model_t)


def test_nested_tensor_warning_as_torch():
    for lib in (rg, torch):
        with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False "
                                             "because encoder_layer.self_attn.batch_first was not True"):
            enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16), 1)
        assert enc.use_nested_tensor is False and enc.enable_nested_tensor is True
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16), 1, enable_nested_tensor=False)
            lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 1)


def test_errors_as_torch():
    for lib in (rg, torch):
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            lib.nn.TransformerEncoderLayer(8, 2, activation="tanh")
        with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
            lib.nn.TransformerDecoderLayer(8, 2, activation="swish")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = lib.nn.Transformer(8, 2, 1, 1, 16)
        with pytest.raises(RuntimeError, match="batch number of src and tgt"):
            m(lib.ones(5, 2, 8), lib.ones(4, 3, 8))
        with pytest.raises(RuntimeError, match="feature number"):
            m(lib.ones(5, 2, 8), lib.ones(4, 2, 6))
        with pytest.raises(AssertionError, match="only bool and floating"):
            m.encoder.layers[0](lib.ones(5, 2, 8), src_mask=lib.ones(5, 5, dtype=lib.int64))
