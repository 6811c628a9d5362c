/* cupti_ranges.c - host ranges tied to the GPU work they launch, the way
 * Kineto does it: while a ts_trace_push/ts_trace_pop range is open, its id
 * is pushed as CUPTI's external correlation id, so every runtime call and
 * kernel launched inside carries "External id" = that id, and the range
 * itself is written (at pop, through ts_trace_emit) with the same
 * "External id".
 *
 * Not for: the collector's CUPTI plumbing (cupti.c). This works when
 * libtrainscope-cuda.so is preloaded (it interposes the two API calls; a
 * copy only dlopen'ed by the driver interposes nothing), and only once the
 * collector is attached: ranges opened before pass straight through.
 * Invariants: the per-thread stack holds only ranges opened here; `extra`
 * counts pass-through pushes made above them (past MAX_DEPTH or while
 * detached), which pop first because ranges nest.
 */
#include "capture/cuda/cupti.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct open_range {
    int64_t  start_ns;                   /* CLOCK_MONOTONIC at push */
    uint64_t id;                         /* external correlation id, > 0 */
    char     cat[64];                    /* cut at 63 bytes */
    char     name[TS_TRACE_MAX_STR + 1]; /* cut like the host API cuts */
} open_range;

typedef struct range_stack {
    open_range v[MAX_DEPTH];
    uint32_t   depth;   /* ranges opened here */
    uint32_t   extra;   /* pass-through pushes above them */
} range_stack;

static __thread range_stack *tls_stack __attribute__((tls_model("initial-exec")));
static pthread_key_t stack_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static uint64_t next_id;   /* atomic; ids start at 1 */

static void make_key(void)
{
    (void)pthread_key_create(&stack_key, free);
}

static range_stack *stack_new(void)
{
    pthread_once(&key_once, make_key);
    range_stack *s = calloc(1, sizeof *s);
    if (s)
        (void)pthread_setspecific(stack_key, s);   /* freed at thread exit */
    return s;
}

static void *next_sym(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p) {
        p = dlsym(RTLD_NEXT, name);
        if (!p) {
            fprintf(stderr, "trainscope: cuda collector: %s not found (libtrainscope-trace.so not loaded)\n", name);
            abort();
        }
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p;
}
#define REAL(fn)                 \
    static void *slot_##fn;      \
    __typeof__(&fn) real_##fn = (__typeof__(&fn))next_sym(&slot_##fn, #fn)

TS_API void ts_trace_push(const char *cat, const char *name)
{
    REAL(ts_trace_push);
    range_stack *s = tls_stack;
    int ours = ts__cupti_attached() && TS_TRACE_ON();
    if (ours && !s)
        s = tls_stack = stack_new();
    if (!ours || !s || s->depth == MAX_DEPTH || s->extra) {
        if (s && s->depth)
            s->extra++;
        real_ts_trace_push(cat, name);
        return;
    }
    open_range *o = &s->v[s->depth++];
    o->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    snprintf(o->cat, sizeof o->cat, "%s", cat ? cat : "");
    snprintf(o->name, sizeof o->name, "%s", name ? name : "");
    ts_cuda_external_push(o->id);
    o->start_ns = ts_trace_now_ns();
}

TS_API void ts_trace_pop(void)
{
    REAL(ts_trace_pop);
    REAL(ts_trace_emit);
    range_stack *s = tls_stack;
    if (!s || s->depth == 0 || s->extra) {
        if (s && s->extra)
            s->extra--;
        real_ts_trace_pop();
        return;
    }
    int64_t end_ns = ts_trace_now_ns();
    open_range *o = &s->v[--s->depth];
    ts_cuda_external_pop();
    ts_trace_arg arg = {"External id", NULL, (int64_t)o->id};
    ts_trace_event ev = {.size = sizeof ev, .phase = 'X', .cat = o->cat, .name = o->name,
                         .ts_ns = o->start_ns, .dur_ns = end_ns - o->start_ns, .pid = -1, .tid = -1,
                         .args = &arg, .n_args = 1};
    (void)real_ts_trace_emit(&ev);
}
