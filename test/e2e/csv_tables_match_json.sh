#!/bin/sh
# csv_tables_match_json.sh - `--format csv` with --table NAME / -o DIR for
# breakdown, stats, diff, critical-path and info: every table is RFC 4180
# (CRLF records, one header, the same field count on every record, quoted
# names with commas come back whole through Python's csv reader), its numbers
# equal the same command's JSON (ns integers vs the JSON's us), a table
# checked against an independent count (info's slices = the file's "X"
# events, counted here with Python's json), critical-path's ops and
# categories add up to the JSON's path length; and the bad cases: an unknown
# table, -o without csv, -o where no folder can be made, a table that cannot
# be written: exit 2 and no file left.
set -u
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
F=$DATA/kineto/nccl_parser_config/nccl_data.json.gz
TF=$DATA/kineto/trace_filter
TC=$DATA/kineto/trace_compare
[ -f "$F" ] && [ -d "$TF" ] && [ -d "$TC/base" ] || { echo "skip: $DATA missing"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$BIN" breakdown --format csv -o "$T/bd" "$TF" 2>/dev/null || fail "breakdown -o exited $?"
"$BIN" breakdown --format json "$TF" >"$T/bd.json" 2>/dev/null || fail "breakdown json"
"$BIN" stats --format csv -o "$T/st" "$F" 2>/dev/null || fail "stats -o exited $?"
"$BIN" stats --format csv --table rows "$F" >"$T/rows.csv" 2>/dev/null || fail "stats --table rows"
"$BIN" stats --format json "$F" >"$T/st.json" 2>/dev/null || fail "stats json"
"$BIN" diff --format csv -o "$T/df" "$TC/base" "$TC/test" 2>/dev/null || fail "diff -o"
"$BIN" diff --format json "$TC/base" "$TC/test" >"$T/df.json" 2>/dev/null || fail "diff json"
"$BIN" critical-path --format csv -o "$T/cp" "$TF" 2>/dev/null || fail "critical-path -o"
"$BIN" critical-path --format json --top 1000000 "$TF" >"$T/cp.json" 2>/dev/null || fail "critical-path json"
"$BIN" info --format csv --table ranks "$F" >"$T/info.csv" || fail "info --table ranks"
"$BIN" info --format json "$F" >"$T/info.json" || fail "info json"

/usr/bin/python3 - "$T" "$F" <<'PY' || fails=$((fails + 1))
import csv, glob, gzip, json, os, sys
from decimal import Decimal
T, F = sys.argv[1], sys.argv[2]
jload = lambda path: json.load(open(path), parse_float=Decimal)   # exact: us with 3 decimals are whole ns

def table(path):
    raw = open(path, "rb").read()
    assert raw.endswith(b"\r\n"), path + ": last record does not end in CRLF"
    text = raw.decode("utf-8")
    rows = list(csv.reader(text.splitlines(keepends=True), strict=True))
    assert rows, path + ": no header"
    assert all(len(r) == len(rows[0]) for r in rows), path + ": records of different lengths"
    return [dict(zip(rows[0], r)) for r in rows[1:]]

def us(ns):   # an integer ns field in the JSON's us, exactly
    return Decimal(int(ns)).scaleb(-3)

def close(a, b, eps):
    assert abs(float(a) - float(b)) <= eps, (a, b)

# breakdown: eleven tables, values equal the JSON's
names = sorted(os.path.basename(p) for p in glob.glob(T + "/bd/*.csv"))
want = sorted(n + ".csv" for n in ["temporal", "kernel_types", "kernels", "streams", "launches", "memory_bandwidth",
                                   "threads", "stragglers", "straggler_pairs", "straggler_iterations",
                                   "straggler_collectives"])
assert names == want, names
assert not glob.glob(T + "/bd/.*"), "a temporary is left"
bd = jload(T + "/bd.json")
tp = table(T + "/bd/temporal.csv")
assert len(tp) == len(bd["ranks"]) == 2
for c, j in zip(tp, bd["ranks"]):
    assert int(c["rank"]) == j["rank"] and c["basis"] == j["basis"]
    for k in ["span", "idle", "compute", "non_compute", "communication", "memory"]:
        assert us(c[k + "_ns"]) == j[k + "_us"], (k, c, j)
    close(c["idle_pct"], j["idle_pct"], 0.0051)
kn = table(T + "/bd/kernels.csv")
assert len(kn) == len(bd["kernels"]) and any("," in r["name"] for r in kn)
for c, j in zip(kn, bd["kernels"]):
    assert c["name"] == j["name"] and int(c["count"]) == j["count"] and us(c["total_ns"]) == j["total_us"], (c, j)
    close(float(c["mean_ns"]) / 1e3, j["mean_us"], 0.0006)
st = table(T + "/bd/streams.csv")
assert [(int(c["stream"]), us(c["host_wait_ns"]), int(c["queue_max"])) for c in st] == \
       [(j["stream"], j["host_wait_us"], j["queue_max"]) for j in bd["streams"]]
sr = table(T + "/bd/stragglers.csv")
assert [(int(c["rank"]), us(c["waited_ns"]), us(c["caused_ns"])) for c in sr] == \
       [(j["rank"], j["waited_us"], j["caused_us"]) for j in bd["stragglers"]["ranks"]]
late = table(T + "/bd/straggler_collectives.csv")
assert len(late) == sum(len(c["late_us"]) for c in bd["stragglers"]["collectives"])
kt = table(T + "/bd/kernel_types.csv")
assert [(int(c["rank"]), c["kernel_type"], us(c["time_ns"])) for c in kt] == \
       [(j["rank"], j["kernel_type"], j["time_us"]) for j in bd["kernel_types"]]

# stats: -o rows.csv is --table rows; values equal the JSON's
rows = table(T + "/st/rows.csv")
assert open(T + "/st/rows.csv", "rb").read() == open(T + "/rows.csv", "rb").read()
sj = jload(T + "/st.json")
assert len(rows) == len(sj["rows"])
for c, j in zip(rows, sj["rows"]):
    assert c["name"] == j.get("name", "") and int(c["count"]) == j["count"], (c, j)
    assert us(c["total_ns"]) == j["total_us"] and us(c["min_ns"]) == j["min_us"] and us(c["max_ns"]) == j["max_us"]
    close(float(c["median_ns"]) / 1e3, j["median_us"], 0.0006)
win = table(T + "/st/windows.csv")
assert [(us(w["window_ns"]), int(w["iterations"])) for w in win] == [(j["window_us"], j["iterations"]) for j in sj["ranks"]]

# diff: ops and ranks
dj = jload(T + "/df.json")
ops = table(T + "/df/ops.csv")
assert len(ops) == sum(len(r["ops"]) for r in dj["ranks"])
flat = [o for r in dj["ranks"] for o in r["ops"]]
for c, j in zip(ops, flat):
    assert c["name"] == j["name"] and c["change"] == j["change"] and us(c["diff_ns"]) == j["diff_us"], (c, j)
rk = table(T + "/df/ranks.csv")
assert [(int(r["rank"]), int(r["added"]), int(r["removed"])) for r in rk] == \
       [(r["rank"], r["added"], r["removed"]) for r in dj["ranks"]]

# critical-path: every op row, summing to the path; categories too
cj = jload(T + "/cp.json")
cops = table(T + "/cp/ops.csv")
assert len(cops) == len(cj["top_ops"])
assert [(int(c["rank"]), c["kind"], c["name"], us(c["total_ns"])) for c in cops] == \
       [(j["rank"], j["kind"], j["name"], j["total_us"]) for j in cj["top_ops"]]
length_ns = int(cj["length_us"] * 1000)
assert sum(int(c["total_ns"]) for c in cops) == length_ns, (sum(int(c["total_ns"]) for c in cops), length_ns)
assert sum(int(c["time_ns"]) for c in table(T + "/cp/categories.csv")) == length_ns
path = table(T + "/cp/path.csv")
assert [(c["name"], us(c["start_ns"])) for c in path] == [(j["name"], j["start_us"]) for j in cj["path"]]
ed = {c["edge_kind"]: int(c["edges"]) for c in table(T + "/cp/edges.csv")}
assert ed == cj["edges_by_kind"] and sum(ed.values()) == cj["graph_edges"]

# info: slices = the file's complete ("X") events, counted here
d = json.load(gzip.open(F))
ev = d["traceEvents"] if isinstance(d, dict) else d
n_x = sum(1 for e in ev if e.get("ph") == "X")
ir = table(T + "/info.csv")
ij = jload(T + "/info.json")
assert len(ir) == 1 and int(ir[0]["slices"]) == n_x == ij["ranks"][0]["slices"], (ir, n_x)
PY

# bad cases: exit 2, a message, nothing written
"$BIN" breakdown --format csv --table nope "$F" >"$T/out" 2>"$T/err"
[ $? -eq 2 ] && grep -q "temporal, kernel_types" "$T/err" && [ ! -s "$T/out" ] || fail "unknown table: $(cat "$T/err")"
"$BIN" stats --format json -o "$T/x" "$F" 2>"$T/err"
[ $? -eq 2 ] && grep -q "csv" "$T/err" && [ ! -e "$T/x" ] || fail "-o with json: $(cat "$T/err")"
"$BIN" critical-path --format csv --table ops -o "$T/y" "$TF" 2>"$T/err" >/dev/null
[ $? -eq 2 ] && [ ! -e "$T/y" ] || fail "--table with -o: $(cat "$T/err")"
: >"$T/file"
"$BIN" breakdown --format csv -o "$T/file/sub" "$TF" 2>"$T/err"
[ $? -eq 2 ] && grep -q "$T/file" "$T/err" || fail "-o under a file: $(cat "$T/err")"
# the fourth table cannot be written (its temporary's name is taken by a
# folder): the three before it are taken back, no .csv and no temporary stay
mkdir -p "$T/half/.streams.csv.tmp"
"$BIN" breakdown --format csv -o "$T/half" "$TF" 2>"$T/err"
[ $? -eq 2 ] && grep -q "streams.csv" "$T/err" || fail "unwritable table: $(cat "$T/err")"
left=$(ls -A "$T/half")
[ "$left" = ".streams.csv.tmp" ] || fail "files left after a failed -o: $left"
[ $fails -eq 0 ] && echo "ok: csv tables equal the JSON and the counts; bad -o leaves nothing"
[ $fails -eq 0 ]
