"""Events as torch shows them: FunctionEvent, FunctionEventAvg, EventList
and its table (torch/autograd/profiler_util.py's layout).

Times are microseconds (floats), as torch's. Self time is an event's total
minus its children's totals; children are found per thread by interval
nesting (an event is the child of the innermost event that encloses it).
Must never reach into the collector's state: it works on the RawEvents a
finished cycle hands over.
"""
from __future__ import annotations

from collections import defaultdict

from retrograd.profiler._collector import KIND_BACKWARD, KIND_EVALUATE, KIND_USER


class Interval:
    """An event's [start, end] in microseconds (torch's time_range)."""
    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float):
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start}, end={self.end})"


class _NoDeviceFields:
    """torch's event fields that retrograd has nothing to put in (CPU only,
    local, synchronous, no FLOP counts), shared by events and their averages."""

    device_type = "CPU"
    is_async = False
    is_remote = False
    is_legacy = False
    node_id = -1
    overload_name = ""
    flops = 0
    device_time_total = 0.0
    self_device_time_total = 0.0
    device_memory_usage = 0
    self_device_memory_usage = 0
    use_device = None
    # torch names the device columns after CUDA in older releases
    cuda_time_total = device_time_total
    self_cuda_time_total = self_device_time_total


class FunctionEvent(_NoDeviceFields):
    """One recorded range: an op, a record_function range or a backward node.

    As torch's ``FunctionEvent``; the profiler makes them (``profile.events()``),
    users read them. Its fields: ``name`` (``ProfilerStep*`` for every step
    range, whose own name is ``trace_name``), ``key``, ``thread``,
    ``time_range`` (start and end in microseconds), ``input_shapes`` and
    ``input_types`` (with ``record_shapes``), ``stack`` (with
    ``with_stack``), ``sequence_nr``, ``cpu_parent`` and ``cpu_children``
    (by interval nesting on one thread), ``cpu_memory_usage`` (bytes
    allocated by it and its children, with ``profile_memory``), ``count``
    (1), and torch's device fields, which are empty (CPU only).

    Parameters
    ----------
    id : int
        Its index in the cycle's events, in start order.
    raw : object
        The collector's record of the range.
    start_us, end_us : float
        Its start and end on the profiler's clock, in microseconds.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.profiler import profile, record_function
    >>> x = rg.ones(3)
    >>> with profile(record_shapes=True, profile_memory=True) as prof:
    ...     with record_function("block"):
    ...         y = x.exp().sum()
    >>> block = prof.events()[0]
    >>> block.name, [c.name for c in block.cpu_children]
    ('block', ['aten::exp', 'aten::sum'])
    >>> exp = block.cpu_children[0]
    >>> exp.input_shapes, exp.cpu_memory_usage, exp.cpu_parent.name
    ([[3]], 12, 'block')
    >>> block.cpu_time_total >= block.self_cpu_time_total >= 0
    True
    """

    def __init__(self, id: int, raw, start_us: float, end_us: float):
        self.id = id
        # As torch: the step ranges group as one row ("ProfilerStep*"); the
        # trace keeps each step's own name (trace_name).
        self.trace_name = raw.name
        self.name = "ProfilerStep*" if raw.name.startswith("ProfilerStep#") else raw.name
        self.key = self.name
        self.thread = raw.tid
        self.fwd_thread = raw.fwd_tid if raw.fwd_tid >= 0 else 0
        self.time_range = Interval(start_us, end_us)
        self.start_ns = raw.start_ns              # the profiler's clock (CLOCK_MONOTONIC)
        self.end_ns = raw.end_ns
        self.sequence_nr = raw.sequence_nr
        self.input_shapes = raw.input_shapes if raw.input_shapes is not None else []
        self.input_types = raw.input_types if raw.input_types is not None else []
        self.stack = raw.stack if raw.stack is not None else []
        # torch's scope: 1 for the backward functions the engine runs
        self.scope = 1 if raw.kind == KIND_BACKWARD else 0
        self.kind = raw.kind
        self.is_user_annotation = raw.kind == KIND_USER
        self.user_args = raw.user_args            # record_function(name, args)
        self.own_memory = raw.nbytes          # what this event's own outputs allocated
        self.cpu_memory_usage = raw.nbytes    # inclusive of children (set by build_events)
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1

    @property
    def is_backward(self) -> bool:
        """True for the engine's node events (evaluate_function and apply)."""
        return self.kind in (KIND_EVALUATE, KIND_BACKWARD)

    @property
    def cpu_time_total(self) -> float:
        """Its duration in microseconds, children included."""
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        """Its duration in microseconds less its children's (time spent in itself)."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        """Its average duration per call in microseconds (one call: ``cpu_time_total``)."""
        return self.cpu_time_total

    @property
    def self_cpu_memory_usage(self) -> int:
        """Bytes its own outputs allocated, its children's excluded (with ``profile_memory``)."""
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"sequence_nr={self.sequence_nr} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_NoDeviceFields):
    """Events of one key, summed (torch's ``FunctionEventAvg``).

    What ``key_averages()`` gives, one per group: ``key`` (the name),
    ``count`` (calls), ``cpu_time_total``, ``self_cpu_time_total``,
    ``cpu_memory_usage`` and ``self_cpu_memory_usage`` summed over the
    calls, ``cpu_time`` the average per call, and ``input_shapes`` /
    ``stack`` when grouped by them. A new one is empty; ``add`` sums events
    into it.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.profiler import profile
    >>> x = rg.ones(2)
    >>> with profile() as prof:
    ...     for _ in range(3):
    ...         y = x.exp()
    >>> (avg,) = prof.key_averages()
    >>> avg.key, avg.count
    ('aten::exp', 3)
    >>> abs(avg.cpu_time * 3 - avg.cpu_time_total) < 1e-6
    True
    """

    cpu_parent = None

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.scope = None
        self.is_user_annotation = False

    def add(self, other) -> "FunctionEventAvg":
        """Add an event (or an average) of the same key into this average.

        Counts, times and memory are summed; the first event added sets the
        key. ``avg += event`` does the same.

        Parameters
        ----------
        other : FunctionEvent or FunctionEventAvg
            What to add; its ``key`` must be this average's.

        Returns
        -------
        FunctionEventAvg
            This average.

        Raises
        ------
        ValueError
            When ``other`` has another key.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile, FunctionEventAvg
        >>> x = rg.ones(2)
        >>> with profile() as prof:
        ...     y = x.exp().exp()
        >>> avg = FunctionEventAvg()
        >>> for event in prof.events():
        ...     _ = avg.add(event)
        >>> avg.key, avg.count
        ('aten::exp', 2)
        """
        if self.key is None:
            self.key = other.key
            self.scope = other.scope
            self.is_user_annotation = other.is_user_annotation
        elif other.key != self.key:
            raise ValueError(f"FunctionEventAvg.add: cannot add {other.key!r} to the average of {self.key!r}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    __iadd__ = add

    @property
    def name(self) -> str:
        """The key it averages (the events' name)."""
        return self.key

    @property
    def cpu_time(self) -> float:
        """The average duration per call in microseconds (0 when empty)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time:.3f}us count={self.count} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events (or averages) with torch's table and averaging.

    What ``profile.events()`` and ``key_averages()`` return (torch's
    ``EventList``): a ``list`` subclass, so it indexes, slices and iterates
    as one; ``str()`` gives its ``table()``.

    Parameters
    ----------
    items : iterable, optional
        The events (FunctionEvent or FunctionEventAvg).
    profile_memory : bool, optional
        Show the memory columns in the table (they also show when any event
        allocated memory). Default False.

    Examples
    --------
    >>> import retrograd as rg
    >>> from retrograd.profiler import profile, EventList
    >>> with profile() as prof:
    ...     y = rg.ones(2).exp().sum()
    >>> events = prof.events()
    >>> isinstance(events, list), [e.name for e in events]
    (True, ['aten::ones', 'aten::exp', 'aten::sum'])
    >>> [e.name for e in EventList(e for e in events if e.name == "aten::sum")]
    ['aten::sum']
    """

    def __init__(self, items=(), profile_memory: bool = False):
        super().__init__(items)
        self.profile_memory = profile_memory     # the table shows the memory columns

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of the events' self times in microseconds (the table's last line)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> "EventList":
        """Group the events by key (and input shapes, and top stack frames), summed.

        What ``profile.key_averages`` returns; user ranges and ops of the same
        name are kept apart. Groups come in the order of their first event.

        Parameters
        ----------
        group_by_input_shape : bool, optional
            Separate events with different input shapes. Default False.
        group_by_stack_n : int, optional
            Separate events by their top ``n`` stack frames (0: not).

        Returns
        -------
        EventList
            One FunctionEventAvg per group.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile
        >>> x = rg.ones(2)
        >>> with profile() as prof:
        ...     y = x.exp().exp().sum()
        >>> [(a.key, a.count) for a in prof.events().key_averages()]
        [('aten::exp', 2), ('aten::sum', 1)]
        """
        stats: dict = defaultdict(FunctionEventAvg)
        for e in self:
            key = [e.key, str(e.is_user_annotation)]
            if group_by_input_shape:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key += e.stack[:group_by_stack_n]
            avg = stats[tuple(key)]
            avg.add(e)
            if group_by_input_shape:
                avg.input_shapes = e.input_shapes
            if group_by_stack_n > 0:
                avg.stack = e.stack[:group_by_stack_n]
        return EventList(stats.values(), self.profile_memory)

    def total_average(self) -> FunctionEventAvg:
        """Sum every event into one average, keyed ``"Total"``.

        Returns
        -------
        FunctionEventAvg
            The counts, times and memory of all events together.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile
        >>> x = rg.ones(2)
        >>> with profile() as prof:
        ...     y = x.exp().exp().sum()
        >>> total = prof.events().total_average()
        >>> total.key, total.count
        ('Total', 3)
        """
        total = FunctionEventAvg()
        for e in self:
            total.count += e.count
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
            total.cpu_memory_usage += e.cpu_memory_usage
            total.self_cpu_memory_usage += e.self_cpu_memory_usage
        total.key = "Total"
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80,
              header: str | None = None, top_level_events_only: bool = False,
              time_unit: str | None = None) -> str:
        """Format the events as torch's table.

        One row per event: name, self and total CPU time with their shares of
        the total self time, average time, memory (when any was recorded),
        calls, input shapes (when grouped by them) and source locations
        (when grouped by stack), and the total self time below. Call it on
        ``key_averages()`` for one row per op. The columns are torch's CPU
        columns (no device columns).

        Parameters
        ----------
        sort_by : str, optional
            The attribute to sort by, largest first: ``"cpu_time"``,
            ``"cpu_time_total"``, ``"self_cpu_time_total"``, ``"count"``,
            ``"cpu_memory_usage"``, ``"self_cpu_memory_usage"`` (torch's
            device keys are accepted, and are zero). Default: as listed.
        row_limit : int, optional
            At most this many rows. Default 100.
        max_src_column_width : int, optional
            Width of the source-location column. Default 75.
        max_name_column_width : int, optional
            Width of the name column; longer names are cut with ``...``.
            Default 55.
        max_shapes_column_width : int, optional
            Width of the input-shapes column. Default 80.
        header : str, optional
            A title line above the table.
        top_level_events_only : bool, optional
            Only events without a parent. Default False.
        time_unit : {"s", "ms", "us"}, optional
            One unit for every time; None (the default) picks one per value.

        Returns
        -------
        str
            The table ("" for an empty list).

        Raises
        ------
        ValueError
            For an unknown ``sort_by`` or ``time_unit``.

        Examples
        --------
        >>> import retrograd as rg
        >>> from retrograd.profiler import profile
        >>> x = rg.ones(2)
        >>> with profile() as prof:
        ...     y = x.exp().exp().sum()
        >>> table = prof.key_averages().table(sort_by="count", time_unit="us")
        >>> print(table)  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
        ---...
        Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls
        ---...
        aten::exp ...us ... 2
        aten::sum ...us ... 1
        ---...
        Self CPU time total: ...
        """
        return _build_table(self, self.profile_memory, sort_by, row_limit, max_src_column_width,
                            max_name_column_width, max_shapes_column_width, header,
                            top_level_events_only, time_unit)

    def __str__(self):
        return self.table()


