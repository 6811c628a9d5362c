/* cmd_record.c - `trainscope record`: run a program under the tracer.
 *
 * Checks everything it can before the program starts (options, that the
 * command exists, that the output directory can be written, that the asked
 * collectors were built) and exits 2 with a message otherwise. Then it runs
 * the command with LD_PRELOAD (appended to any the caller set) and the
 * TRAINSCOPE_* variables, so the program and every process it starts write
 * their own raw stream; afterwards it converts every stream to JSON (so the
 * traced processes never spend time on it), says where the traces are and
 * what is missing and why (torch's profiler per process with --torch, what
 * Python processes recorded without it, the reason for "0 trace files"),
 * and exits with the program's own exit code (128 + signal when a signal
 * killed it). What never reached the disk is read from the status board
 * (DIR/.raw/status, rawfmt.h) and said, and makes a successful run exit 2;
 * streams of processes still tracing (daemons) and streams that failed to
 * convert stay for `record --convert DIR`, which converts leftovers only.
 *
 * Not for: tracing itself (src/capture/) or reading traces.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "trainscope/record.h"
#include "trainscope/report_record.h"

typedef struct record_opts {
    const char *dir;            /* -o DIR, default "trainscope-trace" */
    bool cuda, nccl, mpi, python, lttng;
    bool torch;                 /* torch's profiler in every process that imports torch */
    bool torch_memory;          /* --memory: its allocator events */
    long wait, warmup, active;  /* torch's schedule, in optimizer steps; active 0 = until exit */
    bool steps_set, phases_set; /* --steps A:B given; --wait/--warmup/--active given */
    const char *python_filter;  /* comma-separated modules/files, NULL = all */
    const char *buffer_kb;      /* per-thread buffer size, NULL = the tracer's default */
    const char *convert;        /* --convert DIR: convert leftover raw streams, run nothing */
    char **cmd;                 /* the program and its arguments */
} record_opts;

static void usage(FILE *f)
{
    fputs("usage: trainscope record [-o DIR] [--torch [--steps A:B | --wait N --warmup N --active N] [--memory]]\n"
          "                         [--cuda] [--nccl] [--mpi] [--python] [--python-filter LIST] [--lttng]\n"
          "                         [--buffer-kb N] -- COMMAND [ARGS...]\n"
          "       trainscope record --convert DIR\n\n"
          "Runs COMMAND under trainscope's tracer. Every process it starts (MPI ranks,\n"
          "DataLoader workers, ...) writes DIR/rank-<R>.<pid>.json (pid-<pid>.json when\n"
          "no rank is known), Chrome-trace JSON shaped like Kineto's that the other\n"
          "trainscope commands and Perfetto read. The program's output and exit code are\n"
          "unchanged.\n\n"
          "  -o, --output DIR      where the traces go (default trainscope-trace)\n"
          "  --torch               torch's profiler in every Python process that imports torch:\n"
          "                        ops with input shapes and dtypes, collectives with their sizes,\n"
          "                        iterations ProfilerStep#N marked at each optimizer step()\n"
          "  --steps A:B           only iterations A to B-1 (0 = the first step); implies --torch\n"
          "  --wait N --warmup N --active N\n"
          "                        torch.profiler's schedule instead of --steps (not both)\n"
          "  --memory              with --torch: allocator events ([memory]) for 'memory --trace'\n"
          "  --cuda                CUDA kernels, copies and API calls (CUPTI)\n"
          "  --nccl                NCCL collectives\n"
          "  --mpi                 MPI collectives and point-to-point calls (PMPI)\n"
          "  --python              Python function calls (sys.setprofile, C callback)\n"
          "  --python-filter LIST  only functions of these modules or files, comma-separated\n"
          "                        (e.g. torch.nn.modules,train.py); implies --python\n"
          "  --lttng               also emit LTTng-UST tracepoints into an LTTng session\n"
          "                        record starts and stops (CTF in DIR/lttng)\n"
          "  --buffer-kb N         each thread's buffer, in KiB (default 1024; rounded up to a\n"
          "                        power of two): more when record says events were dropped\n"
          "  --convert DIR         run nothing: convert the raw streams left in DIR/.raw (record\n"
          "                        killed, a disk that was full, processes that outlived COMMAND)\n\n"
          "Exit status: COMMAND's own; 128+N when signal N killed it (as a shell reports it);\n"
          "126 when COMMAND is not executable, 127 when it is not found; 2 for bad options, or\n"
          "when COMMAND succeeded but its traces could not all be written (record says what was\n"
          "lost). --convert: 0, 1 when nothing was left to convert, 2 when a stream failed.\n"
          "The tracing API (include/trainscope/trace.h) adds the program's own ranges.\n", f);
}

