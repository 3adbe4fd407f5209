/* test_sim_parts.c — the simulator's building blocks: event heap order, GPU model table and
 * --gpus parsing, interference and power models, lazy window aggregation, quantiles, the
 * summary's unknown figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/window.h"
#include "sim/event_heap.h"
#include "sim/gpu_activity.h"
#include "sim/gpu_model.h"
#include "sim/sim_metrics.h"
#include "sim/sim_params.h"

static void heap_pops_in_time_then_push_order(void **state)
{
    (void)state;
    event_heap h;
    event_heap_init(&h);
    /* pseudo-random times, with ties */
    uint64_t x = 7;
    for (int i = 0; i < 2000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        assert_int_equal(event_heap_push(&h, (double)((x >> 33) % 100), EV_RETRY, i, 0), 0);
    }
    sim_event prev = {-1, 0, EV_RETRY, -1, 0}, e;
    int n = 0;
    while (event_heap_pop(&h, &e)) {
        assert_true(e.time > prev.time || (e.time == prev.time && e.seq > prev.seq));
        prev = e;
        n++;
    }
    assert_int_equal(n, 2000);
    assert_null(event_heap_peek(&h));
    event_heap_free(&h);
}

static void gpu_spec_parses_count_and_model(void **state)
{
    (void)state;
    int n;
    const gpu_model *m;
    carma_err err;
    assert_int_equal(gpu_spec_parse("4xA100-40GB", NULL, &n, &m, &err), 0);
    assert_int_equal(n, 4);
    assert_int_equal(m->memory_mib, 40960);
    assert_int_equal(gpu_spec_parse("a100-80gb", NULL, &n, &m, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(m->memory_mib, 81920);
    assert_int_equal(gpu_spec_parse("2xRTX3090-24GB", NULL, &n, &m, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(gpu_spec_parse("4xB200", NULL, &n, &m, &err), -1);
    assert_non_null(strstr(err.msg, "unknown GPU model 'B200'"));
    assert_int_equal(gpu_spec_parse("0xA100-40GB", NULL, &n, &m, &err), -1);
    assert_int_equal(gpu_spec_parse("fourxA100-40GB", NULL, &n, &m, &err), -1);
}

static void config_defined_models_are_found_first(void **state)
{
    (void)state;
    gpu_model_list l = {0};
    gpu_model m;
    carma_err err;
    assert_int_equal(gpu_model_parse("A30-24GB:24G:30:165", &m, &err), 0);
    assert_int_equal(m.memory_mib, 24576);
    assert_int_equal(gpu_model_list_add(&l, &m, &err), 0);
    int n;
    const gpu_model *found;
    assert_int_equal(gpu_spec_parse("3xA30-24GB", &l, &n, &found, &err), 0);
    assert_float_equal(found->max_w, 165, 1e-9);
    assert_int_equal(gpu_model_parse("A30:24G:200:100", &m, &err), -1); /* idle > max */
    assert_int_equal(gpu_model_parse("A30:lots:30:165", &m, &err), -1);
    assert_int_equal(gpu_model_parse("A30:24G:30", &m, &err), -1);
}

/* The fitted models, pinned on hand-computed cases with the shipped coefficients (a refit must
 * update these numbers on purpose). */
static void fitted_interference_and_power_models(void **state)
{
    (void)state;
    sim_params p;
    sim_params_defaults(&p);
    /* Pressure: 16.7848 * max(0, SMACT - 0.7673) + 0.6107 * DRAMA. */
    assert_float_equal(sim_pressure(&p, 0.5, 0.2), 0.6107 * 0.2, 1e-12); /* below the knee */
    assert_float_equal(sim_pressure(&p, 0.9, 0.4), 16.7848 * (0.9 - 0.7673) + 0.6107 * 0.4,
                       1e-12);
    /* Speed: 1 / (1 + the co-runners' pressure); alone (0) is solo speed. */
    assert_float_equal(sim_speed(&p, 0), 1.0, 1e-12);
    assert_float_equal(sim_speed(&p, 0.25), 0.8, 1e-12);
    assert_float_equal(sim_speed(&p, 1.0), 0.5, 1e-12);
    p.interference = false;
    assert_float_equal(sim_speed(&p, 1.0), 1.0, 1e-12);
    assert_float_equal(sim_pressure(&p, 0.9, 0.4), 0.0, 1e-12);
    /* Power of the 400 W A100: 60 W idle; busy 0.1201 + 0.5672 * util of max_w. */
    int n;
    const gpu_model *a100;
    carma_err err;
    assert_int_equal(gpu_spec_parse("A100-40GB", NULL, &n, &a100, &err), 0);
    assert_float_equal(sim_power_w(&p, a100, false, 0.9), 60, 1e-12);
    assert_float_equal(sim_power_w(&p, a100, true, 0), 400 * 0.1201, 1e-9);
    assert_float_equal(sim_power_w(&p, a100, true, 1), 400 * (0.1201 + 0.5672), 1e-9);
    assert_float_equal(sim_power_w(&p, a100, true, 3), 400 * (0.1201 + 0.5672), 1e-9);
}

/* The lazy window must equal a window that was fed a sample every second. */
static void lazy_window_matches_sample_by_sample(void **state)
{
    (void)state;
    gpu_activity a;
    activity_sample zero = {0, 0, 0};
    gpu_activity_init(&a, zero);
    metric_window w;
    assert_int_equal(window_init(&w, 30, NULL), 0);
    double changes[][2] = {{3.5, 0.6}, {10.0, 0.9}, {10.0, 0.7}, {25.2, 0.1}, {70.0, 0.4}};
    int c = 0;
    for (int t = -40; t <= 120; t++) {
        while (c < 5 && changes[c][0] <= t) {
            activity_sample v = {changes[c][1], changes[c][1] / 2, 0.1};
            gpu_activity_set(&a, changes[c][0], v);
            c++;
        }
        window_push(&w, gpu_activity_current(&a));
        activity_sample lazy = gpu_activity_aggregate(&a, t + 0.25, 30, AGG_RISK, 0.5);
        activity_sample full = window_aggregate(&w, AGG_RISK, 0.5);
        assert_float_equal(lazy.smact, full.smact, 1e-12);
        assert_float_equal(lazy.smocc, full.smocc, 1e-12);
    }
    assert_true(gpu_activity_settled(&a, 100.0, 30));
    assert_false(gpu_activity_settled(&a, 80.0, 30));
    window_free(&w);
}

static void quantiles_interpolate(void **state)
{
    (void)state;
    double v[] = {5, 1, 4, 2, 3};
    assert_float_equal(sim_quantile(v, 5, 0.5), 3, 1e-12);
    assert_float_equal(sim_quantile(v, 5, 0.95), 4.8, 1e-12);
    assert_true(isnan(sim_quantile(v, 0, 0.5)));
}

/* With no task completed the makespan is unknown, and so are utilization and energy over it
 * (NaN, null in the JSON), not 0 J. */
static void no_completion_leaves_figures_unknown(void **state)
{
    (void)state;
    sim_job_result job = {.attempts = 1, .oom_crashes = 1, .completed = false, .submit_s = 0,
                          .first_start_s = 0, .end_s = 10, .wait_s = 0, .busy_s = 10};
    sim_result r = {.jobs = &job, .njobs = 1};
    sim_summarize(&r, 0, 10, 1, 5, 600);
    assert_int_equal(r.summary.failed, 1);
    assert_true(isnan(r.summary.makespan_s));
    assert_true(isnan(r.summary.energy_j));
    assert_true(isnan(r.summary.gpu_util_mean));
    job.completed = true;
    sim_summarize(&r, 0, 10, 1, 5, 600);
    assert_float_equal(r.summary.makespan_s, 10, 1e-12);
    assert_float_equal(r.summary.energy_j, 600, 1e-12);
    assert_float_equal(r.summary.gpu_util_mean, 0.5, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(heap_pops_in_time_then_push_order),
        cmocka_unit_test(gpu_spec_parses_count_and_model),
        cmocka_unit_test(config_defined_models_are_found_first),
        cmocka_unit_test(fitted_interference_and_power_models),
        cmocka_unit_test(lazy_window_matches_sample_by_sample),
        cmocka_unit_test(quantiles_interpolate),
        cmocka_unit_test(no_completion_leaves_figures_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
