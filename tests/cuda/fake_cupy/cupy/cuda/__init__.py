"""CPU stand-in for ``cupy.cuda``: devices, streams, events, the runtime.

The stand-in runs every "kernel" synchronously on the host, so streams and
events cannot reorder anything here. What it keeps is CuPy's bookkeeping,
with CuPy's names and signatures: the current device and the current stream
are per thread (a stream is made current with ``with s:`` or ``s.use()``),
``Event.record`` notes which stream it was recorded on, and
``Stream.wait_event`` notes what a stream waits for. Tests read that record
from ``_log`` (a list of ``(verb, stream, event)`` tuples; ``_log.clear()``
to start afresh) to check that retrograd asks for the waits and records a
GPU needs. It is a test double: the real-GPU run stays the proof.
"""
import contextlib as _contextlib
import itertools as _itertools
import threading as _threading
import time as _time

# what the stand-in was asked to do, in order: ("record", stream, event),
# ("wait_event", stream, event), ("synchronize", stream_or_None, None)
_log = []
_ptrs = _itertools.count(0x1000)
_tls = _threading.local()


# --- runtime ---------------------------------------------------------------
class runtime:
    class CUDARuntimeError(RuntimeError):
        pass

    @staticmethod
    def getDeviceCount():
        return 1

    @staticmethod
    def getDevice():
        return getattr(_tls, "device", 0)

    @staticmethod
    def setDevice(device):
        if not 0 <= int(device) < runtime.getDeviceCount():
            raise runtime.CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        _tls.device = int(device)

    @staticmethod
    def deviceSynchronize():
        _log.append(("synchronize", None, None))

    @staticmethod
    def getDeviceProperties(device):
        return {"name": b"Fake CUDA device (CPU stand-in)", "totalGlobalMem": 16 << 30,
                "major": 9, "minor": 0, "multiProcessorCount": 1}


# --- devices ---------------------------------------------------------------
class Device:
    """cupy.cuda.Device: ``with Device(i):`` makes device i current for this thread."""

    def __init__(self, device=None):
        if device is None:
            device = runtime.getDevice()
        self.id = int(device)
        self._prev = []

    def use(self):
        runtime.setDevice(self.id)

    def __enter__(self):
        self._prev.append(runtime.getDevice())
        runtime.setDevice(self.id)
        return self

    def __exit__(self, *exc):
        runtime.setDevice(self._prev.pop())
        return False

    def synchronize(self):
        _log.append(("synchronize", None, None))

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


# --- streams ---------------------------------------------------------------
def _stack():
    # this thread's current streams, one stack per device
    stacks = getattr(_tls, "streams", None)
    if stacks is None:
        stacks = _tls.streams = {}
    return stacks.setdefault(runtime.getDevice(), [])


class _BaseStream:
    def __init__(self, ptr, device_id):
        self.ptr = ptr
        self.device_id = device_id

    def __eq__(self, other):
        return isinstance(other, _BaseStream) and (self.ptr, self.device_id) == (other.ptr, other.device_id)

    def __hash__(self):
        return hash((self.ptr, self.device_id))

    def __repr__(self):
        return f"<Stream {self.ptr:#x} (device {self.device_id})>"

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False

    def use(self):
        stack = _stack()
        if stack:
            stack[-1] = self
        else:
            stack.append(self)
        return self

    @property
    def done(self):
        return True                     # the stand-in's work is finished when it returns

    def synchronize(self):
        _log.append(("synchronize", self, None))

    def record(self, event=None):
        if event is None:
            event = Event()
        event.record(self)
        return event

    def wait_event(self, event):
        _log.append(("wait_event", self, event))

    def launch_host_func(self, callback, arg):
        callback(arg)


class Stream(_BaseStream):
    """cupy.cuda.Stream(null=False, non_blocking=False, ptds=False, priority=None)."""

    null = None                         # set below: the legacy default stream
    ptds = None

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        super().__init__(0 if null else (2 if ptds else next(_ptrs)), runtime.getDevice())


class ExternalStream(_BaseStream):
    """cupy.cuda.ExternalStream(ptr, device_id=-1): a stream made elsewhere."""

    def __init__(self, ptr, device_id=-1):
        super().__init__(int(ptr), runtime.getDevice() if device_id < 0 else device_id)


Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)


def get_current_stream(device_id=None):
    if device_id is not None and device_id >= 0 and device_id != runtime.getDevice():
        with Device(device_id):
            return get_current_stream()
    stack = _stack()
    return stack[-1] if stack else Stream.null


# --- events ----------------------------------------------------------------
class Event:
    """cupy.cuda.Event(block=False, disable_timing=False, interprocess=False)."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        if interprocess and not disable_timing:
            raise ValueError("Timing must be disabled for interprocess events")
        self.ptr = next(_ptrs)
        self._disable_timing = disable_timing
        self._time = None
        self.stream = None              # the stand-in's note: where it was last recorded

    def record(self, stream=None):
        if stream is None:
            stream = get_current_stream()
        self.stream = stream
        self._time = _time.perf_counter()
        _log.append(("record", stream, self))

    def synchronize(self):
        _log.append(("synchronize", self.stream, self))

    @property
    def done(self):
        return True

    def __repr__(self):
        return f"<Event {self.ptr:#x}>"


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded events."""
    for e in (start_event, end_event):
        if e._disable_timing:
            raise runtime.CUDARuntimeError("cudaErrorInvalidResourceHandle: the event was made with "
                                           "disable_timing=True")
        if e._time is None:
            raise runtime.CUDARuntimeError("cudaErrorInvalidResourceHandle: the event was never recorded")
    return (end_event._time - start_event._time) * 1000.0


# --- allocators ------------------------------------------------------------
@_contextlib.contextmanager
def using_allocator(allocator=None):
    from cupy import _memory
    previous, _memory._allocator = _memory._allocator, allocator
    try:
        yield
    finally:
        _memory._allocator = previous


def set_allocator(allocator=None):
    """The function arrays allocate through (None: the default pool's malloc)."""
    from cupy import _memory
    _memory._allocator = allocator


def get_allocator():
    from cupy import _memory
    return _memory._allocator or _memory._default_pool.malloc


from cupy._memory import MemoryPool, PinnedMemoryPool  # noqa: E402,F401


class memory:
    class OutOfMemoryError(MemoryError):
        def __init__(self, size, total, limit=0):
            super().__init__(f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes"
                             + (f", limit set to: {limit:,} bytes" if limit else "") + ").")
