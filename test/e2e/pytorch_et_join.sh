#!/bin/sh
# pytorch_et_join.sh - a PyTorch host execution trace joins the Kineto trace
# of the same run (HTA's test pair, kineto/execution_trace/): the ops joined
# and the data dependencies added equal what Python counts over the two raw
# files (ET nodes whose rf_id is a cpu_op/user_annotation's External id of the
# same name; dependencies by the rule pytorch_et.c documents: last producer
# of a tensor -> its reader, neither enclosing the other, not contradicted by
# the Kineto times); the graph gains those edges; gzip and zstd copies give the
# same; an ET alone, with another process's Kineto trace, or cut short, is
# refused (exit 2, naming the file and byte).
set -u
BIN=${TS_BIN:-build/trainscope}
D=${TS_DATA:-../shared/data}/kineto
ET=$D/execution_trace/benchmark_simple_add_et.json.gz
KT=$D/execution_trace/benchmark_simple_add_trace.json.gz
[ -f "$ET" ] && [ -f "$KT" ] || { echo "skip: no $ET"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails+1)); }

want=$(python3 - "$ET" "$KT" <<'PY'
import gzip, json, sys
et = json.load(gzip.open(sys.argv[1]))
kt = json.load(gzip.open(sys.argv[2]))
ops = {}
for e in kt["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation"):
        ops.setdefault(e["args"]["External id"], e)
nodes = et["nodes"]
by_id = {n["id"]: i for i, n in enumerate(nodes)}
root = lambda n: n["name"].startswith("[pytorch|profiler|execution_trace|")
joined = {}
for i, n in enumerate(nodes):
    k = ops.get(n["rf_id"])
    if not root(n) and k is not None and k["name"] == n["name"]:
        joined[i] = k
def ancestors(i):
    out, cur = set(), nodes[i]["parent"]
    while cur in by_id and by_id[cur] not in out:
        out.add(by_id[cur]); cur = nodes[by_id[cur]]["parent"]
    return out
def tensors(vals):
    return [(v[0], v[1]) for v in vals if isinstance(v, list) and len(v) == 6 and
            all(isinstance(x, int) and not isinstance(x, bool) for x in v[:5]) and isinstance(v[5], str)]
producer, deps = {}, 0
for i, n in enumerate(nodes):
    if i in joined:
        for t in tensors(n["inputs"]):
            p = producer.get(t)
            if p is None or p == i or p not in joined or joined[p] is joined[i]: continue
            if p in ancestors(i) or i in ancestors(p): continue
            if joined[p]["ts"] + joined[p]["dur"] > joined[i]["ts"]: continue
            deps += 1
    for t in tensors(n["outputs"]):
        producer[t] = i
print("%d of %d ops joined by External id, %d data dependencies added" % (
    len(joined), sum(1 for n in nodes if not root(n)), deps))
PY
)
"$BIN" info "$ET" "$KT" > "$T/info" 2>"$T/err" || fail "info exited $?: $(cat "$T/err")"
grep -q "execution_trace .*(schema 1.0.1): $want" "$T/info" && echo "ok join: $want" ||
    fail "join: want '$want', got: $(grep execution_trace "$T/info")"
# the data dependencies are graph edges: more edges than the Kineto trace alone
e1=$("$BIN" critical-path "$KT" 2>/dev/null | sed -n 's/.* graph nodes, \([0-9]*\) edges.*/\1/p')
e2=$("$BIN" critical-path "$ET" "$KT" 2>/dev/null | sed -n 's/.* graph nodes, \([0-9]*\) edges.*/\1/p')
[ -n "$e1" ] && [ -n "$e2" ] && [ "$e2" -gt "$e1" ] && echo "ok graph: $e1 -> $e2 edges" || fail "graph edges $e1 -> $e2"
# the pair in a directory (the bounded loader lists it): the same join, the same edges
mkdir "$T/dir" && cp "$ET" "$KT" "$T/dir/"
e3=$("$BIN" critical-path "$T/dir" 2>/dev/null | sed -n 's/.* graph nodes, \([0-9]*\) edges.*/\1/p')
[ "$e3" = "$e2" ] && echo "ok directory: $e3 edges" || fail "graph edges of the directory: $e3, of the files: $e2"

# compressed copies of the ET: the same join
gzip -dc "$ET" > "$T/et.json"; zstd -q -c "$T/et.json" > "$T/et.json.zst"
for f in "$T/et.json" "$T/et.json.zst"; do
    "$BIN" info "$f" "$KT" 2>/dev/null | grep -q "$want" || fail "join of $f differs"
done

# expect NAME PATTERN ARGS...: exit 2, stderr matching PATTERN
expect() {
    name=$1 pat=$2; shift 2
    "$BIN" info "$@" >"$T/out" 2>"$T/err"; rc=$?
    if [ $rc -ne 2 ] || ! grep -q "$pat" "$T/err" || [ -s "$T/out" ]; then fail "$name (exit $rc): $(cat "$T/err")"
    else echo "ok $name: $(cat "$T/err")"; fi
}
expect alone "et.json: byte 0: not a Chrome trace but a PyTorch execution trace (Chakra ET), which has no op times: give the Kineto trace" "$T/et.json"
expect other_process "et.json: byte [0-9]*: .* no Kineto trace given is of its process (pid 563677)" \
    "$T/et.json" "$D/nccl_parser_config/nccl_data.json.gz"
head -c 5000 "$T/et.json" > "$T/cut.json"
expect cut "cut.json: byte 5000: unexpected end of input" "$T/cut.json" "$KT"
exit $fails
