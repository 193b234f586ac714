"""A word-level LSTM language model, in the style of PyTorch's word_language_model example."""
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, EMB, HID, LAYERS, BPTT, BATCH = 50, 16, 24, 2, 7, 4


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, VOCAB)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def make_model():
    return RNNModel(VOCAB, EMB, HID, LAYERS, dropout=0.0)


def make_data(rng):
    return rng.integers(0, VOCAB, size=(BPTT * 6 + 1, BATCH))


def train(model, data, steps):
    source = torch.tensor(data, dtype=torch.long)
    criterion = nn.NLLLoss()
    lr, clip = 5.0, 0.25
    model.train()
    hidden = model.init_hidden(BATCH)
    losses = []
    for step in range(steps):
        i = (step * BPTT) % (source.size(0) - 1 - BPTT)
        inputs, targets = source[i:i + BPTT], source[i + 1:i + 1 + BPTT].reshape(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(inputs, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        losses.append(loss.item())
    return losses
