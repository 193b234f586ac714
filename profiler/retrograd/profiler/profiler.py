"""profile, record_function and schedule: torch.profiler's front end.

The state machine of ``profile`` (schedule actions and what each transition
does) is torch's (torch/profiler/profiler.py): WARMUP prepares, RECORD
records, RECORD_AND_SAVE ends a cycle and calls ``on_trace_ready``. Recording
itself is _collector's; this module must never touch core.
"""
from __future__ import annotations

import enum
import threading
import warnings
from typing import Any, Callable, Iterable

from retrograd.profiler import _collector
from retrograd.profiler._events import EventList, build_events


class ProfilerActivity(enum.Enum):
    """What to record (torch.profiler.ProfilerActivity). retrograd records
    CPU-side events only: with CUDA, CuPy ops appear as their CPU-side op
    events, and no device kernels are traced."""
    CPU = 0
    CUDA = 1


def supported_activities() -> set:
    """The activities this build can record (torch.profiler.supported_activities)."""
    acts = {ProfilerActivity.CPU}
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            acts.add(ProfilerActivity.CUDA)
    except Exception:       # no CuPy, or no usable GPU
        pass
    return acts


class ProfilerAction(enum.Enum):
    """What the profiler does during a step (torch.profiler.ProfilerAction)."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class _ScheduleArgumentError(ValueError, AssertionError):
    """Bad schedule() arguments: a ValueError, and an AssertionError as torch raises."""


def schedule(wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """The action for each step: skip ``skip_first`` steps, then cycles of
    ``wait`` idle, ``warmup`` warming up and ``active`` recording steps (the
    last one RECORD_AND_SAVE), ``repeat`` times (0: until the profile ends).
    As torch.profiler.schedule, whose arguments are keyword-only (here they
    may also be positional)."""
    for name, value in (("wait", wait), ("warmup", warmup), ("active", active),
                        ("repeat", repeat), ("skip_first", skip_first),
                        ("skip_first_wait", skip_first_wait)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"schedule(): {name} must be an int, got {type(value).__name__}")
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise _ScheduleArgumentError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


class record_function:
    """A named range in the profile, as a context manager or a decorator
    (torch.profiler.record_function). Ranges nest; an op inside one counts
    towards its total time, not its self time. A range is recorded when the
    profile that records at its start still records at its end."""

    def __init__(self, name: str, args: str | None = None):
        if not isinstance(name, str):
            raise TypeError(f"record_function(name): name must be a str, got {type(name).__name__}")
        if args is not None and not isinstance(args, str):
            raise TypeError(f"record_function(args): args must be a str or None, got {type(args).__name__}")
        self.name = name
        self.args = args
        # One instance may be entered again before it exits (a decorated
        # recursive function, or several threads): one stack per thread.
        self._local = threading.local()

    def __enter__(self):
        session = _collector.session()
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        stack.append((session, _collector.clock_ns() if session else 0))
        return self

    def __exit__(self, *exc):
        stack = getattr(self._local, "stack", None)
        if not stack:
            raise RuntimeError(f"record_function({self.name!r}): __exit__ without a matching __enter__")
        session, start = stack.pop()
        if session:
            _collector.record_user_event(session, self.name, start, _collector.clock_ns(), self.args)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[["profile"], None]:
    """An on_trace_ready that writes each cycle's trace into ``dir_name`` as
    ``<worker>.<time_ns>.pt.trace.json[.gz]`` (torch.profiler.tensorboard_trace_handler;
    the files open in TensorBoard's profiler plugin, Perfetto or chrome://tracing)."""
    import os
    import socket
    import time

    if not isinstance(dir_name, (str, os.PathLike)):
        raise TypeError(f"tensorboard_trace_handler(dir_name): expected a path, got {type(dir_name).__name__}")

    def handler(prof: "profile") -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        # nanoseconds, as torch: two cycles never share a name
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(os.fspath(dir_name), name))
    return handler


def _thread_names() -> dict:
    # native id -> Python thread name (engine workers are Python threads)
    return {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}


