/* test_capture.c - the host tracing runtime: ring buffers (wraparound, drop
 * counting, many threads), the raw -> JSON writer (valid JSON, nanoseconds
 * exact), and the process hooks (fork, SIGTERM). Each test runs in its own
 * process (run.sh), so the runtime's global state starts fresh every time.
 */
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stddef.h>
#include <unistd.h>

#include "capture/common/rawfmt.h"
#include "capture/runtime/rt.h"
#include "trainscope/trace.h"

/* A fresh empty directory under /tmp for one test. */
static const char *tmp_dir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/ts_capture_XXXXXX");
    return mkdtemp(dir);
}

/* Path of the single file in dir whose name starts with prefix. */
static int find_file(const char *dir, const char *prefix, char *path, size_t n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            snprintf(path, n, "%s/%s", dir, e->d_name);
            found++;
        }
    if (d) closedir(d);
    return found;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

/* Occurrences of needle; memmem with a length so that a sanitizer's strstr
 * (which measures the whole haystack each call) does not make it quadratic. */
static int count_str(const char *hay, const char *needle)
{
    int n = 0;
    size_t total = strlen(hay), nl = strlen(needle);
    for (const char *p = hay; (p = memmem(p, total - (size_t)(p - hay), needle, nl)); n++) p += nl;
    return n;
}

static int json_valid(const char *path)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s", path);
    return ts_test_run(cmd, NULL) == 0;
}

/* A ring of 4 KiB owned by the test; fd is where drains go. */
static ts__ring *small_ring(void)
{
    ts__ring *r = calloc(1, sizeof *r);
    r->cap = 4096;
    r->data = calloc(1, r->cap);
    return r;
}

static void put_rec(ts__ring *r, uint32_t size, int64_t v)
{
    ts__rec *rec = ts__ring_reserve(r, size);
    if (!rec) return;
    memset(rec, 0, size);
    rec->size = (uint16_t)size;
    rec->type = TS__REC_AE;   /* a type with v: v numbers the records */
    memcpy(rec + 1, &v, 8);
    ts__ring_commit(r, size);
}

TEST(ring_wraps_records_around_the_end_in_order)
{
    ts__ring *r = small_ring();
    char path[] = "/tmp/ts_ring_XXXXXX";
    int fd = mkstemp(path);
    struct stat st;
    fstat(fd, &st);
    ts__rt_fd = fd;   /* commit drains here once the ring is half full */
    ts__rt_dev = st.st_dev;
    ts__rt_ino = st.st_ino;
    for (int i = 0; i < 1000; i++) put_rec(r, 24 + 8 * (uint32_t)(i % 5), i);
    ts__ring_drain(r, fd);
    CHECK(atomic_load(&r->head) > 3 * r->cap);   /* it went round several times */
    CHECK_EQ_INT(atomic_load(&r->dropped), 0);
    /* Read the chunks back: records come out whole, in order, pads skipped. */
    char *data = slurp(path);
    stat(path, &st);
    int64_t next = 0;
    for (size_t off = 0; off < (size_t)st.st_size;) {
        ts__raw_chunk ck;
        memcpy(&ck, data + off, sizeof ck);
        CHECK_EQ_INT(ck.magic, TS__RAW_CHUNK_MAGIC);
        off += sizeof ck;
        for (size_t p = off; p < off + ck.n_bytes;) {
            ts__rec rec;
            memcpy(&rec, data + p, 8);   /* size and type; a pad may be only 8 bytes */
            CHECK(rec.size >= 8 && rec.size % 8 == 0);
            if (rec.type != TS__REC_PAD) {
                int64_t v;
                memcpy(&v, data + p + sizeof rec, 8);
                CHECK_EQ_INT(v, next++);
            }
            p += rec.size;
        }
        off += ck.n_bytes;
    }
    CHECK_EQ_INT(next, 1000);
    ts__rt_fd = -1;
    close(fd);
    unlink(path);
    free(data);
    free(r->data);
    free(r);
}

/* Drain into fd, which the runtime then takes for its own stream. */
static void set_stream(int fd)
{
    struct stat st;
    fstat(fd, &st);
    ts__rt_fd = fd;
    ts__rt_dev = st.st_dev;
    ts__rt_ino = st.st_ino;
}

/* Disk full: every event that never reached the stream is counted as
 * dropped, as for a full ring (the traced program is never told); a chunk
 * written only in part ends the stream, since what followed it would be
 * misaligned, and later events are counted, not written. */
