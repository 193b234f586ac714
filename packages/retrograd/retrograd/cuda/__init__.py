"""retrograd.cuda (``torch.cuda``): CUDA devices, streams, events, memory and seeding.

A thin layer over CuPy, which holds retrograd's CUDA arrays: a
:class:`Stream` is a CuPy stream, ``with rg.cuda.stream(s):`` makes it
CuPy's current stream (so ops queue their kernels there, and autograd
records it for their backward), and the memory figures are those of CuPy's
default memory pool. Everything here works without CuPy or a GPU as torch's
does without CUDA: :func:`is_available` is False, :func:`device_count` is 0,
and the rest raises a RuntimeError that says what is missing.
"""
from __future__ import annotations

import threading

from retrograd.core import Device, device as _device

__all__ = ["is_available", "device_count", "current_device", "set_device", "get_device_name", "synchronize",
           "Stream", "Event", "StreamContext", "current_stream", "default_stream", "stream",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "reset_peak_memory_stats",
           "empty_cache", "manual_seed", "manual_seed_all"]


def _cupy():
    """CuPy with at least one GPU, or a RuntimeError saying what is missing."""
    try:
        import cupy
    except ImportError:
        raise RuntimeError("retrograd.cuda needs CuPy and a CUDA GPU: install the CuPy build for your CUDA "
                           "(pip install cupy-cuda12x)") from None
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:                # no driver, or a broken one
        raise RuntimeError(f"No CUDA GPUs are available ({exc})") from None
    if n < 1:
        raise RuntimeError("No CUDA GPUs are available")
    return cupy


def is_available() -> bool:
    """Whether CUDA tensors can be made: CuPy is installed and sees a GPU.

    Returns
    -------
    bool
        True when CuPy finds at least one CUDA device.

    Examples
    --------
    >>> import retrograd as rg
    >>> isinstance(rg.cuda.is_available(), bool)
    True
    """
    try:
        _cupy()
    except RuntimeError:
        return False
    return True


def device_count() -> int:
    """The number of CUDA devices (0 without CuPy or a GPU).

    Returns
    -------
    int
        How many GPUs CuPy sees.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.cuda.device_count() >= 0
    True
    """
    if not is_available():
        return 0
    import cupy
    return int(cupy.cuda.runtime.getDeviceCount())


def _device_index(device, optional: bool = True) -> int:
    # torch's _get_device_index: None is the current device; an int, "cuda",
    # "cuda:1" or a cuda Device name one
    if device is None:
        if not optional:
            raise ValueError("Expected a cuda device, but got: None")
        return int(_cupy().cuda.runtime.getDevice())
    if isinstance(device, bool) or not isinstance(device, (int, str, Device)):
        raise TypeError(f"Expected a cuda device: an int, a string such as 'cuda:0' or a Device, "
                        f"not {type(device).__name__}")
    if isinstance(device, int):
        return device
    dev = _device(device)
    if dev.type_name != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return dev.index if dev.index is not None and dev.index >= 0 else int(_cupy().cuda.runtime.getDevice())


def current_device() -> int:
    """The index of this thread's current CUDA device.

    Returns
    -------
    int
        The device index.

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     assert rg.cuda.current_device() >= 0
    """
    return int(_cupy().cuda.runtime.getDevice())


def set_device(device) -> None:
    """Make ``device`` this thread's current CUDA device (a negative index does nothing, as torch).

    Parameters
    ----------
    device : int, str or Device
        The device: ``1``, ``"cuda:1"`` or ``rg.device("cuda:1")``.

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU, or for an index past the last device.
    ValueError
        For a device that is not a CUDA device.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     rg.cuda.set_device(0)
    """
    index = _device_index(device)
    if index >= 0:
        cupy = _cupy()
        n = cupy.cuda.runtime.getDeviceCount()
        if index >= n:
            raise RuntimeError(f"CUDA error: invalid device ordinal {index}: this machine has {n} CUDA "
                               f"device{'s' if n != 1 else ''} (0..{n - 1})")
        cupy.cuda.runtime.setDevice(index)


