#!/bin/sh
# export --sqlite on a real DDP NCCL rank (HTA test data nccl_data.json.gz),
# read back with the sqlite3 shell. Every expected number comes from the
# file itself through Python's json (exact decimal microseconds -> ns):
# event counts per category, kernel time per name, GPU time per stream,
# slices per thread name, args per key, flow pairs per category
# (an 's' and an 'f' of one id, both inside an 'X' of their thread); two
# ranks of another job, slices per rank.
# Then usage and output errors: exit 2, a message naming the path, nothing
# left behind, an older file untouched.
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: the sqlite3 shell is missing (Debian package sqlite3)"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
F=$DATA/kineto/nccl_parser_config/nccl_data.json.gz
[ -f "$F" ] || { echo "skip: $F missing"; exit 77; }
T=$(mktemp -d /tmp/ts_e2e_export.XXXXXX)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
DB=$T/out.db

"$BIN" export "$F" --sqlite "$DB" >"$T/out" 2>"$T/err" || fail "export exited $?: $(cat "$T/err")"
grep -q "^$DB: [0-9]* rows in [0-9]* tables" "$T/out" || fail "no summary line: $(cat "$T/out")"
[ -z "$(ls -A "$T" | grep tmp)" ] || fail "a temporary was left: $(ls -A "$T")"
q() { sqlite3 -batch -noheader -separator '|' "$DB" "$1"; }

# What the database says, one line per fact, in the shape the Python side writes.
{
    q "SELECT 'slices', count(*) FROM slice"
    q "SELECT 'cat', category, count(*) FROM slice WHERE category IS NOT NULL GROUP BY category ORDER BY category"
    q "SELECT 'kernel', name, count(*), sum(dur) FROM slice WHERE category = 'kernel' GROUP BY name ORDER BY name"
    q "SELECT 'stream', tt.device, tt.stream, count(*), sum(s.dur) FROM slice s JOIN thread_track tt ON s.track_id = tt.id
       WHERE s.category IN ('kernel', 'gpu_memcpy', 'gpu_memset') GROUP BY tt.id ORDER BY tt.device, tt.stream"
    q "SELECT 'thread', thread.name, count(*) FROM slice JOIN thread_track ON slice.track_id = thread_track.id
       JOIN thread USING (utid) WHERE thread.name IS NOT NULL AND slice.dur > 0 GROUP BY utid ORDER BY thread.name"
    q "SELECT 'arg', key, count(*) FROM args JOIN slice USING (arg_set_id) GROUP BY key ORDER BY key" |
        grep -v '^arg|correlation|' | grep -v '^arg|External id|'
    q "SELECT 'arg', 'correlation', count(correlation) FROM slice"
    q "SELECT 'arg', 'External id', count(external_id) FROM slice"
    q "SELECT 'flow', category, count(*) FROM flow GROUP BY category ORDER BY category"
} >"$T/db.txt"

/usr/bin/python3 - "$F" >"$T/py.txt" <<'PY'
import collections, gzip, json, sys
from decimal import Decimal
ev = json.load(gzip.open(sys.argv[1]), parse_float=Decimal)["traceEvents"]
ns = lambda v: int(Decimal(v) * 1000)
X = [e for e in ev if e.get("ph") == "X"]
print("slices|%d" % (len(X) + sum(e.get("ph") == "i" for e in ev)))
for c, n in sorted(collections.Counter(e["cat"] for e in X if e.get("cat")).items()):
    print("cat|%s|%d" % (c, n))
k = collections.defaultdict(lambda: [0, 0])
for e in X:
    if e.get("cat") == "kernel":
        k[e["name"]][0] += 1; k[e["name"]][1] += ns(e["dur"])
for name in sorted(k):
    print("kernel|%s|%d|%d" % (name, k[name][0], k[name][1]))
st = collections.defaultdict(lambda: [0, 0])   # GPU ops: pid = device, tid = stream
for e in X:
    if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
        st[(e["pid"], e["tid"])][0] += 1; st[(e["pid"], e["tid"])][1] += ns(e["dur"])
