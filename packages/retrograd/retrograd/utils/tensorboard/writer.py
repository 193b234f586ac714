"""SummaryWriter: TensorBoard event files, as torch.utils.tensorboard.SummaryWriter."""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any

from retrograd.utils.tensorboard import _summary

__all__ = ["SummaryWriter"]

# parameter text shared by the add_* methods
_STEP = """global_step : int, optional
        The step to record the value at (the x axis).
    walltime : float, optional
        The event's time in seconds since the epoch (default: now)."""


def _doc(text: str) -> str:
    return text.replace("{STEP}", _STEP)


def _require_tensorboard() -> None:
    try:
        import tensorboard  # noqa: F401
        from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: F401
    except ImportError as e:
        raise ImportError("rg.utils.tensorboard.SummaryWriter writes TensorBoard's event files with the "
                          "'tensorboard' package, which is not installed: pip install tensorboard") from e


class _FileWriter:
    # one event file in one directory (a run)
    def __init__(self, log_dir: str, max_queue: int, flush_secs: int, filename_suffix: str) -> None:
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        self.writer = EventFileWriter(log_dir, max_queue, flush_secs, filename_suffix)

    def add_summary(self, summary: Any, global_step: int | None, walltime: float | None) -> None:
        from tensorboard.compat.proto.event_pb2 import Event
        event = Event(summary=summary, wall_time=time.time() if walltime is None else walltime)
        if global_step is not None:
            event.step = int(global_step)
        self.writer.add_event(event)

    def add_event(self, event: Any) -> None:
        self.writer.add_event(event)

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()

    def reopen(self) -> None:
        self.writer.reopen()

    def get_logdir(self) -> str:
        return self.writer.get_logdir()