def build_events(raw_events, profile_memory: bool, frees=()) -> EventList:
    """FunctionEvents from a cycle's RawEvents: sorted by start, linked to
    their parents and children per thread, memory summed up the tree.

    ``frees``: (time_ns, thread, nbytes) of the arrays freed while the
    profile recorded; each is charged, negative, to the innermost event open
    on its thread at that time (torch's memory events)."""
    raws = sorted((r for r in raw_events if r.end_ns >= r.start_ns), key=lambda r: (r.start_ns, -r.end_ns))
    events = EventList((FunctionEvent(i, r, r.start_ns / 1000.0, r.end_ns / 1000.0)
                        for i, r in enumerate(raws)), profile_memory)
    open_by_thread: dict = defaultdict(list)
    pending = sorted(frees)
    k = 0
    for e in events:
        # (the frees before this event starts, with the stacks as they are then)
        while k < len(pending) and pending[k][0] < e.start_ns:
            _charge_free(open_by_thread, pending[k])
            k += 1
        stack = open_by_thread[e.thread]
        while stack and stack[-1].time_range.end < e.time_range.start:
            stack.pop()
        # A range that does not fit inside the innermost open one (a
        # record_function left across an op's end) has no parent there.
        while stack and stack[-1].time_range.end < e.time_range.end:
            stack.pop()
        if stack:
            e.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(e)
        stack.append(e)
    for free in pending[k:]:
        _charge_free(open_by_thread, free)
    if profile_memory:
        for e in reversed(events):       # children start later: totals flow upward
            if e.cpu_parent is not None:
                e.cpu_parent.cpu_memory_usage += e.cpu_memory_usage
    return events


