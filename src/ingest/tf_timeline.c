/* tf_timeline.c - TensorFlow 1 timelines: the Chrome-trace JSON that
 * tensorflow/python/client/timeline.py writes from a RunMetadata's step
 * stats, recognized by its process names and mapped onto devices and
 * streams (chrome_json.c parses the file; this runs before the rank is
 * finished).
 *
 * Not for: TF2's profiler (XPlane, xplane.c). timeline.py gives each
 * step-stats device two pids, named "<device> Compute" and "<device>
 * Tensors", plus "Allocators"; ops are "X" events of category "Op" named by
 * op type (node name in args.name), on tid = the step stats' thread id.
 * Devices are "/job:J/replica:R/task:T/device:GPU:0" (older TF: ".../gpu:0"):
 *   <gpu>/stream:K Compute   kernels CUPTI saw on stream K  -> GPU stream (device, K), kernel
 *                            (dPRO's fork of timeline.py: also /stream#K)
 *   <gpu>/memcpy Compute     copies                          -> GPU stream (device, TS_TF1_MEMCPY_STREAM), memcpy
 *                            (the fork: /stream:MemcpyHtoD and /stream:MemcpyDtoH, the next two numbers)
 *   <gpu>/stream:all Compute every kernel again, on one line -> dropped when the device has per-stream
 *                                                               lines, else its stream 0
 *   <gpu> Compute            the executor's op launches      -> CPU ops on the host thread
 *   <cpu> Compute            ops run on the CPU              -> CPU ops
 *   /host:CPU... Compute     the fork's HostTracer lines      -> CPU ops
 * The Tensors processes hold object events (phases N/O/D), which the JSON
 * reader counts and skips. Dataflow arrows (category "DataFlow", s/t)
 * become data dependencies ("data_dep" flows: the graph's dep edges).
 */
#include "ingest/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/* The stream number given to a device's "/memcpy" line (CUDA stream
 * handles are small numbers; this one is not a real stream). */
#define TS_TF1_MEMCPY_STREAM 1000000

typedef enum tf_line { TF_NONE = 0, TF_HOST, TF_STREAM, TF_MEMCPY, TF_ALL } tf_line;

typedef struct tf_dev {
    tf_line line;
    bool    gpu;
    int32_t device;
    int64_t stream;
} tf_dev;

/* A "<device>[/stream:K|/stream:all|/memcpy] Compute" process name. */
static tf_dev parse_name(const char *s)
{
    tf_dev d = {TF_NONE, false, -1, -1};
    size_t n = strlen(s);
    if (n < 8 || strcmp(s + n - 8, " Compute") != 0) return d;
    if (strstr(s, "/host:CPU")) { d.line = TF_HOST; return d; }   /* HostTracer lines (and their Launch line) */
    const char *p = strstr(s, "/device:");
    if (p) p += 8;
    else if ((p = strstr(s, "/gpu:")) || (p = strstr(s, "/cpu:")) || (p = strstr(s, "/GPU:")) || (p = strstr(s, "/CPU:"))) p++;
    else return d;
    const char *colon = strchr(p, ':');
    if (!colon || colon[1] < '0' || colon[1] > '9') return d;
    d.gpu = (colon - p == 3 && !strncasecmp(p, "gpu", 3));
    char *end;
    long dev = strtol(colon + 1, &end, 10);
    if (dev < 0 || dev > 65535) return d;
    d.device = (int32_t)dev;
    if (!strcmp(end, " Compute")) { d.line = TF_HOST; return d; }
    if (!d.gpu) return d;
    if (!strcmp(end, "/memcpy Compute")) { d.line = TF_MEMCPY; d.stream = TS_TF1_MEMCPY_STREAM; return d; }
    if (!strcmp(end, "/stream:all Compute")) { d.line = TF_ALL; d.stream = 0; return d; }
    if (!strcmp(end, "/stream:MemcpyHtoD Compute")) { d.line = TF_MEMCPY; d.stream = TS_TF1_MEMCPY_STREAM + 1; return d; }
    if (!strcmp(end, "/stream:MemcpyDtoH Compute")) { d.line = TF_MEMCPY; d.stream = TS_TF1_MEMCPY_STREAM + 2; return d; }
    if ((!strncmp(end, "/stream:", 8) || !strncmp(end, "/stream#", 8)) && end[8] >= '0' && end[8] <= '9') {
        char *e2;
        long k = strtol(end + 8, &e2, 10);
        if (!strcmp(e2, " Compute") && k >= 0) { d.line = TF_STREAM; d.stream = k; }
    }
    return d;
}

