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
 * Only streams whose packets tile the input and whose sequence numbers are
 * not all ones are handed over (sound_packets): libbabeltrace2 2.0.4 itself
 * runs away on a packet whose size field is 0 (3.8 GB in 38 s on one
 * 300-byte input, `babeltrace2 DIR` too) and aborts on a packet_seq_num of
 * -1 (an assertion in its ctf plugin, check_emit_msg_discarded_packets)
 * and on a timestamp_begin or timestamp_end of -1 (msg-iter.c:2535,
 * create_msg_packet_beginning: its "unset" value; found by CI, 26 Nov),
 * which are babeltrace's to fix, not the reader's: such a file read by
 * `trainscope` aborts in libbabeltrace2. Build: make fuzz. */
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
 * are whole bytes, hold at least both headers, and the packets tile the input. */
static int sound_packets(const uint8_t *d, size_t n)
{
    enum { HEAD = 36, CONTEXT = 48 };
    size_t off = 0;
    while (off < n) {
        uint64_t packet, content, seq, tb, te;
        if (n - off < HEAD + CONTEXT) return 0;
        memcpy(&packet, d + off + HEAD, 8);
        memcpy(&content, d + off + HEAD + 8, 8);
        memcpy(&seq, d + off + HEAD + 40, 8);
        memcpy(&tb, d + off + HEAD + 16, 8);
        memcpy(&te, d + off + HEAD + 24, 8);
        if (packet % 8 || content % 8 || packet / 8 < HEAD + CONTEXT || content > packet || content / 8 < HEAD + CONTEXT ||
            packet / 8 > n - off || seq == UINT64_MAX || tb == UINT64_MAX || te == UINT64_MAX)
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
