"""trainscope_precision - the torch side of trainscope's precision plans:
apply a plan to a model as per-module autocast, and measure each module's
accuracy indicator for the plan search. Not for predicting times (that is
`trainscope replay --precision-plan`) nor for searching plans
(`trainscope replay --precision-greedy`).

Apply a plan in a training script (the plan file `--precision-greedy` prints,
or one written by hand):

    import trainscope_precision as tp
    tp.apply(model, "greedy.plan")          # before building the optimizer or DDP

Each module a rule names runs under torch.autocast at its precision (bf16,
fp16) or with autocast off (fp32), its floating inputs cast first, so it
computes in its planned type whatever its caller does, and the casts between
modules of different precisions are real ops in the trace; modules no rule
names run in fp32 (what a plan does not lower stays fp32). With
scopes=True every module's forward is also a record_function range named by
its qualified name, which is the scope trainscope's precision model and
plans name (`name:fc1`).

Plan lines (docs/precision.md): `name:P PREC` (modules whose qualified name
starts with P), `* PREC` (every module), `op:N PREC  # OP in SCOPE` (what the
greedy search prints: the module is SCOPE). Later rules win. A rule on an op
type (`aten::linear bf16`) has no module to act on and is an error, as is an
op:N line without its scope or two op:N lines giving one module two
precisions: a plan is applied exactly or not at all.

Measure indicators (QSync's idea: how much a module's result moves when it
alone runs at the lower precision), from a pair of short runs:

    python3 -m trainscope_precision indicators SCRIPT.py --lower bf16 -o ind.txt

SCRIPT.py defines model() and batch() (and optionally loss(output)). Run 1 is
fp32 and records every leaf module's input, output and output gradient. Run 2
lowers every leaf module, but feeds each one run 1's input and run 1's output
gradient (the values, keeping the autograd links), so what a module is
charged is its own error, not what it inherited. A module's indicator is the
relative L2 difference of its output plus that of its input gradient plus
that of its weight gradients. The output is an indicator file
(`name:<module> <x>` per line) for `--indicators`.

Hand a plan to dPRO (TensorFlow's auto mixed precision rewrite):

    python3 -m trainscope_precision dpro greedy.plan -o DIR   # DIR/amp_priorlist.txt, DIR/amp.env
"""
import argparse
import math
import re
import runpy
import sys

import torch

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


class PlanError(ValueError):
    """A plan that cannot be applied exactly: the message names the file and line."""


def _device_type(model):
    for p in model.parameters():
        return p.device.type
    return "cpu"


def read_plan(path):
    """[(pattern, precision, line_no)] in file order; patterns are module
    name prefixes ("" for every module)."""
    rules, by_module = [], {}
    with open(path) as f:
        for ln, raw in enumerate(f, 1):
            body, _, comment = raw.partition("#")
            words = body.split()
            if not words:
                continue
            where = "%s:%d" % (path, ln)
            if len(words) != 2 or words[1] not in DTYPES:
                raise PlanError("%s: expected '<name:P|*|op:N> <%s>'" % (where, "|".join(DTYPES)))
            pat, prec = words
            if pat == "*":
                rules.append(("", prec, ln))
            elif pat.startswith("name:"):
                rules.append((pat[5:], prec, ln))
            elif re.fullmatch(r"op:\d+", pat):
                m = re.search(r"\bin\s+(\S+)\s*$", comment)
                if not m:
                    raise PlanError("%s: %s names an op without its module ('# OP in MODULE' comment)" % (where, pat))
                scope = m.group(1)
                if by_module.get(scope, (prec,))[0] != prec:
                    raise PlanError("%s: module %s is %s at line %d and %s here: torch autocast applies one "
                                    "precision per module" % (where, scope, by_module[scope][0],
                                                              by_module[scope][1], prec))
                by_module[scope] = (prec, ln)
                rules.append(("=" + scope, prec, ln))
            else:
                raise PlanError("%s: '%s' is an op-type rule; a torch plan acts on modules (name:P)" % (where, pat))
    return rules


def _matches(pat, qname):
    if pat.startswith("="):
        return qname == pat[1:]
    return qname.startswith(pat)


def resolve(model, rules, path="plan"):
    """{qualified module name: precision} for the modules some rule names
    (the last matching rule wins). A rule that matches no module is an error."""
    names = [n for n, _ in model.named_modules() if n]
    out = {}
    for pat, prec, ln in rules:
        hit = [n for n in names if _matches(pat, n)]
        if not hit:
            raise PlanError("%s:%d: no module of the model is named %s" % (path, ln, pat.lstrip("=") or "*"))
        for n in hit:
            out[n] = prec
    return out