/* One pass over the slices: each takes its track's kind (TS_KIND_COUNT =
 * left as read), and the rows on dropped tracks are counted. Why one pass:
 * a pass per line was most of this mapping's cost on long timelines. */
static uint64_t set_kinds(ts_rank *r, const uint8_t *kind, const bool *drop)
{
    uint64_t n_dropped = 0;
    const uint32_t *track = r->slices.track;
    uint8_t *k = r->slices.kind;
    for (uint32_t s = 0; s < r->slices.n; s++) {
        uint32_t t = track[s];
        if (kind[t] != TS_KIND_COUNT) k[s] = kind[t];
        n_dropped += drop[t];
    }
    return n_dropped;
}

/* timeline.py's dataflow arrows ("DataFlow" s at the producer's end, t at
 * the consumer's start) as data dependencies: the start moved 1 ns into
 * the producer (the binder takes the slice around a start), the t made the
 * flow's end. */
static uint64_t dataflow_as_deps(ts_rank *r)
{
    uint32_t df = ts__str_find(&r->strings, "DataFlow", 8), dep = ts__rank_intern(r, "data_dep", 8);
    uint64_t n = 0;
    for (uint32_t i = 0; df && i < r->n_flow_ends; i++) {
        ts_flow_end *e = &r->flow_ends[i];
        if (e->cat != df) continue;
        e->cat = dep;
        if (e->phase == 's') e->ts_ns -= 1, n++;
        else if (e->phase == 't') e->phase = 'f', e->bind_enclosing = true;
    }
    return n;
}

bool ts__tf1_timeline_map(ts_rank *r, uint32_t first_track, char *note, size_t cap)
{
    uint32_t nt = r->n_tracks;
    tf_dev *dev = ts__calloc(nt ? nt : 1, sizeof *dev);
    bool *drop = ts__calloc(nt ? nt : 1, sizeof *drop);
    bool any = false;
    for (uint32_t t = first_track; dev && drop && t < nt; t++) {
        const ts_track *tr = &r->tracks[t];
        if (tr->kind != TS_TRACK_THREAD || !tr->process_name_id) continue;
        dev[t] = parse_name(ts__rank_str(r, tr->process_name_id));
        any |= dev[t].line != TF_NONE;
    }
    if (!any) {
        ts__free(dev, (nt ? nt : 1) * sizeof *dev);
        ts__free(drop, (nt ? nt : 1) * sizeof *drop);
        return false;
    }
    uint32_t n_streams = 0, n_host = 0, n_all_dropped = 0;
    uint64_t n_dropped = 0;
    for (uint32_t t = 0; t < nt; t++) {
        if (dev[t].line != TF_ALL) continue;
        for (uint32_t u = 0; u < nt; u++)
            if ((dev[u].line == TF_STREAM || dev[u].line == TF_MEMCPY) && dev[u].device == dev[t].device) drop[t] = true;
        n_all_dropped += drop[t];
    }
    uint8_t *kind = ts__malloc(nt ? nt : 1);
    if (!kind) r->oom = true;
    for (uint32_t t = 0; kind && t < nt; t++) {
        ts_track *tr = &r->tracks[t];
        kind[t] = TS_KIND_COUNT;
        if (dev[t].line == TF_NONE || drop[t]) continue;
        if (dev[t].line == TF_HOST) { kind[t] = TS_KIND_CPU_OP; n_host++; continue; }
        tr->kind = TS_TRACK_GPU_STREAM;
        tr->device = dev[t].device;
        tr->stream = dev[t].stream;
        kind[t] = dev[t].line == TF_MEMCPY ? TS_KIND_GPU_MEMCPY : TS_KIND_KERNEL;
        n_streams++;
    }
    if (kind) n_dropped = set_kinds(r, kind, drop);
    ts__free(kind, nt ? nt : 1);
    if (n_dropped) ts__rank_drop_slices(r, drop);
    uint64_t n_deps = dataflow_as_deps(r);
    snprintf(note, cap, "%u GPU stream lines, %u host op lines; %u stream:all lines dropped (%llu ops seen again "
             "on per-stream lines); %llu dataflow arrows as dependencies", n_streams, n_host, n_all_dropped,
             (unsigned long long)n_dropped, (unsigned long long)n_deps);
    ts__free(dev, nt * sizeof *dev);
    ts__free(drop, nt * sizeof *drop);
    return true;
}
