"""Running the ``rg-run`` blocks of a page, without Sphinx: the docs build
(``rg_run``) and the tests (``tests/docs/test_tutorials.py``, which run
every tutorial on every test run) share it.
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import json
import os
import re
import sys
import tempfile
import traceback

_BLOCK = re.compile(r"^(?P<fence>`{3,}|~{3,})\{rg-run\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.S | re.M)
_OPTION = re.compile(r"^:([\w-]+):[ \t]*(.*)$")


# -- reading the blocks of a page ---------------------------------------------

def blocks(text: str) -> list[dict]:
    """The ``rg-run`` blocks of a page's Markdown: their code, options, and
    the prose before each (for the script)."""
    out = []
    last = 0
    for m in _BLOCK.finditer(text):
        lines = m.group("body").splitlines()
        options = {}
        while lines and _OPTION.match(lines[0]):
            key, value = _OPTION.match(lines[0]).groups()
            options[key] = value
            lines.pop(0)
        if lines and not lines[0].strip():
            lines.pop(0)
        out.append({"code": "\n".join(lines).rstrip() + "\n", "options": options,
                    "prose": text[last:m.start()]})
        last = m.end()
    return out


# -- running them --------------------------------------------------------------

def _dot_source(value) -> str | None:
    source = getattr(value, "source", value)
    if isinstance(source, str) and re.match(r"\s*(strict\s+)?digraph\b", source):
        return str(source)
    return None


def _figures() -> list[str]:
    """The open Matplotlib figures as SVG text, closed after (none without Matplotlib)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    out = []
    for num in plt.get_fignums():
        buf = io.StringIO()
        plt.figure(num).savefig(buf, format="svg", bbox_inches="tight")
        svg = buf.getvalue()
        out.append(svg[svg.index("<svg"):])
    plt.close("all")
    return out


def _run_block(code: str, namespace: dict, filename: str) -> dict:
    """Run one block; its printed output, the repr of a final expression,
    the picture of a final graph, the open figures, and the error."""
    tree = ast.parse(code, filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    out = io.StringIO()
    result: dict = {"stdout": "", "dot": None, "figures": [], "error": None}
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                value = eval(compile(last, filename, "eval"), namespace)
                dot = _dot_source(value)
                if dot is not None:
                    result["dot"] = dot
                elif value is not None:
                    print(repr(value))
    except Exception as exc:
        result["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        result["traceback"] = traceback.format_exc()
    result["stdout"] = out.getvalue()
    result["figures"] = _figures()
    return result


def run_page(page_blocks: list[dict], name: str) -> list[dict]:
    """Run a page's blocks in order in one namespace, in a scratch folder."""
    results = []
    namespace: dict = {"__name__": "__main__"}
    cwd = os.getcwd()
    import numpy as np
    saved = np.get_printoptions()
    with tempfile.TemporaryDirectory(prefix="rg_run_") as scratch:
        os.chdir(scratch)
        try:
            for i, block in enumerate(page_blocks):
                results.append(_run_block(block["code"], namespace, f"<{name} block {i + 1}>"))
                if results[-1]["error"] and "raises" not in block["options"]:
                    break                          # the later blocks need this one
        finally:
            os.chdir(cwd)
            np.set_printoptions(**saved)
    return results


def cache_key(page_blocks: list[dict]) -> str:
    import retrograd
    h = hashlib.sha256()
    h.update(f"{sys.version}|{retrograd.__version__}|".encode())
    for block in page_blocks:
        h.update(json.dumps([block["code"], block["options"]], sort_keys=True).encode())
    return h.hexdigest()


# -- the script a reader downloads ---------------------------------------------

_ROLE = re.compile(r"\{[\w:-]+\}`~?([^`<]*?)\s*(?:<[^`>]*>)?`")


def _comment(prose: str) -> str:
    prose = _ROLE.sub(lambda m: f"`{m.group(1)}`", prose)   # {func}`~a.b` -> `a.b`
    lines = []
    for line in prose.strip().splitlines():
        if line.startswith(("```", ":::", "(", "%")) or line.strip().startswith(":"):
            continue                               # fences, targets and comments of MyST
        lines.append(("# " + line.lstrip("#").strip()) if line.strip() else "#")
    return "\n".join(lines).strip("#\n ")


def _print_last(code: str) -> str:
    """A block whose last line is an expression prints it, as the page shows it."""
    tree = ast.parse(code)
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr):
        return code
    if isinstance(last.value, ast.Call) and getattr(last.value.func, "id", None) == "print":
        return code
    lines = code.rstrip().splitlines()
    head = lines[:last.lineno - 1]
    expr = "\n".join(lines[last.lineno - 1:last.end_lineno])
    return "\n".join(head + [f"print({expr})"] + lines[last.end_lineno:])


def script(title: str, page_blocks: list[dict]) -> str:
    parts = [f'"""{title}\n\nThe code of the retrograd tutorial of the same name, run as one program."""']
    for block in page_blocks:
        comment = _comment(block["prose"])
        if comment:
            parts.append("# " + comment if not comment.startswith("#") else comment)
        code = _print_last(block["code"]).rstrip()
        if "raises" in block["options"]:           # an example of an error: the program goes on
            code = "try:\n" + "\n".join("    " + c for c in code.splitlines()) + \
                   "\nexcept Exception as exc:\n    print(type(exc).__name__, exc)"
        parts.append(code)
    return "\n\n".join(parts) + "\n"
