/* dynlib.c - ts__dynlib_open (dynlib.h): dlopen the library, dlsym every
 * name into the table, under one process-wide lock; the outcome (open or
 * why not) is kept, so a library that is missing is tried once.
 */
#include "core/dynlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int try_open(ts_dynlib *l)   /* 1 open, -1 failed (l->why says why) */
{
    void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(l->why, sizeof l->why, "%s", e ? e : "not found");
        return -1;
    }
    for (size_t i = 0; i < l->n; i++) {
        void *f = dlsym(h, l->names[i]);
        if (!f) {   /* the handle stays open: harmless, and the table is never used */
            snprintf(l->why, sizeof l->why, "%s has no %s", l->soname, l->names[i]);
            return -1;
        }
        memcpy(&l->fns[i], &f, sizeof f);   /* POSIX: a function's address as dlsym's void * */
    }
    return 1;
}

int ts__dynlib_open(ts_dynlib *l, const char *who, ts_error *err)
{
    int st = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);
    if (st == 0) {
        pthread_mutex_lock(&lock);
        if (l->state == 0) __atomic_store_n(&l->state, try_open(l), __ATOMIC_RELEASE);
        st = l->state;
        pthread_mutex_unlock(&lock);
    }
    if (st == 1) return TS_OK;
    return ts__error(err, TS_EFORMAT, "%s: needs %s, which could not be loaded (%s)", who, l->soname, l->why);
}
