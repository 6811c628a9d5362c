/* plan.c - `trainscope optimize -o DIR`'s plan files: a search's result as
 * files a user applies (optimize/plan_read.c reads plan.json back so
 * `trainscope replay --plan` re-predicts it). The output stage's one reader
 * of optimize/'s internals (optimize_priv.h: the ts_optimize it writes).
 *
 *   plan.json         the edits, the predicted iteration before and after,
 *                     the gain, the search's history; "ddp": {"bucket_cap_mb":
 *                     <number or null>, "groups": [[param name, ...], ...]}
 *                     in the order the buckets are all-reduced (names as
 *                     model.named_parameters() gives them: gradients.json's);
 *                     "bucket_units" and "gradient_pieces" (reduction order)
 *                     are what replay --plan reads, with "gradients_fingerprint"
 *                     naming the gradients the plan is for;
 *                     "apply_cost": what a hook was priced at and the plan's own
 *                     cost, and a hook plan declined for it ("declined");
 *                     "no_change": true when the plan is the trace's own
 *                     strategy (gain 0, no edits): then "bucket_cap_mb" is the
 *                     setting that gives the trace's buckets (DDP's default 25
 *                     where it does), the setting to keep;
 *   ddp_hook.py       when no bucket_cap_mb gives the grouping (or a gradient
 *                     is cut) and the plan changes it: a DDP communication hook
 *                     that all-reduces the plan's groups whatever DDP's own
 *                     buckets are (never for the trace's own buckets, nor for a
 *                     plan whose gain was below a hook's cost: such a plan is not
 *                     taken, optimize.c's price_form; docs/optimize.md);
 *   horovod.env       HOROVOD_FUSION_THRESHOLD (one whose fusion gives the
 *                     plan's buckets, else the largest bucket's bytes) and
 *                     HOROVOD_CYCLE_TIME;
 *   tensor_groups.txt dPRO's tensor group list: one bucket a line, names
 *                     joined by '+'.
 * Each file is written as DIR/.NAME.tmp and renamed once all are written.
 * Not for: the search (optimize/optimize.c) or reading plans back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "optimize/optimize_priv.h"
#include "core/json.h"

/* The bucket of each gradient's first piece, and bytes per bucket. */
static uint32_t bucket_of_grads(ts_optimize *o, uint32_t *bucket_of)
{
    ts__part_pieces(&o->grads, o->grads.n_part ? o->best + ts__tf_n_vars(&o->grads) : NULL, o->pieces);
    uint32_t n_b = ts__tf_groups(&o->grads, o->best, o->pieces, o->units);
    for (uint32_t i = 0, b = 0, used = 0; i < o->grads.n; i++) {
        if (used == o->units[b]) { b++; used = 0; }
        bucket_of[i] = b;
        for (uint32_t p = 0; p < o->pieces[i]; p++) {
            if (used == o->units[b]) { b++; used = 0; }
            used++;
        }
    }
    return n_b;
}

static void json_plan_head(ts_json *j, const ts_optimize *o)
{
    const ts_optimize_summary *s = &o->sum;
    char fp[32];
    snprintf(fp, sizeof fp, "%016llx", (unsigned long long)o->grads.fingerprint);
    ts__json_kv_u64(j, "trainscope_plan", 1);
    ts__json_kv_str(j, "gradients_file", o->base.gradients_json);
    ts__json_kv_str(j, "gradients_fingerprint", fp);
    ts__json_kv_u64(j, "n_gradients", o->grads.n);
    ts__json_key(j, "passes");
    ts__json_arr_begin(j);
    if (o->passes & TS_PASS_TENSOR_FUSION) ts__json_str(j, "tensor-fusion");
    if (o->passes & TS_PASS_PARTITION) ts__json_str(j, "partition");
    if (o->passes & TS_PASS_OP_FUSION) ts__json_str(j, "op-fusion");
    ts__json_arr_end(j);
    ts__json_kv_us(j, "measured_iteration_us", s->measured_ns);
    ts__json_kv_us(j, "baseline_iteration_us", s->baseline_ns);
    ts__json_kv_us(j, "predicted_iteration_us", s->best_ns);
    ts__json_kv_double(j, "predicted_gain_pct",
                       s->baseline_ns ? 100.0 * (double)(s->baseline_ns - s->best_ns) / (double)s->baseline_ns : 0, 3);
    ts__json_kv_bool(j, "no_change", s->no_change);
    ts__json_kv_u64(j, "buckets_before", s->n_old_buckets);
    ts__json_kv_u64(j, "buckets_after", s->n_new_buckets);
    /* what applying it costs (a bucket_cap_mb setting nothing, ddp_hook.py hook_cost a step), and a
       plan not taken because its gain was not above that cost */
    ts__json_key(j, "apply_cost");
    ts__json_obj_begin(j);
    ts__json_kv_us(j, "hook_cost_us", s->hook_cost_ns);
    ts__json_kv_us(j, "hook_group_cost_us", s->hook_group_ns);
    ts__json_kv_us(j, "plan_cost_us", s->apply_cost_ns);
    ts__json_kv_us(j, "predicted_iteration_with_cost_us", s->best_ns + s->apply_cost_ns);
    ts__json_key(j, "declined");
    if (s->declined_ns > 0) {
        ts__json_obj_begin(j);
        ts__json_kv_str(j, "form", "ddp_hook");
        ts__json_kv_u64(j, "buckets", s->declined_buckets);
        ts__json_kv_us(j, "predicted_iteration_us", s->declined_best_ns);
        ts__json_kv_us(j, "predicted_gain_us", s->declined_ns);
        ts__json_kv_double(j, "predicted_gain_pct", 100.0 * (double)s->declined_ns / (double)s->baseline_ns, 3);
        ts__json_kv_us(j, "cost_us", s->declined_cost_ns);
        ts__json_obj_end(j);
    } else {
        ts__json_null(j);
    }
    ts__json_obj_end(j);
}

