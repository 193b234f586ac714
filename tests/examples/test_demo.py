"""The demo (`python -m retrograd.demo`): its data set, its progress line,
and a --quick run end to end in a fresh interpreter."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from retrograd.demo import (NUM_CLASSES, ProgressBar, digits_split, format_seconds, parse_args,
                            render_digits)
from retrograd.demo._cli import _BLAS_VARS

# -- the data set --------------------------------------------------------------


def test_render_is_deterministic_and_seed_dependent():
    a_x, a_y = render_digits(300, seed=5)
    b_x, b_y = render_digits(300, seed=5)
    assert np.array_equal(a_x, b_x) and np.array_equal(a_y, b_y)
    c_x, _ = render_digits(300, seed=6)
    assert not np.array_equal(a_x, c_x)


def test_render_shapes_dtypes_and_range():
    x, y = render_digits(37, size=20, seed=1)
    assert x.shape == (37, 1, 20, 20) and x.dtype == np.float32
    assert y.shape == (37,) and y.dtype == np.int64
    assert x.min() >= 0.0 and x.max() <= 1.0
    assert render_digits(0)[0].shape == (0, 1, 16, 16)


@pytest.mark.parametrize("n", [10, 1000, 1003])
def test_render_is_balanced(n):
    _, y = render_digits(n, seed=2)
    counts = np.bincount(y, minlength=NUM_CLASSES)
    assert counts.sum() == n and counts.max() - counts.min() <= 1
    assert set(np.unique(y)) == set(range(NUM_CLASSES))


def test_render_is_shuffled():
    _, y = render_digits(100, seed=0)
    assert not np.array_equal(y, np.arange(100) % 10)


def test_classes_differ_and_noise_is_there():
    # class means are far apart (the strokes differ), and the images are noisy
    x, y = render_digits(2000, seed=0, noise=0.0)
    means = np.stack([x[y == d].mean(axis=0).ravel() for d in range(NUM_CLASSES)])
    dist = np.linalg.norm(means[:, None] - means[None], axis=-1)
    assert dist[~np.eye(NUM_CLASSES, dtype=bool)].min() > 1.0
    noisy, _ = render_digits(2000, seed=0, noise=0.25)
    assert np.abs(noisy - x).mean() > 0.05


def test_split_is_independent_and_stable():
    xtr, ytr, xte, yte = digits_split(200, 50, seed=3)
    assert xtr.shape == (200, 1, 16, 16) and xte.shape == (50, 1, 16, 16)
    # no test image is a copy of a training image
    flat_tr = {row.tobytes() for row in xtr.reshape(200, -1)}
    assert not any(row.tobytes() in flat_tr for row in xte.reshape(50, -1))
    # the training set does not depend on the test set's size
    xtr2, ytr2, _, _ = digits_split(200, 80, seed=3)
    assert np.array_equal(xtr, xtr2) and np.array_equal(ytr, ytr2)


@pytest.mark.parametrize("kwargs, match", [(dict(n=-1), "n must be >= 0"),
                                           (dict(n=5, size=4), "size must be at least 8"),
                                           (dict(n=5, noise=-0.1), "noise must be >= 0")])
def test_render_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        render_digits(**kwargs)


# -- the progress line -------------------------------------------------------------


def test_progress_without_tty_prints_plain_lines():
    out = io.StringIO()                          # not a terminal: auto picks plain lines
    with ProgressBar(10, "epoch 1/2", file=out) as bar:
        assert bar.mode == "plain"
        for i in range(10):
            bar.update(loss=2.0 - i / 10)
    text = out.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert 2 <= len(lines) <= 5
    assert lines[-1].startswith("epoch 1/2  10/10 |####################|")
    assert "step/s" in lines[-1] and "loss 1.1000" in lines[-1]
    assert "ETA" in lines[0]                       # intermediate lines say how long is left


class _FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_picks_tqdm_or_the_line(monkeypatch):
    import importlib.util
    has_tqdm = importlib.util.find_spec("tqdm") is not None
    bar = ProgressBar(3, file=_FakeTerminal())
    assert bar.mode == ("tqdm" if has_tqdm else "line")
    bar.close()
    monkeypatch.setitem(sys.modules, "tqdm", None)          # as if tqdm were not installed
    out = _FakeTerminal()
    with ProgressBar(3, "x", file=out, min_interval=0.0) as bar:
        assert bar.mode == "line"
        bar.update(3, loss=1.0)
    assert out.getvalue().startswith("\rx  3/3 |")


def test_progress_line_mode_redraws_one_line():
    out = io.StringIO()
    with ProgressBar(5, "train", file=out, mode="line", min_interval=0.0) as bar:
        for _ in range(5):
            bar.update(loss=0.5)
    text = out.getvalue()
    assert text.count("\r") == 6 and text.endswith("\n") and text.count("\n") == 1
    frames = [f.rstrip() for f in text.split("\r") if f]
    assert frames[0].startswith("train  1/5 |####") and "ETA" in frames[0]
    assert frames[-1].startswith("train  5/5 |####################|") and "loss 0.5000" in frames[-1]


def test_progress_rate_and_eta():
    bar = ProgressBar(4, file=io.StringIO(), mode="plain")
    assert bar.rate == 0.0 and bar.eta == float("inf")
    bar._start -= 2.0                              # pretend two seconds have passed
    bar.update(2)
    assert bar.rate == pytest.approx(1.0, rel=0.05) and bar.eta == pytest.approx(2.0, rel=0.05)
    bar.close()
    bar.close()                                    # idempotent


def test_progress_uses_tqdm_when_asked():
    pytest.importorskip("tqdm")
    out = io.StringIO()
    with ProgressBar(3, "e", file=out, mode="tqdm") as bar:
        for _ in range(3):
            bar.update(loss=0.25)
    assert "3/3" in out.getvalue() and "loss=0.2500" in out.getvalue()


def test_progress_rejects_bad_arguments():
    with pytest.raises(ValueError, match="mode must be one of"):
        ProgressBar(3, mode="fancy")
    with pytest.raises(ValueError, match="total must be >= 0"):
        ProgressBar(-1)


def test_format_seconds():
    assert format_seconds(0) == "0:00"
    assert format_seconds(59.6) == "1:00"
    assert format_seconds(3600) == "1:00:00"
    assert format_seconds(float("inf")) == "?" and format_seconds(-1) == "?"


# -- the command line --------------------------------------------------------------


def test_parse_args_defaults_and_errors():
    args = parse_args([])
    assert (args.epochs, args.quick, args.out, args.seed, args.progress) == (None, False, "retrograd-demo", 0, "auto")
    with pytest.raises(SystemExit):
        parse_args(["--epochs", "0"])
    with pytest.raises(SystemExit):
        parse_args(["--progress", "fancy"])


def _env_without_blas_vars():
    env = {k: v for k, v in os.environ.items() if k not in _BLAS_VARS}
    env.pop("RETROGRAD_VIRTUAL_CPU_DEVICES", None)
    return env


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """`python -m retrograd.demo --quick` in a fresh interpreter, output piped
    (not a terminal), no BLAS thread variable set (so the demo sets them and
    restarts itself once)."""
    out = tmp_path_factory.mktemp("demo") / "out"
    proc = subprocess.run([sys.executable, "-m", "retrograd.demo", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, env=_env_without_blas_vars(),
                          cwd=str(out.parent))
    assert proc.returncode == 0, proc.stderr
    return proc, out


def test_quick_run_trains_and_reports(quick_run):
    proc, _ = quick_run
    text = proc.stdout
    assert "\r" not in text                        # plain progress lines when not a terminal
    assert "epoch 1/1  16/16 |" in text and "step/s" in text
    epoch_line = next(line for line in text.splitlines() if line.startswith("epoch 1: loss"))
    assert "train acc" in epoch_line and "test acc" in epoch_line
    acc = float(text.split("Final test accuracy: ")[1].split("%")[0])
    assert 20.0 < acc <= 100.0                     # one small epoch: well above chance (10%)
    assert "Done in" in text


def test_quick_run_set_blas_threads_itself(quick_run):
    proc, _ = quick_run
    assert proc.stdout.splitlines()[0].startswith("BLAS threads: 1 (the demo's choice")


def test_blas_threads_of_the_user_are_kept(tmp_path):
    env = dict(_env_without_blas_vars(), OPENBLAS_NUM_THREADS="1")
    code = ("import sys; from retrograd.demo import limit_blas_threads, blas_threads_note; "
            "how = limit_blas_threads(); print(how); print(blas_threads_note(how))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["user", "BLAS threads: as the environment sets them (OPENBLAS_NUM_THREADS=1)"]


@pytest.mark.requires("retrograd-profiler")        # without it the demo says so and writes no trace
def test_quick_run_writes_a_trace_with_op_events(quick_run):
    proc, out = quick_run
    trace = out / "trace.json"
    assert f"Trace of one training step: {trace}" in proc.stdout
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e.get("name") for e in events if e.get("ph") == "X"}
    assert {"training step", "forward", "backward", "optimizer.step"} <= names
    assert any("conv2d" in n.lower() for n in names)
    assert any("backward" in n.lower() and n != "backward" for n in names)


def test_quick_run_writes_the_graph(quick_run):
    proc, out = quick_run
    svg, dot = out / "backward_graph.svg", out / "backward_graph.dot"
    if svg.exists():
        assert f"Backward graph: {svg}" in proc.stdout
        assert "<svg" in svg.read_text()
    else:
        assert "dot -Tsvg" in proc.stdout and str(dot) in proc.stdout
        source = dot.read_text()
        assert source.lstrip().startswith("digraph") and "0.weight" in source


# -- the graph picture, with and without Graphviz -------------------------------------


def _small_batch():
    import retrograd as rg
    from retrograd.demo import build_model
    rg.manual_seed(0)
    x, y = render_digits(4, seed=0)
    return build_model(), rg.from_numpy(x), rg.from_numpy(y), rg.nn.CrossEntropyLoss()


def test_draw_graph_without_graphviz_writes_dot(tmp_path, monkeypatch):
    from retrograd.demo import draw_graph
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))            # no `dot` program to be found
    monkeypatch.setitem(sys.modules, "graphviz", None)  # and no graphviz package
    model, x, y, loss_fn = _small_batch()
    path, rendered = draw_graph(model, x, y, loss_fn, tmp_path)
    assert not rendered and path == str(tmp_path / "backward_graph.dot")
    source = (tmp_path / "backward_graph.dot").read_text()
    assert source.startswith("digraph") and "0.weight" in source and "Conv2DBiasBackward0" in source


def test_draw_graph_renders_svg_with_graphviz(tmp_path):
    import shutil
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    from retrograd.demo import draw_graph
    model, x, y, loss_fn = _small_batch()
    path, rendered = draw_graph(model, x, y, loss_fn, tmp_path)
    assert rendered and path == str(tmp_path / "backward_graph.svg")
    svg = (tmp_path / "backward_graph.svg").read_text()
    assert "<svg" in svg and "9.weight" in svg
