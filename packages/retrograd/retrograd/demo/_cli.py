"""The demo's command line: options, BLAS threads, and ``main``."""
from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from collections.abc import Sequence

__all__ = ["main", "parse_args", "limit_blas_threads", "blas_threads_note"]

# The variables the common BLAS builds read (OpenBLAS, MKL, BLIS, and OpenMP
# builds of any of them).
_BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
# set in the environment of the restarted demo: the variables are the demo's choice, not the user's
_RESTARTED = "RETROGRAD_DEMO_SET_BLAS_THREADS"


def limit_blas_threads(threads: int = 1) -> str:
    """Run BLAS single-threaded, unless the user chose a thread count.

    The demo's matrix products are small (at most a few hundred thousand
    multiply-adds per call). A second BLAS thread saves little on them, while
    on a machine whose cores are busy the BLAS threads spin waiting for each
    other and can make a run several times slower (and its timings erratic):
    on a busy 2-core machine, an epoch of the demo took 1.2-1.7 s with one
    OpenBLAS thread and 6-15 s with two.
    So the demo uses one thread, unless one of ``OPENBLAS_NUM_THREADS``,
    ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` or ``BLIS_NUM_THREADS`` is set
    (the user's choice is kept).

    BLAS libraries read those variables only when NumPy loads them, and
    ``python -m retrograd.demo`` has imported NumPy (through ``retrograd``)
    before this runs. So: with ``threadpoolctl`` installed, its
    ``threadpool_limits`` changes the count in place; without it, the demo
    starts again once in a fresh interpreter with the variables set (the
    restart costs well under a second).

    Parameters
    ----------
    threads : int, optional
        The BLAS thread count to use (default 1).

    Returns
    -------
    str
        ``"user"`` (a variable was already set; nothing changed),
        ``"threadpoolctl"``, or ``"restarted"`` (in the restarted demo).
        Where the demo restarts, the first process does not return.
    """
    if os.environ.get(_RESTARTED):
        return "restarted"
    if any(v in os.environ for v in _BLAS_VARS):
        return "user"
    try:
        # imported by name: an optional package, which type checkers may not have
        threadpoolctl = importlib.import_module("threadpoolctl")
    except ImportError:
        pass
    else:
        # never restored on purpose: the limit is for the whole run
        threadpoolctl.threadpool_limits(limits=threads, user_api="blas")
        return "threadpoolctl"
    env = {**os.environ, **{v: str(threads) for v in _BLAS_VARS}, _RESTARTED: "1"}
    argv = [sys.executable, "-m", "retrograd.demo", *sys.argv[1:]]
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(sys.executable, argv, env)
    sys.exit(subprocess.call(argv, env=env))    # Windows has no real exec


def blas_threads_note(how: str) -> str:
    """One line saying how many BLAS threads the demo runs with, and why.

    Parameters
    ----------
    how : str
        What :func:`limit_blas_threads` returned.

    Returns
    -------
    str
        The line to print.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.demo import blas_threads_note
    >>> print(blas_threads_note("restarted"))
    BLAS threads: 1 (the demo's choice for small matrices on busy cores; set OPENBLAS_NUM_THREADS to choose)
    """
    if how == "user":
        chosen = ", ".join(f"{v}={os.environ[v]}" for v in _BLAS_VARS if v in os.environ)
        return f"BLAS threads: as the environment sets them ({chosen})"
    return ("BLAS threads: 1 (the demo's choice for small matrices on busy cores; "
            "set OPENBLAS_NUM_THREADS to choose)")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the demo's command line.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    argparse.Namespace
        ``epochs`` (int or None), ``quick`` (bool), ``out`` (str), ``seed``
        (int) and ``progress`` (str).

    Raises
    ------
    SystemExit
        On ``--help`` or a bad argument (argparse's behaviour).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.demo import parse_args
    >>> args = parse_args(["--quick", "--out", "here"])
    >>> args.quick, args.out, args.epochs, args.seed
    (True, 'here', None, 0)
    """
    parser = argparse.ArgumentParser(
        prog="python -m retrograd.demo",
        description="Train a small CNN with retrograd on digits rendered on the fly (no download), "
                    "showing progress, per-epoch loss and accuracy; write a Perfetto trace of one "
                    "training step and a picture of the backward graph.")
    parser.add_argument("--epochs", type=int, default=None,
                        help="passes over the training set (default 3, or 1 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="a small data set and one epoch: a run of a few seconds (smoke tests)")
    parser.add_argument("--out", default="retrograd-demo", metavar="DIR",
                        help="folder for trace.json and the graph picture (default: ./retrograd-demo)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data, the weights and the shuffling")
    parser.add_argument("--progress", choices=("auto", "tqdm", "line", "plain"), default="auto",
                        help="progress display (default auto: tqdm or a redrawn line on a terminal, "
                             "plain lines otherwise)")
    args = parser.parse_args(argv)
    if args.epochs is not None and args.epochs < 1:
        parser.error(f"--epochs must be at least 1, got {args.epochs}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo from the command line.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``); see :func:`parse_args`.

    Returns
    -------
    int
        The exit status (0).

    Examples
    --------
    >>> import retrograd as rg
    >>> import contextlib, io, tempfile
    >>> from retrograd.demo import main
    >>> with contextlib.redirect_stdout(io.StringIO()) as log:
    ...     status = main(["--quick", "--out", tempfile.mkdtemp()])
    >>> status, "Final test accuracy" in log.getvalue()
    (0, True)
    """
    from retrograd.demo._train import run
    args = parse_args(argv)
    run(args.epochs, quick=args.quick, out=args.out, seed=args.seed, progress=args.progress)
    return 0
