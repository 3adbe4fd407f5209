/* test_sim_synth.c — synthetic Philly-like traces from the shipped catalog and arrivals, the
 * trace-to-jobs step of the simulator, and the simulator's config keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "estimate/estimate.h"
#include "sim/sim_workload.h"
#include "sim/trace_synth.h"
#include "util/strutil.h"

static void synth_is_deterministic_and_philly_like(void **state)
{
    (void)state;
    workload_catalog cat;
    carma_err err;
    double *gaps;
    size_t ngaps;
    assert_int_equal(catalog_load(CARMA_DATA_DIR "/workloads.csv", &cat, &err), 0);
    assert_int_equal(philly_gaps_load(CARMA_DATA_DIR "/philly/interarrival_sequences.csv", &gaps,
                                      &ngaps, &err), 0);
    assert_true(ngaps > 100);
    trace a, b;
    assert_int_equal(trace_synth(&cat, gaps, ngaps, 20000, 42, &a, &err), 0);
    assert_int_equal(trace_synth(&cat, gaps, ngaps, 20000, 42, &b, &err), 0);
    int two = 0;
    for (size_t i = 0; i < a.n; i++) {
        assert_string_equal(a.entries[i].task_file, b.entries[i].task_file);
        assert_true(a.entries[i].submit_offset_s == b.entries[i].submit_offset_s);
        assert_true(i == 0 || a.entries[i].submit_offset_s >= a.entries[i - 1].submit_offset_s);
        const workload *w = catalog_find(&cat, a.entries[i].task_file);
        assert_non_null(w);
        assert_true(w->sim.solo_runtime_s > 0); /* only simulatable tasks are drawn */
        two += w->ngpus == 2;
    }
    /* Philly: 2.21 / (92.96 + 2.21) = 2.3 % two-GPU jobs */
    assert_in_range(two, 20000 * 0.018, 20000 * 0.028);
    /* every job converts (the catalog has what the simulator needs) */
    sim_job_spec *jobs;
    a.path = str_dup("synth");
    assert_int_equal(sim_jobs_from_trace(&a, &cat, MEM_ORACLE, &jobs, &err), 0);
    assert_int_equal(jobs[0].submit_s, 0);
    assert_true(jobs[0].peak_mib > 0 && jobs[0].smact >= 0 && jobs[0].smact <= 1);
    free(jobs);
    trace_free(&a);
    trace_free(&b);
    free(gaps);
    catalog_free(&cat);
}

/* Gaps (divided by a tiny --rate) that would put a job past TRACE_MAX_OFFSET_S are refused as
 * the parameters' fault, naming the job; up to the bound they are fine. */
static void synth_refuses_offsets_past_the_bound(void **state)
{
    (void)state;
    workload_catalog cat;
    carma_err err;
    trace t;
    assert_int_equal(catalog_load(CARMA_DATA_DIR "/workloads.csv", &cat, &err), 0);
    double half[] = {TRACE_MAX_OFFSET_S / 2}, huge[] = {INFINITY};
    assert_int_equal(trace_synth(&cat, half, 1, 3, 1, &t, &err), 0);
    assert_true(t.entries[2].submit_offset_s == TRACE_MAX_OFFSET_S);
    trace_free(&t);
    assert_int_equal(trace_synth(&cat, half, 1, 4, 1, &t, &err), TRACE_SYNTH_TOO_LONG);
    assert_non_null(strstr(err.msg, "job 4 would be submitted 1500000000 s in"));
    assert_int_equal(t.n, 0);
    assert_null(t.entries);
    /* in full: %g wrote 1000000000.5 as 1e+09, the limit itself */
    double over[] = {TRACE_MAX_OFFSET_S / 2 + 0.25};
    assert_int_equal(trace_synth(&cat, over, 1, 3, 1, &t, &err), TRACE_SYNTH_TOO_LONG);
    assert_non_null(strstr(err.msg, "job 3 would be submitted 1000000000.5 s in, past the latest"));
    assert_int_equal(trace_synth(&cat, huge, 1, 2, 1, &t, &err), TRACE_SYNTH_TOO_LONG);
    assert_non_null(strstr(err.msg, "1000000000 s (about 31 years)"));
    catalog_free(&cat);
}

