#!/bin/sh
# warnings_reach_every_command.sh - one trace with four planted defects (a
# negative duration, invalid UTF-8 in a name, an `E` without its `B`, and a
# "trainscope" block counting 7 events the recorder dropped) draws the same
# four warning kinds, with the counts planted, in the "warnings" of every
# command's JSON (stats, breakdown, critical-path, replay, replay --windows,
# memory --trace, diff, optimize), every item in one shape, and in table mode
# each command says each kind on stderr. Also: breakdown's own warning (no
# straggler report for traces of two jobs) joins its list, replay
# --precision-plan reports a planted loss in its bf16 run in JSON and table,
# and export --sqlite writes the kinds and counts into its table warning.
# The expected kinds and counts are the defects written below, not the
# program's output.
BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: /usr/bin/python3 absent"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_warn.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Two iterations of two back-to-back elementwise kernels (something for every
# analysis, op fusion included), memory events, and the four defects.
"$PY" - "$tmp/t.json" <<'P'
import sys
def it(base, corr):
    ev = []
    ev.append('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%d,"dur":1000}' % (corr, base))
    for k, (op, kern) in enumerate((("aten::add", "vectorized_elementwise_add"), ("aten::relu", "vectorized_elementwise_relu"))):
        c = corr * 10 + k
        ev.append('{"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":1,"ts":%d,"dur":40}' % (op, base + 10 + 60 * k))
        ev.append('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d,"dur":10,'
                  '"args":{"correlation":%d}}' % (base + 20 + 60 * k, c))
        ev.append('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%d,"dur":100,'
                  '"args":{"correlation":%d,"device":0,"stream":7}}' % (kern, base + 40 + 100 * k, c))
    return ev
ev = it(0, 1) + it(1000, 2)
mem = '{"ph":"i","s":"t","cat":"[memory]","name":"[memory]","pid":1,"tid":1,"ts":%d,"args":{"Device Type":1,' \
      '"Device Id":0,"Addr":1,"Bytes":%d,"Total Allocated":%d,"Total Reserved":0}}'
ev += [mem % (20, 1000, 1000), mem % (500, -1000, 0)]
# the defects: 1 negative duration, 1 invalid byte, 1 unmatched E, 7 dropped
ev.append('{"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":300,"dur":-5}')
ev.append('{"ph":"X","cat":"cpu_op","name":"aten::bad@name","pid":1,"tid":1,"ts":400,"dur":20}')
ev.append('{"ph":"E","pid":1,"tid":1,"ts":600}')
doc = '{"distributedInfo":{"rank":0,"world_size":1},"trainscope":{"dropped_events":7},\n"traceEvents":[\n' + \
      ",\n".join(ev) + "\n]}\n"
open(sys.argv[1], "wb").write(doc.encode().replace(b"@", b"\xff"))
P
cp "$tmp/t.json" "$tmp/u.json"

run() {   # name, then the command's arguments; its JSON into $tmp/NAME.json
    name=$1; shift
    "$BIN" "$@" > "$tmp/$name.json" 2> "$tmp/$name.err" || fail "$name exited $?: $(cat "$tmp/$name.err")"
}
run stats stats --format json "$tmp/t.json"
run breakdown breakdown --format json "$tmp/t.json"
run critical_path critical-path --format json "$tmp/t.json"
run replay replay --format json "$tmp/t.json"
run windows replay --windows --format json "$tmp/t.json" "$tmp/u.json"
run memory memory --trace --format json "$tmp/t.json"
run diff diff --format json "$tmp/t.json" "$tmp/u.json"
run optimize optimize --passes op-fusion --format json "$tmp/t.json"

"$PY" - "$tmp" <<'P' || exit 1
import json, os, sys
tmp = sys.argv[1]
want = {"negative_duration": 1, "unmatched_end": 1, "recorder_losses": 7}   # invalid_utf8: checked below
files = {"windows": 2, "diff": 2}   # commands given the trace twice (t.json and u.json)
for name in ("stats", "breakdown", "critical_path", "replay", "windows", "memory", "diff", "optimize"):
    lines = [json.loads(l) for l in open(os.path.join(tmp, name + ".json")) if l.strip()]
    docs = [d for d in lines if "warnings" in d]
    assert len(docs) == 1, (name, "one warnings list", lines)
    w = docs[0]["warnings"]
    for x in w:
        assert sorted(x) == ["count", "file", "first", "kind", "rank"], (name, "shape", x)
    n = files.get(name, 1)
    for kind, count in want.items():
        got = [x for x in w if x["kind"] == kind]
        assert len(got) == n and all(x["count"] == count and x["rank"] == 0 for x in got), (name, kind, w)
        assert all(x["file"].endswith((".json")) for x in got), (name, kind, got)
    utf = [x for x in w if x["kind"] == "invalid_utf8"]
    assert len(utf) == n and all(x["count"] >= 1 for x in utf), (name, "invalid_utf8", w)
    assert any("negative duration" in x["first"] for x in w), (name, w)
    assert any("dropped 7 events" in x["first"] for x in w), (name, w)
