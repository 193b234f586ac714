"""LBFGS against torch: the Rosenbrock function and a small regression, with
fixed steps and with the strong-Wolfe line search, step after step: the
parameters, the losses, every state entry, and the counts ``func_evals`` and
``n_iter`` equal torch's; the state dict converts both ways; the argument
checks raise as torch's."""
import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

# torch's `add_(..., alpha=)` is a fused multiply-add on the CPU and NumPy has
# none, so the two differ in last bits, which the line search on an
# ill-conditioned function amplifies. Parameters, losses and vectors are
# compared to RTOL of their size at the start of the run (see Comparer); the
# curvature scalars ro, H_diag and al (ratios of dot products that cancel) and
# the line search's step t to RTOL_CURVATURE of their largest value. The iteration and evaluation counts,
# which record every decision taken, are compared exactly.
RTOL = 1e-9
RTOL_CURVATURE = 1e-6
# what each state entry is measured against: gradients and directions against
# the first gradient, steps against the parameters, the rest against themselves
_SCALE_OF = {"d": "grad", "prev_flat_grad": "grad", "old_dirs": "grad", "old_stps": "param", "prev_loss": "loss"}


@pytest.fixture(autouse=True)
def _torch_float64_default():
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _rosenbrock(xy):
    return (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2


def _value(v):
    if isinstance(v, (rg.Tensor, torch.Tensor)):
        return np.asarray(v.detach().numpy())
    return np.asarray(v, dtype=float)


class Comparer:
    """Compare an LBFGS's parameters and state with torch's, step after step.

    Near the minimum the gradients, directions and curvature pairs shrink by
    orders of magnitude, and a last-bit difference is then large relative to
    the shrunk value but not to the problem's: each quantity is measured
    relative to its scale at the start (``start``: the first loss, the
    largest first-gradient entry and parameter entry) or, for the others,
    to the largest size it has had."""

    def __init__(self, start):
        self.scales = dict(start)

    def close(self, a, b, key, what, rtol=RTOL):
        a, b = _value(a), _value(b)
        assert a.shape == b.shape, what
        key = _SCALE_OF.get(key, key)
        scale = max(self.scales.get(key, 0.0), float(np.max(np.abs(b), initial=0.0)), 1e-300)
        self.scales[key] = scale
        err = float(np.max(np.abs(a - b), initial=0.0))
        assert err <= rtol * scale, f"{what}: {err:.3e} > {rtol:.0e} * {scale:.3e}"

    def __call__(self, ro, to, rps, tps, what):
        for i, (rp, tp) in enumerate(zip(rps, tps)):
            self.close(rp, tp, f"param {i}", f"{what}: param {i}")
        rs, ts = ro.state[rps[0]], to.state[tps[0]]
        assert list(rs) == list(ts), what
        assert rs["func_evals"] == ts["func_evals"], f"{what}: func_evals {rs['func_evals']} != {ts['func_evals']}"
        assert rs["n_iter"] == ts["n_iter"], f"{what}: n_iter {rs['n_iter']} != {ts['n_iter']}"
        for key in ("d", "t", "H_diag", "prev_flat_grad", "prev_loss"):
            if key in ts:
                assert isinstance(rs[key], rg.Tensor) == isinstance(ts[key], torch.Tensor), f"{what}: type of {key}"
                self.close(rs[key], ts[key], key, f"{what}: {key}",
                           RTOL_CURVATURE if key in ("H_diag", "t") else RTOL)
        for key in ("old_dirs", "old_stps", "ro"):
            if key in ts:
                assert len(rs[key]) == len(ts[key]), f"{what}: len {key}"
                for j, (a, b) in enumerate(zip(rs[key], ts[key])):
                    self.close(a, b, key, f"{what}: {key}[{j}]", RTOL_CURVATURE if key == "ro" else RTOL)
        if "al" in ts:
            # the two-loop recursion's scratch: the same entries set, close values
            assert [a is None for a in rs["al"]] == [b is None for b in ts["al"]], what
            self.close([float(a) for a in rs["al"] if a is not None], [float(b) for b in ts["al"] if b is not None],
                       "al", f"{what}: al", RTOL_CURVATURE)
        # no state on the other parameters, as torch
        assert all(len(ro.state[p]) == 0 for p in rps[1:])


def _rosenbrock_closure(opt, xy, lib):
    # The loss and gradient computed once, in NumPy, and handed to both
    # libraries: the comparison then sees the optimizers' arithmetic only (the
    # ill-conditioned line searches would amplify the last-bit differences of
    # two autograd implementations; the network tests below use backward).
    def f():
        opt.zero_grad()
        x, y = xy.detach().numpy()
        loss = (1 - x) ** 2 + 100 * (y - x * x) ** 2
        grad = np.array([-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)])
        xy.grad = lib.tensor(grad)
        return lib.tensor(loss)
    return f


