/* fuzz_ctf.c - libFuzzer target for the CTF reader (src/ingest/ctf.c): the
 * input is the data stream of an LTTng-like trace whose metadata is fixed
 * (fuzz/ctf_metadata.tsdl: every trainscope tracepoint and three of another
 * provider, other:call_entry/call_exit/thing with string fields, written by
 * babeltrace2's own CTF writer through test/e2e/lttng_ctf_gen.py), so
 * libbabeltrace2 decodes mutated packets into events with any field values,
 * any clock values and any discarded counts, and the reader must take them
 * all. babeltrace2 needs a directory, so each input is written to a file in
 * one made at start (tmpfs where there is one). Slow next to the other
 * targets (a babeltrace graph per input).
 * Only streams whose packets tile the input are handed over (sound_packets).
 * libbabeltrace2 2.0.4 runs away on a packet whose size field is 0 (3.8 GB
 * in 38 s on one 300-byte input, `babeltrace2 DIR` too) and aborts on a
 * packet_seq_num, timestamp_begin or timestamp_end of -1 (its "unset" value;
 * msg-iter.c); the reader refuses those itself (ctf_check.c), so they are
 * handed over. Build: make fuzz. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainscope/ingest.h"
#include "trainscope/model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* libbabeltrace2 2.0.4 leaks a few bytes (glib allocations) on some error
 * paths of a damaged stream; the reader's own allocations never go through
 * glib, so its leaks are still reported. */
const char *__lsan_default_suppressions(void)
{
    return "leak:libglib-2.0.so\nleak:libbabeltrace2.so\nleak:babeltrace2/plugins\n";
}

static char trace_dir[64], stream_path[128];

static void remove_trace_dir(void)
{
    char p[128];
    unlink(stream_path);
    snprintf(p, sizeof p, "%s/metadata", trace_dir);
    unlink(p);
    rmdir(trace_dir);
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[8192];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok ? 0 : -1;
}

/* The metadata lies at ../../fuzz/ctf_metadata.tsdl from build/fuzz/fuzz_ctf. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char self[4096], meta[4200], dst[128];
    snprintf(self, sizeof self, "%s", (*argv)[0]);
    snprintf(meta, sizeof meta, "%s/../../fuzz/ctf_metadata.tsdl", dirname(self));
    strcpy(trace_dir, access("/dev/shm", W_OK) == 0 ? "/dev/shm/fuzz_ctf_XXXXXX" : "/tmp/fuzz_ctf_XXXXXX");
    if (!mkdtemp(trace_dir)) abort();
    snprintf(dst, sizeof dst, "%s/metadata", trace_dir);
    snprintf(stream_path, sizeof stream_path, "%s/stream", trace_dir);
    atexit(remove_trace_dir);
    if (copy_file(meta, dst) != 0) {
        fprintf(stderr, "fuzz_ctf: cannot copy %s into %s\n", meta, trace_dir);
        abort();
    }
    return 0;
}

/* Packet framing of fuzz/ctf_metadata.tsdl (CTF aligns in bits; all fields
 * here are byte-aligned, little-endian): header magic u32, uuid[16],
 * stream_id u64, stream_instance_id u64 (36 bytes), then the context's
 * packet_size and content_size u64 in bits, timestamp_begin, timestamp_end,
 * events_discarded and packet_seq_num u64. True when every packet's sizes
 * are whole bytes, hold at least both headers, and the packets tile the
 * input, up to a packet whose size is 0 (the reader must refuse that one). */
static int sound_packets(const uint8_t *d, size_t n)
{
    enum { HEAD = 36, CONTEXT = 48 };
    size_t off = 0;
    while (off < n) {
        uint64_t packet, content;
        if (n - off < HEAD + CONTEXT) return 0;
        memcpy(&packet, d + off + HEAD, 8);
        memcpy(&content, d + off + HEAD + 8, 8);
        if (packet == 0) return 1;
        if (packet % 8 || content % 8 || packet / 8 < HEAD + CONTEXT || content > packet || content / 8 < HEAD + CONTEXT ||
            packet / 8 > n - off)
            return 0;
        off += packet / 8;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sound_packets(data, size)) return 0;
    FILE *f = fopen(stream_path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
    const char *paths[] = {trace_dir};
    ts_job *t = NULL;
    ts_error err;
    if (ts_job_load(paths, 1, NULL, &t, &err) == TS_OK) ts_job_destroy(t);
    return 0;
}
