#!/bin/sh
# breakdown's straggler report on several ranks.
# (1) A hand-made 2-rank trace (labelled: written here, no profiler): rank 0
#     enters its first all-reduce at 1 ms, rank 1 at 3 ms, both leave at 5 ms;
#     in step 2 rank 1 enters at 11 ms, rank 0 at 12 ms, both leave at 15 ms.
#     By hand: rank 0 waits 2 ms for rank 1 (step 1), rank 1 waits 1 ms for
#     rank 0 (step 2); each is last once.
# (2) The real matched pair of a 128-rank NCCL job (kineto/trace_filter):
#     the figures must add up (waits = what the stragglers caused = the pairs'
#     sum = the iterations' sum; one last rank per instance).
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
T=$(mktemp -d); O=$(mktemp -d); trap 'rm -rf "$T" "$O"' EXIT
/usr/bin/python3 - "$T" <<'PY'
import json, sys
def rank(r, colls):
    ev = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i + 1}", "pid": 1, "tid": 1,
           "ts": i * 10000, "dur": 10000} for i in range(2)]
    ev += [{"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1, "ts": a, "dur": b - a}
           for a, b in colls]
    json.dump({"distributedInfo": {"rank": r, "world_size": 2}, "traceEvents": ev},
              open(f"{sys.argv[1]}/rank{r}.json", "w"))
rank(0, [(1000, 5000), (12000, 15000)])
rank(1, [(3000, 5000), (11000, 15000)])
PY
"$BIN" breakdown --format json "$T" >"$O/out.json"
"$BIN" breakdown "$T" | grep -q "ranks waited 3.00ms in all"
/usr/bin/python3 - "$O/out.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["stragglers"]
r = {x["rank"]: x for x in s["ranks"]}
assert (r[0]["waited_us"], r[0]["caused_us"], r[0]["last"], r[0]["max_late_us"]) == (2000, 1000, 1, 1000), r[0]
assert (r[1]["waited_us"], r[1]["caused_us"], r[1]["last"], r[1]["max_late_us"]) == (1000, 2000, 1, 2000), r[1]
assert {(w["waiter"], w["straggler"]): w["wait_us"] for w in s["waits"]} == {(0, 1): 2000, (1, 0): 1000}
it = {(x["iteration"], x["rank"]): (x["waited_us"], x["caused_us"]) for x in s["iterations"]}
assert it == {(1, 0): (2000, 0), (1, 1): (0, 2000), (2, 0): (0, 1000), (2, 1): (1000, 0)}, it
c = s["collectives"]
assert [(x["last_rank"], x["spread_us"], x["late_us"]) for x in c] == [(1, 2000, {"0": 0, "1": 2000}),
                                                                      (0, 1000, {"0": 1000, "1": 0})], c
PY
F=$DATA/kineto/trace_filter
[ -d "$F" ] || { echo "skip: $F missing"; exit 77; }
"$BIN" breakdown --format json "$F" | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)["stragglers"]
tot = s["total_wait_us"]
assert tot > 0
near = lambda a, b: abs(a - b) < 0.01
assert near(sum(r["waited_us"] for r in s["ranks"]), tot) and near(sum(r["caused_us"] for r in s["ranks"]), tot)
assert near(sum(w["wait_us"] for w in s["waits"]), tot)
assert near(sum(i["waited_us"] for i in s["iterations"]), tot) and near(sum(i["caused_us"] for i in s["iterations"]), tot)
assert sum(r["last"] for r in s["ranks"]) == len(s["collectives"]) > 0
for c in s["collectives"]:
    assert near(max(c["late_us"].values()), c["spread_us"]) and min(c["late_us"].values()) == 0
'
echo ok
