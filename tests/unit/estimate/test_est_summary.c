/* test_est_summary.c — summary parsers and GPUMemNet features against the reference's table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "estimate/features.h"
#include "estimate/summary.h"
#include "util/csv.h"
#include "util/strutil.h"

#define SUMDIR CARMA_DATA_DIR "/gpumemnet/summaries"

static void test_all_summaries_parse(void **state)
{
    (void)state;
    DIR *d = opendir(SUMDIR);
    assert_non_null(d);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", SUMDIR, e->d_name);
        model_summary s;
        carma_err err = {{0}};
        int rc = summary_load(path, &s, &err);
        if (rc)
            fprintf(stderr, "%s\n", err.msg);
        assert_int_equal(rc, 0);
        assert_true(s.n > 0);
        assert_true(s.has_total);
        summary_free(&s);
        count++;
    }
    closedir(d);
    assert_int_equal(count, 54);
}

static int field_int(const csv_table *t, const csv_row *r, const char *col)
{
    int c = csv_column(t, col);
    assert_true(c >= 0);
    int64_t v = 0;
    if (!r->fields[c][0])
        return 0;
    assert_int_equal(parse_i64(r->fields[c], &v), 0);
    return (int)v;
}

static double field_num(const csv_table *t, const csv_row *r, const char *col)
{
    int c = csv_column(t, col);
    assert_true(c >= 0);
    double v = 0;
    assert_int_equal(parse_double(r->fields[c], &v), 0);
    return v;
}

static void test_features_match_reference(void **state)
{
    (void)state;
    csv_table t;
    carma_err err;
    assert_int_equal(csv_load(CARMA_DATA_DIR "/gpumemnet/realworld_features.csv", &t, &err), 0);
    assert_int_equal(t.nrows, 24);
    int c_file = csv_column(&t, "summary_file"), c_dom = csv_column(&t, "dominant_activation");
    for (size_t i = 0; i < t.nrows; i++) {
        const csv_row *r = &t.rows[i];
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", SUMDIR, r->fields[c_file]);
        model_summary s;
        assert_int_equal(summary_load(path, &s, &err), 0);
        gmn_features f;
        features_from_summary(&s, field_int(&t, r, "seq_len"), &f);
        summary_free(&s);
        if (f.A != field_num(&t, r, "A_per_sample") || f.P != field_num(&t, r, "P_total"))
            fprintf(stderr, "%s: A %.0f P %.0f\n", r->fields[c_file], f.A, f.P);
        assert_true(f.A == field_num(&t, r, "A_per_sample"));
        assert_true(f.P == field_num(&t, r, "P_total"));
        assert_int_equal(f.n_dropout, field_int(&t, r, "n_dropout"));
        assert_int_equal(f.n_linear, field_int(&t, r, "n_linear"));
        assert_int_equal(f.depth, field_int(&t, r, "depth_all_parsed"));
        if (f.family == FAMILY_CNN) {
            assert_int_equal(f.n_conv2d, field_int(&t, r, "n_conv2d"));
            assert_int_equal(f.n_batchnorm2d, field_int(&t, r, "n_batchnorm2d"));
            assert_int_equal(f.n_adaptive_pool, field_int(&t, r, "n_adaptiveavgpool2d"));
            assert_int_equal(f.n_softmax, field_int(&t, r, "n_softmax"));
            assert_int_equal(f.n_activation, field_int(&t, r, "n_activation_layers"));
            assert_string_equal(f.dominant, r->fields[c_dom]);
        } else {
            assert_int_equal(f.n_layernorm, field_int(&t, r, "n_layernorm"));
            assert_int_equal(f.n_embedding, field_int(&t, r, "n_embedding"));
            assert_int_equal(f.n_ndq_linear, field_int(&t, r, "n_ndq_linear"));
        }
    }
    csv_free(&t);
}

static void expect_error(const char *text, const char *needle)
{
    model_summary s;
    carma_err err = {{0}};
    assert_int_equal(summary_parse("bad.model", text, &s, &err), -1);
    if (!strstr(err.msg, needle))
        fprintf(stderr, "message: %s\n", err.msg);
    assert_non_null(strstr(err.msg, needle));
}

static void test_bad_summaries(void **state)
{
    (void)state;
    expect_error("", "empty");
    expect_error("hello world\nmore\n", "bad.model:1: unknown summary format");
    expect_error("----\n  Layer (type)   Output Shape   Param #\n====\n"
                 "  Conv2d-1  [-1, 3, 4, 4]  12\n"
                 "  garbage here\n====\nTotal params: 12\n",
                 "bad.model:5: not a torchsummary layer row");
    expect_error("----\n  Layer (type)   Output Shape   Param #\n====\n====\nTotal params: 0\n",
                 "no layers");
    expect_error("Net(\n  (fc): Linear(in_features=2, out_features=3, bias=True), 9 params\n"
                 "  (x): what is this\n)\n", "bad.model:3: not a module line");
    expect_error("=====\nLayer (type:depth-idx)   Output Shape   Param #\n=====\n"
                 "Net   [1, 2]\n=====\n", "bad.model:4: not a torchinfo layer row");
}

/* Negative or overflowing sizes used to reach the estimators and come out as figures like
 * 18446744073704752540 MiB; each parser now rejects them, naming the line and the value. */
