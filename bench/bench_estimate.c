/* bench_estimate.c — time to parse a model summary and estimate its memory, over the 54
 * summaries in data/gpumemnet/summaries: parsing alone, each estimator alone, and both. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/estimate.h"
#include "util/clock.h"
#include "util/datadir.h"
#include "util/strutil.h"

#define MAXF 128

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    char dir[PATH_MAX];
    carma_err err;
    if (carma_data_path("gpumemnet/summaries", dir, sizeof dir, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    char *texts[MAXF], *names[MAXF];
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && n < MAXF) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        texts[n] = read_file(path, NULL, NULL);
        names[n] = str_dup(e->d_name);
        if (texts[n])
            n++;
    }
    if (d)
        closedir(d);
    if (!n) {
        fprintf(stderr, "no summaries in %s\n", dir);
        return 1;
    }
    estimator est;
    estimator_init(&est);
    const mem_source srcs[] = {MEM_GPUMEMNET, MEM_HORUS, MEM_CARMA};
    double t_parse = 0, t_est[3] = {0};
    long estimates = 0;
    volatile uint64_t sink = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            model_summary s;
            double t0 = clock_mono_s();
            if (summary_parse(names[i], texts[i], &s, &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            t_parse += clock_mono_s() - t0;
            for (int k = 0; k < 3; k++) {
                est_result res;
                double t1 = clock_mono_s();
                if (estimator_run(&est, srcs[k], &s, 32, estimate_seq_len_from_name(names[i]), &res,
                                  &err)) {
                    fprintf(stderr, "%s: %s\n", names[i], err.msg);
                    return 1;
                }
                t_est[k] += clock_mono_s() - t1;
                sink += res.mib;
            }
            estimates++;
            summary_free(&s);
        }
    }
    printf("%d summaries x %d rounds (weights loaded once, then cached)\n", n, rounds);
    printf("parse:                 %8.2f us per summary\n", 1e6 * t_parse / (double)estimates);
    for (int k = 0; k < 3; k++)
        printf("estimate %-10s    %8.2f us per estimate (parse + estimate %.2f us)\n",
               mem_source_estimator_name(srcs[k]), 1e6 * t_est[k] / (double)estimates,
               1e6 * (t_parse + t_est[k]) / (double)estimates);
    estimator_free(&est);
    for (int i = 0; i < n; i++) {
        free(texts[i]);
        free(names[i]);
    }
    return sink == 0;
}
