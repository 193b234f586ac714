"""The profiler sees a compiled call as one CompiledFunction event, and its
backward as one CompiledFunctionBackward node: no event per op of the
programs."""
import numpy as np
import pytest

import retrograd as rg

profiler = pytest.importorskip("retrograd.profiler", reason="needs retrograd-profiler")


def test_one_event_forward_one_node_backward():
    f = rg.compile(lambda x: (x * 2).sin().exp().sum())
    x = rg.tensor(np.linspace(0.1, 1, 8), requires_grad=True)
    f(x)                                     # traced outside the profile
    with rg.profiler.profile() as prof:
        f(x).backward()
    names = [e.name for e in prof.events()]
    assert names.count("CompiledFunction") == 1
    assert any("CompiledFunctionBackward" in n for n in names)
    assert not [n for n in names if n in ("aten::mul", "aten::sin", "aten::exp")]
