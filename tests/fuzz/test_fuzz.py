"""The API fuzz, side by side with torch: generated calls over
retrograd's public API, valid and invalid, run in subprocesses (crashes and
hangs are caught) and compared with torch 2.13.

The default run is a seeded, bounded sample (RETROGRAD_FUZZ_CASES, default
600 cases, well under a minute); `nox -s fuzz` (or RETROGRAD_FUZZ_CASES=20000)
runs the large one. Every result must be: both succeed with equal shapes,
dtypes, values and gradients; or both raise the same builtin exception
class; or a deliberate deviation listed in known.py with its reason. Crashes,
hangs and silently wrong results fail the test.
"""
from __future__ import annotations

import collections
import os
import sys

import pytest

pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402
from known import known_reason  # noqa: E402

pytestmark = pytest.mark.oracle

CASES = int(os.environ.get("RETROGRAD_FUZZ_CASES", "600"))
SEED = int(os.environ.get("RETROGRAD_FUZZ_SEED", "14"))
FAILING = ("crash", "hang", "value_mismatch", "class_mismatch", "rg_only_raises", "torch_only_raises",
           "torch_failed")


@pytest.fixture(scope="module")
def results():
    return runner.run(SEED, CASES)


def _report(bad):
    return "\n".join(f"[{r['outcome']}] #{r['i']} {r['case']} | rg: {r.get('rg', '')[:200]} | "
                     f"torch: {r.get('torch', '')[:200]} {r.get('why') or ''}" for r in bad[:40])


def test_no_crashes_or_hangs(results):
    bad = [r for r in results if r["outcome"] in ("crash", "hang")]
    assert not bad, _report(bad)


def test_no_silently_wrong_results(results):
    bad = [r for r in results if r["outcome"] == "value_mismatch" and not known_reason(r)]
    assert not bad, _report(bad)


def test_exception_classes_match_torch(results):
    bad = [r for r in results if r["outcome"] == "class_mismatch" and not known_reason(r)]
    assert not bad, _report(bad)


def test_one_library_raising_is_a_listed_deviation(results):
    bad = [r for r in results if r["outcome"] in ("rg_only_raises", "torch_only_raises", "torch_failed")
           and not known_reason(r)]
    assert not bad, _report(bad)


def test_the_sample_exercises_every_outcome_that_matters(results):
    # a fuzz that silently stopped generating bad input would pass the rest
    c = collections.Counter(r["outcome"] for r in results)
    assert c["both_ok"] > CASES // 10 and c["both_raise"] > CASES // 10, dict(c)
    assert len({r["op"] for r in results}) > 60 if CASES >= 600 else True
