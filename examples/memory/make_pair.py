#!/usr/bin/python3
"""make_pair.py - ground truth for `trainscope memory`: AOTAutograd forward and
backward dumps of small models plus the memory a real training step used.

For each model (a small CNN with batch norm, an MLP) at a fixed batch:
  1. functorch.compile.aot_module traces one training step; its forward and
     backward fx graphs are written as <model>/fx_graph_transformed_{forward,
     backward}.py in the annotated text format newer PyTorch prints (the same
     format as the G10 dumps), so the C reader sees real AOTAutograd graphs;
  2. the same compiled step runs again under the legacy autograd profiler with
     profile_memory=True; every CPU allocation and free it reports is summed in
     time order, and the highest sum plus the bytes alive before the step
     (parameters, buffers, the input batch) is the measured peak;
  3. <model>/measured.json records both parts, and <model>/step_trace.json is
     the profiler's Chrome trace of that step (CPU op durations, for
     `trainscope memory --times-trace`).
Run with Debian's torch 1.13 (CPU): /usr/bin/python3 examples/memory/make_pair.py
The CPU allocator does not cache, so "alive" here is exactly what is allocated.
"""
import gc
import json
import operator
import os
import sys

import torch
import torch.nn as nn
import torch.fx.passes.shape_prop
import torch.autograd.profiler_legacy as profiler_legacy
from functorch.compile import aot_module, make_boxed_func

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
          torch.int64: "i64", torch.int32: "i32", torch.bool: "b8", torch.uint8: "u8", torch.int8: "i8"}


def models():
    torch.manual_seed(0)
    cnn = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    mlp = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                        nn.Linear(2048, 10))
    # held out: made after the workspace rules were read off cnn, to check them
    heldout = nn.Sequential(
        nn.Conv2d(3, 24, 5, padding=2), nn.BatchNorm2d(24), nn.ReLU(),
        nn.Conv2d(24, 48, 3, stride=2, padding=1), nn.BatchNorm2d(48), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(48, 96, 3, padding=1), nn.BatchNorm2d(96), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(96, 100), nn.ReLU(), nn.Linear(100, 10))
    # fresh: made after the convolution rules were read off cnn_heldout
    fresh = nn.Sequential(
        nn.Conv2d(3, 12, 3, padding=1), nn.BatchNorm2d(12), nn.ReLU(),
        nn.Conv2d(12, 40, 3, stride=2, padding=1), nn.BatchNorm2d(40), nn.ReLU(),
        nn.Conv2d(40, 72, 3, padding=1), nn.BatchNorm2d(72), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(72, 128, 1), nn.BatchNorm2d(128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))
    return {"cnn": (cnn, torch.randn(64, 3, 32, 32)), "mlp": (mlp, torch.randn(256, 1024)),
            "cnn_heldout": (heldout, torch.randn(48, 3, 40, 40)),
            "cnn_fresh": (fresh, torch.randn(32, 3, 56, 56))}


def ann(meta):
    return '"%s[%s]"' % (DTYPES[meta.dtype], ", ".join(str(d) for d in meta.shape))


def fmt(a):
    if isinstance(a, torch.fx.Node):
        return a.name
    if isinstance(a, (list, tuple)):
        return "[" + ", ".join(fmt(x) for x in a) + "]"
    if isinstance(a, torch.device):
        return "device(type='%s')" % a.type
    if isinstance(a, (torch.dtype, torch.memory_format, torch.layout)):
        return str(a)
    if isinstance(a, str):
        return repr(a)
    return repr(a)


def dump(gm, path):
    """Write gm as `name: "f32[..]" = torch.ops.aten.op.overload(args)` lines."""
    nodes = list(gm.graph.nodes)
    params = [n for n in nodes if n.op == "placeholder"]
    out = ["class GraphModule(torch.nn.Module):",
           "    def forward(self, " + ", ".join("%s: %s" % (n.name, ann(n.meta["tensor_meta"])) for n in params) + "):"]
    done = set()

    def emit(n):
        if n.op != "call_function" or n in done:
            return
        done.add(n)
        if n.target is operator.getitem:
            base, idx = n.args
            out.append("        %s: %s = %s[%d]" % (n.name, ann(n.meta["tensor_meta"]), base.name, idx))
            return
        args = [fmt(a) for a in n.args] + ["%s = %s" % (k, fmt(v)) for k, v in n.kwargs.items()]
        call = "torch.ops.%s(%s)" % (n.target, ", ".join(args))
        meta = n.meta.get("tensor_meta")
        if not isinstance(meta, torch.fx.passes.shape_prop.TensorMetadata):  # a tuple result
            out.append("        %s = %s" % (n.name, call))
            for u in nodes:  # extracted outputs right after their op, as the reader expects
                if u in n.users and u.target is operator.getitem:
                    emit(u)
        else:
            out.append("        %s: %s = %s" % (n.name, ann(meta), call))

    for n in nodes:
        if n.op == "output":
            out.append("        return " + fmt(list(n.args[0])))
        else:
            emit(n)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n        \n")


def measure(step, trace_path):
    """Peak of the bytes allocated during step(), from the profiler's records;
    the step's trace (op durations) goes to trace_path."""
    grabbed = []
    orig = profiler_legacy._disable_profiler_legacy

    def grab():
        r = orig()
        grabbed.append(r)
        return r
    profiler_legacy._disable_profiler_legacy = grab
    try:
        with profiler_legacy.profile(profile_memory=True) as prof:
            step()
        prof.export_chrome_trace(trace_path)
    finally:
        profiler_legacy._disable_profiler_legacy = orig
    events = []
    # one time origin for every thread (the backward runs on autograd's own thread)
    start = next(r for thread in grabbed[0] for r in thread if r.name() == "__start_profile")
    for thread in grabbed[0]:
        for r in thread:
            if r.kind() == "memory_alloc":
                # cpu_elapsed_us(start) is start minus r in torch 1.13: negate
                events.append((-r.cpu_elapsed_us(start), r.cpu_memory_usage()))
    events.sort(key=lambda e: e[0])
    alive = peak = 0
    for _, b in events:
        alive += b
        peak = max(peak, alive)
    return peak, len(events)


def main():
    for name, (model, x) in models().items():
        d = os.path.join(HERE, name)
        os.makedirs(d, exist_ok=True)
        which = iter(["forward", "backward"])

        def compiler(gm, inputs):
            # not every node carries tensor_meta in torch 1.13: propagate shapes
            torch.fx.passes.shape_prop.ShapeProp(gm).propagate(*inputs)
            dump(gm, os.path.join(d, "fx_graph_transformed_%s.py" % next(which)))
            return make_boxed_func(gm.forward)
        am = aot_module(model, fw_compiler=compiler, bw_compiler=compiler)
        am(x).sum().backward()          # traces, dumps and runs once
        model.zero_grad(set_to_none=True)
        gc.collect()
        before = sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))
        before += x.numel() * x.element_size()

        def step():
            am(x).sum().backward()
        peak, n = measure(step, os.path.join(d, "step_trace.json"))
        res = {"model": name, "batch": x.shape[0], "alive_before_step_bytes": before,
               "step_peak_allocated_bytes": peak, "measured_peak_bytes": before + peak,
               "memory_events": n, "torch": torch.__version__,
               "how": "legacy autograd profiler, profile_memory=True, CPU allocator records summed in time order"}
        with open(os.path.join(d, "measured.json"), "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
        print(json.dumps(res))


if __name__ == "__main__":
    sys.exit(main())
