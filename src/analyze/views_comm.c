/* views_comm.c - the communication-latency view (Trace Compass's
 * latency_grpc analysis, for NCCL and MPI): per collective kind (and peer
 * for point-to-point calls) the distribution of call latencies and its
 * course over time, and MPI send/recv pairs matched across ranks.
 *
 * Not for: matching collectives across ranks or aligning clocks (graph/).
 * Pairing follows MPI's non-overtaking rule: on one communicator, sends
 * from a to b with tag T are received by b in the order a sent them, so the
 * i-th send of (a, b, T) pairs with b's i-th receive of (a, T). Only calls
 * whose communicator numbers ranks as the trace does ("Rank" arg equal to
 * the trace's rank) pair, so ranks of a sub-communicator are never taken
 * for world ranks. Cost: O(calls log calls) for the sorts; finding the wait
 * that completed an MPI_Irecv scans that rank's waits from the Irecv on.
 */
#include <stdlib.h>

#include "analyze/analyze_int.h"
#include "analyze/views_int.h"

typedef struct comm_impl {
    ts_view_comm pub;
    uint32_t   cap_rows;
    uint64_t   cap_bins;
    ts_strpool names;        /* kinds */
} comm_impl;

typedef struct sample { uint32_t row; int64_t start, lat, bytes; } sample;

/* A point-to-point MPI call, for pairing. */
typedef struct p2p {
    uint32_t rank_idx, slice;
    int32_t  self, peer;      /* trace ranks */
    int64_t  tag, start, end, bytes;
    uint32_t comm;            /* communicator name, interned in the result */
    bool     send;
} p2p;

typedef struct ctx {
    comm_impl *v;
    ts_map64   row_of;        /* (what, kind, src, dst) hash -> row */
    sample    *s;
    uint64_t   n_s, cap_s;
    p2p       *p;
    uint64_t   n_p, cap_p;
} ctx;

static int64_t dtype_bytes(const char *dt)
{
    static const struct { const char *name; int64_t bytes; } t[] = {
        {"Byte", 1}, {"Char", 1}, {"Bool", 1}, {"Half", 2}, {"BFloat16", 2}, {"Short", 2}, {"Float", 4},
        {"Int", 4}, {"Double", 8}, {"Long", 8}, {"ComplexFloat", 8}, {"ComplexDouble", 16},
    };
    for (size_t i = 0; dt && i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(dt, t[i].name)) return t[i].bytes;
    return -1;
}

static int64_t msg_bytes(const ts_rank *r, uint32_t s)
{
    int64_t n, size = dtype_bytes(ts__slice_arg_str(r, s, "dtype"));
    if (size < 0 || !ts__slice_arg_i64(r, s, "In msg nelems", &n) || n < 0) return -1;
    return n * size;
}

/* "ncclDevKernel_AllGather_RING_LL(...)", "ncclKernel_AllReduce_..." -> "allgather" */
static void kind_of_kernel(const char *name, char *out, size_t cap)
{
    const char *u = strchr(name, '_');
    size_t n = 0;
    for (u = u ? u + 1 : name; *u && *u != '_' && *u != '(' && n + 1 < cap; u++)
        out[n++] = (char)(*u >= 'A' && *u <= 'Z' ? *u - 'A' + 'a' : *u);
    out[n] = 0;
}

/* A GPU communication kernel (NCCL, RCCL: classify.c's rule, once per
 * distinct name through m) or one that names its collective. */
static bool is_comm_kernel(ts_names *m, const ts_rank *r, uint32_t s)
{
    return r->slices.kind[s] == TS_KIND_KERNEL &&
           (ts__names_kernel_type(m, r, r->slices.name[s]) == TS_KT_COMMUNICATION ||
            ts__slice_arg_str(r, s, "Collective name"));
}

/* A process group's annotation on a CPU thread, "gloo:all_reduce": its kind
 * after the colon; NULL for other names. */
