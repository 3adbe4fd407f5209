/* sim_plot_gpus.c — `carma simulate --plot DIR`, one run: sim_plot_add_run keeps the run's
 * summary and prepares gpus-POLICY.dat (each GPU's SM activity, used memory, tasks and power over
 * the hours since the first submission; mean and max across GPUs above 16 GPUs) and the gnuplot
 * script gpus-POLICY.gp that draws gpus-POLICY.png from it. */
#include "sim/sim_plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_plot_int.h"

#define PLOT_MAX_GPU_LINES 16 /* above this many GPUs: mean and max across GPUs */
#define AGGREGATE_HEIGHT 760 /* pixels of the three-panel picture above 16 GPUs */

static double hours(double t, double t0)
{
    double h = (t - t0) / 3600.0;
    return h > 0 ? h : 0;
}

/* The first title line: the policy, the trace and the server. */
static void gp_run_title(FILE *f, const sim_plot *p, const char *policy)
{
    char buf[512];
    if (strncmp(policy, "est-", 4) == 0)
        snprintf(buf, sizeof buf, "policy %s (estimator %s), trace %s on %s", policy,
                 p->estimator, p->trace, p->server);
    else
        snprintf(buf, sizeof buf, "policy %s, trace %s on %s", policy, p->trace, p->server);
    gp_str(f, buf);
}

typedef struct gpu_state {
    double smact, used_gib, power_w;
    int ntasks;
} gpu_state;

static void put_gpu_row(FILE *f, double t_h, const gpu_state *s)
{
    fprintf(f, "%.5f %.2f %.3f %d %.1f\n", t_h, 100 * s->smact, s->used_gib, s->ntasks,
            s->power_w);
}

/* One block per GPU (gnuplot `index G`), each a step series from 0 to t_end_h. Rows of one
 * instant collapse into the last; every GPU starts idle at the first submission. */
static void write_gpu_blocks(FILE *f, const sim_plot *p, const sim_result *r, double t0,
                             double t_end_h, double *peak_gib)
{
    fputs("# One block per GPU (gnuplot: index G, from 0); a row's values hold until the next.\n"
          "# hours_since_first_submit sm_activity_pct used_gib tasks power_w\n",
          f);
    for (int g = 0; g < p->ngpus; g++) {
        fprintf(f, "%s# GPU %d\n", g ? "\n\n" : "", g);
        gpu_state s = {0, 0, p->idle_w, 0};
        double last = 0;
        for (size_t i = 0; i < r->ntimeline; i++) {
            const sim_timeline_row *row = &r->timeline[i];
            if (row->gpu != g)
                continue;
            double t = hours(row->t, t0);
            if (t > last) {
                put_gpu_row(f, last, &s);
                last = t;
            }
            s = (gpu_state){row->smact, (double)row->used_mib / 1024, row->power_w, row->ntasks};
            if (s.used_gib > *peak_gib)
                *peak_gib = s.used_gib;
        }
        put_gpu_row(f, last, &s);
        if (t_end_h > last)
            put_gpu_row(f, t_end_h, &s);
    }
}

typedef struct agg_state {
    gpu_state *gpu;
    double sm_sum, mem_sum, sm_max, mem_max;
    bool sm_dirty, mem_dirty; /* the GPU at the max went down: recompute before use */
    int busy;
} agg_state;

static void put_agg_row(FILE *f, double t_h, agg_state *a, int ngpus)
{
    if (a->sm_dirty || a->mem_dirty) {
        a->sm_max = a->mem_max = 0;
        for (int g = 0; g < ngpus; g++) {
            a->sm_max = fmax(a->sm_max, a->gpu[g].smact);
            a->mem_max = fmax(a->mem_max, a->gpu[g].used_gib);
        }
        a->sm_dirty = a->mem_dirty = false;
    }
    fprintf(f, "%.5f %.2f %.2f %.3f %.3f %d\n", t_h, fmax(0, 100 * a->sm_sum / ngpus),
            100 * a->sm_max, fmax(0, a->mem_sum / ngpus), a->mem_max, a->busy);
}