TEST(events_that_do_not_reach_the_stream_are_counted_as_dropped)
{
    ts__ring *r = small_ring();
    int full = open("/dev/full", O_WRONLY);
    CHECK(full >= 0);
    set_stream(full);
    for (int i = 0; i < 100; i++) put_rec(r, 24, i);   /* drains once past half the ring */
    ts__ring_drain(r, full);
    CHECK_EQ_INT(atomic_load(&r->dropped), 100);
    CHECK_EQ_INT(atomic_load(&ts__rt_stream_cut), 0);   /* nothing was written: later chunks stay aligned */
    close(full);
    /* A non-blocking pipe of 16 KiB and a 16 KiB ring, so chunks of about 8
     * KiB (past PIPE_BUF, which a pipe writes whole or not at all): the first
     * fits whole, the second only in part. */
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(fcntl(p[1], F_SETPIPE_SZ, 16384) == 16384);
    CHECK(fcntl(p[1], F_SETFL, O_NONBLOCK) == 0);
    set_stream(p[1]);
    ts__ring *q = calloc(1, sizeof *q);
    q->cap = 16384;
    q->data = calloc(1, q->cap);
    for (int i = 0; i < 1500; i++) put_rec(q, 24, i);
    ts__ring_drain(q, p[1]);
    CHECK_EQ_INT(atomic_load(&ts__rt_stream_cut), 1);
    char buf[32768];
    ssize_t got = read(p[0], buf, sizeof buf);   /* all the pipe holds: less than two chunks */
    CHECK(got > 0 && got < 16384);
    /* The chunks that arrived whole hold the events not counted as dropped. */
    uint64_t whole = 0;
    for (size_t off = 0; off + sizeof(ts__raw_chunk) <= (size_t)got;) {
        ts__raw_chunk ck;
        memcpy(&ck, buf + off, sizeof ck);
        if (ck.n_bytes > (size_t)got - off - sizeof ck) break;
        whole += ck.n_bytes / 24;
        off += sizeof ck + ck.n_bytes;
    }
    CHECK(whole > 0);
    CHECK_EQ_INT(whole + atomic_load(&q->dropped), 1500);
    atomic_store(&ts__rt_stream_cut, 0);
    ts__rt_fd = -1;
    close(p[0]);
    close(p[1]);
    free(r->data); free(r);
    free(q->data); free(q);
}

TEST(ring_drops_and_counts_when_full_and_never_blocks)
{
    ts__ring *r = small_ring();
    ts__rt_fd = -1;
    atomic_store(&r->draining, 1);   /* someone else is draining: the owner cannot */
    for (int i = 0; i < 200; i++) put_rec(r, 64, i);
    /* 4096 / 64 = 64 records fit; commit's own drain attempts fail too. */
    CHECK_EQ_INT(atomic_load(&r->head) - atomic_load(&r->tail), 4096);
    CHECK_EQ_INT(atomic_load(&r->dropped), 200 - 64);
    atomic_store(&r->draining, 0);
    put_rec(r, 64, 0);   /* draining again possible: room is made, nothing more lost */
    CHECK_EQ_INT(atomic_load(&r->dropped), 200 - 64);
    free(r->data);
    free(r);
}

enum { N_THREADS = 4, N_PER_THREAD = 20000 };

static void *busy_thread(void *arg)
{
    char name[32];
    snprintf(name, sizeof name, "worker-%d", (int)(intptr_t)arg);
    ts_trace_thread_name(name);
    for (int i = 0; i < N_PER_THREAD; i++) {
        ts_trace_push("cpu_op", "aten::add");
        ts_trace_pop();
    }
    return NULL;
}

TEST(threads_write_concurrently_and_nothing_is_lost)
{
    const char *dir = tmp_dir();
    setenv("TRAINSCOPE_BUFFER_KB", "64", 1);   /* small rings: many drains while others write */
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    pthread_t t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) pthread_create(&t[i], NULL, busy_thread, (void *)(intptr_t)i);
    for (int i = 0; i < N_THREADS; i++) pthread_join(t[i], NULL);
    CHECK_EQ_INT(ts_trace_dropped(), 0);
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char path[512];
    CHECK_EQ_INT(find_file(dir, "pid-", path, sizeof path), 1);
    char *s = slurp(path);
    CHECK(s != NULL);
    CHECK_EQ_INT(count_str(s, "\"name\":\"aten::add\""), N_THREADS * N_PER_THREAD);
    CHECK_EQ_INT(count_str(s, "\"name\":\"thread_name\""), N_THREADS);
    CHECK(strstr(s, "\"dropped_events\":0") != NULL);
    CHECK(strstr(s, "\"unfinished_ranges\":0") != NULL);
    free(s);
}

