"""autodoc as a Python user reads it.

* Signatures without C types: the core's methods are Cython functions whose
  signatures come from ``embedsignature`` docstrings, which keep the C type
  of a typed argument (``Tensor(data=None, *, bool requires_grad=False)``).
  Python never writes a type before a name, so a parameter ``T name...``
  becomes ``name...``; the return annotation goes too (the numpydoc
  ``Returns`` section says the type, as ``autodoc_typehints = "none"`` does
  for Python functions).
* Bases as the reader can follow them: a base without a page of its own
  (a private ``_ConvNd``, ``_Loss``, or a mixin) is replaced by its own
  bases, up to the nearest documented class (its members are on the
  subclass's page: see rg_api.class_members); ``object`` and ``Generic``
  are left out; a documented base is named by its canonical name
  (``retrograd.nn.Module``, not the module it is defined in); another
  library's class is named, not linked (the build has no intersphinx).
"""
from __future__ import annotations

import re

import rg_api

_PARAM = re.compile(r"^(\s*)(?:[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*\**\s+)(\**[A-Za-z_]\w*.*)$", re.S)


def _split_params(text: str) -> list[str]:
    """Split an argument list on its top-level commas."""
    out, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def python_signature(signature: str) -> str:
    """``(self, bool requires_grad=False)`` -> ``(requires_grad=False)``."""
    if not signature or not signature.startswith("(") or not signature.endswith(")"):
        return signature
    params = []
    for param in _split_params(signature[1:-1]):
        head = param.split("=", 1)[0]
        if ":" not in head:                        # Python annotations use a colon, C types a space
            m = _PARAM.match(param)
            if m:
                param = m.group(1) + m.group(2)
        params.append(param)
    if params and params[0].strip() in ("self", "cls"):
        params = params[1:]
    return "(" + ",".join(params).lstrip() + ")"


def _process_signature(app, what, name, obj, options, signature, return_annotation):
    if signature is None:
        return None
    return python_signature(signature), None


def _process_bases(app, name, obj, options, bases):
    bases[:] = rg_api.public_bases(obj, rg_api.current_site().canonical)


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    # before numpydoc's handler: the event keeps the first answer
    app.connect("autodoc-process-signature", _process_signature, priority=100)
    app.connect("autodoc-process-bases", _process_bases)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
