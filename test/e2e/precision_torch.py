"""precision_torch.py - checks python/trainscope_precision.py on a real torch
model (run by precision_torch.sh). Expected values are computed here by hand
with plain autograd, not read from the module under test:
  * indicators: fc2's indicator equals the relative L2 errors of its output,
    input gradient and weight/bias gradients when fc2 alone runs in bf16 on
    the fp32 run's input and output gradient, rebuilt here step by step;
  * apply: the modules of the greedy plan output bf16, the others fp32,
    and a training step on the planned model runs with a finite loss;
  * plans that cannot be applied exactly raise PlanError naming file:line.
argv: PLAN_FROM_GREEDY INDICATORS_FILE TMPDIR"""
import collections
import os
import sys

import torch
import torch.nn as nn

import trainscope_precision as tp

BF16 = torch.bfloat16


def model():
    torch.manual_seed(0)
    od = collections.OrderedDict
    return nn.Sequential(od(fc1=nn.Linear(512, 512), act1=nn.ReLU(), fc2=nn.Linear(512, 512), act2=nn.ReLU(),
                            fc3=nn.Linear(512, 512), act3=nn.ReLU(), head=nn.Linear(512, 16)))


def batch():
    torch.manual_seed(1)
    return torch.randn(64, 512)


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def fail(msg):
    print("precision_torch: " + msg)
    sys.exit(1)


def hand_fc2_indicator():
    m, x = model(), batch()
    h = torch.relu(m.fc1(x)).detach().requires_grad_()
    y = m.fc2(h)
    y.retain_grad()
    out = m.head(torch.relu(m.fc3(torch.relu(y))))
    out.pow(2).mean().backward()
    gout, gin = y.grad.detach(), h.grad.detach()
    w_ref, b_ref = m.fc2.weight.grad.detach().clone(), m.fc2.bias.grad.detach().clone()
    m.zero_grad(set_to_none=True)
    hl = h.detach().clone().requires_grad_()
    with torch.autocast("cpu", dtype=BF16):
        yl = m.fc2(hl.to(BF16))
    yl.float().backward(gout)
    return rel(yl, y) + rel(hl.grad, gin) + rel(m.fc2.weight.grad, w_ref) + rel(m.fc2.bias.grad, b_ref)


def check_indicators(path):
    got = {}
    for line in open(path):
        if line.startswith("name:"):
            k, v = line.split()
            got[k[5:]] = float(v)
    if sorted(got) != sorted(["fc1", "act1", "fc2", "act2", "fc3", "act3", "head"]):
        fail("indicator modules %s" % sorted(got))
    want = hand_fc2_indicator()
    if not (want > 0 and abs(got["fc2"] - want) <= 1e-3 * want + 1e-9):
        fail("fc2 indicator %.6g, by hand %.6g" % (got["fc2"], want))
    print("fc2 indicator %.6g = by hand %.6g" % (got["fc2"], want))


def check_apply(plan):
    lowered = {l.split("#")[1].split(" in ")[1].strip() for l in open(plan)
               if l.startswith("op:") and " bf16" in l}
    if not lowered:
        fail("the greedy plan lowers nothing")
    m = model()
    applied = tp.apply(m, plan, scopes=True)
    if set(applied) != lowered or any(v != "bf16" for v in applied.values()):
        fail("applied %s, plan lowers %s" % (applied, lowered))
    seen = {}
    for name, mod in m.named_children():
        mod.register_forward_hook(lambda mod, a, out, name=name: seen.__setitem__(name, out.dtype))
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    with torch.autograd.profiler.profile() as prof:
        loss = m(batch()).float().pow(2).mean()
        loss.backward()
    opt.step()
    for name, dt in seen.items():
        want = BF16 if name in lowered else torch.float32
        if dt != want:
            fail("%s output %s, plan says %s" % (name, dt, want))
    if not torch.isfinite(loss):
        fail("loss %s" % loss)
    ranges = {e.name for e in prof.function_events}
    if not {"fc1", "head"} <= ranges:
        fail("scopes=True left no record_function range per module: %s" % sorted(ranges)[:20])
    print("applied %s; outputs %s" % (sorted(lowered), {k: str(v) for k, v in seen.items()}))


def check_refusals(tmp):
    cases = {"optype.plan": ("aten::linear bf16\n", "optype.plan:1"),
             "conflict.plan": ("op:3 bf16  # aten::linear in fc2\nop:4 fp32  # aten::relu in fc2\n",
                               "conflict.plan:2"),
             "noscope.plan": ("op:3 bf16\n", "noscope.plan:1"),
             "nomodule.plan": ("name:fc9 bf16\n", "nomodule.plan:1")}
    for fname, (text, where) in cases.items():
        p = os.path.join(tmp, fname)
        open(p, "w").write(text)
        try:
            tp.apply(model(), p)
        except tp.PlanError as e:
            if where not in str(e):
                fail("%s: message '%s' does not name %s" % (fname, e, where))
            continue
        fail("%s was applied" % fname)


check_indicators(sys.argv[2])
check_apply(sys.argv[1])
check_refusals(sys.argv[3])
print("ok")
