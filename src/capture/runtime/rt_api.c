/* rt_api.c - the host tracing API (include/trainscope/trace.h): start and
 * stop, the event writers, and the process hooks that keep a trace whole:
 * exit, SIGTERM/SIGINT and crash signals (chained to the program's own
 * handlers), and fork (the child starts its own stream).
 *
 * Not for: buffering (rt_buffer.c) or formatting (raw2json.c).
 *
 * Invariants: ts_trace_on is 1 only while ts__rt_fd is an open raw stream;
 * every writer checks it first with a relaxed load. Signal handlers only
 * drain rings (writev) and re-raise: nothing there allocates or locks.
 */
#include "trainscope/trace.h"
#include "capture/runtime/rt.h"

#include <dlfcn.h>
#include <errno.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <stdatomic.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int ts_trace_on;

static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER; /* start/stop only */
static char out_dir[PATH_MAX];       /* DIR given to start */
static char raw_path[PATH_MAX + 128]; /* current raw stream: .raw/<pid>-<seq>-<start ns>.tsr, unique across exec */
static unsigned raw_seq;             /* streams opened by this process image */
static int32_t env_rank = -1, env_world = -1;
static int hooks_installed;
static pid_t rt_pid;                 /* process the stream belongs to; a vfork child differs */

static const int flush_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE};
#define N_FLUSH_SIGNALS (sizeof flush_signals / sizeof flush_signals[0])
static struct sigaction old_actions[N_FLUSH_SIGNALS];  /* the program's actions, called after a drain */
static bool ours[N_FLUSH_SIGNALS];                      /* on_signal is installed for this signal */

/* libc's sigaction: the preload library interposes `sigaction`, and the
 * runtime's own calls must not go through that (RTLD_NEXT from here skips it). */
static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    static int (*fn)(int, const struct sigaction *, struct sigaction *);
    if (!fn) fn = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
    if (!fn) fn = sigaction;   /* statically linked into a test: no interposer */
    return fn(sig, act, old);
}

static int flush_index(int sig)
{
    for (size_t i = 0; i < N_FLUSH_SIGNALS; i++)
        if (flush_signals[i] == sig) return (int)i;
    return -1;
}

int64_t ts_trace_now_ns(void) { return ts__rt_mono_ns(); }

/* Use the TSC when it is invariant (CPUID 0x80000007 EDX bit 8: constant
 * rate, runs in every C-state), unless TRAINSCOPE_CLOCK=monotonic. */
static int tsc_usable(void)
{
    const char *env = getenv("TRAINSCOPE_CLOCK");
    if (env && !strcmp(env, "monotonic")) return 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) return 0;
    __get_cpuid(0x80000007, &a, &b, &c, &d);
    return (d >> 8) & 1;
#else
    return 0;
#endif
}

/* ---- writing records ---- */

static inline ts__ring *my_ring(void)
{
    ts__ring *r = ts__t_ring;
    return r ? r : ts__rt_ring_slow();
}

static inline size_t cut_len(const char *s)
{
    return s ? strnlen(s, TS_TRACE_MAX_STR) : 0;
}

static inline char *put_str(char *p, const char *s, size_t n)
{
    if (n) memcpy(p, s, n);
    p[n] = 0;
    return p + n + 1;
}

#define ALIGN8(n) (((n) + 7u) & ~7u)

/* The fast path of every simple record: header, v when the type has one,
 * up to two strings. */
static inline void write_rec(uint8_t type, const char *s1, const char *s2, int64_t v,
                             uint8_t flow_phase)
{
    ts__ring *r = my_ring();
    if (!r) return;
    size_t n1 = cut_len(s1), n2 = cut_len(s2);
    uint32_t hdr = (uint32_t)sizeof(ts__rec) + (ts__rec_has_v(type) ? 8 : 0);
    uint32_t size = ALIGN8((uint32_t)(hdr + (s1 ? n1 + 1 : 0) + (s2 ? n2 + 1 : 0)));
    ts__rec *rec = ts__ring_reserve(r, size);
    if (!rec) return;
    *rec = (ts__rec){(uint16_t)size, type, 0, 0, flow_phase, 0, ts__rt_stamp()};
    if (hdr > sizeof *rec) memcpy(rec + 1, &v, 8);
    char *p = (char *)rec + hdr;
    if (s1) p = put_str(p, s1, n1);
    if (s2) p = put_str(p, s2, n2);
    memset(p, 0, (size_t)((char *)rec + size - p));
    ts__ring_commit(r, size);
}