/* Two stages: the search (and its history, and what each change buys)
 * priced on the representatives; each re-priced strategy both ways. */
static void json_stages(ts_json *j, const ts_optimize *o)
{
    ts__json_kv_str(j, "priced_on", "representatives");
    ts__json_kv_u64(j, "representative_ranks", o->sum.n_rep_ranks);
    ts__json_kv_u64(j, "top_k", o->top_k);
    ts__json_key(j, "repriced_folded");   /* the trace's strategy first, then by representatives' price, then
                                             the fastest cap grouping where those lack it */
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < o->n_st; i++) {
        ts__json_obj_begin(j);
        ts__json_kv_bool(j, "trace_strategy", i == 0);
        ts__json_kv_bool(j, "chosen", (int32_t)i == o->st_chosen);
        ts__json_kv_bool(j, "cap_grouping", (int32_t)i == o->st_cap);   /* the best cap grouping, beside the top */
        ts__json_kv_us(j, "representatives_iteration_us", o->st_rep[i]);
        ts__json_kv_us(j, "folded_iteration_us", o->st_full[i]);
        ts__json_kv_double(j, "error_pct", 100.0 * (double)(o->st_rep[i] - o->st_full[i]) / (double)o->st_full[i], 4);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
}

static void json_search(ts_json *j, const ts_optimize *o)
{
    ts__json_key(j, "search");
    ts__json_obj_begin(j);
    ts__json_kv_str(j, "kind", ts_search_kind_name(o->sum.search));
    ts__json_kv_u64(j, "evaluations", o->sum.n_evals);
    ts__json_kv_u64(j, "attribution_evaluations", o->n_attrib_evals);   /* pruning and what each change buys */
    ts__json_kv_u64(j, "pruned_changes", o->n_pruned);
    ts__json_key(j, "pruned");   /* each change dropped, with the plan's price without it against with it */
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < o->n_pruned; i++) ts__json_str(j, o->pruned[i]);
    ts__json_arr_end(j);
    ts__json_kv_str(j, "pruned_on", o->rep ? "folded" : "graph");
    ts__json_kv_u64(j, "pruning_evaluations", o->sum.n_prune_evals);
    ts__json_kv_double(j, "seconds", o->sum.search_s, 3);
    /* the groupings a cap gives: how many, how many the search priced first (its evaluations 2 ..
       n + 1, in the history like any), how many priced after it beside its plan */
    ts__json_kv_u64(j, "cap_groupings", o->sum.n_cap_groupings);
    ts__json_kv_u64(j, "cap_proposals", o->sum.n_cap_proposals);
    ts__json_kv_u64(j, "cap_evaluations", o->sum.n_cap_evals);
    ts__json_key(j, "outpriced_iteration_us");   /* the search's best, when a cap grouping priced after it won */
    if (o->sum.outpriced_ns > 0) ts__json_us(j, o->sum.outpriced_ns);
    else ts__json_null(j);
    if (o->rep) json_stages(j, o);
    ts__json_key(j, "history");   /* each time the best improved */
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < o->oc.n_hist; i++) {
        ts__json_obj_begin(j);
        ts__json_kv_u64(j, "evaluation", o->oc.hist[i].eval);
        ts__json_kv_us(j, "best_iteration_us", o->oc.hist[i].best_ns);
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_obj_end(j);
}