for (dev, s) in sorted(st):
    print("stream|%d|%d|%d|%d" % (dev, s, st[(dev, s)][0], st[(dev, s)][1]))
tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
for e in X:   # a string tid names its thread, as in Chrome's trace viewer
    if isinstance(e["tid"], str): tname.setdefault((e["pid"], e["tid"]), e["tid"])
th = collections.Counter(tname[(e["pid"], e["tid"])] for e in X if (e["pid"], e["tid"]) in tname and ns(e["dur"]) > 0)
for name in sorted(th):
    print("thread|%s|%d" % (name, th[name]))
a = collections.Counter(key for e in X for key in e.get("args", {}))
ids = ("correlation", "External id")   # kept as slice columns when non-negative integers
for key in sorted(a):
    if key not in ids:
        print("arg|%s|%d" % (key, a[key]))
for key in ids:
    print("arg|%s|%d" % (key, sum(1 for e in X if isinstance(e.get("args", {}).get(key), int) and e["args"][key] >= 0)))
s = {(e.get("cat"), e["id"]): e for e in ev if e.get("ph") == "s"}
f = {}
for e in ev:
    if e.get("ph") == "f": f.setdefault((e.get("cat"), e["id"]), e)
spans = collections.defaultdict(list)
for e in X:
    spans[(e["pid"], e["tid"])].append((Decimal(e["ts"]), Decimal(e["ts"]) + Decimal(e["dur"])))
inside = lambda e: any(a <= Decimal(e["ts"]) <= b for a, b in spans[(e["pid"], e["tid"])])
fl = collections.Counter(k[0] for k in s if k in f and inside(s[k]) and inside(f[k]))
for c in sorted(fl):
    print("flow|%s|%d" % (c, fl[c]))
PY
# sqlite3 sorts names by bytes, Python by code points: compare as sets of lines
sort "$T/db.txt" >"$T/db.sorted"; sort "$T/py.txt" >"$T/py.sorted"
diff "$T/py.sorted" "$T/db.sorted" >"$T/diff" || fail "database differs from the file (< python, > sqlite): $(head -20 "$T/diff")"
[ "$(grep -c '^kernel|' "$T/py.txt")" -gt 50 ] || fail "too few kernel names compared"

# The analyses are there and agree with themselves and the other commands.
[ "$(q "SELECT count(*) FROM iteration")" -eq 3 ] || fail "iterations: $(q "SELECT count(*) FROM iteration")"
[ "$(q "SELECT count(*) FROM replay")" -eq 3 ] || fail "replay rows"
[ "$(q "SELECT sum(dur) FROM critical_path")" = "$(q "SELECT int_value FROM metadata WHERE name = 'critical_path_length_ns'")" ] ||
    fail "critical path segments do not add up to its length"
[ "$(q "SELECT sum(dur_ns) FROM critical_path_category")" = "$(q "SELECT int_value FROM metadata WHERE name = 'critical_path_length_ns'")" ] ||
    fail "critical path categories do not add up to its length"
[ "$(q "SELECT count(*) FROM critical_path c JOIN slice s ON c.slice_id = s.id WHERE c.name != s.name")" -eq 0 ] ||
    fail "a critical-path segment names another slice than its own"
"$BIN" breakdown --format json "$F" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"][0]
print("%d|%d" % (round(r["span_us"] * 1000), round(r["idle_us"] * 1000)))' >"$T/bd.txt"
[ "$(q "SELECT span_ns, idle_ns FROM breakdown")" = "$(cat "$T/bd.txt")" ] ||
    fail "breakdown table $(q "SELECT span_ns, idle_ns FROM breakdown") != breakdown --format json $(cat "$T/bd.txt")"
