"""The threading model (PyTorch's): CPU nodes run on the thread that called
backward; nodes of a virtual CPU device ("cpu:N") run on that device's worker
thread; set_multithreading_enabled(False) runs everything on the caller;
workers stop cleanly at interpreter exit; concurrent backwards are safe."""
import threading
import time

import numpy as np
import pytest

import retrograd as rg
import retrograd.engine as engine


def _run_threads(work, n_threads, with_index):
    """Start n_threads running work(i) (or work()), wait for all, and fail if any hangs."""
    ts = [threading.Thread(target=work, args=(i,) if with_index else ()) for i in range(n_threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not any(t.is_alive() for t in ts)


def leaf(data):
    return rg.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


class Recorder:
    """Records, per label, the thread and the engine's worker device that ran a hook."""

    def __init__(self):
        self.threads = {}
        self.devices = {}

    def tensor_hook(self, label):
        def hook(grad):
            self.threads[label] = threading.get_ident()
            self.devices[label] = engine.current_worker_device()
        return hook

    def node_prehook(self, label):
        def hook(grad_outputs):
            self.threads[label] = threading.get_ident()
            self.devices[label] = engine.current_worker_device()
        return hook


def _mixed_graph(rec):
    """x (cpu) -> cpu:1 -> mul on cpu:1 -> back to cpu -> sum on cpu."""
    x = leaf([1.0, 2.0, 3.0])
    x.register_hook(rec.tensor_hook("x"))             # AccumulateGrad of x (cpu)
    x1 = x.to("cpu:1")
    assert x1.device == rg.device("cpu:1")
    y = x1 * x1
    y.register_hook(rec.tensor_hook("y"))             # runs before MulBackward0 (cpu:1)
    y.grad_fn.register_prehook(rec.node_prehook("mul"))
    x1.grad_fn.register_prehook(rec.node_prehook("to_dev"))   # its input lives on cpu:1
    yc = y.to("cpu")
    yc.grad_fn.register_prehook(rec.node_prehook("to_cpu"))   # its input lives on cpu
    out = (yc * 2.0).sum()
    out.grad_fn.register_prehook(rec.node_prehook("sum"))
    return x, out


def test_device_nodes_run_on_the_device_worker(virtual_cpu_devices):
    rec = Recorder()
    x, out = _mixed_graph(rec)
    caller = threading.get_ident()
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0, 12.0])
    workers = engine.device_threads()
    assert 1 in workers and workers[1].is_alive()
    worker = workers[1].ident
    assert worker != caller
    for label in ("y", "mul", "to_dev"):
        assert rec.threads[label] == worker, label
        assert rec.devices[label] == 1, label
    for label in ("x", "to_cpu", "sum"):
        assert rec.threads[label] == caller, label
        assert rec.devices[label] == -1, label     # CPU_DEVICE while inside backward
    assert engine.current_worker_device() == -2    # NO_DEVICE outside backward


def test_each_device_has_its_own_worker(virtual_cpu_devices):
    rec = Recorder()
    x = leaf([1.0, 2.0])
    a = x.to("cpu:1") * 2.0
    b = x.to("cpu:2") * 3.0
    a.register_hook(rec.tensor_hook("a"))
    b.register_hook(rec.tensor_hook("b"))
    out = a.to("cpu").sum() + b.to("cpu").sum()
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])
    workers = engine.device_threads()
    assert rec.threads["a"] == workers[1].ident
    assert rec.threads["b"] == workers[2].ident
    assert workers[1].ident != workers[2].ident
    assert rec.devices == {"a": 1, "b": 2}


def test_worker_threads_are_long_lived(virtual_cpu_devices):
    for _ in range(3):
        rec = Recorder()
        x, out = _mixed_graph(rec)
        out.backward()
    before = engine.device_threads()[1]
    rec = Recorder()
    x, out = _mixed_graph(rec)
    out.backward()
    assert engine.device_threads()[1] is before
    assert rec.threads["mul"] == before.ident


def test_backward_rooted_on_a_device(virtual_cpu_devices):
    x = leaf([1.0, 2.0])
    rec = Recorder()
    y = (x.to("cpu:1") * 3.0).sum()          # the root node lives on cpu:1
    y.grad_fn.register_prehook(rec.node_prehook("root"))
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    assert rec.threads["root"] == engine.device_threads()[1].ident


def test_grad_on_device_graph(virtual_cpu_devices):
    x = leaf([1.0, 2.0, 3.0])
    x1 = x.to("cpu:1")
    out = (x1.sin() * x1).sum()
    (gx, gx1) = rg.autograd.grad(out, [x, x1])
    want = np.cos([1.0, 2.0, 3.0]) * [1.0, 2.0, 3.0] + np.sin([1.0, 2.0, 3.0])
    np.testing.assert_allclose(gx.numpy(), want)
    np.testing.assert_allclose(gx1.numpy(), want)
    assert gx1.device == rg.device("cpu:1")
    assert gx.device == rg.device("cpu")


