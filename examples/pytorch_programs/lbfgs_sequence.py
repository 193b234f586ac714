"""Sine-wave sequence prediction with LSTM cells and L-BFGS, in the style of PyTorch's
time_sequence_prediction example."""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

HIDDEN = 12


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, HIDDEN)
        self.lstm2 = nn.LSTMCell(HIDDEN, HIDDEN)
        self.linear = nn.Linear(HIDDEN, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), HIDDEN, dtype=input.dtype)
        c_t = torch.zeros(input.size(0), HIDDEN, dtype=input.dtype)
        h_t2 = torch.zeros(input.size(0), HIDDEN, dtype=input.dtype)
        c_t2 = torch.zeros(input.size(0), HIDDEN, dtype=input.dtype)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


def make_model():
    return Sequence()


def make_data(rng):
    x = np.arange(20) + rng.integers(-8, 8, size=(4, 1))
    return np.sin(x / 3.0).astype("float32")


def train(model, data, steps):
    input = torch.from_numpy(data[:, :-1])
    target = torch.from_numpy(data[:, 1:])
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(model.parameters(), lr=0.8, max_iter=4, line_search_fn="strong_wolfe")
    losses = []
    for _ in range(steps):
        def closure():
            optimizer.zero_grad()
            out = model(input)
            loss = criterion(out, target)
            loss.backward()
            return loss
        losses.append(optimizer.step(closure).item())
    with torch.no_grad():
        pred = model(input[:2], future=3)
        losses.append(criterion(pred[:, :-3], target[:2]).item())
    return losses
