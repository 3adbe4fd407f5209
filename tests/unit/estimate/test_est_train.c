/* test_est_train.c — the MLP-ensemble trainer learns, is deterministic, and its weights file
 * loads back into the inference code with the same predictions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "estimate/mlpnet.h"
#include "estimate/mlptrain.h"

#define GMN CARMA_DATA_DIR "/gpumemnet"

static void test_learns_and_round_trips(void **state)
{
    (void)state;
    mlp_dataset d;
    carma_err err;
    assert_int_equal(mlp_dataset_load_mlp(GMN "/mlp_data_step2.csv", &d, &err), 0);
    assert_int_equal(d.n, 3000);
    assert_int_equal(d.nin, 8);
    /* a short run on 900 rows, tested on 600 others */
    size_t train[900], test[600];
    for (size_t i = 0; i < 900; i++)
        train[i] = i;
    for (size_t i = 0; i < 600; i++)
        test[i] = 900 + i;
    size_t majority = 0;
    for (size_t i = 0; i < 600; i++)
        majority += d.y[test[i]] == 0;
    train_options o;
    train_options_defaults(&o);
    o.epochs = 40;
    mlp_net a, b;
    assert_int_equal(mlp_train(&d, train, 900, &o, &a, &err), 0);
    assert_int_equal(a.nmembers, 13);
    double acc = mlp_accuracy(&a, &d, test, 600, NULL);
    double chance = (double)majority / 600; /* always guessing the largest class */
    assert_true(acc > chance + 0.05);
    assert_true(acc > 0.9);
    /* deterministic: the same seed gives the same network */
    assert_int_equal(mlp_train(&d, train, 900, &o, &b, &err), 0);
    assert_memory_equal(a.members[3].layers[0].w, b.members[3].layers[0].w, 8 * 8 * sizeof(double));
    mlp_net_free(&b);
    /* written weights load into the inference code and predict the same classes */
    char path[] = "/tmp/carma_test_ensXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_int_equal(mlp_net_write(&a, f, "test"), 0);
    fclose(f);
    mlp_net c;
    assert_int_equal(mlp_net_load(path, 8, &c, &err), 0);
    assert_int_equal(c.nmembers, 13);
    for (size_t i = 0; i < 600; i++)
        assert_int_equal(mlp_net_predict(&c, d.x + test[i] * 8),
                         mlp_net_predict(&a, d.x + test[i] * 8));
    unlink(path);
    mlp_net_free(&c);
    mlp_net_free(&a);
    mlp_dataset_free(&d);
}

static void test_bad_options(void **state)
{
    (void)state;
    mlp_dataset d;
    carma_err err;
    assert_int_equal(mlp_dataset_load_mlp("/nonexistent.csv", &d, &err), -1);
    assert_int_equal(mlp_dataset_load_mlp(GMN "/realworld_eval.csv", &d, &err), -1);
    assert_non_null(strstr(err.msg, "missing column"));
    assert_int_equal(mlp_dataset_load_mlp(GMN "/mlp_data_step2.csv", &d, &err), 0);
    train_options o;
    train_options_defaults(&o);
    cv_result cv;
    assert_int_equal(mlp_cross_validate(&d, 1, &o, &cv, &err), -1);
    assert_int_equal(mlp_cross_validate(&d, MLP_MAX_FOLDS + 1, &o, &cv, &err), -1);
    mlp_net n;
    assert_int_equal(mlp_train(&d, (const size_t[]){0}, 1, &o, &n, &err), -1);
    mlp_dataset_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_learns_and_round_trips),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