/* Find (cat, name) in r's pair cache, defining it with an SDEF record when
 * new. 1: *id is set; 0: not cacheable (write a plain push); -1: dropped. */
static int pair_id(ts__ring *r, const char *cat, const char *name, size_t n1, size_t n2, uint16_t *id)
{
    if (!r->pairs || n1 >= TS_TRACE_MAX_STR || n2 >= TS_TRACE_MAX_STR) return 0;
    size_t h = (((uintptr_t)cat >> 3) * 31 + ((uintptr_t)name >> 3)) & (TS__PAIR_SLOTS - 1);
    ts__pair *p = &r->pairs[h];
    if (p->cat == cat && p->name == name && !memcmp(p->text, cat, n1 + 1) &&
        !memcmp(p->text + n1 + 1, name, n2 + 1)) {
        *id = p->id;
        return 1;
    }
    if (r->n_str_ids > UINT16_MAX) return 0;
    uint32_t size = ALIGN8((uint32_t)(sizeof(ts__rec) + n1 + 1 + n2 + 1));
    ts__rec *rec = ts__ring_reserve(r, size);
    if (!rec) return -1;
    *id = (uint16_t)r->n_str_ids++;
    *rec = (ts__rec){(uint16_t)size, TS__REC_SDEF, 0, 0, 0, *id, 0};
    char *t = put_str(put_str((char *)(rec + 1), cat, n1), name, n2);
    memset(t, 0, (size_t)((char *)rec + size - t));
    ts__ring_commit(r, size);
    p->cat = cat;
    p->name = name;
    p->id = *id;
    memcpy(p->text, rec + 1, n1 + 1 + n2 + 1);
    return 1;
}

void ts_trace_push(const char *cat, const char *name)
{
    if (!TS_TRACE_ON()) return;
    ts__ring *r = my_ring();
    if (!r) return;
    if (!cat) cat = "";
    if (!name) name = "";
    uint16_t id;
    int got = pair_id(r, cat, name, strnlen(cat, TS_TRACE_MAX_STR), strnlen(name, TS_TRACE_MAX_STR), &id);
    if (got < 0) return;
    if (got == 0) { write_rec(TS__REC_B, cat, name, 0, 0); return; }
    ts__rec *rec = ts__ring_reserve(r, sizeof *rec);
    if (!rec) return;
    *rec = (ts__rec){sizeof *rec, TS__REC_BREF, 0, 0, 0, id, ts__rt_stamp()};
    ts__ring_commit(r, sizeof *rec);
}

void ts_trace_pop(void)
{
    if (TS_TRACE_ON()) write_rec(TS__REC_E, NULL, NULL, 0, 0);
}

void ts_trace_begin(uint64_t id, const char *cat, const char *name)
{
    if (TS_TRACE_ON()) write_rec(TS__REC_AB, cat, name, (int64_t)id, 0);
}

void ts_trace_end(uint64_t id)
{
    if (TS_TRACE_ON()) write_rec(TS__REC_AE, NULL, NULL, (int64_t)id, 0);
}

void ts_trace_instant(const char *cat, const char *name)
{
    if (TS_TRACE_ON()) write_rec(TS__REC_I, cat, name, 0, 0);
}

void ts_trace_counter(const char *name, double value)
{
    int64_t bits;
    memcpy(&bits, &value, sizeof bits);
    if (TS_TRACE_ON()) write_rec(TS__REC_C, name, NULL, bits, 0);
}

void ts_trace_flow(uint64_t id, char phase, const char *cat)
{
    if (phase != 's' && phase != 't' && phase != 'f') return;
    if (TS_TRACE_ON()) write_rec(TS__REC_FLOW, cat, NULL, (int64_t)id, (uint8_t)phase);
}