def get_device_name(device=None) -> str:
    """The name of a CUDA device (the current one by default).

    Parameters
    ----------
    device : int, str or Device, optional
        The device.

    Returns
    -------
    str
        Its name, as the driver reports it.

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     assert isinstance(rg.cuda.get_device_name(), str)
    """
    name = _cupy().cuda.runtime.getDeviceProperties(_device_index(device))["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device=None) -> None:
    """Wait until every kernel queued on a CUDA device has finished.

    Parameters
    ----------
    device : int, str or Device, optional
        The device (the current one by default).

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     rg.cuda.synchronize()
    """
    cupy = _cupy()
    with cupy.cuda.Device(_device_index(device)):
        cupy.cuda.runtime.deviceSynchronize()


# --- streams and events ------------------------------------------------------

class Stream:
    """A CUDA stream: a queue of kernels that run in order (``torch.cuda.Stream``).

    Kernels on different streams may overlap. Make a stream current with
    ``with rg.cuda.stream(s):`` (or ``with s:``): retrograd's ops queue their
    kernels there, and the backward of each op runs on the stream its
    forward ran on. Order work across streams with :meth:`wait_stream` or
    events, never with a host synchronize.

    Parameters
    ----------
    device : int, str or Device, optional
        The device (the current one by default).
    priority : int, optional
        Lower numbers run first when streams compete (0, the default, is
        the lowest priority; negative numbers are higher).

    Attributes
    ----------
    cupy_stream : cupy.cuda.Stream
        The CuPy stream (pass it to CuPy's own functions).

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     s = rg.cuda.Stream()
    ...     with rg.cuda.stream(s):
    ...         y = rg.ones(3, device="cuda") * 2
    ...     rg.cuda.current_stream().wait_stream(s)
    """

    def __init__(self, device=None, priority: int = 0):
        cupy = _cupy()
        with cupy.cuda.Device(_device_index(device)):
            # torch's streams never wait for the legacy default stream
            self.cupy_stream = cupy.cuda.Stream(non_blocking=True, priority=priority or None)

    @classmethod
    def _wrap(cls, cupy_stream) -> "Stream":
        s = cls.__new__(cls)
        s.cupy_stream = cupy_stream
        return s

    @property
    def cuda_stream(self) -> int:
        """The raw ``cudaStream_t`` handle, as an int."""
        return int(self.cupy_stream.ptr)

    @property
    def device_index(self) -> int:
        """The index of the stream's device."""
        return int(self.cupy_stream.device_id)

    @property
    def device(self) -> Device:
        """The stream's device."""
        return _device(f"cuda:{self.device_index}")

    def query(self) -> bool:
        """Whether every kernel queued on the stream has finished (the host does not wait).

        Returns
        -------
        bool
            True when the stream is idle.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     s = rg.cuda.Stream()
        ...     assert s.query()
        """
        return bool(self.cupy_stream.done)

    def synchronize(self) -> None:
        """Wait (on the host) until every kernel queued on the stream has finished.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     s = rg.cuda.Stream()
        ...     s.synchronize()
        """
        self.cupy_stream.synchronize()

    def wait_event(self, event: "Event") -> None:
        """Make later work on this stream wait for ``event`` (the host does not wait).

        Parameters
        ----------
        event : Event
            A recorded event.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     s1, s2 = rg.cuda.Stream(), rg.cuda.Stream()
        ...     s2.wait_event(s1.record_event())
        """
        self.cupy_stream.wait_event(event.cupy_event)

    def wait_stream(self, stream: "Stream") -> None:
        """Make later work on this stream wait for the work queued so far on ``stream``.

        Parameters
        ----------
        stream : Stream
            The stream to wait for.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     s = rg.cuda.Stream()
        ...     with rg.cuda.stream(s):
        ...         y = rg.ones(3, device="cuda") + 1
        ...     rg.cuda.current_stream().wait_stream(s)
        """
        self.wait_event(stream.record_event())

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one by default) on this stream, and return it.

        Parameters
        ----------
        event : Event, optional
            The event to record.

        Returns
        -------
        Event
            The recorded event.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     e = rg.cuda.Stream().record_event()
        ...     e.synchronize()
        """
        event = Event() if event is None else event
        event.record(self)
        return event

    def __enter__(self) -> "Stream":
        self._context = StreamContext(self)
        self._context.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._context.__exit__(*exc)

    def __eq__(self, other) -> bool:
        return (isinstance(other, Stream) and self.cuda_stream == other.cuda_stream
                and self.device_index == other.device_index)

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return f"<retrograd.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a marker in a stream, to wait for or to time (``torch.cuda.Event``).

    Parameters
    ----------
    enable_timing : bool, optional
        Whether :meth:`elapsed_time` can measure from or to it (default
        False: cheaper).
    blocking : bool, optional
        Whether :meth:`synchronize` blocks the host thread instead of
        spinning (default False).
    interprocess : bool, optional
        Whether it can be shared with another process (default False;
        needs ``enable_timing=False``).

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     start, end = rg.cuda.Event(enable_timing=True), rg.cuda.Event(enable_timing=True)
    ...     start.record()
    ...     y = rg.ones(1000, device="cuda").exp()
    ...     end.record()
    ...     end.synchronize()
    ...     assert start.elapsed_time(end) >= 0
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        if interprocess and enable_timing:
            raise ValueError("an interprocess Event needs enable_timing=False (CUDA cannot share timed events)")
        self.cupy_event = _cupy().cuda.Event(block=blocking, disable_timing=not enable_timing,
                                             interprocess=interprocess)
        self._recorded = False

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (the current stream by default).

        Parameters
        ----------
        stream : Stream, optional
            Where to record it.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     e = rg.cuda.Event()
        ...     e.record()
        """
        self.cupy_event.record((stream or current_stream()).cupy_stream)
        self._recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on ``stream`` (the current one by default) wait for this event.

        Parameters
        ----------
        stream : Stream, optional
            The stream that waits.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     e = rg.cuda.Stream().record_event()
        ...     e.wait()
        """
        (stream or current_stream()).wait_event(self)

    def query(self) -> bool:
        """Whether the work queued before the event's record has finished (the host does not wait).

        Returns
        -------
        bool
            True once it has.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     e = rg.cuda.Event()
        ...     e.record()
        ...     e.synchronize()
        ...     assert e.query()
        """
        return bool(self.cupy_event.done)

    def synchronize(self) -> None:
        """Wait (on the host) for the work queued before the event's record to finish.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     e = rg.cuda.Event()
        ...     e.record()
        ...     e.synchronize()
        """
        self.cupy_event.synchronize()

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event's record and ``end_event``'s.

        Parameters
        ----------
        end_event : Event
            The later event; both need ``enable_timing=True``.

        Returns
        -------
        float
            The elapsed GPU time in milliseconds.

        Raises
        ------
        RuntimeError
            When an event was not recorded or has timing disabled.

        Examples
        --------
        >>> import retrograd as rg
        >>> if rg.cuda.is_available():
        ...     a, b = rg.cuda.Event(enable_timing=True), rg.cuda.Event(enable_timing=True)
        ...     a.record()
        ...     b.record()
        ...     b.synchronize()
        ...     assert a.elapsed_time(b) >= 0
        """
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("elapsed_time(): both events must be recorded first (call record())")
        return float(_cupy().cuda.get_elapsed_time(self.cupy_event, end_event.cupy_event))

    def __repr__(self) -> str:
        return f"<retrograd.cuda.Event {self.cupy_event.ptr:#x}>"