/* A count of optimizer steps, lo or more. */
static int parse_steps(const char *opt, const char *s, long lo, long *out)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || end == s || *end || v < lo || v > 1000000000L) {
        ts_cli_errorf("record: %s needs a number of optimizer steps, %ld or more", opt, lo);
        return -1;
    }
    *out = v;
    return 0;
}

/* --steps A:B (wait A, record B-A) or one of --wait/--warmup/--active; each implies --torch. */
static int parse_window(record_opts *o, const char *opt, const char *v)
{
    o->torch = true;
    if (!strcmp(opt, "--steps")) {
        const char *colon = v ? strchr(v, ':') : NULL;
        char a[32];
        long b;
        if (!colon || colon - v >= (long)sizeof a) {
            ts_cli_errorf("record: --steps needs A:B, the first step recorded and the one after the last (e.g. 2:5)");
            return -1;
        }
        snprintf(a, sizeof a, "%.*s", (int)(colon - v), v);
        if (parse_steps("--steps", a, 0, &o->wait) || parse_steps("--steps", colon + 1, 0, &b)) return -1;
        if (b <= o->wait) {
            ts_cli_errorf("record: --steps %s: the end must be after the start (A:B records steps A to B-1)", v);
            return -1;
        }
        o->warmup = 0;
        o->active = b - o->wait;
        o->steps_set = true;
        return 0;
    }
    o->phases_set = true;
    if (!strcmp(opt, "--wait")) return parse_steps(opt, v, 0, &o->wait);
    if (!strcmp(opt, "--warmup")) return parse_steps(opt, v, 0, &o->warmup);
    return parse_steps(opt, v, 1, &o->active);
}

static int parse(int argc, char **argv, record_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dir = "trainscope-trace";
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { i++; break; }
        if (a[0] != '-') break;
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) { ts_cli_errorf("record: %s needs a directory", a); return -1; }
            o->dir = argv[i];
        } else if (!strcmp(a, "--cuda")) o->cuda = true;
        else if (!strcmp(a, "--nccl")) o->nccl = true;
        else if (!strcmp(a, "--mpi")) o->mpi = true;
        else if (!strcmp(a, "--python")) o->python = true;
        else if (!strcmp(a, "--lttng")) o->lttng = true;
        else if (!strcmp(a, "--python-filter")) {
            if (++i >= argc) { ts_cli_errorf("record: --python-filter needs a list"); return -1; }
            o->python_filter = argv[i];
            o->python = true;
        } else if (!strcmp(a, "--torch")) o->torch = true;
        else if (!strcmp(a, "--memory")) o->torch = o->torch_memory = true;
        else if (!strcmp(a, "--steps") || !strcmp(a, "--wait") || !strcmp(a, "--warmup") || !strcmp(a, "--active")) {
            if (parse_window(o, a, ++i < argc ? argv[i] : NULL)) return -1;
        } else if (!strcmp(a, "--buffer-kb")) {
            char *end;
            long kb = ++i < argc ? strtol(argv[i], &end, 10) : 0;
            if (i >= argc || *end || end == argv[i] || kb < 4 || kb > 1048576) {
                ts_cli_errorf("record: --buffer-kb needs a size in KiB from 4 to 1048576");
                return -1;
            }
            o->buffer_kb = argv[i];
        } else if (!strcmp(a, "--convert")) {
            if (++i >= argc) { ts_cli_errorf("record: --convert needs the directory record wrote"); return -1; }
            o->convert = argv[i];
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else {
            ts_cli_errorf("record: unknown option '%s' (see 'trainscope record --help')", a);
            return -1;
        }
    }
    if (o->steps_set && o->phases_set) {
        ts_cli_errorf("record: --steps A:B is --wait A --active B-A: give one or the other");
        return -1;
    }
    if (o->convert) {
        if (i < argc) { ts_cli_errorf("record: --convert DIR runs no command: '%s'", argv[i]); return -1; }
        return 0;
    }
    if (i >= argc) { ts_cli_errorf("record: no command to run (see 'trainscope record --help')"); return -1; }
    o->cmd = argv + i;
    return 0;
}