void ts_trace_thread_name(const char *name)
{
    if (TS_TRACE_ON()) write_rec(TS__REC_TNAME, name, NULL, 0, 0);
}

void ts_trace_set_rank(int rank, int world_size)
{
    uint64_t v = ((uint64_t)(uint32_t)rank << 32) | (uint32_t)world_size;
    if (TS_TRACE_ON()) write_rec(TS__REC_RANK, NULL, NULL, (int64_t)v, 0);
}

/* Bytes an arg takes in the record. */
/* An emitted event's name may be a GPU kernel's demangled C++ signature (5 KB
 * are seen in real traces): kept whole up to here. */
#define EMIT_NAME_MAX 8191

/* A JSON arg may be longer than a name ("Input Dims" of a concatenation of
 * many tensors): 16 of them still fit the record's 16-bit size. */
#define JSON_ARG_MAX 2047

static inline size_t str_len(const char *s, bool json)
{
    return json ? strnlen(s, JSON_ARG_MAX) : cut_len(s);
}

static size_t arg_bytes(const ts_trace_arg *a, bool json)
{
    return cut_len(a->key) + 2 + (a->str ? str_len(a->str, json) + 1 : 8);
}

/* 'j' marks a string the caller says is JSON text (raw2json checks it). */
static char *put_arg(char *p, const ts_trace_arg *a, bool json)
{
    p = put_str(p, a->key, cut_len(a->key));
    if (a->str) { *p++ = json ? 'j' : 's'; return put_str(p, a->str, str_len(a->str, json)); }
    *p++ = 'i';
    memcpy(p, &a->num, 8);
    return p + 8;
}

int ts_trace_emit(const ts_trace_event *ev)
{
    /* Callers built before json_args existed pass the smaller size. */
    if (!TS_TRACE_ON() || !ev || ev->size < offsetof(ts_trace_event, json_args)) return 1;
    uint64_t json = ev->size >= sizeof *ev ? ev->json_args : 0;
    uint8_t type = ev->phase == 'X' ? TS__REC_X : ev->phase == 'i' ? TS__REC_I
                 : ev->phase == 'C' ? TS__REC_C : TS__REC_PAD;
    if (type == TS__REC_PAD) return 1;
    ts__ring *r = my_ring();
    if (!r) return 1;
    uint32_t n_args = 0;
    size_t bytes = sizeof(ts__rec) + 8 + 16;   /* header, v, pid, tid */
    bool has_flow = ev->flow_id != 0 && type == TS__REC_X;
    if (has_flow) bytes += 8 + cut_len(ev->flow_cat ? ev->flow_cat : "ac2g") + 1;
    const char *s1 = type == TS__REC_C ? ev->name : ev->cat;
    size_t n_name = ev->name ? strnlen(ev->name, EMIT_NAME_MAX) : 0;
    bytes += cut_len(s1) + 1 + (type == TS__REC_C ? 0 : n_name + 1);
    for (; n_args < ev->n_args && n_args < TS_TRACE_MAX_ARGS && ev->args[n_args].key; n_args++)
        bytes += arg_bytes(&ev->args[n_args], (json >> n_args) & 1);
    uint32_t size = ALIGN8((uint32_t)bytes);
    ts__rec *rec = ts__ring_reserve(r, size);
    if (!rec) return 1;
    *rec = (ts__rec){(uint16_t)size, type, (uint8_t)(TS__RECF_TRACK | TS__RECF_NS | (has_flow ? TS__RECF_FLOW : 0)),
                     (uint8_t)n_args, has_flow ? (uint8_t)ev->flow_phase : 0, 0, ev->ts_ns};
    /* Instants carry v too here: emitted records always have the same layout. */
    int64_t head[3] = {ev->dur_ns, ev->pid, ev->tid};
    if (type == TS__REC_C) memcpy(&head[0], &ev->value, 8);
    char *p = (char *)(rec + 1);
    memcpy(p, head, 24);
    p += 24;
    if (has_flow) { memcpy(p, &ev->flow_id, 8); p += 8; }
    p = put_str(p, s1, cut_len(s1));
    if (type != TS__REC_C) p = put_str(p, ev->name, n_name);
    if (has_flow) p = put_str(p, ev->flow_cat ? ev->flow_cat : "ac2g", cut_len(ev->flow_cat ? ev->flow_cat : "ac2g"));
    for (uint32_t i = 0; i < n_args; i++) p = put_arg(p, &ev->args[i], (json >> i) & 1);
    memset(p, 0, (size_t)((char *)rec + size - p));
    ts__ring_commit(r, size);
    return 0;
}

