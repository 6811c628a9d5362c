/* record_job.c - what `trainscope record` gathers after the job ended
 * (include/trainscope/record.h): every raw stream the job's processes left
 * converted to a trace file (but those of processes still tracing), what the
 * status board says never reached the disk, and what torch's profiler left
 * per process; the figures its closing lines say (src/report/record.c).
 *
 * Not for: converting one stream (raw2json.c), tracing, or printing.
 * In libtrainscope only (it is never loaded into a traced program).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "trainscope/record.h"

static void note_stream(ts_record_streams *js, const char *comm, int rc, const ts_record_losses *l)
{
    js->n_streams++;
    if (rc != TS_OK && rc != TS_ENODATA) return;   /* not converted: said apart */
    bool py = !strncmp(comm, "python", 6);
    js->n_python += py;
    if (rc == TS_ENODATA) {
        js->n_empty++;
        size_t used = strlen(js->empty_names);
        if (!strstr(js->empty_names, comm) && used + strlen(comm) + 3 < sizeof js->empty_names)
            snprintf(js->empty_names + used, sizeof js->empty_names - used, "%s%s", used ? ", " : "", comm);
        return;
    }
    if (rc != TS_OK) return;
    js->n_files++;
    if (py) js->python_events += l->n_events;
    js->sum.dropped_events += l->dropped_events;
    js->sum.bad_records += l->bad_records;
    js->sum.unfinished_ranges += l->unfinished_ranges;
    js->n_cut += l->cut_at_byte != 0;
}

/* What --torch left in each process (python/trainscope_torch.py writes one
 * "key=value ..." line per process into DIR/.raw/torch-<pid>.txt). */
static const char *kv_get(const char *line, const char *key, char *out, size_t n)
{
    size_t k = strlen(key);
    for (const char *p = line; (p = strstr(p, key)); p += k)
        if ((p == line || p[-1] == ' ') && p[k] == '=') {
            /* reason, always last, runs to the end of the line */
            size_t len = strcspn(p + k + 1, strcmp(key, "reason") ? " \n" : "\n");
            snprintf(out, n, "%.*s", (int)len, p + k + 1);
            return out;
        }
    out[0] = 0;
    return NULL;
}

static void note_torch(ts_record_torch *ts, const char *line)
{
    char v[200];
    ts->n++;
    kv_get(line, "state", v, sizeof v);
    if (!strcmp(v, "ok")) {
        ts->ok++;
        ts->events += strtoull(kv_get(line, "events", v, sizeof v) ? v : "0", NULL, 10);
        ts->dropped += strtoull(kv_get(line, "dropped", v, sizeof v) ? v : "0", NULL, 10);
        kv_get(line, "format", ts->format, sizeof ts->format);
        kv_get(line, "window", ts->window, sizeof ts->window);
    } else if (!strcmp(v, "failed")) {
        ts->failed++;
        if (!ts->reason[0]) kv_get(line, "reason", ts->reason, sizeof ts->reason);
    } else if (!strcmp(v, "nowindow")) {
        long st = strtol(kv_get(line, "steps", v, sizeof v) ? v : "0", NULL, 10);
        if (!ts->nowindow++ || st < ts->steps_min) ts->steps_min = st;
    } else {
        ts->unsaved++;   /* "started": killed (SIGKILL) or os._exit before saving */
    }
}

static void read_torch_status(const char *raw_dir, ts_record_torch *ts)
{
    DIR *d = opendir(raw_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "torch-", 6) || n < 4 || strcmp(e->d_name + n - 4, ".txt")) continue;
        char path[2 * PATH_MAX], line[512] = "";
        snprintf(path, sizeof path, "%s/%s", raw_dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(line, sizeof line, f)) note_torch(ts, line);
        if (f) fclose(f);
        unlink(path);
    }
    if (d) closedir(d);
}

/* The board as read, with the stream name prefixes of the live processes. */
typedef struct board {
    ts_record_board pub;
    char            live[TS_RECORD_STATUS_SLOTS][16];
} board;

