/* compact.c - a rank reduced to the slices a caller still needs (the bounded
 * path from files, graph/stream.c): the kept slices with every column (and
 * their args where asked), all tracks, iterations, metadata args, warnings and counts,
 * and only the strings they name. Instants, counters and flows are dropped.
 *
 * Not for: choosing what to keep (the caller marks it). Invariants: the kept
 * rows stay in their order, so a track's slices are still contiguous and in
 * time order; ancestors that are not kept are skipped: a kept slice's parent is its
 * nearest kept ancestor and its depth counts kept ancestors, so nesting
 * stays true of the kept rows. A slice kept with
 * keep[s] == 2 keeps its args too; with 1 it has none. The ext_id column is
 * dropped (NULL), the corr column too unless keep_ids. Cost O(slices + args of
 * kept slices + bytes of the strings kept).
 */
#include "trace/model.h"

#include <stdlib.h>

typedef struct str_map {
    const ts_rank *from;
    ts_rank       *to;
    uint32_t      *id;   /* from's string id -> to's, 0 = not yet (id 0 is "" in both) */
} str_map;

static uint32_t map_str(str_map *m, uint32_t id)
{
    if (id == 0 || id >= m->from->strings.n) return 0;
    if (!m->id[id])
        m->id[id] = ts__rank_intern(m->to, ts__rank_str(m->from, id), ts__str_len(&m->from->strings, id));
    return m->id[id];
}

/* Arg rows [first, first + n) of `from`, appended to `to`; the first new row. */
static uint32_t copy_args(str_map *m, uint32_t first, uint32_t n)
{
    uint32_t at = ts__rank_args_mark(m->to);
    for (uint32_t k = first; k < first + n; k++) {
        uint8_t type = m->from->args.type[k];
        uint64_t val = m->from->args.val[k];
        if (type == TS_ARG_STR || type == TS_ARG_JSON) val = map_str(m, (uint32_t)val);
        ts__rank_add_arg(m->to, map_str(m, m->from->args.key[k]), (ts_arg_type)type, val);
    }
    return at;
}

static void copy_slice(str_map *m, uint32_t s, const uint32_t *map, uint32_t kept_parent, bool with_args)
{
    const ts_slices *f = &m->from->slices;
    uint32_t args = TS_NONE32, n_args = f->args[s] == TS_NONE32 || !with_args ? 0 : f->n_args[s];
    if (n_args) args = copy_args(m, f->args[s], n_args);
    uint32_t i = ts__rank_push_slice(m->to, f->track[s], f->ts_ns[s], f->dur_ns[s], map_str(m, f->name[s]),
                                     map_str(m, f->cat[s]), (ts_kind)f->kind[s], args, n_args, f->corr[s],
                                     f->ext_id[s]);
    if (i == TS_NONE32) return;
    uint32_t p = kept_parent == TS_NONE32 ? TS_NONE32 : map[kept_parent];
    m->to->slices.parent[i] = p;
    m->to->slices.depth[i] = p == TS_NONE32 ? 0 : (uint16_t)(m->to->slices.depth[p] + 1);
}

static int copy_tracks(str_map *m, const uint32_t *map)
{
    const ts_rank *f = m->from;
    ts_rank *t = m->to;
    if (f->n_tracks && ts__grow((void **)&t->tracks, &t->cap_tracks, sizeof *t->tracks, f->n_tracks)) return TS_ENOMEM;
    for (uint32_t k = 0; k < f->n_tracks; k++) {
        ts_track tr = f->tracks[k];
        tr.name_id = map_str(m, tr.name_id);
        tr.process_name_id = map_str(m, tr.process_name_id);
        tr.process_label_id = map_str(m, tr.process_label_id);
        uint32_t first = tr.first_slice, end = first + tr.n_slices, nf = TS_NONE32, n = 0;
        for (uint32_t s = first; s < end; s++)
            if (map[s] != TS_NONE32) { if (nf == TS_NONE32) nf = map[s]; n++; }
        tr.first_slice = nf == TS_NONE32 ? t->slices.n : nf;
        tr.n_slices = n;
        t->tracks[t->n_tracks++] = tr;
    }
    return TS_OK;
}