def _start(closure, params):
    """The scales of the run: the first loss, gradient and parameters (torch's side)."""
    loss = closure().item()
    return {"loss": abs(loss),
            "grad": max(float(np.abs(p.grad.detach().numpy()).max()) for p in params if p.grad is not None),
            "param": max(float(np.abs(p.detach().numpy()).max()) for p in params)}


def _run_rosenbrock(start, steps, **kwargs):
    rxy = rg.tensor(start, requires_grad=True)
    txy = torch.tensor(start, requires_grad=True)
    ro = rg.optim.LBFGS([rxy], **kwargs)
    to = torch.optim.LBFGS([txy], **kwargs)
    compare = Comparer(_start(_rosenbrock_closure(to, txy, torch), [txy]))
    for k in range(steps):
        rl = ro.step(_rosenbrock_closure(ro, rxy, rg))
        tl = to.step(_rosenbrock_closure(to, txy, torch))
        compare.close(rl, tl, "loss", f"loss {k}")
        compare(ro, to, [rxy], [txy], f"Rosenbrock {kwargs} step {k}")
    return ro, to, rxy, txy, compare


def test_rosenbrock_through_backward_matches_torch():
    # The same minimization with the loss differentiated by each library.
    rxy = rg.tensor([-1.5, 2.0], requires_grad=True)
    txy = torch.tensor([-1.5, 2.0], requires_grad=True)
    ro = rg.optim.LBFGS([rxy], line_search_fn="strong_wolfe", max_iter=100)
    to = torch.optim.LBFGS([txy], line_search_fn="strong_wolfe", max_iter=100)

    def closure(opt, xy):
        def f():
            opt.zero_grad()
            loss = _rosenbrock(xy)
            loss.backward()
            return loss
        return f
    ro.step(closure(ro, rxy))
    to.step(closure(to, txy))
    assert ro.state[rxy]["n_iter"] == to.state[txy]["n_iter"]
    assert ro.state[rxy]["func_evals"] == to.state[txy]["func_evals"]
    np.testing.assert_allclose(rxy.detach().numpy(), txy.detach().numpy(), rtol=1e-8)
    np.testing.assert_allclose(rxy.detach().numpy(), [1.0, 1.0], atol=1e-4)


