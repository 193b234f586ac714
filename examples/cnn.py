"""A small CNN on 16x16 digits: an nn.Module subclass, BatchNorm and Dropout.

Where ``examples/mlp.py`` stacks layers in an ``nn.Sequential``, this one
writes the model as a class: layers assigned in ``__init__`` are registered
(their parameters show up in ``model.parameters()``), and ``forward`` says how
to use them. BatchNorm2d and Dropout behave differently in training and in
evaluation, which ``model.train()`` / ``model.eval()`` switch.

The data are the demo's rendered digits (``python -m retrograd.demo`` trains a
bigger run of this with a progress bar, a profile and a graph picture).

Run: ``python examples/cnn.py`` (``main(epochs=..., n_train=...)`` for more).
"""
import numpy as np

import retrograd as rg
from retrograd import nn
import retrograd.nn.functional as F
from retrograd.demo import digits_split
from retrograd.utils.data import DataLoader, TensorDataset


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)     # 1x16x16 -> 8x16x16
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)    # -> 16x8x8 (after pooling)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 4 * 4, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)       # 8x8x8
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)                 # 16x4x4
        return self.fc(self.drop(x.flatten(1)))


def accuracy(model, x, y):
    model.eval()                          # BatchNorm uses its running statistics, Dropout is off
    with rg.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


def main(epochs=2, n_train=2000, n_test=500, seed=0):
    rg.manual_seed(seed)
    xtr, ytr, xte, yte = digits_split(n_train, n_test, size=16, seed=seed)
    train = DataLoader(TensorDataset(rg.from_numpy(xtr), rg.from_numpy(ytr)), batch_size=32, shuffle=True,
                       generator=np.random.default_rng(seed))
    x_test, y_test = rg.from_numpy(xte), rg.from_numpy(yte)

    model = SmallCNN()                    # float32 (the default dtype), like the images
    print(model)
    optimizer = rg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses, accuracies = [], [accuracy(model, x_test, y_test)]
    for epoch in range(epochs):
        model.train()
        for xb, yb in train:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        accuracies.append(accuracy(model, x_test, y_test))
        print(f"epoch {epoch + 1}: last batch loss {losses[-1]:.4f}  test accuracy {100 * accuracies[-1]:.1f}%")
    print(f"running mean of bn1 after training: {np.round(model.bn1.running_mean.numpy()[:4], 3)} ...")
    return {"losses": losses, "accuracies": accuracies}


if __name__ == "__main__":
    main()
