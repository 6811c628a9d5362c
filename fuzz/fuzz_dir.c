/* fuzz_dir.c - libFuzzer target for the directory loader (ts_job_load on
 * a directory of rank files): the input describes a directory's entries,
 * which are made in a fresh temporary directory and loaded. Regular files
 * (named like traces or not, their bytes from the input), dangling links,
 * link loops, links to other entries, fifos, subdirectories and unreadable
 * files in any mix: the load must end (a fifo is never opened: opening one
 * would block, which the fuzzer reports as a timeout), succeed or fail with
 * a message naming an entry, and never crash or leak. The bounded path
 * (ts_graph_load, folding replicas when the first byte's top bit is set)
 * must succeed exactly when ts_job_load + ts_graph_create do.
 *
 * Input: up to 8 entries of [kind byte][name byte][length byte][length
 * bytes of content]. Kinds (mod 8): 0 file named like a trace, 1 file named
 * otherwise, 2 dangling link, 3 link to itself, 4 link to the entry before,
 * 5 fifo, 6 directory, 7 file with mode 000. Names: rank-N.json,
 * rank-N.json.gz, rank-N.json.zst or notes-N.txt (N from the name byte).
 *
 * Build: make fuzz (clang, ASan + UBSan + libFuzzer).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainscope/graph.h"
#include "trainscope/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c) do { if (!(c)) { fprintf(stderr, "violated: %s\n", #c); abort(); } } while (0)

enum { MAX_ENTRIES = 8 };

static void entry_name(char *out, size_t n, int kind, uint8_t sel)
{
    static const char *const ext[] = {".json", ".json.gz", ".json.zst"};
    if (kind == 1) snprintf(out, n, "notes-%u.txt", sel % 8u);
    else snprintf(out, n, "rank-%u%s", sel % 8u, ext[(sel / 8u) % 3]);
}

static void make_entry(const char *dir, int kind, const char *name, const char *prev, const uint8_t *bytes,
                       size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    switch (kind) {
    case 2: if (symlink("missing.json", path)) return; break;
    case 3: if (symlink(name, path)) return; break;
    case 4: if (symlink(prev[0] ? prev : "missing.json", path)) return; break;
    case 5: mkfifo(path, 0600); break;
    case 6: mkdir(path, 0700); break;
    default: {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0) return;
        ssize_t w = write(fd, bytes, len);
        (void)w;
        close(fd);
        if (kind == 7) chmod(path, 0);
    }
    }
}

static void remove_all(const char *dir, char names[][32], int n)
{
    for (int i = 0; i < n; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (unlink(path) != 0) rmdir(path);
    }
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[] = "/tmp/ts_fuzz_dir_XXXXXX";
    if (!mkdtemp(dir)) return 0;
    char names[MAX_ENTRIES][32];
    int n = 0;
    size_t off = 0;
    while (n < MAX_ENTRIES && off + 3 <= size) {
        int kind = data[off] % 8;
        uint8_t sel = data[off + 1];
        size_t len = data[off + 2];
        off += 3;
        if (len > size - off) len = size - off;
        entry_name(names[n], sizeof names[n], kind, sel);
        make_entry(dir, kind, names[n], n ? names[n - 1] : "", data + off, len);
        off += len;
        n++;
    }
    const char *paths[1] = {dir};
    ts_load_opts o = {.size = sizeof o, .n_threads = 1};
    ts_job *t = NULL;
    ts_error err = {0};
    int rc = ts_job_load(paths, 1, &o, &t, &err);
    if (rc == TS_OK) REQUIRE(t != NULL && ts_job_n_ranks(t) > 0);
    else REQUIRE(t == NULL && err.msg[0] != 0);
    /* The bounded path (ts_graph_load, folding replicas or not) on the same
     * directory: it succeeds exactly when the load and the graph do, and on
     * failure holds nothing and says why. */
    ts_graph *g = NULL;
    int grc = rc == TS_OK ? ts_graph_create(t, NULL, &g, &err) : rc;
    ts_graph_destroy(g);
    ts_job_destroy(t);
    ts_graph_options go = {.size = sizeof go, .fold_replicas = size > 0 && (data[0] & 0x80)};
    ts_job *t2 = NULL;
    ts_error err2 = {0};
    g = NULL;
    int rc2 = ts_graph_load(paths, 1, &o, &go, &t2, &g, &err2);
    REQUIRE((rc2 == TS_OK) == (grc == TS_OK));
    if (rc2 != TS_OK) REQUIRE(t2 == NULL && g == NULL && err2.msg[0] != 0);
    ts_graph_destroy(g);
    ts_job_destroy(t2);
    remove_all(dir, names, n);
    return 0;
}
