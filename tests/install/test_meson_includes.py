"""How the distributions that compile against retrograd-core find its headers.

Meson cannot share a file between separately built sdists, so each such
distribution's meson.build carries the same short block, which asks
retrograd.core.get_include() (the one place that knows where core's ABI layer
is) and takes a -Dcore_include=DIR override. These tests keep the copies from
drifting apart, and check that what get_include() names is usable."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
START, END = "# --- core's headers", "# --- end of core's headers"


def _consumers():
    # every distribution whose Cython sources cimport core's ABI layer
    found = []
    for build in sorted(ROOT.glob("*/meson.build")):
        pkg = build.parent / "retrograd"
        if build.parent.name == "core" or not pkg.is_dir():
            continue
        if any("retrograd.core.abi cimport" in p.read_text() or "cimport retrograd.core.abi" in p.read_text()
               for p in pkg.rglob("*.pyx")):
            found.append(build.parent)
    return found


def _block(folder):
    text = (folder / "meson.build").read_text()
    assert text.count(START) == 1 and text.count(END) == 1, \
        f"{folder.name}/meson.build must hold the core-headers block once (between {START!r} and {END!r})"
    return text[text.index(START):text.index(END)]


def test_every_consumer_carries_the_same_block():
    consumers = _consumers()
    assert {f.name for f in consumers} >= {"engine", "forward_ad", "profiler"}
    reference = _block(consumers[0])
    for folder in consumers[1:]:
        assert _block(folder) == reference, (
            f"{folder.name}/meson.build's core-headers block differs from {consumers[0].name}'s: "
            "change them together")
    assert "retrograd.core as c" in reference and "c.get_include()" in reference
    # nothing guesses core's location from the checkout: an sdist has no ../core
    assert "../core" not in reference


def test_every_consumer_takes_the_same_options():
    consumers = _consumers()
    options = {f.name: (f / "meson.options").read_text() for f in consumers}
    reference = options[consumers[0].name]
    assert re.search(r"option\('core_include'", reference)
    for name, text in options.items():
        assert text == reference, f"{name}/meson.options differs from {consumers[0].name}'s"


def test_get_include_holds_the_abi_header():
    core = pytest.importorskip("retrograd.core")
    include = pathlib.Path(core.get_include())
    for rel in ("retrograd/__init__.pxd", "retrograd/core/__init__.pxd", "retrograd/core/abi.pxd"):
        assert (include / rel).is_file(), f"get_include() = {include} lacks {rel}"
