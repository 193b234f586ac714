"""rg.autograd.graph.to_dot: a Graphviz picture of the backward graph.

``to_dot(tensor)`` walks ``grad_fn`` / ``next_functions`` from the output(s)
and writes DOT source: one box per backward node, the leaves (AccumulateGrad)
named after the user's parameters, the arrays each node saved for backward,
and marks on the nodes that carry hooks or retain a gradient. The result is a
``str`` (print it, paste it into any DOT viewer) that can also render itself
through Graphviz.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from retrograd.core import Tensor

__all__ = ["to_dot", "DotSource"]


# --- reading hooks --------------------------------------------------------
# Core lists a node's hooks through private read-only methods (Node._pre_hooks,
# _hooks, _tensor_pre_hooks and _retains_grad_hooks, tuples in registration
# order) and a tensor's through torch's attributes (Tensor._backward_hooks and
# _post_accumulate_grad_hooks, an OrderedDict or None). A core built before
# these existed gets a warning and no hook marks, never wrong ones.

_NODE_READERS = ("_pre_hooks", "_hooks", "_tensor_pre_hooks", "_retains_grad_hooks")
_TENSOR_READERS = ("_backward_hooks", "_post_accumulate_grad_hooks")


class _HookLayout:
    """Marks that this core's hooks can be read (see above)."""


_layout: _HookLayout | None = None
_layout_learnt = False


def _learn_layout() -> _HookLayout | None:
    from retrograd.core import Node

    if all(hasattr(Node, name) for name in _NODE_READERS) and all(hasattr(Tensor, name)
                                                                    for name in _TENSOR_READERS):
        return _HookLayout()
    return None


def _hook_layout() -> _HookLayout | None:
    global _layout, _layout_learnt
    if not _layout_learnt:
        _layout = _learn_layout()
        _layout_learnt = True
        if _layout is None:
            warnings.warn("to_dot: this build of retrograd.core does not let the hooks of a graph be read, so "
                          "hooks and retain_grad are not marked in the picture", RuntimeWarning, stacklevel=3)
    return _layout


def _node_hooks(node, layout: _HookLayout | None) -> dict:
    """``{"pre": n, "post": n, "tensor": {output_nr: n}, "retains_grad": [output_nr, ...]}``, zeros omitted.

    For an AccumulateGrad, "tensor" counts its leaf's hooks; the caller
    replaces it by ``_leaf_hooks``'s count (the same hooks)."""
    out: dict = {}
    if layout is None:
        return out
    for kind, hooks in (("pre", node._pre_hooks()), ("post", node._hooks())):
        if hooks:
            out[kind] = len(hooks)
    per_output: dict = {}
    for nr, _fn in node._tensor_pre_hooks():
        per_output[nr] = per_output.get(nr, 0) + 1
    if per_output:
        out["tensor"] = dict(sorted(per_output.items()))
    retains = [nr for nr, _hook in node._retains_grad_hooks()]
    if retains:
        out["retains_grad"] = retains
    return out


def _leaf_hooks(leaf: Any, layout: _HookLayout | None) -> dict:
    """``{"tensor": n, "post_accumulate": n}`` for a leaf tensor, zeros omitted.

    ``leaf`` is a Tensor, typed Any: its hook attributes are private, so
    core's stub does not list them."""
    out: dict = {}
    if layout is None:
        return out
    for kind, hooks in (("tensor", leaf._backward_hooks), ("post_accumulate", leaf._post_accumulate_grad_hooks)):
        if hooks:
            out[kind] = len(hooks)
    return out


# --- DOT text -------------------------------------------------------------

def _quote(text: str) -> str:
    """A DOT double-quoted string showing ``text`` literally, lines centred.

    Backslashes and quotes are escaped (DOT would read ``\\l`` or ``\\N`` in a
    label as layout commands); newlines become DOT's ``\\n``."""
    body = text.replace("\\", "\\\\").replace('"', '\\"')
    body = body.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{body}"'


def _attrs(attrs: dict) -> str:
    return " ".join(f"{k}={_quote(str(v))}" for k, v in attrs.items())


def _shape_dtype(shape, dtype) -> str:
    return f"{tuple(int(s) for s in shape)} {dtype}"