static void json_edits(ts_json *j, ts_optimize *o, const uint32_t *bucket_of, uint32_t n_b)
{
    ts__json_key(j, "edits");
    ts__json_arr_begin(j);
    uint32_t nt = ts__tf_n_vars(&o->grads), first_opf = ts__opt_opf_first(o);
    for (uint32_t v = 0; v < o->n_vars; v++) {
        if (o->best[v] == o->init[v]) continue;
        ts__json_obj_begin(j);
        if (v >= first_opf) {
            uint32_t i = o->opf.var_rep[v - first_opf], n = 0;
            for (uint32_t k = 0; k < o->opf.n_inst; k++) n += o->opf.inst_var[k] == v - first_opf;
            ts__json_kv_str(j, "pass", "op-fusion");
            ts__json_key(j, "ops");
            ts__json_arr_begin(j);
            ts__json_str(j, ts__graph_node_name(o->g, o->opf.inst_a[i]));
            ts__json_str(j, ts__graph_node_name(o->g, o->opf.inst_b[i]));
            ts__json_arr_end(j);
            ts__json_kv_u64(j, "instances", n);   /* every iteration and rank */
        } else if (v < nt) {
            ts__json_kv_str(j, "pass", "tensor-fusion");
            ts__json_kv_str(j, "edit", o->best[v] ? "cut" : "fuse");
            ts__json_kv_str(j, "after", o->grads.name[v]);
            ts__json_kv_str(j, "before", o->grads.name[v + 1]);
        } else {
            uint32_t gi = o->grads.part_grad[v - nt];
            ts__json_kv_str(j, "pass", "partition");
            ts__json_kv_str(j, "gradient", o->grads.name[gi]);
            ts__json_kv_u64(j, "pieces", 1u << o->best[v]);
        }
        ts__json_obj_end(j);
    }
    ts__json_arr_end(j);
    ts__json_key(j, "changes");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < o->n_changes; i++) ts__json_str(j, o->changes[i] + strspn(o->changes[i], " "));
    ts__json_arr_end(j);
    ts__json_key(j, "bucket_units");
    ts__json_arr_begin(j);
    for (uint32_t b = 0; b < n_b; b++) ts__json_u64(j, o->units[b]);
    ts__json_arr_end(j);
    ts__json_key(j, "gradient_pieces");
    ts__json_arr_begin(j);
    for (uint32_t i = 0; i < o->grads.n; i++) ts__json_u64(j, o->pieces[i]);
    ts__json_arr_end(j);
    ts__json_kv_u64(j, "op_fusion_pairs", o->sum.n_fused);
    ts__json_key(j, "ddp");
    if (!o->grads.n) { ts__json_null(j); return; }   /* op fusion alone */
    ts__json_obj_begin(j);
    ts__json_key(j, "bucket_cap_mb");
    if (o->sum.ddp_bucket_cap_mb >= 0) ts__json_double(j, o->sum.ddp_bucket_cap_mb, 6);
    else ts__json_null(j);
    ts__json_key(j, "groups");
    ts__json_arr_begin(j);
    for (uint32_t b = 0, i = 0; b < n_b; b++) {
        if (i < o->grads.n && bucket_of[i] != b) continue;   /* a bucket of a later piece only */
        ts__json_arr_begin(j);
        for (; i < o->grads.n && bucket_of[i] == b; i++) ts__json_str(j, o->grads.name[i]);
        ts__json_arr_end(j);
    }
    ts__json_arr_end(j);
    ts__json_obj_end(j);
}

static void write_json_plan(ts_buf *b, ts_optimize *o, const uint32_t *bucket_of, uint32_t n_b)
{
    ts_json j;
    ts__json_init(&j, b);
    ts__json_obj_begin(&j);
    json_plan_head(&j, o);
    json_edits(&j, o, bucket_of, n_b);
    json_search(&j, o);
    ts__json_obj_end(&j);
    ts__buf_puts(b, "\n");
}

static void write_groups_txt(ts_buf *b, const ts_optimize *o, const uint32_t *bucket_of)
{
    for (uint32_t i = 0; i < o->grads.n; i++) {
        ts__buf_puts(b, o->grads.name[i]);
        ts__buf_puts(b, i + 1 < o->grads.n && bucket_of[i + 1] == bucket_of[i] ? "+" : "\n");
    }
}

