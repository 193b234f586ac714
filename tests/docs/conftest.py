"""The doctests of docstrings and pages read an exception's message the same
way on every Python 3.11+.

retrograd adds a note to errors raised in a backward ("(raised while running
MulBackward0 during backward)"). doctest compares the expected exception
with what `traceback.format_exception_only` gives: since CPython 3.11.4 the
message and its notes joined, before it only the last line, which is the
note. A distribution's older 3.11 (Debian 12 has 3.11.2) would then fail
every example that expects an error from a backward. The fixture below
gives doctest the joined form on every version (a no-op where doctest joins
already)."""
import traceback

import pytest

_format_exception_only = traceback.format_exception_only


def _joined(exc, /, value=None, *args, **kwargs):
    lines = _format_exception_only(exc, value, *args, **kwargs)
    cls = exc if isinstance(exc, type) else type(exc)
    if issubclass(cls, SyntaxError):       # doctest reads its lines one by one
        return lines
    return ["".join(lines)]


@pytest.fixture(autouse=True)
def _doctest_reads_exception_notes(monkeypatch):
    monkeypatch.setattr(traceback, "format_exception_only", _joined)
