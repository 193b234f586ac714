"""A live progress line for the demo (tqdm when installed).

Three ways to show progress, chosen by where the output goes:

- ``"tqdm"``: tqdm's bar, when tqdm is installed and the output is a terminal;
- ``"line"``: a built-in single line redrawn in place with ``\\r`` (a terminal
  without tqdm);
- ``"plain"``: a few ordinary lines (a pipe, a file, a CI log), because ``\\r``
  redraws turn into one unreadable line there.
"""
from __future__ import annotations

import shutil
import sys
import time
from typing import Any, TextIO

__all__ = ["ProgressBar", "format_seconds"]

_MODES = ("auto", "tqdm", "line", "plain")


def format_seconds(seconds: float) -> str:
    """Format a duration as ``m:ss`` (or ``h:mm:ss`` from one hour on).

    Parameters
    ----------
    seconds : float
        The duration; negative or non-finite values print as ``?``.

    Returns
    -------
    str
        The formatted duration.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.demo import format_seconds
    >>> format_seconds(7.4), format_seconds(75), format_seconds(3725)
    ('0:07', '1:15', '1:02:05')
    """
    if not (seconds >= 0 and seconds != float("inf")):
        return "?"
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _has_tqdm() -> bool:
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


class ProgressBar:
    """Progress of a loop of known length: steps/s, loss and ETA.

    Call :meth:`update` once per step (with the step's loss), and
    :meth:`close` at the end (or use it as a context manager).

    Parameters
    ----------
    total : int
        Number of steps the loop will take.
    desc : str, optional
        Text shown before the bar (e.g. ``"epoch 1/3"``).
    file : file-like, optional
        Where to write (default ``sys.stdout``).
    mode : {"auto", "tqdm", "line", "plain"}, optional
        ``"auto"`` (default) picks tqdm when it is installed and ``file`` is a
        terminal, else the built-in line on a terminal, else plain lines.
    min_interval : float, optional
        Seconds between two redraws of the built-in line (default 0.1); plain
        mode prints at most ``plain_lines`` lines, evenly spaced in steps.
    plain_lines : int, optional
        How many progress lines plain mode prints over the whole loop
        (default 4; the last one at the end).

    Raises
    ------
    ValueError
        If ``mode`` is not one of the four, or ``total`` is negative.

    Examples
    --------
    >>> import io
    >>> import retrograd as rg
    >>> from retrograd.demo import ProgressBar
    >>> out = io.StringIO()
    >>> with ProgressBar(8, "epoch 1/1", file=out, mode="plain", plain_lines=2) as bar:
    ...     for step in range(8):
    ...         bar.update(loss=1.0 / (step + 1))
    >>> [line.split("|")[0].strip() for line in out.getvalue().splitlines()]
    ['epoch 1/1  4/8', 'epoch 1/1  8/8']
    """

    def __init__(self, total: int, desc: str = "", *, file: TextIO | None = None, mode: str = "auto",
                 min_interval: float = 0.1, plain_lines: int = 4) -> None:
        if mode not in _MODES:
            raise ValueError(f"ProgressBar(): mode must be one of {_MODES}, got {mode!r}")
        if total < 0:
            raise ValueError(f"ProgressBar(): total must be >= 0, got {total}")
        self.total = int(total)
        self.desc = desc
        self.file = sys.stdout if file is None else file
        if mode == "auto":
            tty = bool(getattr(self.file, "isatty", lambda: False)())
            mode = ("tqdm" if _has_tqdm() else "line") if tty else "plain"
        self.mode = mode
        self.min_interval = float(min_interval)
        self.n = 0
        self.loss: float | None = None
        self._start = time.perf_counter()
        self._last_draw = -float("inf")
        self._plain_every = max(1, -(-self.total // max(1, plain_lines)))       # ceil division
        self._closed = False
        self._tqdm: Any = None
        if mode == "tqdm":
            from tqdm import tqdm
            # the size from shutil, which falls back to 80x24 where a terminal
            # reports 0x0 (tqdm would then draw nothing)
            cols, rows = shutil.get_terminal_size()
            self._tqdm = tqdm(total=self.total, desc=desc, unit="step", file=self.file, ncols=cols,
                              nrows=rows, leave=True)

    # -- state -------------------------------------------------------------
    @property
    def elapsed(self) -> float:
        """Seconds since the bar was created.

        Returns
        -------
        float
        """
        return time.perf_counter() - self._start

    @property
    def rate(self) -> float:
        """Steps per second so far (0.0 before the first step).

        Returns
        -------
        float
        """
        elapsed = self.elapsed
        return self.n / elapsed if self.n and elapsed > 0 else 0.0

    @property
    def eta(self) -> float:
        """Estimated seconds left (``inf`` before the first step).

        Returns
        -------
        float
        """
        rate = self.rate
        return (self.total - self.n) / rate if rate > 0 else float("inf")

    def line(self) -> str:
        """The built-in progress line: count, bar, steps/s, loss, ETA.

        Returns
        -------
        str
            For example ``"epoch 1/3  40/125 |#####.........| 85.2 step/s
            loss 0.4210  ETA 0:01"``.

        Examples
        --------
        >>> import io
        >>> import retrograd as rg
        >>> from retrograd.demo import ProgressBar
        >>> bar = ProgressBar(4, "epoch 1/1", file=io.StringIO(), mode="plain")
        >>> bar.update(1, loss=0.25)
        >>> bar.line().split(" step/s")[0].rsplit(" ", 1)[0]
        'epoch 1/1  1/4 |#####...............|'
        """
        width = 20
        filled = width * self.n // self.total if self.total else width
        bar = "#" * filled + "." * (width - filled)
        loss = "" if self.loss is None else f"  loss {self.loss:.4f}"
        prefix = f"{self.desc}  " if self.desc else ""
        if self.n >= self.total:
            tail = f"  {format_seconds(self.elapsed)}"
        else:
            tail = f"  ETA {format_seconds(self.eta)}"
        return f"{prefix}{self.n}/{self.total} |{bar}| {self.rate:.1f} step/s{loss}{tail}"

    # -- updates -----------------------------------------------------------
    def update(self, n: int = 1, loss: float | None = None) -> None:
        """Record ``n`` more steps, and the latest loss.

        Parameters
        ----------
        n : int, optional
            Steps done since the last call (default 1).
        loss : float, optional
            The loss to show (a Python float or a 0-d tensor).

        Examples
        --------
        >>> import io
        >>> import retrograd as rg
        >>> from retrograd.demo import ProgressBar
        >>> bar = ProgressBar(10, file=io.StringIO(), mode="plain")
        >>> bar.update(3, loss=0.5)
        >>> bar.n, bar.loss
        (3, 0.5)
        """
        self.n += n
        if loss is not None:
            self.loss = float(loss)
        if self.mode == "tqdm":
            if loss is not None:
                self._tqdm.set_postfix(loss=f"{self.loss:.4f}", refresh=False)
            self._tqdm.update(n)
        elif self.mode == "line":
            now = time.perf_counter()
            if now - self._last_draw >= self.min_interval or self.n >= self.total:
                self._last_draw = now
                # pad with spaces so a shorter line wipes the end of the longer one it replaces
                self.file.write("\r" + self.line().ljust(79))
                self.file.flush()
        elif self.n % self._plain_every == 0 and self.n < self.total:
            self.file.write(self.line() + "\n")
            self.file.flush()

    def close(self) -> None:
        """Draw the final state and end the line (idempotent).

        Examples
        --------
        >>> import io
        >>> import retrograd as rg
        >>> from retrograd.demo import ProgressBar
        >>> out = io.StringIO()
        >>> bar = ProgressBar(2, "done", file=out, mode="plain")
        >>> bar.update(2)
        >>> bar.close()
        >>> out.getvalue().startswith("done  2/2 |####################|")
        True
        """
        if self._closed:
            return
        self._closed = True
        if self.mode == "tqdm":
            self._tqdm.close()
        elif self.mode == "line":
            self.file.write("\r" + self.line().ljust(79) + "\n")
            self.file.flush()
        else:
            self.file.write(self.line() + "\n")
            self.file.flush()

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
