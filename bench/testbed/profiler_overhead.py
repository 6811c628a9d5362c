#!/usr/bin/python3
"""The legacy torch profiler's own cost per recorded op, on this machine.

What it is for: `trainscope replay --profiler-overhead-us US` takes this cost
off every recorded CPU op of a trace to predict the unprofiled run (a
per-event overhead model). It is measured here apart from any run it is used
on: the testbed's models train alone (one process, no DDP, no link), blocks
of steps with and without torch.autograd.profiler (record_shapes off, as the
testbed records, or on with --record-shapes) in alternation, the first step
under the profiler untimed (it pays the profiler's start-up); the cost per event is the extra time of a
profiled step over an unprofiled one (medians over the blocks) divided by
the events a profiled step records. Prints one JSON object (per model and
pooled: the sum of the extra times over the sum of the events).
What it is not for: timing the models.

Run:  /usr/bin/python3 bench/testbed/profiler_overhead.py [--out FILE]   (~20 s)
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import MODELS  # noqa: E402


def step(model, opt, x, y):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()


def block(model, opt, x, y, n, prof, shapes=False):
    """Median step time (s) of n steps, under the profiler when prof; and the
    events one profiled step recorded."""
    times, events = [], 0
    if prof:
        with torch.autograd.profiler.profile(record_shapes=shapes) as p:
            step(model, opt, x, y)           # the profiler's first step pays its start-up: untimed
            for _ in range(n):
                t = time.perf_counter()
                step(model, opt, x, y)
                times.append(time.perf_counter() - t)
        events = len(p.function_events) / (n + 1)
    else:
        for _ in range(n):
            t = time.perf_counter()
            step(model, opt, x, y)
            times.append(time.perf_counter() - t)
    return statistics.median(times), events


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["mlp", "cnn", "transformer", "wide"], choices=list(MODELS))
    ap.add_argument("--blocks", type=int, default=6, help="profiled and unprofiled blocks per model, alternating")
    ap.add_argument("--steps", type=int, default=4, help="steps per block")
    ap.add_argument("--record-shapes", action="store_true", help="profile with record_shapes (as rank.py --record-shapes)")
    ap.add_argument("--out", help="also write the JSON here")
    a = ap.parse_args()
    torch.set_num_threads(1)
    res, extra, events = {}, 0.0, 0.0
    for name in a.models:
        build, make_x, batch = MODELS[name]
        torch.manual_seed(0)
        model = build()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        x, y = make_x(batch, torch.Generator().manual_seed(0)), torch.randint(0, 10, (batch,))
        block(model, opt, x, y, 2, False)
        plain, prof, ev = [], [], []
        for _ in range(a.blocks):
            plain.append(block(model, opt, x, y, a.steps, False)[0])
            t, e = block(model, opt, x, y, a.steps, True, a.record_shapes)
            prof.append(t)
            ev.append(e)
        d = statistics.median(prof) - statistics.median(plain)
        n = statistics.median(ev)
        res[name] = {"unprofiled_step_ms": round(statistics.median(plain) * 1e3, 3),
                     "profiled_step_ms": round(statistics.median(prof) * 1e3, 3), "events_per_step": n,
                     "us_per_event": round(d / n * 1e6, 3)}
        extra += d
        events += n
    doc = {"us_per_event": round(extra / events * 1e6, 3), "models": res, "torch_version": torch.__version__,
           "record_shapes": a.record_shapes,
           "method": "legacy torch.autograd.profiler, the profiler's first step untimed; (median profiled step - median "
                     "unprofiled step) / events per profiled step, pooled over the models"}
    text = json.dumps(doc, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
