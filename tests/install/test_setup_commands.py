"""`.ci/run` runs exactly the README's two set-up commands, so that CI fails
where a new user following the README would."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"
if not (README.exists() and CI.exists()):
    pytest.skip("needs the repository's README.md and .ci/run", allow_module_level=True)


def _readme_commands():
    text = README.read_text()
    section = text[text.index("## Try it (fresh machine)"):text.index("\n## ", text.index("## Try it") + 1)]
    return [line.strip() for line in section.splitlines() if line.startswith("    ") and line.strip()]


def test_readme_gives_two_commands_that_need_only_python_and_venv():
    demo, everything = _readme_commands()
    assert demo.endswith("nox -s demo")
    assert re.search(r"nox$", everything)
    for command in (demo, everything):
        # nox in a virtual environment of its own: a PEP 668 Python refuses
        # `python3 -m pip install` outside one
        assert command.startswith("python3 -m venv ")
        assert "python3 -m pip" not in command


def test_ci_runs_exactly_the_readme_commands():
    ci_lines = [line.strip() for line in CI.read_text().splitlines()]
    for command in _readme_commands():
        assert any(line.startswith(command + " ||") or line == command for line in ci_lines), (
            f".ci/run does not run the README's command {command!r}")
    # and nothing else that installs or runs nox
    runs_nox = [line for line in ci_lines if "nox" in line and not line.startswith("#")]
    assert len(runs_nox) == 2, runs_nox