def _cast(x, dtype):
    if torch.is_tensor(x) and x.is_floating_point() and x.dtype != dtype:
        return x.to(dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, dtype) for v in x)
    return x


def _wrap(module, qname, prec, device, scope):
    orig = module.forward
    dtype = DTYPES[prec] if prec else None

    def forward(*args, **kwargs):
        ctx = torch.autograd.profiler.record_function(qname) if scope else _Null()
        with ctx:
            if dtype is None:
                return orig(*args, **kwargs)
            args, kwargs = _cast(args, dtype), {k: _cast(v, dtype) for k, v in kwargs.items()}
            with torch.autocast(device, dtype=dtype if dtype != torch.float32 else torch.bfloat16,
                                enabled=dtype != torch.float32):
                return orig(*args, **kwargs)
    module.forward = forward
    module._trainscope_precision = prec


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def apply(model, plan, scopes=False, default="fp32"):
    """Apply plan (a path, or {module name: precision}) to model in place;
    returns {module name: precision} for the modules the plan names. The
    others run at `default` (fp32, as trainscope's plans mean: what a plan
    does not lower stays fp32), or as their caller runs them with
    default=None. With scopes=True every module also records its qualified
    name as a profiler range."""
    chosen = plan if isinstance(plan, dict) else resolve(model, read_plan(plan), plan)
    device = _device_type(model)
    for qname, module in model.named_modules():
        prec = chosen.get(qname, default)
        if qname and (prec or scopes):
            _wrap(module, qname, prec, device, scopes)
    return chosen


def _leaves(model):
    return [(n, m) for n, m in model.named_modules() if n and not list(m.children())]


def _rel(a, b):
    if a is None or b is None:
        return 0.0
    a, b = a.detach().float(), b.detach().float()
    den = b.norm().item()
    return (a - b).norm().item() / den if den > 0 else (a - b).norm().item()


def _first_tensor(x):
    if torch.is_tensor(x):
        return x
    if isinstance(x, (list, tuple)):
        for v in x:
            t = _first_tensor(v)
            if t is not None:
                return t
    return None


def _run(model, x, loss_fn, rec, lower=None, ref=None):
    """One forward and backward. rec[name] gets the module's input, output,
    output gradient, input gradient and weight gradients. With lower, every
    leaf computes at that dtype on ref's input and output gradient."""
    hooks = []
    for name, m in _leaves(model):
        r = rec.setdefault(name, {})

        def pre(mod, args, name=name, r=r):
            x0 = _first_tensor(args)
            if x0 is None or not x0.is_floating_point():
                return None
            if ref is not None and ref[name].get("in") is not None:
                x0 = x0 + (ref[name]["in"].to(x0.dtype) - x0).detach()   # ref's value, autograd kept
            if x0.requires_grad:
                x0.register_hook(lambda g, r=r: r.__setitem__("gin", g.detach().clone()))
            r["in"] = x0.detach().clone()
            if lower is not None:
                x0 = x0.to(lower)
            return (x0,) + tuple(args[1:])

        def post(mod, args, out, name=name, r=r):
            if not torch.is_tensor(out) or not out.is_floating_point():
                return None
            y = out.float() if lower is not None else out
            r["out"] = y.detach().clone()
            if y.requires_grad:
                def on_grad(g, name=name, r=r):
                    if ref is not None and ref[name].get("gout") is not None:
                        g = ref[name]["gout"].to(g.dtype)
                    r["gout"] = g.detach().clone()
                    return g
                y.register_hook(on_grad)
            return y

        hooks.append(m.register_forward_pre_hook(pre))
        hooks.append(m.register_forward_hook(post))
    ctx = torch.autocast(_device_type(model), dtype=lower) if lower is not None else _Null()
    try:
        model.zero_grad(set_to_none=True)
        with ctx:
            out = model(x)
        loss_fn(out.float()).backward()
        for name, m in _leaves(model):
            rec[name]["wgrad"] = [p.grad.detach().clone() if p.grad is not None else None
                                  for p in m.parameters(recurse=False)]
    finally:
        for h in hooks:
            h.remove()


