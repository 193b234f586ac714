"""Helpers of tests/distributed: start MPI jobs as subprocesses with a hard timeout.

Each job runs a script through the launcher (python -m
retrograd.distributed.run), so the tests also exercise it; the ranks
write what they found as JSON files that the test then reads. A job that
outlives its limit is killed and fails the test: no test can hang.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

JOB_TIMEOUT = 120


class Job:
    def __init__(self, proc, out_dir, nproc, seconds):
        self.returncode = proc.returncode
        self.stdout = proc.stdout_text
        self.stderr = proc.stderr_text
        self.seconds = seconds
        self.results = {}
        for r in range(nproc):
            path = out_dir / f"rank{r}.json"
            if path.exists():
                self.results[r] = json.loads(path.read_text())

    def check(self):
        assert self.returncode == 0, f"MPI job failed ({self.returncode}):\n{self.stdout}\n{self.stderr}"
        return self


@pytest.fixture
def mpi_job(tmp_path):
    """mpi_job(nproc, body, timeout=JOB_TIMEOUT, env=None) -> Job.

    ``body`` runs on every rank after ``import retrograd as rg``, ``import
    retrograd.distributed as dist``; it may call ``save(obj)`` to write its
    rank's JSON result."""
    import time

    def run(nproc, body, timeout=JOB_TIMEOUT, env=None):
        script = tmp_path / "job.py"
        script.write_text(
            "import json, os, sys, time\n"
            "import numpy as np\n"
            "import retrograd as rg\n"
            "import retrograd.distributed as dist\n"
            f"OUT = {str(tmp_path)!r}\n"
            "def save(obj):\n"
            "    with open(os.path.join(OUT, f'rank{dist.get_rank()}.json'), 'w') as f:\n"
            "        json.dump(obj, f)\n"
            + textwrap.dedent(body))
        full_env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
        full_env.update(env or {})
        t0 = time.monotonic()
        # its own session: on a timeout the whole job (launcher, mpiexec,
        # ranks) is killed as one process group
        proc = subprocess.Popen([sys.executable, "-m", "retrograd.distributed.run", "--nproc", str(nproc),
                                 str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=full_env, cwd=tmp_path, start_new_session=True)
        try:
            proc.stdout_text, proc.stderr_text = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(f"MPI job hung: killed after {timeout} s\n{out}\n{err}")
        return Job(proc, tmp_path, nproc, time.monotonic() - t0)

    return run
