"""rg.optim.swap_in_optimizer_params_and_state against torch 2.13: a step inside the
context updates the swap-in tensors and state with the swap-in hyperparameters,
the live optimizer comes back unchanged (also after an exception), and the
validation errors."""
import copy

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(7)


def _build(lib, arrays, opt_name, **kw):
    params = [lib.nn.Parameter(lib.tensor(a)) for a in arrays]
    opt = getattr(lib.optim, opt_name)([{"params": params[:2]}, {"params": params[2:], "lr": 0.05}], **kw)
    for p in params:
        p.grad = lib.tensor(np.ones(p.shape))
    opt.step()
    return params, opt


@pytest.mark.parametrize("opt_name, kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01)),
                                          ("AdamW", dict(lr=0.02, weight_decay=0.1))])
def test_step_on_swapped_params_matches_torch(opt_name, kw):
    arrays = [RNG.standard_normal((3, 2)), RNG.standard_normal(2), RNG.standard_normal(4)]
    swap_arrays = [RNG.standard_normal(a.shape) for a in arrays]
    grads = [RNG.standard_normal(a.shape) for a in arrays]
    results = {}
    for lib in (rg, torch):
        params, opt = _build(lib, arrays, opt_name, **kw)
        live_values = [p.detach().clone() for p in params]
        live_state = opt.state
        live_groups = [g["params"] for g in opt.param_groups]
        swap = {f"p{i}": lib.tensor(a) for i, a in enumerate(swap_arrays)}
        for t, g in zip(swap.values(), grads):
            t.grad = lib.tensor(g)
        osd = copy.deepcopy(opt.state_dict())
        osd["param_groups"][1]["lr"] = 0.5          # the swap-in group's hyperparameters apply inside
        with lib.optim.swap_in_optimizer_params_and_state(opt, swap, osd):
            assert opt.param_groups[0]["params"][0] is swap["p0"]
            assert opt.param_groups[1]["lr"] == 0.5
            opt.step()
        # the live optimizer is back: same params lists (by identity), hyperparameters and state
        assert opt.state is live_state
        assert [g["params"] for g in opt.param_groups] == live_groups
        assert all(g["params"] is lg for g, lg in zip(opt.param_groups, live_groups))
        assert opt.param_groups[1]["lr"] == 0.05
        for p, v in zip(params, live_values):
            assert bool((p.detach() == v).all())
        results[lib.__name__] = ([t.detach().numpy().copy() for t in swap.values()],
                                 {k: {n: (np.asarray(v).copy() if hasattr(v, "shape") else v)
                                      for n, v in s.items() if n != "step"}
                                  for k, s in osd["state"].items()})
    ours, theirs = results["retrograd"], results["torch"]
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # in-place updates of the state tensors reached the swap-in state dict
    for k in theirs[1]:
        for name, value in theirs[1][k].items():
            np.testing.assert_allclose(np.asarray(ours[1][k][name], dtype=float), np.asarray(value, dtype=float),
                                       rtol=1e-6, atol=1e-7)


def test_restores_after_an_exception():
    p = rg.nn.Parameter(rg.ones(2))
    opt = rg.optim.SGD([p], lr=0.1, momentum=0.5)
    p.grad = rg.ones(2)
    opt.step()
    state = opt.state
    with pytest.raises(KeyError):
        with rg.optim.swap_in_optimizer_params_and_state(opt, {"q": rg.zeros(2)}, copy.deepcopy(opt.state_dict())):
            assert opt.state is not state
            raise KeyError("boom")
    assert opt.state is state and opt.param_groups[0]["params"][0] is p


def _errors(lib):
    p = lib.nn.Parameter(lib.tensor(np.ones(2)))
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    fresh = lib.optim.SGD([lib.nn.Parameter(lib.tensor(np.ones(2)))], lr=0.1)
    p.grad = lib.tensor(np.ones(2))
    opt.step()
    osd = opt.state_dict()
    swap = {"p": lib.tensor(np.zeros(2))}

    def edited(fn):
        d = copy.deepcopy(osd)
        fn(d)
        return d

    return [
        (fresh, swap, fresh.state_dict(), "requires initialized optimizer state"),
        (opt, swap, [1], "requires a DCP-style optimizer state_dict"),
        (opt, swap, edited(lambda d: d.__setitem__("state", [1])), "to be a dict mapping packed parameter ids"),
        (opt, swap, edited(lambda d: d["state"].__setitem__(0, 5)), "state entries to be dictionaries"),
        (opt, swap, edited(lambda d: d.__setitem__("param_groups", {})), "to be a list of param-group dicts"),
        (opt, swap, edited(lambda d: d["param_groups"].append(dict(d["param_groups"][0]))),
         "different number of parameter groups"),
        (opt, swap, edited(lambda d: d["param_groups"].__setitem__(0, 3)), "each optimizer param group to be a "
                                                                           "dictionary"),
        (opt, swap, edited(lambda d: d["param_groups"][0].__setitem__("params", ["a"])), "keyed by packed "
                                                                                         "parameter ids"),
        (opt, swap, edited(lambda d: d["param_groups"][0].__setitem__("params", [0, 1])), "different number of "
                                                                                          "params"),
        (opt, swap, edited(lambda d: d["param_groups"][0].__setitem__("extra", 1)), r"Keys only in swap-in: \['extra'\]"),
        (opt, swap, edited(lambda d: d["param_groups"][0].pop("lr")), r"Keys only in live: \['lr'\]"),
        (opt, {}, osd, "match optimizer.param_groups ordering"),
        (opt, swap, edited(lambda d: d["state"].__setitem__(9, {})), "got extra keys \\[9\\]"),
    ]


@pytest.mark.parametrize("case", range(13))
def test_errors_match_torch(case):
    for lib in (rg, torch):
        opt, swap, osd, match = _errors(lib)[case]
        with pytest.raises(RuntimeError, match=match):
            with lib.optim.swap_in_optimizer_params_and_state(opt, swap, osd):
                pass