uint64_t ts_trace_dropped(void) { return ts__rt_dropped(); }

void ts_trace_flush(void)
{
    if (ts__rt_fd >= 0) ts__rt_drain_all(ts__rt_fd);
}

/* ---- the raw stream ---- */

static void env_rank_read(void)
{
    static const char *const ranks[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    static const char *const sizes[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL};
    env_rank = env_world = -1;
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
        const char *r = getenv(ranks[i]), *w = sizes[i] ? getenv(sizes[i]) : NULL;
        if (r && *r) {
            env_rank = atoi(r);
            if (w && *w) env_world = atoi(w);
            return;
        }
    }
}

static void comm_read(char *comm, size_t n)
{
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, comm, n - 1) : -1;
    if (fd >= 0) close(fd);
    if (got < 0) got = 0;
    comm[got] = 0;
    char *nl = strchr(comm, '\n');
    if (nl) *nl = 0;
}

/* ---- record's status board (rawfmt.h): what never reaches the disk ---- */

static ts__status_slot *status_map;  /* the mapped board; NULL when not under record */
static ts__status_slot *status_me;   /* the current stream's slot; NULL = none */

static void status_map_open(void)
{
    const char *path = getenv("TRAINSCOPE_STATUS");
    if (status_map || !path || !*path) return;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0) return;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)TS__STATUS_BYTES) { close(fd); return; }
    void *m = mmap(NULL, TS__STATUS_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return;
    if (memcmp(((ts__status_slot *)m)->magic, TS__STATUS_MAGIC, 8)) { munmap(m, TS__STATUS_BYTES); return; }
    status_map = m;
}

