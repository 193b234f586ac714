"""One worker thread that builds fused programs (the numba backend) while
calls run the numpy programs of the same guard key.

Why: a process's first numba loop costs about 0.3 s (LLVM starting, the
disk cache read), and compiling new loops costs seconds on long programs.
A guard key's numpy programs are ready, and verified, in milliseconds; its
calls use them until the worker has built and checked the fused ones, then
switch (``Entry.progs`` is replaced whole, so a call sees one pair or the
other, never a mix).

Jobs run one at a time, in the order they came. The thread is a daemon: at
exit, the job running finishes its current loop and the rest are dropped.
Across ``fork``, no loop is being compiled (the parent waits for the one in
progress: numba's compiler lock would otherwise be held forever in the
child), and the child restarts the job that was running and the queued ones
on a worker of its own.
"""
from __future__ import annotations

import atexit
import collections
import os
import threading

from retrograd.compile import _fusion

_cv = threading.Condition()
_jobs: collections.deque = collections.deque()
_current = None          # the job the worker runs now
_thread = None
_stopping = False


def submit(job):
    """Run ``job(cancelled)`` on the worker; ``cancelled()`` says whether the
    process is exiting (a long job checks it between loops and returns)."""
    global _thread
    with _cv:
        _jobs.append(job)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_work, name="retrograd-compile fusion", daemon=True)
            _thread.start()
        _cv.notify()


def cancelled():
    return _stopping


def _work():
    global _current
    while True:
        with _cv:
            while not _jobs and not _stopping:
                _cv.wait()
            if _stopping:
                _current = None
                return
            _current = _jobs.popleft()
            job = _current
        try:
            job(cancelled)
        except BaseException:        # a job reports its own failures (see Entry)
            pass
        with _cv:
            _current = None
            _cv.notify_all()


def _stop():
    global _stopping
    with _cv:
        _stopping = True
        _cv.notify_all()
        t = _thread
    if t is not None and t is not threading.current_thread():
        t.join(timeout=10)


atexit.register(_stop)


def _before_fork():
    # no loop is compiled across a fork: the fork waits for the one in
    # progress (numba's locks would stay held in the child)
    _fusion.lock.acquire()


def _after_fork_parent():
    _fusion.lock.release()


def _after_fork_child():
    global _thread, _current, _cv
    _fusion.lock = threading.Lock()
    _cv = threading.Condition()
    _thread = None
    pending = ([_current] if _current is not None else []) + list(_jobs)
    _current = None
    _jobs.clear()
    for job in pending:
        submit(job)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent,
                        after_in_child=_after_fork_child)
