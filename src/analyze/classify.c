/* classify.c - names to kinds: HTA's kernel types, collective names, and
 * the statistics categories. Pure functions of a name or a slice. */
#include "analyze/analyze_int.h"

#include <strings.h>

#define NAMES_DONE 0x80   /* ts_names.cls: classified */
#define NAMES_COLL 0x04   /* ts_names.cls: a collective name */

static const char *const kt_names[TS_KT_COUNT] = {"COMPUTATION", "COMMUNICATION", "MEMORY"};
const char *ts_kernel_type_name(ts_kernel_type k) { return (unsigned)k < TS_KT_COUNT ? kt_names[k] : "COMPUTATION"; }

static const char *const cat_names[TS_STAT_CAT_COUNT] = {"cpu_op", "kernel", "memcpy", "memset", "runtime", "collective"};
const char *ts_stat_cat_name(ts_stat_cat c) { return (unsigned)c < TS_STAT_CAT_COUNT ? cat_names[c] : "other"; }

/* Case-insensitive substring search for a lower-case needle: O(n*m) at
 * worst, but the first-byte test skips almost every position. Callers
 * classify each distinct name once (ts_names), never each slice. */
static bool contains_ci(const char *s, const char *needle)
{
    size_t m = strlen(needle);
    for (; *s; s++)
        if ((*s | 0x20) == needle[0] && strncasecmp(s, needle, m) == 0) return true;
    return false;
}

/* HTA's is_comm_kernel tests "ncclKernel" in the name. NCCL >= 2.19 names its
 * kernels ncclDevKernel_*, some builds lower-case them, and RCCL/gloo/MPI
 * GPU kernels carry their library's name: all of these are communication. */
ts_kernel_type ts_kernel_type_of(const char *name)
{
    if (contains_ci(name, "ncclkernel") || contains_ci(name, "nccldevkernel") || contains_ci(name, "nccl_kernel") ||
        contains_ci(name, "rccl") || contains_ci(name, "gloo") || strncasecmp(name, "mpi_", 4) == 0)
        return TS_KT_COMMUNICATION;
    /* HTA is_memory_kernel: "Memcpy" or "Memset" in the name, case as written. */
    if (strstr(name, "Memcpy") || strstr(name, "Memset")) return TS_KT_MEMORY;
    /* TensorFlow's GPU tracer names its copies MEMCPYHtoD, MEMCPYDtoH, ... */
    if (!strncmp(name, "MEMCPY", 6)) return TS_KT_MEMORY;
    return TS_KT_COMPUTATION;
}

bool ts_is_collective_name(const char *name)
{
    static const char *const marks[] = {
        "c10d::", "gloo:", "nccl:", "record_param_comms", "processgroup", "mpi:", "rccl:",
    };
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (contains_ci(name, marks[i])) return true;
    return strncasecmp(name, "MPI_", 4) == 0 || ts__horovod_comm_name(name) ||
           ts_kernel_type_of(name) == TS_KT_COMMUNICATION;
}

bool ts__is_profiler_bookkeeping(const ts_rank *r, uint32_t s)
{
    uint32_t cat = r->slices.cat[s];
    return cat && strcmp(ts__rank_str(r, cat), "Trace") == 0;
}

int ts__names_init(ts_names *m, const ts_rank *r)
{
    m->n = r->strings.n;
    m->cls = ts__calloc(m->n ? m->n : 1, 1);
    return m->cls ? TS_OK : TS_ENOMEM;
}

void ts__names_free(ts_names *m)
{
    ts__free(m->cls, m->n ? m->n : 1);
    m->cls = NULL;
}

static uint8_t names_class(ts_names *m, const ts_rank *r, uint32_t id)
{
    if (id >= m->n) return NAMES_DONE;   /* defensive: ids come from the same rank */
    if (!m->cls[id]) {
        const char *name = ts__rank_str(r, id);
        m->cls[id] = (uint8_t)(NAMES_DONE | ts_kernel_type_of(name) | (ts_is_collective_name(name) ? NAMES_COLL : 0));
    }
    return m->cls[id];
}

ts_kernel_type ts__names_kernel_type(ts_names *m, const ts_rank *r, uint32_t id)
{
    return (ts_kernel_type)(names_class(m, r, id) & 0x03);
}

bool ts__names_collective(ts_names *m, const ts_rank *r, uint32_t id)
{
    return (names_class(m, r, id) & NAMES_COLL) != 0;
}
