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
    """What to record (``torch.profiler.ProfilerActivity``).

    Pass a set of them as ``profile(activities=...)``. retrograd records
    CPU-side events only: with CUDA, CuPy ops appear as their CPU-side op
    events, and no device kernels are traced (``profile`` warns when CUDA is
    asked for). torch's XPU, MTIA and other activities do not exist here.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.profiler import ProfilerActivity, profile
    >>> [a.name for a in ProfilerActivity]
    ['CPU', 'CUDA']
    >>> with profile(activities=[ProfilerActivity.CPU]) as prof:
    ...     y = rg.ones(2).sum()
    >>> [e.name for e in prof.events()]
    ['aten::ones', 'aten::sum']
    """
    CPU = 0
    CUDA = 1


def supported_activities() -> set:
    """The activities this build can record (``torch.profiler.supported_activities``).

    Always ``ProfilerActivity.CPU``; ``ProfilerActivity.CUDA`` too when CuPy
    is installed and sees a GPU. It is the default of
    ``profile(activities=...)``.

    Returns
    -------
    set of ProfilerActivity
        The activities that can be recorded.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.profiler import ProfilerActivity, supported_activities
    >>> ProfilerActivity.CPU in supported_activities()
    True
    """
    acts = {ProfilerActivity.CPU}
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            acts.add(ProfilerActivity.CUDA)
    except Exception:       # no CuPy, or no usable GPU
        pass
    return acts


class ProfilerAction(enum.Enum):
    """What the profiler does during a step (``torch.profiler.ProfilerAction``).

    What a schedule returns for each step number: ``NONE`` (not
    profiling), ``WARMUP`` (about to record; retrograd's recorder needs no
    warm-up, so it costs what NONE does), ``RECORD`` (recording) and
    ``RECORD_AND_SAVE`` (recording the last step of a cycle, after which the
    results are ready and ``on_trace_ready`` runs).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.profiler import ProfilerAction, schedule
    >>> [a.name for a in ProfilerAction]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE']
    >>> schedule(wait=0, warmup=1, active=1)(1) is ProfilerAction.RECORD_AND_SAVE
    True
    """
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class _ScheduleArgumentError(ValueError, AssertionError):
    """Bad schedule() arguments: a ValueError, and an AssertionError as torch raises."""


