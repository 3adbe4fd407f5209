/* estimate.c — see estimate.h. */
#include "estimate/estimate.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <unistd.h>

#include "estimate/features.h"
#include "estimate/gpumemnet.h"
#include "estimate/horus.h"
#include "util/datadir.h"

void estimator_init(estimator *e)
{
    memset(e, 0, sizeof *e);
    e->optimizer = OPT_ADAM;
    e->coeffs = carma_default_coeffs();
}

void estimator_free(estimator *e)
{
    for (int i = 0; i < 2; i++)
        if (e->loaded[i])
            mlp_net_free(&e->nets[i]);
    e->loaded[0] = e->loaded[1] = false;
}

bool estimator_computes(mem_source src)
{
    return src == MEM_HORUS || src == MEM_GPUMEMNET || src == MEM_CARMA;
}

static int load_net(estimator *e, model_family fam, carma_err *err)
{
    if (e->loaded[fam])
        return 0;
    int rc = e->weights_override[fam]
                 ? mlp_net_load(e->weights_override[fam], gpumemnet_ninputs(fam), &e->nets[fam],
                                err)
                 : gpumemnet_load(fam, &e->nets[fam], err);
    if (rc)
        return carma_err_prefix(err, "gpumemnet");
    e->loaded[fam] = true;
    return 0;
}

/* The largest figure an estimate may give: 2^53 MiB (8 ZiB), where doubles stop being exact
 * integers. Parsed summaries stay far below it; a figure beyond it, negative or not a number
 * is an error, never an out-of-range conversion to an unsigned integer. */
#define EST_MAX_MIB 9007199254740992.0

int estimator_run(estimator *e, mem_source src, const model_summary *s, int batch, int seq_len,
                  est_result *out, carma_err *err)
{
    memset(out, 0, sizeof *out);
    out->src = src;
    out->cls = -1;
    if (batch < 1)
        return carma_err_set(err, "batch size must be at least 1 (got %d)", batch);
    if (!estimator_computes(src))
        return carma_err_set(err, "estimator '%s' cannot be computed from a model summary",
                             mem_source_estimator_name(src));
    gmn_features f;
    features_from_summary(s, seq_len, &f);
    if (src == MEM_HORUS) {
        out->raw_mib = horus_mib(&f, batch);
    } else if (src == MEM_GPUMEMNET) {
        if (load_net(e, f.family, err))
            return -1;
        out->cls = gpumemnet_class(&e->nets[f.family], &f, batch);
        out->raw_mib = (double)gpumemnet_class_mib(out->cls);
    } else {
        carma_workload w;
        if (carma_workload_from_summary(s, seq_len, &w, err))
            return -1;
        out->raw_mib = carma_estimate_mib(e->coeffs, &w, batch, e->optimizer);
        carma_workload_free(&w);
    }
    double mib = ceil(out->raw_mib);
    if (!(mib >= 0 && mib <= EST_MAX_MIB))
        return carma_err_set(err, "the %s estimate (%g MiB) is out of range: the model summary's "
                                  "sizes are not plausible", mem_source_estimator_name(src),
                             out->raw_mib);
    out->mib = (uint64_t)mib;
    return 0;
}

int estimate_seq_len_from_name(const char *path)
{
    const char *p = strstr(path, "sl:");
    if (!p)
        return 0;
    /* strtol, not atoi: a name like "sl:99999999999" must not overflow an int */
    char *end;
    long v = strtol(p + 3, &end, 10);
    return end != p + 3 && v > 0 && v <= INT_MAX ? (int)v : 0;
}

int estimate_resolve_summary(const char *path, char *buf, size_t cap, carma_err *err)
{
    if (!path || !*path)
        return carma_err_set(err, "no model summary given");
    if (access(path, R_OK) == 0 || path[0] == '/') {
        if ((size_t)snprintf(buf, cap, "%s", path) >= cap)
            return carma_err_set(err, "path too long: %s", path);
        return 0;
    }
    const char *base = strrchr(path, '/');
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "gpumemnet/summaries/%s", base ? base + 1 : path);
    if (carma_data_path(rel, buf, cap, err))
        return -1;
    if (access(buf, R_OK) == 0)
        return 0;
    /* .rad files spell some names with other capitals (efficientNet_32.model) */
    char dir[PATH_MAX];
    if (carma_data_path("gpumemnet/summaries", dir, sizeof dir, err))
        return -1;
    DIR *d = opendir(dir);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
        if (!strcasecmp(ent->d_name, base ? base + 1 : path)) {
            snprintf(buf, cap, "%s/%s", dir, ent->d_name);
            closedir(d);
            return 0;
        }
    }
    if (d)
        closedir(d);
    return carma_err_set(err, "model summary '%s' not found (nor %s)", path, buf);
}

static int estimate_path(estimator *e, mem_source src, const char *summary_path, int batch,
                         est_result *r, carma_err *err)
{
    if (batch < 1)
        return carma_err_set(err, "batch size must be at least 1 (got %d)", batch);
    char path[PATH_MAX];
    if (estimate_resolve_summary(summary_path, path, sizeof path, err))
        return -1;
    model_summary s;
    if (summary_load(path, &s, err))
        return -1;
    int rc = estimator_run(e, src, &s, batch, estimate_seq_len_from_name(path), r, err);
    summary_free(&s);
    return rc;
}

int estimate_task_mib(mem_source src, const char *summary_path, int batch, uint64_t *mib, int *cls,
                      carma_err *err)
{
    estimator e;
    estimator_init(&e);
    est_result r;
    int rc = estimate_path(&e, src, summary_path, batch, &r, err);
    estimator_free(&e);
    if (rc)
        return -1;
    *mib = r.mib;
    if (cls)
        *cls = r.cls;
    return 0;
}

int estimate_fill_mem(estimator *e, mem_source src, const char *summary_path, int batch,
                      mem_figures *m, carma_err *err)
{
    est_result r;
    if (estimate_path(e, src, summary_path, batch, &r, err))
        return -1;
    mem_figures_set(m, src, r.mib);
    return 0;
}

int estimate_fill_task(estimator *e, mem_source src, task_spec *t, carma_err *err)
{
    if (estimate_fill_mem(e, src, t->summary_path, t->batch_size, &t->mem, err))
        return carma_err_prefix(err, "task %s", t->name ? t->name : "?");
    return 0;
}

int estimate_fill_sched_task(estimator *e, mem_source src, const char *summary_path, int batch,
                             sched_task *t, carma_err *err)
{
    return estimate_fill_mem(e, src, summary_path, batch, &t->mem, err);
}
