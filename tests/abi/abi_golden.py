"""retrograd-core's ABI, recorded: the one generator of tests/abi/abi_golden.json.

    python tests/abi/abi_golden.py            # compare the installed core with the file
    python tests/abi/abi_golden.py --update   # rewrite the file, on purpose (see below)

What the ABI is (core/retrograd/core/abi.pxd, rules at its top):
- every exported ``cdef`` function, with the C signature Cython stores as its
  capsule's name in ``retrograd.core.abi.__pyx_capi__``;
- every cdef class declared in abi.pxd: its ``__basicsize__`` (consumers
  compile its struct layout in), its fields and its cdef methods, in order
  (the vtable is positional);
- the ``ctypedef``s (slot function types) and the ``cdef enum`` constants of
  abi.pxd, which consumers compile in;
- the meaning of every slot type and function: its contract (the comment
  above its declaration in abi.pxd, which says what it receives and
  returns) and its semantics version (``(semantics N)`` in that comment, 1
  when absent). A signature the compiler checks is not enough: a slot whose
  arguments keep their types but change their meaning breaks consumers as
  surely. A new semantics version is a break (a new slot or function
  instead, or a major bump); a reworded contract whose meaning did not
  change is recorded with ``--update --reword NAME``.

A removal or a change of anything recorded breaks every compiled consumer:
it needs a new ABI major. An addition is allowed within a major only with a
bump of RG_ABI_MINOR (and core/VERSION, whose major.minor is the ABI
version). ``--update`` refuses to record a break unless the major was
bumped, and an addition unless the minor was; after a bump it rewrites the
file. Never edit the JSON by hand. This file never imports other
distributions, and reads abi.pxd from the installed core (get_include()).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import pathlib
import re
import struct
import sys

GOLDEN = pathlib.Path(__file__).with_name("abi_golden.json")
UPDATE_COMMAND = "python tests/abi/abi_golden.py --update"
# The version constants themselves are recorded as "abi_version".
_VERSION_CONSTANTS = {"RG_ABI_MAJOR", "RG_ABI_MINOR"}


# -- reading the ABI --------------------------------------------------------------

def _statements(text: str):
    """abi.pxd as (indent, statement) pairs: comments dropped, statements
    spanning several lines (open parentheses) joined, whitespace collapsed."""
    pending, indent, depth = [], 0, 0
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not pending:
            indent = len(line) - len(line.lstrip())
        pending.append(line.strip())
        depth += line.count("(") - line.count(")")
        if depth == 0:
            stmt = " ".join(pending)
            stmt = re.sub(r"\s+", " ", stmt).replace("( ", "(").replace(" )", ")")
            yield indent, stmt
            pending = []


def parse_pxd(text: str) -> dict:
    """Classes (fields, methods), ctypedefs and enum constants of abi.pxd."""
    classes, ctypedefs, constants = {}, {}, {}
    block, block_kind = None, None
    for indent, stmt in _statements(text):
        if indent == 0:
            block, block_kind = None, None
            m = re.match(r"cdef class (\w+)(?:\((\w+)\))?:", stmt)
            if m:
                block, block_kind = m.group(1), "class"
                classes[block] = {"base": m.group(2), "fields": [], "methods": []}
            elif re.match(r"cdef enum\b.*:$", stmt):
                block_kind = "enum"
            elif stmt.startswith("ctypedef "):
                name = re.search(r"\(\*\s*(\w+)\)|(\w+)$", stmt)
                ctypedefs[name.group(1) or name.group(2)] = stmt
            elif stmt.startswith("cdef inline "):
                # compiled into every consumer: its signature is ABI
                name = re.search(r"(\w+)\(", stmt).group(1)
                ctypedefs[name] = stmt.rstrip(":")
            continue
        if block_kind == "enum":
            m = re.match(r"(\w+) = (.+)$", stmt)
            if m and m.group(1) not in _VERSION_CONSTANTS:
                constants[m.group(1)] = m.group(2)
        elif block_kind == "class" and re.match(r"c?p?def ", stmt):
            kind = "methods" if "(" in stmt else "fields"
            classes[block][kind].append(stmt)
    return {"classes": classes, "ctypedefs": ctypedefs, "constants": constants}


_DECLARATION = re.compile(r"(?:ctypedef \w[\w ]*\(\*\s*(\w+)\)|cdef (?:inline )?[\w *]*?\b(rg_\w+|import_core)\()")
_SEMANTICS = re.compile(r"\(semantics (\d+)\)")


def parse_contracts(text: str) -> dict:
    """{name: {"semantics": N, "contract": text}} for every slot type and
    top-level function of abi.pxd: the comment block right above its
    declaration (declarations with no blank line between them share it)."""
    contracts, block, last_was_comment = {}, [], False
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            block, last_was_comment = [], False
            continue
        if line.startswith("#"):
            if not last_was_comment:
                block = []
            block.append(stripped.lstrip("#").strip())
            last_was_comment = True
            continue
        last_was_comment = False
        if raw[:1].isspace():
            continue
        m = _DECLARATION.match(stripped)
        if m:
            contract = " ".join(" ".join(block).split())
            sem = _SEMANTICS.search(contract)
            contracts[m.group(1) or m.group(2)] = {"semantics": int(sem.group(1)) if sem else 1,
                                                   "contract": contract}
    return contracts


def _capsule_signature(capsule) -> str:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    return get_name(capsule).decode()


def current_abi() -> dict:
    """The ABI of the installed retrograd-core, in the golden file's shape."""
    import retrograd.core
    from retrograd.core import abi

    pxd = pathlib.Path(retrograd.core.get_include(), "retrograd", "core", "abi.pxd")
    text = pxd.read_text()
    parsed = parse_pxd(text)
    parsed["contracts"] = parse_contracts(text)
    for name, entry in parsed["classes"].items():
        entry["basicsize"] = getattr(abi, name).__basicsize__
    return {
        "abi_version": list(retrograd.core.ABI_VERSION),
        # class sizes are those of this pointer size (PyObject_HEAD, pointers)
        "pointer_size": struct.calcsize("P"),
        "functions": {name: _capsule_signature(cap) for name, cap in sorted(abi.__pyx_capi__.items())},
        **parsed,
    }