TEST(writer_emits_valid_json_with_exact_nanoseconds)
{
    const char *dir = tmp_dir();
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "8", 1);
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    ts_trace_arg args[] = {{"bytes", NULL, 4096}, {"op", "sum \"quoted\"\n", 0}};
    ts_trace_event ev = {.size = sizeof ev, .phase = 'X', .cat = "mpi", .name = "MPI_Allreduce",
                         .ts_ns = 1234567891, .dur_ns = 1001, .pid = -1, .tid = -1,
                         .flow_id = 42, .flow_phase = 's', .args = args, .n_args = 2};
    CHECK_EQ_INT(ts_trace_emit(&ev), 0);
    ts_trace_counter("memory", 2.5);
    ts_trace_begin(9, "user_annotation", "across\tthreads");
    ts_trace_end(9);
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char path[512];
    CHECK_EQ_INT(find_file(dir, "rank-3.", path, sizeof path), 1);
    CHECK(json_valid(path));
    char *s = slurp(path);
    CHECK(strstr(s, "\"distributedInfo\":{\"rank\":3,\"world_size\":8}") != NULL);
    CHECK(strstr(s, "\"ts\":1234567.891,\"cat\":\"mpi\",\"name\":\"MPI_Allreduce\",\"dur\":1.001") != NULL);
    CHECK(strstr(s, "\"args\":{\"bytes\":4096,\"op\":\"sum \\\"quoted\\\"\\n\"}") != NULL);
    CHECK(strstr(s, "\"ph\":\"s\",\"pid\"") != NULL && strstr(s, "\"id\":42,\"cat\":\"ac2g\"") != NULL);
    CHECK(strstr(s, "\"args\":{\"memory\":2.5}") != NULL);
    CHECK(strstr(s, "\"name\":\"across\\tthreads\"") != NULL);
    free(s);
}

/* json_args: a string the caller marks is written as JSON when it is valid
 * JSON text (Kineto's "Input Dims", "Input type", numbers), and as a string
 * otherwise (a value cut at the arg limit, bad numbers or escapes, \u0000,
 * nesting deeper than 16), so the file stays valid JSON; a caller built before
 * json_args existed (smaller size) is still recorded. */
TEST(json_args_are_written_as_json_only_when_they_are_valid_json)
{
    const char *dir = tmp_dir();
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    char deep[64] = "", longv[3001];
    for (int i = 0; i < 20; i++) strcat(deep, "[");
    for (int i = 0; i < 20; i++) strcat(deep, "]");
    longv[0] = '[';
    for (int i = 1; i < 2999; i += 2) { longv[i] = '1'; longv[i + 1] = ','; }
    longv[2999] = ']';
    longv[3000] = 0;
    longv[2998] = '1';
    ts_trace_arg args[] = {{"requests", "[3, -7,12]", 0}, {"empty", "[]", 0}, {"cut", "[1,2,", 0},
                           {"text", "[1,\"x\"]", 0}, {"dims", "[[8, 16], [], [3]]", 0},
                           {"obj", "{\"a\": [1.5e3, true, null]}", 0}, {"lead0", "[01]", 0},
                           {"ctl", "[\"a\x01\"]", 0}, {"deep", deep, 0}, {"long", longv, 0},
                           {"plain", "[4]", 0}, {"nul", "[\"a\\u0000\"]", 0}};
    ts_trace_event ev = {.size = sizeof ev, .phase = 'X', .cat = "mpi", .name = "MPI_Waitall",
                         .ts_ns = 1000, .dur_ns = 5, .pid = -1, .tid = -1, .args = args, .n_args = 12,
                         .json_args = 0x3ff | 1u << 11};
    CHECK_EQ_INT(ts_trace_emit(&ev), 0);
    ev.size = offsetof(ts_trace_event, json_args);   /* an older caller: its json_args is not read */
    ev.name = "old";
    ev.n_args = 1;
    CHECK_EQ_INT(ts_trace_emit(&ev), 0);
    ev.size = offsetof(ts_trace_event, json_args) - 1;
    CHECK_EQ_INT(ts_trace_emit(&ev), 1);
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char path[512];
    CHECK_EQ_INT(find_file(dir, "pid-", path, sizeof path), 1);
    CHECK(json_valid(path));
    char *s = slurp(path);
    CHECK(strstr(s, "\"args\":{\"requests\":[3, -7,12],\"empty\":[],\"cut\":\"[1,2,\","
                    "\"text\":[1,\"x\"],\"dims\":[[8, 16], [], [3]],\"obj\":{\"a\": [1.5e3, true, null]},"
                    "\"lead0\":\"[01]\",\"ctl\":\"[\\\"a\\u0001\\\"]\",\"deep\":\"[[[[") != NULL);
    /* 2047 bytes of the 3000 are kept: no closing bracket, so a string */
    CHECK(strstr(s, "\"long\":\"[1,1,") != NULL);
    CHECK(strstr(s, ",1\",\"plain\":\"[4]\",") != NULL || strstr(s, ",\",\"plain\":\"[4]\",") != NULL);
    /* valid JSON, but a NUL that readers of C strings refuse: a string */
    CHECK(strstr(s, "\"nul\":\"[\\\"a\\\\u0000\\\"]\"}") != NULL);
    CHECK(strstr(s, "\"name\":\"old\",\"dur\":0.005,\"args\":{\"requests\":\"[3, -7,12]\"}") != NULL);
    free(s);
}

