#!/bin/sh
# breakdown of the matched pair of ranks of a real 128-rank NCCL job (HTA test
# data trace_filter/), given as a directory: one row per rank. Expected
# numbers from test/e2e/breakdown_hta_reference.py on each file (see
# breakdown_nccl_matches_hta_definitions.sh); both ranks carry ProfilerStep#551
# and #552, so only GPU ops launched before #552 count (HTA's filter).
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
D=$DATA/kineto/trace_filter
[ -d "$D" ] || { echo "skip: $D missing"; exit 77; }
OUT=$(mktemp); trap 'rm -f "$OUT"' EXIT
"$BIN" breakdown --format json "$D" >"$OUT"
/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def near(got, want, what, rel=1e-4, abs_=0.3):
    if abs(got - want) > max(abs(want) * rel, abs_):
        sys.exit(f"{what}: got {got}, expected {want}")
want = {0: (600058.0, 321378.0, 106252.0, 172428.0, 11.81),
        1: (600674.0, 328671.0, 135548.0, 136455.0, 20.05)}
assert [r["rank"] for r in d["ranks"]] == [0, 1], d["ranks"]
for r in d["ranks"]:
    span, idle, comp, non, ov = want[r["rank"]]
    near(r["span_us"], span, f"rank {r['rank']} span")
    near(r["idle_us"], idle, f"rank {r['rank']} idle")
    near(r["compute_us"], comp, f"rank {r['rank']} compute")
    near(r["non_compute_us"], non, f"rank {r['rank']} non-compute")
    near(r["comm_comp_overlap_pct"], ov, f"rank {r['rank']} overlap", abs_=0.01)
    assert r["iterations_filtered"]
# kernel-type sweep per rank and summed over ranks (rank -1), as HTA's
# get_gpu_kernel_breakdown aggregates: COMPUTATION alone, COMMUNICATION alone,
# both at once (reference "combo" masks 1, 2, 3)
kt = {(k["rank"], k["kernel_type"]): k["time_us"] for k in d["kernel_types"]}
for rank, comp, comm, both in ((0, 83182.0, 171780.0, 23056.0), (1, 101841.0, 133804.0, 33691.0),
                               (-1, 185023.0, 305584.0, 56747.0)):
    near(kt[(rank, "COMPUTATION")], comp, f"rank {rank} COMPUTATION")
    near(kt[(rank, "COMMUNICATION")], comm, f"rank {rank} COMMUNICATION")
    near(kt[(rank, "COMPUTATION overlapping COMMUNICATION")], both, f"rank {rank} both")
print("ok")
PY