_GRAPH_ATTRS = {"rankdir": "TB", "ordering": "in"}
_NODE_ATTRS = {"shape": "box", "style": "filled", "fillcolor": "white", "fontname": "monospace", "fontsize": "10",
               "height": "0.2"}
_OUTPUT_STYLE = {"fillcolor": "darkolivegreen1"}
_LEAF_STYLE = {"fillcolor": "lightblue"}
_SAVED_STYLE = {"fillcolor": "orange"}
_HOOKED_STYLE = {"color": "red", "penwidth": "2"}
_RETAINS_STYLE = {"peripheries": "2"}

_LEGEND = [
    ("hooked", "has hooks (red border)", _HOOKED_STYLE),
    ("retains", "retains grad (double border)", _RETAINS_STYLE),
]


def _hook_lines(hooks: dict) -> list:
    lines = []
    if "pre" in hooks or "post" in hooks:
        parts = [f"{hooks[k]} {k}" for k in ("pre", "post") if k in hooks]
        lines.append("hooks: " + ", ".join(parts))
    for nr, n in hooks.get("tensor", {}).items():
        lines.append(f"tensor hooks on output {nr}: {n}")
    if hooks.get("retains_grad"):
        lines.append("retains grad: output " + ", ".join(str(nr) for nr in hooks["retains_grad"]))
    return lines


