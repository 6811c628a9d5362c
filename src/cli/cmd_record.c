/* cmd_record.c - `trainscope record`: run a program under the tracer.
 *
 * Checks everything it can before the program starts (options, that the
 * command exists, that the output directory can be written, that the asked
 * collectors were built) and exits 2 with a message otherwise. Then it runs
 * the command with LD_PRELOAD (appended to any the caller set) and the
 * TRAINSCOPE_* variables, so the program and every process it starts write
 * their own raw stream; afterwards it converts every stream to JSON (so the
 * traced processes never spend time on it), says where the traces are, and exits with the
 * program's own exit code (128 + signal when a signal killed it).
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

#include "capture/lttng.h"
#include "capture/rawfmt.h"
#include "cli/cli.h"

typedef struct record_opts {
    const char *dir;            /* -o DIR, default "trainscope-trace" */
    bool cuda, nccl, mpi, python, lttng;
    const char *python_filter;  /* comma-separated modules/files, NULL = all */
    const char *buffer_kb;      /* per-thread buffer size, NULL = the tracer's default */
    char **cmd;                 /* the program and its arguments */
} record_opts;

static void usage(FILE *f)
{
    fputs("usage: trainscope record [-o DIR] [--cuda] [--nccl] [--mpi] [--python]\n"
          "                         [--python-filter LIST] [--lttng] [--buffer-kb N] -- COMMAND [ARGS...]\n\n"
          "Runs COMMAND under trainscope's tracer. Every process it starts (MPI ranks,\n"
          "DataLoader workers, ...) writes DIR/rank-<R>.<pid>.json (pid-<pid>.json when\n"
          "no rank is known), Chrome-trace JSON shaped like Kineto's that the other\n"
          "trainscope commands and Perfetto read. The program's output and exit code are\n"
          "unchanged.\n\n"
          "  -o, --output DIR      where the traces go (default trainscope-trace)\n"
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
          "The tracing API (include/trainscope/trace.h) adds the program's own ranges.\n", f);
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
        } else if (!strcmp(a, "--buffer-kb")) {
            char *end;
            long kb = ++i < argc ? strtol(argv[i], &end, 10) : 0;
            if (i >= argc || *end || end == argv[i] || kb < 4 || kb > 1048576) {
                ts_cli_errorf("record: --buffer-kb needs a size in KiB from 4 to 1048576");
                return -1;
            }
            o->buffer_kb = argv[i];
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else {
            ts_cli_errorf("record: unknown option '%s' (see 'trainscope record --help')", a);
            return -1;
        }
    }
    if (i >= argc) { ts_cli_errorf("record: no command to run (see 'trainscope record --help')"); return -1; }
    o->cmd = argv + i;
    return 0;
}

/* True when name runs: a path that is executable, or found on PATH. */
static bool command_exists(const char *name)
{
    if (strchr(name, '/')) return access(name, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    char buf[PATH_MAX];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? p : ".", name);
        if (access(buf, X_OK) == 0) return true;
        p += n + (p[n] == ':');
    }
    return false;
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
    static const char *const rel[] = {"../python", "../../python", "../share/trainscope/python"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char probe[PATH_MAX + 64];
        if (snprintf(out, n, "%s/%s", lib_dir, rel[i]) >= (int)n) continue;
        snprintf(probe, sizeof probe, "%s/trainscope_trace.py", out);
        if (access(probe, R_OK) == 0) return 0;
    }
    ts_cli_errorf("record: --python needs python/trainscope_trace.py next to %s", lib_dir);
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
    if (o->python) {
        char py[PATH_MAX];
        if (python_dir(lib_dir, py, sizeof py)) return -1;
        prepend_env("PYTHONPATH", py);
        setenv("TRAINSCOPE_PYTHON", "1", 1);
        if (o->python_filter) setenv("TRAINSCOPE_PYTHON_FILTER", o->python_filter, 1);
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
        return TS_EXIT_BAD;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Convert every raw stream of the job (processes defer it to here; killed ones
 * could not do it anyway), then say how many trace files this run wrote. */
static void finish(const char *dir)
{
    char raw_dir[PATH_MAX + 8];
    snprintf(raw_dir, sizeof raw_dir, "%s/.raw", dir);
    DIR *d = opendir(raw_dir);
    struct dirent *e;
    int n_files = 0;   /* every process deferred its conversion to here */
    ts__raw_losses sum = {0, 0, 0, 0, 0};
    uint64_t n_cut = 0;   /* streams whose last chunk is incomplete */
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".tsr")) continue;
        char raw[2 * PATH_MAX], err[1024];
        snprintf(raw, sizeof raw, "%s/%s", raw_dir, e->d_name);
        ts__raw_losses l;
        int rc = ts__raw_convert(raw, dir, NULL, 0, err, sizeof err, &l);
        if (rc == TS_OK) {
            n_files++;
            sum.dropped_events += l.dropped_events;
            sum.bad_records += l.bad_records;
            sum.unfinished_ranges += l.unfinished_ranges;
            n_cut += l.cut_at_byte != 0;
        }
        if (rc == TS_OK || rc == TS_ENODATA) unlink(raw);
        else ts_cli_errorf("record: %s", err);
    }
    if (d) closedir(d);
    rmdir(raw_dir);   /* only when empty: streams that failed to convert stay */
    fprintf(stderr, "trainscope: %d trace file%s in %s\n", n_files, n_files == 1 ? "" : "s", dir);
    /* Said here as well as in every analysis of the files (a "recorder_losses"
     * warning): a short trace should not pass for a whole one. */
    if (sum.dropped_events)
        fprintf(stderr, "trainscope: warning: %llu events dropped (per-thread buffers full: raise --buffer-kb)\n",
                (unsigned long long)sum.dropped_events);
    if (sum.bad_records)
        fprintf(stderr, "trainscope: warning: %llu damaged records skipped\n", (unsigned long long)sum.bad_records);
    if (n_cut)
        fprintf(stderr, "trainscope: warning: %llu trace stream%s cut short (a process killed mid-write, or the disk "
                "full): the events after the cut are lost\n", (unsigned long long)n_cut, n_cut == 1 ? " was" : "s were");
    if (sum.unfinished_ranges)
        fprintf(stderr, "trainscope: warning: %llu ranges still open when their process ended (closed there, "
                "args.unfinished)\n", (unsigned long long)sum.unfinished_ranges);
}

int ts_cmd_record(int argc, char **argv)
{
    record_opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc > 0 ? TS_EXIT_OK : TS_EXIT_BAD;
    if (!command_exists(o.cmd[0])) {
        ts_cli_errorf("record: %s: command not found", o.cmd[0]);
        return TS_EXIT_BAD;
    }
    char abs_dir[PATH_MAX];
    if (prepare_dir(o.dir, abs_dir, sizeof abs_dir) || set_env(&o, abs_dir)) return TS_EXIT_BAD;
    char session[64];
    ts_error err = {0};
    snprintf(session, sizeof session, "trainscope-%d", (int)getpid());
    if (o.lttng && ts__lttng_session_start(abs_dir, session, &err) != TS_OK) {
        ts_cli_errorf("record: --lttng: %s", err.msg);
        return TS_EXIT_BAD;
    }
    rc = run_child(o.cmd);
    if (o.lttng && ts__lttng_session_stop(session, &err) != TS_OK) ts_cli_errorf("record: --lttng: %s", err.msg);
    finish(abs_dir);
    return rc;
}
