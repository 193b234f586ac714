"""Work: the handle of a running collective (torch.distributed.Work).

A collective is a generator (its *program*, written by the backend) that
yields what it is waiting for: a list of MPI requests, or a callable that
says whether a condition holds (a probe). The Work drives it: `poll()`
tests what it waits for without blocking and advances the program when it
is there; `wait()` polls until the end or the group's deadline. Every
collective is non-blocking underneath so that no rank ever waits forever
(docs/distributed.md, "Failures and timeouts").
"""
from __future__ import annotations

import time


__all__ = ["Work"]


class Work:
    """The handle of a collective started with ``async_op=True``.

    ``torch.distributed.Work``. The tensors of the collective hold its
    result once :meth:`wait` returns (or :meth:`is_completed` says True);
    until then they must not be read or written.

    Parameters
    ----------
    name : str
        The collective's name, used in error messages.
    group : ProcessGroup
        The group it runs on (its ranks and timeout appear in errors).
    program : generator
        What the backend runs; see the module's docstring.
    deadline : float
        ``time.monotonic()`` past which the collective has timed out.

    Examples
    --------
    >>> import retrograd as rg
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> t = rg.ones(3)
    >>> work = dist.all_reduce(t, async_op=True)
    >>> work.wait()
    True
    >>> work.is_completed(), t
    (True, tensor([1., 1., 1.]))
    >>> dist.destroy_process_group()
    """

    def __init__(self, name, group, program, deadline):
        self._name = name
        self._group = group
        self._program = program
        self._deadline = deadline
        self._waiting = None           # list of requests or a probe callable
        self._done = False
        self._exception = None
        self._result = None
        self._source_rank = -1
        self.started_at = time.perf_counter()
        self.completed_at = None
        self._advance(None)

    # -- driving the program -------------------------------------------------------
    def _advance(self, value):
        try:
            self._waiting = self._program.send(value)
        except StopIteration as stop:
            self._finish(stop.value)
        except BaseException as exc:
            self._fail(exc)
            raise

    def _finish(self, value):
        self._done = True
        self._waiting = None
        self._program = None
        self.completed_at = time.perf_counter()
        if isinstance(value, int) and not isinstance(value, bool):
            self._source_rank = value

    def _fail(self, exc):
        self._done = True
        self._exception = exc
        self._waiting = None
        self._program = None

    def poll(self):
        """Test, without blocking, whether the collective has finished.

        Advances the collective when what it waits for has arrived. Raises
        :class:`DistBackendError` when a peer has reported a failure or the
        deadline has passed.

        Returns
        -------
        bool
            True once the collective has finished.

        Raises
        ------
        DistBackendError
            A peer failed, or the group's timeout has passed.

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> dist.barrier(async_op=True).poll()
        True
        >>> dist.destroy_process_group()
        """
        if self._exception is not None:
            raise self._exception
        while not self._done:
            waiting = self._waiting
            if callable(waiting):
                ready = waiting()
            else:
                ready = self._group._backend.test_all(waiting)
            if not ready:
                self._group._backend.check_health(self._name, self._group)
                if time.monotonic() > self._deadline:
                    exc = self._group._backend.timed_out(self._name, self._group)
                    self._fail(exc)
                    raise exc
                return False
            self._advance(None)
        return True

    def wait(self, timeout=None):
        """Block until the collective has finished, at most until its deadline.

        Parameters
        ----------
        timeout : datetime.timedelta or float, optional
            A shorter limit than the group's, in seconds or as a timedelta.

        Returns
        -------
        bool
            True (torch's Work.wait returns True on success).

        Raises
        ------
        DistBackendError
            A peer failed or the timeout passed; the group is then unusable.
        RuntimeError
            The ranks called mismatched collectives (shapes, dtypes, ops).

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> dist.broadcast(rg.zeros(2), src=0, async_op=True).wait()
        True
        >>> dist.destroy_process_group()
        """
        if timeout is not None:
            seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
            self._deadline = min(self._deadline, time.monotonic() + seconds)
        # Spin briefly (a small collective completes in microseconds), then
        # sleep in growing steps up to 1 ms: the ranks share cores, and a
        # spinning waiter would slow down the peer it waits for.
        spins = 0
        pause = 0.0
        while not self.poll():
            spins += 1
            if spins > 50:
                time.sleep(pause)
                pause = min(0.001, pause * 2 or 1e-5)
        return True

    def is_completed(self):
        """Whether the collective has finished (advancing it, never blocking).

        Returns
        -------
        bool
            True once it has finished, successfully or not.

        Raises
        ------
        DistBackendError
            A peer failed or the timeout passed.

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> work = dist.all_reduce(rg.ones(2), async_op=True)
        >>> work.wait() and work.is_completed()
        True
        >>> dist.destroy_process_group()
        """
        if self._done:
            return True
        return self.poll()

    def is_success(self):
        """Whether the collective finished without an error.

        Returns
        -------
        bool
            False while it runs and after a failure.

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> work = dist.all_reduce(rg.ones(2), async_op=True)
        >>> work.wait() and work.is_success()
        True
        >>> dist.destroy_process_group()
        """
        return self._done and self._exception is None

    def exception(self):
        """The error the collective failed with, or None.

        Returns
        -------
        BaseException or None
            The exception :meth:`wait` raised or would raise.

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> work = dist.all_reduce(rg.ones(2), async_op=True)
        >>> work.wait() and work.exception() is None
        True
        >>> dist.destroy_process_group()
        """
        return self._exception

    def source_rank(self):
        """The global rank a receive got its message from.

        Returns
        -------
        int
            The sender's rank (for :func:`irecv` from any source).

        Raises
        ------
        RuntimeError
            For a Work that is not a finished receive.

        Examples
        --------
        >>> import retrograd as rg
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> work = dist.all_reduce(rg.ones(2), async_op=True)
        >>> work.wait()
        True
        >>> try:
        ...     work.source_rank()
        ... except RuntimeError as exc:
        ...     print("RuntimeError")
        RuntimeError
        >>> dist.destroy_process_group()
        """
        if not self._done or self._source_rank < 0:
            raise RuntimeError(f"source_rank() is only defined for a finished receive (this Work is {self._name})")
        return self._source_rank

    def __repr__(self):
        state = "completed" if self._done else "running"
        return f"<Work {self._name} {state}>"
