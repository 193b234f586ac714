"""export_chrome_trace: the Trace Event Format JSON that Perfetto and
chrome://tracing open, in torch's layout (what torch 2.x's Kineto writes for
CPU events), so tools that read torch traces read ours:

- "M" metadata events: process_name, process_labels, process_sort_index,
  and per thread thread_name ("thread <tid> (<name>)") and thread_sort_index;
- one "X" (complete) event per recorded range, timestamps and durations in
  microseconds, cat "cpu_op" (ops and backward nodes) or "user_annotation"
  (record_function), args as torch writes them ("External id", "Sequence
  number", "Fwd thread id", "Record function id", "Input Dims", "Input type",
  "Ev Idx");
- flow events (cat and name "fwdbwd"): "s" at a forward op, "f" (binding
  point "e") at the backward node it created, matched by sequence number;
- "[memory]" instant events ("i") for each allocation and free when
  profile_memory was on.

Must never write anything that depends on the collector's live state.
"""
from __future__ import annotations

import gzip
import json
import os
import socket
import time

from retrograd.profiler._collector import KIND_BACKWARD, KIND_OP, KIND_USER


def _us(ns: int) -> float:
    return round(ns / 1000.0, 3)


def fwd_bwd_links(events) -> list:
    """(forward op, backward node) pairs linked by sequence number.

    Several forward ops may carry one number: an op that created no node
    passes the thread's next number on, and ops nested in a custom
    Function's forward see it too. The op that created the node is the last
    outermost one with that number before the backward ran."""
    forward: dict = {}
    for e in events:        # in start order
        if e.kind != KIND_OP or e.sequence_nr < 0:
            continue
        p = e.cpu_parent
        nested = False
        while p is not None:
            if p.kind == KIND_OP and p.sequence_nr == e.sequence_nr:
                nested = True
                break
            p = p.cpu_parent
        if not nested:
            forward.setdefault(e.sequence_nr, []).append(e)
    links = []
    for e in events:
        if e.kind != KIND_BACKWARD or e.sequence_nr < 0:
            continue
        best = None
        for f in forward.get(e.sequence_nr, ()):
            if f.time_range.start <= e.time_range.start:
                best = f
        if best is not None:
            links.append((best, e))
    return links


def build_trace(results, path: str | None = None) -> dict:
    pid = os.getpid()
    events = results.events
    trace = []
    start_us = _us(results.start_ns)
    trace.append({"ph": "M", "name": "process_name", "ts": start_us, "pid": pid, "tid": 0,
                  "args": {"name": "python"}})
    trace.append({"ph": "M", "name": "process_labels", "ts": start_us, "pid": pid, "tid": 0,
                  "args": {"labels": "CPU"}})
    trace.append({"ph": "M", "name": "process_sort_index", "ts": start_us, "pid": pid, "tid": 0,
                  "args": {"sort_index": pid}})
    threads = sorted({e.thread for e in events})
    for tid in threads:
        tname = results.thread_names.get(tid, "python")
        trace.append({"ph": "M", "name": "thread_name", "ts": start_us, "pid": pid, "tid": tid,
                      "args": {"name": f"thread {tid} ({tname})"}})
        trace.append({"ph": "M", "name": "thread_sort_index", "ts": start_us, "pid": pid, "tid": tid,
                      "args": {"sort_index": tid}})
    for idx, e in enumerate(events):
        args = {"External id": e.id + 1}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
            args["Fwd thread id"] = e.fwd_thread
        args["Record function id"] = 0
        if results.record_shapes and e.kind != KIND_USER and e.input_types:
            args["Input type"] = list(e.input_types)
            args["Input Dims"] = list(e.input_shapes)
        if e.user_args is not None:
            args["Record function args"] = e.user_args
        if results.with_stack and e.stack:
            args["Call stack"] = ";".join(e.stack)
        args["Ev Idx"] = idx
        raw_start = e.time_range.start
        trace.append({"ph": "X", "cat": "user_annotation" if e.kind == KIND_USER else "cpu_op",
                      "name": e.trace_name, "pid": pid, "tid": e.thread,
                      "ts": round(raw_start, 3), "dur": round(e.cpu_time_total, 3), "args": args})
    for flow_id, (fwd, bwd) in enumerate(fwd_bwd_links(events), start=1):
        trace.append({"ph": "s", "id": flow_id, "pid": pid, "tid": fwd.thread,
                      "ts": round(fwd.time_range.start, 3), "cat": "fwdbwd", "name": "fwdbwd"})
        trace.append({"ph": "f", "id": flow_id, "pid": pid, "tid": bwd.thread,
                      "ts": round(bwd.time_range.start, 3), "cat": "fwdbwd", "name": "fwdbwd",
                      "bp": "e"})
    if results.profile_memory:
        changes = []
        for a in results.allocations:
            changes.append((a[0], a[2]))
            if a[1] < results.end_ns:
                changes.append((a[1], -a[2]))
        changes.sort(key=lambda c: c[0])
        total = 0
        main_tid = threads[0] if threads else 0
        for idx, (t, nbytes) in enumerate(changes, start=len(events)):
            total += nbytes
            trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                          "pid": pid, "tid": main_tid, "ts": _us(t),
                          "args": {"Total Reserved": 0, "Total Allocated": total, "Bytes": nbytes,
                                   "Device Id": -1, "Device Type": 0, "Ev Idx": idx}})
    return {
        "schemaVersion": 1,
        "deviceProperties": [],
        "record_shapes": int(results.record_shapes),
        "profile_memory": int(results.profile_memory),
        "with_stack": int(results.with_stack),
        "host_name": socket.gethostname(),
        "displayTimeUnit": "ms",
        # ts + baseTimeNanoseconds / 1000 is the Unix time, as in torch's traces
        "baseTimeNanoseconds": time.time_ns() - time.monotonic_ns(),
        "traceEvents": trace,
        "traceName": path if path is not None else "",
    }


def export_chrome_trace(results, path) -> None:
    path = os.fspath(path)
    data = build_trace(results, path)
    if path.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(data, f)
    else:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