P

# export --sqlite: the same kinds and counts as rows of table warning, and a
# line on stderr naming the file.
command -v sqlite3 >/dev/null || { echo "skip: the sqlite3 shell is missing (Debian package sqlite3)"; exit 77; }
"$BIN" export --sqlite "$tmp/t.db" "$tmp/t.json" >/dev/null 2>"$tmp/export.err" || fail "export exited $?"
got=$(sqlite3 -batch "$tmp/t.db" "SELECT group_concat(kind || '=' || count, ' ') FROM (SELECT kind, count FROM warning
      WHERE source = 'ingest' AND kind IN ('negative_duration', 'unmatched_end', 'recorder_losses') ORDER BY kind)")
[ "$got" = "negative_duration=1 recorder_losses=7 unmatched_end=1" ] || fail "export: table warning has $got"
[ "$(sqlite3 -batch "$tmp/t.db" "SELECT count(*) FROM warning WHERE kind = 'invalid_utf8' AND count >= 1")" = 1 ] ||
    fail "export: no invalid_utf8 row"
grep -q "warning: $tmp/t.json: [0-9]* input warnings" "$tmp/export.err" || fail "export: stderr: $(cat "$tmp/export.err")"

# An analysis's own warnings join the same list: breakdown's straggler report
# needs one job, and rank 1 of another world size makes it two.
sed 's/"rank":0,"world_size":1/"rank":1,"world_size":2/' "$tmp/t.json" > "$tmp/v.json"
"$BIN" breakdown --format json "$tmp/t.json" "$tmp/v.json" > "$tmp/two.json" 2> "$tmp/two.err" || fail "two jobs: exited $?"
"$PY" - "$tmp/two.json" <<'P' || exit 1
import json, sys
w = json.load(open(sys.argv[1]))["warnings"]
own = [x for x in w if x["kind"] == "breakdown"]
assert len(own) == 1 and "no straggler report" in own[0]["first"] and "different jobs" in own[0]["first"], w
assert own[0]["file"] == "" and own[0]["count"] == 1, own
assert sorted(x["rank"] for x in w if x["kind"] == "recorder_losses") == [0, 1], w
P

# replay --precision-plan: its runs' warnings too (bench/precision's runs, the
# bf16 one with a "trainscope" block counting 3 dropped events).
G=$(dirname "$0")/../../bench/precision
[ -f "$G/mlp_bf16.json.gz" ] || { echo "skip: no $G"; exit 77; }
"$PY" - "$G/mlp_bf16.json.gz" "$tmp/bf16.json" <<'P'
import gzip, json, sys
t = json.load(gzip.open(sys.argv[1]))
t["trainscope"] = {"dropped_events": 3}
json.dump(t, open(sys.argv[2], "w"))
P
"$BIN" replay --format json --precision-plan "$G/mlp_fp32.plan" --precision-trace "bf16=$tmp/bf16.json" \
    "$G/mlp_fp32.json.gz" > "$tmp/prec.json" 2> "$tmp/prec.err" || fail "precision plan exited $?: $(cat "$tmp/prec.err")"
"$PY" - "$tmp/prec.json" "$tmp/bf16.json" <<'P' || exit 1
import json, sys
w = json.load(open(sys.argv[1]))["warnings"]
got = [x for x in w if x["kind"] == "recorder_losses"]
assert len(got) == 1 and got[0]["count"] == 3 and got[0]["file"] == sys.argv[2], w
P
"$BIN" replay --precision-plan "$G/mlp_fp32.plan" --precision-trace "bf16=$tmp/bf16.json" "$G/mlp_fp32.json.gz" \
    > /dev/null 2> "$tmp/prec.err" || fail "precision plan (table) exited $?"
grep -q "warning: .*bf16.json: 3 recorder_losses" "$tmp/prec.err" || fail "precision plan (table): $(cat "$tmp/prec.err")"

# Table mode: each kind on stderr (piped: every line).
for c in "stats" "breakdown" "critical-path" "replay" "memory --trace" "diff" "optimize --passes op-fusion"; do
    case $c in diff) args="$tmp/t.json $tmp/u.json" ;; *) args="$tmp/t.json" ;; esac
    # shellcheck disable=SC2086
    "$BIN" $c $args > /dev/null 2> "$tmp/err" || fail "$c (table) exited $?: $(cat "$tmp/err")"
    for k in negative_duration invalid_utf8 unmatched_end "7 recorder_losses"; do
        grep -q "warning: .*$k" "$tmp/err" || fail "$c (table): no $k on stderr: $(cat "$tmp/err")"
    done
done
echo "warnings_reach_every_command: 4 planted kinds in 8 commands' JSON and 7 tables' stderr"
