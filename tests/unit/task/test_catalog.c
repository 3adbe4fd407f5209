/* test_catalog.c — the workload catalog: all 52 shipped rows load with their exact figures,
 * optional activity columns, and errors for malformed catalogs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpfile_fixture.h"

#include "task/catalog.h"
#include "task/rad.h"

#define CATALOG CARMA_DATA_DIR "/workloads.csv"

static void expect_load_error(const char *text, const char *frag1, const char *frag2)
{
    char *path = write_tmp(text);
    workload_catalog c;
    carma_err err = {{0}};
    int rc = catalog_load(path, &c, &err);
    unlink(path);
    if (rc != -1)
        fail_msg("accepted:\n%s", text);
    assert_non_null(strstr(err.msg, path));
    if (!strstr(err.msg, frag1) || (frag2 && !strstr(err.msg, frag2)))
        fail_msg("message '%s' lacks '%s' / '%s'", err.msg, frag1, frag2 ? frag2 : "");
    assert_null(c.items);
    assert_int_equal(c.n, 0);
    free(path);
}

static void test_shipped_catalog(void **state)
{
    (void)state;
    workload_catalog c;
    carma_err err;
    uint64_t mib;
    if (catalog_load(CATALOG, &c, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(c.n, 52 + 53); /* CARMA's .rad rows, then AEGIS's workloads */

    const workload *w = catalog_find(&c, "resnet18_cifar100_20e_1.rad");
    assert_non_null(w);
    assert_string_equal(w->model_name, "resnet18");
    assert_string_equal(w->size_class, "light");
    assert_string_equal(w->script, "resnet18_cifar100.py");
    assert_string_equal(w->summary_file, "resnet18_cifar100.model");
    assert_string_equal(w->dataset, "cifar100");
    assert_int_equal(w->batch_size, 32);
    assert_int_equal(w->ngpus, 1);
    assert_int_equal(w->epochs, 20);
    assert_true(mem_figures_get(&w->mem, MEM_ORACLE, &mib));
    assert_int_equal(mib, 788);
    assert_true(mem_figures_get(&w->mem, MEM_HORUS, &mib));
    assert_int_equal(mib, 2231);
    assert_true(mem_figures_get(&w->mem, MEM_FAKETENSOR, &mib));
    assert_int_equal(mib, 53);
    assert_true(mem_figures_get(&w->mem, MEM_GPUMEMNET, &mib));
    assert_int_equal(mib, 8000);
    assert_false(mem_figures_get(&w->mem, MEM_CARMA, &mib));
    /* measured on an A100 by AEGIS (tools/aegis_import.py, data/README.md) */
    assert_float_equal(w->sim.solo_runtime_s, 7.7218 * 60, 1e-9);
    assert_float_equal(w->sim.smact, 0.1736, 1e-9);
    assert_float_equal(w->sim.smocc, 0.0634, 1e-9);
    assert_float_equal(w->sim.drama, 0.0496, 1e-9);
    assert_float_equal(w->profile.startup_s, 3.02, 1e-9);
    assert_true(w->profile.peaks_known);
    assert_int_equal(w->profile.peak_early_mib, 790);
    assert_int_equal(w->profile.peak_full_mib, 790);
    assert_float_equal(w->profile.util, 0.3619, 1e-9);
    assert_int_equal(w->profile.lucid_class, 0);

    w = catalog_find(&c, "/any/dir/xlnet_base_cased_2.rad"); /* directory part ignored */
    assert_non_null(w);
    assert_int_equal(w->ngpus, 2);
    assert_float_equal(w->sim.solo_runtime_s, 58.6132 * 60, 1e-9);
    assert_int_equal(w->profile.peak_early_mib, 8890); /* a ramp: 8890 MiB early, 8988 later */
    assert_int_equal(w->profile.peak_full_mib, 8988);

    w = catalog_find(&c, "gpt2_xl.rad"); /* no line 9, but measured by AEGIS */
    assert_non_null(w);
    assert_false(mem_figures_get(&w->mem, MEM_ORACLE, &mib));
    assert_int_equal(w->profile.peak_full_mib, 40182);
    assert_float_equal(w->sim.solo_runtime_s, 240.8105 * 60, 1e-9);
    w = catalog_find(&c, "llama3_width_8layer_wiki_bs1_1gpu"); /* AEGIS only, no loop time */
    assert_non_null(w);
    assert_true(isnan(w->profile.startup_s));

    w = catalog_find(&c, "mnist_train.rad");
    assert_int_equal(w->batch_size, 64); /* the effective batch, not line 6's 32 */
    assert_float_equal(w->sim.solo_runtime_s, 2.3408 * 60, 1e-9); /* AEGIS's mnist run */

    assert_null(catalog_find(&c, "densenet3.rad"));
    assert_null(catalog_find(&c, NULL));
    int two_gpu = 0;
    for (size_t i = 0; i < c.n; i++)
        two_gpu += c.items[i].ngpus == 2;
    assert_int_equal(two_gpu, 3 + 3);
    catalog_free(&c);
}

