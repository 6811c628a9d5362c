#!/bin/sh
# record_python.sh - `trainscope record --python-filter` on a tiny CPU PyTorch
# training loop (Debian's /usr/bin/python3 with torch), also marking steps
# through python/trainscope_trace.py. Checks: output unchanged, module-level
# ranges of torch.nn.modules and of the script appear, nested properly, and
# nothing outside the filter is recorded; then that a thread and a DataLoader
# worker process are traced as well.
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
# A thread and a DataLoader worker process are traced too: the thread's calls
# on its own tid, the worker's in its own file.
cat >"$tmp/loader.py" <<'P'
import threading, torch, torch.nn as nn
from torch.utils.data import DataLoader, Dataset
class Squares(Dataset):
    def __len__(self): return 8
    def __getitem__(self, i): return torch.full((4,), float(i * i))
layer = nn.Linear(4, 2)
def side():
    with torch.no_grad():
        layer(torch.zeros(1, 4))
t = threading.Thread(target=side, name="side-thread")
t.start(); t.join()
print("batches", sum(1 for _ in DataLoader(Squares(), batch_size=4, num_workers=1)))
P
out=$("$TS_BIN" record --python-filter torch.nn.modules,loader -o "$tmp/t2" -- $PY "$tmp/loader.py" 2>"$tmp/err")
[ "$out" = "batches 2" ] || { echo "output changed: $out"; cat "$tmp/err"; exit 1; }
$PY - "$tmp/t2" <<'P'
import glob, json, sys
traces = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/pid-*.json")]
assert len(traces) == 2, len(traces)
def events(t, name):
    return [e for e in t["traceEvents"] if e.get("name") == name and e["ph"] == "X"]
main = [t for t in traces if events(t, "torch.nn.modules.linear.Linear.forward")]
worker = [t for t in traces if events(t, "__main__.Squares.__getitem__")]
assert len(main) == 1 and len(worker) == 1 and main[0] is not worker[0]
pid = main[0]["trainscope"]["pid"]
fwd = events(main[0], "torch.nn.modules.linear.Linear.forward")
assert all(e["tid"] != pid for e in fwd)
names = {e["tid"]: e["args"]["name"] for e in main[0]["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
assert names.get(fwd[0]["tid"]) == "side-thread", names
assert len(events(worker[0], "__main__.Squares.__getitem__")) == 8
P
# Without record: the module loads the library itself (dlopen through ctypes)
# and traces into a directory it names.
PYTHONPATH=python TRAINSCOPE_LIB_DIR="$(dirname "$TS_BIN")" $PY - "$tmp/t3" <<'P'
import glob, json, sys
import trainscope_trace as tt
assert tt.available() and tt.start(sys.argv[1]) == 0 and tt.enabled()
with tt.range("outer"):
    tt.counter("loss", 0.5)
assert tt.stop() == 0 and not tt.enabled()
ev = [e for f in glob.glob(sys.argv[1] + "/pid-*.json") for e in json.load(open(f))["traceEvents"]]
assert [e["name"] for e in ev if e["ph"] == "X"] == ["outer"], ev
assert [e["args"]["loss"] for e in ev if e["ph"] == "C"] == [0.5], ev
P
echo "record_python: ok"
