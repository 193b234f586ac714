"""rg.autograd.graph.to_dot: the DOT text of known graphs, and rendering it with Graphviz."""
from __future__ import annotations

import re
import shutil
import sys

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import _to_dot
from retrograd.autograd.graph import DotSource, to_dot

_NODE = re.compile(r'^\t+(\w+) \[(.*)\]$')
_EDGE = re.compile(r'^\t(\w+) -> (\w+)(?: \[(.*)\])?$')
_ATTR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _unescape(value: str) -> str:
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def parse(dot: str):
    """``(nodes, edges)``: {id: {attr: value}} in order, and [(tail, head, {attr: value})], labels unescaped."""
    nodes, edges = {}, []
    for line in dot.splitlines():
        if m := _EDGE.match(line):
            edges.append((m.group(1), m.group(2), {k: _unescape(v) for k, v in _ATTR.findall(m.group(3) or "")}))
        elif m := _NODE.match(line):
            if m.group(1) in ("graph", "node"):
                continue
            nodes[m.group(1)] = {k: _unescape(v) for k, v in _ATTR.findall(m.group(2))}
    return nodes, edges


def labels(dot):
    nodes, _ = parse(dot)
    return {k: v["label"] for k, v in nodes.items()}


def first_lines(dot):
    return [label.split("\n")[0] for label in labels(dot).values()]


def graph_edges(dot):
    """Edges between backward nodes and outputs (saved-tensor edges left out)."""
    _, edges = parse(dot)
    return [(a, b) for a, b, attrs in edges if attrs.get("style") != "dashed"]


@pytest.fixture
def wb():
    w = rg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = rg.tensor([0.5, -0.5], requires_grad=True)
    return w, b


def test_returns_a_str_with_dot_source(wb):
    w, b = wb
    dot = to_dot((w * 2 + b).sum())
    assert isinstance(dot, DotSource) and isinstance(dot, str)
    assert dot.source == str(dot) and type(dot.source) is str
    assert dot.startswith("digraph {\n") and dot.endswith("}\n")
    assert "to_dot" in rg.autograd.graph.__all__ and "DotSource" in rg.autograd.graph.__all__


def test_structure_of_a_known_graph(wb):
    w, b = wb
    x = rg.tensor([[1.0, 0.0], [0.0, 1.0]])
    loss = ((x @ w).relu() + b).sum()
    dot = to_dot(loss, params={"weight": w, "bias": b})
    lab = labels(dot)
    # ids by visit order: the output, then the walk from it (inputs in next_functions order)
    assert [k for k in lab if not k.startswith("s")] == ["out0", "n0", "n1", "n2", "n3", "n4", "n5"]
    assert [lab[k].split("\n")[0] for k in ["out0", "n0", "n1", "n2", "n3", "n4", "n5"]] == [
        "output", "SumBackward0", "AddBackward0", "ReluBackward0", "MatmulBackward0", "weight", "bias"]
    assert lab["out0"] == "output\n() float64"
    assert lab["n4"] == "weight\n(2, 2) float64"
    assert lab["n5"] == "bias\n(2,) float64"
    # arrows run from inputs to the node that uses them, and into the output
    assert sorted(graph_edges(dot)) == sorted([("n0", "out0"), ("n1", "n0"), ("n2", "n1"), ("n3", "n2"),
                                               ("n4", "n3"), ("n5", "n1")])
    nodes, _ = parse(dot)
    assert nodes["n4"]["fillcolor"] == "lightblue" and nodes["out0"]["fillcolor"] == "darkolivegreen1"


def test_node_names_match_torch():
    torch = pytest.importorskip("torch")

    def program(lib, a, b):
        return ((a * b).exp() + a.sin() / b).mean()

    a0, b0 = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a0, b0))
    ra, rb = (rg.tensor(v, requires_grad=True) for v in (a0, b0))

    def torch_names(fn, seen):
        if fn is None or fn in seen:
            return []
        seen.add(fn)
        out = [fn.name()]
        for child, _ in fn.next_functions:
            out += torch_names(child, seen)
        return out

    expected = [n for n in torch_names(program(torch, ta, tb).grad_fn, set()) if n != "torch::autograd::AccumulateGrad"]
    dot = to_dot(program(rg, ra, rb), params={"a": ra, "b": rb})
    ours = [line for line in first_lines(dot)[1:] if line.endswith("Backward0")]
    assert sorted(ours) == sorted(expected)
    assert first_lines(dot).count("a") == 1 and first_lines(dot).count("b") == 1