class _DotWriter:
    def __init__(self, params, show_saved, layout):
        self.names = params
        self.show_saved = show_saved
        self.layout = layout
        self.ids: dict = {}          # id(graph object) -> DOT node id
        self.keep: list = []         # keeps walked objects alive, so their ids stay unique
        self.nodes: list = []        # [DOT id, label lines, attrs], in visit order
        self.saved: dict = {}        # DOT id of a saved array -> its node entry
        self.edges: list = []
        self.edge_set: set = set()
        self.marks: set = set()
        self.counters = {"out": 0, "n": 0, "s": 0}

    def new_id(self, obj, prefix):
        name = f"{prefix}{self.counters[prefix]}"
        self.counters[prefix] += 1
        self.ids[id(obj)] = name
        self.keep.append(obj)
        return name

    def add_node(self, name, label, *styles):
        attrs: dict = {}
        for style in styles:
            attrs.update(style)
        entry = [name, label, attrs]
        self.nodes.append(entry)
        return entry

    def edge(self, tail, head, **attrs):
        self.edges.append(f"\t{tail} -> {head}" + (f" [{_attrs(attrs)}]" if attrs else ""))

    def leaf_label(self, leaf):
        name = self.names.get(id(leaf))
        text = _shape_dtype(leaf.shape, leaf.dtype)
        return text if name is None else f"{name}\n{text}"

    def styles_for(self, hooks, retains):
        styles = []
        if any(k in hooks for k in ("pre", "post", "tensor", "post_accumulate")):
            styles.append(_HOOKED_STYLE)
            self.marks.add("hooked")
        if retains:
            styles.append(_RETAINS_STYLE)
            self.marks.add("retains")
        return styles

    def add_graph_node(self, fn):
        """Emit the DOT node of backward node ``fn`` (and its saved arrays)."""
        dot_id = self.new_id(fn, "n")
        hooks = _node_hooks(fn, self.layout)
        variable = getattr(fn, "variable", None) if type(fn).__name__ == "AccumulateGrad" else None
        if isinstance(variable, Tensor):
            hooks.update(_leaf_hooks(variable, self.layout))
            lines = [self.leaf_label(variable)]
            if "tensor" in hooks:
                lines.append(f"tensor hooks: {hooks['tensor']}")
            if "post_accumulate" in hooks:
                lines.append(f"post-accumulate-grad hooks: {hooks['post_accumulate']}")
            lines += _hook_lines({k: v for k, v in hooks.items() if k in ("pre", "post")})
            self.add_node(dot_id, "\n".join(lines), _LEAF_STYLE, *self.styles_for(hooks, False))
            return dot_id
        lines = [fn.name(), *_hook_lines(hooks)]
        self.add_node(dot_id, "\n".join(lines), *self.styles_for(hooks, bool(hooks.get("retains_grad"))))
        if self.show_saved:
            saved = getattr(fn, "_saved_arrays", None)
            for saved_name, array in (saved() if saved is not None else ()):
                if array is None:
                    continue
                sid = self.ids.get(id(array))
                if sid is None:
                    sid = self.new_id(array, "s")
                    label = f"{_shape_dtype(array.shape, array.dtype)}\n{int(array.nbytes)} bytes"
                    self.saved[sid] = self.add_node(sid, label, _SAVED_STYLE)
                    self.saved[sid].append([saved_name])
                elif saved_name not in self.saved[sid][3]:
                    # one array saved under several names (x * x saves x as self and other),
                    # or by several nodes: one picture of the memory, every name on it
                    self.saved[sid][3].append(saved_name)
                if (sid, dot_id) not in self.edge_set:
                    self.edge_set.add((sid, dot_id))
                    self.edge(sid, dot_id, style="dashed", dir="none")
        return dot_id

    def walk(self, root):
        """Emit every node reachable from ``root``, depth first in next_functions order."""
        if id(root) in self.ids:
            return
        self.add_graph_node(root)
        pending_edges: list = []
        # iterative depth-first walk: graphs may be deeper than Python's recursion limit
        iters = [iter(root.next_functions)]
        parents = [root]
        while iters:
            try:
                child, _nr = next(iters[-1])
            except StopIteration:
                iters.pop()
                parents.pop()
                continue
            if child is None:
                continue
            parent = parents[-1]
            if id(child) not in self.ids:
                self.add_graph_node(child)
                iters.append(iter(child.next_functions))
                parents.append(child)
            pending_edges.append((child, parent))
        for child, parent in pending_edges:
            self.edge(self.ids[id(child)], self.ids[id(parent)])

    def add_output(self, t):
        out_id = self.new_id(t, "out")
        name = self.names.get(id(t))
        lines = [name if name is not None else "output", _shape_dtype(t.shape, t.dtype)]
        retains = t.retains_grad
        if retains:
            lines.append("retains grad")
        if t.grad_fn is not None:
            self.add_node(out_id, "\n".join(lines), _OUTPUT_STYLE, *self.styles_for({}, retains))
            self.walk(t.grad_fn)
            self.edge(self.ids[id(t.grad_fn)], out_id)
        elif t.requires_grad:        # a leaf given as output: it is its own (AccumulateGrad) node
            hooks = _leaf_hooks(t, self.layout)
            lines = [self.leaf_label(t)]
            lines += [f"tensor hooks: {hooks['tensor']}"] if "tensor" in hooks else []
            lines += ([f"post-accumulate-grad hooks: {hooks['post_accumulate']}"]
                      if "post_accumulate" in hooks else [])
            self.add_node(out_id, "\n".join(lines), _LEAF_STYLE, *self.styles_for(hooks, False))
        else:
            lines.append("(does not require grad)")
            self.add_node(out_id, "\n".join(lines), _OUTPUT_STYLE)

    def source(self) -> str:
        lines = ["digraph {", f"\tgraph [{_attrs(_GRAPH_ATTRS)}]", f"\tnode [{_attrs(_NODE_ATTRS)}]"]
        for entry in self.nodes:
            name, label, attrs = entry[:3]
            if len(entry) > 3:        # a saved array: its names first
                label = ", ".join(entry[3]) + "\n" + label
            lines.append(f"\t{name} [{_attrs({'label': label, **attrs})}]")
        lines += self.edges
        legend = [(key, text, style) for key, text, style in _LEGEND if key in self.marks]
        if legend:
            lines.append("\tsubgraph cluster_legend {")
            lines.append(f"\t\tlabel={_quote('legend')} fontname={_quote('monospace')} fontsize=10")
            for key, text, style in legend:
                lines.append(f"\t\tlegend_{key} [{_attrs({'label': text, **style})}]")
            lines.append("\t}")
        lines.append("}")
        return "\n".join(lines) + "\n"


# --- rendering ------------------------------------------------------------

_HOW_TO_RENDER = (
    "rendering the graph needs Graphviz: install the Python bindings (pip install graphviz, or "
    "pip install 'retrograd[graph]') and the Graphviz programs, which are a system package "
    "(apt-get install graphviz, brew install graphviz, conda install graphviz); or paste the DOT source "
    "(print(dot) or str(dot)) into any DOT viewer")


