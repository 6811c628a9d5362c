/* fuzz_raw.c - libFuzzer target for the capture record converter
 * (src/capture/common/raw2json.c): the binary stream a traced process writes, which
 * `trainscope record` turns into Chrome-trace JSON. A process killed mid-write
 * or a damaged disk leaves such a stream cut or garbled, so the converter
 * must fail cleanly or keep what is sound. The JSON it writes goes to a
 * directory of its own, must load (args marked as JSON text, names cut
 * inside a character: whatever the stream holds, the file stays valid JSON),
 * and is removed after each input. Build: make fuzz. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/common/rawfmt.h"
#include "trainscope/ingest.h"
#include "trainscope/model.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char out_dir[64];

static void remove_out_dir(void)
{
    rmdir(out_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!out_dir[0]) {
        strcpy(out_dir, "/tmp/fuzz_raw_XXXXXX");
        if (!mkdtemp(out_dir)) abort();
        atexit(remove_out_dir);
    }
    char path[64], out[4096], err[512];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0) return 0;
    out[0] = 0;
    if (ts__raw_convert(path, out_dir, out, sizeof out, err, sizeof err, NULL) == 0 && out[0]) {
        const char *paths[1] = {out};
        ts_load_opts opts = {.size = sizeof opts, .n_threads = 1};
        ts_job *t = NULL;
        ts_error e = {0};
        if (ts_job_load(paths, 1, &opts, &t, &e) == TS_EPARSE) {   /* the converter wrote bad JSON */
            fprintf(stderr, "%s\n", e.msg);
            abort();
        }
        ts_job_destroy(t);
        unlink(out);
    }
    close(fd);
    return 0;
}