class profile:
    """Record ops, record_function ranges and backward nodes
    (torch.profiler.profile). Use as a context manager, or call start() and
    stop(); with a ``schedule``, call step() at the end of each step.

    ``record_shapes``: each event's input shapes and types. ``profile_memory``:
    the bytes each op's outputs allocate (and export_memory_timeline).
    ``with_stack``: the Python stack of each op. ``on_trace_ready(prof)`` is
    called at the end of each recorded cycle (and at stop())."""

    def __init__(self, activities: Iterable[ProfilerActivity] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[["profile"], Any] | None = None):
        explicit = activities is not None
        activities = set(activities) if activities is not None else supported_activities()
        for a in activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile(activities=...): expected ProfilerActivity values, got {a!r}")
        if explicit and ProfilerActivity.CUDA in activities:
            warnings.warn("retrograd's profiler records CPU-side events only: CuPy ops appear as op "
                          "events, device kernels are not traced", stacklevel=2)
        for name, value in (("record_shapes", record_shapes), ("profile_memory", profile_memory),
                            ("with_stack", with_stack)):
            if not isinstance(value, bool):
                raise TypeError(f"profile({name}=...): expected a bool, got {type(value).__name__}")
        if schedule is not None and not callable(schedule):
            raise TypeError("profile(schedule=...): expected a callable step -> ProfilerAction "
                            "(see retrograd.profiler.schedule)")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("profile(on_trace_ready=...): expected a callable taking the profiler")
        self.activities = activities
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.on_trace_ready = on_trace_ready
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _default_schedule
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._step_rec_fn: record_function | None = None
        self._running = False           # between start() and stop()
        self._recording = False         # the collector records for this profile
        self._results: _Results | None = None     # of the last finished cycle
        N, W, R, S = (ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
                      ProfilerAction.RECORD_AND_SAVE)
        # (previous action, current action) -> what to do; None: the profile
        # stops. torch's map, less its prepare_trace: torch warms its tracer up
        # during WARMUP steps, ours needs no warm-up, so a WARMUP step costs
        # what a NONE step does.
        warn = warnings.warn
        self._action_map = {
            (N, N): [], (N, W): [],
            (N, R): [self._start_trace],
            (N, S): [self._start_trace],
            (W, N): [lambda: warn("Incorrect schedule: WARMUP followed by NONE"),
                     self._start_trace, self._stop_trace],
            (W, W): [], (W, R): [self._start_trace], (W, S): [self._start_trace],
            (R, N): [lambda: warn("Incorrect schedule: RECORD followed by NONE"), self._stop_trace],
            (R, W): [lambda: warn("Incorrect schedule: RECORD followed by WARMUP"), self._stop_trace],
            (R, R): [], (R, S): [],
            (S, N): [self._stop_trace, self._trace_ready],
            (S, W): [self._stop_trace, self._trace_ready],
            (S, R): [self._stop_trace, self._trace_ready, self._start_trace],
            (S, S): [self._stop_trace, self._trace_ready, self._start_trace],
            (W, None): [self._start_trace, self._stop_trace],
            (R, None): [self._stop_trace, self._trace_ready],
            (S, None): [self._stop_trace, self._trace_ready],
        }

    # -- the cycle ----------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self) -> None:
        if self._running:
            raise RuntimeError("profile.start(): this profile is already running; stop() it first")
        self._transit(ProfilerAction.NONE, self.current_action)
        self._running = True
        if self.record_steps:
            self._step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec_fn.__enter__()

    def stop(self) -> None:
        if not self._running:
            raise RuntimeError("profile.stop(): this profile is not running (start() it, or use "
                               "`with profile(...)`)")
        self._running = False
        if self._step_rec_fn is not None:
            self._step_rec_fn.__exit__(None, None, None)
            self._step_rec_fn = None
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Signal that the next step starts (with a schedule)."""
        if not self._running:
            raise RuntimeError("profile.step(): this profile is not running (start() it, or use "
                               "`with profile(...)`)")
        if self._step_rec_fn is not None:
            self._step_rec_fn.__exit__(None, None, None)
            self._step_rec_fn = None
        prev_action = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if not isinstance(self.current_action, ProfilerAction):
            raise TypeError(f"the profiler schedule returned {self.current_action!r} for step "
                            f"{self.step_num}, expected a ProfilerAction")
        self._transit(prev_action, self.current_action)
        if self.record_steps:
            self._step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec_fn.__enter__()

    def _transit(self, prev, current) -> None:
        for action in self._action_map.get((prev, current), ()):
            action()

    def _start_trace(self) -> None:
        record = ProfilerActivity.CPU in self.activities or ProfilerActivity.CUDA in self.activities
        self._start_ns = _collector.clock_ns()
        if record:
            _collector.start(self.record_shapes, self.with_stack, self.profile_memory)
        self._recording = record

    def _stop_trace(self) -> None:
        events, allocations = _collector.stop() if self._recording else ([], [])
        self._recording = False
        self._results = _Results(self, events, allocations, self._start_ns, _collector.clock_ns(),
                                 _thread_names())

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- results ------------------------------------------------------------
    def _finished(self) -> "_Results":
        if self._results is None:
            raise RuntimeError("the profiler has no results yet: they exist once a recording cycle "
                               "has ended (leave the `with profile()` block, call stop(), or step() "
                               "past the schedule's active steps)")
        return self._results

    def events(self) -> EventList:
        """Every recorded event (FunctionEvent), in start order."""
        return self._finished().events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        """Events averaged by name (and input shapes, and top stack frames).
        As torch, grouping by what was not recorded (record_shapes, with_stack
        off) groups by empty shapes or stacks."""
        if not isinstance(group_by_stack_n, int) or group_by_stack_n < 0:
            raise ValueError(f"key_averages(group_by_stack_n={group_by_stack_n!r}): expected an int >= 0")
        return self._finished().events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Write the trace (Trace Event Format JSON) for Perfetto / chrome://tracing;
        a path ending in .gz is gzipped."""
        from retrograd.profiler import _trace
        _trace.export_chrome_trace(self._finished(), path)

    def export_memory_timeline(self, path: str) -> tuple:
        """Write the bytes held by saved tensors, gradients and other arrays over
        time as CSV to ``path`` and, when matplotlib is installed, a PNG plot
        beside it (same name, .png). Needs profile_memory=True. Returns the
        paths written. New, absent from torch (whose export_memory_timeline
        writes HTML or JSON)."""
        if not self.profile_memory:
            raise RuntimeError("export_memory_timeline() needs allocation records: "
                               "profile with profile_memory=True")
        from retrograd.profiler import _memory
        return _memory.export_memory_timeline(self._finished(), path)


class _Results:
    """One finished recording cycle: the events and what the exports need."""

    def __init__(self, prof, raw_events, allocations, start_ns, end_ns, thread_names):
        self.record_shapes = prof.record_shapes
        self.profile_memory = prof.profile_memory
        self.with_stack = prof.with_stack
        self.raw_events = raw_events
        self.allocations = allocations
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.thread_names = thread_names
        self._events = None

    @property
    def events(self) -> EventList:
        # Built on first use, as torch parses its results lazily: a cycle
        # nobody looks at costs only its recording.
        if self._events is None:
            self._events = build_events(self.raw_events, self.profile_memory)
        return self._events
