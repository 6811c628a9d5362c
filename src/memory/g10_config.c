/* g10_config.c - reads the G10 tool's own config file (the `key value` lines
 * its main() parses, e.g. configs/ResNet50/64-profile_analysis.config) so that
 * `trainscope memory g10.config` runs what `tensor_liveness_analysis` would.
 *
 * Not a general config format. Like G10: each line is split on whitespace, the
 * first token is the key and the second its value; "#" alone or an empty line
 * is skipped; a key G10 does not know is an error (G10 aborts on it). Keys this
 * analysis needs are read; G10's simulation and code-generation keys are
 * accepted and ignored. Paths: G10 opens them relative to the folder it runs
 * in (its src/); here a relative input path is tried as given (from the
 * current folder), then from the config file's folder, then by its file name
 * in the config file's folder (so a config copied beside its dumps works).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "memory/memgraph.h"

/* Keys G10's parser accepts that this analysis does not use. */
static const char *const IGNORED[] = {
    "is_pytorch", "is_profiling", "is_simulation", "output_override", "is_transformer", "batch_size",
    "input_H", "input_W", "num_threads", "borden", "is_resnet", "is_inception", "is_senet", "seq_len",
    "num_iteration", "nn_model_input_file", "nn_model_input_weight", "workspace_size_file",
    "input_pf_kernel_time_file", "pf_kernel_time_file", "stat_output_file", "is_UVM", "use_prefetch",
    "eviction_policy", "migration_policy", "prefetch_degree", "num_candidate", "system_latency_us",
    "CPU_PCIe_bandwidth_GBps", "CPU_memory_line_GB", "GPU_PCIe_bandwidth_GBps", "GPU_malloc_uspB",
    "GPU_free_uspB", "SSD_PCIe_bandwidth_GBps", "SSD_read_latency_us", "SSD_write_latency_us",
    "SSD_latency_us", "PCIe_latency_us", "PCIe_batch_size_page", "delta_parameter", "is_individual",
    "is_input_pf_only", "is_compile", "is_run", "compile_max_thread_num", "is_cudnn",
    "kernel_time_std_dev", "ran_seed", "kernel_speedup", "is_cpu_training"};

static bool readable(const char *p) { return access(p, R_OK) == 0; }

/* Find an input file named by `value` on line `line` of the config. */
static int resolve(const char *cfg, unsigned line, const char *key, const char *value, char *out,
                   size_t cap, ts_error *err)
{
    const char *slash = strrchr(cfg, '/'), *base = strrchr(value, '/');
    int dir_n = slash ? (int)(slash - cfg) : 1;
    const char *dir = slash ? cfg : ".";
    if (readable(value)) {
        if (snprintf(out, cap, "%s", value) < (int)cap) return TS_OK;
    } else if (value[0] == '/') {
        ;
    } else if (snprintf(out, cap, "%.*s/%s", dir_n, dir, value) < (int)cap && readable(out)) {
        return TS_OK;
    } else if (snprintf(out, cap, "%.*s/%s", dir_n, dir, base ? base + 1 : value) < (int)cap && readable(out)) {
        return TS_OK;
    }
    return ts__error(err, TS_ENOENT, "%s:%u: %s '%s': no such file (tried it from here, from the config's "
                     "folder and by its name beside the config)", cfg, line, key, value);
}

static int number(const char *cfg, unsigned line, const char *key, const char *value, double *out,
                  ts_error *err)
{
    char *end;
    double v = strtod(value, &end);
    if (end == value || *end || !(v > 0) || v > 1e6)
        return ts__error(err, TS_EPARSE, "%s:%u: %s needs a positive number, not '%s'", cfg, line, key, value);
    *out = v;
    return TS_OK;
}

static bool ignored(const char *key)
{
    for (size_t i = 0; i < sizeof IGNORED / sizeof IGNORED[0]; i++)
        if (!strcmp(IGNORED[i], key)) return true;
    return false;
}

/* One "key value" line. */
static int config_line(const char *cfg, unsigned line, const char *key, const char *value,
                       ts_mem_g10_config *c, ts_error *err)
{
    if (!strcmp(key, "output_folder")) {
        if (snprintf(c->output_folder, sizeof c->output_folder, "%s", value) >= (int)sizeof c->output_folder)
            return ts__error(err, TS_ERANGE, "%s:%u: output_folder is too long", cfg, line);
        return TS_OK;
    }
    if (!strcmp(key, "nn_model_input_forward"))
        return resolve(cfg, line, key, value, c->forward, sizeof c->forward, err);
    if (!strcmp(key, "nn_model_input_backward"))
        return resolve(cfg, line, key, value, c->backward, sizeof c->backward, err);
    if (!strcmp(key, "orig_kernel_time_file"))
        return resolve(cfg, line, key, value, c->times, sizeof c->times, err);
    if (!strcmp(key, "GPU_frequency_GHz")) return number(cfg, line, key, value, &c->gpu_ghz, err);
    if (!strcmp(key, "GPU_memory_size_GB")) return number(cfg, line, key, value, &c->gpu_memory_gb, err);
    if (ignored(key)) return TS_OK;
    return ts__error(err, TS_EFORMAT, "%s:%u: '%s' is not a key G10's config parser knows", cfg, line, key);
}

typedef struct cfg_ctx { const char *path; ts_mem_g10_config *out; } cfg_ctx;

static int config_text_line(void *ctx, unsigned line, char *p, ts_error *err)
{
    cfg_ctx *c = ctx;
    char key[128], value[2048];
    key[0] = value[0] = 0;
    if (strlen(p) >= sizeof value) return ts__error(err, TS_ERANGE, "%s:%u: line too long", c->path, line);
    if (sscanf(p, "%127s %2047s", key, value) < 1 || !strcmp(key, "#")) return TS_OK;
    if (!value[0]) return ts__error(err, TS_EPARSE, "%s:%u: '%s' has no value", c->path, line, key);
    return config_line(c->path, line, key, value, c->out, err);
}

int ts_mem_g10_config_load(const char *path, ts_mem_g10_config *out, ts_error *err)
{
    ts__error_clear(err);
    memset(out, 0, sizeof *out);
    cfg_ctx c = {path, out};
    int rc = ts__for_lines(path, "a G10 config", false, config_text_line, &c, err);
    if (!rc && (!out->forward[0] || !out->backward[0]))
        rc = ts__error(err, TS_EFORMAT, "%s: needs nn_model_input_forward and nn_model_input_backward "
                       "(the AOTAutograd dumps G10's PyTorch frontend reads)", path);
    return rc;
}