static const char *annotation_kind(const char *name)
{
    static const char *const pre[] = {"gloo:", "nccl:", "mpi:", "rccl:"};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (!strncmp(name, pre[i], strlen(pre[i])) && name[strlen(pre[i])]) return name + strlen(pre[i]);
    return NULL;
}

static uint32_t row_for(ctx *c, int what, const char *kind, int32_t src, int32_t dst)
{
    comm_impl *v = c->v;
    uint32_t k = ts__str_intern(&v->names, kind, strlen(kind));
    if (ts__strpool_oom(&v->names)) return TS_NONE32;
    uint64_t key = ts__hash_bytes((int64_t[]){what, k, src, dst}, 4 * sizeof(int64_t)) & ~(1ull << 63), row;
    if (ts__map64_get(&c->row_of, key, &row)) return (uint32_t)row;
    if ((v->pub.n_rows == v->cap_rows &&
         ts__grow((void **)&v->pub.rows, &v->cap_rows, sizeof *v->pub.rows, (size_t)v->pub.n_rows + 1)) ||
        ts__map64_put(&c->row_of, key, v->pub.n_rows))
        return TS_NONE32;
    v->pub.rows[v->pub.n_rows] = (ts_comm_row){.what = what, .kind = NULL, .src = src, .dst = dst};
    v->pub.rows[v->pub.n_rows].bin_ns = k;   /* the kind's id until finish resolves it */
    return v->pub.n_rows++;
}

static int add_sample(ctx *c, uint32_t row, int64_t start, int64_t lat, int64_t bytes)
{
    if (row == TS_NONE32 || ts__views_grow((void **)&c->s, &c->cap_s, sizeof *c->s, c->n_s + 1)) return TS_ENOMEM;
    c->s[c->n_s++] = (sample){row, start, lat, bytes};
    return TS_OK;
}

/* A p2p MPI call kept for pairing, when its communicator numbers ranks as the trace does. */
static int keep_p2p(ctx *c, const ts_rank *r, uint32_t ri, uint32_t s, const char *kind, int64_t peer, int64_t bytes)
{
    int64_t self, tag = 0;
    const char *comm = ts__slice_arg_str(r, s, "Process Group Name");
    if (!ts__slice_arg_i64(r, s, "Rank", &self) || self != r->rank || peer < 0 || !comm) return TS_OK;
    ts__slice_arg_i64(r, s, "tag", &tag);
    uint32_t cid = ts__str_intern(&c->v->names, comm, strlen(comm));
    if (ts__strpool_oom(&c->v->names) || ts__views_grow((void **)&c->p, &c->cap_p, sizeof *c->p, c->n_p + 1))
        return TS_ENOMEM;
    bool send = kind[0] == 's' || kind[1] == 's';
    c->p[c->n_p++] = (p2p){.rank_idx = ri, .slice = s, .self = (int32_t)self, .peer = (int32_t)peer, .tag = tag,
                           .start = r->slices.ts_ns[s], .end = ts__slice_end(r, s), .bytes = bytes, .comm = cid,
                           .send = send};
    return TS_OK;
}

static int add_call(ctx *c, const ts_rank *r, uint32_t ri, uint32_t s, bool kernel)
{
    char kbuf[64];
    const char *kind = ts__slice_arg_str(r, s, "Collective name");
    if (!kind && !kernel) kind = annotation_kind(ts__rank_str(r, r->slices.name[s]));
    if (!kind) { kind_of_kernel(ts__rank_str(r, r->slices.name[s]), kbuf, sizeof kbuf); kind = kbuf; }
    int64_t peer = -1;
    bool p2p_kind = !strcmp(kind, "send") || !strcmp(kind, "isend") || !strcmp(kind, "recv") || !strcmp(kind, "irecv");
    if (p2p_kind && !ts__slice_arg_i64(r, s, kind[0] == 's' || kind[1] == 's' ? "Dst Rank" : "Src Rank", &peer))
        peer = -1;
    int64_t bytes = msg_bytes(r, s);
    /* point-to-point calls per (caller, peer); collectives per kind over every rank */
    uint32_t row = p2p_kind ? row_for(c, TS_COMM_CALL, kind, r->rank, (int32_t)peer) : row_for(c, TS_COMM_CALL, kind, -1, -1);
    int rc = add_sample(c, row, r->slices.ts_ns[s], r->slices.dur_ns[s], bytes);
    if (!rc && p2p_kind && !kernel) rc = keep_p2p(c, r, ri, s, kind, peer, bytes);
    return rc;
}