/* A file exists at path; 0 when it runs, else EACCES (not executable, or a
 * directory) or ENOENT. */
static int runnable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return ENOENT;
    return S_ISREG(st.st_mode) && access(path, X_OK) == 0 ? 0 : EACCES;
}

/* 0 when name runs: a path that is executable, or found on PATH. Else as a
 * shell decides: EACCES when only non-executable files of that name were
 * found (exit 126), ENOENT when none (127). */
static int command_check(const char *name)
{
    if (strchr(name, '/')) return runnable(name);
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    char buf[PATH_MAX];
    int why = ENOENT;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? p : ".", name);
        int r = runnable(buf);
        if (r == 0) return 0;
        if (r == EACCES) why = EACCES;
        p += n + (p[n] == ':');
    }
    return why;
}

/* mkdir -p DIR, then prove it is writable by creating a file in it. */
static int prepare_dir(const char *dir, char *abs, size_t n)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') { *p = 0; mkdir(tmp, 0777); *p = '/'; }
    mkdir(tmp, 0777);
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.trainscope-probe", dir);
    FILE *f = fopen(probe, "w");
    if (!f) { ts_cli_errorf("record: cannot write to %s: %s", dir, strerror(errno)); return -1; }
    fclose(f);
    unlink(probe);
    if (!realpath(dir, abs)) { ts_cli_errorf("record: cannot resolve %s: %s", dir, strerror(errno)); return -1; }
    (void)n;
    return 0;
}

/* Directory of the running trainscope binary; the capture libraries are built next to it. */
static void exe_dir(char *out, size_t n)
{
    const char *env = getenv("TRAINSCOPE_LIB_DIR");
    if (env && *env) { snprintf(out, n, "%s", env); return; }
    ssize_t len = readlink("/proc/self/exe", out, n - 1);
    out[len > 0 ? len : 0] = 0;
    char *slash = strrchr(out, '/');
    if (slash) *slash = 0;
    else snprintf(out, n, ".");
}

/* A collector whose own dependencies are missing at run time (libcupti,
 * libnccl, libmpi, liblttng-ust) would be skipped silently by the dynamic
 * loader, and the program would run untraced. So load it once in a
 * throwaway child (its constructors run there, with tracing off) and refuse
 * to start the program if that fails, saying why. */
static int check_loads(const char *path, const char *why)
{
    int fd[2];
    if (pipe(fd) != 0) return 0;          /* cannot check: let the loader decide */
    pid_t pid = fork();
    if (pid < 0) { close(fd[0]); close(fd[1]); return 0; }
    if (pid == 0) {
        close(fd[0]);
        unsetenv("TRAINSCOPE_DIR");      /* tracing stays off in the probe */
        if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
            const char *e = dlerror();
            ssize_t w = write(fd[1], e, strlen(e));
            (void)w;
            _exit(1);
        }
        _exit(0);
    }
    close(fd[1]);
    char msg[512];
    ssize_t got = read(fd[0], msg, sizeof msg - 1);
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    msg[got > 0 ? got : 0] = 0;
    ts_cli_errorf("record: %s cannot attach: %s", why, got > 0 ? msg : "its library failed to load");
    return -1;
}

/* Append lib_dir/name to the preload list; a collector asked for but not built is an error. */
static int add_lib(char *list, size_t n, const char *lib_dir, const char *name, const char *why)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", lib_dir, name);
    if (access(path, R_OK) != 0) {
        ts_cli_errorf("record: %s needs %s, which was not built (%s)", why, path,
                      strcmp(name, "libtrainscope-preload.so") ? "its headers were not found at build time"
                                                                 : "run make");
        return -1;
    }
    if (check_loads(path, why)) return -1;
    size_t used = strlen(list);
    snprintf(list + used, n - used, "%s%s", used ? ":" : "", path);
    return 0;
}

static int python_dir(const char *lib_dir, char *out, size_t n)
{
    static const char *const rel[] = {"../python", "../../python", "../share/trainscope/python",
                                      "python" /* make gpu-bundle's flat folder */};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char probe[PATH_MAX + 64];
        if (snprintf(out, n, "%s/%s", lib_dir, rel[i]) >= (int)n) continue;
        snprintf(probe, sizeof probe, "%s/trainscope_trace.py", out);
        if (access(probe, R_OK) == 0) return 0;
    }
    ts_cli_errorf("record: --python and --torch need python/trainscope_trace.py next to %s", lib_dir);
    return -1;
}

