"""nn.MultiheadAttention and F.multi_head_attention_forward against torch 2.13:
torch's parameters loaded through load_state_dict, then outputs, attention
weights and every gradient compared, for the masks (bool, float, key padding,
causal), kdim/vdim, add_bias_kv, add_zero_attn, batch_first, unbatched inputs,
need_weights / average_attn_weights; the init, the state-dict keys, errors."""
import warnings

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(11)
E, H, L, S, N = 8, 2, 4, 5, 3


def _pair(batch_first=False, **kw):
    mt = torch.nn.MultiheadAttention(E, H, batch_first=batch_first, **kw).double()
    mr = rg.nn.MultiheadAttention(E, H, batch_first=batch_first, **kw)
    mr.load_state_dict({k: rg.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    return mr, mt


def _shape(length, dim, batch_first, unbatched):
    if unbatched:
        return (length, dim)
    return (N, length, dim) if batch_first else (length, N, dim)


def _conv(kwargs, lib):
    return {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}


def _check(mr, mt, self_attn=True, batch_first=False, unbatched=False, kdim=E, vdim=E, rtol=1e-10, **fkw):
    arrays = [RNG.standard_normal(_shape(L, E, batch_first, unbatched))]
    if not self_attn:
        arrays += [RNG.standard_normal(_shape(S, kdim, batch_first, unbatched)),
                   RNG.standard_normal(_shape(S, vdim, batch_first, unbatched))]
    ins_r = [rg.tensor(a, requires_grad=True) for a in arrays]
    ins_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    args_r, args_t = (ins_r * 3, ins_t * 3) if self_attn else (ins_r, ins_t)
    yr, wr = mr(*args_r, **_conv(fkw, rg))
    yt, wt = mt(*args_t, **_conv(fkw, torch))
    assert yr.shape == tuple(yt.shape)
    np.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=1e-12)
    seed = RNG.standard_normal(tuple(yt.shape))
    loss_r, loss_t = (yr * rg.tensor(seed)).sum(), (yt * torch.tensor(seed)).sum()
    if wt is None:
        assert wr is None
    else:
        assert wr.shape == tuple(wt.shape)
        np.testing.assert_allclose(wr.detach().numpy(), wt.detach().numpy(), rtol=rtol, atol=1e-12)
        wseed = RNG.standard_normal(tuple(wt.shape))
        loss_r, loss_t = loss_r + (wr * rg.tensor(wseed)).sum(), loss_t + (wt * torch.tensor(wseed)).sum()
    loss_r.backward()
    loss_t.backward()
    for a, b in zip(ins_r, ins_t):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=1e-12)
    grads_r = {n: p.grad for n, p in mr.named_parameters()}
    for name, p in mt.named_parameters():
        np.testing.assert_allclose(grads_r[name].numpy(), p.grad.numpy(), rtol=rtol, atol=1e-12, err_msg=name)
    return yr, wr


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("self_attn", [True, False])
def test_plain_attention_as_torch(batch_first, self_attn):
    mr, mt = _pair(batch_first)
    _check(mr, mt, self_attn=self_attn, batch_first=batch_first)


