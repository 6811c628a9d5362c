/* preload.c - what LD_PRELOAD adds on top of libtrainscope-trace.so (which it
 * links, so the program and every collector share one runtime): the process
 * hooks that only interposition can give, i.e. finishing the trace before
 * exec (all six exec* calls) and _exit, which skip atexit.
 *
 * Not for: the API or the collectors (rt_*.c, mpi.c, and the CUDA/NCCL ones).
 *
 * Every wrapper saves errno around the tracer's work, resolves the real
 * symbol with dlsym(RTLD_NEXT) once (aborting with its name if missing), and
 * does nothing in a vfork child (ts_trace_stop checks the pid).
 */
#include <alloca.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "capture/runtime/rt.h"
#include "trainscope/trace.h"

#define EXPORT __attribute__((visibility("default")))

static void *real(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        fprintf(stderr, "trainscope: preload: real symbol %s not found\n", name);
        abort();
    }
    return p;
}

/* The real function, typed like the one we replace. */
#define REAL(name) \
    static __typeof__(name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(name) *)real(#name)

/* The directory the trace goes to, kept so tracing resumes if exec fails. */
static const char *trace_dir(void) { return getenv("TRAINSCOPE_DIR"); }

/* Finish this image's trace before exec replaces it; resume if exec fails. */
static void before_exec(void)
{
    int saved = errno;
    if (ts_trace_on) (void)ts_trace_stop();
    errno = saved;
}

static void after_failed_exec(void)
{
    int saved = errno;
    const char *dir = trace_dir();
    if (!ts_trace_on && dir && *dir) (void)ts_trace_start(dir);
    errno = saved;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    REAL(execve);
    before_exec();
    int rc = real_execve(path, argv, envp);
    after_failed_exec();
    return rc;
}

EXPORT int execv(const char *path, char *const argv[])
{
    REAL(execv);
    before_exec();
    int rc = real_execv(path, argv);
    after_failed_exec();
    return rc;
}

EXPORT int execvp(const char *file, char *const argv[])
{
    REAL(execvp);
    before_exec();
    int rc = real_execvp(file, argv);
    after_failed_exec();
    return rc;
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    REAL(execvpe);
    before_exec();
    int rc = real_execvpe(file, argv, envp);
    after_failed_exec();
    return rc;
}

/* execl, execlp, execle: glibc's call execve internally, past our wrapper,
 * so they are rebuilt here on the wrapped execv/execvp/execve. */
#define ARGV_FROM_VA(first, ap, argv) do { \
        va_list ap2; va_copy(ap2, ap); size_t n_ = 1; \
        while (va_arg(ap2, char *)) n_++; \
        va_end(ap2); \
        argv = alloca((n_ + 1) * sizeof *argv); argv[0] = (char *)(first); \
        for (size_t i_ = 1; i_ <= n_; i_++) argv[i_] = va_arg(ap, char *);  /* the last is the NULL */ \
    } while (0)

EXPORT int execl(const char *path, const char *arg, ...)
{
    char **argv;
    va_list ap;
    va_start(ap, arg);
    ARGV_FROM_VA(arg, ap, argv);
    va_end(ap);
    return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    char **argv;
    va_list ap;
    va_start(ap, arg);
    ARGV_FROM_VA(arg, ap, argv);
    va_end(ap);
    return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    char **argv;
    char *const *envp = NULL;
    va_list ap;
    va_start(ap, arg);
    ARGV_FROM_VA(arg, ap, argv);
    envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}

/* A program installing its own SIGTERM/SIGINT/crash handler would replace the
 * tracer's flush: the runtime keeps its handler and calls the program's after
 * the flush. The program sees its own actions, as if nothing stood between.
 * (Its sa_mask is not applied while its handler runs.) */
EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    REAL(sigaction);
    if (ts__rt_sigaction(sig, act, old)) return 0;
    return real_sigaction(sig, act, old);
}

/* glibc's signal() calls sigaction internally, past the wrapper above. */
EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;   /* BSD semantics, as glibc's signal() */
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0) return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction : old.sa_handler;
}

/* _exit skips atexit, and forked workers (Python multiprocessing) leave
 * through it: finish the trace first. */
EXPORT void _exit(int status)
{
    REAL(_exit);
    if (ts_trace_on) (void)ts_trace_stop();
    real__exit(status);
    __builtin_unreachable();
}

EXPORT void _Exit(int status)
{
    REAL(_Exit);
    if (ts_trace_on) (void)ts_trace_stop();
    real__Exit(status);
    __builtin_unreachable();
}