@pytest.mark.parametrize("kwargs", [
    dict(lr=1e-3),
    dict(lr=1e-3, history_size=3),
    dict(line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", history_size=3, max_iter=7),
    dict(line_search_fn="strong_wolfe", max_iter=40, max_eval=12),
    dict(lr=0.5, line_search_fn="strong_wolfe", tolerance_change=1e-5),
], ids=["fixed", "fixed-history3", "wolfe", "wolfe-history3", "wolfe-max_eval", "wolfe-lr-tol"])
def test_rosenbrock_matches_torch(kwargs):
    _run_rosenbrock([-1.5, 2.0], 4, **kwargs)


def test_rosenbrock_converges_with_the_same_counts_as_torch():
    ro, to, rxy, _, _ = _run_rosenbrock([-1.2, 1.0], 8, line_search_fn="strong_wolfe", max_iter=50)
    assert np.allclose(rxy.detach().numpy(), [1.0, 1.0], atol=1e-4)
    # converged: a further step returns at once (gradient under tolerance_grad), one evaluation, as torch
    assert ro.state[rxy]["func_evals"] == to.state[to.param_groups[0]["params"][0]]["func_evals"]


def _regression_data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((20, 4))
    y = np.tanh(x @ rng.standard_normal((4, 2))) + 0.1 * rng.standard_normal((20, 2))
    return x, y


REGRESSION_OPTIONS = [
    dict(),
    dict(lr=0.3, history_size=4, max_iter=10),
    dict(line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", history_size=3, tolerance_grad=1e-5),
]
REGRESSION_IDS = ["fixed", "fixed-history4", "wolfe", "wolfe-history3"]


@pytest.mark.parametrize("kwargs", REGRESSION_OPTIONS, ids=REGRESSION_IDS)
def test_linear_regression_matches_torch(kwargs):
    # y ~ x @ W + b over two parameters (a matrix and a vector); the mean squared
    # error and its gradients computed in NumPy for both (see _rosenbrock_closure).
    x, y = _regression_data()
    rng = np.random.default_rng(3)
    w0, b0 = rng.standard_normal((4, 2)), rng.standard_normal(2)
    rps = [rg.tensor(w0.copy(), requires_grad=True), rg.tensor(b0.copy(), requires_grad=True)]
    tps = [torch.tensor(w0.copy(), requires_grad=True), torch.tensor(b0.copy(), requires_grad=True)]
    ro = rg.optim.LBFGS(rps, **kwargs)
    to = torch.optim.LBFGS(tps, **kwargs)

    def closure(opt, params, lib):
        def f():
            opt.zero_grad()
            w, b = (p.detach().numpy() for p in params)
            r = x @ w + b - y
            params[0].grad = lib.tensor(2 * x.T @ r / r.size)
            params[1].grad = lib.tensor(2 * r.sum(axis=0) / r.size)
            return lib.tensor((r * r).mean())
        return f

    compare = Comparer(_start(closure(to, tps, torch), tps))
    for k in range(4):
        rl = ro.step(closure(ro, rps, rg))
        tl = to.step(closure(to, tps, torch))
        compare.close(rl, tl, "loss", f"loss {k}")
        compare(ro, to, rps, tps, f"regression {kwargs} step {k}")


@pytest.mark.parametrize("kwargs", REGRESSION_OPTIONS, ids=REGRESSION_IDS)
def test_small_network_through_backward_matches_torch(kwargs):
    # Linear-Tanh-Linear from torch's initial parameters, each library's own
    # forward and backward: the same iterations and evaluations as torch, the
    # parameters equal to the last bits that the two autograds' roundings leave.
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2))
    rnet = rg.nn.Sequential(rg.nn.Linear(4, 6), rg.nn.Tanh(), rg.nn.Linear(6, 2))
    for rp, tp in zip(rnet.parameters(), tnet.parameters()):
        rp.detach().numpy()[...] = tp.detach().numpy()
    x, y = _regression_data()
    rps, tps = list(rnet.parameters()), list(tnet.parameters())
    ro = rg.optim.LBFGS(rps, **kwargs)
    to = torch.optim.LBFGS(tps, **kwargs)

    def closure(opt, net, lib):
        def f():
            opt.zero_grad()
            loss = ((net(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()
            loss.backward()
            return loss
        return f

    for k in range(3):
        rl = ro.step(closure(ro, rnet, rg))
        tl = to.step(closure(to, tnet, torch))
        assert abs(rl.item() - tl.item()) <= 1e-8 * abs(tl.item())
        rs, ts = ro.state[rps[0]], to.state[tps[0]]
        assert (rs["func_evals"], rs["n_iter"]) == (ts["func_evals"], ts["n_iter"]), k
        assert list(rs) == list(ts)
        for rp, tp in zip(rps, tps):
            np.testing.assert_allclose(rp.detach().numpy(), tp.detach().numpy(), rtol=1e-7, atol=1e-9)


def test_parameters_without_gradient_count_as_zero_as_torch():
    # a parameter the loss does not use: its part of the flat gradient is zeros
    ra, rb = rg.tensor([1.0, -1.0], requires_grad=True), rg.tensor([2.0], requires_grad=True)
    ta, tb = torch.tensor([1.0, -1.0], requires_grad=True), torch.tensor([2.0], requires_grad=True)
    ro, to = rg.optim.LBFGS([ra, rb], max_iter=5), torch.optim.LBFGS([ta, tb], max_iter=5)

    def closure(opt, a):
        def f():
            opt.zero_grad()
            loss = ((a - 3.0) ** 2).sum()
            loss.backward()
            return loss
        return f
    compare = Comparer(_start(closure(to, ta), [ta, tb]))
    for k in range(3):
        ro.step(closure(ro, ra))
        to.step(closure(to, ta))
        compare(ro, to, [ra, rb], [ta, tb], f"unused parameter step {k}")
    assert rb.tolist() == [2.0]


def test_complex_parameter_matches_torch():
    # A complex entry is a pair of reals. (retrograd's autograd is real: the
    # gradient, that of torch for sum |z - c|^2, is set by the closure.)
    z0 = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    target = np.array([0.3 - 1.0j, 2.0 + 0.5j])
    rz, tz = rg.tensor(z0.copy(), requires_grad=True), torch.tensor(z0.copy(), requires_grad=True)
    ro = rg.optim.LBFGS([rz], line_search_fn="strong_wolfe")
    to = torch.optim.LBFGS([tz], line_search_fn="strong_wolfe")

    def closure(opt, z, lib):
        def f():
            opt.zero_grad()
            diff = z.detach().numpy() - target
            z.grad = lib.tensor(2 * diff)
            return lib.tensor(float((np.abs(diff) ** 2).sum()) + 0.1 * float(np.abs(diff).sum() ** 3))
        return f
    compare = Comparer(_start(closure(to, tz, torch), [tz]))
    for k in range(2):
        ro.step(closure(ro, rz, rg))
        to.step(closure(to, tz, torch))
        compare(ro, to, [rz], [tz], f"complex step {k}")
    assert rz.dtype == np.complex128


def test_state_dict_round_trip_and_torch_conversion_continue_as_torch():
    ro, to, rxy, txy, compare = _run_rosenbrock([-1.5, 2.0], 2, line_search_fn="strong_wolfe", max_iter=5)
    rsd, tsd = ro.state_dict(), to.state_dict()
    assert list(rsd["state"][0]) == list(tsd["state"][0])
    assert list(rsd["param_groups"][0]) == list(tsd["param_groups"][0])
    assert {k: v for k, v in rsd["param_groups"][0].items()} == tsd["param_groups"][0]

    def convert(v):
        if isinstance(v, torch.Tensor):
            return rg.tensor(v.numpy().copy())
        if isinstance(v, list):
            return [convert(e) for e in v]
        return v

    # a retrograd state dict, and torch's converted, each loaded into a fresh LBFGS at the same point
    loaded = []
    for sd in (rsd, {"state": {i: {k: convert(v) for k, v in s.items()} for i, s in tsd["state"].items()},
                     "param_groups": tsd["param_groups"]}):
        p = rg.tensor(rxy.detach().numpy().copy(), requires_grad=True)
        opt = rg.optim.LBFGS([p])
        opt.load_state_dict(sd)
        loaded.append((opt, p))

    for k in range(2, 5):
        to.step(_rosenbrock_closure(to, txy, torch))
        for opt, p in loaded:
            opt.step(_rosenbrock_closure(opt, p, rg))
            Comparer(compare.scales)(opt, to, [p], [txy], f"loaded, step {k}")


def test_first_step_with_a_zero_gradient_returns_at_once_as_torch():
    for lib, cls in ((rg, rg.optim.LBFGS), (torch, torch.optim.LBFGS)):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = cls([p])

        def closure():
            opt.zero_grad()
            loss = ((p - lib.tensor([1.0, 2.0])) ** 2).sum()
            loss.backward()
            return loss
        opt.step(closure)
        assert dict(opt.state[p]) == {"func_evals": 1, "n_iter": 0}
        assert p.tolist() == [1.0, 2.0]


def test_defaults_match_torch():
    r = rg.optim.LBFGS([rg.zeros(2, requires_grad=True)], max_iter=8)
    t = torch.optim.LBFGS([torch.zeros(2, requires_grad=True)], max_iter=8)
    assert list(r.defaults) == list(t.defaults) and r.defaults == t.defaults
    assert r.defaults["max_eval"] == 10


def test_errors_as_torch():
    for lib, cls in ((rg, rg.optim.LBFGS), (torch, torch.optim.LBFGS)):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(2, requires_grad=True)
        with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
            cls([{"params": [a]}, {"params": [b]}])
        with pytest.raises(ValueError, match="Invalid learning rate: -1"):
            cls([a], lr=-1)
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            cls([a], lr=lib.tensor([1.0, 2.0]))
        opt = cls([a])
        with pytest.raises(TypeError, match="closure"):
            opt.step()
        opt = cls([a], line_search_fn="backtracking")

        def closure():
            opt.zero_grad()
            loss = ((a - 1.0) ** 2).sum()
            loss.backward()
            return loss
        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)
        opt = cls([a])
        opt.add_param_group({"params": [b]})
        with pytest.raises(AssertionError, match="Expected exactly one param_group, but got 2"):
            opt.step(closure)


def test_closure_runs_with_grad_enabled_and_updates_bump_versions():
    p = rg.tensor([0.5, -0.5], requires_grad=True)
    opt = rg.optim.LBFGS([p], max_iter=3)
    stale = (p * p).sum()

    def closure():
        assert rg.is_grad_enabled()
        opt.zero_grad()
        loss = ((p - 2.0) ** 2).sum()
        loss.backward()
        return loss
    with rg.no_grad():
        opt.step(closure)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        stale.backward()


def test_float32_parameters_stay_float32_and_follow_torch():
    start = np.array([-1.2, 1.0], dtype=np.float32)
    rxy, txy = rg.tensor(start.copy(), requires_grad=True), torch.tensor(start.copy(), requires_grad=True)
    ro = rg.optim.LBFGS([rxy], line_search_fn="strong_wolfe", max_iter=10)
    to = torch.optim.LBFGS([txy], line_search_fn="strong_wolfe", max_iter=10)

    def closure(opt, xy):
        def f():
            opt.zero_grad()
            loss = _rosenbrock(xy)
            loss.backward()
            return loss
        return f
    ro.step(closure(ro, rxy))
    to.step(closure(to, txy))
    state = ro.state[rxy]
    assert rxy.dtype == np.float32
    assert state["d"].dtype == state["prev_flat_grad"].dtype == state["old_dirs"][0].dtype == np.float32
    assert str(state["H_diag"].dtype) == str(to.state[txy]["H_diag"].dtype).replace("torch.", "") == "float32"
    np.testing.assert_allclose(rxy.detach().numpy(), txy.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_a_deep_copy_steps_as_the_original():
    import copy

    p = rg.tensor([-1.2, 1.0], requires_grad=True)
    opt = rg.optim.LBFGS([p], max_iter=4)
    opt.step(_rosenbrock_closure(opt, p, rg))
    twin = copy.deepcopy({"opt": opt, "p": p})
    opt.step(_rosenbrock_closure(opt, p, rg))
    twin["opt"].step(_rosenbrock_closure(twin["opt"], twin["p"], rg))
    assert p.tolist() == twin["p"].tolist()
    assert opt.state[p]["func_evals"] == twin["opt"].state[twin["p"]]["func_evals"] == 8