# -- comparing ------------------------------------------------------------------

def compare(old: dict, new: dict, reworded=()) -> tuple[list, list]:
    """(breaks, additions) from the recorded ABI ``old`` to ``new``, each a
    list of human-readable lines. ``reworded``: names whose contract text
    changed without a change of meaning (``--reword``)."""
    breaks, additions = [], []
    o_con, n_con = old.get("contracts", {}), new.get("contracts", {})
    for name, oc in o_con.items():
        nc = n_con.get(name)
        if nc is None:
            continue                    # a removal: reported with its declaration
        if nc["semantics"] != oc["semantics"]:
            breaks.append(f"{name}: semantics {oc['semantics']} -> {nc['semantics']} (its meaning "
                          "changed: a new slot or function, or a new major)")
        elif nc["contract"] != oc["contract"] and name not in reworded:
            breaks.append(f"{name}: contract changed without a new semantics version: "
                          f"{oc['contract']!r} -> {nc['contract']!r}. If only the wording changed, "
                          f"record it with {UPDATE_COMMAND} --reword {name}; if the meaning did, "
                          "declare a new slot or function instead")
    for name in n_con:
        if name not in o_con and name in old.get("functions", {}) | old.get("ctypedefs", {}):
            additions.append(f"{name}: contract recorded")
    same_pointer_size = old.get("pointer_size") == new["pointer_size"]

    def mapping(section, what):
        o, n = old.get(section, {}), new[section]
        for name in o:
            if name not in n:
                breaks.append(f"{what} {name} removed (was: {o[name]})")
            elif o[name] != n[name]:
                breaks.append(f"{what} {name} changed: {o[name]!r} -> {n[name]!r}")
        for name in n:
            if name not in o:
                additions.append(f"{what} {name} added: {n[name]}")

    mapping("functions", "function")
    mapping("ctypedefs", "ctypedef/inline")
    mapping("constants", "constant")
    o_cls, n_cls = old.get("classes", {}), new["classes"]
    for name, oc in o_cls.items():
        nc = n_cls.get(name)
        if nc is None:
            breaks.append(f"class {name} removed")
            continue
        if oc["base"] != nc["base"]:
            breaks.append(f"class {name}: base {oc['base']} -> {nc['base']}")
        appended = False
        for kind in ("fields", "methods"):
            o, n = oc[kind], nc[kind]
            if n[:len(o)] != o:
                # the first difference says where the layout or vtable moved
                i = next((k for k, (a, b) in enumerate(zip(o, n)) if a != b), min(len(o), len(n)))
                was = o[i] if i < len(o) else "(end)"
                now = n[i] if i < len(n) else "(removed)"
                breaks.append(f"class {name}: {kind[:-1]} #{i} was {was!r}, now {now!r} "
                              f"({kind} are append-only)")
            elif len(n) > len(o):
                appended = appended or kind == "fields"
                additions.extend(f"class {name}: {kind[:-1]} appended: {s}" for s in n[len(o):])
        if same_pointer_size and oc["basicsize"] != nc["basicsize"]:
            line = f"class {name}: basic size {oc['basicsize']} -> {nc['basicsize']}"
            (additions if appended and nc["basicsize"] > oc["basicsize"] else breaks).append(line)
    for name in n_cls:
        if name not in o_cls:
            additions.append(f"class {name} added")
    return breaks, additions


