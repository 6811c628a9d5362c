/* fuzz_dpro.c - libFuzzer target for dPRO trace folders (src/ingest/dpro.c
 * and the multi-file JSON read under it): the input is split at its first
 * NUL byte into a GPU folder's temp.json (the computation trace) and
 * comm.json (Horovod's timeline), written into trial/host0/0 of a fresh
 * temporary tree with a gradient_name_list.json, and loaded with
 * ts_job_load on the trial's root. The load must succeed or fail with a
 * message, never crash, hang or leak. Seed (fuzz/corpus/fuzz_dpro/): the
 * hand-made TF1 timeline and unclosed Horovod timeline of
 * test/e2e/dpro_trace_folder.sh's first GPU, joined by a NUL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainscope/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    if (n && fwrite(bytes, 1, n, f) != n) { /* a short file is an input too */ }
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char root[] = "/tmp/ts_fuzz_dpro_XXXXXX";
    if (!mkdtemp(root)) return 0;
    char host[300], gpu[300], p[400];
    snprintf(host, sizeof host, "%s/host0", root);
    snprintf(gpu, sizeof gpu, "%s/0", host);
    mkdir(host, 0700);
    mkdir(gpu, 0700);
    const uint8_t *nul = memchr(data, 0, size);
    size_t n1 = nul ? (size_t)(nul - data) : size;
    snprintf(p, sizeof p, "%s/temp.json", gpu);
    put(p, data, n1);
    snprintf(p, sizeof p, "%s/comm.json", gpu);
    put(p, nul ? nul + 1 : data, nul ? size - n1 - 1 : 0);
    snprintf(p, sizeof p, "%s/gradient_name_list.json", gpu);
    put(p, "{\"gradient_name_list\": [\"w\"]}", 29);
    const char *paths[1] = {root};
    ts_job *t = NULL;
    ts_error err;
    if (ts_job_load(paths, 1, NULL, &t, &err) == TS_OK) ts_job_destroy(t);
    const char *names[] = {"temp.json", "comm.json", "gradient_name_list.json"};
    for (int i = 0; i < 3; i++) { snprintf(p, sizeof p, "%s/%s", gpu, names[i]); unlink(p); }
    rmdir(gpu);
    rmdir(host);
    rmdir(root);
    return 0;
}
