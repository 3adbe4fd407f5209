/* task.c — life cycle of a task_spec (init, deep copy, free) and the checks every task passes. */
#include "task/task.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

void task_spec_init(task_spec *t)
{
    memset(t, 0, sizeof *t);
    t->max_retries = -1;
    t->sim.solo_runtime_s = 0;
    t->sim.smact = NAN;
    t->sim.smocc = NAN;
    t->sim.drama = NAN;
}

void task_spec_free(task_spec *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->command);
    free(t->workdir);
    for (size_t i = 0; i < t->nenv; i++)
        free(t->env[i]);
    free(t->env);
    free(t->summary_path);
    free(t->source_path);
    free(t->conda_env);
    free(t->dataset);
    free(t->collocation_mode);
    task_spec_init(t);
}

/* Copies one optional string; false on allocation failure. */
static bool copy_str(char **dst, const char *src)
{
    *dst = str_dup(src);
    return !src || *dst;
}

int task_spec_copy(task_spec *dst, const task_spec *src, carma_err *err)
{
    task_spec t = *src; /* scalars; every pointer is replaced below */
    t.name = t.command = t.workdir = t.summary_path = t.source_path = NULL;
    t.conda_env = t.dataset = t.collocation_mode = NULL;
    t.env = NULL;
    t.nenv = 0;
    bool ok = copy_str(&t.name, src->name) && copy_str(&t.command, src->command) &&
              copy_str(&t.workdir, src->workdir) && copy_str(&t.summary_path, src->summary_path) &&
              copy_str(&t.source_path, src->source_path) &&
              copy_str(&t.conda_env, src->conda_env) && copy_str(&t.dataset, src->dataset) &&
              copy_str(&t.collocation_mode, src->collocation_mode);
    for (size_t i = 0; ok && i < src->nenv; i++)
        ok = task_spec_add_env(&t, src->env[i], err) == 0;
    if (!ok) {
        task_spec_free(&t);
        return carma_err_set(err, "out of memory copying a task");
    }
    *dst = t;
    return 0;
}

int task_spec_add_env(task_spec *t, const char *kv, carma_err *err)
{
    const char *eq = kv ? strchr(kv, '=') : NULL;
    if (!eq || eq == kv)
        return carma_err_set(err, "environment entry '%s' is not KEY=VALUE", kv ? kv : "(null)");
    /* The array doubles when the count reaches a power of two (every entry is added here, so
     * that is its capacity): one realloc per entry copied the array each time, quadratic in a
     * task file's env of 80000 keys. */
    size_t n = t->nenv;
    if (n == 0 || (n & (n - 1)) == 0) { /* 0, 1, 2, 4 ...: full */
        char **nenv = realloc(t->env, (n ? 2 * n : 1) * sizeof *nenv);
        if (!nenv)
            return carma_err_set(err, "out of memory");
        t->env = nenv;
    }
    if (!(t->env[t->nenv] = str_dup(kv)))
        return carma_err_set(err, "out of memory");
    t->nenv++;
    return 0;
}

void task_spec_to_sched(const task_spec *spec, sched_task *out)
{
    sched_task_init(out); /* profile figures unknown: a task file gives none */
    out->id = spec->id;
    out->ngpus = spec->ngpus;
    out->mem = spec->mem;
    out->max_retries = spec->max_retries;
}

int task_spec_validate(const task_spec *t, const char *what, carma_err *err)
{
    if (!what)
        what = "task";
    if (!t->command || !*t->command)
        return carma_err_set(err, "%s: no command to run", what);
    if (t->ngpus < 1 || t->ngpus > SCHED_MAX_TASK_GPUS)
        return carma_err_set(err, "%s: GPU count %d is outside 1..%d", what, t->ngpus,
                             SCHED_MAX_TASK_GPUS);
    if (t->batch_size < 0)
        return carma_err_set(err, "%s: negative batch size %d", what, t->batch_size);
    if (t->sim.solo_runtime_s < 0 || isnan(t->sim.solo_runtime_s))
        return carma_err_set(err, "%s: solo runtime must be >= 0 seconds", what);
    const double act[] = {t->sim.smact, t->sim.smocc, t->sim.drama};
    const char *act_name[] = {"smact", "smocc", "drama"};
    for (int i = 0; i < 3; i++)
        if (!isnan(act[i]) && (act[i] < 0 || act[i] > 1))
            return carma_err_set(err, "%s: %s %g is not a fraction 0..1", what, act_name[i],
                                 act[i]);
    for (size_t i = 0; i < t->nenv; i++)
        if (!strchr(t->env[i], '=') || t->env[i][0] == '=')
            return carma_err_set(err, "%s: environment entry '%s' is not KEY=VALUE", what,
                                 t->env[i]);
    return 0;
}