static void test_bad_sizes(void **state)
{
    (void)state;
    const char *ts_head = "----\n  Layer (type)   Output Shape   Param #\n====\n";
    char text[1024];
    snprintf(text, sizeof text, "%s  Conv2d-1  [-1, 64, -112, 112]  1,792\n====\n", ts_head);
    expect_error(text, "bad.model:4: Conv2d has a negative output dimension -112");
    snprintf(text, sizeof text, "%s  Conv2d-1  [-1, 4294967296, 4294967296, 4294967296]  1,792\n"
                                "====\n", ts_head);
    expect_error(text, "bad.model:4: Conv2d's output shape has more than 1125899906842624");
    snprintf(text, sizeof text, "%s  Linear-1  [-1, 10]  99,999,999,999,999,999\n====\n", ts_head);
    expect_error(text, "bad.model:4: Linear has 99999999999999999 parameters, more than");
    snprintf(text, sizeof text, "%s  Linear-1  [-1, 10]  100\n====\nTotal params: "
                                "18,000,000,000,000,000,000\n", ts_head);
    expect_error(text, "total of 18000000000000000000 parameters is more than");
    /* torchinfo: the batch is printed, so no dimension may be negative */
    expect_error("=====\nLayer (type:depth-idx)   Output Shape   Param #\n=====\n"
                 "Linear: 1-1   [-8, 10]   110\n=====\n",
                 "bad.model:4: Linear has a negative output dimension -8");
    expect_error("Net(\n  (emb): Embedding(512, -76800000), 9 params\n)\n",
                 "bad.model:2: Embedding has a negative size -76800000");
    expect_error("Net(\n  (fc): Linear(in_features=-2, out_features=3, bias=True), 9 params\n)\n",
                 "bad.model:2: Linear has a negative size -2");
    expect_error("Net(\n  (fc): Linear(in_features=2, out_features=99999999999999999999, "
                 "bias=True), 9 params\n)\n",
                 "bad.model:2: Linear has a size of 9223372036854775807, more than");
}

static void test_torchinfo_rows(void **state)
{
    (void)state;
    model_summary s;
    carma_err err;
    assert_int_equal(summary_load(SUMDIR "/dlrm.model", &s, &err), 0);
    assert_int_equal(s.format, SUMMARY_TORCHINFO);
    assert_int_equal(s.total_params, 909313);
    /* "│    └─Linear: 2-1  [32768, 13]  [32768, 512]  7,168" */
    assert_string_equal(s.layers[2].type, "Linear");
    assert_int_equal(s.layers[2].depth, 2);
    assert_int_equal(s.layers[2].params, 7168);
    assert_int_equal(summary_layer_elems(&s.layers[2]), 512);
    assert_true(s.layers[2].leaf);
    assert_false(s.layers[1].leaf); /* Sequential: 1-1 has children */
    summary_free(&s);
}

/* A NUL byte would end the text read as a C string: the rest of the file was silently dropped. */
static void test_nul_refused(void **state)
{
    (void)state;
    char path[] = "/tmp/carma_test_sumXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char text[] = "Linear-1  [-1, 9]  90\n\0Linear-2  [-1, 9]  90\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    model_summary s;
    carma_err err = {{0}};
    assert_int_equal(summary_load(path, &s, &err), -1);
    assert_non_null(strstr(err.msg, ":2: contains a NUL byte"));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_summaries_parse),
        cmocka_unit_test(test_features_match_reference),
        cmocka_unit_test(test_bad_summaries),
        cmocka_unit_test(test_bad_sizes),
        cmocka_unit_test(test_torchinfo_rows),
        cmocka_unit_test(test_nul_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