static void test_catalog_to_task(void **state)
{
    (void)state;
    workload_catalog c;
    carma_err err;
    task_spec t;
    assert_int_equal(catalog_load(CATALOG, &c, &err), 0);
    assert_int_equal(catalog_to_task(catalog_find(&c, "gpt2_large_2.rad"), &t, &err), 0);
    assert_string_equal(t.name, "gpt2_large_2.rad");
    assert_int_equal(t.ngpus, 2);
    assert_int_equal(t.mem.mib[MEM_ORACLE], 28356);
    assert_int_equal(t.batch_size, 8);
    assert_float_equal(t.sim.solo_runtime_s, 66.3538 * 60, 1e-9); /* AEGIS's A100 solo run */
    assert_string_equal(t.summary_path, "gpt2_large.model");
    assert_string_equal(t.dataset, "wiki");
    assert_int_equal(t.max_retries, -1);
    catalog_free(&c);
    task_spec_free(&t);
}

static void test_activity_columns(void **state)
{
    (void)state;
    char *path = write_tmp("rad_file,model_name,gpus_line8,measured_mem_mb_line9,"
                           "exclusive_runtime_min,solo_smact,solo_smocc,solo_drama\n"
                           "a.rad,a,1,100,2,0.5,0.25,\n"
                           "\"b,c.rad\",b,4,,0.5,1,0,0.75\n");
    workload_catalog c;
    carma_err err;
    int rc = catalog_load(path, &c, &err);
    unlink(path);
    free(path);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(c.n, 2);
    assert_true(c.items[0].sim.smact == 0.5);
    assert_true(c.items[0].sim.smocc == 0.25);
    assert_true(isnan(c.items[0].sim.drama));
    assert_true(c.items[0].sim.solo_runtime_s == 120);
    assert_int_equal(c.items[0].batch_size, 0); /* no batch columns */
    assert_null(c.items[0].dataset);
    assert_non_null(catalog_find(&c, "b,c.rad"));
    assert_int_equal(c.items[1].ngpus, 4);
    assert_true(c.items[1].sim.drama == 0.75);
    catalog_free(&c);
}

#define HDR "rad_file,model_name,gpus_line8,measured_mem_mb_line9,exclusive_runtime_min\n"

