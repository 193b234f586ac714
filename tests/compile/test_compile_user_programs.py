"""Whole user programs through rg.compile: a small decoder-only language
model (token and position embeddings, layer norm, causal self-attention
with a masked_fill mask, GELU feed-forward, dropout, cross_entropy) trained
for a few steps with new batches. One guard key compiles, no graph breaks,
and in eval mode its losses and gradients equal eager's step for step;
in train mode dropout draws at each call."""
import warnings

import numpy as np

import retrograd as rg
import retrograd.compile
import retrograd.nn as nn
import retrograd.nn.functional as F

VOCAB, DIM, CTX = 31, 16, 8


class _Block(nn.Module):
    def __init__(self, heads=2):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
        self.ff = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.drop = nn.Dropout(0.2)
        self.heads = heads

    def forward(self, x):
        B, T, D = x.shape
        hd = D // self.heads
        q, k, v = (t.reshape(B, T, self.heads, hd).transpose(1, 2)
                   for t in self.qkv(self.ln1(x)).split(D, dim=2))
        att = (q @ k.transpose(-2, -1)) / hd ** 0.5
        att = att.masked_fill(rg.tril(rg.ones(T, T)) == 0, float("-inf")).softmax(-1)
        y = self.drop(att @ v).transpose(1, 2).reshape(B, T, D)
        x = x + self.proj(y)
        return x + self.ff(self.ln2(x))


class _TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, DIM), nn.Embedding(CTX, DIM)
        self.block, self.head = _Block(), nn.Linear(DIM, VOCAB)

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(rg.arange(idx.shape[1]))
        logits = self.head(self.block(x))
        return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def _batch(rng):
    return rg.tensor(rng.integers(0, VOCAB, (4, CTX))), rg.tensor(rng.integers(0, VOCAB, (4, CTX)))


def test_a_tiny_language_model_step_compiles_and_equals_eager_in_eval_mode():
    rg.manual_seed(0)
    model = _TinyLM().eval()
    compiled = rg.compile(model, backend="numpy")
    rng = np.random.default_rng(5)
    params = list(model.parameters())
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # a graph break warns
        for _ in range(3):
            idx, targets = _batch(rng)
            for p in params:
                p.grad = None
            got = compiled(idx, targets)
            got.backward()
            got_grads = [p.grad.numpy().copy() for p in params]
            for p in params:
                p.grad = None
            want = model(idx, targets)
            want.backward()
            np.testing.assert_allclose(got.item(), want.item(), rtol=1e-10)
            for g, p in zip(got_grads, params):
                np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-8, atol=1e-12)
    assert compiled.cache_info() == {"compiled": 1, "eager": 0}


def test_training_the_tiny_language_model_with_adamw_lowers_its_loss():
    rg.manual_seed(1)
    model = _TinyLM()
    compiled = rg.compile(model, backend="numpy")
    opt = rg.optim.AdamW(model.parameters(), lr=3e-2)
    rng = np.random.default_rng(6)
    idx, targets = _batch(rng)                      # one batch, memorised
    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(30):
            opt.zero_grad()
            loss = compiled(idx, targets)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert compiled.cache_info() == {"compiled": 1, "eager": 0}