/* Mean and max across GPUs at every instant some GPU changed. */
static int write_gpu_aggregate(FILE *f, const sim_plot *p, const sim_result *r, double t0,
                               double t_end_h, double *peak_gib, carma_err *err)
{
    agg_state a = {0};
    a.gpu = calloc((size_t)p->ngpus, sizeof *a.gpu);
    if (!a.gpu)
        return carma_err_set(err, "--plot: out of memory");
    fprintf(f, "# Across the %d GPUs; a row's values hold until the next.\n"
               "# hours_since_first_submit sm_activity_mean_pct sm_activity_max_pct "
               "used_mean_gib used_max_gib gpus_with_tasks\n",
            p->ngpus);
    double last = 0;
    for (size_t i = 0; i < r->ntimeline; i++) {
        const sim_timeline_row *row = &r->timeline[i];
        if (row->gpu < 0 || row->gpu >= p->ngpus)
            continue;
        double t = hours(row->t, t0);
        if (t > last) {
            put_agg_row(f, last, &a, p->ngpus);
            last = t;
        }
        gpu_state *g = &a.gpu[row->gpu];
        gpu_state n = {row->smact, (double)row->used_mib / 1024, row->power_w, row->ntasks};
        a.sm_sum += n.smact - g->smact;
        a.mem_sum += n.used_gib - g->used_gib;
        a.busy += (n.ntasks > 0) - (g->ntasks > 0);
        if (n.smact >= a.sm_max)
            a.sm_max = n.smact;
        else if (g->smact >= a.sm_max)
            a.sm_dirty = true;
        if (n.used_gib >= a.mem_max)
            a.mem_max = n.used_gib;
        else if (g->used_gib >= a.mem_max)
            a.mem_dirty = true;
        *g = n;
        if (n.used_gib > *peak_gib)
            *peak_gib = n.used_gib;
    }
    put_agg_row(f, last, &a, p->ngpus);
    if (t_end_h > last)
        put_agg_row(f, t_end_h, &a, p->ngpus);
    free(a.gpu);
    return 0;
}

/* A round tic step giving at most `n` steps up to `top` (1, 2 or 5 times a power of ten). */
static double tic_step(double top, int n)
{
    static const double mult[] = {1, 2, 5};
    double base = pow(10, floor(log10(top / n)));
    for (int i = 0; i < 3; i++)
        if (top / (base * mult[i]) <= n)
            return base * mult[i];
    return base * 10;
}

/* Pixels of the stacked GPU panels: title, x axis, gaps, and a panel per GPU. */
#define PANELS_TOP 70
#define PANELS_BOTTOM 55
#define PANELS_GAP 16
static int panels_height(int n)
{
    int panel = n <= 2 ? 220 : n <= 4 ? 180 : n <= 8 ? 140 : 105;
    return PANELS_TOP + PANELS_BOTTOM + panel * n + PANELS_GAP * (n - 1);
}

/* One panel per GPU, stacked: SM activity as a shaded step area (left axis, %), used memory
 * as a step line (right axis, GiB). */
static void script_gpu_panels(FILE *f, const sim_plot *p, const char *policy, const char *dat,
                              double t_end_h, double mem_top)
{
    int n = p->ngpus, h = panels_height(n);
    fputs("set multiplot layout ", f);
    fprintf(f, "%d,1 title ", n);
    gp_run_title(f, p, policy);
    fprintf(f,
            " . \"\\n\" . 'shaded: SM activity, %% (left axis)    line: used memory, GiB of "
            "%.0f (right axis)' font ',11' margins 0.07,0.93,%.4f,%.4f spacing 0,%.4f\n",
            p->mem_gib, (double)PANELS_BOTTOM / h, 1 - (double)PANELS_TOP / h,
            (double)PANELS_GAP / h);
    fprintf(f,
            "set xrange [0:%.5f]\n"
            "set yrange [0:100]\n"
            "set ytics 0,50,100 nomirror\n"
            "set y2range [0:%.3f]\n"
            "set y2tics 0,%g nomirror textcolor rgb '%s'\n"
            "set grid xtics ytics lc rgb '#dddddd'\n"
            "set style fill solid 1.0 noborder\n"
            "unset key\n"
            "do for [g=0:%d] {\n"
            "    set ylabel sprintf('GPU %%d', g)\n"
            "    if (g == %d) {\n"
            "        set format x '%%g'\n"
            "        set xlabel 'hours since the first submission'\n"
            "    } else {\n"
            "        set format x ''\n"
            "        unset xlabel\n"
            "    }\n"
            "    plot '%s' index g using 1:2 with fillsteps lc rgb '%s', \\\n"
            "         '' index g using 1:2 with steps lw 1 lc rgb '%s', \\\n"
            "         '' index g using 1:3 axes x1y2 with steps lw 2 lc rgb '%s'\n"
            "}\n"
            "unset multiplot\n",
            t_end_h > 0 ? t_end_h : 1, mem_top, tic_step(mem_top, 4), COLOR_MEM, n - 1, n - 1, dat,
            COLOR_ACT, COLOR_ACT_LINE, COLOR_MEM);
}

/* Above PLOT_MAX_GPU_LINES GPUs: three panels, SM activity and used memory (mean across GPUs
 * shaded, max a line) and the number of GPUs holding tasks. */
