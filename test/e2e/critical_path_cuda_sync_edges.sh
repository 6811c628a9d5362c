#!/bin/sh
# Kineto's cuda_sync events become graph edges (HTA test data
# kineto/critical_path/cuda_event_sync*). By hand from the raw events:
# - cuda_event_sync: 4 kernels + 1 memcpy, 5 launches by correlation, one
#   Stream Sync, an Event Sync on a recorded event, a second Event Sync
#   issued by cudaEventQuery, one Context Sync: 4 host-sync edges; the last
#   kernel (at::cuda::..., 36 us) is on the path through cudaEventSynchronize.
# - cuda_event_sync_multi_stream: one Stream Wait Event (stream 24 waits for
#   the event recorded on stream 20 after its sgemm) -> 1 stream_wait edge.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
CP=$DATA/kineto/critical_path
[ -f "$CP/cuda_event_sync/event_sync_trace.json.gz" ] || { echo "skip: data missing"; exit 77; }
"$BIN" critical-path --format json "$CP/cuda_event_sync/event_sync_trace.json.gz" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d["edges_by_kind"]
assert e["launch"] == 5 and e["host_sync"] == 4 and e["stream"] == 4, e
assert d["categories"]["compute_us"] == 36.0, d["categories"]
assert abs(sum(d["categories"].values()) - d["length_us"]) < 0.01
'
"$BIN" critical-path --format json "$CP/cuda_event_sync_multi_stream/event_sync_trace.json.gz" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d["edges_by_kind"]
assert e["stream_wait"] == 1 and e["launch"] == 6, e
'
echo ok