class StreamContext:
    """Makes a stream current (and its device) inside a ``with`` block (``torch.cuda.StreamContext``).

    ``None`` makes it do nothing, so code can take an optional stream.

    Parameters
    ----------
    stream : Stream or None
        The stream.

    Examples
    --------
    >>> import retrograd as rg
    >>> with rg.cuda.StreamContext(None):
    ...     pass
    """

    def __init__(self, stream: Stream | None):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"expected a retrograd.cuda.Stream or None, not {type(stream).__name__}")
        self.stream = stream
        self._entered = threading.local()

    def __enter__(self) -> Stream | None:
        if self.stream is None:
            return None
        import cupy
        device = cupy.cuda.Device(self.stream.device_index)
        device.__enter__()
        self.stream.cupy_stream.__enter__()
        stack = getattr(self._entered, "stack", None)
        if stack is None:
            stack = self._entered.stack = []
        stack.append(device)
        return self.stream

    def __exit__(self, *exc) -> None:
        if self.stream is None:
            return
        self.stream.cupy_stream.__exit__(*exc)
        self._entered.stack.pop().__exit__(*exc)


def stream(stream: Stream | None) -> StreamContext:
    """``with rg.cuda.stream(s):`` runs the block with ``s`` as the current stream (``torch.cuda.stream``).

    Parameters
    ----------
    stream : Stream or None
        The stream (``None``: no change).

    Returns
    -------
    StreamContext
        The context manager.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     s = rg.cuda.Stream()
    ...     with rg.cuda.stream(s):
    ...         assert rg.cuda.current_stream() == s
    """
    return StreamContext(stream)


def current_stream(device=None) -> Stream:
    """This thread's current stream on a device (the current device by default).

    Parameters
    ----------
    device : int, str or Device, optional
        The device.

    Returns
    -------
    Stream
        The stream ops queue their kernels on.

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     assert rg.cuda.current_stream() == rg.cuda.default_stream()
    """
    cupy = _cupy()
    return Stream._wrap(cupy.cuda.get_current_stream(_device_index(device)))


def default_stream(device=None) -> Stream:
    """A device's default stream (the one current when no other was made current).

    Parameters
    ----------
    device : int, str or Device, optional
        The device.

    Returns
    -------
    Stream
        CuPy's default stream of that device.

    Raises
    ------
    RuntimeError
        Without CuPy or a GPU.

    Examples
    --------
    >>> import retrograd as rg
    >>> if rg.cuda.is_available():
    ...     assert rg.cuda.default_stream().cuda_stream == 0
    """
    cupy = _cupy()
    with cupy.cuda.Device(_device_index(device)):
        return Stream._wrap(cupy.cuda.Stream.null)


# --- memory ------------------------------------------------------------------
from retrograd.cuda import _memory  # noqa: E402
from retrograd.cuda._memory import (  # noqa: E402,F401
    empty_cache, max_memory_allocated, memory_allocated, memory_reserved, reset_peak_memory_stats,
)
from retrograd.cuda._random import manual_seed, manual_seed_all  # noqa: E402,F401

del _memory


def __getattr__(name: str):
    # rg.cuda.amp (torch.cuda.amp), loaded when a program first touches it
    if name == "amp":
        import importlib
        return importlib.import_module("retrograd.cuda.amp")
    raise AttributeError(f"module 'retrograd.cuda' has no attribute {name!r}")
