/* capture.c - what tracing costs a program: the host tracing API's cost per
 * event on a tight loop, next to LTTng-UST's on the same loop, the cost of a
 * disabled probe, and how many events are lost when 2 threads each write one
 * million events per second into default-sized buffers.
 *
 * Usage: capture [EVENTS]   (default 4000000 events per measurement)
 * bench/capture.sh runs it inside an LTTng session (so LTTng really records)
 * and adds the traced-vs-untraced slowdown of the MPI allreduce example.
 * Traces go to a temporary directory and are deleted; times are wall clock,
 * best of 3 repetitions (the machine is shared: treat them as upper bounds).
 */
#if __has_include(<lttng/tracepoint.h>)
#define HAVE_LTTNG 1
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "capture_tp.h"
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trainscope/trace.h"

static int64_t now_ns(void) { return ts_trace_now_ns(); }

/* ns per event of n push/pop pairs (2n events), best of 3. */
static double time_trainscope(long n)
{
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        int64_t t0 = now_ns();
        for (long i = 0; i < n; i++) {
            TS_TRACE_PUSH("cpu_op", "aten::add");
            TS_TRACE_POP();
        }
        double ns = (double)(now_ns() - t0) / (2.0 * (double)n);
        if (ns < best) best = ns;
    }
    return best;
}

#ifdef HAVE_LTTNG
static double time_lttng(long n)
{
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        int64_t t0 = now_ns();
        for (long i = 0; i < n; i++) {
            lttng_ust_tracepoint(ts_bench, push, "cpu_op", "aten::add");
            lttng_ust_tracepoint(ts_bench, pop, 0);
        }
        double ns = (double)(now_ns() - t0) / (2.0 * (double)n);
        if (ns < best) best = ns;
    }
    return best;
}
#endif

/* One thread writing one event per microsecond for `seconds`, paced by the clock. */
typedef struct paced { double seconds; long written; } paced;

static void *paced_writer(void *arg)
{
    paced *p = arg;
    int64_t start = now_ns(), end = start + (int64_t)(p->seconds * 1e9);
    for (int64_t next = start; next < end; next += 1000) {
        while (now_ns() < next) {}
        ts_trace_instant("cpu_instant_event", "tick");
        p->written++;
    }
    return NULL;
}

static int rm_rf(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

int main(int argc, char **argv)
{
    long events = argc > 1 ? atol(argv[1]) : 4000000;
    if (events < 2) { fprintf(stderr, "usage: capture [EVENTS>=2]\n"); return 2; }
    char dir[] = "/tmp/ts_bench_capture_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    setenv("TRAINSCOPE_DEFER_CONVERT", "1", 1);   /* measure capture, not JSON formatting */

    double off = time_trainscope(events / 2);
    if (ts_trace_start(dir) != TS_OK) { fprintf(stderr, "capture: cannot trace into %s\n", dir); return 2; }
    double on = time_trainscope(events / 2);
    uint64_t dropped_loop = ts_trace_dropped();
#ifdef HAVE_LTTNG
    int lttng_on = lttng_ust_tracepoint_enabled(ts_bench, push);
    double lt = time_lttng(events / 2);
#endif

    paced p[2] = {{2.0, 0}, {2.0, 0}};
    pthread_t t[2];
    uint64_t before = ts_trace_dropped();
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, paced_writer, &p[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    uint64_t lost = ts_trace_dropped() - before;
    (void)ts_trace_stop();
    rm_rf(dir);

    printf("host API, tracing on       %7.1f ns/event  (%ld events, %llu dropped; target <= 50)\n",
           on, events, (unsigned long long)dropped_loop);
    printf("host API, tracing off      %7.1f ns/probe  (one relaxed load and a branch)\n", off);
#ifdef HAVE_LTTNG
    printf("LTTng-UST tracepoint       %7.1f ns/event  (%s)\n", lt,
           lttng_on ? "session active: events recorded" : "NO session: tracepoint disabled, probe cost only");
    printf("  ratio: the host API costs %.2fx LTTng-UST's per event on the same loop\n", lt > 0 ? on / lt : 0.0);
#else
    printf("LTTng-UST tracepoint           n/a        (lttng/tracepoint.h not installed)\n");
#endif
    printf("events lost at 1M/s/thread %7llu of %ld  (2 threads x 2 s, default buffers; target 0)\n",
           (unsigned long long)lost, p[0].written + p[1].written);
    return 0;
}