static void prepend_env(const char *var, const char *value)
{
    const char *old = getenv(var);
    if (!old || !*old) { setenv(var, value, 1); return; }
    size_t n = strlen(value) + strlen(old) + 2;
    char *s = malloc(n);
    if (!s) return;
    snprintf(s, n, "%s:%s", value, old);
    setenv(var, s, 1);
    free(s);
}

static int set_env(const record_opts *o, const char *abs_dir)
{
    char lib_dir[PATH_MAX], libs[4 * PATH_MAX] = "";
    exe_dir(lib_dir, sizeof lib_dir);
    if (add_lib(libs, sizeof libs, lib_dir, "libtrainscope-preload.so", "record") ||
        (o->mpi && add_lib(libs, sizeof libs, lib_dir, "libtrainscope-mpi.so", "--mpi")) ||
        (o->cuda && add_lib(libs, sizeof libs, lib_dir, "libtrainscope-cuda.so", "--cuda")) ||
        (o->nccl && add_lib(libs, sizeof libs, lib_dir, "libtrainscope-nccl.so", "--nccl")) ||
        (o->lttng && add_lib(libs, sizeof libs, lib_dir, "libtrainscope-lttng.so", "--lttng")))
        return -1;
    if (o->python || o->torch) {
        char py[PATH_MAX];
        if (python_dir(lib_dir, py, sizeof py)) return -1;
        prepend_env("PYTHONPATH", py);
    }
    if (o->python) {
        setenv("TRAINSCOPE_PYTHON", "1", 1);
        if (o->python_filter) setenv("TRAINSCOPE_PYTHON_FILTER", o->python_filter, 1);
    }
    if (o->torch) {
        char sched[96];
        snprintf(sched, sizeof sched, "%ld,%ld,%ld", o->wait, o->warmup, o->active);
        setenv("TRAINSCOPE_TORCH", "1", 1);
        setenv("TRAINSCOPE_TORCH_SCHEDULE", sched, 1);
        if (o->torch_memory) setenv("TRAINSCOPE_TORCH_MEMORY", "1", 1);
        /* CUPTI serves one profiler per process: where torch has Kineto, Kineto
         * records the GPU and --cuda's collector stands aside in that process
         * (python/trainscope_torch.py); TRAINSCOPE_TORCH_GPU=0 keeps ours. */
        if (o->cuda) setenv("TRAINSCOPE_CUDA", "1", 1);
    }
    /* Ours first so our exec/_exit hooks see the program's calls; the caller's
     * preloads follow in their order. */
    const char *old = getenv("LD_PRELOAD");
    if (old && *old) {
        size_t used = strlen(libs);
        snprintf(libs + used, sizeof libs - used, ":%s", old);
    }
    setenv("LD_PRELOAD", libs, 1);
    if (o->cuda) {
        /* The driver then attaches CUPTI at cuInit, only in processes that
         * use CUDA; the preloaded copy adds host ranges and NVTX. */
        char cuda[PATH_MAX + 32];
        snprintf(cuda, sizeof cuda, "%s/libtrainscope-cuda.so", lib_dir);
        setenv("CUDA_INJECTION64_PATH", cuda, 0);
    }
    if (o->buffer_kb) setenv("TRAINSCOPE_BUFFER_KB", o->buffer_kb, 1);
    setenv("TRAINSCOPE_DIR", abs_dir, 1);
    setenv("TRAINSCOPE_DEFER_CONVERT", "1", 1);   /* finish() converts every stream */
    return 0;
}

/* Create DIR/.raw/status, its space reserved now so that a disk that fills
 * during the job cannot take it, and name it to the job. */
static int status_create(const char *abs_dir)
{
    char path[PATH_MAX + 32];
    ts_error err = {0};
    if (ts_record_status_create(abs_dir, path, sizeof path, &err)) {
        ts_cli_errorf("record: %s", err.msg);
        return -1;
    }
    setenv("TRAINSCOPE_STATUS", path, 1);
    return 0;
}

static volatile pid_t child_pid;

/* Pass a signal sent to record (kill, a job scheduler) on to the program. One
 * the terminal generated (Ctrl-C) already reached the program, which is in
 * our process group: sending it again would interrupt its cleanup. */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (child_pid > 0 && (si->si_code == SI_USER || si->si_code == SI_QUEUE)) kill(child_pid, sig);
}

