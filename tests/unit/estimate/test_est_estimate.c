/* test_est_estimate.c — the estimator API the scheduler uses: one-shot estimates, filling task
 * figures, and the errors for bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "estimate/estimate.h"
#include "task/catalog.h"
#include "estimate/evaluate.h"

static int setup(void **state)
{
    (void)state;
    setenv("CARMA_DATA_DIR", CARMA_DATA_DIR, 1);
    return 0;
}

static void test_one_shot(void **state)
{
    (void)state;
    uint64_t mib;
    int cls;
    carma_err err;
    assert_int_equal(estimate_task_mib(MEM_GPUMEMNET, "vgg_32.model", 32, &mib, &cls, &err), 0);
    assert_int_equal(mib, 16000);
    assert_int_equal(cls, 1);
    assert_int_equal(estimate_task_mib(MEM_HORUS, "vgg_32.model", 32, &mib, &cls, &err), 0);
    assert_int_equal(mib, 21528); /* 20727.8 + 800, rounded up */
    assert_int_equal(cls, -1);
    /* a .rad spelling with other capitals still finds the summary */
    assert_int_equal(
        estimate_task_mib(MEM_CARMA, "workloads/efficientNet_32.model", 32, &mib, NULL, &err), 0);
    assert_true(mib > 3000 && mib < 20000);
}

static void test_bad_input(void **state)
{
    (void)state;
    uint64_t mib;
    carma_err err;
    assert_int_equal(estimate_task_mib(MEM_CARMA, "vgg_32.model", 0, &mib, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "batch size must be at least 1"));
    assert_int_equal(estimate_task_mib(MEM_CARMA, "vgg_32.model", -4, &mib, NULL, &err), -1);
    assert_int_equal(estimate_task_mib(MEM_FAKETENSOR, "vgg_32.model", 8, &mib, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "'faketensor' cannot be computed"));
    assert_int_equal(estimate_task_mib(MEM_CARMA, "no_such.model", 8, &mib, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "not found"));
    assert_int_equal(estimate_task_mib(MEM_CARMA, NULL, 8, &mib, NULL, &err), -1);
    /* missing weights */
    estimator e;
    estimator_init(&e);
    e.weights_override[0] = "/nonexistent/cnn.weights.txt";
    model_summary s;
    assert_int_equal(summary_load(CARMA_DATA_DIR "/gpumemnet/summaries/vgg_32.model", &s, &err), 0);
    est_result r;
    assert_int_equal(estimator_run(&e, MEM_GPUMEMNET, &s, 32, 0, &r, &err), -1);
    assert_non_null(strstr(err.msg, "cannot read weights file: /nonexistent/cnn.weights.txt"));
    assert_int_equal(estimator_run(&e, MEM_HORUS, &s, 32, 0, &r, &err), 0);
    summary_free(&s);
    estimator_free(&e);
}

/* A summary built in memory, past the parsers' checks: an estimate out of range is an error,
 * never a negative or huge double converted to an unsigned figure. */
static void test_out_of_range_estimates_are_errors(void **state)
{
    (void)state;
    estimator e;
    estimator_init(&e);
    carma_err err = {{0}};
    est_result r;
    summary_layer big = {.type = "Conv2d", .ndims = 4, .shape = {-1, INT64_C(1) << 50,
                         INT64_C(1) << 50, 2}, .params = 10, .leaf = true, .in_features = -1,
                         .out_features = -1, .line = 4};
    model_summary s = {.format = SUMMARY_TORCHSUMMARY, .layers = &big, .n = 1, .cap = 1};
    assert_int_equal(estimator_run(&e, MEM_HORUS, &s, 1 << 30, 0, &r, &err), -1);
    assert_non_null(strstr(err.msg, "the horus estimate"));
    assert_non_null(strstr(err.msg, "is out of range"));
    assert_int_equal(estimator_run(&e, MEM_CARMA, &s, 1 << 30, 0, &r, &err), -1);
    assert_non_null(strstr(err.msg, "the carma estimate"));
    summary_layer neg = {.type = "Embedding", .params = 9, .leaf = true, .in_features = 512,
                         .out_features = -76800000, .plain_args = true, .line = 2};
    model_summary t = {.format = SUMMARY_MODULE_REPR, .layers = &neg, .n = 1, .cap = 1};
    assert_int_equal(estimator_run(&e, MEM_HORUS, &t, 32, 512, &r, &err), -1);
    assert_non_null(strstr(err.msg, "is out of range"));
    estimator_free(&e);
    /* a sequence length in a file name that does not fit an int is no sequence length */
    assert_int_equal(estimate_seq_len_from_name("m_sl:99999999999999999999.txt"), 0);
    assert_int_equal(estimate_seq_len_from_name("m_bs:8_sl:384.txt"), 384);
}