TEST(open_ranges_are_closed_and_counted_at_the_end)
{
    const char *dir = tmp_dir();
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    ts_trace_push("user_annotation", "never popped");
    ts_trace_pop();
    ts_trace_pop();   /* one too many */
    ts_trace_push("user_annotation", "still open");
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char path[512];
    CHECK_EQ_INT(find_file(dir, "pid-", path, sizeof path), 1);
    char *s = slurp(path);
    CHECK(strstr(s, "\"unmatched_ends\":1") != NULL);
    CHECK(strstr(s, "\"unfinished_ranges\":1") != NULL);
    CHECK(strstr(s, "\"unfinished\":1") != NULL);
    free(s);
}

TEST(forked_child_writes_its_own_file_without_the_parents_events)
{
    const char *dir = tmp_dir();
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    ts_trace_instant("test", "parent before fork");
    pid_t pid = fork();
    if (pid == 0) {
        ts_trace_instant("test", "child");
        exit(0);   /* atexit writes the child's JSON */
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ts_trace_instant("test", "parent after fork");
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char path[512], name[64];
    snprintf(name, sizeof name, "pid-%d.json", (int)pid);
    CHECK_EQ_INT(find_file(dir, name, path, sizeof path), 1);
    char *child = slurp(path);
    CHECK(strstr(child, "\"child\"") && !strstr(child, "parent"));
    snprintf(name, sizeof name, "pid-%d.json", (int)getpid());
    CHECK_EQ_INT(find_file(dir, name, path, sizeof path), 1);
    char *parent = slurp(path);
    CHECK(strstr(parent, "parent before fork") && strstr(parent, "parent after fork"));
    CHECK(!strstr(parent, "\"child\""));
    free(child);
    free(parent);
}

/* record's status board (rawfmt.h): each stream claims a slot naming its
 * pid and file, a forked child claims its own, events whose write failed are
 * counted there with the errno (the stream itself cannot say so: the disk is
 * full), and stop closes the slot. */
TEST(streams_claim_a_slot_on_the_status_board_and_count_failed_writes_there)
{
    const char *dir = tmp_dir();
    char board_path[256], name[64], path[512];
    snprintf(board_path, sizeof board_path, "%s/board", dir);
    int fd = open(board_path, O_RDWR | O_CREAT, 0666);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)TS__STATUS_BYTES) == 0);
    CHECK(pwrite(fd, TS__STATUS_MAGIC, 8, 0) == 8);
    close(fd);
    setenv("TRAINSCOPE_STATUS", board_path, 1);
    setenv("TRAINSCOPE_DEFER_CONVERT", "1", 1);   /* keep the raw streams to look at their names */
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    pid_t pid = fork();
    if (pid == 0) _exit(0);   /* no atexit: its slot stays open, as a SIGKILL leaves it */
    int st;
    waitpid(pid, &st, 0);
    /* 7 events that never reach the stream: drained into /dev/full */
    int real = ts__rt_fd, full = open("/dev/full", O_WRONLY);
    ts__ring *r = small_ring();
    for (int i = 0; i < 7; i++) put_rec(r, 24, i);
    set_stream(full);
    ts__ring_drain(r, full);
    set_stream(real);
    close(full);
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    ts__status_slot b[3];
    fd = open(board_path, O_RDONLY);
    CHECK(fd >= 0 && read(fd, b, sizeof b) == (ssize_t)sizeof b);
    close(fd);
    CHECK_EQ_INT(b[0].pid, 2);   /* claims: the parent, then the child */
    CHECK_EQ_INT(b[1].pid, getpid());
    CHECK_EQ_INT(b[1].state, TS__STATUS_CLOSED);
    CHECK_EQ_INT(b[1].lost, 7);
    CHECK_EQ_INT(b[1].err, ENOSPC);
    CHECK_EQ_INT(b[2].pid, pid);
    CHECK_EQ_INT(b[2].state, TS__STATUS_TRACING);
    CHECK_EQ_INT(b[2].lost, 0);
    snprintf(name, sizeof name, "%d-0-", (int)getpid());
    CHECK(!strcmp(b[1].stream, name));
    snprintf(path, sizeof path, "%s/.raw", dir);
    CHECK_EQ_INT(find_file(path, b[2].stream, name, sizeof name), 1);   /* the child's stream has that name */
    free(r->data);
    free(r);
    unsetenv("TRAINSCOPE_STATUS");
}

static volatile sig_atomic_t program_handler_ran;
static void program_handler(int sig) { program_handler_ran = sig; }

/* Child: trace, then get SIGTERM. Its own handler must still run (chained),
 * and then default SIGTERM kills it with the events already on disk. */
static void sigterm_child(const char *dir, int with_handler)
{
    if (with_handler) signal(SIGTERM, program_handler);
    if (ts_trace_start(dir) != TS_OK) _exit(10);
    for (int i = 0; i < 100; i++) ts_trace_instant("test", "before signal");
    raise(SIGTERM);
    if (with_handler) _exit(program_handler_ran == SIGTERM ? 0 : 11);
    _exit(12);   /* not reached: default SIGTERM terminates */
}