def test_create_graph_on_device(virtual_cpu_devices):
    x = leaf([0.5, 1.5])
    x1 = x.to("cpu:1")
    out = (x1 * x1 * x1).sum()
    (g,) = rg.autograd.grad(out, x, create_graph=True)
    (g2,) = rg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, 1.5]) ** 2)
    np.testing.assert_allclose(g2.numpy(), 6 * np.array([0.5, 1.5]))


def test_cpu_nodes_run_on_the_calling_user_thread(virtual_cpu_devices):
    results = {}

    def work():
        rec = Recorder()
        x, out = _mixed_graph(rec)
        out.backward()
        results["rec"] = rec
        results["me"] = threading.get_ident()
        results["grad"] = x.grad.numpy().copy()

    t = threading.Thread(target=work)
    t.start()
    t.join(60)
    assert not t.is_alive()
    rec, me = results["rec"], results["me"]
    assert me != threading.get_ident()
    for label in ("x", "to_cpu", "sum"):
        assert rec.threads[label] == me
    assert rec.threads["mul"] == engine.device_threads()[1].ident
    np.testing.assert_array_equal(results["grad"], [4.0, 8.0, 12.0])


def test_multithreading_disabled_runs_everything_on_the_caller(virtual_cpu_devices):
    assert engine.is_multithreading_enabled()
    rg.autograd.set_multithreading_enabled(False)
    try:
        assert not engine.is_multithreading_enabled()
        rec = Recorder()
        x, out = _mixed_graph(rec)
        out.backward()
        caller = threading.get_ident()
        assert set(rec.threads.values()) == {caller}
        assert set(rec.devices.values()) == {-1}
        np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0, 12.0])
    finally:
        rg.autograd.set_multithreading_enabled(True)
    assert engine.is_multithreading_enabled()


def test_multithreading_disabled_as_context_manager(virtual_cpu_devices):
    caller = threading.get_ident()
    with rg.autograd.set_multithreading_enabled(False):
        rec = Recorder()
        x, out = _mixed_graph(rec)
        out.backward()
        assert set(rec.threads.values()) == {caller}
        # Nested: back on, then restored to off.
        with rg.autograd.set_multithreading_enabled(True):
            rec2 = Recorder()
            _, out2 = _mixed_graph(rec2)
            out2.backward()
            assert rec2.threads["mul"] != caller
        assert not engine.is_multithreading_enabled()
    assert engine.is_multithreading_enabled()
    rec = Recorder()
    x, out = _mixed_graph(rec)
    out.backward()
    assert rec.threads["mul"] == engine.device_threads()[1].ident


def test_set_multithreading_enabled_rejects_non_bool():
    with pytest.raises(TypeError):
        rg.autograd.set_multithreading_enabled(1)
    assert engine.is_multithreading_enabled()


def test_to_unconfigured_virtual_device_raises():
    prev = rg.num_virtual_cpu_devices()
    rg.set_virtual_cpu_devices(0)
    try:
        with pytest.raises(RuntimeError, match="set_virtual_cpu_devices"):
            leaf([1.0]).to("cpu:1")
    finally:
        rg.set_virtual_cpu_devices(prev)


def test_env_variable_configures_virtual_devices(run_python):
    res = run_python("""
        import threading
        import retrograd as rg, retrograd.engine as engine
        assert rg.num_virtual_cpu_devices() == 3, rg.num_virtual_cpu_devices()
        seen = []
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        y = x.to("cpu:3") * 2.0
        y.register_hook(lambda g: seen.append(threading.get_ident()))
        y.to("cpu").sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
        assert seen == [engine.device_threads()[3].ident] != [threading.get_ident()]
        print("OK")
    """, env={"RETROGRAD_VIRTUAL_CPU_DEVICES": "3"})
    assert res.returncode == 0, res.stderr
    assert "OK" in res.stdout


EXIT_SNIPPET = """
    import sys, time
    import retrograd as rg
    rg.set_virtual_cpu_devices(4)
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    for d in ("cpu:1", "cpu:2", "cpu:3", "cpu:4"):
        (x.to(d) * 2.0).sum().backward()
    assert x.grad.tolist() == [8.0, 8.0]
    import retrograd.engine as engine
    assert len(engine.device_threads()) == 4
    {extra}
    print("DONE", repr(time.time()), flush=True)
"""


def _assert_prompt_exit(res):
    assert res.returncode == 0, res.stderr
    done = [ln for ln in res.stdout.splitlines() if ln.startswith("DONE ")]
    assert done, res.stdout
    # The process must exit promptly after its last statement: measure from
    # the child's own timestamp (a fresh import may rebuild first).
    return float(done[-1].split()[1])


@pytest.mark.parametrize("extra", [
    "",
    # Workers blocked on their queue while the main thread exits via sys.exit.
    "import atexit; atexit.register(lambda: None)",
])
def test_interpreter_exits_promptly_with_device_workers(run_python, extra):
    code = EXIT_SNIPPET.format(extra=extra)
    import subprocess
    import sys
    import textwrap
    t0 = time.time()
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    end = time.time()
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    done_at = _assert_prompt_exit(res)
    assert t0 <= done_at <= end
    assert end - done_at < 10.0, f"interpreter took {end - done_at:.1f}s to exit after its last statement"