static void test_malformed_catalogs(void **state)
{
    (void)state;
    expect_load_error("rad_file,model_name,gpus_line8,exclusive_runtime_min\na,a,1,2\n",
                      "missing column 'measured_mem_mb_line9'", NULL);
    expect_load_error(HDR, "no workloads", NULL);
    expect_load_error("", "empty file", NULL);
    expect_load_error(HDR "a.rad,a,1.5,100,2\n", ":2: gpus_line8: expected a whole number", NULL);
    expect_load_error(HDR "a.rad,a,,100,2\n", ":2: gpus_line8", "the number of GPUs");
    expect_load_error(HDR "a.rad,a,0,100,2\n", ":2: gpus_line8", NULL);
    expect_load_error(HDR "a.rad,a,1,-5,2\n", ":2: measured_mem_mb_line9", NULL);
    expect_load_error(HDR "a.rad,a,1,lots,2\n", ":2: measured_mem_mb_line9", "'lots'");
    expect_load_error(HDR "a.rad,a,1,100,soon\n", ":2: exclusive_runtime_min", NULL);
    /* a figure of 0 (or under 1 MiB, cut to 0) would be a task that needs no memory, a
     * runtime of 0 the simulator's "unknown": blank cells say unknown */
    expect_load_error(HDR "a.rad,a,1,0,2\n", ":2: measured_mem_mb_line9", "at least 1 MiB");
    expect_load_error(HDR "a.rad,a,1,0.5,2\n", ":2: measured_mem_mb_line9", "at least 1 MiB");
    expect_load_error("rad_file,model_name,gpus_line8,measured_mem_mb_line9,exclusive_runtime_min,"
                      "horus_est_mb_line10\na.rad,a,1,100,2,0\n",
                      ":2: horus_est_mb_line10", "at least 1 MiB");
    expect_load_error(HDR "a.rad,a,1,100,0\n", ":2: exclusive_runtime_min", "more than 0");
    expect_load_error(HDR "a.rad,a,1,100,2\nb.rad,b,1,100\n", ":3:", "expected 5 fields");
    expect_load_error(HDR "a.rad,a,1,100,2\nb.rad,b,1,1,1\na.rad,c,1,1,1\n",
                      ":4: rad_file 'a.rad' appears twice (first on line 2)", NULL);
    expect_load_error(HDR ",a,1,100,2\n", ":2: rad_file", NULL);
    expect_load_error(HDR "\"a.rad,a,1,100,2\n", "unterminated quoted field", NULL);
    expect_load_error("rad_file,model_name,gpus_line8,measured_mem_mb_line9,exclusive_runtime_min,"
                      "solo_smact\na.rad,a,1,100,2,1.2\n",
                      ":2: solo_smact", NULL);
    /* The profile columns: both peaks or neither, early <= full, fractions, classes 0..2. */
#define PHDR HDR_COLS ",startup_s,peak_early_mib,peak_full_mib,profiled_util,lucid_class\n"
#define HDR_COLS "rad_file,model_name,gpus_line8,measured_mem_mb_line9,exclusive_runtime_min"
    expect_load_error(PHDR "a.rad,a,1,100,2,1,500,,0.5,1\n", ":2: peak_full_mib",
                      "both peaks");
    expect_load_error(PHDR "a.rad,a,1,100,2,1,900,800,0.5,1\n", ":2: peak_early_mib",
                      "no larger than");
    expect_load_error(PHDR "a.rad,a,1,100,2,1,500,600,1.5,1\n", ":2: profiled_util", NULL);
    expect_load_error(PHDR "a.rad,a,1,100,2,1,0,0,0.5,1\n", ":2: peak_full_mib", "at least 1");
    expect_load_error(PHDR "a.rad,a,1,100,2,1,500,600,0.5,3\n", ":2: lucid_class", NULL);
    expect_load_error(PHDR "a.rad,a,1,100,2,-4,500,600,0.5,1\n", ":2: startup_s", NULL);
    /* one peak column without the other (found by fuzz/fuzz_catalog: the message read the
     * absent column's cell, index -1) */
    expect_load_error(HDR_COLS ",peak_full_mib\na.rad,a,1,100,2,600\n",
                      ":2: peak_full_mib needs a peak_early_mib column", NULL);
    expect_load_error(HDR_COLS ",peak_early_mib\na.rad,a,1,100,2,500\n",
                      ":2: peak_early_mib needs a peak_full_mib column", NULL);
}

/* The .rad fixtures were written from catalog rows: both readers must agree on them. */
static void test_rad_fixtures_match_catalog(void **state)
{
    (void)state;
    static const char *const names[] = {"resnet18_cifar100_20e_1.rad", "BERT_base.rad",
                                        "gpt2_large_2.rad", "dlrm.rad"};
    workload_catalog c;
    carma_err err;
    assert_int_equal(catalog_load(CATALOG, &c, &err), 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/rad/%s", CARMA_TEST_DATA, names[i]);
        task_spec t;
        if (rad_load(path, &t, &err))
            fail_msg("%s", err.msg);
        const workload *w = catalog_find(&c, path);
        assert_non_null(w);
        assert_int_equal(t.ngpus, w->ngpus);
        assert_int_equal(t.mem.known, w->mem.known);
        for (int s = 0; s < MEM_SOURCE_COUNT; s++)
            assert_int_equal(t.mem.mib[s], w->mem.mib[s]);
        assert_int_equal(t.batch_size, w->batch_size);
        assert_string_equal(t.summary_path, w->summary_file);
        assert_string_equal(t.dataset, w->dataset);
        task_spec_free(&t);
    }
    catalog_free(&c);
}

static void test_missing_file(void **state)
{
    (void)state;
    workload_catalog c;
    carma_err err;
    assert_int_equal(catalog_load("/nonexistent/workloads.csv", &c, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/workloads.csv"));
    catalog_free(&c); /* safe after a failed load */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_catalog),
        cmocka_unit_test(test_catalog_to_task),
        cmocka_unit_test(test_activity_columns),
        cmocka_unit_test(test_malformed_catalogs),
        cmocka_unit_test(test_rad_fixtures_match_catalog),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