def _charge_free(open_by_thread, free) -> None:
    time_ns, thread, nbytes = free
    stack = open_by_thread.get(thread)
    while stack and stack[-1].end_ns < time_ns:
        stack.pop()
    if stack:
        stack[-1].own_memory -= nbytes
        stack[-1].cpu_memory_usage -= nbytes


# -- the table (torch's _build_table, CPU columns) ---------------------------

def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_unit(time_us: float, unit: str | None) -> str:
    if unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return _format_time(time_us)


def _format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    KB = 1024
    MB = 1024 * KB
    GB = 1024 * MB
    if abs(nbytes) >= GB:
        return f"{nbytes * 1.0 / GB:.2f} GB"
    if abs(nbytes) >= MB:
        return f"{nbytes * 1.0 / MB:.2f} MB"
    if abs(nbytes) >= KB:
        return f"{nbytes * 1.0 / KB:.2f} KB"
    return f"{nbytes} B"


_SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "count", "cpu_memory_usage",
              "self_cpu_memory_usage", "device_time", "device_time_total", "self_device_time_total",
              "cuda_time", "cuda_time_total", "self_cuda_time_total", "device_memory_usage",
              "self_device_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage")


def _build_table(events, profile_memory, sort_by, row_limit, max_src_column_width, max_name_column_width,
                 max_shapes_column_width, header, top_level_events_only, time_unit) -> str:
    if len(events) == 0:
        return ""
    if sort_by is not None:
        if sort_by not in _SORT_KEYS:
            raise ValueError(f"table(sort_by={sort_by!r}): expected one of {', '.join(_SORT_KEYS)}")
        attr = sort_by.replace("cuda", "device")
        if attr == "device_time":
            attr = "device_time_total"
        events = sorted(events, key=lambda e: getattr(e, attr, 0), reverse=True)
    if time_unit not in (None, "s", "ms", "us"):
        raise ValueError(f"table(time_unit={time_unit!r}): expected 's', 'ms', 'us' or None")
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    has_memory = profile_memory or any(e.cpu_memory_usage != 0 for e in events)
    stacks = [e.stack for e in events if e.stack]
    has_stack = bool(stacks)

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    src_width = 0
    if has_stack:
        src_width = max(max(len(s) for s in st) for st in stacks) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    if has_stack:
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")
    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    total_self = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        row = [name,
               _format_time_share(e.self_cpu_time_total, total_self),
               _format_time_unit(e.self_cpu_time_total, time_unit),
               _format_time_share(e.cpu_time_total, total_self),
               _format_time_unit(e.cpu_time_total, time_unit),
               _format_time_unit(e.cpu_time, time_unit)]
        if has_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_input_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if has_stack:
            src = e.stack[0] if e.stack else ""
            if len(src) > src_width:
                src = "..." + src[len(src) - src_width + 3:]
            row.append(src)
        out.append(row_format.format(*row))
        if has_stack and e.stack:
            for entry in e.stack[1:]:
                if len(entry) > src_width:
                    entry = "..." + entry[len(entry) - src_width + 3:]
                blank = [""] * (len(row) - 1)
                out.append(row_format.format(*blank, entry))
    out.append(sep)
    out.append(f"Self CPU time total: {_format_time(total_self)}")
    return "\n".join(out) + "\n"
