#!/bin/sh
# trainscope replay --windows: one job traced in several windows (the saved
# rounds of a ground truth, each a directory of rank files). Each window's
# figures are exactly what a replay of that window alone reports, and the
# job's are their medians (bench/accuracy.sh's prediction), unmodified and
# with a --bucket-mb what-if; per rank too; over an odd and an even number of
# windows (the committed set saves 3 rounds; WL=DIR another set, e.g. a
# held-out one restored by bench/heldout.sh). Windows of different rank sets,
# a missing window, and --export with several windows exit 2 with a message
# and print nothing on stdout; a window with nothing to replay exits 1.
set -e
BIN=${TS_BIN:-build/trainscope}
WL=${WL:-examples/workloads}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
ls $WL/traces/deepmlp_bucket1/round*/rank0.json* >/dev/null 2>&1 || { echo "skip: no saved rounds in $WL"; exit 77; }

BIN=$BIN WL=$WL /usr/bin/python3 - <<'PY'
import glob, json, os, statistics, subprocess
BIN, WL = os.environ["BIN"], os.environ["WL"]
every = sorted(glob.glob(WL + "/traces/deepmlp_bucket1/round*"))
assert len(every) >= 3, every
whatif = ["--bucket-mb", "0.5", "--trace-bucket-mb", "1", "--gradients", WL + "/results/deepmlp_gradients.json",
          "--nccl-tests", WL + "/results/gloo_allreduce_perf.log"]
def run(*args):
    p = subprocess.run([BIN, "replay", "--format", "json", *args], capture_output=True, text=True)
    assert p.returncode == 0, (args, p.stderr)
    return json.loads(p.stdout)
for rounds, opts in ((r, o) for r in (every, every[:len(every) // 2 * 2]) for o in ([], whatif)):
    alone = [run(*opts, *sorted(glob.glob(d + "/rank*"))) for d in rounds]
    w = run("--windows", *opts, *rounds)
    assert w["what_if"] == bool(opts), w["what_if"]
    assert [x["path"] for x in w["windows"]] == rounds, w["windows"]
    for a, x in zip(alone, w["windows"]):
        assert x["iterations"] == a["iterations"], (x, a)
        assert x["measured_iteration_us"] == a["measured_iteration_us"], (x, a)
        assert x["predicted_iteration_us"] == a["predicted_iteration_us"], (x, a)
    for key in ("measured_iteration_us", "predicted_iteration_us"):
        want = statistics.median(a[key] for a in alone)
        assert abs(w[key] - want) <= 0.001, (key, w[key], want)
    m, p = w["measured_iteration_us"], w["predicted_iteration_us"]
    assert abs(w["error_pct"] - 100 * (p - m) / m) < 0.001, w["error_pct"]
    assert (w["error_pct"] != 0) == bool(opts), w["error_pct"]
    for k, r in enumerate(w["ranks"]):
        want = statistics.median(a["ranks"][k]["predicted_iteration_us"] for a in alone)
        assert r["rank"] == k and abs(r["predicted_iteration_us"] - want) <= 0.001, (r, want)
    # Every window's warnings, each once.
    key = lambda x: json.dumps(x, sort_keys=True)
    assert sorted(map(key, w["warnings"])) == sorted({key(s) for a in alone for s in a["warnings"]}), w["warnings"]
    # The table's spread lines: the least and greatest window, and a
    # what-if's change per window, as in the JSON.
    p = subprocess.run([BIN, "replay", "--windows", *opts, *rounds], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert any(l.startswith("per window, least to greatest of %d: measured" % len(rounds)) for l in lines), lines
    change = [l for l in lines if l.startswith("change per window, least to greatest: ")]
    assert bool(change) == bool(opts), lines
    if opts:
        lo, hi = (float(x.rstrip("%")) for x in change[0].split(": ")[1].split(" to "))
        ch = [x["error_pct"] for x in w["windows"]]
        assert abs(lo - min(ch)) < 0.006 and abs(hi - max(ch)) < 0.006, (change, ch)
print("--windows over %d and %d windows: each as alone, the medians as bench/accuracy.sh takes them"
      % (len(every), len(every) // 2 * 2))
PY

R=$(ls -d $WL/traces/deepmlp_bucket1/round* | head -2)
"$BIN" replay --windows $R >"$TMP/t.txt"
grep -q "^iteration (median of 2 windows" "$TMP/t.txt"

expect_bad() {   # expect_bad PATTERN ARGS...: exit 2, PATTERN on stderr, nothing on stdout
    pat=$1; shift
    rc=0
    "$BIN" replay "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ $rc -eq 2 ] || { echo "exit $rc, not 2: $*"; cat "$TMP/err"; exit 1; }
    grep -q -- "$pat" "$TMP/err" || { echo "no '$pat' in:"; cat "$TMP/err"; exit 1; }
    [ ! -s "$TMP/out" ] || { echo "partial output for: $*"; cat "$TMP/out"; exit 1; }
}
FIRST=$(echo $R | cut -d' ' -f1)
SECOND=$(echo $R | cut -d' ' -f2)
expect_bad "windows of one job" --windows $FIRST $SECOND/rank0.json*
expect_bad "no such file" --windows $FIRST "$TMP/missing"
expect_bad "give it one window" --windows --export "$TMP/x.json" $FIRST
# A window with nothing to replay: exit 1 (as for one trace), naming it.
echo '{"traceEvents": []}' >"$TMP/empty.json"
rc=0
"$BIN" replay --windows $FIRST "$TMP/empty.json" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc -eq 1 ] || { echo "exit $rc, not 1, for an empty window"; cat "$TMP/err"; exit 1; }
grep -q "window $TMP/empty.json: " "$TMP/err" || { cat "$TMP/err"; exit 1; }
[ ! -s "$TMP/out" ] || { echo "partial output for an empty window"; exit 1; }
echo "ok: replay --windows"