TEST(sigterm_flushes_the_raw_stream_and_chains_the_programs_handler)
{
    const char *dir = tmp_dir();
    pid_t pid = fork();
    if (pid == 0) sigterm_child(dir, 1);
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

    pid = fork();
    if (pid == 0) sigterm_child(dir, 0);
    waitpid(pid, &st, 0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    /* The killed process left a raw stream; converting it gives its events. */
    char raw_dir[256], raw[512], out[512], err[512];
    snprintf(raw_dir, sizeof raw_dir, "%s/.raw", dir);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%d-", (int)pid);
    CHECK_EQ_INT(find_file(raw_dir, prefix, raw, sizeof raw), 1);
    CHECK_EQ_INT(ts__raw_convert(raw, dir, out, sizeof out, err, sizeof err, NULL), TS_OK);
    char *s = slurp(out);
    CHECK_EQ_INT(count_str(s, "before signal"), 100);
    CHECK(json_valid(out));
    free(s);
}

TEST(converter_rejects_a_file_that_is_not_a_capture)
{
    char path[] = "/tmp/ts_notraw_XXXXXX", err[512];
    int fd = mkstemp(path);
    CHECK(write(fd, "{\"traceEvents\":[]}", 18) == 18);
    close(fd);
    CHECK_EQ_INT(ts__raw_convert(path, "/tmp", NULL, 0, err, sizeof err, NULL), TS_EFORMAT);
    CHECK(strstr(err, "not a trainscope raw capture") != NULL);
    unlink(path);
}

TEST(converter_keeps_whole_chunks_of_a_truncated_stream)
{
    const char *dir = tmp_dir();
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    ts_trace_instant("test", "first");
    ts_trace_flush();
    ts_trace_instant("test", "second");
    ts_trace_flush();
    /* Simulate a crash in the middle of writing the second chunk. */
    char raw_dir[256], raw[512], out[512], err[512];
    snprintf(raw_dir, sizeof raw_dir, "%s/.raw", dir);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%d-", (int)getpid());
    CHECK_EQ_INT(find_file(raw_dir, prefix, raw, sizeof raw), 1);
    struct stat st;
    stat(raw, &st);
    CHECK(truncate(raw, st.st_size - 8) == 0);
    ts__raw_losses losses;
    CHECK_EQ_INT(ts__raw_convert(raw, dir, out, sizeof out, err, sizeof err, &losses), TS_OK);
    char *s = slurp(out);
    CHECK(strstr(s, "\"first\"") && !strstr(s, "\"second\""));
    /* The cut is said, with the byte where the incomplete chunk begins. */
    CHECK(losses.cut_at_byte > sizeof(ts__raw_header) && losses.cut_at_byte < (uint64_t)st.st_size);
    char key[64];
    snprintf(key, sizeof key, "\"cut_at_byte\":%llu,", (unsigned long long)losses.cut_at_byte);
    CHECK(strstr(s, key) != NULL);
    CHECK(json_valid(out));   /* 26 Nov: it was written inside dropped_by_thread with a trailing comma */
    free(s);
}

/* A hand-made TSC stream: header (start_ns, start_tsc 0), one chunk whose
 * clock sample is (sample_tsc, sample_ns), and two complete events: a sound
 * one at tick 1 and one at tick `far`. Returns the file's path in path. */
static void write_tsc_stream(char *path, int64_t start_ns, int64_t sample_ns, uint64_t sample_tsc, int64_t far)
{
    ts__raw_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, TS__RAW_MAGIC, 8);
    h.pid = 4242;
    h.rank = h.world_size = -1;
    h.start_ns = start_ns;
    h.clock_kind = TS__CLOCK_TSC;
    char recs[2][32];
    for (int i = 0; i < 2; i++) {
        ts__rec r = {.size = 32, .type = TS__REC_X, .ts_ns = i ? far : 1};
        int64_t dur = 1;
        memset(recs[i], 0, 32);
        memcpy(recs[i], &r, sizeof r);
        memcpy(recs[i] + sizeof r, &dur, 8);
        memcpy(recs[i] + sizeof r + 8, i ? "c\0far" : "c\0near", i ? 6 : 7);
    }
    ts__raw_chunk ck = {.magic = TS__RAW_CHUNK_MAGIC, .tid = 7, .n_bytes = sizeof recs,
                        .sample_ns = sample_ns, .sample_tsc = sample_tsc};
    int fd = mkstemp(path);
    CHECK(write(fd, &h, sizeof h) == (ssize_t)sizeof h);
    CHECK(write(fd, &ck, sizeof ck) == (ssize_t)sizeof ck);
    CHECK(write(fd, recs, sizeof recs) == (ssize_t)sizeof recs);
    close(fd);
}

/* A damaged stream can hold any bits: times are taken in doubles and a
 * record whose time is past about 146 years from 0 is counted as bad, not
 * converted (UBSan in `make test` would stop on an int64 overflow). */