def test_backward_in_late_atexit_handler_runs_on_the_caller(run_python):
    # An atexit handler registered before the engine was imported runs after
    # the workers have stopped: its backward must still complete (on the
    # calling thread), not wait forever for a stopped worker.
    res = run_python("""
        import atexit, threading, time
        import retrograd as rg
        rg.set_virtual_cpu_devices(1)
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        def late():
            seen = []
            y = x.to("cpu:1") * 3.0
            y.register_hook(lambda g: seen.append(threading.get_ident()))
            y.sum().backward()
            assert seen == [threading.get_ident()], seen
            print("LATE", x.grad.tolist(), flush=True)
        atexit.register(late)
        (x.to("cpu:1") * 2.0).sum().backward()      # starts the worker (and imports the engine)
        print("DONE", repr(time.time()), flush=True)
    """, timeout=300)
    _assert_prompt_exit(res)
    assert "LATE [5.0, 5.0]" in res.stdout, res.stdout + res.stderr


def test_shutdown_device_threads_is_safe_to_call_twice(run_python):
    res = run_python("""
        import time
        import retrograd as rg, retrograd.engine as engine
        rg.set_virtual_cpu_devices(1)
        x = rg.tensor([1.0], requires_grad=True)
        (x.to("cpu:1") * 2.0).sum().backward()
        t = engine.device_threads()[1]
        engine.shutdown_device_threads()
        t.join(5)
        assert not t.is_alive()
        engine.shutdown_device_threads()
        # Still usable: nodes now run on the caller.
        (x.to("cpu:1") * 2.0).sum().backward()
        assert x.grad.tolist() == [4.0], x.grad
        print("DONE", repr(time.time()), flush=True)
    """)
    _assert_prompt_exit(res)


# ---------------------------------------------------------------------------
# Thread safety

def _expected_sin_x(a):
    return np.cos(a) * a + np.sin(a)


def test_concurrent_backwards_on_separate_graphs():
    errors, n_threads, n_iter = [], 8, 30
    barrier = threading.Barrier(n_threads)

    def work(i):
        try:
            barrier.wait()
            for k in range(n_iter):
                a = np.arange(200.0) / 50.0 + i + k
                x = leaf(a)
                (x.sin() * x).sum().backward()
                np.testing.assert_allclose(x.grad.numpy(), _expected_sin_x(a), rtol=1e-12)
                (g,) = rg.autograd.grad((x * x * x).sum(), x)
                np.testing.assert_allclose(g.numpy(), 3 * a ** 2, rtol=1e-12)
        except BaseException as exc:          # noqa: BLE001 (reported below)
            errors.append(exc)

    _run_threads(work, n_threads, with_index=True)
    assert errors == []


def test_concurrent_backwards_on_separate_device_graphs(virtual_cpu_devices):
    errors, n_threads, n_iter = [], 8, 20
    barrier = threading.Barrier(n_threads)

    def work(i):
        try:
            barrier.wait()
            dev = f"cpu:{1 + i % 2}"
            for k in range(n_iter):
                a = np.arange(100.0) / 30.0 + i + k
                x = leaf(a)
                xd = x.to(dev)
                (xd.sin() * xd).to("cpu").sum().backward()
                np.testing.assert_allclose(x.grad.numpy(), _expected_sin_x(a), rtol=1e-12)
        except BaseException as exc:          # noqa: BLE001
            errors.append(exc)

    _run_threads(work, n_threads, with_index=True)
    assert errors == []


@pytest.mark.parametrize("device", ["cpu", "cpu:1"])
def test_shared_graph_accumulates_every_contribution(virtual_cpu_devices, device):
    n_threads, n_iter = 8, 20
    w = np.arange(1.0, 4001.0)                # integer-valued: sums are exact
    x = leaf(np.ones(4000))
    xd = x.to(device) if device != "cpu" else x
    out = (xd * rg.tensor(w).to(device)).sum()
    barrier = threading.Barrier(n_threads)
    errors = []

    def work():
        try:
            barrier.wait()
            for _ in range(n_iter):
                out.backward(retain_graph=True)
        except BaseException as exc:          # noqa: BLE001
            errors.append(exc)

    _run_threads(work, n_threads, with_index=False)
    assert errors == []
    np.testing.assert_array_equal(x.grad.numpy(), n_threads * n_iter * w)


def test_branches_on_several_devices_feeding_one_buffer(virtual_cpu_devices):
    # Nodes of one graph task on the CPU thread and on two workers all feed
    # the input buffer of x's AccumulateGrad at the same time. NumPy releases
    # the GIL inside large additions, so without the graph task's mutex
    # contributions are lost.
    n = 1_000_000
    x = leaf(np.ones(n))
    for _ in range(12):
        x.grad = None
        x1, x2 = x.to("cpu:1"), x.to("cpu:2")
        parts = [x * 1.0, x1 * 2.0, x2 * 3.0, x * 4.0, x1 * 5.0, x2 * 6.0]
        total = None
        for p in parts:
            s = p.sum().to("cpu")
            total = s if total is None else total + s
        total.backward()
        g = x.grad.numpy()
        assert np.all(g == 21.0), np.unique(g)
