/* rt_python.c - the Python collector's C half: a profiling callback for
 * PyEval_SetProfile that turns Python function calls into ranges (cat
 * "python_function", name "<module>.<qualname>"), filtered by module or file.
 * python/trainscope_trace.py installs it through ctypes on every thread.
 *
 * Not for: anything that needs Python.h. The few CPython functions used are
 * looked up with dlsym in the running interpreter, and objects are opaque
 * pointers, so the library builds and loads without Python.
 *
 * Invariants: the callback runs with the GIL held, which serializes the code
 * cache; each cached code object is kept alive by a reference so its address
 * can never be reused by another. A thread's call stack of "was this call
 * recorded" bits keeps every pop matched to its push, also for calls the
 * filter skipped and for returns of frames entered before installation.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainscope/trace.h"

typedef struct PyObj PyObj;   /* opaque: PyObject, PyFrameObject, PyCodeObject */

enum { PY_TRACE_CALL = 0, PY_TRACE_RETURN = 3 };   /* PyTrace_CALL, PyTrace_RETURN */

static struct {
    PyObj      *(*frame_get_code)(PyObj *);
    PyObj      *(*get_attr)(PyObj *, const char *);
    const char *(*utf8)(PyObj *);
    PyObj      *(*dict_get)(PyObj *, const char *);   /* borrowed */
    void        (*decref)(PyObj *);
    void        (*err_clear)(void);
    int          ok;       /* 1 = all found, -1 = some missing (collector off) */
} py;

/* code object -> what to do with its calls; open addressing, grows at half full */
typedef struct code_entry {
    PyObj *code;     /* NULL = empty slot; holds one reference */
    char  *name;     /* "<module>.<qualname>", NULL when the filter skips it */
} code_entry;
static code_entry *cache;
static size_t cache_slots, cache_used;

static char **filters;   /* module prefixes / file names, NULL = trace all */
static size_t n_filters;

#define MAX_DEPTH 4096
static __thread uint8_t t_recorded[MAX_DEPTH];   /* 1 = the call at this depth was pushed */
static __thread unsigned t_depth;                 /* may exceed MAX_DEPTH: deeper calls unrecorded */

static int py_resolve(void)
{
    if (py.ok) return py.ok;
    py.frame_get_code = (PyObj * (*)(PyObj *)) dlsym(RTLD_DEFAULT, "PyFrame_GetCode");
    py.get_attr = (PyObj * (*)(PyObj *, const char *)) dlsym(RTLD_DEFAULT, "PyObject_GetAttrString");
    py.utf8 = (const char *(*)(PyObj *))dlsym(RTLD_DEFAULT, "PyUnicode_AsUTF8");
    py.dict_get = (PyObj * (*)(PyObj *, const char *)) dlsym(RTLD_DEFAULT, "PyDict_GetItemString");
    py.decref = (void (*)(PyObj *))dlsym(RTLD_DEFAULT, "Py_DecRef");
    py.err_clear = (void (*)(void))dlsym(RTLD_DEFAULT, "PyErr_Clear");
    py.ok = py.frame_get_code && py.get_attr && py.utf8 && py.dict_get && py.decref && py.err_clear ? 1 : -1;
    if (py.ok < 0) fprintf(stderr, "trainscope: python collector: CPython >= 3.9 API not found, off\n");
    return py.ok;
}

/* A string attribute of obj, copied; NULL when absent. */
static char *attr_str(PyObj *obj, const char *attr)
{
    PyObj *v = py.get_attr(obj, attr);
    if (!v) { py.err_clear(); return NULL; }
    const char *s = py.utf8(v);
    char *copy = s ? strdup(s) : NULL;
    if (!s) py.err_clear();
    py.decref(v);
    return copy;
}

static char *frame_module(PyObj *frame)
{
    PyObj *globals = py.get_attr(frame, "f_globals");
    if (!globals) { py.err_clear(); return NULL; }
    PyObj *name = py.dict_get(globals, "__name__");
    const char *s = name ? py.utf8(name) : NULL;
    char *copy = s ? strdup(s) : NULL;
    if (name && !s) py.err_clear();
    py.decref(globals);
    return copy;
}

/* Does entry f select module mod or file path? "a.b" matches module a.b and
 * a.b.*; "x.py", "x" and "dir/x.py" match a file by its base name or tail. */
