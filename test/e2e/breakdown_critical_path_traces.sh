#!/bin/sh
# breakdown of the PARAM AlexNet / simple_add and cuda_event_sync traces (HTA
# test data critical_path/): cuda_sync events carry a "stream" arg, so HTA
# counts them as GPU ops, "Context Sync" (stream 4294967295, tid -1) included.
# Expected numbers from test/e2e/breakdown_hta_reference.py on each file.
# Tolerance 0.1 % or 0.3 us: these traces hold 16-digit integer microsecond
# timestamps, which ingest converts to ns within ~0.1 us.
set -e
[ -x /usr/bin/python3 ] || { echo "skip: /usr/bin/python3 missing"; exit 77; }
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}/kineto/critical_path
[ -d "$DATA" ] || { echo "skip: $DATA missing"; exit 77; }
check() {  # FILE SPAN IDLE COMPUTE NON_COMPUTE (us)
    "$BIN" breakdown --format json "$1" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"][0]
want = [float(x) for x in sys.argv[1:5]]
for key, w in zip(["span_us", "idle_us", "compute_us", "non_compute_us"], want):
    if abs(r[key] - w) > max(abs(w) * 1e-3, 0.3):
        sys.exit(f"{key}: got {r[key]}, expected {w}")
' "$2" "$3" "$4" "$5"
}
check "$DATA"/alexnet/*.json.gz 12996011.000 12929684.000 11248.000 55079.000
check "$DATA"/simple_add/*.json.gz 16464339.000 16414376.000 11339.000 38624.000
check "$DATA"/cuda_event_sync/event_sync_trace.json.gz 263.000 207.000 54.000 2.000
check "$DATA"/cuda_event_sync_multi_stream/event_sync_trace.json.gz 19506.000 19132.000 371.000 3.000
echo ok
