"""backward() in a fork()ed child after the parent started device workers:
as in torch, the child starts with no workers and creates them on demand
(the engine's Note [Fork]). Every child runs under a timeout, so that a
regression fails instead of hanging the suite."""
import os
import sys

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                                reason="needs fork()")

_CHILD_BACKWARD = r'''
import numpy as np
import retrograd as rg

def backward_on(device):
    x = rg.tensor(np.arange(1.0, 5.0), requires_grad=True)
    y = (x.to(device) * x.to(device)).sum()
    y.backward()
    return x.grad.numpy().tolist()
'''


def test_os_fork_child_runs_device_backward(run_python):
    code = _CHILD_BACKWARD + r'''
import os, signal, sys
from retrograd.engine import device_threads
rg.set_virtual_cpu_devices(2)
assert backward_on("cpu:1") == [2.0, 4.0, 6.0, 8.0]
assert device_threads()                # a worker runs in the parent
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    signal.alarm(60)                     # a hang kills the child; the parent sees it
    os.close(r)
    try:
        before = len(device_threads())
        got = backward_on("cpu:1") + backward_on("cpu:2") + backward_on("cpu")
        msg = f"ok {before} {got}"
    except BaseException as e:
        msg = f"error {type(e).__name__}: {e}"
    os.write(w, msg.encode())
    os._exit(0)
os.close(w)
_, status = os.waitpid(pid, 0)
print("child:", os.read(r, 10000).decode(), "status", status)
# the parent's workers still work
assert backward_on("cpu:1") == [2.0, 4.0, 6.0, 8.0]
print("parent ok")
'''
    r = run_python(code, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "child: ok 0 [2.0, 4.0, 6.0, 8.0, 2.0, 4.0, 6.0, 8.0, 2.0, 4.0, 6.0, 8.0] status 0" \
        in r.stdout, r.stdout + r.stderr
    assert "parent ok" in r.stdout


def test_multiprocessing_fork_pool_runs_device_backward(run_python):
    code = _CHILD_BACKWARD + r'''
import multiprocessing as mp
rg.set_virtual_cpu_devices(2)
assert backward_on("cpu:1") == [2.0, 4.0, 6.0, 8.0]

def job(i):
    return backward_on(f"cpu:{1 + i % 2}")

if __name__ == "__main__":
    ctx = mp.get_context("fork")
    with ctx.Pool(3) as pool:
        res = pool.map_async(job, range(6)).get(timeout=120)
    print("pool", res)
'''
    r = run_python(code, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "pool " + str([[2.0, 4.0, 6.0, 8.0]] * 6) in r.stdout, r.stdout + r.stderr


def test_fork_while_another_thread_runs_backward(run_python):
    # The fork happens while a user thread is inside a backward on a device:
    # the child must not inherit its half-done state (queues, claims).
    code = _CHILD_BACKWARD + r'''
import faulthandler, os, signal, threading
rg.set_virtual_cpu_devices(2)
# Warm up first: a fork while another thread is importing a module (a first
# backward imports lazily) deadlocks any Python child on that module's import
# lock, retrograd or not.
backward_on("cpu:1")
stop = threading.Event()

def spin():
    while not stop.is_set():
        backward_on("cpu:1")

t = threading.Thread(target=spin, daemon=True)
t.start()
results = []
for _ in range(5):
    pid = os.fork()
    if pid == 0:
        faulthandler.dump_traceback_later(60, exit=True)     # a hang: tracebacks, then exit
        ok = backward_on("cpu:1") == [2.0, 4.0, 6.0, 8.0]
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    results.append(status)
stop.set()
t.join(10)
print("statuses", results)
'''
    r = run_python(code, timeout=400)
    assert r.returncode == 0, r.stderr
    assert "statuses [0, 0, 0, 0, 0]" in r.stdout, r.stdout + r.stderr