/* Run cmd and wait; returns the exit code a shell would report. */
static int run_child(char **cmd)
{
    int go[2];
    if (pipe(go) != 0) { ts_cli_errorf("record: pipe: %s", strerror(errno)); return TS_EXIT_BAD; }
    pid_t pid = fork();
    if (pid < 0) { ts_cli_errorf("record: fork: %s", strerror(errno)); return TS_EXIT_BAD; }
    if (pid == 0) {
        close(go[0]);
        fcntl(go[1], F_SETFD, FD_CLOEXEC);
        execvp(cmd[0], cmd);
        int e = errno;
        ssize_t w = write(go[1], &e, sizeof e);   /* tell the parent why exec failed */
        (void)w;
        _exit(127);
    }
    close(go[1]);
    child_pid = pid;
    struct sigaction sa = {0};
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    int exec_errno = 0;
    ssize_t got = read(go[0], &exec_errno, sizeof exec_errno);
    close(go[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (got == (ssize_t)sizeof exec_errno) {
        ts_cli_errorf("record: cannot run %s: %s", cmd[0], strerror(exec_errno));
        return exec_errno == ENOENT ? 127 : 126;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void say_failure(void *ud, const char *why)
{
    (void)ud;
    ts_cli_errorf("record: %s", why);
}

/* Convert every raw stream of the job (processes defer it to here; killed ones
 * could not do it anyway) but those of processes still tracing, then say how
 * many trace files this run wrote and what was lost. True when events were
 * lost or a stream could not be converted. */
static bool finish(const char *dir, const record_opts *o)
{
    ts_record_job j;
    if (ts_record_finish(dir, &j, say_failure, NULL)) {
        ts_cli_errorf("record: out of memory");
        return true;
    }
    ts_report_record_args a = {dir, o->dir, o->cmd ? o->cmd[0] : NULL, o->torch, o->python, o->wait + o->warmup};
    int rc = ts_report_record_job(stderr, &j, &a);
    (void)rc;   /* stderr: nowhere else to say it */
    return j.lost;
}

/* --convert DIR: what a killed record, a full disk or a daemon left. */
static int convert_left(const record_opts *o)
{
    char abs[PATH_MAX], raw_dir[PATH_MAX + 8];
    if (!realpath(o->convert, abs)) {
        ts_cli_errorf("record: --convert %s: %s", o->convert, strerror(errno));
        return TS_EXIT_BAD;
    }
    snprintf(raw_dir, sizeof raw_dir, "%s/.raw", abs);
    DIR *d = opendir(raw_dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        n += len >= 4 && !strcmp(e->d_name + len - 4, ".tsr");
    }
    if (d) closedir(d);
    if (!n) {
        ts_cli_errorf("record: --convert: no raw streams in %s: nothing to convert", raw_dir);
        return TS_EXIT_NOTHING;
    }
    return finish(abs, o) ? TS_EXIT_BAD : TS_EXIT_OK;
}

int ts_cmd_record(int argc, char **argv)
{
    record_opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    if (o.convert) return convert_left(&o);
    int why = command_check(o.cmd[0]);
    if (why) {   /* as a shell says it, with its codes */
        ts_cli_errorf("record: %s: %s", o.cmd[0], why == EACCES ? "permission denied" : "command not found");
        return why == EACCES ? 126 : 127;
    }
    char abs_dir[PATH_MAX];
    if (prepare_dir(o.dir, abs_dir, sizeof abs_dir) || set_env(&o, abs_dir) || status_create(abs_dir))
        return TS_EXIT_BAD;
    char session[64];
    ts_error err = {0};
    snprintf(session, sizeof session, "trainscope-%d", (int)getpid());
    if (o.lttng && ts_record_lttng_start(abs_dir, session, &err) != TS_OK) {
        ts_cli_errorf("record: --lttng: %s", err.msg);
        return TS_EXIT_BAD;
    }
    rc = run_child(o.cmd);
    if (o.lttng && ts_record_lttng_stop(session, &err) != TS_OK) ts_cli_errorf("record: --lttng: %s", err.msg);
    /* Traces that could not be written make a run that succeeded fail. */
    if (finish(abs_dir, &o) && rc == 0) rc = TS_EXIT_BAD;
    return rc;
}
