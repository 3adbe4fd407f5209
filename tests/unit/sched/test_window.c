/* test_window.c — rolling window and its mean / EWMA / risk aggregations (carma-spec §6.3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "sched/window.h"

static void push_smact(metric_window *w, double smact)
{
    activity_sample s = {smact, NAN, 0.5};
    window_push(w, s);
}

static void mean_ewma_and_risk_of_1_to_5(void **state)
{
    (void)state;
    double x[5] = {1, 2, 3, 4, 5};
    assert_float_equal(aggregate_values(x, 5, AGG_MEAN, 0.5), 3.0, 1e-12);
    /* EWMA alpha 0.5: 1, 1.5, 2.25, 3.125, 4.0625 */
    assert_float_equal(aggregate_values(x, 5, AGG_EWMA, 0.5), 4.0625, 1e-12);
    /* risk: 0.2*mean 3 + 0.3*median 3 + 0.3*p95 4.8 + 0.2*EMA(alpha 1/3) 3.395061728 */
    double ema = 1.0;
    for (int i = 1; i < 5; i++)
        ema = ema * (2.0 / 3.0) + x[i] / 3.0;
    assert_float_equal(ema, 3.3950617, 1e-6);
    assert_float_equal(aggregate_values(x, 5, AGG_RISK, 0.5),
                       0.2 * 3 + 0.3 * 3 + 0.3 * 4.8 + 0.2 * ema, 1e-12);
    /* AEGIS's weights: 0.25 each */
    assert_float_equal(aggregate_values(x, 5, AGG_RISK_EQUAL, 0.5),
                       0.25 * (3 + 3 + 4.8 + ema), 1e-12);
    agg_mode m;
    assert_int_equal(agg_mode_from_name("risk-equal", &m), 0);
    assert_int_equal(m, AGG_RISK_EQUAL);
    assert_string_equal(agg_mode_name(AGG_RISK_EQUAL), "risk-equal");
    assert_int_equal(agg_mode_from_name("risky", &m), -1);
}

static void nan_samples_are_dropped_and_all_nan_is_unknown(void **state)
{
    (void)state;
    double x[4] = {NAN, 0.2, NAN, 0.4};
    assert_float_equal(aggregate_values(x, 4, AGG_MEAN, 0.5), 0.3, 1e-12);
    double none[3] = {NAN, NAN, NAN};
    assert_true(isnan(aggregate_values(none, 3, AGG_RISK, 0.5)));
    assert_true(isnan(aggregate_values(none, 0, AGG_MEAN, 0.5)));
}

static void window_keeps_the_last_cap_samples(void **state)
{
    (void)state;
    metric_window w;
    assert_int_equal(window_init(&w, 3, NULL), 0);
    activity_sample empty = window_aggregate(&w, AGG_MEAN, 0.5);
    assert_true(isnan(empty.smact));
    for (int i = 1; i <= 5; i++)
        push_smact(&w, i); /* keeps 3, 4, 5 */
    assert_int_equal(w.len, 3);
    activity_sample a = window_aggregate(&w, AGG_MEAN, 0.5);
    assert_float_equal(a.smact, 4.0, 1e-12);
    assert_true(isnan(a.smocc));
    assert_float_equal(a.drama, 0.5, 1e-12);
    /* EWMA is in time order: 3, 3.5, 4.25 */
    assert_float_equal(window_aggregate(&w, AGG_EWMA, 0.5).smact, 4.25, 1e-12);
    window_clear(&w);
    assert_int_equal(w.len, 0);
    window_free(&w);
    carma_err err;
    assert_int_equal(window_init(&w, 0, &err), -1);
}

static void long_windows_aggregate_on_the_heap(void **state)
{
    (void)state;
    double x[200];
    for (int i = 0; i < 200; i++)
        x[i] = i % 2 ? 1.0 : 0.0;
    assert_float_equal(aggregate_values(x, 200, AGG_MEAN, 0.5), 0.5, 1e-12);
    assert_float_equal(aggregate_values(x, 200, AGG_RISK, 0.5) >= 0.5, 1.0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mean_ewma_and_risk_of_1_to_5),
        cmocka_unit_test(nan_samples_are_dropped_and_all_nan_is_unknown),
        cmocka_unit_test(window_keeps_the_last_cap_samples),
        cmocka_unit_test(long_windows_aggregate_on_the_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
