/* test_est_gpumemnet.c — GPUMemNet inference from the published weights and the Horus formula,
 * against the reference's test vectors (realworld_features.csv, realworld_eval.csv). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "estimate/gpumemnet.h"
#include "estimate/horus.h"
#include "estimate/summary.h"
#include "util/csv.h"
#include "util/strutil.h"

#define GMN CARMA_DATA_DIR "/gpumemnet"

static void features_of(const char *file, int seq_len, gmn_features *f)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/summaries/%s", GMN, file);
    model_summary s;
    carma_err err;
    assert_int_equal(summary_load(path, &s, &err), 0);
    features_from_summary(&s, seq_len, f);
    summary_free(&s);
}

static int64_t col_int(const csv_table *t, size_t row, const char *name)
{
    int c = csv_column(t, name);
    assert_true(c >= 0);
    int64_t v;
    assert_int_equal(parse_i64(t->rows[row].fields[c], &v), 0);
    return v;
}

static void test_published_classes(void **state)
{
    (void)state;
    setenv("CARMA_DATA_DIR", CARMA_DATA_DIR, 1);
    mlp_net cnn, trans;
    carma_err err;
    assert_int_equal(gpumemnet_load(FAMILY_CNN, &cnn, &err), 0);
    assert_int_equal(gpumemnet_load(FAMILY_TRANSFORMER, &trans, &err), 0);
    assert_int_equal(cnn.nin, 9);
    assert_int_equal(trans.nin, 8);
    assert_int_equal(cnn.nout, 6);
    csv_table t;
    assert_int_equal(csv_load(GMN "/realworld_features.csv", &t, &err), 0);
    int c_file = csv_column(&t, "summary_file"), c_sl = csv_column(&t, "seq_len");
    int classes_seen = 0;
    for (size_t i = 0; i < t.nrows; i++) {
        gmn_features f;
        int64_t sl = 0;
        if (t.rows[i].fields[c_sl][0])
            parse_i64(t.rows[i].fields[c_sl], &sl);
        features_of(t.rows[i].fields[c_file], (int)sl, &f);
        int batch = (int)col_int(&t, i, "batch_size");
        int cls = gpumemnet_class(f.family == FAMILY_CNN ? &cnn : &trans, &f, batch);
        int want = (int)col_int(&t, i, "cls_single_published");
        if (cls != want)
            fprintf(stderr, "%s: class %d, published %d\n", t.rows[i].fields[c_file], cls, want);
        assert_int_equal(cls, want);
        classes_seen |= 1 << cls;
    }
    assert_true(classes_seen & (1 << 5)); /* the GPT-2 rows reach the top class */
    assert_int_equal(gpumemnet_class_mib(5), 48000);
    assert_int_equal(gpumemnet_class_mib(0), 8000);
    csv_free(&t);
    mlp_net_free(&cnn);
    mlp_net_free(&trans);
}

static void test_horus_column(void **state)
{
    (void)state;
    csv_table t;
    carma_err err;
    assert_int_equal(csv_load(GMN "/realworld_eval.csv", &t, &err), 0);
    assert_int_equal(t.nrows, 18);
    int c_file = csv_column(&t, "summary_file"), c_h = csv_column(&t, "horus_mib");
    double worst = 0;
    for (size_t i = 0; i < t.nrows; i++) {
        gmn_features f;
        features_of(t.rows[i].fields[c_file], 512, &f);
        double want;
        assert_int_equal(parse_double(t.rows[i].fields[c_h], &want), 0);
        double got = horus_mib(&f, (int)col_int(&t, i, "batch_size"));
        double dev = fabs(got - want) / want;
        worst = dev > worst ? dev : worst;
    }
    assert_true(worst < 0.005);
    csv_free(&t);
}

static void test_bad_weights(void **state)
{
    (void)state;
    mlp_net net;
    carma_err err = {{0}};
    assert_int_equal(mlp_net_load("/nonexistent/w.txt", 9, &net, &err), -1);
    assert_non_null(strstr(err.msg, "cannot read weights file: /nonexistent/w.txt"));
    char path[] = "/tmp/carma_test_wXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("# truncated\ntensor model.fc1.weight f32 2 2 3\n1 2 3 4\n", f);
    fclose(f);
    assert_int_equal(mlp_net_load(path, 0, &net, &err), -1);
    assert_non_null(strstr(err.msg, ":3: tensor model.fc1.weight: value 5 missing"));
    f = fopen(path, "w");
    fputs("tensor model.fc1.weight f32 2 2 3\n1 2 3 4 5 6\n", f);
    fclose(f);
    assert_int_equal(mlp_net_load(path, 0, &net, &err), -1);
    assert_non_null(strstr(err.msg, "missing tensor model.fc1.bias"));
    f = fopen(path, "w");
    fputs("# header\n\ntensor model.fc1.weight f32 2 1 1\n1\n\nweights follow\n", f);
    fclose(f);
    assert_int_equal(mlp_net_load(path, 0, &net, &err), -1);
    assert_non_null(strstr(err.msg, ":6: expected a 'tensor"));
    f = fopen(path, "w");
    fputs("tensor model.fc1.weight f32 2 1 1\n1 2\n", f);
    fclose(f);
    assert_int_equal(mlp_net_load(path, 0, &net, &err), -1);
    /* a NUL byte ended the text read as a C string: the rest was silently dropped */
    f = fopen(path, "w");
    fputs("tensor model.fc1.weight f32 2 1 1\n1\n", f);
    fputc('\0', f);
    fclose(f);
    assert_int_equal(mlp_net_load(path, 0, &net, &err), -1);
    assert_non_null(strstr(err.msg, ":3: contains a NUL byte"));
    f = fopen(path, "w");
    fputs("tensor model.fc1.weight f32 2 1 1\n1 2\n", f);
    fclose(f);
    assert_int_equal(mlp_net_load(path, 0, &net, &err), -1);
    assert_non_null(strstr(err.msg, ":2: tensor model.fc1.weight has more than 1 values"));
    f = fopen(path, "w");
    fputs("tensor model.fc1.weight f32 2 2 3\n1 2 3 4 5 6\n", f);
    fclose(f);
    assert_int_equal(mlp_net_load(path, 0, &net, &err), -1);
    assert_non_null(strstr(err.msg, "missing tensor model.fc1.bias"));
    /* a header that claims 62 GB of values over a short line (found by fuzz/fuzz_weights: the
     * values array was allocated at the claimed size before any value was read) */
    f = fopen(path, "w");
    fputs("tensor model.fc1.weight f64 2 8 973564148\n0.5 -0.25\n", f);
    fclose(f);
    int rc = mlp_net_load(path, 0, &net, &err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err.msg, ":2: tensor model.fc1.weight: value 3 missing"));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_classes),
        cmocka_unit_test(test_horus_column),
        cmocka_unit_test(test_bad_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
