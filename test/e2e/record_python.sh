#!/bin/sh
# record_python.sh - `trainscope record --python-filter` on a tiny CPU PyTorch
# training loop (Debian's /usr/bin/python3 with torch), also marking steps
# through python/trainscope_trace.py. Checks: output unchanged, module-level
# ranges of torch.nn.modules and of the script appear, nested properly, and
# nothing outside the filter is recorded.
set -e
TS_BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
if ! $PY -c "import torch" 2>/dev/null; then echo "record_python: torch not installed for $PY"; exit 1; fi
tmp=$(mktemp -d /tmp/ts_e2e_record_py.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/tiny_train.py" <<'P'
import torch, torch.nn as nn
import trainscope_trace as tt

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)
    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))

def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()

torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))
for i in range(3):
    with tt.range("ProfilerStep#%d" % i):
        train_step(model, opt, x, y)
print("trained", tt.available())
P
out=$("$TS_BIN" record --python-filter torch.nn.modules,tiny_train -o "$tmp/t" -- $PY "$tmp/tiny_train.py" 2>"$tmp/err")
[ "$out" = "trained True" ] || { echo "output changed: $out"; cat "$tmp/err"; exit 1; }
$PY - "$tmp/t" <<'P'
import glob, json, sys
files = glob.glob(sys.argv[1] + "/pid-*.json")
assert len(files) == 1, files
ev = [e for e in json.load(open(files[0]))["traceEvents"] if e["ph"] == "X"]
py = [e for e in ev if e["cat"] == "python_function"]
names = {e["name"] for e in py}
for want in ["torch.nn.modules.linear.Linear.forward", "torch.nn.modules.activation.ReLU.forward",
             "__main__.Net.forward", "__main__.train_step"]:
    assert want in names, (want, sorted(names)[:20])
bad = [n for n in names if not (n.startswith("torch.nn.modules.") or n.startswith("__main__."))]
assert not bad, bad[:10]
steps = [e for e in ev if e["name"].startswith("ProfilerStep#")]
assert len(steps) == 3, steps
# Each Linear.forward lies inside a Net.forward, which lies inside a step.
def inside(a, b):
    return b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"] + 1e-3
nets = [e for e in py if e["name"] == "__main__.Net.forward"]
lins = [e for e in py if e["name"] == "torch.nn.modules.linear.Linear.forward"]
assert len(nets) == 3 and len(lins) == 6, (len(nets), len(lins))
assert all(any(inside(l, n) for n in nets) for l in lins)
assert all(any(inside(n, s) for s in steps) for n in nets)
P
echo "record_python: ok"
