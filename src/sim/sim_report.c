/* sim_report.c — JSON summary and CSV outputs of a simulation run. */
#include "sim/sim_report.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/csv.h"
#include "util/safefs.h"

static json_t *number_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *sim_summary_json(const sim_summary *s, const char *policy, const char *estimator)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
    bad |= json_object_set_new(o, "policy", json_string(policy));
    bad |= json_object_set_new(o, "estimator", json_string(estimator));
    bad |= json_object_set_new(o, "tasks", json_integer((json_int_t)s->tasks));
    bad |= json_object_set_new(o, "completed", json_integer((json_int_t)s->completed));
    bad |= json_object_set_new(o, "makespan_s", number_or_null(s->makespan_s));
    bad |= json_object_set_new(o, "mean_jct_s", number_or_null(s->mean_jct_s));
    bad |= json_object_set_new(o, "p95_jct_s", number_or_null(s->p95_jct_s));
    bad |= json_object_set_new(o, "mean_wait_s", number_or_null(s->mean_wait_s));
    bad |= json_object_set_new(o, "gpu_util_mean", number_or_null(s->gpu_util_mean));
    bad |= json_object_set_new(o, "energy_j", number_or_null(s->energy_j));
    bad |= json_object_set_new(o, "oom_crashes", json_integer(s->oom_crashes));
    bad |= json_object_set_new(o, "collocated_placements", json_integer(s->collocated_placements));
    bad |= json_object_set_new(o, "median_jct_s", number_or_null(s->median_jct_s));
    bad |= json_object_set_new(o, "failed", json_integer((json_int_t)s->failed));
    bad |= json_object_set_new(o, "placements", json_integer(s->placements));
    bad |= json_object_set_new(o, "events", json_integer((json_int_t)s->events));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static void put_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.3f", x);
}

/* One row per trace entry, in the trace's order: its seq and task file name as the trace gives
 * them (jobs[i] and r->jobs[i] are entry i). */
static void write_tasks(FILE *f, const sim_result *r, const trace *tr, const sim_job_spec *jobs)
{
    fputs("seq,task_file,gpus_requested,submit_s,first_start_s,end_s,jct_s,wait_s,busy_s,"
          "attempts,oom_crashes,completed,collocated,gpus,runtime_est_s\n", f);
    for (size_t i = 0; i < r->njobs; i++) {
        const sim_job_result *j = &r->jobs[i];
        fprintf(f, "%d,", tr->entries[i].seq);
        csv_write_field(f, tr->entries[i].task_file);
        fprintf(f, ",%d,", jobs[i].ngpus);
        put_num(f, j->submit_s);
        fputc(',', f);
        put_num(f, j->first_start_s);
        fputc(',', f);
        put_num(f, j->end_s);
        fputc(',', f);
        put_num(f, j->completed ? j->end_s - j->submit_s : NAN);
        fputc(',', f);
        put_num(f, j->wait_s);
        fputc(',', f);
        put_num(f, j->busy_s);
        fprintf(f, ",%d,%d,%d,%d,", j->attempts, j->oom_crashes, j->completed, j->collocated);
        for (int k = 0; k < j->ngpus; k++)
            fprintf(f, "%s%d", k ? ";" : "", j->gpus[k]);
        fputc(',', f); /* the run time the policy knew at its arrival (sim_history); empty none */
        put_num(f, j->runtime_est_s);
        fputc('\n', f);
    }
}

static void write_timeline(FILE *f, const sim_result *r)
{
    fputs("t_s,gpu,tasks,used_mib,smact,power_w\n", f);
    for (size_t i = 0; i < r->ntimeline; i++) {
        const sim_timeline_row *t = &r->timeline[i];
        fprintf(f, "%.3f,%d,%d,%llu,%.4f,%.1f\n", t->t, t->gpu, t->ntasks,
                (unsigned long long)t->used_mib, t->smact, t->power_w);
    }
}

static const char *const out_names[] = {"tasks.csv", "gpu_timeline.csv"};
#define OUT_NAMES (sizeof out_names / sizeof *out_names)

int sim_outputs_check(const char *dir, carma_err *err)
{
    safefs_stage st;
    if (safefs_stage_open(&st, "--out", dir, err))
        return -1;
    int rc = 0;
    struct stat sb; /* the commit cannot replace a directory: say so now, not after the run */
    for (size_t i = 0; rc == 0 && i < OUT_NAMES; i++)
        if (fstatat(st.dirfd, out_names[i], &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISDIR(sb.st_mode))
            rc = carma_err_set(err, "--out %s: %s/%s: %s", dir, dir, out_names[i],
                               strerror(EISDIR));
    safefs_stage_close(&st);
    return rc;
}

/* Writes one staged file, naming what failed (a full disk, a file size limit). */
static int write_output(safefs_stage *st, size_t i, const sim_result *r, const trace *tr,
                        const sim_job_spec *jobs, carma_err *err)
{
    FILE *f = safefs_stage_fopen(st, out_names[i], err);
    if (!f)
        return -1;
    errno = 0;
    if (i == 0)
        write_tasks(f, r, tr, jobs);
    else
        write_timeline(f, r);
    /* flushed and on disk before the commit makes it the file of record */
    int e = ferror(f) ? (errno ? errno : EIO) : 0;
    if (!e && (fflush(f) || fsync(fileno(f))))
        e = errno ? errno : EIO;
    if (fclose(f) && !e)
        e = errno ? errno : EIO;
    if (e)
        return carma_err_set(err, "%s/%s: write failed: %s", st->path, out_names[i],
                             strerror(e));
    return 0;
}

int sim_write_outputs(const char *dir, const sim_result *r, const trace *tr,
                      const sim_job_spec *jobs, carma_err *err)
{
    safefs_stage st;
    if (safefs_stage_open(&st, "--out", dir, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < OUT_NAMES && rc == 0; i++)
        rc = write_output(&st, i, r, tr, jobs, err);
    /* Both complete: into place together; otherwise neither (nor an empty DIR we created). */
    if (rc == 0)
        rc = safefs_stage_commit(&st, out_names, OUT_NAMES, err);
    safefs_stage_close(&st);
    return rc;
}
