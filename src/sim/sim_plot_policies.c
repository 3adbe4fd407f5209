/* sim_plot_policies.c — `carma simulate --compare --plot DIR`: policies.dat and policies.gp, the
 * bar chart of makespan, mean job completion time and energy per policy (exclusive in gray). */
#include "sim/sim_plot_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void put_num(FILE *f, double x, double scale, const char *fmt)
{
    fputc(' ', f);
    if (isfinite(x))
        fprintf(f, fmt, x * scale);
    else
        fputc('-', f);
}

int add_policies(sim_plot *p, carma_err *err)
{
    char *buf;
    size_t len;
    FILE *f = text_open(&buf, &len, err);
    if (!f)
        return -1;
    fprintf(f, "# policies.dat — one row per policy, trace %s on %s ('-': no figure)\n"
               "# index policy makespan_h mean_jct_h energy_MJ baseline p95_jct_h mean_wait_h "
               "gpu_util_pct oom_crashes completed tasks\n",
            p->trace, p->server);
    for (size_t i = 0; i < p->nruns; i++) {
        const sim_summary *s = &p->runs[i].s;
        char safe[PLOT_NAME_MAX];
        safe_copy(safe, sizeof safe, p->runs[i].policy);
        fprintf(f, "%zu \"%s\"", i, safe);
        put_num(f, s->makespan_s, 1 / 3600.0, "%.4f");
        put_num(f, s->mean_jct_s, 1 / 3600.0, "%.4f");
        put_num(f, sim_display_mj(s->energy_j), 1, "%.4f");
        fprintf(f, " %d", strcmp(p->runs[i].policy, "exclusive") == 0);
        put_num(f, s->p95_jct_s, 1 / 3600.0, "%.4f");
        put_num(f, s->mean_wait_s, 1 / 3600.0, "%.4f");
        put_num(f, s->gpu_util_mean, 100, "%.2f");
        fprintf(f, " %d %zu %zu\n", s->oom_crashes, s->completed, s->tasks);
    }
    if (text_keep(p, "policies.dat", f, &buf, &len, err))
        return -1;

    if (!(f = text_open(&buf, &len, err)))
        return -1;
    gp_prologue(f, "policies.gp", "policies.png",
                "makespan, mean job completion time and energy of each policy", 1500, 520);
    char title[512];
    snprintf(title, sizeof title, "policies on trace %s, %s (est-* with estimator %s)",
             p->trace, p->server, p->estimator);
    fputs("set multiplot layout 1,3 title ", f);
    gp_str(f, title);
    fprintf(f,
            " . \"\\n\" . 'gray: exclusive, the baseline' font ',12' "
            "margins 0.05,0.99,0.17,0.83 spacing 0.06,0\n"
            "set datafile missing '-'\n"
            "set style fill solid 0.85 border lc rgb '#444444'\n"
            "set boxwidth 0.7\n"
            "set xrange [-0.6:%zu.4]\n"
            "set yrange [0:*]\n"
            "set offsets 0,0,graph 0.1,0\n"
            "set xtics rotate by 40 right nomirror scale 0\n"
            "set ytics nomirror\n"
            "set grid ytics lc rgb '#dddddd'\n"
            "unset key\n",
            p->nruns ? p->nruns - 1 : 0);
    static const struct {
        int col;
        const char *title, *fmt;
    } panels[] = {{3, "makespan (hours)", "%.2f"},
                  {4, "mean job completion time (hours)", "%.2f"},
                  {5, "energy (MJ)", "%.1f"}};
    for (size_t k = 0; k < sizeof panels / sizeof *panels; k++)
        fprintf(f,
                "set title '%s' font ',11'\n"
                "plot 'policies.dat' using 1:%d:($6 > 0 ? 0x%06x : 0x%06x):xtic(2) with boxes "
                "lc rgb variable, \\\n"
                "     '' using 1:%d:(sprintf('%s', $%d)) with labels offset 0,0.7 font ',9'\n",
                panels[k].title, panels[k].col, COLOR_BASE, COLOR_BAR, panels[k].col,
                panels[k].fmt, panels[k].col);
    fputs("unset multiplot\n", f);
    if (text_keep(p, "policies.gp", f, &buf, &len, err))
        return -1;
    return image_add(p, "policies.gp", "policies.png", err);
}