class SummaryWriter:
    """Write scalars, histograms, images, text and hyperparameters for TensorBoard.

    Values are queued and written asynchronously to an event file in
    ``log_dir``; view them with ``tensorboard --logdir runs``. Needs the
    ``tensorboard`` package (ImportError at construction without it).

    Parameters
    ----------
    log_dir : str or os.PathLike, optional
        The directory to write to; default ``runs/<Mon DD_HH-MM-SS>_<host><comment>``.
    comment : str, optional
        Appended to the default ``log_dir`` (ignored when ``log_dir`` is given).
    purge_step : int, optional
        When resuming a crashed run, events at steps >= ``purge_step`` are
        hidden by TensorBoard (a ``SessionLog.START`` event at that step).
    max_queue : int, optional
        Events queued before a write (default 10).
    flush_secs : int, optional
        Seconds between flushes to disk (default 120).
    filename_suffix : str, optional
        Appended to the event file's name.

    Examples
    --------
    >>> import tempfile, os
    >>> import retrograd as rg
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with SummaryWriter(log_dir=d) as writer:
    ...         for step in range(3):
    ...             writer.add_scalar("loss", 1.0 / (step + 1), step)
    ...     any(name.startswith("events.out.tfevents") for name in os.listdir(d))
    True
    """

    def __init__(self, log_dir: str | os.PathLike[str] | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        _require_tensorboard()
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.file_writer: _FileWriter | None = None
        self.all_writers: dict[str, _FileWriter] = {}
        self._get_file_writer()

    def _get_file_writer(self) -> _FileWriter:
        if self.file_writer is None:
            self.file_writer = _FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                from tensorboard.compat.proto.event_pb2 import Event, SessionLog
                start = Event(step=self.purge_step, file_version="brain.Event:2")
                self.file_writer.add_event(start)
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory the events are written to.

        Returns
        -------
        str
            ``log_dir``.

        Examples
        --------
        >>> import tempfile
        >>> from retrograd.utils.tensorboard import SummaryWriter
        >>> with tempfile.TemporaryDirectory() as d:
        ...     SummaryWriter(d).get_logdir() == d
        True
        """
        return self.log_dir

    def _add(self, summary: Any, global_step: int | None, walltime: float | None) -> None:
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None, walltime: float | None = None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        self._add(_summary.scalar(tag, scalar_value, new_style, double_precision), global_step, walltime)
    add_scalar.__doc__ = _doc("""Record one number.

    Parameters
    ----------
    tag : str
        The series' name (``"loss/train"``).
    scalar_value : float or one-element tensor
        The value.
    {STEP}
    new_style : bool, optional
        Write a tensor summary (TensorBoard's newer scalar form) instead of
        a simple value.
    double_precision : bool, optional
        With ``new_style``, keep the value in float64.

    Examples
    --------
    >>> import tempfile
    >>> import retrograd as rg
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_scalar("loss", rg.tensor(0.5), global_step=1)
    """)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any], global_step: int | None = None,
                    walltime: float | None = None) -> None:
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(base, main_tag.replace("/", "_") + "_" + tag)
            writer = self.all_writers.get(path)
            if writer is None:
                writer = _FileWriter(path, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[path] = writer
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)
    add_scalars.__doc__ = _doc("""Record several numbers on one chart: one run per key, in a subdirectory.

    Parameters
    ----------
    main_tag : str
        The chart's name.
    tag_scalar_dict : dict of str to float
        The series and their values.
    {STEP}

    Examples
    --------
    >>> import tempfile
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_scalars("loss", {"train": 0.5, "val": 0.7}, 0)
    """)

    def add_tensor(self, tag: str, tensor: Any, global_step: int | None = None, walltime: float | None = None) -> None:
        self._add(_summary.tensor(tag, tensor), global_step, walltime)
    add_tensor.__doc__ = _doc("""Record a whole tensor's values.

    Parameters
    ----------
    tag : str
        The name.
    tensor : Tensor or array
        Floating values are written as float32, integers as int64.
    {STEP}

    Examples
    --------
    >>> import tempfile
    >>> import retrograd as rg
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_tensor("weights", rg.ones(2, 2))
    """)

    def add_histogram(self, tag: str, values: Any, global_step: int | None = None, bins: Any = "tensorflow",
                      walltime: float | None = None, max_bins: int | None = None) -> None:
        self._add(_summary.histogram(tag, values, bins, max_bins), global_step, walltime)
    add_histogram.__doc__ = _doc("""Record the distribution of a tensor's values.

    Parameters
    ----------
    tag : str
        The name.
    values : Tensor or array
        The values (flattened).
    {STEP}
    bins : str, int or sequence, optional
        ``"tensorflow"`` (TensorBoard's exponential buckets, the default),
        or any ``bins`` of ``numpy.histogram`` (``"auto"``, a count,
        edges).
    max_bins : int, optional
        Merge neighbouring buckets so at most this many remain.

    Examples
    --------
    >>> import tempfile
    >>> import retrograd as rg
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_histogram("weights", rg.randn(100), 0, bins="auto")
    """)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: int, sum: float, sum_squares: float,
                          bucket_limits: Any, bucket_counts: Any, global_step: int | None = None,
                          walltime: float | None = None) -> None:
        self._add(_summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
                  global_step, walltime)
    add_histogram_raw.__doc__ = _doc("""Record a histogram computed elsewhere.

    Parameters
    ----------
    tag : str
        The name.
    min, max : float
        The smallest and largest values.
    num : int
        How many values.
    sum, sum_squares : float
        Their sum and the sum of their squares.
    bucket_limits : sequence of float
        The right edge of each bucket.
    bucket_counts : sequence of float
        The count in each bucket (as many as the limits).
    {STEP}

    Examples
    --------
    >>> import tempfile
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_histogram_raw("h", 0, 2, 3, 3.0, 5.0, [1.0, 2.0], [1, 2])
    """)

    def add_image(self, tag: str, img_tensor: Any, global_step: int | None = None, walltime: float | None = None,
                  dataformats: str = "CHW") -> None:
        self._add(_summary.image(tag, img_tensor, dataformats), global_step, walltime)
    add_image.__doc__ = _doc("""Record an image (written as PNG).

    Parameters
    ----------
    tag : str
        The name.
    img_tensor : Tensor or array
        uint8 values in [0, 255], or floating values in [0, 1].
    {STEP}
    dataformats : str, optional
        The layout: ``"CHW"`` (default), ``"HWC"`` or ``"HW"``; 1, 3 or 4
        channels.

    Examples
    --------
    >>> import tempfile
    >>> import retrograd as rg
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_image("noise", rg.rand(3, 8, 8))
    """)

    def add_images(self, tag: str, img_tensor: Any, global_step: int | None = None, walltime: float | None = None,
                   dataformats: str = "NCHW") -> None:
        self._add(_summary.image(tag, img_tensor, dataformats), global_step, walltime)
    add_images.__doc__ = _doc("""Record a batch of images as one grid (8 to a row).

    Parameters
    ----------
    tag : str
        The name.
    img_tensor : Tensor or array
        A batch, uint8 in [0, 255] or floating in [0, 1].
    {STEP}
    dataformats : str, optional
        ``"NCHW"`` (default), ``"NHWC"``, ``"NHW"``.

    Examples
    --------
    >>> import tempfile
    >>> import retrograd as rg
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_images("batch", rg.rand(4, 1, 8, 8))
    """)

    def add_figure(self, tag: str, figure: Any, global_step: int | None = None, close: bool = True,
                   walltime: float | None = None) -> None:
        figures = figure if isinstance(figure, list) else [figure]
        import numpy as np
        images = np.stack([_summary.figure_to_image(f) for f in figures])
        if isinstance(figure, list):
            self.add_images(tag, images, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, images[0], global_step, walltime, dataformats="CHW")
    add_figure.__doc__ = _doc("""Record a matplotlib figure (or a list of them, as a grid) as an image.

    Parameters
    ----------
    tag : str
        The name.
    figure : matplotlib.figure.Figure or list of them
        Rendered with the Agg backend, then closed.
    {STEP}
    close : bool, optional
        Accepted for torch's signature; the figure is always closed.

    Examples
    --------
    >>> import importlib.util, tempfile
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> if importlib.util.find_spec("matplotlib"):      # (matplotlib is optional)
    ...     import matplotlib.pyplot as plt
    ...     with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...         w.add_figure("plot", plt.figure())
    """)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        self._add(_summary.text(tag, text_string), global_step, walltime)
    add_text.__doc__ = _doc("""Record a text (Markdown).

    Parameters
    ----------
    tag : str
        The name.
    text_string : str
        The text.
    {STEP}

    Examples
    --------
    >>> import tempfile
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_text("notes", "lr **0.1**", 0)
    """)

    def add_audio(self, tag: str, snd_tensor: Any, global_step: int | None = None, sample_rate: int = 44100,
                  walltime: float | None = None) -> None:
        self._add(_summary.audio(tag, snd_tensor, sample_rate), global_step, walltime)
    add_audio.__doc__ = _doc("""Record a mono sound (written as 16-bit WAV).

    Parameters
    ----------
    tag : str
        The name.
    snd_tensor : Tensor or array
        Samples in [-1, 1], of shape ``(L,)`` or ``(1, L)``.
    {STEP}
    sample_rate : int, optional
        Samples per second (default 44100).

    Examples
    --------
    >>> import tempfile
    >>> import retrograd as rg
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_audio("beep", rg.sin(rg.arange(800.0) / 10) * 0.5, sample_rate=8000)
    """)

    def add_pr_curve(self, tag: str, labels: Any, predictions: Any, global_step: int | None = None,
                     num_thresholds: int = 127, weights: Any = None, walltime: float | None = None) -> None:
        self._add(_summary.pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)
    add_pr_curve.__doc__ = _doc("""Record a precision-recall curve.

    Parameters
    ----------
    tag : str
        The name.
    labels : Tensor or array
        The true labels (0 or 1).
    predictions : Tensor or array
        Probabilities in [0, 1], one per label.
    {STEP}
    num_thresholds : int, optional
        Thresholds evenly spaced in [0, 1] (at most 127, the default).
    weights : Tensor or array, optional
        A weight per example.

    Examples
    --------
    >>> import tempfile
    >>> import retrograd as rg
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_pr_curve("pr", rg.tensor([0, 1, 1]), rg.tensor([0.2, 0.7, 0.9]), 0)
    """)

    def add_pr_curve_raw(self, tag: str, true_positive_counts: Any, false_positive_counts: Any,
                         true_negative_counts: Any, false_negative_counts: Any, precision: Any, recall: Any,
                         global_step: int | None = None, num_thresholds: int = 127,
                         walltime: float | None = None) -> None:
        self._add(_summary.pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                                        false_negative_counts, precision, recall, num_thresholds),
                  global_step, walltime)
    add_pr_curve_raw.__doc__ = _doc("""Record a precision-recall curve computed elsewhere.

    Parameters
    ----------
    tag : str
        The name.
    true_positive_counts, false_positive_counts, true_negative_counts, false_negative_counts : array
        The counts at each threshold.
    precision, recall : array
        Their values at each threshold.
    {STEP}
    num_thresholds : int, optional
        The number of thresholds (the arrays' length).

    Examples
    --------
    >>> import tempfile
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_pr_curve_raw("pr", [2, 1], [1, 0], [0, 1], [0, 1], [0.67, 1.0], [1.0, 0.5], 0, num_thresholds=2)
    """)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None,
                    run_name: str | None = None, global_step: int | None = None) -> None:
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("add_hparams: hparam_dict and metric_dict must be dicts")
        summaries = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run = run_name or str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run)
        with SummaryWriter(log_dir=logdir) as sub:
            for s in summaries:
                sub._add(s, global_step, None)
            for k, v in metric_dict.items():
                sub.add_scalar(k, v, global_step)
    add_hparams.__doc__ = """Record a run's hyperparameters and final metrics (TensorBoard's HParams tab).

    They are written to a sub-run ``log_dir/<run_name>``.

    Parameters
    ----------
    hparam_dict : dict
        Names to bool, int, float, str, None or one-element tensors.
    metric_dict : dict
        Metric names to values (also written as scalars).
    hparam_domain_discrete : dict, optional
        For some hyperparameters, the list of all the values they can take.
    run_name : str, optional
        The sub-run's name (default: the current time).
    global_step : int, optional
        The step to record at.

    Examples
    --------
    >>> import tempfile
    >>> from retrograd.utils.tensorboard import SummaryWriter
    >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
    ...     w.add_hparams({"lr": 0.1, "optim": "sgd"}, {"accuracy": 0.9}, run_name="trial0")
    """

    def _unsupported(self, what: str, why: str) -> None:
        raise NotImplementedError(f"SummaryWriter.{what} is not supported by retrograd: {why}")

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """Not supported: torch traces the model with TorchScript, which retrograd does not have.

        Parameters
        ----------
        model, input_to_model, verbose, use_strict_trace
            torch's arguments.

        Raises
        ------
        NotImplementedError
            Always; draw the autograd graph with ``rg.autograd.graph`` tools instead.

        Examples
        --------
        >>> import tempfile
        >>> import retrograd as rg
        >>> from retrograd.utils.tensorboard import SummaryWriter
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     try:
        ...         w.add_graph(rg.nn.Linear(1, 1), rg.ones(1))
        ...     except NotImplementedError:
        ...         print("no graph")
        no graph
        """
        self._unsupported("add_graph", "the graph is traced with TorchScript, which retrograd does not have")

    def add_onnx_graph(self, prototxt: str) -> None:
        """Not supported: retrograd neither reads nor writes ONNX.

        Parameters
        ----------
        prototxt : str
            torch's argument.

        Raises
        ------
        NotImplementedError
            Always.

        Examples
        --------
        >>> import tempfile
        >>> from retrograd.utils.tensorboard import SummaryWriter
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     try:
        ...         w.add_onnx_graph("model.onnx")
        ...     except NotImplementedError:
        ...         print("no onnx")
        no onnx
        """
        self._unsupported("add_onnx_graph", "retrograd has no ONNX support")

    def flush(self) -> None:
        """Write every pending event to disk now.

        Examples
        --------
        >>> import tempfile
        >>> from retrograd.utils.tensorboard import SummaryWriter
        >>> with tempfile.TemporaryDirectory() as d, SummaryWriter(d) as w:
        ...     w.add_scalar("x", 1.0)
        ...     w.flush()
        """
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close the event files (a later add_* reopens them).

        Examples
        --------
        >>> import tempfile
        >>> from retrograd.utils.tensorboard import SummaryWriter
        >>> with tempfile.TemporaryDirectory() as d:
        ...     w = SummaryWriter(d)
        ...     w.close()
        """
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = None
        self.all_writers = {}

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
