"""Training steps of real models, retrograd against PyTorch (no hand-written
NumPy twin: a whole LSTM or GAN step has none worth writing).

Each builder takes "retrograd" or "torch" and returns a zero-argument
callable running one training step (forward, backward, optimizer step) in
float32; the code is the same for both frameworks, only the library differs.
Used by compare.py (the ``models`` group).
"""
from __future__ import annotations

import numpy as np

from workloads import _autograd_lib

LM_VOCAB, LM_EMB, LM_HID, LM_LAYERS, LM_BPTT, LM_BATCH = 2000, 128, 256, 2, 35, 20
TF_VOCAB, TF_D, TF_HEADS, TF_FF, TF_LAYERS, TF_SEQ, TF_BATCH = 2000, 128, 4, 512, 2, 64, 16
GAN_NZ, GAN_NF, GAN_BATCH = 32, 32, 16
DL_ITEMS, DL_BATCH, DL_WORKERS = 128, 16, 2


def lstm_lm_step(framework):
    """A word-level LSTM language model: Embedding, 2-layer LSTM, Linear, cross-entropy, SGD."""
    lib = _autograd_lib(framework)
    nn = lib.nn
    lib.manual_seed(0)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(LM_VOCAB, LM_EMB)
            self.rnn = nn.LSTM(LM_EMB, LM_HID, LM_LAYERS, dropout=0.2)
            self.out = nn.Linear(LM_HID, LM_VOCAB)

        def forward(self, x, h):
            y, h = self.rnn(self.emb(x), h)
            return self.out(y), h

    model = LM()
    opt = lib.optim.SGD(model.parameters(), lr=1.0)
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.integers(0, LM_VOCAB, (LM_BPTT, LM_BATCH)))
    y = lib.from_numpy(rng.integers(0, LM_VOCAB, (LM_BPTT * LM_BATCH,)))
    h = (lib.zeros(LM_LAYERS, LM_BATCH, LM_HID), lib.zeros(LM_LAYERS, LM_BATCH, LM_HID))

    def run():
        opt.zero_grad()
        logits, _ = model(x, h)
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, LM_VOCAB), y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        return loss
    return run


def transformer_encoder_step(framework):
    """A Transformer encoder language-model step: Embedding, 2 encoder layers with a causal mask, Adam."""
    lib = _autograd_lib(framework)
    nn = lib.nn
    lib.manual_seed(0)
    emb = nn.Embedding(TF_VOCAB, TF_D)
    layer = nn.TransformerEncoderLayer(TF_D, TF_HEADS, TF_FF, dropout=0.1, batch_first=True)
    enc = nn.TransformerEncoder(layer, TF_LAYERS, enable_nested_tensor=False)
    head = nn.Linear(TF_D, TF_VOCAB)
    params = list(emb.parameters()) + list(enc.parameters()) + list(head.parameters())
    opt = lib.optim.Adam(params, lr=1e-3)
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.integers(0, TF_VOCAB, (TF_BATCH, TF_SEQ)))
    y = lib.from_numpy(rng.integers(0, TF_VOCAB, (TF_BATCH * TF_SEQ,)))
    mask = nn.Transformer.generate_square_subsequent_mask(TF_SEQ)

    def run():
        opt.zero_grad()
        out = head(enc(emb(x), mask=mask, is_causal=True))
        loss = lib.nn.functional.cross_entropy(out.reshape(-1, TF_VOCAB), y)
        loss.backward()
        opt.step()
        return loss
    return run


def gan_step(framework):
    """One DCGAN step at 32x32: ConvTranspose2d generator, Conv2d discriminator, BCELoss, two Adams."""
    lib = _autograd_lib(framework)
    nn = lib.nn
    lib.manual_seed(0)
    nf = GAN_NF
    G = nn.Sequential(
        nn.ConvTranspose2d(GAN_NZ, nf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(nf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(nf * 4, nf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(nf * 2), nn.ReLU(True),
        nn.ConvTranspose2d(nf * 2, nf, 4, 2, 1, bias=False), nn.BatchNorm2d(nf), nn.ReLU(True),
        nn.ConvTranspose2d(nf, 3, 4, 2, 1, bias=False), nn.Tanh())
    D = nn.Sequential(
        nn.Conv2d(3, nf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(nf, nf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(nf * 2), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(nf * 2, nf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(nf * 4), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(nf * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    crit = nn.BCELoss()
    optD = lib.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = lib.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    rng = np.random.default_rng(0)
    real = lib.from_numpy(rng.uniform(-1, 1, (GAN_BATCH, 3, 32, 32)).astype(np.float32))
    noise = lib.from_numpy(rng.standard_normal((GAN_BATCH, GAN_NZ, 1, 1)).astype(np.float32))
    ones, zeros = lib.ones(GAN_BATCH), lib.zeros(GAN_BATCH)

    def run():
        D.zero_grad()
        err_real = crit(D(real).view(-1), ones)
        err_real.backward()
        fake = G(noise)
        err_fake = crit(D(fake.detach()).view(-1), zeros)
        err_fake.backward()
        optD.step()
        G.zero_grad()
        err_g = crit(D(fake).view(-1), ones)
        err_g.backward()
        optG.step()
        return err_g
    return run


class SlowImages:
    """A map-style dataset whose items cost CPU time to make (as decoding and augmenting would)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        rng = np.random.default_rng(i)
        img = rng.standard_normal((1, 64, 64))
        for _ in range(3):                    # a few blurs: ~1 ms of NumPy per item
            img = (img + np.roll(img, 1, axis=1) + np.roll(img, 1, axis=2)) / 3.0
        return img[:, ::2, ::2].astype(np.float32).copy(), int(i % 10)


def dataloader_cnn_epoch(framework):
    """One epoch of a small CNN fed by a DataLoader with 2 worker processes (persistent across epochs)."""
    lib = _autograd_lib(framework)
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    if framework == "torch":
        from torch.utils.data import DataLoader
    else:
        from retrograd.utils.data import DataLoader
    loader = DataLoader(SlowImages(DL_ITEMS), batch_size=DL_BATCH, shuffle=True, num_workers=DL_WORKERS,
                        persistent_workers=True)

    def run():
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        return loss
    return run
