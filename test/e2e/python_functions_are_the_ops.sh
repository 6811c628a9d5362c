#!/bin/sh
# python_functions_are_the_ops.sh - regression 2026-11-26 (issue 21): a trace
# whose only ops are python_function ranges (what `record --python` writes
# for a program that does not use torch's profiler) made stats print
# "nothing" and exit 0, critical-path and replay find nothing. They are now
# the CPU ops (--python-depth N keeps the outermost N calls), and a trace
# with no op at all exits 1 ("nothing to analyse") in every command.
# The recorded program is a real run; expected counts are the program's own
# calls by hand: step 5 times, forward 5, layer 10.
set -e
BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: $PY missing"; exit 77; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/tiny.py" <<'P'
import time
def layer(x):
    return sum(i * x for i in range(2000))
def forward(x):
    return layer(x) + layer(x + 1)
def step(i):
    return forward(i)
for i in range(5):
    step(i)
P
"$BIN" record --python -o "$TMP/t" -- $PY "$TMP/tiny.py" 2>"$TMP/rec.err" || { cat "$TMP/rec.err"; exit 1; }
"$BIN" stats --format json "$TMP/t" >"$TMP/s.json"
"$BIN" stats --format json --python-depth 2 "$TMP/t" >"$TMP/s2.json"
$PY - "$TMP/s.json" "$TMP/s2.json" <<'PY'
import json, sys
def counts(path):
    d = json.load(open(path))
    return {r["name"]: r["count"] for r in d["rows"] if r["category"] == "cpu_op" and r["name"].startswith("__main__.")}
c = counts(sys.argv[1])
assert c.get("__main__.step") == 5 and c.get("__main__.forward") == 5 and c.get("__main__.layer") == 10, c
w = " ".join(x["first"] for x in json.load(open(sys.argv[1]))["warnings"])
assert "python_function ranges are analysed as CPU ops" in w, w
# depth 2: the module (1) and its calls (2, step) only
c2 = counts(sys.argv[2])
assert c2.get("__main__.step") == 5 and "__main__.forward" not in c2 and "__main__.layer" not in c2, c2
PY
"$BIN" critical-path --format json "$TMP/t" >"$TMP/cp.json"
"$BIN" replay --format json "$TMP/t" >"$TMP/r.json"
"$BIN" breakdown --format json "$TMP/t" >"$TMP/b.json"
$PY - "$TMP/cp.json" "$TMP/r.json" <<'PY'
import json, sys
cp, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
# The Python functions on the path are compute (not "cpu", which is left to the
# gaps between them): the category equals the ops' own on-path time. A share of
# the path would depend on the machine's load (start-up gaps grow under it).
ops = sum(p["on_path_us"] for p in cp["path"] if p["kind"] == "cpu_op")
assert cp["length_us"] > 0 and ops > 0 and abs(cp["categories"]["compute_us"] - ops) <= 0.01 * ops, (cp["categories"], ops)
assert any(p["name"].startswith("__main__.") for p in cp["path"]), cp["path"]
assert r["error_pct"] == 0 and r["measured_iteration_us"] > 0, r
PY
# Nothing to analyse: exit 1 in every command.
echo '{"traceEvents":[{"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","ts":5,"dur":10,"pid":1,"tid":1}]}' >"$TMP/none.json"
for c in stats breakdown critical-path replay; do
    set +e
    "$BIN" $c "$TMP/none.json" >/dev/null 2>&1; code=$?
    set -e
    [ $code -eq 1 ] || { echo "$c on a trace without ops exited $code, want 1"; exit 1; }
done
echo "python_functions_are_the_ops: ok"