static void unknown_task_file_names_the_entry(void **state)
{
    (void)state;
    workload_catalog cat;
    carma_err err;
    assert_int_equal(catalog_load(CARMA_DATA_DIR "/workloads.csv", &cat, &err), 0);
    trace_entry e[2] = {{1, 0, "resnet.rad"}, {2, 10, "densenet.rad"}};
    trace t = {"t.csv", e, 2};
    sim_job_spec *jobs = NULL;
    assert_int_equal(sim_jobs_from_trace(&t, &cat, MEM_ORACLE, &jobs, &err), -1);
    assert_non_null(strstr(err.msg, "t.csv: entry 2 (seq 2): task file 'densenet.rad' not in"));
    assert_null(jobs);
    catalog_free(&cat);
}

/* Estimators computed from summaries replace the .rad's stored figure in the loop. */
static void computed_estimates_replace_stored_figures(void **state)
{
    (void)state;
    workload_catalog cat;
    carma_err err;
    assert_int_equal(catalog_load(CARMA_DATA_DIR "/workloads.csv", &cat, &err), 0);
    const workload *w = catalog_find(&cat, "vgg3.rad");
    assert_non_null(w);
    uint64_t stored;
    assert_true(mem_figures_get(&w->mem, MEM_GPUMEMNET, &stored));
    trace_entry e[2] = {{1, 0, "vgg3.rad"}, {2, 5, "vgg3.rad"}};
    trace t = {"t.csv", e, 2};
    mem_source sources[] = {MEM_HORUS, MEM_GPUMEMNET, MEM_CARMA};
    for (size_t k = 0; k < 3; k++) {
        uint64_t direct;
        char summary[512];
        assert_int_equal(estimate_resolve_summary(w->summary_file, summary, sizeof summary, &err),
                         0);
        assert_int_equal(estimate_task_mib(sources[k], summary, w->batch_size, &direct, NULL, &err),
                         0);
        sim_job_spec *jobs = NULL;
        assert_int_equal(sim_jobs_from_trace(&t, &cat, sources[k], &jobs, &err), 0);
        uint64_t used;
        assert_true(mem_figures_get(&jobs[0].mem, sources[k], &used));
        assert_int_equal(used, direct);
        assert_true(mem_figures_get(&jobs[1].mem, sources[k], &used));
        assert_int_equal(used, direct);
        /* the real peak stays the measured one (AEGIS's A100 profile of the same task) */
        assert_true(w->profile.peaks_known);
        assert_int_equal(jobs[0].peak_mib, w->profile.peak_full_mib);
        free(jobs);
    }
    catalog_free(&cat);
}

static void sim_config_keys(void **state)
{
    (void)state;
    carma_config cfg;
    carma_err err;
    config_defaults(&cfg);
    assert_true(cfg.sim.interference);
    assert_float_equal(cfg.sim.startup_s, 30, 0);
    assert_int_equal(config_set(&cfg, "sim_interference", "off", &err), 0);
    assert_false(cfg.sim.interference);
    assert_int_equal(config_set(&cfg, "sim_interference_smact_k", "0.5", &err), 0);
    assert_float_equal(cfg.sim.interf_smact_k, 0.5, 0);
    assert_int_equal(config_set(&cfg, "sim_gpu_model", "L4-24GB:24G:16:72", &err), 0);
    assert_int_equal(cfg.sim.gpu_models.n, 1);
    assert_int_equal(config_set(&cfg, "sim_gpu_model", "L4-24GB:24G", &err), -1);
    assert_non_null(strstr(err.msg, "sim_gpu_model"));
    assert_int_equal(config_set(&cfg, "sim_interference_smact_knee", "1.5", &err), -1);
    assert_int_equal(config_set(&cfg, "sim_startup_s", "-1", &err), -1);
    assert_int_equal(config_validate(&cfg, &err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(synth_is_deterministic_and_philly_like),
        cmocka_unit_test(synth_refuses_offsets_past_the_bound),
        cmocka_unit_test(unknown_task_file_names_the_entry),
        cmocka_unit_test(computed_estimates_replace_stored_figures),
        cmocka_unit_test(sim_config_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