/* Claim a slot for the stream <pid>-<seq>- (the header counts claims past the last slot too). */
static void status_claim(unsigned seq, const char *comm)
{
    status_me = NULL;
    status_map_open();
    if (!status_map) return;
    uint32_t i = __atomic_fetch_add(&status_map[0].pid, 1, __ATOMIC_RELAXED) + 1;
    if (i >= TS__STATUS_SLOTS) return;
    ts__status_slot *s = &status_map[i];
    snprintf(s->stream, sizeof s->stream, "%d-%u-", (int)getpid(), seq);
    snprintf(s->comm, sizeof s->comm, "%.*s", (int)sizeof s->comm - 1, comm);
    __atomic_store_n(&s->state, TS__STATUS_TRACING, __ATOMIC_RELAXED);
    __atomic_store_n(&s->pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
    status_me = s;
}

/* n events never reached the stream (err: the failed write's errno). Async-signal-safe. */
void ts__rt_note_lost(uint64_t n, int err)
{
    ts__status_slot *s = status_me;
    if (!s || !n) return;
    __atomic_fetch_add(&s->lost, n, __ATOMIC_RELAXED);
    int32_t none = 0;
    __atomic_compare_exchange_n(&s->err, &none, err ? err : EIO, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* The stream could not be opened: every event of this process image is lost. */
static void status_no_stream(int err)
{
    if (status_me) {
        status_me->stream[0] = 0;   /* no file: record counts the process, not events */
        __atomic_store_n(&status_me->err, err ? err : EIO, __ATOMIC_RELAXED);
    }
}

static void status_close(void)
{
    if (status_me) __atomic_store_n(&status_me->state, TS__STATUS_CLOSED, __ATOMIC_RELEASE);
    status_me = NULL;
}

/* Open DIR/.raw/<pid>-<seq>.tsr and write its header. */
static int raw_open(void)
{
    char raw_dir[PATH_MAX + 16];
    snprintf(raw_dir, sizeof raw_dir, "%s/.raw", out_dir);
    mkdir(raw_dir, 0777);
    char comm[sizeof ((ts__raw_header *)0)->comm];
    comm_read(comm, sizeof comm);
    status_claim(raw_seq, comm);
    snprintf(raw_path, sizeof raw_path, "%s/%d-%u-%lld.tsr", raw_dir, (int)getpid(), raw_seq++,
             (long long)ts_trace_now_ns());
    int fd = open(raw_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0) { status_no_stream(errno); status_close(); return -1; }
    /* Out of the low numbers programs dup2 onto, and remembered by identity:
     * a program that closes every descriptor and opens a file that gets our
     * number must never receive trace bytes (ts__ring_drain checks). */
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 200);
    if (high >= 0) { close(fd); fd = high; }
    struct stat st;
    if (fstat(fd, &st) == 0) { ts__rt_dev = st.st_dev; ts__rt_ino = st.st_ino; }
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    ts__raw_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, TS__RAW_MAGIC, 8);
    h.pid = (uint32_t)getpid();
    h.ppid = (uint32_t)getppid();
    h.clock_kind = ts__rt_tsc ? TS__CLOCK_TSC : TS__CLOCK_NS;
    h.start_tsc = ts__rt_tsc_now();
    h.start_ns = ts_trace_now_ns();
    h.realtime_offset_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - h.start_ns;
    h.rank = env_rank;
    h.world_size = env_world;
    memcpy(h.comm, comm, sizeof h.comm);
    if (write(fd, &h, sizeof h) != (ssize_t)sizeof h) {
        status_no_stream(errno);
        status_close();
        close(fd);
        unlink(raw_path);
        return -1;
    }
    atomic_store(&ts__rt_stream_cut, 0);
    return fd;
}

int ts__rt_reopen(int lost)
{
    static atomic_int busy;
    int expect = 0, fd = -1;
    if (!atomic_compare_exchange_strong(&busy, &expect, 1)) return -1;
    if (ts__rt_fd != lost) {   /* another thread reopened meanwhile */
        fd = ts__rt_fd_is_ours(ts__rt_fd) ? ts__rt_fd : -1;
    } else if ((fd = open(raw_path, O_WRONLY | O_APPEND | O_CLOEXEC)) >= 0) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, 200);
        if (high >= 0) { close(fd); fd = high; }
        if (ts__rt_fd_is_ours(fd)) ts__rt_fd = fd;   /* the same file, not one put in its place */
        else { close(fd); fd = -1; }
    }
    atomic_store(&busy, 0);
    return fd;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (ts__rt_fd >= 0) ts__rt_drain_all(ts__rt_fd);
    int i = flush_index(sig);
    if (i < 0) { errno = saved; return; }
    struct sigaction old = old_actions[i];
    if (old.sa_flags & SA_RESETHAND) {   /* one-shot handler: the next one gets the default */
        old_actions[i].sa_handler = SIG_DFL;
        old_actions[i].sa_flags = 0;
    }
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
        old.sa_sigaction(sig, si, uc);
    } else if (old.sa_handler == SIG_DFL) {
        /* Default action: restore it and re-raise; the signal is blocked in
         * this handler, so it is delivered (and kills us) when we return. */
        ours[i] = false;
        real_sigaction(sig, &old, NULL);
        raise(sig);
    } else if (old.sa_handler != SIG_IGN) {
        old.sa_handler(sig);
    }
    errno = saved;
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_FLUSH_SIGNALS; i++) {
        struct sigaction cur;
        if (real_sigaction(flush_signals[i], NULL, &cur) != 0) continue;
        if (cur.sa_handler == SIG_IGN) { old_actions[i] = cur; continue; } /* nohup'd: keep ignoring */
        if (real_sigaction(flush_signals[i], &sa, &old_actions[i]) != 0) old_actions[i] = cur;
        else ours[i] = true;
    }
}