def verdict(old: dict, new: dict, reworded=()) -> tuple[bool, str]:
    """(ok, explanation): is ``new`` exactly what the golden file ``old`` records?"""
    breaks, additions = compare(old, new, reworded)
    ov, nv = tuple(old["abi_version"]), tuple(new["abi_version"])
    v = "{}.{}".format
    if not breaks and not additions and ov == nv:
        if old.get("contracts", {}) != new.get("contracts", {}):
            return False, f"reworded contracts: record them with {UPDATE_COMMAND} --reword NAME"
        return True, f"ABI {v(*nv)} matches {GOLDEN.name}"
    lines = []
    if breaks and nv[0] == ov[0]:
        lines.append(f"ABI BREAK within major {nv[0]}: every compiled consumer (retrograd-engine, ...) "
                     "would crash or misread memory. Restore these, or add a new function "
                     "(`_v2`) / append instead of changing:")
        lines += [f"  - {b}" for b in breaks]
    if additions and nv[:2] == ov[:2]:
        lines.append(f"ABI additions without a minor bump (still {v(*nv)}): bump RG_ABI_MINOR in "
                     "core/retrograd/core/abi.pxd and core/VERSION, then run " + UPDATE_COMMAND + ":")
        lines += [f"  + {a}" for a in additions]
    if not lines:
        lines.append(f"ABI version {v(*ov)} -> {v(*nv)} with compatible changes; record it: "
                     + UPDATE_COMMAND)
        lines += [f"  - {b}" for b in breaks] + [f"  + {a}" for a in additions]
    return False, "\n".join(lines)


def update_allowed(old: dict, new: dict, reworded=()) -> tuple[bool, str]:
    breaks, additions = compare(old, new, reworded)
    ov, nv = tuple(old["abi_version"]), tuple(new["abi_version"])
    if breaks and nv[0] == ov[0]:
        return False, verdict(old, new, reworded)[1]
    if additions and nv[:2] == ov[:2]:
        return False, verdict(old, new, reworded)[1]
    return True, ""


def load_golden() -> dict:
    return json.loads(GOLDEN.read_text())


def write_golden(abi: dict) -> None:
    GOLDEN.write_text(json.dumps(abi, indent=1, sort_keys=True) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true",
                        help="rewrite the golden file (refused for a break within a major, or "
                             "an addition without a minor bump)")
    parser.add_argument("--reword", action="append", default=[], metavar="NAME",
                        help="with --update: NAME's contract comment changed in wording only, "
                             "not in meaning")
    args = parser.parse_args(argv)
    new = current_abi()
    if args.update:
        if GOLDEN.exists():
            ok, why = update_allowed(load_golden(), new, tuple(args.reword))
            if not ok:
                print(why, file=sys.stderr)
                return 1
        write_golden(new)
        print(f"wrote {GOLDEN} (ABI {new['abi_version'][0]}.{new['abi_version'][1]})")
        return 0
    ok, why = verdict(load_golden(), new)
    print(why, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