def test_leaves_without_names_show_shape_and_dtype():
    w = rg.ones(3, 4, dtype=rg.float32, requires_grad=True)
    lab = labels(to_dot(w.sum()))
    assert lab["n1"] == "(3, 4) float32"


def test_params_name_only_the_given_leaves(wb):
    w, b = wb
    lab = labels(to_dot((w + b).sum(), params={"w": w}))
    assert "w\n(2, 2) float64" in lab.values()
    assert "(2,) float64" in lab.values()


def test_saved_tensors_show_name_shape_dtype_and_bytes():
    a = rg.ones(3, 4, dtype=rg.float32, requires_grad=True)
    c = rg.full((3, 4), 2.0, dtype=rg.float32, requires_grad=True)
    dot = to_dot((a * c).sum())
    nodes, edges = parse(dot)
    saved = {k: v["label"] for k, v in nodes.items() if k.startswith("s")}
    assert sorted(saved.values()) == ["other\n(3, 4) float32\n48 bytes", "self\n(3, 4) float32\n48 bytes"]
    for sid in saved:
        assert nodes[sid]["fillcolor"] == "orange"
        [(tail, head, attrs)] = [e for e in edges if e[0] == sid]
        assert labels(dot)[head] == "MulBackward0" and attrs == {"style": "dashed", "dir": "none"}
    # the names come from the node's saved values, as saved_tensors_report lists them
    report = rg.autograd.graph.saved_tensors_report((a * c).sum())
    assert sorted(r.name for r in report) == ["other", "self"]


def test_an_array_saved_twice_is_drawn_once():
    a = rg.tensor([1.0, 2.0], requires_grad=True)
    dot = to_dot((a * a).sum())
    nodes, edges = parse(dot)
    saved = [k for k in nodes if k.startswith("s")]
    assert len(saved) == 1
    assert nodes[saved[0]]["label"] == "other, self\n(2,) float64\n16 bytes"
    assert len([e for e in edges if e[0] == saved[0]]) == 1
    # ... while both uses of `a` stay visible as two edges into MulBackward0
    assert graph_edges(dot).count(("n2", "n1")) == 2


def test_show_saved_false_and_released_saves(wb):
    w, _ = wb
    loss = (w.exp() * w).sum()
    assert not any(k.startswith("s") for k in labels(to_dot(loss, show_saved=False)))
    assert any(k.startswith("s") for k in labels(to_dot(loss)))
    loss.backward()                         # frees what the nodes saved
    assert not any(k.startswith("s") for k in labels(to_dot(loss)))