static void script_gpu_aggregate(FILE *f, const sim_plot *p, const char *policy, const char *dat,
                                 double t_end_h, double mem_top)
{
    int h = AGGREGATE_HEIGHT;
    fputs("set multiplot layout 3,1 title ", f);
    gp_run_title(f, p, policy);
    fprintf(f, " . \"\\n\" . 'across the %d GPUs: shaded the mean, line the max' font ',11' "
               "margins 0.08,0.96,%.4f,%.4f spacing 0,0.03\n",
            p->ngpus, 55.0 / h, 1 - 70.0 / h);
    fprintf(f,
            "set xrange [0:%.5f]\n"
            "set grid xtics ytics lc rgb '#dddddd'\n"
            "set style fill solid 1.0 noborder\n"
            "set key top right opaque box\n"
            "set format x ''\n"
            "set ylabel 'SM activity (%%)'\n"
            "set yrange [0:100]\n"
            "plot '%s' using 1:2 with fillsteps lc rgb '%s' title 'mean', \\\n"
            "     '' using 1:3 with steps lw 1.5 lc rgb '%s' title 'max'\n"
            "set ylabel 'used memory (GiB)'\n"
            "set yrange [0:%.3f]\n"
            "plot '%s' using 1:4 with fillsteps lc rgb '#fdd0a2' title 'mean', \\\n"
            "     '' using 1:5 with steps lw 1.5 lc rgb '%s' title 'max'\n"
            "set ylabel 'GPUs with tasks'\n"
            "set yrange [0:%d]\n"
            "set format x '%%g'\n"
            "set xlabel 'hours since the first submission'\n"
            "unset key\n"
            "plot '%s' using 1:6 with fillsteps lc rgb '#bcbddc'\n"
            "unset multiplot\n",
            t_end_h > 0 ? t_end_h : 1, dat, COLOR_ACT, COLOR_ACT_LINE, mem_top, dat, COLOR_MEM,
            p->ngpus, dat);
}

int sim_plot_add_run(sim_plot *p, const char *policy, const sim_result *r, carma_err *err)
{
    plot_run *runs = realloc(p->runs, (p->nruns + 1) * sizeof *runs);
    if (!runs)
        return carma_err_set(err, "--plot: out of memory");
    p->runs = runs;
    snprintf(runs[p->nruns].policy, sizeof runs->policy, "%s", policy);
    runs[p->nruns].s = r->summary;
    p->nruns++;

    /* The timeline starts at the first submission and ends at the last change or completion. */
    double t0 = INFINITY;
    for (size_t i = 0; i < r->njobs; i++)
        if (isfinite(r->jobs[i].submit_s))
            t0 = fmin(t0, r->jobs[i].submit_s);
    if (!isfinite(t0))
        t0 = r->ntimeline ? r->timeline[0].t : 0;
    double t_end_h = isfinite(r->summary.makespan_s) ? r->summary.makespan_s / 3600 : 0;
    for (size_t i = 0; i < r->ntimeline; i++)
        t_end_h = fmax(t_end_h, hours(r->timeline[i].t, t0));

    char safe[PLOT_NAME_MAX - 16], dat[PLOT_NAME_MAX], gp[PLOT_NAME_MAX], png[PLOT_NAME_MAX];
    safe_copy(safe, sizeof safe, policy);
    snprintf(dat, sizeof dat, "gpus-%s.dat", safe);
    snprintf(gp, sizeof gp, "gpus-%s.gp", safe);
    snprintf(png, sizeof png, "gpus-%s.png", safe);

    char *buf;
    size_t len;
    FILE *f = text_open(&buf, &len, err);
    if (!f)
        return -1;
    double peak_gib = 0;
    bool aggregate = p->ngpus > PLOT_MAX_GPU_LINES;
    fprintf(f, "# %s — GPU timeline of policy %s, trace %s on %s\n", dat, policy, p->trace,
            p->server);
    if (aggregate) {
        if (write_gpu_aggregate(f, p, r, t0, t_end_h, &peak_gib, err)) {
            fclose(f);
            free(buf);
            return -1;
        }
    } else {
        write_gpu_blocks(f, p, r, t0, t_end_h, &peak_gib);
    }
    if (text_keep(p, dat, f, &buf, &len, err))
        return -1;

    if (!(f = text_open(&buf, &len, err)))
        return -1;
    double mem_top = fmax(p->mem_gib, peak_gib);
    if (!(mem_top > 0))
        mem_top = 1;
    int h = aggregate ? AGGREGATE_HEIGHT : panels_height(p->ngpus);
    gp_prologue(f, gp, png,
                aggregate ? "SM activity and used memory across the GPUs over time"
                          : "SM activity and used memory of each GPU over time",
                1200, h);
    if (aggregate)
        script_gpu_aggregate(f, p, policy, dat, t_end_h, mem_top);
    else
        script_gpu_panels(f, p, policy, dat, t_end_h, mem_top);
    if (text_keep(p, gp, f, &buf, &len, err))
        return -1;
    return image_add(p, gp, png, err);
}