# The file's ac2g 'f' ends with no 's' (Python's count) are Kineto's marks on runtime calls that launched
# nothing: the rank's metadata counts them and table warning has no unbound_flow for them.
marks=$(/usr/bin/python3 -c '
import collections, gzip, json, sys
ends = collections.defaultdict(list)
for e in json.load(gzip.open(sys.argv[1]))["traceEvents"]:
    if e.get("ph") in ("s", "f") and e.get("cat") == "ac2g":
        ends[e["id"]].append(e["ph"])
print(sum(1 for v in ends.values() if v == ["f"]))' "$F")
[ "$(q "SELECT a.string_value FROM rank r JOIN args a ON a.arg_set_id = r.arg_set_id WHERE a.key = 'ac2g_runtime_marks'" | cut -d' ' -f1)" = "$marks" ] ||
    fail "the rank's ac2g_runtime_marks is not the file's $marks lone ac2g ends"
[ "$(q "SELECT count(*) FROM warning WHERE kind = 'unbound_flow'")" -eq 0 ] ||
    fail "Kineto's runtime marks are still warned about as unbound flows"

# Two ranks of a 128-rank job (HTA's trace_filter samples): each rank's
# slices under its own rank row (counts of 'X' and 'i' events per file, by
# Python), every parent on its child's track, ids unique over the job.
R0=$DATA/kineto/trace_filter/sampled_rank-0.json.gz R1=$DATA/kineto/trace_filter/sampled_rank-1.json.gz
[ -f "$R0" ] && [ -f "$R1" ] || { echo "skip: $R0 or $R1 missing"; exit 77; }
"$BIN" export "$R0" "$R1" --sqlite "$T/two.db" >/dev/null 2>"$T/err" || fail "two ranks: $(cat "$T/err")"
got=$(sqlite3 -batch "$T/two.db" "SELECT group_concat(r.rank || ':' || n, ' ') FROM (SELECT t.rank_id, count(*) AS n
      FROM slice s JOIN track t ON s.track_id = t.id GROUP BY t.rank_id ORDER BY t.rank_id) JOIN rank r ON r.id = rank_id")
want=$(/usr/bin/python3 -c '
import gzip, json, sys
n = [sum(e.get("ph") in ("X", "i") for e in json.load(gzip.open(f))["traceEvents"]) for f in sys.argv[1:]]
print(" ".join("%d:%d" % (r, c) for r, c in enumerate(n)))' "$R0" "$R1")
[ "$got" = "$want" ] || fail "two ranks: slices per rank $got, the files have $want"
[ "$(sqlite3 -batch "$T/two.db" "SELECT count(*) FROM slice s JOIN slice p ON s.parent_id = p.id WHERE s.track_id != p.track_id")" -eq 0 ] ||
    fail "two ranks: a parent on another track"

# Errors: exit 2, the path named, nothing left, an older file kept.
echo old >"$T/keep.db"
rc=0; "$BIN" export "$F" --sqlite "$T/no/such/dir/x.db" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "$T/no/such/dir/x.db: cannot write: No such file or directory" "$T/err" ||
    fail "missing folder: exit $rc: $(cat "$T/err")"
mkdir "$T/ro"; chmod a-w "$T/ro"
if [ ! -w "$T/ro" ]; then   # root writes anywhere
    rc=0; "$BIN" export "$F" --sqlite "$T/ro/x.db" 2>"$T/err" || rc=$?
    [ $rc -eq 2 ] && grep -q "Permission denied" "$T/err" || fail "read-only folder: exit $rc: $(cat "$T/err")"
fi
rc=0; "$BIN" export "$F" --sqlite "$T" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "not a regular file" "$T/err" || fail "a folder as the database: exit $rc: $(cat "$T/err")"
rc=0; "$BIN" export "$F" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q -- "--sqlite FILE" "$T/err" || fail "no --sqlite: exit $rc: $(cat "$T/err")"
printf '{"traceEvents": [' >"$T/cut.json"
rc=0; "$BIN" export "$T/cut.json" --sqlite "$T/keep.db" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && [ "$(cat "$T/keep.db")" = old ] || fail "bad input: exit $rc, older file $(head -c 20 "$T/keep.db")"
[ -z "$(ls -A "$T" | grep '\.tmp$')" ] || fail "a temporary was left: $(ls -A "$T")"
echo ok