def test_custom_function_nodes():
    class Cube(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    x = rg.tensor([1.0, 2.0], requires_grad=True)
    lab = labels(to_dot(Cube.apply(x).sum(), params={"x": x}))
    assert "CubeBackward" in lab.values()
    assert "saved_tensors[0]\n(2,) float64\n16 bytes" in lab.values()


def test_hook_marks(wb):
    w, b = wb
    h = w * 3
    h.register_hook(lambda g: g)
    h.retain_grad()
    out = (h + b).sum()
    out.grad_fn.register_prehook(lambda go: None)
    out.grad_fn.register_hook(lambda gi, go: None)
    out.grad_fn.register_hook(lambda gi, go: None)
    b.register_hook(lambda g: g)
    w.register_post_accumulate_grad_hook(lambda t: None)
    dot = to_dot(out, params={"w": w, "b": b})
    nodes, _ = parse(dot)
    by_name = {v["label"].split("\n")[0]: v for v in nodes.values()}
    assert by_name["SumBackward0"]["label"] == "SumBackward0\nhooks: 1 pre, 2 post"
    assert by_name["MulBackward0"]["label"] == ("MulBackward0\ntensor hooks on output 0: 1\n"
                                                "retains grad: output 0")
    assert by_name["b"]["label"] == "b\n(2,) float64\ntensor hooks: 1"
    assert by_name["w"]["label"] == "w\n(2, 2) float64\npost-accumulate-grad hooks: 1"
    for name in ("SumBackward0", "MulBackward0", "b", "w"):
        assert by_name[name]["color"] == "red" and by_name[name]["penwidth"] == "2"
    assert by_name["MulBackward0"]["peripheries"] == "2"
    assert "color" not in by_name["AddBackward0"] and "peripheries" not in by_name["AddBackward0"]
    # the legend says what the marks mean
    assert "subgraph cluster_legend {" in dot
    assert nodes["legend_hooked"]["label"] == "has hooks (red border)"
    assert nodes["legend_retains"]["label"] == "retains grad (double border)"


def test_removed_hooks_are_not_marked(wb):
    w, _ = wb
    out = (w * 2).sum()
    handle = out.grad_fn.register_prehook(lambda go: None)
    assert "hooks: 1 pre" in to_dot(out)
    handle.remove()
    dot = to_dot(out)
    assert "hooks" not in dot and "cluster_legend" not in dot and "red" not in dot


def test_output_that_retains_grad(wb):
    w, _ = wb
    y = w * 2
    y.retain_grad()
    lab = labels(to_dot(y))
    assert lab["out0"] == "output\n(2, 2) float64\nretains grad"
    assert lab["n0"] == "MulBackward0\nretains grad: output 0"


def test_leaf_and_constant_outputs(wb):
    w, _ = wb
    assert labels(to_dot(w, params={"w": w})) == {"out0": "w\n(2, 2) float64"}
    assert labels(to_dot(rg.zeros(3))) == {"out0": "output\n(3,) float64\n(does not require grad)"}


def test_several_outputs_share_their_graph(wb):
    w, b = wb
    h = (w * b).exp()
    dot = to_dot([h.sum(), h.mean()], params={"w": w, "b": b})
    lab = labels(dot)
    assert first_lines(dot).count("ExpBackward0") == 1           # shared nodes drawn once
    assert first_lines(dot).count("output") == 2
    exp_id = [k for k, v in lab.items() if v.startswith("ExpBackward0")][0]
    assert sum(1 for a, _ in graph_edges(dot) if a == exp_id) == 2


def test_deterministic_output(wb):
    w, b = wb

    def build():
        return to_dot(((w @ w).tanh() * b).sum(), params={"w": w, "b": b})

    assert build() == build()


def test_deep_graphs_do_not_recurse():
    x = rg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    dot = to_dot(y.sum(), show_saved=False)
    assert first_lines(dot).count("MulBackward0") == 3000


def test_labels_are_escaped():
    w = rg.tensor([1.0], requires_grad=True)
    name = 'layer "A"\\n\\l {x}\nnext'
    dot = to_dot((w * 2).sum(), params={name: w})
    line = [ln for ln in dot.splitlines() if ln.startswith("\tn2 ")][0]
    assert line == '\tn2 [label="layer \\"A\\"\\\\n\\\\l {x}\\nnext\\n(1,) float64" fillcolor="lightblue"]'
    assert labels(dot)["n2"] == name + "\n(1,) float64"


def test_argument_errors():
    with pytest.raises(TypeError, match="expected a Tensor"):
        to_dot(np.ones(2))
    with pytest.raises(TypeError, match="expected a Tensor"):
        to_dot([rg.ones(1, requires_grad=True), 3])
    w = rg.ones(1, requires_grad=True)
    with pytest.raises(TypeError, match="named_parameters"):
        to_dot(w * 2, params=[w])
    with pytest.raises(TypeError, match=r"params\['w'\] is a ndarray"):
        to_dot(w * 2, params={"w": np.ones(1)})


def test_hooks_are_readable_on_this_core():
    # a core without the hook accessors fails here, not silently in pictures
    assert _to_dot._learn_layout() is not None


def test_hook_marks_follow_registration_and_removal(wb):
    w, _ = wb
    mid = w * 2
    out = mid.sum()
    h_pre = out.grad_fn.register_prehook(lambda go: None)
    h_post = out.grad_fn.register_hook(lambda gi, go: None)
    h_t = mid.register_hook(lambda g: None)
    h_w = w.register_hook(lambda g: None)
    h_acc = w.register_post_accumulate_grad_hook(lambda t: None)
    dot = to_dot(out)
    for line in ("hooks: 1 pre, 1 post", "tensor hooks on output 0: 1", "tensor hooks: 1",
                 "post-accumulate-grad hooks: 1"):
        assert line in dot
    for h in (h_pre, h_post, h_t, h_w, h_acc):
        h.remove()
    assert "hooks" not in to_dot(out)


def test_unreadable_hooks_warn_and_mark_nothing(monkeypatch, wb):
    w, _ = wb
    monkeypatch.setattr(_to_dot, "_learn_layout", lambda: None)
    monkeypatch.setattr(_to_dot, "_layout_learnt", False)
    monkeypatch.setattr(_to_dot, "_layout", None)
    out = (w * 2).sum()
    out.grad_fn.register_prehook(lambda go: None)
    with pytest.warns(RuntimeWarning, match="hooks and retain_grad are not marked"):
        dot = to_dot(out)
    assert "SumBackward0" in dot and "hooks" not in dot


# --- rendering ------------------------------------------------------------

def _no_graphviz(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)      # import graphviz -> ImportError
    monkeypatch.setattr(_to_dot.shutil, "which", lambda name: None)


def test_without_graphviz_render_says_how(monkeypatch, tmp_path, wb):
    _no_graphviz(monkeypatch)
    w, _ = wb
    dot = to_dot((w * 2).sum())
    with pytest.raises(RuntimeError) as info:
        dot.render(tmp_path / "g.svg")
    msg = str(info.value)
    assert "pip install graphviz" in msg and "apt-get install graphviz" in msg and "DOT viewer" in msg
    assert not (tmp_path / "g.svg").exists()
    assert dot._repr_svg_() is None


needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz is not installed (no `dot` program on the PATH): "
                                      "apt-get install graphviz to run the rendering tests")