def schedule(wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """Make a profiling schedule: which steps to skip, warm up on and record.

    Returns the function ``profile(schedule=...)`` calls with each step
    number (counted by ``profile.step()``). It skips the first
    ``skip_first`` steps, then runs cycles of ``wait`` idle steps,
    ``warmup`` warm-up steps and ``active`` recording steps (the last one
    RECORD_AND_SAVE, which ends the cycle and calls ``on_trace_ready``),
    ``repeat`` times (0: until the profile ends). As
    ``torch.profiler.schedule``, whose arguments are keyword-only (here they
    may also be positional). With ``warmup=0`` it warns, as torch does.

    Parameters
    ----------
    wait : int
        Idle steps at the start of each cycle (>= 0).
    warmup : int
        Warm-up steps after them (>= 0).
    active : int
        Recording steps (> 0).
    repeat : int, optional
        Number of cycles; 0 (the default) repeats until the profile ends.
    skip_first : int, optional
        Steps to skip before the first cycle. Default 0.
    skip_first_wait : int, optional
        Nonzero: the first cycle starts without its ``wait`` steps. Default 0.

    Returns
    -------
    callable
        ``schedule_fn(step: int) -> ProfilerAction`` (ValueError for a
        negative step).

    Raises
    ------
    TypeError
        When an argument is not an int.
    ValueError
        When ``wait``, ``warmup``, ``repeat`` or ``skip_first`` is negative, or
        ``active`` is not positive (also an AssertionError, which torch raises).

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.profiler import schedule
    >>> sched = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    >>> [sched(step).name for step in range(7)]
    ['NONE', 'NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE', 'NONE']
    """
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
    """Mark a named range of code in the profile (a context manager or a decorator).

    As ``torch.profiler.record_function``: the range appears as an event of
    its own, with the ops run inside it as its children, so the table shows
    how long the block took in all (CPU total) and outside its ops (Self
    CPU). Ranges nest. A range is recorded when the profile that records at
    its start still records at its end; outside a profile it records
    nothing and costs next to nothing.

    Parameters
    ----------
    name : str
        The event's name.
    args : str, optional
        Extra text stored with the event (shown in the trace's ``args``).

    Raises
    ------
    TypeError
        When ``name`` is not a str or ``args`` is neither a str nor None.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.profiler import profile, record_function
    >>> x = rg.ones(3, requires_grad=True)
    >>> @record_function("loss_fn")
    ... def loss_fn(x):
    ...     return (x * x).sum()
    >>> with profile() as prof:
    ...     with record_function("step"):
    ...         loss_fn(x).backward()
    >>> events = prof.events()
    >>> [e.name for e in events if e.cpu_parent is None][:1]
    ['step']
    >>> [e.name for e in events if e.cpu_parent is not None and e.cpu_parent.name == "loss_fn"]
    ['aten::mul', 'aten::sum']
    """

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
    """Make an ``on_trace_ready`` that writes each cycle's trace into a folder.

    As ``torch.profiler.tensorboard_trace_handler``: each finished cycle is
    written with ``export_chrome_trace`` to
    ``dir_name/<worker>.<time_ns>.pt.trace.json`` (``.gz`` added, and the
    file gzipped, with ``use_gzip``). The files open in TensorBoard's
    profiler plugin, Perfetto (ui.perfetto.dev) or chrome://tracing. The
    folder is created when the first trace is written.

    Parameters
    ----------
    dir_name : str or os.PathLike
        The folder to write into.
    worker_name : str, optional
        The files' prefix; default ``<hostname>_<pid>``.
    use_gzip : bool, optional
        Gzip the files. Default False.

    Returns
    -------
    callable
        ``handler(prof)``, to pass as ``profile(on_trace_ready=...)``.

    Raises
    ------
    TypeError
        When ``dir_name`` is not a path.

    Examples
    --------
    >>> import os, tempfile
    >>> import retrograd as rg
    >>> from retrograd.profiler import profile, schedule, tensorboard_trace_handler
    >>> logdir = tempfile.mkdtemp()
    >>> handler = tensorboard_trace_handler(logdir, worker_name="worker0")
    >>> with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
    ...              on_trace_ready=handler) as prof:
    ...     for _ in range(4):
    ...         y = rg.ones(2).exp().sum()
    ...         prof.step()
    >>> files = sorted(os.listdir(logdir))
    >>> len(files), files[0].startswith("worker0."), files[0].endswith(".pt.trace.json")
    (2, True, True)
    """
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
    """Record ops, ``record_function`` ranges and backward nodes (``torch.profiler.profile``).

    Use it as a context manager, or call ``start()`` and ``stop()``. Every op
    (named as torch names it, ``aten::matmul``), every range of
    :class:`record_function` and every node the engine runs in backward
    (``autograd::engine::evaluate_function: MulBackward0`` around the
    node's own ``MulBackward0``) becomes a :class:`FunctionEvent` with its
    start, end, thread and parent. Read them with ``events()``, summarise
    them with ``key_averages().table()``, or write a trace for Perfetto
    with ``export_chrome_trace``.

    With a ``schedule``, call ``step()`` at the end of each training step:
    only the steps the schedule marks are recorded, each recorded cycle is
    handed to ``on_trace_ready``, and each step gets a ``ProfilerStep#<n>``
    range. Without one, everything between start and stop is recorded.

    The arguments are keyword-only, in torch's order. Differences from
    torch: ``with_flops``, ``with_modules``, ``experimental_config``,
    ``execution_trace_observer``, ``acc_events`` and torch's other options
    do not exist; only CPU-side events are recorded; times come from the
    monotonic clock, in microseconds.

    Parameters
    ----------
    activities : iterable of ProfilerActivity, optional
        What to record; default :func:`supported_activities`. Asking for
        CUDA warns (device kernels are not traced).
    schedule : callable, optional
        ``schedule(step) -> ProfilerAction``, e.g. from :func:`schedule`.
        Default: record every step.
    on_trace_ready : callable, optional
        ``on_trace_ready(prof)``, called at the end of each recorded cycle
        (and at ``stop()``), e.g. :func:`tensorboard_trace_handler`.
    record_shapes : bool, optional
        Record each op's input shapes and types (``key_averages(
        group_by_input_shape=True)``). Default False.
    profile_memory : bool, optional
        Record the bytes each op's outputs allocate (the table's memory
        columns, and ``export_memory_timeline``). Default False.
    with_stack : bool, optional
        Record the Python stack of each op (``key_averages(
        group_by_stack_n=...)``). Default False.

    Raises
    ------
    TypeError
        For an activity that is not a ProfilerActivity, a flag that is not
        a bool, a ``schedule`` or ``on_trace_ready`` that is not callable,
        or an argument passed by position.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.profiler import profile, ProfilerActivity
    >>> x = rg.ones(3, 3, requires_grad=True)
    >>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    ...     loss = (x @ x).sum()
    ...     loss.backward()
    >>> [e.name for e in prof.events() if not e.is_backward]
    ['aten::matmul', 'aten::sum']
    >>> table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    >>> table.splitlines()[1].split()        # the header; print(table) shows the times
    ['Name', 'Self', 'CPU', '%', 'Self', 'CPU', 'CPU', 'total', '%', 'CPU', 'total', 'CPU', 'time', 'avg', '#', 'of', 'Calls']
    """

    # Keyword-only and in torch's order, as torch's: a positional call
    # (profile([CPU], True)) raises TypeError rather than silently setting
    # whichever flag sits in that position.
    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[["profile"], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False, with_stack: bool = False):
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
        """Start profiling (what entering the ``with`` block does).

        Begins the schedule's first step: with the default schedule,
        recording starts at once.

        Raises
        ------
        RuntimeError
            When this profile is already running.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile
        >>> x = rg.ones(2)
        >>> prof = profile()
        >>> prof.start()
        >>> y = x.exp()
        >>> prof.stop()
        >>> [e.name for e in prof.events()]
        ['aten::exp']
        """
        if self._running:
            raise RuntimeError("profile.start(): this profile is already running; stop() it first")
        self._transit(ProfilerAction.NONE, self.current_action)
        self._running = True
        if self.record_steps:
            self._step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec_fn.__enter__()

    def stop(self) -> None:
        """Stop profiling (what leaving the ``with`` block does).

        Ends the current step; if it was recording, the cycle's results
        become those of ``events()`` and ``key_averages()``, and
        ``on_trace_ready`` is called.

        Raises
        ------
        RuntimeError
            When this profile is not running.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile
        >>> prof = profile(on_trace_ready=lambda p: print("ready:", len(p.events()), "events"))
        >>> prof.start()
        >>> y = rg.ones(2).sum()
        >>> prof.stop()
        ready: 2 events
        """
        if not self._running:
            raise RuntimeError("profile.stop(): this profile is not running (start() it, or use "
                               "`with profile(...)`)")
        self._running = False
        if self._step_rec_fn is not None:
            self._step_rec_fn.__exit__(None, None, None)
            self._step_rec_fn = None
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Signal that a step ended and the next one starts (with a schedule).

        Asks the schedule for the next step's action, and starts, stops or
        hands over a recording cycle accordingly (torch's state machine).
        Call it once at the end of each training step.

        Raises
        ------
        RuntimeError
            When this profile is not running.
        TypeError
            When the schedule returns something other than a ProfilerAction.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile, schedule
        >>> def ready(prof):
        ...     steps = [e.trace_name for e in prof.events() if e.name == "ProfilerStep*"]
        ...     print("recorded", steps)
        >>> with profile(schedule=schedule(wait=1, warmup=1, active=2), on_trace_ready=ready) as prof:
        ...     for _ in range(5):
        ...         y = rg.ones(2).sum()
        ...         prof.step()
        recorded ['ProfilerStep#2', 'ProfilerStep#3']
        """
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
        events, allocations, frees = _collector.stop() if self._recording else ([], [], [])
        self._recording = False
        self._results = _Results(self, events, allocations, frees, self._start_ns, _collector.clock_ns(),
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
        """Every event of the last recorded cycle, in start order.

        Ops, ``record_function`` ranges, step ranges and backward nodes, each
        a :class:`FunctionEvent` linked to its parent and children.

        Returns
        -------
        EventList
            The events.

        Raises
        ------
        RuntimeError
            When no recording cycle has ended yet.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile
        >>> x = rg.ones(2, requires_grad=True)
        >>> with profile() as prof:
        ...     (x * 2).sum().backward()
        >>> [(e.name, e.is_backward) for e in prof.events()][:3]
        [('aten::mul', False), ('aten::sum', False), ('autograd::engine::evaluate_function: SumBackward0', True)]
        """
        return self._finished().events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        """Group the events by name (and input shapes, and top stack frames), summed.

        Each group is a :class:`FunctionEventAvg` with the number of calls
        and the total and self times and memory; ``.table()`` prints them as
        torch does. As torch, grouping by what was not recorded
        (``record_shapes``, ``with_stack`` off) groups by empty shapes or
        stacks. torch's ``group_by_overload_name`` does not exist (ops have
        no overloads here).

        Parameters
        ----------
        group_by_input_shape : bool, optional
            Separate calls with different input shapes. Default False.
        group_by_stack_n : int, optional
            Separate calls by their top ``n`` stack frames (0: not).

        Returns
        -------
        EventList
            One FunctionEventAvg per group.

        Raises
        ------
        ValueError
            When ``group_by_stack_n`` is not an int >= 0.
        RuntimeError
            When no recording cycle has ended yet.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile
        >>> xs = [rg.ones(n) for n in (2, 2, 3)]
        >>> with profile(record_shapes=True) as prof:
        ...     for x in xs:
        ...         y = x.exp()
        >>> [(a.key, a.count) for a in prof.key_averages()]
        [('aten::exp', 3)]
        >>> [(a.key, a.count, a.input_shapes) for a in prof.key_averages(group_by_input_shape=True)]
        [('aten::exp', 2, [[2]]), ('aten::exp', 1, [[3]])]
        """
        if not isinstance(group_by_stack_n, int) or group_by_stack_n < 0:
            raise ValueError(f"key_averages(group_by_stack_n={group_by_stack_n!r}): expected an int >= 0")
        return self._finished().events.key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Write the recorded events as a trace for Perfetto or chrome://tracing.

        The file is Trace Event Format JSON, as torch writes it: one
        complete event per recorded event, per thread, with its input
        shapes when recorded. Open it at ui.perfetto.dev. A path ending in
        ``.gz`` is gzipped.

        Parameters
        ----------
        path : str
            The file to write.

        Raises
        ------
        RuntimeError
            When no recording cycle has ended yet.

        Examples
        --------
        >>> import json, os, tempfile
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile
        >>> x = rg.ones(2)
        >>> with profile() as prof:
        ...     y = x.exp()
        >>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
        >>> prof.export_chrome_trace(path)
        >>> with open(path) as f:
        ...     trace = json.load(f)
        >>> [e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"]
        ['aten::exp']
        """
        from retrograd.profiler import _trace
        _trace.export_chrome_trace(self._finished(), path)

    def export_memory_timeline(self, path: str) -> tuple:
        """Write the memory held over time by saved tensors, gradients and other arrays.

        A CSV with columns ``time_ns, saved_tensors, gradients, other,
        total`` (bytes, one row per change) goes to ``path``; when
        matplotlib is installed, a PNG plot goes beside it (same name,
        ``.png``). Only arrays allocated by retrograd's ops while the profile
        recorded are seen. torch's ``export_memory_timeline`` has other
        categories and writes HTML or JSON; this one is retrograd's own.

        Parameters
        ----------
        path : str
            The CSV file to write.

        Returns
        -------
        tuple of str
            The paths written (the CSV, and the PNG when made).

        Raises
        ------
        RuntimeError
            Without ``profile_memory=True``, or when no recording cycle has
            ended yet.

        Examples
        --------
        >>> import os, tempfile
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile
        >>> x = rg.ones(3, 3, requires_grad=True)
        >>> with profile(profile_memory=True) as prof:
        ...     (x @ x).sum().backward()
        >>> path = os.path.join(tempfile.mkdtemp(), "memory.csv")
        >>> written = prof.export_memory_timeline(path)
        >>> written[0] == path
        True
        >>> with open(path) as f:
        ...     print(f.readline().strip())
        time_ns,saved_tensors,gradients,other,total
        """
        if not self.profile_memory:
            raise RuntimeError("export_memory_timeline() needs allocation records: "
                               "profile with profile_memory=True")
        from retrograd.profiler import _memory
        return _memory.export_memory_timeline(self._finished(), path)


class _Results:
    """One finished recording cycle: the events and what the exports need."""

    def __init__(self, prof, raw_events, allocations, frees, start_ns, end_ns, thread_names):
        self.record_shapes = prof.record_shapes
        self.profile_memory = prof.profile_memory
        self.with_stack = prof.with_stack
        self.raw_events = raw_events
        self.allocations = allocations
        self.frees = frees
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.thread_names = thread_names
        self._events = None

    @property
    def events(self) -> EventList:
        # Built on first use, as torch parses its results lazily: a cycle
        # nobody looks at costs only its recording.
        if self._events is None:
            self._events = build_events(self.raw_events, self.profile_memory, self.frees)
        return self._events
