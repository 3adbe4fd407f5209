/* test_est_analytic.c — the carma estimator: allocator rounding, saved-tensor rules, the fit on
 * the synthetic datasets (it must reproduce the compiled-in coefficients) and its behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "estimate/analytic.h"
#include "estimate/analytic_fit.h"
#include "estimate/summary.h"

#define GMN CARMA_DATA_DIR "/gpumemnet"
#define MIB (1024.0 * 1024.0)

static void test_alloc_rounding(void **state)
{
    (void)state;
    assert_true(carma_alloc_bytes(0) == 0);
    assert_true(carma_alloc_bytes(1) == 512);
    assert_true(carma_alloc_bytes(513) == 1024);
    assert_true(carma_alloc_bytes(MIB) == MIB);
    assert_true(carma_alloc_bytes(MIB + 1) == 2 * MIB);
    assert_true(carma_alloc_bytes(3 * MIB) == 4 * MIB);
}

static void test_kept_weights(void **state)
{
    (void)state;
    assert_true(carma_kept_weight("Conv2d", "BatchNorm2d") == 1); /* BN saves its input */
    assert_true(carma_kept_weight("Conv2d", "ReLU") == 0);        /* ReLU saves its result */
    assert_true(carma_kept_weight("ReLU", "MaxPool2d") == 1);
    assert_true(carma_kept_weight("GELU", "Dropout") == 0);       /* dropout keeps a mask only */
    assert_true(carma_kept_weight("Dropout", "Conv2d") == 1.25);
    assert_true(carma_kept_weight("MaxPool2d", "Conv2d") == 3);
    assert_true(carma_kept_weight("Identity", "Conv2d") == 0);
    assert_true(carma_kept_weight("Linear", NULL) == 1);         /* logits kept by the loss */
}

static void test_fit_reproduces_defaults(void **state)
{
    (void)state;
    carma_coeffs c;
    carma_fit_report r;
    carma_err err;
    assert_int_equal(carma_fit(GMN "/mlp_data_step2.csv",
                               GMN "/cnn_data_step1_partial_2024-09-22.csv", &c, &r, &err), 0);
    assert_int_equal(r.rows_mlp, 3000);
    assert_true(r.rows_cnn > 1000);
    const carma_coeffs *d = carma_default_coeffs();
    for (int i = 0; i < CARMA_NCOEF; i++)
        assert_true(fabs(c.c[i] - d->c[i]) <= 1e-9 * fabs(d->c[i]));
    assert_true(fabs(c.margin - d->margin) <= 1e-9);
    /* the fit explains the synthetic data: medians near 1, the margin covers 95 % of CNN rows */
    assert_true(fabs(r.median_ratio_mlp - 1) < 0.02 && fabs(r.median_ratio_cnn - 1) < 0.05);
    assert_true(r.under_cnn <= r.rows_cnn / 20 + 1);
    assert_true(c.c[0] > 500 && c.c[0] < 3000); /* a CUDA context of a sensible size */
}

static void test_fit_bad_input(void **state)
{
    (void)state;
    carma_coeffs c;
    carma_err err;
    assert_int_equal(carma_fit("/nonexistent.csv", GMN "/mlp_data_step2.csv", &c, NULL, &err), -1);
    carma_workload w;
    assert_int_equal(carma_workload_from_tuples("[('linear', 12)]", &w, &err), -1);
    assert_int_equal(carma_workload_from_tuples("[]", &w, &err), -1);
    assert_int_equal(carma_workload_from_tuples("[('linear', 12, 40), ('ReLU', 12, 0)]", &w, &err),
                     0);
    assert_int_equal(w.n, 2);
    assert_true(w.layers[0].elems == 0 && w.layers[1].elems == 12); /* ReLU keeps its output */
    carma_workload_free(&w);
}

static void test_estimates_behave(void **state)
{
    (void)state;
    model_summary s;
    carma_err err;
    assert_int_equal(summary_load(GMN "/summaries/resnet50_32.model", &s, &err), 0);
    carma_workload w;
    assert_int_equal(carma_workload_from_summary(&s, 0, &w, &err), 0);
    assert_true(w.has_conv);
    const carma_coeffs *c = carma_default_coeffs();
    uint64_t b32 = carma_estimate_mib(c, &w, 32, OPT_ADAM),
             b64 = carma_estimate_mib(c, &w, 64, OPT_ADAM);
    assert_true(b64 > b32);
    assert_true(carma_estimate_mib(c, &w, 32, OPT_SGD) < b32);
    carma_terms t;
    carma_terms_of(&w, 32, OPT_ADAM, &t);
    /* 25.6 M parameters x 4 copies x 4 bytes = 390 MiB, plus per-tensor rounding */
    assert_true(t.x[2] > 380 && t.x[2] < 480);
    carma_workload_free(&w);
    summary_free(&s);
}

static void test_transformer_attention(void **state)
{
    (void)state;
    /* XLNet computes its attention scores itself (S x S per head); BERT uses SDPA */
    model_summary x, b;
    carma_err err;
    assert_int_equal(summary_load(GMN "/summaries/xlnet_base_cased_bs:8_sl:512.txt", &x, &err), 0);
    assert_int_equal(summary_load(GMN "/summaries/BERT_base_bs:32_sl:512.txt", &b, &err), 0);
    carma_workload wx, wb;
    assert_int_equal(carma_workload_from_summary(&x, 512, &wx, &err), 0);
    assert_int_equal(carma_workload_from_summary(&b, 512, &wb, &err), 0);
    double scores = 2.25 * 12 * 512.0 * 512.0; /* 12 heads x S^2, softmax + dropout + mask */
    int attn_x = 0, attn_b = 0;
    for (size_t i = 0; i < wx.n; i++)
        attn_x += wx.layers[i].elems == scores;
    for (size_t i = 0; i < wb.n; i++)
        attn_b += wb.layers[i].elems == scores;
    assert_int_equal(attn_x, 12);
    assert_int_equal(attn_b, 0);
    carma_workload_free(&wx);
    carma_workload_free(&wb);
    summary_free(&x);
    summary_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_rounding),
        cmocka_unit_test(test_kept_weights),
        cmocka_unit_test(test_fit_reproduces_defaults),
        cmocka_unit_test(test_fit_bad_input),
        cmocka_unit_test(test_estimates_behave),
        cmocka_unit_test(test_transformer_attention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