/* A process that runs (not gone, not a zombie whose stream is whole). */
static bool process_runs(uint32_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

static void add_name(char *list, size_t n, const char *name)
{
    size_t used = strlen(list);
    if (used + strlen(name) + 3 < n) snprintf(list + used, n - used, "%s%s", used ? ", " : "", name);
}

static void read_board(const char *raw_dir, board *b)
{
    ts_record_slot *s = malloc(TS_RECORD_STATUS_SLOTS * sizeof *s);
    int n = s ? ts_record_status_read(raw_dir, &b->pub.n_claimed, s, TS_RECORD_STATUS_SLOTS) : -1;
    for (int i = 0; i < n; i++) {
        const ts_record_slot *sl = &s[i];
        const char *comm = sl->comm;
        char who[64];
        if (!sl->pid) continue;
        if (sl->err && !sl->stream[0]) {
            if (!b->pub.n_nostream++) b->pub.nostream_errno = sl->err;
            if (!strstr(b->pub.nostream_names, comm)) add_name(b->pub.nostream_names, sizeof b->pub.nostream_names, comm);
        }
        if (sl->lost) {
            b->pub.lost += sl->lost;
            if (!b->pub.lost_errno) b->pub.lost_errno = sl->err;
            b->pub.n_lossy++;
            if (!strstr(b->pub.lossy_names, comm)) add_name(b->pub.lossy_names, sizeof b->pub.lossy_names, comm);
        }
        if (sl->tracing && process_runs(sl->pid)) {
            snprintf(b->live[b->pub.n_live++], sizeof b->live[0], "%.15s", sl->stream);   /* as the board had it */
            snprintf(who, sizeof who, "pid %u (%s)", sl->pid, comm);
            add_name(b->pub.live_names, sizeof b->pub.live_names, who);
        }
    }
    free(s);
}

/* A stream of a process still tracing: converting it now would lose the rest. */
static bool stream_is_live(const board *b, const char *name)
{
    for (int i = 0; i < b->pub.n_live; i++)
        if (b->live[i][0] && !strncmp(name, b->live[i], strlen(b->live[i]))) return true;
    return false;
}


/* Convert every raw stream of the job (processes defer it to here; killed ones
 * could not do it anyway) but those of processes still tracing. */
static void convert_streams(const char *dir, const char *raw_dir, const board *b, ts_record_streams *js,
                            ts_record_fail_fn on_fail, void *ud)
{
    DIR *d = opendir(raw_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".tsr")) continue;
        if (stream_is_live(b, e->d_name)) { js->n_left_live++; continue; }
        char raw[2 * PATH_MAX], err[1024], comm[72];
        snprintf(raw, sizeof raw, "%s/%s", raw_dir, e->d_name);
        ts_record_stream_comm(raw, comm, sizeof comm);
        ts_record_losses l;
        int rc = ts_record_convert(raw, dir, err, sizeof err, &l);
        note_stream(js, comm, rc, &l);
        if (rc == TS_OK || rc == TS_ENODATA) unlink(raw);
        else {
            if (on_fail) on_fail(ud, err);
            js->n_failed++;
        }
    }
    if (d) closedir(d);
}

int ts_record_finish(const char *dir, ts_record_job *out, ts_record_fail_fn on_fail, void *ud)
{
    memset(out, 0, sizeof *out);
    char raw_dir[PATH_MAX + 8];
    snprintf(raw_dir, sizeof raw_dir, "%s/.raw", dir);
    read_torch_status(raw_dir, &out->torch);
    board *b = calloc(1, sizeof *b);
    if (!b) return TS_ENOMEM;
    read_board(raw_dir, b);
    ts_record_streams *js = &out->streams;
    convert_streams(dir, raw_dir, b, js, on_fail, ud);
    if (!js->n_failed && !js->n_left_live) {   /* nothing left for --convert: the board goes too */
        char status[PATH_MAX + 32];
        snprintf(status, sizeof status, "%s/%s", raw_dir, TS_RECORD_STATUS_NAME);
        unlink(status);
    }
    rmdir(raw_dir);   /* only when empty: streams that failed to convert stay */
    out->board = b->pub;
    free(b);
    char grads[PATH_MAX + 32];
    snprintf(grads, sizeof grads, "%s/.gradients.json", dir);
    out->gradients = access(grads, R_OK) == 0;
    out->lost = out->board.lost || out->board.n_nostream || js->n_failed;
    return TS_OK;
}
