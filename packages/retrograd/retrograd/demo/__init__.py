"""The retrograd demo: ``python -m retrograd.demo`` trains a small CNN on
digits it renders itself (nothing is downloaded).

It shows a live progress bar, prints each epoch's loss and accuracy and the
final test accuracy, and writes a Perfetto trace of one profiled training step
and a picture of the backward graph. ``python -m retrograd.demo --help`` lists
the options. The pieces are importable for use in your own scripts:
:func:`render_digits` / :func:`digits_split` (the data), :func:`build_model`,
:func:`train_epoch`, :func:`evaluate`, :class:`ProgressBar` and :func:`run`.
"""
from retrograd.demo._data import NUM_CLASSES, digits_split, render_digits
from retrograd.demo._progress import ProgressBar, format_seconds
from retrograd.demo._train import (DemoResult, build_model, draw_graph, evaluate, profile_step, run,
                                   train_epoch)
from retrograd.demo._cli import blas_threads_note, limit_blas_threads, main, parse_args

__all__ = ["NUM_CLASSES", "digits_split", "render_digits", "ProgressBar", "format_seconds", "DemoResult",
           "build_model", "draw_graph", "evaluate", "profile_step", "run", "train_epoch", "main", "parse_args",
           "blas_threads_note", "limit_blas_threads"]
