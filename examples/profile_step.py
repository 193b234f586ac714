"""Profiling training steps: which ops take the time, and a timeline.

``retrograd.profiler.profile`` is torch.profiler's API. Here a schedule skips
one step (wait), warms up on one, then records two; ``record_function``
labels the phases of each step. We print the ops that took the most time
(``key_averages().table``) and write a trace that Perfetto
(ui.perfetto.dev) or chrome://tracing opens: a timeline of every op, the
forward ops inside the "forward" range, the backward nodes (MatmulBackward0,
...) inside "backward"; the optimizer updates arrays in place with NumPy,
outside the graph, so its work shows as the "optimizer.step" range alone.

Run: ``python examples/profile_step.py [trace.json]``.
"""
import os
import sys
import tempfile

import numpy as np

import retrograd as rg
from retrograd import nn
from retrograd.profiler import ProfilerActivity, profile, record_function, schedule


def main(trace_path=None, steps=4):
    rg.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))
    optimizer = rg.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    x = rg.randn(128, 256)
    y = rg.from_numpy(np.random.default_rng(0).integers(0, 10, 128))    # class labels

    if trace_path is None:
        trace_path = os.path.join(tempfile.mkdtemp(), "trace.json")
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=lambda prof: prof.export_chrome_trace(trace_path)) as prof:
        for _ in range(steps):
            optimizer.zero_grad()
            with record_function("forward"):
                loss = loss_fn(model(x), y)
            with record_function("backward"):
                loss.backward()
            with record_function("optimizer.step"):
                optimizer.step()
            prof.step()                   # tells the schedule that a step ended
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))
    print("trace written to", trace_path)
    return {"trace": trace_path, "events": prof.events()}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