def _check_image(path, fmt):
    data = path.read_bytes()
    if fmt == "svg":
        assert b"<svg" in data and b"MulBackward0" in data and b"weight" in data
    else:
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 100


def _marked_graph():
    w = rg.tensor([[1.0, 2.0]], requires_grad=True)
    y = w * 3
    y.retain_grad()
    out = y.sum()
    out.grad_fn.register_prehook(lambda go: None)
    return to_dot(out, params={'weight "w"\\': w})


@needs_dot
@pytest.mark.parametrize("fmt", ["svg", "png"])
@pytest.mark.parametrize("route", ["graphviz package", "dot program"])
def test_render_with_dot(monkeypatch, tmp_path, fmt, route):
    if route == "dot program":
        monkeypatch.setitem(sys.modules, "graphviz", None)
    elif pytest.importorskip("graphviz", reason="the graphviz Python package is not installed") is None:
        return
    dot = _marked_graph()
    path = tmp_path / f"graph.{fmt}"
    assert dot.render(path, format=fmt) == str(path)
    _check_image(path, fmt)


@needs_dot
def test_repr_svg_and_unknown_formats():
    dot = _marked_graph()
    svg = dot._repr_svg_()
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg
    assert "weight &quot;w&quot;\\" in svg           # the escaped name drawn literally
    with pytest.raises(RuntimeError, match="no-such-format"):
        dot.pipe("no-such-format")


@needs_dot
def test_dot_program_errors_become_runtime_errors(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(RuntimeError, match="Graphviz's dot failed to render format 'no-such-format'"):
        _marked_graph().pipe("no-such-format")
    with pytest.raises(RuntimeError, match="Graphviz's dot failed"):
        DotSource("digraph { this is not DOT").pipe("svg")
