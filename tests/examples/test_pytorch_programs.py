"""PyTorch programs run on retrograd with only their imports changed.

Each program of examples/pytorch_programs (see its README) is written for
torch. It runs twice: as written, and with its import lines rewritten to
retrograd's by `retrograd_imports`, nothing else changed. Both runs start from
torch's initial parameters (copied through state_dict) and the same data;
their losses agree to 1e-5 in float32 (relative to the loss's size).
"""
from __future__ import annotations

import pathlib
import re
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.oracle, pytest.mark.float32_default]

import retrograd as rg  # noqa: E402

PROGRAMS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "pytorch_programs"

# the only edit: each `import torch...` line becomes its retrograd twin
_IMPORTS = [
    (r"^import torch\.nn\.functional as F$", "import retrograd.nn.functional as F"),
    (r"^from torch\.nn import functional as F$", "from retrograd.nn import functional as F"),
    (r"^import torch\.nn as nn$", "import retrograd.nn as nn"),
    (r"^import torch\.optim as optim$", "import retrograd.optim as optim"),
    (r"^from torch import nn$", "from retrograd import nn"),
    (r"^from torch\.nn import (.*)$", r"from retrograd.nn import \1"),
    (r"^import torch$", "import retrograd as torch"),
]


def retrograd_imports(source: str) -> str:
    """The program with its torch imports replaced by retrograd's; nothing else changes."""
    out = []
    for line in source.splitlines():
        for pattern, repl in _IMPORTS:
            if re.match(pattern, line):
                line = re.sub(pattern, repl, line)
                break
        else:
            assert "torch" not in line.split("#")[0] or not line.lstrip().startswith(("import", "from")), line
        out.append(line)
    return "\n".join(out) + "\n"


def _load(name: str, on_retrograd: bool):
    source = (PROGRAMS / f"{name}.py").read_text()
    if on_retrograd:
        source = retrograd_imports(source)
        assert "import torch" not in source and "from torch" not in source
    module = type(sys)(f"_program_{name}_{'rg' if on_retrograd else 'torch'}")
    exec(compile(source, str(PROGRAMS / f"{name}.py"), "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("name", ["word_lm", "transformer_lm", "dcgan", "lbfgs_sequence", "gpt"])
def test_program_matches_torch(name):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    prog_t, prog_r = _load(name, False), _load(name, True)
    model_t, model_r = prog_t.make_model(), prog_r.make_model()
    state = {k: rg.tensor(v.detach().numpy().copy()) for k, v in model_t.state_dict().items()}
    assert list(state) == list(model_r.state_dict())
    model_r.load_state_dict(state)
    data = prog_t.make_data(np.random.default_rng(0))
    steps = 4
    losses_t = prog_t.train(model_t, data, steps)
    losses_r = prog_r.train(model_r, data, steps)
    assert all(type(v) is float for v in losses_r)
    np.testing.assert_allclose(losses_r, losses_t, rtol=1e-5, atol=1e-6)
    # and the parameters they end with
    for (k, vt), (k2, vr) in zip(model_t.state_dict().items(), model_r.state_dict().items()):
        assert k == k2
        np.testing.assert_allclose(vr.numpy(), vt.detach().numpy(), rtol=2e-4, atol=2e-5, err_msg=k)


def test_the_rewrite_changes_only_import_lines():
    for path in PROGRAMS.glob("*.py"):
        before, after = path.read_text().splitlines(), retrograd_imports(path.read_text()).splitlines()
        changed = [a for a, b in zip(before, after) if a != b]
        assert changed and all(line.startswith(("import torch", "from torch")) for line in changed), path.name
