#!/bin/sh
# A TensorFlow 2 profiler capture (BERT SQuAD on 8 GPUs, tensorflow/profiler
# demo data: ../shared/data/tensorflow/) through the CLI, against the
# protobuf Python module decoding the same file with xplane.proto's messages
# (bench/xplane_pb2_dynamic.py: an independent decoder): every timed event a
# slice; host ops, GPU kernels and copies counted and summed as Python sums
# them (stats' window is half-open, so a host event starting exactly at the
# end of the trace is not in it: the script says how many). A file cut short
# and one that is not protobuf are refused with exit 2 and the byte.
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
/usr/bin/python3 -c "import google.protobuf" 2>/dev/null || { echo "skip: python3-protobuf missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
F=${TS_DATA:-../shared/data}/tensorflow/bert-squad-8gpu.xplane.pb.gz
[ -f "$F" ] || { echo "skip: $F missing"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$BIN" info "$F" >"$T/info"
"$BIN" stats --by category --format json "$F" >"$T/stats.json"
grep -q "format  *tensorflow-xplane" "$T/info"
/usr/bin/python3 - "$F" "$T/info" "$T/stats.json" "$(dirname "$0")/../../bench" <<'PY'
import gzip, json, re, sys
sys.path.insert(0, sys.argv[4])
import xplane_pb2_dynamic as X
s = X.classes()()
s.ParseFromString(gzip.open(sys.argv[1]).read())
ev = []   # (plane, line name, start ns, dur ns)
for p in s.planes:
    for l in p.lines:
        for e in l.events:
            if e.num_occurrences and not e.offset_ps:
                continue
            ev.append((p.name, l.display_name or l.name, l.timestamp_ns + e.offset_ps // 1000, e.duration_ps // 1000))
got = int(re.search(r"slices +(\d+)", open(sys.argv[2]).read())[1])
assert got == len(ev), (got, len(ev))
end = max(t + d for _, _, t, d in ev)
rows = {r["category"]: r for r in json.load(open(sys.argv[3]))["rows"]}
def check(cat, keep):
    sel = [(t, d) for pl, ln, t, d in ev if keep(pl, ln) and t < end]
    assert rows[cat]["count"] == len(sel), (cat, rows[cat]["count"], len(sel))
    assert abs(rows[cat]["total_us"] - sum(d for _, d in sel) / 1e3) < 0.0005, (cat, rows[cat]["total_us"])
gpu = lambda pl, ln: "/device:GPU:" in pl and "Stream #" in ln
check("cpu_op", lambda pl, ln: pl == "/host:CPU")
check("kernel", lambda pl, ln: gpu(pl, ln) and "Memcpy" not in ln)
check("memcpy", lambda pl, ln: gpu(pl, ln) and "Memcpy" in ln)
PY
# Two gzip members (the file split in two, each half gzipped, concatenated):
# the one-call inflate leaves them to the streaming reader; the same trace.
gzip -dc "$F" | head -c 1000000 | gzip >"$T/two.xplane.pb.gz"
gzip -dc "$F" | tail -c +1000001 | gzip >>"$T/two.xplane.pb.gz"
"$BIN" info "$F" | tail -n +2 >"$T/info.one"
"$BIN" info "$T/two.xplane.pb.gz" | tail -n +2 >"$T/info.two"
cmp "$T/info.one" "$T/info.two" || { echo "two gzip members read differently"; exit 1; }
# info's counts-only load (stats checked, not kept) counts what a whole load does.
"$BIN" info --in-memory "$F" | tail -n +2 >"$T/info.whole"
cmp "$T/info.one" "$T/info.whole" || { echo "info's counts-only load differs from a whole load"; exit 1; }
# A damaged byte inside the deflate stream: exit 2, the compressed byte named.
/usr/bin/python3 -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[200000] ^= 0xff; open(sys.argv[2], 'wb').write(b)" "$F" "$T/bad.xplane.pb.gz"
gzip -dc "$F" | head -c 100000 >"$T/cut.xplane.pb"
printf 'not a protobuf\377\377' >"$T/text.xplane.pb"
for f in cut text bad; do
    g=$T/$f.xplane.pb; [ "$f" = bad ] && g=$g.gz
    if "$BIN" stats "$g" >"$T/out" 2>"$T/err"; then echo "accepted $f"; exit 1; else rc=$?; fi
    [ "$rc" = 2 ] && [ ! -s "$T/out" ] || { echo "exit $rc for $f"; exit 1; }
    grep -q "trainscope: $g: byte [0-9]*: " "$T/err" || { cat "$T/err"; exit 1; }
done
echo ok