static void write_env(ts_buf *b, const ts_optimize *o, const uint32_t *bucket_of)
{
    int64_t biggest = 0, fill = 0;
    uint32_t n_b = 0;
    bool cut = false;
    for (uint32_t i = 0; i < o->grads.n; i++) {
        fill += o->grads.bytes[i];
        cut |= o->pieces[i] > 1;
        if (i + 1 == o->grads.n || bucket_of[i + 1] != bucket_of[i]) {
            if (fill > biggest) biggest = fill;
            fill = 0;
            n_b++;
        }
    }
    int64_t t = cut ? -1 : ts__tf_horovod_threshold(&o->grads, o->best);
    ts__buf_puts(b, "# Horovod (written by trainscope optimize). Each cycle Horovod fuses the gradients it finds\n"
                    "# ready, in order, while their sum stays <= HOROVOD_FUSION_THRESHOLD (FuseResponses).\n");
    if (t > 0)
        ts__buf_printf(b, "# With a whole backward pass found in one cycle this threshold gives exactly the plan's\n"
                          "# %u buckets; Horovod rounds it up to a multiple of 512 x local_size bytes, which keeps\n"
                          "# it for local_size dividing %lld.\n", n_b, (long long)(t / 512));
    else
        ts__buf_printf(b, "# No threshold gives the plan's %u buckets (%s);\n# this is its largest bucket.\n", n_b,
                       cut ? "a gradient is cut in pieces" : "a bucket and the gradient after it fit under a larger one");
    ts__buf_printf(b, "HOROVOD_FUSION_THRESHOLD=%lld\n", (long long)(t > 0 ? t : biggest));
    ts__buf_puts(b, "# A short cycle starts each bucket's all-reduce soon after its last gradient is ready, as\n"
                    "# the plan was priced; a bucket whose gradients straddle a cycle's end is split there.\n"
                    "HOROVOD_CYCLE_TIME=1\n");
}

static const char HOOK_BODY[] =
    "\n"
    "import torch\n"
    "import torch.distributed as dist\n"
    "\n"
    "\n"
    "class _Plan:\n"
    "    def __init__(self, model, process_group):\n"
    "        names = {id(p): n for n, p in model.module.named_parameters()}\n"
    "        self.names = names\n"
    "        self.pg = process_group\n"
    "        self.world = dist.get_world_size(process_group)\n"
    "        self.group_of = {n: g for g, grp in enumerate(GROUPS) for n in grp}\n"
    "        missing = [n for n in names.values() if n not in self.group_of]\n"
    "        if missing:\n"
    "            raise ValueError('ddp_hook: the plan does not name ' + ', '.join(missing[:5]))\n"
    "        self.pending = {}   # group -> {name: view of a DDP bucket}\n"
    "        self.waiters = {}   # group -> [(bucket future, groups left, buffer)]\n"
    "\n"
    "    def group_done(self, g):\n"
    "        for w in self.waiters.pop(g, []):\n"
    "            w[1].discard(g)\n"
    "            if not w[1]:\n"
    "                w[0].set_result(w[2])\n"
    "\n"
    "    def launch(self, g):\n"
    "        members = self.pending.pop(g)\n"
    "        flat = torch.cat([members[n].reshape(-1) for n in GROUPS[g]]).div_(self.world)\n"
    "        fut = dist.all_reduce(flat, group=self.pg, async_op=True).get_future()\n"
    "\n"
    "        def done(f):\n"
    "            out, off = f.value()[0], 0\n"
    "            for n in GROUPS[g]:\n"
    "                v = members[n]\n"
    "                v.copy_(out[off:off + v.numel()].view_as(v))\n"
    "                off += v.numel()\n"
    "            self.group_done(g)\n"
    "        fut.then(done)\n"
    "\n"
    "\n"
    "def _hook(plan, bucket):\n"
    "    buf, off, groups = bucket.buffer(), 0, set()\n"
    "    for p in bucket.parameters():\n"
    "        n = plan.names[id(p)]\n"
    "        g = plan.group_of[n]\n"
    "        plan.pending.setdefault(g, {})[n] = buf[off:off + p.numel()]\n"
    "        off += p.numel()\n"
    "        groups.add(g)\n"
    "    fut = torch.futures.Future()\n"
    "    w = (fut, set(groups), buf)\n"
    "    for g in groups:\n"
    "        plan.waiters.setdefault(g, []).append(w)\n"
    "    for g in sorted(groups):\n"
    "        if len(plan.pending.get(g, ())) == len(GROUPS[g]):\n"
    "            plan.launch(g)\n"
    "    return fut\n"
    "\n"
    "\n"
    "def register(model, process_group=None):\n"
    "    \"\"\"Register the plan's grouping on a DistributedDataParallel model.\"\"\"\n"
    "    model.register_comm_hook(_Plan(model, process_group), _hook)\n";

