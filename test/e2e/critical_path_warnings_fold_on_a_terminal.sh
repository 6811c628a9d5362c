#!/bin/sh
# critical_path_warnings_fold_on_a_terminal.sh - regression 2026-11-26 (issue
# 21): on a multi-rank GPU job critical-path printed a warning line per file
# and kind (overlapping slices; unbound flows before Kineto's runtime marks
# stopped counting as such) and per rank (stream waits without cuda_sync):
# 24 lines before its answer on 8 ranks, 16 now. On a terminal
# they fold into one line per kind, summed over files and ranks (stats and
# breakdown fold their ingest warnings alike); --verbose,
# a pipe and the JSON keep every line. No real 8-rank GPU set is in the shared
# data: the ranks here are 8 copies of PARAM AlexNet's real Kineto trace
# (critical_path/alexnet), each labelled rank r of an 8-rank job. The folded
# sums are checked against the unfolded lines of the same run.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}/kineto
SRC=$DATA/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz
[ -f "$SRC" ] || { echo "skip: $SRC missing"; exit 77; }
command -v script >/dev/null || { echo "skip: script (util-linux) missing, no terminal to test on"; exit 77; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 - "$SRC" "$TMP" <<'PY'
import gzip, json, sys
t = json.load(gzip.open(sys.argv[1]))
for r in range(8):
    t["distributedInfo"] = {"rank": r, "world_size": 8}
    json.dump(t, open("%s/rank%d.json" % (sys.argv[2], r), "w"))
PY
"$BIN" critical-path "$TMP"/rank*.json 2>"$TMP/piped" >"$TMP/out_piped"
"$BIN" critical-path --format json "$TMP"/rank*.json >"$TMP/cp.json"
script -qc "$BIN critical-path $TMP/rank0.json $TMP/rank1.json $TMP/rank2.json $TMP/rank3.json $TMP/rank4.json $TMP/rank5.json $TMP/rank6.json $TMP/rank7.json" /dev/null | tr -d '\r' >"$TMP/tty"
script -qc "$BIN stats $TMP/rank0.json $TMP/rank1.json $TMP/rank2.json $TMP/rank3.json $TMP/rank4.json $TMP/rank5.json $TMP/rank6.json $TMP/rank7.json" /dev/null | tr -d '\r' >"$TMP/tty_stats"
script -qc "$BIN critical-path --verbose $TMP/rank0.json $TMP/rank1.json $TMP/rank2.json $TMP/rank3.json $TMP/rank4.json $TMP/rank5.json $TMP/rank6.json $TMP/rank7.json" /dev/null | tr -d '\r' >"$TMP/tty_v"
/usr/bin/python3 - "$TMP" <<'PY'
import json, re, sys
d = sys.argv[1]
full = [l for l in open(d + "/piped") if l.startswith("trainscope: warning:")]
tty = [l for l in open(d + "/tty") if l.startswith("trainscope: warning:")]
tty_v = [l for l in open(d + "/tty_v") if l.startswith("trainscope: warning:")]
assert len(full) == 16 and len(tty_v) == 16, (len(full), len(tty_v))
# per file: overlapping_slices (no unbound_flow: Kineto's runtime marks); per rank: the stream waits
flows = [int(m.group(1)) for l in full for m in [re.search(r": (\d+) unbound_flow", l)] if m]
over = [int(m.group(1)) for l in full for m in [re.search(r": (\d+) overlapping_slices", l)] if m]
waits = [tuple(map(int, m.groups())) for l in full for m in [re.search(r"rank \d+: (\d+) of (\d+) cudaStreamWaitEvent", l)] if m]
assert flows == [] and len(over) == len(waits) == 8, (flows, over, waits)
text = "".join(tty)
assert len(tty) == 3, text
assert "%d overlapping_slices in 8 files" % sum(over) in text, text
assert "ranks 0-7, summed: %d of %d cudaStreamWaitEvent" % (sum(w[0] for w in waits), sum(w[1] for w in waits)) in text, text
assert "16 warning lines folded into these 2; --verbose lists each" in text, text
# the answer follows on the terminal as when piped
assert "critical path of" in open(d + "/tty").read()
# stats folds its ingest warnings alike
st = [l for l in open(d + "/tty_stats") if l.startswith("trainscope: warning:")]
assert len(st) == 2 and "%d overlapping_slices in 8 files" % sum(over) in "".join(st), st
cp = json.load(open(d + "/cp.json"))
ingest = [w for w in cp["warnings"] if w["file"]]
assert len(cp["warnings"]) == 16 and len(ingest) == 8, cp["warnings"]
print("8 ranks: 16 warning lines piped and with --verbose, 3 on a terminal (%d overlapping slices summed)" % sum(over))
PY
