"""The torch-coverage figures (test_torch_coverage.py) in the terminal summary,
so that they show whether or not output is captured."""
from __future__ import annotations


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import sys
    mod = sys.modules.get("test_torch_coverage")      # collected and run (torch present)
    lines = getattr(mod, "REPORT", None)
    if lines:
        terminalreporter.write_sep("-", "torch coverage")
        for line in lines:
            terminalreporter.write_line(line)
