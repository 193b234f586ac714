"""Failures never hang: a peer that raises, exits or stalls, and mismatched calls."""

from _dist_mpi import needs_mpi

pytestmark = needs_mpi


def test_a_rank_that_raises_makes_the_others_raise_dist_backend_error(mpi_job):
    job = mpi_job(3, """
dist.init_process_group("mpi", timeout=60)
t = rg.ones(4)
dist.all_reduce(t)
if dist.get_rank() == 1:
    raise ValueError("boom on rank one")
dist.all_reduce(t)
""")
    assert job.returncode != 0
    assert job.seconds < 60, "the others waited for their timeout instead of hearing of the failure"
    assert "ValueError: boom on rank one" in job.stderr
    assert "DistBackendError" in job.stderr
    assert "rank 1 failed with ValueError: boom on rank one" in job.stderr
    assert "all_reduce on the process group of ranks [0, 1, 2]" in job.stderr


def test_a_rank_that_exits_ends_the_job_within_the_timeout(mpi_job):
    job = mpi_job(2, """
dist.init_process_group("mpi", timeout=10)
t = rg.ones(4)
dist.all_reduce(t)
if dist.get_rank() == 1:
    os._exit(3)
dist.all_reduce(t)
""")
    assert job.returncode != 0
    assert job.seconds < 60


def test_a_stalled_rank_times_out_with_the_collective_the_ranks_and_the_timeout(mpi_job):
    job = mpi_job(2, """
dist.init_process_group("mpi", timeout=3)
t = rg.ones(4)
if dist.get_rank() == 1:
    time.sleep(100)
dist.broadcast(t, src=0)
""")
    assert job.returncode != 0
    assert job.seconds < 60
    assert "DistBackendError: broadcast on the process group of ranks [0, 1] timed out after 3 s" in job.stderr


def test_mismatched_shapes_are_an_error_on_every_rank(mpi_job):
    job = mpi_job(2, """
dist.init_process_group("mpi", timeout=30)
r = dist.get_rank()
msgs = []
for call in (lambda: dist.all_reduce(rg.ones(3 + r)),
             lambda: dist.all_reduce(rg.ones(3, dtype=rg.float32 if r else rg.float64)),
             lambda: dist.all_reduce(rg.ones(3)) if r else dist.broadcast(rg.ones(3), src=0),
             lambda: dist.all_gather_into_tensor(rg.zeros(2 * (2 + r)), rg.ones(2 + r))):
    try:
        call()
        msgs.append(None)
    except RuntimeError as e:
        msgs.append(str(e))
# the group still works after a detected mismatch
t = rg.ones(2)
dist.all_reduce(t)
recv_err = None
if r == 0:
    dist.send(rg.ones(5), dst=1)
else:
    try:
        dist.recv(rg.zeros(4), src=0)
    except RuntimeError as e:
        recv_err = str(e)
save({"msgs": msgs, "after": t.tolist(), "recv": recv_err})
dist.destroy_process_group()
""").check()
    for r, out in job.results.items():
        first, second, third, fourth = out["msgs"]
        assert "Detected mismatch between collectives on ranks" in first
        # (the ranks run with the real default dtype, float32)
        assert "rank 0: all_reduce SUM float32 (3,)" in first and "rank 1: all_reduce SUM float32 (4,)" in first
        assert "float32" in second and "float64" in second
        assert "broadcast" in third and "all_reduce" in third
        assert "all_gather_into_tensor" in fourth
        assert out["after"] == [2.0, 2.0]
    assert "holds 20 bytes, but the receiving tensor has 16" in job.results[1]["recv"]


def test_mismatch_check_can_be_turned_off(mpi_job):
    job = mpi_job(2, """
dist.init_process_group("mpi", timeout=30)
t = rg.ones(3)
dist.all_reduce(t)   # same shapes: fine either way
save({"sum": t.tolist()})
dist.destroy_process_group()
""", env={"RETROGRAD_DISTRIBUTED_CHECKS": "0"}).check()
    assert job.results[0]["sum"] == [2.0] * 3
