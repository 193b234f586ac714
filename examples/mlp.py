"""Train an MLP on 8x8 digits with rg.nn, rg.optim and a DataLoader.

The digits are rendered by retrograd itself (``retrograd.demo``): 8x8 images
like scikit-learn's digits, 64 features each. The model is a 64-128-10 MLP,
trained with Adam on minibatches; after every epoch we print the mean
training loss and the test accuracy. At the end the weights are saved with
``rg.save`` and loaded into a fresh model, which predicts the same.

The same program in PyTorch is ``examples/torch_twins/mlp_torch.py``: compare
them line by line.

Run: ``python examples/mlp.py``.
"""
import os
import tempfile

import numpy as np

import retrograd as rg
from retrograd import nn
from retrograd.demo import digits_split
from retrograd.utils.data import DataLoader, TensorDataset


def make_model():
    # float32 (the default dtype), like the images
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def main(epochs=5, seed=0):
    rg.manual_seed(seed)                                  # seeds the initial weights
    xtr, ytr, xte, yte = digits_split(2000, 500, size=8, seed=seed, noise=0.1)
    x_train, y_train = rg.from_numpy(xtr.reshape(-1, 64)), rg.from_numpy(ytr)
    x_test, y_test = rg.from_numpy(xte.reshape(-1, 64)), rg.from_numpy(yte)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True,
                        generator=np.random.default_rng(seed))

    model = make_model()
    optimizer = rg.optim.Adam(model.parameters(), lr=1e-2)
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
        with rg.no_grad():
            accuracy = (model(x_test).argmax(dim=1) == y_test).float().mean().item()
        history.append((total / len(y_train), accuracy))
        print(f"epoch {epoch + 1}: train loss {history[-1][0]:.4f}  test accuracy {100 * accuracy:.1f}%")

    # save the weights, load them into a new model: the same predictions
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mlp.npz")
        rg.save(model.state_dict(), path)
        restored = make_model()
        restored.load_state_dict(rg.load(path))
    with rg.no_grad():
        diff = (restored(x_test) - model(x_test)).abs().max().item()
    print("restored model, largest output difference:", diff)
    return {"history": history, "restored_diff": diff}


if __name__ == "__main__":
    main()
