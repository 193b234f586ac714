"""benchmarks/compare.py --device cuda (cuda_compare.py) runs its three
workloads for every framework present, and its hand-written CuPy MLP step
computes the update retrograd's computes (so its ratio compares like with
like)."""
import os
import sys

import numpy as np

from _cuda import host, require_cuda

cp = require_cuda()

_BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks")
sys.path.insert(0, _BENCH)
import compare  # noqa: E402
import cuda_compare  # noqa: E402


def test_compare_device_cuda_reports_the_three_workloads(capsys):
    rows = compare.main(["--device", "cuda", "--quick", "--no-torch"])
    assert [r["name"] for r in rows] == ["mlp_step", "conv2d_step", "small_op_chain"]
    for r in rows:
        assert r["retrograd"] > 0
    assert "cupy" in rows[0] and "cupy" not in rows[1]
    out = capsys.readouterr().out
    assert "retrograd/cupy" in out


def test_handwritten_mlp_step_matches_retrograd(monkeypatch):
    import retrograd as rg
    # a smaller MLP: the check is the arithmetic, not the size
    monkeypatch.setattr(cuda_compare, "MLP_BATCH", 8)
    monkeypatch.setattr(cuda_compare, "MLP_WIDTH", 16)
    made = {}
    real_asarray = cp.asarray

    def keep(a, *args, **kw):
        out = real_asarray(a, *args, **kw)
        made.setdefault("arrays", []).append(out)
        return out
    monkeypatch.setattr(cp, "asarray", keep)
    step = cuda_compare.mlp_step("cupy", lr=0.5)
    weights = [a for a in made["arrays"] if a.ndim == 2 and a.dtype == np.float32][1:]   # W1..W3 after X
    step()
    monkeypatch.setattr(cp, "asarray", real_asarray)

    captured = {}
    real_sgd = rg.optim.SGD

    def sgd(params, lr):
        params = list(params)
        captured["params"] = params
        return real_sgd(params, lr=lr)
    monkeypatch.setattr(rg.optim, "SGD", sgd)
    rg_step = cuda_compare.mlp_step("retrograd", lr=0.5)
    rg_step()
    rg_weights = [p for p in captured["params"] if p.ndim == 2]
    assert len(weights) == len(rg_weights) == 3
    for w_cp, w_rg in zip(weights, rg_weights):
        np.testing.assert_allclose(host(w_rg), cp.asnumpy(w_cp), rtol=1e-5, atol=1e-6)