def _render_bytes(source: str, format: str) -> bytes:
    """``source`` laid out by Graphviz's dot, as ``format`` (e.g. "svg", "png")."""
    try:
        import graphviz
    except ImportError:
        graphviz = None
    if graphviz is not None:
        try:
            return graphviz.Source(source).pipe(format=format)
        except graphviz.ExecutableNotFound as e:
            raise RuntimeError(f"the graphviz package found no `dot` program: {_HOW_TO_RENDER}") from e
        except graphviz.CalledProcessError as e:
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else str(e.stderr)
            raise RuntimeError(f"Graphviz's dot failed to render format {format!r}: {err.strip()}") from e
        except ValueError as e:          # an unknown format name
            raise RuntimeError(f"Graphviz cannot render format {format!r}: {e}") from e
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError(f"no Graphviz found: {_HOW_TO_RENDER}")
    proc = subprocess.run([dot, f"-T{format}"], input=source.encode(), capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"Graphviz's dot failed to render format {format!r}: "
                           f"{proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


class DotSource(str):
    """Graphviz DOT source of a backward graph, as made by :func:`to_dot`.

    A ``str`` holding the DOT text: print it, save it, or paste it into any
    DOT viewer. When Graphviz is installed it also renders itself
    (:meth:`render`), and Jupyter shows it as a picture (``_repr_svg_``).

    Examples
    --------
    >>> import retrograd as rg
    >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
    >>> dot = rg.autograd.graph.to_dot((x * x).sum())
    >>> isinstance(dot, str), dot.source == str(dot)
    (True, True)
    >>> dot.splitlines()[0]
    'digraph {'
    """

    __slots__ = ()

    @property
    def source(self) -> str:
        """The DOT text as a plain ``str`` (as ``graphviz.Source.source``).

        Returns
        -------
        str

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor(2.0, requires_grad=True)
        >>> type(rg.autograd.graph.to_dot(x.exp()).source).__name__
        'str'
        """
        return str.__str__(self)

    def pipe(self, format: str = "svg") -> bytes:
        """Render with Graphviz and return the image's bytes.

        Uses the ``graphviz`` Python package when it is installed, else runs
        Graphviz's ``dot`` program if it is on the PATH.

        Parameters
        ----------
        format : str, default "svg"
            Any output format of ``dot -T`` ("svg", "png", "pdf", ...).

        Returns
        -------
        bytes
            The rendered image.

        Raises
        ------
        RuntimeError
            When Graphviz is not installed (the message says how to install
            it, or to paste the source into a DOT viewer), or ``dot`` fails.

        Examples
        --------
        >>> import retrograd as rg
        >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> dot = rg.autograd.graph.to_dot(x.sum())
        >>> try:
        ...     svg = dot.pipe("svg")
        ... except RuntimeError:       # Graphviz is not installed
        ...     svg = b"<svg/>"
        >>> b"<svg" in svg
        True
        """
        return _render_bytes(self.source, format)

    def render(self, path: str | os.PathLike, format: str = "svg") -> str:
        """Render with Graphviz and write the image to ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (created or replaced; its folder must exist).
        format : str, default "svg"
            Any output format of ``dot -T`` ("svg", "png", "pdf", ...).

        Returns
        -------
        str
            ``path``, as a string.

        Raises
        ------
        RuntimeError
            When Graphviz is not installed (the message says how to install
            it, or to paste the source into a DOT viewer), or ``dot`` fails.

        Examples
        --------
        >>> import retrograd as rg
        >>> import os, tempfile
        >>> x = rg.tensor([1.0, 2.0], requires_grad=True)
        >>> dot = rg.autograd.graph.to_dot((x * 3).sum())
        >>> path = os.path.join(tempfile.mkdtemp(), "graph.svg")
        >>> try:
        ...     written = dot.render(path, format="svg")
        ... except RuntimeError:       # Graphviz is not installed
        ...     written = path
        ...     _ = open(path, "w").write("<svg/>")
        >>> os.path.getsize(written) > 0
        True
        """
        data = self.pipe(format)
        with open(path, "wb") as f:
            f.write(data)
        return os.fspath(path)

    def _repr_svg_(self) -> str | None:
        # Jupyter's rich display: the picture when Graphviz can draw it, else
        # None, and the notebook falls back to the text.
        try:
            return self.pipe("svg").decode("utf-8")
        except RuntimeError:
            return None


def to_dot(tensor: Tensor | Sequence[Tensor], params: Mapping[str, Tensor] | None = None,
           show_saved: bool = True) -> DotSource:
    """Draw the backward graph behind ``tensor`` as Graphviz DOT source.

    Like torchviz's ``make_dot``: it walks ``grad_fn`` and ``next_functions``
    from the output(s) and returns the DOT text of a picture with

    - the output tensor(s) (green), with shape and dtype;
    - one box per backward node, named as ``grad_fn.name()`` (``MulBackward0``),
      arrows running from inputs to outputs (the forward direction);
    - the leaves (their AccumulateGrad nodes, blue), labelled with the
      parameter's name when ``params`` names it, and with shape and dtype;
    - with ``show_saved``, each array a node saved for backward (orange,
      joined by a dashed line), with its name in the node, shape, dtype and
      bytes; an array saved by several nodes is drawn once;
    - marks: a red border on nodes with hooks (``Node.register_hook`` /
      ``register_prehook``, ``Tensor.register_hook``,
      ``register_post_accumulate_grad_hook``) and a double border on nodes
      whose output tensor called ``retain_grad()``, each spelled out in the
      node's label and in a legend.

    Node ids follow the order of the walk (``out0``, ``n0``, ``s0``, ...),
    so the same graph always gives the same text.

    Parameters
    ----------
    tensor : Tensor or sequence of Tensor
        The output(s) whose graph to draw.
    params : Mapping[str, Tensor], optional
        Names for leaf tensors, e.g. ``dict(model.named_parameters())``.
    show_saved : bool, default True
        Draw the arrays saved for backward.

    Returns
    -------
    DotSource
        A ``str`` of DOT source with ``render(path, format)`` and ``pipe(format)``.

    Raises
    ------
    TypeError
        When ``tensor`` holds something other than tensors, or ``params``
        is not a mapping of names to tensors.

    Examples
    --------
    >>> import retrograd as rg
    >>> w = rg.tensor([[1.0, 2.0]], requires_grad=True)
    >>> x = rg.tensor([[3.0], [4.0]])
    >>> loss = (w @ x).sum()
    >>> dot = rg.autograd.graph.to_dot(loss, params={"w": w})
    >>> print(dot, end="")                          # doctest: +NORMALIZE_WHITESPACE
    digraph {
        graph [rankdir="TB" ordering="in"]
        node [shape="box" style="filled" fillcolor="white" fontname="monospace" fontsize="10" height="0.2"]
        out0 [label="output\\n() float32" fillcolor="darkolivegreen1"]
        n0 [label="SumBackward0"]
        n1 [label="MatmulBackward0"]
        s0 [label="other\\n(2, 1) float32\\n8 bytes" fillcolor="orange"]
        s1 [label="self\\n(1, 2) float32\\n8 bytes" fillcolor="orange"]
        n2 [label="w\\n(1, 2) float32" fillcolor="lightblue"]
        s0 -> n1 [style="dashed" dir="none"]
        s1 -> n1 [style="dashed" dir="none"]
        n1 -> n0
        n2 -> n1
        n0 -> out0
    }

    Render it with Graphviz installed: ``dot.render("graph.svg")``.
    """
    outputs = list(tensor) if isinstance(tensor, (list, tuple)) else [tensor]
    for t in outputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"to_dot(): expected a Tensor or a sequence of Tensors, got {type(t).__name__}")
    names: dict = {}
    if params is not None:
        if not isinstance(params, Mapping):
            raise TypeError(f"to_dot(): params must be a mapping of names to tensors, e.g. "
                            f"dict(model.named_parameters()), got {type(params).__name__}")
        for name, p in params.items():
            if not isinstance(p, Tensor):
                raise TypeError(f"to_dot(): params[{name!r}] is a {type(p).__name__}, not a Tensor")
            names[id(p)] = str(name)
    writer = _DotWriter(names, show_saved, _hook_layout())
    for t in outputs:
        writer.add_output(t)
    return DotSource(writer.source())