enum { SRC_KERNELS = 0, SRC_NAMED, SRC_ANNOTATIONS, SRC_NONE };

/* What carries a rank's communication, the first found of: comm kernels,
 * CPU ops with "Collective name" (record_param_comms, MPI calls), process
 * group annotations ("gloo:all_reduce"). One source only, since the later
 * ones enclose the earlier (a record_param_comms launches the kernel). */
static int source_of(ts_names *m, const ts_rank *r, uint32_t s)
{
    if (is_comm_kernel(m, r, s)) return SRC_KERNELS;
    if (r->tracks[r->slices.track[s]].kind != TS_TRACK_THREAD) return SRC_NONE;
    if (ts__slice_arg_str(r, s, "Collective name")) return SRC_NAMED;
    return annotation_kind(ts__rank_str(r, r->slices.name[s])) ? SRC_ANNOTATIONS : SRC_NONE;
}

static int read_rank(ctx *c, const ts_rank *r, uint32_t ri)
{
    ts_names m;
    if (ts__names_init(&m, r)) return TS_ENOMEM;
    int src = SRC_NONE, rc = TS_OK;
    for (uint32_t s = 0; s < r->slices.n && src; s++) {
        int k = source_of(&m, r, s);
        if (k < src) src = k;
    }
    for (uint32_t s = 0; s < r->slices.n && src != SRC_NONE && !rc; s++)
        if (source_of(&m, r, s) == src) rc = add_call(c, r, ri, s, src == SRC_KERNELS);
    ts__names_free(&m);
    return rc;
}

/* Up to cap integers of a JSON array text "[3,7]"; how many. */
static uint32_t json_ints(const char *s, int64_t *out, uint32_t cap)
{
    uint32_t n = 0;
    while (s && *s && n < cap) {
        char *end;
        long long v = ((*s >= '0' && *s <= '9') || *s == '-') ? strtoll(s, &end, 10) : 0;
        if (((*s >= '0' && *s <= '9') || *s == '-') && end != s) {   /* a lone '-' converts nothing: skip it */
            out[n++] = v;
            s = end;
        } else {
            s++;
        }
    }
    return n;
}

/* Whether wait/test slice w completed request req. */
static bool completes(const ts_rank *r, uint32_t w, int64_t req)
{
    const char *n = ts__rank_str(r, r->slices.name[w]);
    int64_t x, done = 1, list[64], idx[64];
    bool test = !strncmp(n, "MPI_Test", 8);
    if (!test && strncmp(n, "MPI_Wait", 8)) return false;
    if (test && (!ts__slice_arg_i64(r, w, "completed", &done) || done <= 0)) return false;
    const char *suffix = n + 8;
    if (!*suffix) return ts__slice_arg_i64(r, w, "request", &x) && x == req;
    uint32_t nl = json_ints(ts__slice_arg_str(r, w, "requests"), list, 64), ni = 0;
    if (!strcmp(suffix, "all")) { for (uint32_t i = 0; i < nl; i++) if (list[i] == req) return true; return false; }
    if (!strcmp(suffix, "any")) ni = ts__slice_arg_i64(r, w, "index", &idx[0]) ? 1 : 0;
    else if (!strcmp(suffix, "some")) ni = json_ints(ts__slice_arg_str(r, w, "indices"), idx, 64);
    for (uint32_t i = 0; i < ni; i++) if (idx[i] >= 0 && idx[i] < nl && list[idx[i]] == req) return true;
    return false;
}

/* When the receive of p2p call p completed: its own end, or for an
 * MPI_Irecv the end of the first later wait/test on its thread that
 * completed its request; INT64_MIN when none did. */