def test_key_is_value_cross_attention_as_torch():
    mr, mt = _pair()
    q, m = RNG.standard_normal((L, N, E)), RNG.standard_normal((S, N, E))
    qr, mr_in = rg.tensor(q, requires_grad=True), rg.tensor(m, requires_grad=True)
    qt, mt_in = torch.tensor(q, requires_grad=True), torch.tensor(m, requires_grad=True)
    yr, _ = mr(qr, mr_in, mr_in, need_weights=False)
    yt, _ = mt(qt, mt_in, mt_in, need_weights=False)
    np.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
    yr.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(mr_in.grad.numpy(), mt_in.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(mr.in_proj_weight.grad.numpy(), mt.in_proj_weight.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("batch_first", [False, True])
def test_kdim_vdim_separate_projections(batch_first):
    mr, mt = _pair(batch_first, kdim=3, vdim=6)
    assert mr.in_proj_weight is None and mr.q_proj_weight.shape == (E, E)
    assert mr.k_proj_weight.shape == (E, 3) and mr.v_proj_weight.shape == (E, 6)
    _check(mr, mt, self_attn=False, batch_first=batch_first, kdim=3, vdim=6)


@pytest.mark.parametrize("bias_kv, zero_attn", [(True, False), (False, True), (True, True)])
def test_bias_kv_and_zero_attn(bias_kv, zero_attn):
    mr, mt = _pair(add_bias_kv=bias_kv, add_zero_attn=zero_attn)
    kpm = np.zeros((N, S), bool)
    kpm[0, 3:] = True
    _, w = _check(mr, mt, self_attn=False, key_padding_mask=kpm, attn_mask=RNG.random((L, S)) > 0.8)
    assert w.shape == (N, L, S + bias_kv + zero_attn)
    _check(mr, mt, self_attn=False, need_weights=False, attn_mask=RNG.standard_normal((N * H, L, S)))


def test_no_bias():
    mr, mt = _pair(bias=False)
    assert mr.in_proj_bias is None and mr.out_proj.bias is None
    _check(mr, mt)
    _check(mr, mt, need_weights=False)


@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False), (False, True)])
def test_weights_returned_as_torch(need_weights, average):
    mr, mt = _pair()
    _, w = _check(mr, mt, self_attn=False, need_weights=need_weights, average_attn_weights=average)
    if need_weights:
        assert w.shape == ((N, L, S) if average else (N, H, L, S))
        np.testing.assert_allclose(w.detach().numpy().sum(-1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_masks(kind, need_weights):
    mr, mt = _pair(batch_first=True)
    drop = RNG.random((L, S)) > 0.7
    drop[:, 0] = False
    kpm = np.zeros((N, S), bool)
    kpm[1, 2:] = True
    if kind == "float":
        drop = np.where(drop, -np.inf, RNG.standard_normal((L, S)))
        kpm = np.where(kpm, -np.inf, 0.0)
    _check(mr, mt, self_attn=False, batch_first=True, attn_mask=drop, key_padding_mask=kpm,
           need_weights=need_weights)
    drop3 = RNG.random((N * H, L, S)) > 0.7
    drop3[..., 0] = False
    _check(mr, mt, self_attn=False, batch_first=True, attn_mask=drop3, need_weights=need_weights)


def test_mismatched_mask_types_warn_as_torch():
    mr, mt = _pair()
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        _check(mr, mt, self_attn=False, key_padding_mask=np.zeros((N, S), bool), attn_mask=np.zeros((L, S)))


def test_causal_hint():
    mr, mt = _pair(batch_first=True)
    causal = np.triu(np.full((L, L), -np.inf), 1)
    _check(mr, mt, batch_first=True, attn_mask=causal, is_causal=True, need_weights=False)
    _check(mr, mt, batch_first=True, attn_mask=causal, is_causal=True)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        mr(*(rg.ones(N, L, E),) * 3, is_causal=True)


def test_fully_masked_rows_as_torch():
    # torch: NaN through the explicit softmax (need_weights), zeros through SDPA
    mr, mt = _pair()
    drop = np.zeros((L, L), bool)
    drop[1] = True
    x = RNG.standard_normal((L, N, E))
    yr, wr = mr(*(rg.tensor(x),) * 3, attn_mask=rg.tensor(drop))
    yt, wt = mt(*(torch.tensor(x),) * 3, attn_mask=torch.tensor(drop))
    np.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=1e-10, equal_nan=True)
    np.testing.assert_allclose(wr.detach().numpy(), wt.detach().numpy(), rtol=1e-10, equal_nan=True)
    assert np.isnan(yr.detach().numpy()[1]).all()
    _check(mr, mt, attn_mask=drop, need_weights=False)


@pytest.mark.parametrize("self_attn", [True, False])
def test_unbatched(self_attn):
    mr, mt = _pair(batch_first=True)
    _check(mr, mt, self_attn=self_attn, unbatched=True, attn_mask=RNG.random((H, L, L if self_attn else S)) > 0.8)
    kpm = np.zeros(L if self_attn else S, bool)
    kpm[-1] = True
    yr, wr = _check(mr, mt, self_attn=self_attn, unbatched=True, key_padding_mask=kpm)
    assert yr.shape == (L, E) and wr.shape == (L, L if self_attn else S)


def test_eval_mode_and_dropout():
    mr, mt = _pair(dropout=0.5)
    mr.eval()
    mt.eval()
    _check(mr, mt, self_attn=False)
    mr.train()
    x = rg.randn(L, N, E)
    _ = rg.manual_seed(0)
    y1, w1 = mr(x, x, x)
    _ = rg.manual_seed(0)
    y2, _ = mr(x, x, x)
    np.testing.assert_array_equal(y1.detach().numpy(), y2.detach().numpy())
    # dropped weights: zeros, the others scaled by 2
    per_head = mr(x, x, x, average_attn_weights=False)[1].detach().numpy()
    assert (per_head == 0).any() and per_head.max() > 1.0 / L


def test_functional_form_as_torch():
    mt = torch.nn.MultiheadAttention(E, H, add_bias_kv=True).double()
    args = [torch.tensor(RNG.standard_normal((L, N, E)), requires_grad=True) for _ in range(3)]
    p = {k: v.detach() for k, v in mt.state_dict().items()}
    static = RNG.standard_normal((N * H, S, E // H))
    kw = dict(training=False, key_padding_mask=None, need_weights=True, attn_mask=None)
    yt, wt = torch.nn.functional.multi_head_attention_forward(
        *args, E, H, p["in_proj_weight"], p["in_proj_bias"], None, None, True, 0.0, p["out_proj.weight"],
        p["out_proj.bias"], static_k=torch.tensor(static), static_v=torch.tensor(static), **kw)
    ra = [rg.tensor(a.detach().numpy()) for a in args]
    rp = {k: rg.tensor(v.numpy()) for k, v in p.items()}
    yr, wr = F.multi_head_attention_forward(
        *ra, E, H, rp["in_proj_weight"], rp["in_proj_bias"], None, None, True, 0.0, rp["out_proj.weight"],
        rp["out_proj.bias"], static_k=rg.tensor(static), static_v=rg.tensor(static), **kw)
    np.testing.assert_allclose(yr.numpy(), yt.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(wr.numpy(), wt.detach().numpy(), rtol=1e-10)
    assert wr.shape == (N, L, S + 1)


@pytest.mark.float32_default
def test_parameters_init_and_state_dict_keys():
    _ = rg.manual_seed(0)
    for kw in ({}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True}, {"bias": False}):
        mr, mt = rg.nn.MultiheadAttention(E, H, **kw), torch.nn.MultiheadAttention(E, H, **kw)
        assert list(mr.state_dict()) == list(mt.state_dict())
        for (nr, pr), (nt, pt) in zip(mr.named_parameters(), mt.named_parameters()):
            assert nr == nt and pr.shape == tuple(pt.shape) and pr.dtype == np.float32
    m = rg.nn.MultiheadAttention(16, 4, add_bias_kv=True)
    bound = np.sqrt(6.0 / (16 + 48))                      # xavier_uniform_ over (3E, E)
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert not m.in_proj_bias.detach().numpy().any() and not m.out_proj.bias.detach().numpy().any()
    assert m.bias_k.detach().numpy().any()
    assert repr(m.out_proj) == repr(torch.nn.MultiheadAttention(16, 4).out_proj)
    assert repr(m).startswith("MultiheadAttention(")


def test_errors_as_torch():
    for lib in (rg, torch):
        with pytest.raises(ValueError, match="greater than 0"):
            lib.nn.MultiheadAttention(0, 2)
        with pytest.raises(AssertionError, match="divisible"):
            lib.nn.MultiheadAttention(6, 4)
        m = lib.nn.MultiheadAttention(E, H)
        x = lib.ones(L, N, E)
        with pytest.raises(AssertionError, match="expected `key` and `value`"):
            m(x, lib.ones(S, N, E), lib.ones(S, E))
        with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D"):
            m(lib.ones(E), lib.ones(E), lib.ones(E))
        with pytest.raises(AssertionError, match="key_padding_mask"):
            m(x, x, x, key_padding_mask=lib.ones(N, L, 1) > 0)
        with pytest.raises(RuntimeError, match="2D attn_mask"):
            m(x, x, x, attn_mask=lib.ones(L, L + 1) > 0)
        with pytest.raises(RuntimeError, match="3D attn_mask"):
            m(x, x, x, attn_mask=lib.ones(N, L, L) > 0)
        with pytest.raises(AssertionError, match="only bool and floating"):
            m(x, x, x, attn_mask=lib.ones(L, L, dtype=lib.int64))
        with pytest.raises(AssertionError, match="embedding dimension"):
            m(*(lib.ones(L, N, E + 2),) * 3)
        with pytest.raises(AssertionError, match="key_padded_mask"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m(x, x, x, key_padding_mask=lib.ones(N + 1, L) > 0)