static int filter_match(const char *f, const char *mod, const char *path)
{
    size_t n = strlen(f);
    if (mod && !strncmp(mod, f, n) && (mod[n] == 0 || mod[n] == '.')) return 1;
    if (!path) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t bl = strlen(base), pl = strlen(path);
    if (!strcmp(base, f) || (bl == n + 3 && !strncmp(base, f, n) && !strcmp(base + n, ".py"))) return 1;
    return pl > n && path[pl - n - 1] == '/' && !strcmp(path + pl - n, f);
}

static char *entry_name(PyObj *frame, PyObj *code)
{
    char *mod = frame_module(frame), *path = attr_str(code, "co_filename");
    char *qual = attr_str(code, "co_qualname");
    if (!qual) qual = attr_str(code, "co_name");
    int keep = n_filters == 0;
    for (size_t i = 0; i < n_filters && !keep; i++) keep = filter_match(filters[i], mod, path);
    if (mod && !strcmp(mod, "trainscope_trace")) keep = 0;   /* never trace the tracer */
    char *name = NULL;
    if (keep) {
        size_t n = (mod ? strlen(mod) : 0) + (qual ? strlen(qual) : 0) + 2;
        name = malloc(n);
        if (name) snprintf(name, n, "%s%s%s", mod ? mod : "", mod ? "." : "", qual ? qual : "?");
    }
    free(mod);
    free(path);
    free(qual);
    return name;
}

static int cache_grow(void)
{
    size_t n = cache_slots ? cache_slots * 2 : 4096;
    code_entry *c = calloc(n, sizeof *c);
    if (!c) return -1;
    for (size_t i = 0; i < cache_slots; i++) {
        if (!cache[i].code) continue;
        size_t j = ((uintptr_t)cache[i].code >> 4) & (n - 1);
        while (c[j].code) j = (j + 1) & (n - 1);
        c[j] = cache[i];
    }
    free(cache);
    cache = c;
    cache_slots = n;
    return 0;
}

/* The cached entry for code, filled on first sight. Consumes the reference
 * to code: the cache keeps it for a new entry, else it is released. NULL on
 * out of memory. */
static code_entry *lookup(PyObj *frame, PyObj *code)
{
    if ((cache_used + 1) * 2 > cache_slots && cache_grow()) { py.decref(code); return NULL; }
    size_t j = ((uintptr_t)code >> 4) & (cache_slots - 1);
    while (cache[j].code && cache[j].code != code) j = (j + 1) & (cache_slots - 1);
    if (cache[j].code) { py.decref(code); return &cache[j]; }
    cache[j].name = entry_name(frame, code);
    cache[j].code = code;
    cache_used++;
    return &cache[j];
}

/* Always returns 0: the profiler never raises into the program. */
int ts_trace_py_profile(void *self, void *frame_obj, int what, void *arg)
{
    PyObj *frame = frame_obj;
    if (what == PY_TRACE_CALL) {
        unsigned d = t_depth++;
        if (d >= MAX_DEPTH) return 0;
        t_recorded[d] = 0;
        if (!TS_TRACE_ON() || py_resolve() < 0) return 0;
        PyObj *code = py.frame_get_code(frame);
        code_entry *e = code ? lookup(frame, code) : NULL;
        if (e && e->name) {
            ts_trace_push("python_function", e->name);
            t_recorded[d] = 1;
        }
    } else if (what == PY_TRACE_RETURN) {
        if (t_depth == 0) return 0;   /* a frame entered before we were installed */
        unsigned d = --t_depth;
        if (d < MAX_DEPTH && t_recorded[d]) ts_trace_pop();
    }
    return 0;
}

int ts_trace_py_set_filter(const char *csv)
{
    for (size_t i = 0; i < n_filters; i++) free(filters[i]);
    free(filters);
    filters = NULL;
    n_filters = 0;
    if (!csv || !*csv) return 0;
    size_t n = 1;
    for (const char *p = csv; *p; p++) n += *p == ',';
    filters = calloc(n, sizeof *filters);
    if (!filters) return -1;
    for (const char *p = csv; *p;) {
        size_t len = strcspn(p, ",");
        if (len) filters[n_filters++] = strndup(p, len);
        p += len + (p[len] == ',');
    }
    return 0;
}
