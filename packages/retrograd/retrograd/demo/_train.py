"""The demo's model, training loop, profiled step and graph picture."""
from __future__ import annotations

import os
import pathlib
import time
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

import retrograd as rg
from retrograd import nn
from retrograd.utils.data import DataLoader, TensorDataset

from retrograd.demo._data import NUM_CLASSES, digits_split
from retrograd.demo._progress import ProgressBar

__all__ = ["build_model", "train_epoch", "evaluate", "profile_step", "draw_graph", "run", "DemoResult"]

# sizes of the two runs: the full one trains in well under a minute on two
# cores, the quick one (smoke tests, --quick) in a few seconds
_FULL = {"n_train": 16000, "n_test": 4000, "epochs": 3}
_QUICK = {"n_train": 1000, "n_test": 300, "epochs": 1}
_BATCH_SIZE = 64
_LR = 2e-3


def build_model(size: int = 16) -> nn.Sequential:
    """The demo's CNN: two conv/ReLU/max-pool blocks, then a small MLP head.

    Parameters
    ----------
    size : int, optional
        Height and width of the input images (default 16; a multiple of 4).

    Returns
    -------
    retrograd.nn.Sequential
        Maps a ``(batch, 1, size, size)`` float32 tensor to ``(batch, 10)``
        logits. Parameters are float32 with PyTorch's default initialisation
        (drawn from the global generator: seed it with ``rg.manual_seed``).

    Raises
    ------
    ValueError
        If ``size`` is not a positive multiple of 4.

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> from retrograd.demo import build_model
    >>> _ = rg.manual_seed(0)
    >>> model = build_model()
    >>> model(rg.zeros(2, 1, 16, 16, dtype=np.float32)).shape
    (2, 10)
    >>> sum(p.numel() for p in model.parameters())
    38282
    """
    if size <= 0 or size % 4:
        raise ValueError(f"build_model(): size must be a positive multiple of 4 (two 2x2 poolings), got {size}")
    model = nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 16 x size/2 x size/2
        nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 32 x size/4 x size/4
        nn.Flatten(),
        nn.Linear(32 * (size // 4) ** 2, 64), nn.ReLU(),
        nn.Linear(64, NUM_CLASSES),
    )
    # the layers are created in the default dtype, float32 like the images
    # (a float64 weight would silently run the whole network in float64, by
    # NumPy's promotion rules)
    return model


def _correct(logits: rg.Tensor, labels: rg.Tensor) -> int:
    return int((logits.argmax(dim=1) == labels).sum().item())


def train_epoch(model: nn.Module, loader: DataLoader, optimizer: rg.optim.Optimizer, loss_fn: nn.Module,
                bar: ProgressBar | None = None) -> tuple:
    """Train ``model`` for one pass over ``loader``.

    Parameters
    ----------
    model : retrograd.nn.Module
        The network; put in training mode.
    loader : retrograd.utils.data.DataLoader
        Yields ``(images, labels)`` batches.
    optimizer : retrograd.optim.Optimizer
        Steps the model's parameters.
    loss_fn : retrograd.nn.Module
        The loss, e.g. ``nn.CrossEntropyLoss()``.
    bar : ProgressBar, optional
        Updated after every step with the step's loss.

    Returns
    -------
    tuple of float
        ``(mean loss, accuracy)`` over the epoch's batches (the accuracy of
        the predictions made while training, weights changing).

    Examples
    --------
    >>> import retrograd as rg
    >>> import numpy as np
    >>> from retrograd.demo import build_model, render_digits, train_epoch
    >>> _ = rg.manual_seed(0)
    >>> x, y = render_digits(128)
    >>> data = rg.utils.data.TensorDataset(rg.from_numpy(x), rg.from_numpy(y))
    >>> loader = rg.utils.data.DataLoader(data, batch_size=32)
    >>> model = build_model()
    >>> opt = rg.optim.Adam(model.parameters(), lr=1e-3)
    >>> loss, acc = train_epoch(model, loader, opt, rg.nn.CrossEntropyLoss())
    >>> 0.0 < loss < 5.0 and 0.0 <= acc <= 1.0
    True
    """
    model.train()
    total_loss, correct, seen = 0.0, 0, 0
    for images, labels in loader:
        optimizer.zero_grad()
        logits = model(images)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimizer.step()
        value = loss.item()
        total_loss += value * len(labels)
        correct += _correct(logits, labels)
        seen += len(labels)
        if bar is not None:
            bar.update(loss=value)
    return total_loss / max(seen, 1), correct / max(seen, 1)


def evaluate(model: nn.Module, loader: DataLoader, loss_fn: nn.Module) -> tuple:
    """Mean loss and accuracy of ``model`` over ``loader``, without a graph.

    Parameters
    ----------
    model : retrograd.nn.Module
        The network; put in evaluation mode.
    loader : retrograd.utils.data.DataLoader
        Yields ``(images, labels)`` batches.
    loss_fn : retrograd.nn.Module
        The loss (with ``reduction="mean"``).

    Returns
    -------
    tuple
        ``(mean loss, accuracy, correct, count)``.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.demo import build_model, evaluate, render_digits
    >>> _ = rg.manual_seed(0)
    >>> x, y = render_digits(50)
    >>> data = rg.utils.data.TensorDataset(rg.from_numpy(x), rg.from_numpy(y))
    >>> loss, acc, correct, count = evaluate(build_model(), rg.utils.data.DataLoader(data, batch_size=25),
    ...                                      rg.nn.CrossEntropyLoss())
    >>> count
    50
    """
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    with rg.no_grad():
        for images, labels in loader:
            logits = model(images)
            total_loss += loss_fn(logits, labels).item() * len(labels)
            correct += _correct(logits, labels)
            seen += len(labels)
    return total_loss / max(seen, 1), correct / max(seen, 1), correct, seen


def profile_step(model: nn.Module, images: rg.Tensor, labels: rg.Tensor, optimizer: rg.optim.Optimizer,
                 loss_fn: nn.Module, path: str | os.PathLike) -> str | None:
    """Run one training step under the profiler and write its Perfetto trace.

    The step is marked with ``record_function`` ranges (``forward``,
    ``backward``, ``optimizer.step``) around the op events the profiler
    records.

    Parameters
    ----------
    model, optimizer, loss_fn
        As :func:`train_epoch`.
    images, labels : retrograd.Tensor
        One batch.
    path : str or os.PathLike
        Where to write the trace (Chrome trace-event JSON, which Perfetto and
        ``chrome://tracing`` open).

    Returns
    -------
    str or None
        The trace's path, or None when the ``retrograd-profiler``
        distribution is not installed (the step is then run unprofiled).

    Examples
    --------
    >>> import retrograd as rg
    >>> import json, os, tempfile
    >>> from retrograd.demo import build_model, profile_step, render_digits
    >>> _ = rg.manual_seed(0)
    >>> model = build_model()
    >>> x, y = render_digits(8)
    >>> opt = rg.optim.SGD(model.parameters(), lr=0.1)
    >>> path = profile_step(model, rg.from_numpy(x), rg.from_numpy(y), opt, rg.nn.CrossEntropyLoss(),
    ...                     os.path.join(tempfile.mkdtemp(), "trace.json"))
    >>> names = {e["name"] for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"}
    >>> {"forward", "backward", "optimizer.step"} <= names
    True
    """
    try:
        from retrograd.profiler import profile, record_function
    except ImportError:
        _step(model, images, labels, optimizer, loss_fn)
        return None
    model.train()
    with profile(record_shapes=True) as prof:
        with record_function("training step"):
            optimizer.zero_grad()
            with record_function("forward"):
                loss = loss_fn(model(images), labels)
            with record_function("backward"):
                loss.backward()
            with record_function("optimizer.step"):
                optimizer.step()
    prof.export_chrome_trace(str(path))
    return str(path)


def _step(model, images, labels, optimizer, loss_fn):
    model.train()
    optimizer.zero_grad()
    loss = loss_fn(model(images), labels)
    loss.backward()
    optimizer.step()


def draw_graph(model: nn.Module, images: rg.Tensor, labels: rg.Tensor, loss_fn: nn.Module,
               out: str | os.PathLike) -> tuple:
    """Draw the backward graph of one forward pass as SVG (or DOT source).

    Builds the graph of ``loss_fn(model(images), labels)`` (no backward is
    run, so saved tensors are shown) with
    ``rg.autograd.graph.to_dot(loss, params=dict(model.named_parameters()))``.

    Parameters
    ----------
    model, loss_fn
        As :func:`train_epoch`.
    images, labels : retrograd.Tensor
        One batch (a small one keeps the picture's numbers short).
    out : str or os.PathLike
        The folder to write ``backward_graph.svg`` (or ``.dot``) into.

    Returns
    -------
    tuple
        ``(path, rendered)``: the file written, and whether it is the SVG
        (False: Graphviz is not installed, and the file is the DOT source).

    Examples
    --------
    >>> import retrograd as rg
    >>> import os, tempfile
    >>> from retrograd.demo import build_model, draw_graph, render_digits
    >>> _ = rg.manual_seed(0)
    >>> x, y = render_digits(2)
    >>> path, rendered = draw_graph(build_model(), rg.from_numpy(x), rg.from_numpy(y), rg.nn.CrossEntropyLoss(),
    ...                             tempfile.mkdtemp())
    >>> os.path.basename(path) == ("backward_graph.svg" if rendered else "backward_graph.dot")
    True
    """
    model.train()
    loss = loss_fn(model(images), labels)
    dot = rg.autograd.graph.to_dot(loss, params=dict(model.named_parameters()))
    stem = pathlib.Path(out) / "backward_graph"
    try:
        return dot.render(stem.with_suffix(".svg"), format="svg"), True
    except RuntimeError:
        # no Graphviz (neither the graphviz package nor the `dot` program): keep the source
        path = stem.with_suffix(".dot")
        path.write_text(dot.source)
        return str(path), False


@dataclass
class DemoResult:
    """What :func:`run` measured and wrote.

    Attributes
    ----------
    epochs : list of dict
        One dict per epoch: ``loss`` and ``train_acc`` (over the epoch's
        training batches), ``test_loss``, ``test_acc`` and ``seconds``.
    test_accuracy : float
        The final test accuracy, in [0, 1].
    test_correct, test_count : int
        Correctly classified test images, and how many there are.
    trace_path : str or None
        The Perfetto trace (None without retrograd-profiler).
    graph_path : str or None
        The backward graph's picture (SVG), or its DOT source.
    graph_rendered : bool
        Whether ``graph_path`` is the SVG.
    seconds : float
        Wall time of :func:`run`.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.demo import DemoResult
    >>> DemoResult().test_accuracy
    0.0
    """
    epochs: list = field(default_factory=list)   # per epoch: dict(loss, train_acc, test_loss, test_acc, seconds)
    test_accuracy: float = 0.0
    test_correct: int = 0
    test_count: int = 0
    trace_path: str | None = None
    graph_path: str | None = None
    graph_rendered: bool = False
    seconds: float = 0.0


def run(epochs: int | None = None, *, quick: bool = False, out: str | os.PathLike = "retrograd-demo",
        seed: int = 0, file: TextIO | None = None, progress: str = "auto") -> DemoResult:
    """Render the digits, train the CNN, write the trace and the graph.

    Parameters
    ----------
    epochs : int, optional
        Passes over the training set (default 3; 1 with ``quick``).
    quick : bool, optional
        A small data set (1000 training and 300 test images) for a run of a
        few seconds (default False: 8000 and 2000).
    out : str or os.PathLike, optional
        Folder for ``trace.json`` and the graph picture (created if needed).
    seed : int, optional
        Seeds the data, the initial weights and the shuffling (default 0).
    file : file-like, optional
        Where to print (default ``sys.stdout``).
    progress : {"auto", "tqdm", "line", "plain"}, optional
        The progress display, as :class:`ProgressBar`'s ``mode``.

    Returns
    -------
    DemoResult
        Per-epoch numbers, the final test accuracy and the files written.

    Raises
    ------
    ValueError
        If ``epochs`` is below 1.

    Examples
    --------
    >>> import retrograd as rg
    >>> import io, tempfile
    >>> from retrograd.demo import run
    >>> log = io.StringIO()
    >>> result = run(quick=True, out=tempfile.mkdtemp(), file=log)
    >>> len(result.epochs), result.test_count
    (1, 300)
    >>> "Final test accuracy" in log.getvalue()
    True
    """
    import sys
    file = sys.stdout if file is None else file
    sizes = dict(_QUICK if quick else _FULL)
    if epochs is not None:
        if epochs < 1:
            raise ValueError(f"epochs must be >= 1, got {epochs}")
        sizes["epochs"] = int(epochs)
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)

    def say(*parts):
        print(*parts, file=file, flush=True)

    start = time.perf_counter()
    result = DemoResult()
    say(f"Rendering {sizes['n_train']} training and {sizes['n_test']} test digits (16x16, seed {seed})...")
    xtr, ytr, xte, yte = digits_split(sizes["n_train"], sizes["n_test"], seed=seed)
    train_set = TensorDataset(rg.from_numpy(xtr), rg.from_numpy(ytr))
    test_set = TensorDataset(rg.from_numpy(xte), rg.from_numpy(yte))
    train_loader: DataLoader = DataLoader(train_set, batch_size=_BATCH_SIZE, shuffle=True,
                              generator=np.random.default_rng(seed))
    test_loader: DataLoader = DataLoader(test_set, batch_size=500)

    rg.manual_seed(seed)
    model = build_model()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = rg.optim.Adam(model.parameters(), lr=_LR)
    say(f"Model: {sum(p.numel() for p in model.parameters())} parameters")
    say(model)
    say(f"Training for {sizes['epochs']} epoch(s), batch {_BATCH_SIZE}, Adam(lr={_LR})  "
        f"[{time.perf_counter() - start:.1f} s]")

    steps = len(train_loader)
    for epoch in range(1, sizes["epochs"] + 1):
        t0 = time.perf_counter()
        with ProgressBar(steps, f"epoch {epoch}/{sizes['epochs']}", file=file, mode=progress) as bar:
            loss, train_acc = train_epoch(model, train_loader, optimizer, loss_fn, bar)
        test_loss, test_acc, correct, count = evaluate(model, test_loader, loss_fn)
        seconds = time.perf_counter() - t0
        result.epochs.append(dict(loss=loss, train_acc=train_acc, test_loss=test_loss, test_acc=test_acc,
                                  seconds=seconds))
        say(f"epoch {epoch}: loss {loss:.4f}  train acc {100 * train_acc:.2f}%  "
            f"test loss {test_loss:.4f}  test acc {100 * test_acc:.2f}%  ({seconds:.1f} s)")
    result.test_accuracy, result.test_correct, result.test_count = test_acc, correct, count

    # one more (real) training step, profiled; then the graph of a small batch
    images, labels = next(iter(train_loader))
    result.trace_path = profile_step(model, images, labels, optimizer, loss_fn, out / "trace.json")
    result.graph_path, result.graph_rendered = draw_graph(model, images[:4], labels[:4], loss_fn, out)
    result.seconds = time.perf_counter() - start

    say(f"\nFinal test accuracy: {100 * result.test_accuracy:.2f}% ({correct}/{count})")
    if result.trace_path is None:
        say("Trace: not written (install retrograd-profiler to profile a training step)")
    else:
        say(f"Trace of one training step: {result.trace_path}\n"
            "    open it in Perfetto (ui.perfetto.dev, 'Open trace file') or chrome://tracing")
    if result.graph_rendered:
        say(f"Backward graph: {result.graph_path}")
    else:
        say(f"Backward graph (DOT source; Graphviz is not installed): {result.graph_path}\n"
            f"    render it with: dot -Tsvg {result.graph_path} -o {out / 'backward_graph.svg'}\n"
            "    (Graphviz's dot, and `pip install graphviz` for rendering from Python)")
    say(f"Done in {result.seconds:.1f} s")
    return result