TEST(converter_counts_records_with_times_out_of_range_as_bad)
{
    const char *dir = tmp_dir();
    char path[] = "/tmp/ts_rawtime_XXXXXX", out[512], err[512];
    /* Samples 8e18 ns apart over one tick: the far event maps past range. */
    write_tsc_stream(path, -4000000000000000000, 4000000000000000000, 1, 1000);
    CHECK_EQ_INT(ts__raw_convert(path, dir, out, sizeof out, err, sizeof err, NULL), TS_OK);
    char *s = slurp(out);
    CHECK(strstr(s, "\"near\"") && !strstr(s, "\"far\""));
    CHECK(strstr(s, "\"bad_records\":1") != NULL);
    free(s);
    unlink(out);
    unlink(path);
    /* A start time out of range is the header's fault: an error naming its byte. */
    char path2[] = "/tmp/ts_rawtime_XXXXXX";
    write_tsc_stream(path2, INT64_MIN, 0, 1, 1);
    CHECK_EQ_INT(ts__raw_convert(path2, dir, NULL, 0, err, sizeof err, NULL), TS_EPARSE);
    CHECK(strstr(err, "byte 24: start time") != NULL);
    unlink(path2);
}

TEST(record_rejects_bad_usage_before_starting_the_program)
{
    char cmd[1024], *out = NULL;
    const char *dir = tmp_dir();
    snprintf(cmd, sizeof cmd, "%s record --bogus -- true 2>&1", ts_test_cli());
    CHECK_EQ_INT(ts_test_run(cmd, &out), 2);
    CHECK(strstr(out, "unknown option '--bogus'") != NULL);
    free(out);
    snprintf(cmd, sizeof cmd, "%s record -o %s -- /no/such/program 2>&1", ts_test_cli(), dir);
    CHECK_EQ_INT(ts_test_run(cmd, &out), 127);   /* a shell's code for "not found" */
    CHECK(strstr(out, "/no/such/program: command not found") != NULL);
    free(out);
    snprintf(cmd, sizeof cmd, "%s record -o /proc/no/such/dir -- true 2>&1", ts_test_cli());
    CHECK_EQ_INT(ts_test_run(cmd, &out), 2);
    CHECK(strstr(out, "cannot write") != NULL);
    free(out);
    snprintf(cmd, sizeof cmd, "%s record -o %s 2>&1", ts_test_cli(), dir);
    CHECK_EQ_INT(ts_test_run(cmd, &out), 2);
    CHECK(strstr(out, "no command") != NULL);
    free(out);
    const char *sizes[] = {"2", "64k", "", "2000000"};
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd, "%s record --buffer-kb '%s' -o %s -- true 2>&1", ts_test_cli(), sizes[i], dir);
        CHECK_EQ_INT(ts_test_run(cmd, &out), 2);
        CHECK(strstr(out, "--buffer-kb needs a size in KiB") != NULL);
        free(out);
    }
}

TEST(push_of_a_reused_buffer_records_the_new_text)
{
    const char *dir = tmp_dir();
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    char name[32];
    for (int i = 0; i < 3; i++) {   /* same address, new text: the pair cache must notice */
        snprintf(name, sizeof name, "layer%d", i);
        ts_trace_push("python_function", name);
        ts_trace_pop();
        ts_trace_push("python_function", name);   /* and reuse it when unchanged */
        ts_trace_pop();
    }
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char path[512];
    CHECK_EQ_INT(find_file(dir, "pid-", path, sizeof path), 1);
    char *s = slurp(path);
    CHECK_EQ_INT(count_str(s, "\"name\":\"layer0\""), 2);
    CHECK_EQ_INT(count_str(s, "\"name\":\"layer1\""), 2);
    CHECK_EQ_INT(count_str(s, "\"name\":\"layer2\""), 2);
    free(s);
}

/* The "ts" of the event named name in a JSON trace, in ns; -1 when absent. */
static int64_t ts_of(const char *json, const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "\"name\":\"%s\"", name);
    const char *at = strstr(json, key), *line = at;
    while (line && line > json && line[-1] != '\n') line--;
    const char *ts = line ? strstr(line, "\"ts\":") : NULL;
    if (!ts || ts > at) return -1;
    long long us = 0, frac = 0;
    sscanf(ts + 5, "%lld.%lld", &us, &frac);
    return us * 1000 + frac;
}

