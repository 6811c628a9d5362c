/* dpro.c - dPRO trace folders (joapolarbear/dpro, the traces its
 * byteprofile fork of Horovod/BytePS collects): one folder per GPU, under
 * one per worker, under the trial's root (dPRO's DirLevel GPU < WORKER <
 * TRIAL). A GPU folder is one rank, read from the files dPRO's collector
 * reads (trace_utils.py's FileName):
 *   temp.json or trace.json.gz  the framework's computation trace (a TF1
 *                               timeline or MXNet profiler output: Chrome JSON)
 *   comm.json                   Horovod's timeline of the communication (often unclosed)
 *   io.json, comm_detail.json   I/O and NCCL send/recv detail (optional, Chrome JSON)
 *   gradient_name_list.json     {"gradient_name_list": [...]} (counted in info)
 * The JSON files go through chrome_json.c into one rank, each file's pids
 * kept apart; ranks are numbered in folder order (workers, then GPUs, by
 * name with numbers compared as numbers).
 *
 * Not for: dPRO's own outputs (bps_trace_final.json, dag.gml), which are
 * not read. A folder none of whose trace files exists is not a GPU folder.
 */
#include "ingest/ingest.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const COMP[] = {"temp.json", "trace.json.gz"};
static const char *const PARTS[] = {"comm.json", "io.json", "comm_detail.json"};
static const char *const MARKS[] = {"comm.json", "gradient_name_list.json", "metadata.json", "dag.gml"};   /* comm.json first */

static bool has(const char *dir, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A computation trace or comm.json, and a mark (comm.json is both). Asked
 * in the order that needs the fewest stats (2 for a usual GPU folder). */
bool ts__dpro_is_gpu_dir(const char *dir)
{
    if (has(dir, "comm.json")) return true;
    if (!has(dir, COMP[0]) && !has(dir, COMP[1])) return false;
    for (size_t i = 1; i < sizeof MARKS / sizeof *MARKS; i++)
        if (has(dir, MARKS[i])) return true;
    return false;
}

static int cmp_ver(const void *a, const void *b) { return strverscmp(*(char *const *)a, *(char *const *)b); }

typedef struct dirs { char **v; uint32_t n, cap; } dirs;

static void free_dirs(dirs *d)
{
    for (uint32_t i = 0; i < d->n; i++) ts__free(d->v[i], strlen(d->v[i]) + 1);
    ts__free(d->v, (size_t)d->cap * sizeof *d->v);
}

/* The subfolders of dir, by name (numbers as numbers); false when out of memory. */
static bool subdirs(const char *dir, dirs *out)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d) return true;
    uint32_t *n = &out->n, cap = 0;
    char **v = NULL;
    struct dirent *de;
    bool oom = false;
    while (!oom && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        /* a folder of many rank files: no stat for the entries known to be files */
        if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN && de->d_type != DT_LNK) continue;
        char p[4096];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        if (*n == cap && ts__grow((void **)&v, &cap, sizeof *v, (size_t)*n + 1)) { oom = true; break; }
        if (!(v[*n] = ts__strdup(p))) oom = true;
        else (*n)++;
    }
    closedir(d);
    out->v = v;
    out->cap = cap;
    if (*n) qsort(v, *n, sizeof *v, cmp_ver);
    if (oom) free_dirs(out);
    return !oom;
}

int ts__dpro_gpu_dirs(const char *dir, ts__dpro_add_fn add, void *ud)
{
    if (ts__dpro_is_gpu_dir(dir)) return add(ud, dir) ? TS_ENOMEM : 1;
    uint32_t found = 0;
    dirs workers;
    int rc = subdirs(dir, &workers) ? TS_OK : TS_ENOMEM;
    for (uint32_t w = 0; w < workers.n && rc == TS_OK; w++) {
        if (ts__dpro_is_gpu_dir(workers.v[w])) { rc = add(ud, workers.v[w]); found++; continue; }
        dirs gpus;
        if (!subdirs(workers.v[w], &gpus)) { rc = TS_ENOMEM; break; }
        for (uint32_t g = 0; g < gpus.n && rc == TS_OK; g++)
            if (ts__dpro_is_gpu_dir(gpus.v[g])) { rc = add(ud, gpus.v[g]); found++; }
        free_dirs(&gpus);
    }
    free_dirs(&workers);
    return rc ? TS_ENOMEM : (int)(found > 0);
}

/* {"gradient_name_list": [...]}: how many names, -1 = no such file or not that shape. */
static long gradient_names(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/gradient_name_list.json", dir);
    if (!has(dir, "gradient_name_list.json")) return -1;
    size_t len, cap;
    char *text = ts__read_bounded(p, "a gradient name list", TS__SIDE_FILE_MAX_BYTES, &len, &cap, NULL);
    if (!text) return -1;
    const char *q = strstr(text, "\"gradient_name_list\"");
    long n = -1;
    if (q && (q = strchr(q, '['))) {
        n = 0;
        bool in_str = false;
        for (q++; *q && (in_str || *q != ']'); q++) {
            if (*q == '\\' && in_str && q[1]) { q++; continue; }
            if (*q == '"') n += !in_str, in_str = !in_str;
        }
        if (*q != ']') n = -1;
    }
    ts__free(text, cap);
    return n;
}

int ts__dpro_ingest(const char *dir, int32_t order, const ts_load_opts *opts, bool counts_only, ts_rank **out,
                    ts_error *err)
{
    char bufs[5][4096];
    const char *paths[5];
    char used[256] = "";
    uint32_t n = 0;
    for (size_t i = 0; i < 2 && n == 0; i++)
        if (has(dir, COMP[i])) { snprintf(bufs[n], sizeof bufs[n], "%s/%s", dir, COMP[i]); paths[n] = bufs[n]; n++; }
    if (n) snprintf(used, sizeof used, "%s", strrchr(paths[0], '/') + 1);
    for (size_t i = 0; i < sizeof PARTS / sizeof *PARTS; i++)
        if (has(dir, PARTS[i])) {
            snprintf(bufs[n], sizeof bufs[n], "%s/%s", dir, PARTS[i]);
            paths[n] = bufs[n];
            n++;
            size_t k = strlen(used);
            snprintf(used + k, sizeof used - k, "%s%s", k ? ", " : "", PARTS[i]);
        }
    int rc = ts__ingest_json_parts(dir, paths, n, order, opts, counts_only, out, err);
    if (rc) return rc;
    long names = gradient_names(dir);
    char note[400];
    if (names >= 0) snprintf(note, sizeof note, "%s; %ld gradient names", used, names);
    else snprintf(note, sizeof note, "%s", used);
    ts__rank_add_meta_str(*out, "format", "dpro-folder");
    ts__rank_add_meta_str(*out, "dpro", note);
    return (*out)->oom ? ts__error(err, TS_ENOMEM, "%s: out of memory", dir) : TS_OK;
}