static void test_fill_tasks(void **state)
{
    (void)state;
    estimator e;
    estimator_init(&e);
    carma_err err;
    task_spec t;
    memset(&t, 0, sizeof t);
    t.name = "resnet.rad";
    t.summary_path = "resnet50_32.model";
    t.batch_size = 32;
    assert_int_equal(estimate_fill_task(&e, MEM_GPUMEMNET, &t, &err), 0);
    uint64_t mib;
    assert_true(mem_figures_get(&t.mem, MEM_GPUMEMNET, &mib));
    assert_int_equal(mib, 16000);
    assert_false(mem_figures_get(&t.mem, MEM_CARMA, &mib));
    t.batch_size = 0;
    assert_int_equal(estimate_fill_task(&e, MEM_CARMA, &t, &err), -1);
    assert_non_null(strstr(err.msg, "task resnet.rad"));
    sched_task st;
    memset(&st, 0, sizeof st);
    assert_int_equal(estimate_fill_sched_task(&e, MEM_CARMA, "resnet50_32.model", 32, &st, &err),
                     0);
    assert_true(mem_figures_get(&st.mem, MEM_CARMA, &mib));
    assert_true(mib > 5262); /* the measured peak: carma stays above it */
    estimator_free(&e);
}

/* Every task of the workload catalog gets a figure from each computed estimator. */
static void test_catalog_workloads(void **state)
{
    (void)state;
    workload_catalog cat;
    carma_err err;
    assert_int_equal(catalog_load(CARMA_DATA_DIR "/workloads.csv", &cat, &err), 0);
    assert_true(cat.n > 40);
    estimator e;
    estimator_init(&e);
    const mem_source srcs[] = {MEM_GPUMEMNET, MEM_HORUS, MEM_CARMA};
    size_t with_summary = 0;
    for (size_t i = 0; i < cat.n; i++) {
        workload *w = &cat.items[i];
        if (!w->summary_file) /* the AEGIS rows carry AEGIS's own figures */
            continue;
        with_summary++;
        for (int k = 0; k < 3; k++) {
            mem_figures m = {{0}, 0};
            if (estimate_fill_mem(&e, srcs[k], w->summary_file, w->batch_size, &m, &err))
                fail_msg("%s: %s", w->rad_file, err.msg);
            uint64_t mib;
            assert_true(mem_figures_get(&m, srcs[k], &mib));
            assert_true(mib > 0);
        }
    }
    estimator_free(&e);
    catalog_free(&cat);
}

static void test_evaluation(void **state)
{
    (void)state;
    estimator e;
    estimator_init(&e);
    eval_report rep;
    carma_err err;
    assert_int_equal(eval_run(&e, &rep, &err), 0);
    estimator_free(&e);
    size_t real = 0;
    for (size_t i = 0; i < rep.nrows; i++)
        real += rep.rows[i].table == EVAL_REALWORLD;
    assert_int_equal(real, 18);
    for (size_t i = 0; i < rep.nstats; i++) {
        const eval_stats *st = &rep.stats[i];
        if (st->table != EVAL_REALWORLD)
            continue;
        if (st->estimator == EVAL_GPUMEMNET) { /* the paper's figures: 56.4 %, 2 under */
            assert_int_equal(st->rows, 18);
            assert_int_equal(st->underestimates, 2);
            assert_true(st->median_abs_rel_err > 0.56 && st->median_abs_rel_err < 0.57);
        }
        if (st->estimator == EVAL_HORUS) { /* 29.5 %, 10 under */
            assert_int_equal(st->underestimates, 10);
            assert_true(st->median_abs_rel_err > 0.29 && st->median_abs_rel_err < 0.30);
        }
        if (st->estimator == EVAL_FAKETENSOR)
            assert_int_equal(st->underestimates, 12);
        if (st->estimator == EVAL_CARMA)
            assert_true(st->underestimates <= 1); /* safe first */
    }
    eval_free(&rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_shot),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_out_of_range_estimates_are_errors),
        cmocka_unit_test(test_fill_tasks),
        cmocka_unit_test(test_catalog_workloads),
        cmocka_unit_test(test_evaluation),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
