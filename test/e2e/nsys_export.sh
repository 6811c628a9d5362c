#!/bin/sh
# An Nsight Systems SQLite export (nsys 2024.5.1, CloverLeaf on an A100;
# ../shared/data/nsys/) through the CLI: `info` names the layout found, `stats
# --by category` and `breakdown` give what Python's sqlite3 computes from the
# same tables (the independent values: counts and totals by SQL, the union of
# kernel intervals by a sweep), and databases that are not exports are
# refused with exit 2, a message naming the file, and nothing on stdout.
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
F=$DATA/nsys/cloverleaf-cuda.nsys.sqlite
[ -f "$F" ] || { echo "skip: $F missing"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

"$BIN" info "$F" >"$T/info"
grep -q "format  *nsys-sqlite" "$T/info"
grep -q "nsys_version  *2024.5.1.113" "$T/info"
grep -q "nsys_layout  *META_DATA_EXPORT (nsys 2023.x and later), ENUM_\* tables" "$T/info"

"$BIN" stats --by category --format json "$F" >"$T/stats.json"
"$BIN" breakdown --format json "$F" >"$T/bd.json"
/usr/bin/python3 - "$F" "$T/stats.json" "$T/bd.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda sql: db.execute(sql).fetchone()
rows = {r["category"]: r for r in json.load(open(sys.argv[2]))["rows"]}
for cat, table in (("kernel", "CUPTI_ACTIVITY_KIND_KERNEL"), ("memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"),
                   ("runtime", "CUPTI_ACTIVITY_KIND_RUNTIME")):
    n, total = q(f"SELECT count(*), sum(end - start) FROM {table}")
    got = rows[cat]
    assert got["count"] == n, (cat, got["count"], n)
    assert abs(got["total_us"] - total / 1e3) < 0.0005, (cat, got["total_us"], total / 1e3)
# breakdown: no ProfilerStep, so every kernel and memcpy counts; span and
# busy time from the intervals themselves (event syncs are host waits)
iv = sorted(db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL "
                       "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY").fetchall())
busy, cur = 0, None
for a, b in iv:
    if cur and a <= cur[1]:
        cur[1] = max(cur[1], b)
    else:
        if cur: busy += cur[1] - cur[0]
        cur = [a, b]
busy += cur[1] - cur[0]
span = max(b for _, b in iv) - iv[0][0]
r = json.load(open(sys.argv[3]))["ranks"][0]
assert r["basis"] == "gpu", r
assert abs(r["span_us"] - span / 1e3) < 0.0005, (r["span_us"], span)
assert abs(r["idle_us"] - (span - busy) / 1e3) < 0.0005, (r["idle_us"], span - busy)
PY

# not an export, an unknown layout, a cut-short database
/usr/bin/python3 - "$T" <<'PY'
import sqlite3, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/other.sqlite"); c.execute("CREATE TABLE t (a)"); c.commit(); c.close()
c = sqlite3.connect(d + "/layout.sqlite")
c.execute("CREATE TABLE StringIds (id, value)"); c.execute("CREATE TABLE OSRT_API (begin, finish, globalTid, nameId)")
c.commit(); c.close()
PY
head -c 20000 "$F" >"$T/cut.sqlite"
expect() {  # FILE MESSAGE (after "trainscope: FILE: byte ")
    if "$BIN" stats "$1" >"$T/out" 2>"$T/err"; then echo "accepted $1"; exit 1; else rc=$?; fi
    [ "$rc" = 2 ] || { echo "exit $rc for $1"; exit 1; }
    [ ! -s "$T/out" ] || { echo "output for $1"; exit 1; }
    grep -qF "trainscope: $1: byte $2" "$T/err" || { echo "message for $1:"; cat "$T/err"; exit 1; }
}
expect "$T/other.sqlite" "0: an SQLite database, but not an Nsight Systems export (no StringIds table)"
expect "$T/layout.sqlite" "0: unknown nsys export layout: table OSRT_API has no column start"
expect "$T/cut.sqlite" "20000: SQLite database cut short: its header says 2154496 bytes"
echo ok
