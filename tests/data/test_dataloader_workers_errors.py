"""DataLoader workers that fail: exceptions carried to the main process,
workers that die, timeouts, and shutdown without leftovers (processes,
shared memory), at the end of a pass, on deletion and at interpreter exit.

Each test that could hang if the loader failed to notice a dead worker runs
under a deadline (SIGALRM) that turns a hang into a failure.
"""
from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys
import time

import pytest

import _worker_datasets as wd
import retrograd as rg
from retrograd.utils.data import DataLoader

torch = pytest.importorskip("torch")
tud = pytest.importorskip("torch.utils.data")

pytestmark = pytest.mark.oracle


class Hung(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float):
    """Fail (instead of hanging) when the block takes longer than `seconds`."""
    def expire(signum, frame):
        raise Hung(f"no answer within {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def gone(pid: int) -> bool:
    """The process has exited and been reaped (not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def worker_pids(it) -> list[int]:
    return [w.pid for w in it._workers]


@pytest.fixture(autouse=True)
def _collect_iterators():
    """A failed test's traceback keeps its iterators (and their workers) in a
    reference cycle: collect them, so that no test sees another's leftovers."""
    yield
    gc.collect()


# ---------------------------------------------------- exceptions in workers

def test_worker_exception_is_raised_with_worker_id_and_traceback_as_torch():
    ours = iter(DataLoader(wd.Faulty(6, 3, ValueError("bad sample 3")), batch_size=1, num_workers=2))
    theirs = iter(tud.DataLoader(wd.Faulty(6, 3, ValueError("bad sample 3")), batch_size=1, num_workers=2))
    with deadline(20):
        assert [int(next(ours)) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(ValueError) as o:
            next(ours)
    [next(theirs) for _ in range(3)]
    with pytest.raises(ValueError) as t:
        next(theirs)
    msg = str(o.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback (most recent call")
    assert str(t.value).startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback")
    assert "raise self.error" in msg and "_worker_datasets.py" in msg and "ValueError: bad sample 3" in msg
    # the loader goes on after the failed batch, as torch's
    with deadline(20):
        assert [int(b) for b in ours] == [4, 5]
    assert [int(b) for b in theirs] == [4, 5]


def test_key_error_message_stays_readable():
    loader = DataLoader(wd.Faulty(4, 0, KeyError("missing")), batch_size=2, num_workers=2)
    with deadline(20), pytest.raises(KeyError) as info:
        next(iter(loader))
    assert "Caught KeyError in DataLoader worker process 0" in str(info.value)
    assert "\n" in str(info.value)              # not repr()'d onto one line


def test_an_exception_class_that_cannot_travel_becomes_runtime_error():
    class LocalError(Exception):            # defined in a function: cannot be pickled
        pass
    loader = DataLoader(wd.Faulty(4, 1, LocalError("local")), batch_size=1, num_workers=2,
                        multiprocessing_context="fork")
    with deadline(20), pytest.raises(RuntimeError, match="Caught LocalError in DataLoader worker process 1"):
        list(loader)


def test_worker_init_fn_error_is_raised_with_the_first_batch_of_that_worker():
    loader = DataLoader(wd.Table(4), batch_size=1, num_workers=2, worker_init_fn=wd.failing_init)
    it = iter(loader)
    with deadline(20):
        assert next(it)[1].tolist() == [0]                  # worker 0 started fine
        with pytest.raises(ZeroDivisionError, match="Caught ZeroDivisionError in DataLoader worker process 1"):
            next(it)


def test_a_non_leaf_tensor_that_requires_grad_is_refused_as_torch():
    def collate(samples):
        return rg.tensor([float(s[1]) for s in samples], requires_grad=True) * 2
    loader = DataLoader(wd.Table(4), batch_size=2, num_workers=2, collate_fn=collate)
    with deadline(20), pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        next(iter(loader))


# ---------------------------------------------------------- dead workers

@pytest.mark.parametrize("how,code,words", [("kill", -9, "killed by signal SIGKILL"), ("exit", 3, "exit code 3")])
def test_a_worker_that_dies_raises_a_clear_error_and_never_hangs(how, code, words):
    loader = DataLoader(wd.Dies(8, 3, how), batch_size=1, num_workers=2)
    it = iter(loader)
    pids = worker_pids(it)
    start = time.monotonic()
    with deadline(20), pytest.raises(RuntimeError) as info:
        for _ in it:
            pass
    msg = str(info.value)
    assert f"DataLoader worker 1 (pid {pids[1]}) exited unexpectedly with exit code {code}" in msg
    assert words in msg
    assert time.monotonic() - start < 10
    del it, info                # (the traceback holds the iterator, in a cycle)
    gc.collect()
    assert all(gone(p) for p in pids)
    assert not wd.blocks_of_this_process()


def test_a_worker_killed_from_outside_while_loading():
    loader = DataLoader(wd.Slow(6, 0.3), batch_size=1, num_workers=2)
    it = iter(loader)
    with deadline(20):
        assert int(next(it)) == 0
        os.kill(it._workers[1].pid, signal.SIGKILL)
        with pytest.raises(RuntimeError, match=r"DataLoader worker 1 \(pid \d+\) exited unexpectedly"):
            list(it)


# ------------------------------------------------------------------ timeout

def test_timeout_raises_as_torch():
    it = iter(DataLoader(wd.Slow(4, 1.0), batch_size=1, num_workers=2, timeout=0.3))
    start = time.monotonic()
    with deadline(20), pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.3 seconds$"):
        next(it)
    assert time.monotonic() - start < 1.5
    # a timeout long enough lets the batches through
    assert [int(b) for b in DataLoader(wd.Slow(2, 0.05), batch_size=1, num_workers=2, timeout=5)] == [0, 1]


# ----------------------------------------------------------------- shutdown

def test_workers_stop_at_the_end_of_a_pass_and_when_the_iterator_is_dropped():
    loader = DataLoader(wd.Slow(8, 0.0), batch_size=2, num_workers=2)
    it = iter(loader)
    pids = worker_pids(it)
    assert len(list(it)) == 4
    assert all(gone(p) for p in pids)                 # exhausted: stopped at once

    it = iter(loader)
    pids = worker_pids(it)
    next(it)
    del it                                             # dropped half-way
    assert all(gone(p) for p in pids)
    assert not [p for p in multiprocessing.active_children() if p.pid in pids]
    assert not wd.blocks_of_this_process()


def test_unpicklable_dataset_with_spawn_says_what_to_do():
    class Local(wd.Table):                  # a class in a function cannot reach a spawned worker
        pass
    with pytest.raises(Exception) as info:
        iter(DataLoader(Local(2), num_workers=2, multiprocessing_context="spawn"))
    notes = "".join(getattr(info.value, "__notes__", []))
    if sys.version_info >= (3, 11):
        assert "top level of an importable module" in notes


def test_interpreter_exit_stops_persistent_workers_and_frees_shared_memory(run_python):
    code = """
        import os
        from retrograd.utils.data import DataLoader
        from retrograd.utils.data._worker import _live_iterators
        import _worker_datasets as wd
        loader = DataLoader(wd.Big(), batch_size=4, num_workers=2, persistent_workers=True)
        it = iter(loader)
        next(it)                          # the rest of the epoch is in flight at exit
        print(os.getpid(), *[w.pid for w in it._workers])
    """
    env = {"PYTHONPATH": os.pathsep.join([os.path.dirname(wd.__file__), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    done = run_python(code, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "leaked" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    parent, *workers = map(int, done.stdout.split())
    time.sleep(0.2)
    assert all(gone(p) for p in workers)
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(f"rgdl{parent}_")]