def indicators(model, x, loss_fn=None, lower="bf16"):
    """{leaf module name: indicator}: the relative L2 difference of the
    module's output, input gradient and weight gradients when it alone runs
    at `lower` on the fp32 run's input and output gradient."""
    loss_fn = loss_fn or (lambda out: out.pow(2).mean())
    ref, low = {}, {}
    _run(model, x, loss_fn, ref)
    _run(model, x, loss_fn, low, lower=DTYPES[lower], ref=ref)
    model.zero_grad(set_to_none=True)
    out = {}
    for name, _ in _leaves(model):
        a, b = low.get(name, {}), ref.get(name, {})
        if "out" not in b:
            continue   # a leaf that never ran on a floating tensor
        v = _rel(a.get("out"), b.get("out")) + _rel(a.get("gin"), b.get("gin"))
        v += sum(_rel(p, q) for p, q in zip(a.get("wgrad", []), b.get("wgrad", [])))
        out[name] = v if math.isfinite(v) else float("inf")
    return out


def write_indicators(ind, path, lower):
    with open(path + ".tmp", "w") as f:
        f.write("# QSync-style indicators at %s: relative L2 error of output + input gradient + weight "
                "gradients, each module lowered alone on the fp32 run's values\n" % lower)
        for name, v in ind.items():
            f.write("name:%s %.6g\n" % (name, v))
    import os
    os.replace(path + ".tmp", path)


def plan_ops(path):
    """[(op, precision)] of the op:N lines of a greedy plan, from their
    '# OP in SCOPE' (or '# OP') comments, in file order."""
    out = []
    for ln, raw in enumerate(open(path), 1):
        body, _, comment = raw.partition("#")
        words = body.split()
        if len(words) == 2 and re.fullmatch(r"op:\d+", words[0]):
            op = comment.split(" in ")[0].strip()
            if not op:
                raise PlanError("%s:%d: %s has no '# OP' comment naming its op" % (path, ln, words[0]))
            out.append((op, words[1]))
    return out


def write_dpro(plan, outdir):
    """dPRO's mixed-precision inputs (seed 000): DIR/amp_priorlist.txt, the
    ops to force to 16 bits one per line, and DIR/amp.env, the environment
    that points TensorFlow's auto mixed precision rewrite at it
    (TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_PRIORLIST_FILE, and _FORCE so its
    own allow/deny lists do not add or veto ops). Returns the op count."""
    import os
    ops = []
    for op, prec in plan_ops(plan):
        if prec in ("bf16", "fp16") and op not in ops:
            ops.append(op)
    if not ops:
        raise PlanError("%s: the plan lowers no op (no 'op:N bf16|fp16  # OP' line)" % plan)
    os.makedirs(outdir, exist_ok=True)
    lst = os.path.join(outdir, "amp_priorlist.txt")
    env = os.path.join(outdir, "amp.env")
    for path, text in ((lst, "".join(o + "\n" for o in ops)),
                       (env, "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_PRIORLIST_FILE=%s\n"
                             "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_FORCE=1\n" % os.path.abspath(lst))):
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    return len(ops)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m trainscope_precision")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ind = sub.add_parser("indicators", help="measure per-module indicators from a pair of short runs")
    ind.add_argument("script", help="a Python file defining model() and batch(), optionally loss(output)")
    ind.add_argument("--lower", default="bf16", choices=["bf16", "fp16"])
    ind.add_argument("-o", "--output", required=True)
    dp = sub.add_parser("dpro", help="write a greedy plan as dPRO's mixed-precision list and env files")
    dp.add_argument("plan")
    dp.add_argument("-o", "--output", required=True, help="a folder")
    a = ap.parse_args(argv)
    if a.cmd == "dpro":
        try:
            n = write_dpro(a.plan, a.output)
        except (PlanError, OSError) as e:
            print("trainscope_precision: %s" % e, file=sys.stderr)
            return 2
        print("%d ops -> %s/amp_priorlist.txt, %s/amp.env" % (n, a.output, a.output))
        return 0
    ns = runpy.run_path(a.script)
    for fn in ("model", "batch"):
        if not callable(ns.get(fn)):
            print("trainscope_precision: %s defines no %s()" % (a.script, fn), file=sys.stderr)
            return 2
    torch.manual_seed(0)
    result = indicators(ns["model"](), ns["batch"](), ns.get("loss"), a.lower)
    write_indicators(result, a.output, a.lower)
    print("%d modules measured at %s -> %s" % (len(result), a.lower, a.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
