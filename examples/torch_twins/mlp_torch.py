"""examples/mlp.py in PyTorch: the same data, model, optimizer and loop.

Kept to compare the two programs line for line (retrograd's aim is that they
differ only in names). Needs torch; the data still comes from retrograd.demo.

Run: ``python examples/torch_twins/mlp_torch.py``.
"""
import os
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from retrograd.demo import digits_split


def make_model():
    # torch's default dtype is float32, as the images are
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def main(epochs=5, seed=0):
    torch.manual_seed(seed)                               # seeds the initial weights
    xtr, ytr, xte, yte = digits_split(2000, 500, size=8, seed=seed, noise=0.1)
    x_train, y_train = torch.from_numpy(xtr.reshape(-1, 64)), torch.from_numpy(ytr)
    x_test, y_test = torch.from_numpy(xte.reshape(-1, 64)), torch.from_numpy(yte)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))

    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    history = []
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(yb)
        model.eval()
        with torch.no_grad():
            accuracy = (model(x_test).argmax(dim=1) == y_test).float().mean().item()
        history.append((total / len(y_train), accuracy))
        print(f"epoch {epoch + 1}: train loss {history[-1][0]:.4f}  test accuracy {100 * accuracy:.1f}%")

    # save the weights, load them into a new model: the same predictions
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mlp.pt")
        torch.save(model.state_dict(), path)
        restored = make_model()
        restored.load_state_dict(torch.load(path))
    with torch.no_grad():
        diff = (restored(x_test) - model(x_test)).abs().max().item()
    print("restored model, largest output difference:", diff)
    return {"history": history, "restored_diff": diff}


if __name__ == "__main__":
    main()