TEST(fast_path_stamps_agree_with_the_monotonic_clock)
{
    const char *dir = tmp_dir();
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    const char *fast[] = {"fast0", "fast1", "fast2"}, *ns[] = {"ns0", "ns1", "ns2"};
    for (int i = 0; i < 3; i++) {
        ts_trace_instant("test", fast[i]);   /* TSC where the CPU has an invariant one */
        ts_trace_event ev = {.size = sizeof ev, .phase = 'i', .cat = "test", .name = ns[i],
                             .ts_ns = ts_trace_now_ns(), .pid = -1, .tid = -1};
        CHECK_EQ_INT(ts_trace_emit(&ev), 0);
        if (i == 1) ts_trace_flush();   /* a clock sample in the middle: two segments */
        usleep(20000);
    }
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char path[512];
    CHECK_EQ_INT(find_file(dir, "pid-", path, sizeof path), 1);
    char *s = slurp(path);
    for (int i = 0; i < 3; i++) {
        int64_t a = ts_of(s, fast[i]), b = ts_of(s, ns[i]);
        CHECK(a > 0 && b > 0);
        /* Read back to back: within microseconds, unless the thread was preempted
         * between the two (allowed up to 5 ms on a loaded machine); a wrong
         * scaling of the TSC would be off by far more (seconds). */
        CHECK(b - a >= -10000 && b - a <= 5000000);
    }
    free(s);
}

TEST(device_tracks_get_kineto_process_and_stream_names)
{
    const char *dir = tmp_dir();
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    for (int stream = 7; stream <= 8; stream++)
        for (int k = 0; k < 2; k++) {
            ts_trace_event ev = {.size = sizeof ev, .phase = 'X', .cat = "kernel", .name = "gemm",
                                 .ts_ns = ts_trace_now_ns(), .dur_ns = 1000, .pid = 0, .tid = stream};
            CHECK_EQ_INT(ts_trace_emit(&ev), 0);
        }
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char path[512];
    CHECK_EQ_INT(find_file(dir, "pid-", path, sizeof path), 1);
    CHECK(json_valid(path));
    char *s = slurp(path);
    CHECK_EQ_INT(count_str(s, "\"args\":{\"name\":\"GPU 0\"}"), 1);
    CHECK_EQ_INT(count_str(s, "\"tid\":7,\"args\":{\"name\":\"stream 7\"}"), 1);
    CHECK_EQ_INT(count_str(s, "\"tid\":8,\"args\":{\"name\":\"stream 8\"}"), 1);
    CHECK_EQ_INT(count_str(s, "\"name\":\"gemm\""), 4);
    free(s);
}

/* The converter reads files a crash may have mangled: random byte damage to a
 * real stream must give a trace or an error, never a crash (ASan watches). */