static int64_t recv_end(const ts_job *t, const p2p *p)
{
    const ts_rank *r = t->ranks[p->rank_idx];
    if (strcmp(ts__rank_str(r, r->slices.name[p->slice]), "MPI_Irecv")) return p->end;
    int64_t req;
    if (!ts__slice_arg_i64(r, p->slice, "request", &req)) return INT64_MIN;
    const ts_track *tr = &r->tracks[r->slices.track[p->slice]];
    for (uint32_t w = p->slice + 1; w < tr->first_slice + tr->n_slices; w++)
        if (completes(r, w, req)) return ts__slice_end(r, w);
    return INT64_MIN;
}

/* Sort key: communicator, sender, receiver, tag, sends before receives, start. */
static int by_channel(const void *a, const void *b)
{
    const p2p *x = a, *y = b;
    int32_t xs = x->send ? x->self : x->peer, xd = x->send ? x->peer : x->self;
    int32_t ys = y->send ? y->self : y->peer, yd = y->send ? y->peer : y->self;
    if (x->comm != y->comm) return (x->comm > y->comm) - (x->comm < y->comm);
    if (xs != ys) return (xs > ys) - (xs < ys);
    if (xd != yd) return (xd > yd) - (xd < yd);
    if (x->tag != y->tag) return (x->tag > y->tag) - (x->tag < y->tag);
    if (x->send != y->send) return x->send ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

static bool same_channel(const p2p *x, const p2p *y)
{
    return x->comm == y->comm && (x->send ? x->self : x->peer) == (y->send ? y->self : y->peer) &&
           (x->send ? x->peer : x->self) == (y->send ? y->peer : y->self) && x->tag == y->tag;
}

/* The i-th send of each channel with its i-th receive. */
static int pair_p2p(ctx *c, const ts_job *t)
{
    if (c->n_p) qsort(c->p, c->n_p, sizeof *c->p, by_channel);   /* c->p is NULL without any */
    for (uint64_t i = 0; i < c->n_p;) {
        uint64_t j = i, ns = 0;
        while (j < c->n_p && same_channel(&c->p[i], &c->p[j])) ns += c->p[j++].send;
        uint64_t nr = (j - i) - ns, k;
        for (k = 0; k < ns && k < nr; k++) {
            const p2p *s = &c->p[i + k], *r = &c->p[i + ns + k];
            int64_t end = recv_end(t, r);
            if (end == INT64_MIN) { c->v->pub.n_unpaired += 2; continue; }
            uint32_t row = row_for(c, TS_COMM_PAIR, "send>recv", s->self, s->peer);
            if (add_sample(c, row, s->start, end - s->start, s->bytes)) return TS_ENOMEM;
        }
        c->v->pub.n_unpaired += (ns > nr ? ns - nr : nr - ns);
        i = j;
    }
    return TS_OK;
}

static int by_row_start(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    if (x->row != y->row) return (x->row > y->row) - (x->row < y->row);
    return (x->start > y->start) - (x->start < y->start);
}

/* Distribution and bins of one row's samples s[0..n) (in start order). */
static int finish_row(comm_impl *v, ts_comm_row *row, const sample *s, uint64_t n, int64_t *lat, uint32_t nb)
{
    row->kind = ts__str(&v->names, (uint32_t)row->bin_ns);
    int64_t lo = s[0].start, hi = s[n - 1].start;
    for (uint64_t i = 0; i < n; i++) {
        lat[i] = s[i].lat;
        row->total_ns += s[i].lat;
        if (s[i].bytes > 0) row->bytes += s[i].bytes;
        if (s[i].lat < 0) row->n_negative++;
    }
    row->n = n;
    ts__sort_i64(lat, n, lat + n);
    row->min_ns = lat[0];
    row->max_ns = lat[n - 1];
    row->p50_ns = ts__views_pct(lat, n, 50);
    row->p90_ns = ts__views_pct(lat, n, 90);
    row->p99_ns = ts__views_pct(lat, n, 99);
    ts__views_bins(lo, hi, nb, &row->bin_start_ns, &row->bin_ns);
    ts_comm_bin *bins = v->pub.bins + row->first_bin;
    for (uint32_t k = 0; k < nb; k++) bins[k] = (ts_comm_bin){0, 0, INT64_MIN};
    for (uint64_t i = 0; i < n; i++) {
        ts_comm_bin *b = &bins[ts__views_bin_of(row->bin_start_ns, row->bin_ns, nb, s[i].start)];
        b->n++;
        b->mean_ns += s[i].lat;   /* the sum until divided below */
        if (s[i].lat > b->max_ns) b->max_ns = s[i].lat;
    }
    for (uint32_t k = 0; k < nb; k++) {
        if (bins[k].n) bins[k].mean_ns /= (int64_t)bins[k].n;
        else bins[k].max_ns = 0;
    }
    return TS_OK;
}

static int finish(ctx *c, uint32_t nb)
{
    comm_impl *v = c->v;
    qsort(c->s, c->n_s, sizeof *c->s, by_row_start);
    if (ts__views_grow((void **)&v->pub.bins, &v->cap_bins, sizeof *v->pub.bins, (uint64_t)v->pub.n_rows * nb + 1))
        return TS_ENOMEM;
    int64_t *lat = ts__malloc(2 * (c->n_s + 1) * sizeof *lat);
    if (!lat) return TS_ENOMEM;
    for (uint64_t i = 0; i < c->n_s;) {
        uint64_t j = i;
        while (j < c->n_s && c->s[j].row == c->s[i].row) j++;
        ts_comm_row *row = &v->pub.rows[c->s[i].row];
        row->first_bin = c->s[i].row * nb;
        finish_row(v, row, c->s + i, j - i, lat, nb);
        i = j;
    }
    ts__free(lat, 2 * (c->n_s + 1) * sizeof *lat);
    return TS_OK;
}

int ts_view_comm_create(const ts_job *t, const ts_views_opts *opt, ts_view_comm **out, ts_error *err)
{
    ts__error_clear(err);
    *out = NULL;
    ts__views_cfg cfg;
    ts__views_cfg_from(opt, &cfg);
    comm_impl *v = ts__calloc(1, sizeof *v);
    if (!v || ts__strpool_init(&v->names)) { ts__free(v, sizeof *v); return ts__error(err, TS_ENOMEM, "out of memory"); }
    v->pub.n_bins = cfg.n_bins;
    ctx c = {.v = v};
    ts__map64_init(&c.row_of);
    int rc = TS_OK;
    for (uint32_t ri = 0; ri < t->n_ranks && !rc; ri++)
        if (ts__views_rank_ok(&cfg, t->ranks[ri])) rc = read_rank(&c, t->ranks[ri], ri);
    if (!rc) rc = pair_p2p(&c, t);
    if (!rc && c.n_s) rc = finish(&c, cfg.n_bins);
    ts__map64_free(&c.row_of);
    ts__free(c.s, c.cap_s * sizeof *c.s);
    ts__free(c.p, c.cap_p * sizeof *c.p);
    if (rc) ts__error(err, rc, "out of memory");
    else if (!v->pub.n_rows)
        rc = ts__error(err, TS_ENODATA, "no communication calls (NCCL kernels, ops with \"Collective name\", MPI)%s",
                       cfg.rank >= 0 ? " for that rank" : "");
    if (rc) { ts_view_comm_destroy(&v->pub); return rc; }
    *out = &v->pub;
    return TS_OK;
}

void ts_view_comm_destroy(ts_view_comm *pub)
{
    if (!pub) return;
    comm_impl *v = (comm_impl *)pub;
    ts__free(v->pub.rows, (size_t)v->cap_rows * sizeof *v->pub.rows);
    ts__free(v->pub.bins, v->cap_bins * sizeof *v->pub.bins);
    ts__strpool_free(&v->names);
    ts__free(v, sizeof *v);
}