/* The program (through the preload library's sigaction) sets or reads the
 * action of a signal we flush on: it goes into the chain behind our handler
 * instead of replacing it. Returns 1 when handled, 0 for any other signal. */
int ts__rt_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int i = flush_index(sig);
    if (i < 0 || !ours[i]) return 0;
    if (old) *old = old_actions[i];
    if (act) old_actions[i] = *act;
    return 1;
}

static void fork_prepare(void) { pthread_mutex_lock(&life_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&life_lock); }

/* The child keeps tracing into a stream of its own. */
static void fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    life_lock = fresh;
    if (ts__rt_fd < 0) return;
    if (ts__rt_fd_is_ours(ts__rt_fd)) close(ts__rt_fd);   /* the parent's stream: never written by the child */
    ts__rt_rings_after_fork();
    raw_seq = 0;
    rt_pid = getpid();
    ts__rt_fd = raw_open();
    if (ts__rt_fd < 0) __atomic_store_n(&ts_trace_on, 0, __ATOMIC_RELAXED);
}

static void at_exit(void) { (void)ts_trace_stop(); }

static void install_hooks(void)
{
    if (hooks_installed) return;
    hooks_installed = 1;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    atexit(at_exit);
    install_signals();
}

int ts_trace_start(const char *dir)
{
    if (!dir || !*dir) return TS_EINVAL;
    pthread_mutex_lock(&life_lock);
    int rc = TS_OK;
    if (ts__rt_fd >= 0) { rc = TS_EINVAL; goto out; }
    if (strlen(dir) >= sizeof out_dir - 64) { rc = TS_EINVAL; goto out; }
    strcpy(out_dir, dir);
    mkdir(out_dir, 0777);
    const char *kb = getenv("TRAINSCOPE_BUFFER_KB");
    uint32_t bytes = TS__RT_DEFAULT_BUF_BYTES;
    if (kb && atoi(kb) >= 4) {
        bytes = 4096;   /* capacity is a power of two so offsets are a mask */
        while (bytes < (uint32_t)atoi(kb) * 1024u && bytes < (1u << 30)) bytes <<= 1;
    }
    ts__rt_buf_bytes = bytes;
    env_rank_read();
    ts__rt_tsc = tsc_usable();
    ts__rt_forget_pairs();
    int fd = raw_open();
    if (fd < 0) { rc = TS_EIO; goto out; }
    ts__rt_fd = fd;
    rt_pid = getpid();
    install_hooks();
    __atomic_store_n(&ts_trace_on, 1, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&life_lock);
    return rc;
}

int ts_trace_stop(void)
{
    pthread_mutex_lock(&life_lock);
    int rc = TS_OK;
    if (ts__rt_fd < 0) goto out;
    __atomic_store_n(&ts_trace_on, 0, __ATOMIC_RELAXED);
    ts__rt_drain_all(ts__rt_fd);
    if (ts__rt_fd_is_ours(ts__rt_fd)) close(ts__rt_fd);   /* else the number is the program's now */
    ts__rt_fd = -1;
    status_close();
    /* Under `trainscope record` the conversion waits until the job is over,
     * so the traced program's exit is not delayed by it. */
    const char *defer = getenv("TRAINSCOPE_DEFER_CONVERT");
    if (defer && *defer == '1') goto out;
    char err[512];
    rc = ts__raw_convert(raw_path, out_dir, NULL, 0, err, sizeof err, NULL);
    if (rc == TS_ENODATA) rc = TS_OK;   /* nothing traced: no file */
    if (rc == TS_OK) unlink(raw_path);
    else fprintf(stderr, "trainscope: %s (raw trace kept)\n", err);
out:
    pthread_mutex_unlock(&life_lock);
    return rc;
}

/* Tracing starts by itself when TRAINSCOPE_DIR is set (trainscope record
 * sets it for the program and its children). */
__attribute__((constructor)) static void rt_init(void)
{
    const char *dir = getenv("TRAINSCOPE_DIR");
    if (dir && *dir && ts_trace_start(dir) != TS_OK)
        fprintf(stderr, "trainscope: cannot trace into %s: %s\n", dir, strerror(errno));
}