TEST(converter_survives_corrupted_streams)
{
    const char *dir = tmp_dir();
    setenv("TRAINSCOPE_DEFER_CONVERT", "1", 1);   /* keep the raw stream */
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    ts_trace_arg args[] = {{"bytes", NULL, 7}, {"op", "sum", 0}};
    for (int i = 0; i < 20; i++) {
        ts_trace_push("cpu_op", i % 2 ? "a" : "b");
        ts_trace_begin((uint64_t)i, "user_annotation", "async");
        ts_trace_counter("c", i);
        ts_trace_event ev = {.size = sizeof ev, .phase = 'X', .cat = "mpi", .name = "x", .ts_ns = ts_trace_now_ns(),
                             .dur_ns = 5, .pid = -1, .tid = -1, .flow_id = 3, .flow_phase = 'f', .args = args, .n_args = 2};
        CHECK_EQ_INT(ts_trace_emit(&ev), 0);
        ts_trace_end((uint64_t)i);
        ts_trace_pop();
    }
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char raw_dir[256], raw[512], prefix[32];
    snprintf(raw_dir, sizeof raw_dir, "%s/.raw", dir);
    snprintf(prefix, sizeof prefix, "%d-", (int)getpid());
    CHECK_EQ_INT(find_file(raw_dir, prefix, raw, sizeof raw), 1);
    struct stat st;
    stat(raw, &st);
    char *orig = slurp(raw), *bad = malloc((size_t)st.st_size);
    char bad_path[600], out_dir[600], err[512];
    snprintf(bad_path, sizeof bad_path, "%s/bad.tsr", dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    mkdir(out_dir, 0777);
    uint64_t x = 88172645463325252ULL;   /* xorshift: the same damage every run */
    int converted = 0;
    for (int round = 0; round < 300; round++) {
        memcpy(bad, orig, (size_t)st.st_size);
        for (int k = 0; k < 1 + round % 8; k++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            size_t at = sizeof(ts__raw_header) + (size_t)(x % (uint64_t)(st.st_size - (off_t)sizeof(ts__raw_header)));
            bad[at] = (char)(x >> 40);
        }
        size_t len = round % 3 ? (size_t)st.st_size : (size_t)(x % (uint64_t)st.st_size);   /* and truncation */
        FILE *f = fopen(bad_path, "wb");
        fwrite(bad, 1, len, f);
        fclose(f);
        char out[700];
        if (ts__raw_convert(bad_path, out_dir, out, sizeof out, err, sizeof err, NULL) == TS_OK) {
            converted++;
            if (converted <= 30) CHECK(json_valid(out));   /* a python run each: the first 30 */
            unlink(out);
        }
    }
    CHECK(converted > 0);
    free(orig);
    free(bad);
}

TEST(names_cut_inside_a_utf8_character_stay_valid_json)
{
    const char *dir = tmp_dir();
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    char name[400];
    size_t n = 0;
    while (n + 2 < sizeof name - 1) { name[n++] = (char)0xc3; name[n++] = (char)0xa9; }   /* "ééé...": 2 bytes each */
    name[n] = 0;
    ts_trace_instant("test", name + 1);   /* starts with a continuation byte, cut at 255 bytes */
    ts_trace_instant("test", "caf\xc3\xa9 \xed\xa0\x80 ok");   /* a UTF-8-encoded surrogate is not UTF-8 */
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    char path[512];
    CHECK_EQ_INT(find_file(dir, "pid-", path, sizeof path), 1);
    CHECK(json_valid(path));
    char *s = slurp(path);
    CHECK(strstr(s, "caf\xc3\xa9 \\ufffd\\ufffd\\ufffd ok") != NULL);
    free(s);
}

/* A program that closes every descriptor and opens its own file may get the
 * tracer's number: that file must never receive trace bytes, and the trace
 * goes on in the same stream through a new descriptor. */
TEST(a_reused_descriptor_never_receives_trace_bytes)
{
    const char *dir = tmp_dir();
    CHECK_EQ_INT(ts_trace_start(dir), TS_OK);
    CHECK(ts__rt_fd >= 200);   /* kept out of the low numbers programs dup2 onto */
    char mine[600];
    snprintf(mine, sizeof mine, "%s/program_file", dir);
    int fd = open(mine, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && dup2(fd, ts__rt_fd) == ts__rt_fd);   /* the program's file now has our number */
    close(fd);
    int reused = ts__rt_fd;
    for (int i = 0; i < 1000; i++) { ts_trace_push("cpu_op", "after_reuse"); ts_trace_pop(); }
    ts_trace_flush();
    CHECK(ts__rt_fd != reused);   /* the stream was opened again elsewhere */
    CHECK_EQ_INT(ts_trace_stop(), TS_OK);
    struct stat st;
    CHECK(stat(mine, &st) == 0);
    CHECK_EQ_INT(st.st_size, 0);
    CHECK(fcntl(reused, F_GETFD) >= 0);   /* and the program's descriptor was left open */
    close(reused);
    char path[512];
    CHECK_EQ_INT(find_file(dir, "pid-", path, sizeof path), 1);
    char *json = slurp(path);
    CHECK_EQ_INT(count_str(json, "\"name\":\"after_reuse\""), 1000);   /* nothing lost either */
    free(json);
}

/* A flow record whose phase is none of s, t, f (a damaged stream; found by
 * fuzz_raw once it loaded what it converted, 26 Nov: the byte was written as
 * the event's "ph", a NUL made the file unreadable) is counted as damaged and
 * left out; the file stays valid JSON. */
TEST(flow_records_with_an_unknown_phase_are_counted_as_damaged)
{
    ts__raw_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, TS__RAW_MAGIC, 8);
    h.pid = 4243;
    h.rank = h.world_size = -1;
    h.start_ns = 1000;
    h.clock_kind = TS__CLOCK_NS;
    char recs[4][32];
    const uint8_t phases[4] = {0, 's', 0, 'x'};
    for (int i = 0; i < 4; i++) {
        ts__rec r = {.size = 32, .type = i ? TS__REC_FLOW : TS__REC_X, .flow_phase = phases[i], .ts_ns = 2000};
        int64_t v = i ? 70 + i : 5;   /* flow id, or the X's duration */
        memset(recs[i], 0, 32);
        memcpy(recs[i], &r, sizeof r);
        memcpy(recs[i] + sizeof r, &v, 8);
        memcpy(recs[i] + sizeof r + 8, i ? "fl" : "c\0op", i ? 3 : 5);
    }
    ts__raw_chunk ck = {.magic = TS__RAW_CHUNK_MAGIC, .tid = 7, .n_bytes = sizeof recs};
    char path[] = "/tmp/ts_rawflow_XXXXXX", out[512], err[512];
    int fd = mkstemp(path);
    CHECK(write(fd, &h, sizeof h) == (ssize_t)sizeof h);
    CHECK(write(fd, &ck, sizeof ck) == (ssize_t)sizeof ck);
    CHECK(write(fd, recs, sizeof recs) == (ssize_t)sizeof recs);
    close(fd);
    CHECK_EQ_INT(ts__raw_convert(path, tmp_dir(), out, sizeof out, err, sizeof err, NULL), TS_OK);
    CHECK(json_valid(out));
    char *s = slurp(out);
    CHECK(strstr(s, "\"bad_records\":2") != NULL);
    CHECK(strstr(s, "\"id\":71") != NULL && strstr(s, "\"id\":72") == NULL && strstr(s, "\"id\":73") == NULL);
    free(s);
    unlink(out);
    unlink(path);
}