static int copy_rest(str_map *m, const uint32_t *map)
{
    const ts_rank *f = m->from;
    ts_rank *t = m->to;
    t->rank = f->rank;
    t->world_size = f->world_size;
    t->base_time_ns = f->base_time_ns;
    t->us_fractions = f->us_fractions;
    t->n_events_read = f->n_events_read;
    t->summary = true;
    ts_rank_read_counts(f, t->read_rows);
    t->n_rounding_overruns = f->n_rounding_overruns;
    if (f->meta_args != TS_NONE32 && f->n_meta_args) {
        t->meta_args = copy_args(m, f->meta_args, f->n_meta_args);
        t->n_meta_args = f->n_meta_args;
    }
    for (int k = 0; k < TS_WARN_COUNT; k++) {
        t->warn_count[k] = f->warn_count[k];
        if (f->warn_first[k] && !(t->warn_first[k] = ts__strdup(f->warn_first[k]))) return TS_ENOMEM;
    }
    if (f->n_iterations &&
        ts__grow((void **)&t->iterations, &t->cap_iterations, sizeof *t->iterations, f->n_iterations))
        return TS_ENOMEM;
    for (uint32_t k = 0; k < f->n_iterations; k++) {
        ts_iteration it = f->iterations[k];
        if (it.slice != TS_NONE32) it.slice = map[it.slice];
        t->iterations[t->n_iterations++] = it;
    }
    return TS_OK;
}

int ts__rank_compact(const ts_rank *full, const uint8_t *keep, uint32_t *map, bool keep_ids, ts_rank **out,
                     ts_error *err)
{
    *out = NULL;
    uint32_t n_keep = 0, n_args = 0;
    for (uint32_t s = 0; s < full->slices.n; s++) {
        map[s] = keep[s] ? n_keep++ : TS_NONE32;
        if (keep[s] == 2 && full->slices.args[s] != TS_NONE32) n_args += full->slices.n_args[s];
    }
    ts_rank *t = ts__rank_create(full->path);
    str_map m = {.from = full, .to = t, .id = ts__calloc((size_t)full->strings.n + 1, sizeof *m.id)};
    /* per slice: its nearest kept ancestor (parents precede children); not
     * needed when none is kept (info's summary) */
    uint32_t *up = n_keep ? ts__malloc(((size_t)full->slices.n + 1) * sizeof *up) : NULL;
    int rc = !t || !m.id || (n_keep && !up) ? TS_ENOMEM : TS_OK;
    if (rc == TS_OK) {
        ts__rank_reserve(t, n_keep ? n_keep : 1, n_args + full->n_meta_args + 1, 0);
        for (uint32_t s = 0; n_keep && s < full->slices.n; s++) {
            uint32_t p = full->slices.parent[s];
            up[s] = p == TS_NONE32 ? TS_NONE32 : keep[p] ? p : up[p];
            if (keep[s]) copy_slice(&m, s, map, up[s], keep[s] == 2);
        }
        rc = copy_tracks(&m, map);
    }
    if (up) ts__free(up, ((size_t)full->slices.n + 1) * sizeof *up);
    if (rc == TS_OK) rc = copy_rest(&m, map);
    if (rc == TS_OK && (t->oom || ts__strpool_oom(&t->strings))) rc = TS_ENOMEM;
    if (m.id) ts__free(m.id, ((size_t)full->strings.n + 1) * sizeof *m.id);
    if (rc) {
        ts__rank_destroy(t);
        return ts__error(err, rc, "%s: out of memory keeping the rank's summary", full->path ? full->path : "?");
    }
    /* The external ids served a local graph, built by now; the launch ids
     * too unless keep_ids (an analysis pairs launches with GPU ops): 8 bytes
     * a slice each. */
    ts__free(t->slices.ext_id, (size_t)t->slices.cap * sizeof *t->slices.ext_id);
    t->slices.ext_id = NULL;
    if (!keep_ids) {
        ts__free(t->slices.corr, (size_t)t->slices.cap * sizeof *t->slices.corr);
        t->slices.corr = NULL;
    }
    t->finished = true;
    *out = t;
    return TS_OK;
}