static void write_hook(ts_buf *b, const ts_optimize *o, const uint32_t *bucket_of)
{
    ts__buf_puts(b, "# ddp_hook.py - written by `trainscope optimize`: all-reduce DDP's gradients in the\n"
                    "# plan's buckets, which no bucket_cap_mb gives (DDP rebuilds its buckets from the order\n"
                    "# gradients became ready, so parameter order cannot either). Usage:\n"
                    "#     model = DistributedDataParallel(module)\n"
                    "#     import ddp_hook; ddp_hook.register(model)\n"
                    "# Each plan group is all-reduced once its last gradient is in, whichever DDP bucket\n"
                    "# brought it; a DDP bucket is done once every group it touches is.\n"
                    "GROUPS = [\n");
    for (uint32_t i = 0; i < o->grads.n; i++) {
        bool first = i == 0 || bucket_of[i - 1] != bucket_of[i], last = i + 1 == o->grads.n || bucket_of[i + 1] != bucket_of[i];
        if (first) ts__buf_puts(b, "    [");
        ts__buf_json_str(b, o->grads.name[i], strlen(o->grads.name[i]));
        ts__buf_puts(b, last ? "],\n" : ", ");
    }
    ts__buf_puts(b, "]\n");
    ts__buf_puts(b, HOOK_BODY);
}

enum { N_PLAN_FILES = 5 };
static const char *const PLAN_FILES[N_PLAN_FILES] = {"plan.json", "tensor_groups.txt", "horovod.env", "ddp_hook.py",
                                                     "cluster_mapping.txt"};

/* Whether file i belongs to this plan. */
static bool plan_has(const ts_optimize *o, int i)
{
    switch (i) {
    case 0: return true;
    case 1: case 2: return o->grads.n > 0;
    case 3: return o->grads.n > 0 && o->sum.ddp_bucket_cap_mb < 0 && !o->same_buckets;
    default: return (o->passes & TS_PASS_OP_FUSION) != 0;
    }
}

int ts_optimize_write_plan(const ts_optimize *co, const char *dir, ts_error *err)
{
    ts__error_clear(err);
    ts_optimize *o = (ts_optimize *)co;   /* scratch arrays only */
    bool made;
    if (ts__out_dir(dir, false, &made, err)) return TS_EIO;
    uint32_t *bucket_of = ts__malloc((size_t)o->grads.n * sizeof *bucket_of + 1);
    if (!bucket_of) return ts__error(err, TS_ENOMEM, "optimize: out of memory");
    uint32_t n_b = bucket_of_grads(o, bucket_of);
    const char *names[N_PLAN_FILES];
    int rc = TS_OK, written = 0;
    for (int i = 0; i < N_PLAN_FILES && !rc; i++) {
        if (!plan_has(o, i)) continue;
        ts_buf b;
        ts__buf_init(&b);
        if (i == 0) write_json_plan(&b, o, bucket_of, n_b);
        else if (i == 1) write_groups_txt(&b, o, bucket_of);
        else if (i == 2) write_env(&b, o, bucket_of);
        else if (i == 3) write_hook(&b, o, bucket_of);
        else ts__opf_write_mapping(&o->opf, o->g, o->best + ts__opt_opf_first(o), &b);
        rc = b.oom ? ts__error(err, TS_ENOMEM, "optimize: out of memory") : ts__write_tmp(dir, PLAN_FILES[i], &b, err);
        ts__buf_free(&b);
        if (rc == TS_OK) names[written++] = PLAN_FILES[i];
    }
    rc = ts__commit_tmp(dir, names, written, rc, err);   /* all written, or none */
    if (rc && made) rmdir(dir);
    for (int i = 0; rc == TS_OK && i < N_PLAN_FILES; i++) {   /* a stale file of an earlier plan would mislead */
        if (plan_has(o, i)) continue;
        char stale[4096];
        snprintf(stale, sizeof stale, "%s/%s", dir, PLAN_FILES[i]);
        remove(stale);
    }
    ts__free(bucket_of, (size_t)o->grads.n * sizeof *bucket_of + 1);
    return rc;
}
