/* test_rad.c — the .rad reader: exact values from good files, and one test per kind of bad
 * input, each checking that the message names the file and the line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "task/rad.h"
#include "task/taskload.h"

#define RAD_DIR CARMA_TEST_DATA "/rad/"

/* The 12 lines of resnet18_cifar100_20e_1.rad, the template the bad inputs are made from. */
static const char *const good_lines[12] = {
    "# assumption is that model.txt file is in this directory",
    "conda activate tf",
    "python workloads/resnet18_cifar100.py --batch_size 32 --epochs 20",
    "resnet18_cifar100.model",
    "cifar100",
    "32",
    "exclusive",
    "1",
    "788",
    "2231.6129",
    "53.99452972",
    "8000",
};

/* The template with line `lineno` (1-based; 0 = none) replaced, and only `nlines` lines. */
static char *make_rad(size_t nlines, size_t lineno, const char *replacement)
{
    static char buf[65536];
    buf[0] = '\0';
    for (size_t i = 0; i < nlines; i++) {
        strcat(buf, i + 1 == lineno ? replacement : good_lines[i]);
        strcat(buf, "\n");
    }
    return buf;
}

/* Parses text expecting failure; checks the message contains every given fragment. */
static void expect_error(const char *text, const char *frag1, const char *frag2)
{
    task_spec t;
    carma_err err = {{0}};
    assert_int_equal(rad_parse("bad.rad", text, strlen(text), &t, &err), -1);
    assert_non_null(strstr(err.msg, frag1));
    if (frag2 && !strstr(err.msg, frag2))
        fail_msg("message '%s' lacks '%s'", err.msg, frag2);
    assert_null(t.command); /* nothing half-filled is left behind */
    assert_null(t.name);
}

static void check_resnet18(const task_spec *t)
{
    uint64_t mib;
    assert_string_equal(t->command,
                        "python workloads/resnet18_cifar100.py --batch_size 32 --epochs 20");
    assert_string_equal(t->conda_env, "tf");
    assert_string_equal(t->summary_path, "resnet18_cifar100.model");
    assert_string_equal(t->dataset, "cifar100");
    assert_int_equal(t->batch_size, 32);
    assert_string_equal(t->collocation_mode, "exclusive");
    assert_int_equal(t->ngpus, 1);
    assert_true(mem_figures_get(&t->mem, MEM_ORACLE, &mib));
    assert_int_equal(mib, 788);
    assert_true(mem_figures_get(&t->mem, MEM_HORUS, &mib));
    assert_int_equal(mib, 2231); /* int(float("2231.6129")) */
    assert_true(mem_figures_get(&t->mem, MEM_FAKETENSOR, &mib));
    assert_int_equal(mib, 53);
    assert_true(mem_figures_get(&t->mem, MEM_GPUMEMNET, &mib));
    assert_int_equal(mib, 8000);
    assert_false(mem_figures_get(&t->mem, MEM_CARMA, &mib));
    assert_null(t->workdir);
    assert_int_equal(t->max_retries, -1);
}

static void test_resnet18_file(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(rad_load(RAD_DIR "resnet18_cifar100_20e_1.rad", &t, &err), 0);
    check_resnet18(&t);
    assert_string_equal(t.name, "resnet18_cifar100_20e_1.rad");
    assert_string_equal(t.source_path, RAD_DIR "resnet18_cifar100_20e_1.rad");
    assert_int_equal(task_spec_validate(&t, "x", &err), 0);
    task_spec_free(&t);
}

static void test_two_gpu_and_capped_estimates(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    uint64_t mib;
    assert_int_equal(task_load_file(RAD_DIR "gpt2_large_2.rad", &t, &err), 0);
    assert_int_equal(t.ngpus, 2);
    assert_true(mem_figures_get(&t.mem, MEM_ORACLE, &mib));
    assert_int_equal(mib, 28356);
    for (mem_source s = MEM_HORUS; s <= MEM_GPUMEMNET; s++) {
        assert_true(mem_figures_get(&t.mem, s, &mib));
        assert_int_equal(mib, 40000); /* the "capped" figure is kept as a figure */
    }
    task_spec_free(&t);
    assert_int_equal(rad_load(RAD_DIR "BERT_base.rad", &t, &err), 0);
    assert_true(mem_figures_get(&t.mem, MEM_HORUS, &mib));
    assert_int_equal(mib, 17456);
    assert_string_equal(t.command, "python workloads/BERT_base_on_wiki.py");
    task_spec_free(&t);
}

static void test_long_command(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(rad_load(RAD_DIR "dlrm.rad", &t, &err), 0);
    assert_int_equal(t.batch_size, 32768);
    assert_non_null(strstr(t.command, "--mini-batch-size=32768"));
    assert_non_null(strstr(t.command, "--use-gpu"));
    assert_string_equal(t.dataset, "/raid/dataset/dlrm_days");
    task_spec_free(&t);
}

static void test_crlf_and_bom(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(rad_load(RAD_DIR "crlf_bom.rad", &t, &err), 0);
    check_resnet18(&t);
    task_spec_free(&t);
}

static void test_optional_estimates(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    uint64_t mib;
    assert_int_equal(rad_load(RAD_DIR "horus_only.rad", &t, &err), 0); /* + blank lines at end */
    assert_true(mem_figures_get(&t.mem, MEM_HORUS, &mib));
    assert_int_equal(mib, 2231);
    assert_false(mem_figures_get(&t.mem, MEM_FAKETENSOR, &mib));
    assert_false(mem_figures_get(&t.mem, MEM_GPUMEMNET, &mib));
    task_spec_free(&t);
    assert_int_equal(rad_load(RAD_DIR "no_estimates.rad", &t, &err), 0);
    assert_true(mem_figures_get(&t.mem, MEM_ORACLE, &mib));
    assert_int_equal(mib, 788);
    assert_int_equal(t.mem.known, 1u << MEM_ORACLE);
    task_spec_free(&t);
}

static void test_no_trailing_newline_and_spaces(void **state)
{
    (void)state;
    const char *text =
        "# c\n  conda activate  myenv  \npython a.py\nm.model\nd\n 64 \nexclusive\n2\n"
        "1000.9";
    task_spec t;
    carma_err err;
    uint64_t mib;
    assert_int_equal(rad_parse("dir/x.rad", text, strlen(text), &t, &err), 0);
    assert_string_equal(t.conda_env, "myenv");
    assert_int_equal(t.batch_size, 64);
    assert_int_equal(t.ngpus, 2);
    assert_true(mem_figures_get(&t.mem, MEM_ORACLE, &mib));
    assert_int_equal(mib, 1000);
    assert_string_equal(t.name, "x.rad");
    task_spec_free(&t);
}

static void test_truncated_gpt2_xl(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(rad_load(RAD_DIR "gpt2_xl.rad", &t, &err), -1);
    assert_string_equal(err.msg, RAD_DIR "gpt2_xl.rad:9: expected the measured peak memory in "
                                         "MiB (line 9), file has only 8 lines");
}

static void test_missing_lines(void **state)
{
    (void)state;
    for (size_t n = 1; n < 9; n++) {
        char want[32];
        snprintf(want, sizeof want, "bad.rad:%zu:", n + 1);
        expect_error(make_rad(n, 0, NULL), want, "file has only");
    }
    expect_error("", "bad.rad: empty file", NULL);
    expect_error("\n\n \n", "bad.rad: empty file", NULL);
}

static void test_empty_required_line(void **state)
{
    (void)state;
    expect_error(make_rad(12, 3, ""),
                 "bad.rad:3:", "the training command (line 3), the line is empty");
    expect_error(make_rad(12, 3, "   \t"), "bad.rad:3:", "the line is empty");
    expect_error(make_rad(12, 4, ""), "bad.rad:4:", "model summary");
    expect_error(make_rad(12, 5, ""), "bad.rad:5:", "dataset");
    expect_error(make_rad(12, 7, ""), "bad.rad:7:", "collocation mode");
    expect_error(make_rad(12, 10, ""), "bad.rad:10:", "Horus");
}

static void test_bad_env_line(void **state)
{
    (void)state;
    expect_error(make_rad(12, 2, "tf"), "bad.rad:2:", "conda activate ENV");
    expect_error(make_rad(12, 2, "conda activate"), "bad.rad:2:", NULL);
    expect_error(make_rad(12, 2, "conda activate tf extra"), "bad.rad:2:", NULL);
    expect_error(make_rad(12, 2, "conda deactivate tf"), "bad.rad:2:", NULL);
}

static void test_bad_numbers(void **state)
{
    (void)state;
    expect_error(make_rad(12, 8, "1.5"), "bad.rad:8:", "whole number, got '1.5'");
    expect_error(make_rad(12, 8, "0"), "bad.rad:8:", "between 1 and 16, got 0");
    expect_error(make_rad(12, 8, "17"), "bad.rad:8:", "between 1 and 16");
    expect_error(make_rad(12, 8, "-1"), "bad.rad:8:", NULL);
    expect_error(make_rad(12, 8, "two"), "bad.rad:8:", "the number of GPUs");
    expect_error(make_rad(12, 6, "32x"), "bad.rad:6:", "batch size");
    expect_error(make_rad(12, 6, "0"), "bad.rad:6:", NULL);
    expect_error(make_rad(12, 9, "-788"), "bad.rad:9:", "between 0");
    expect_error(make_rad(12, 9, "788MB"), "bad.rad:9:", "as a number, got '788MB'");
    expect_error(make_rad(12, 9, "788 12"), "bad.rad:9:", NULL);
    expect_error(make_rad(12, 9, "nan"), "bad.rad:9:", NULL);
    expect_error(make_rad(12, 9, "inf"), "bad.rad:9:", NULL);
    expect_error(make_rad(12, 9, "1e300"), "bad.rad:9:", NULL);
    /* no task runs in no memory: the daemon would refuse it, so the file is refused here */
    expect_error(make_rad(12, 9, "0"), "bad.rad:9:", "must be more than 0 (a task needs");
    expect_error(make_rad(12, 9, "0.5"), "bad.rad:9:", "got '0.5'");
    /* an estimate of 0 neither: refused as a .yaml's estimates: {horus: 0} is */
    expect_error(make_rad(12, 10, "0"), "bad.rad:10:", "must be more than 0, got '0'");
    expect_error(make_rad(12, 12, "0.5"), "bad.rad:12:", "GPUMemNet");
    expect_error(make_rad(12, 11, "n/a"), "bad.rad:11:", "FakeTensor");
    expect_error(make_rad(12, 12, "8000.0.0"), "bad.rad:12:", "GPUMemNet");
}

static void test_extra_and_gap_lines(void **state)
{
    (void)state;
    char text[4096];
    snprintf(text, sizeof text, "%sanother line\n", make_rad(12, 0, NULL));
    expect_error(text, "bad.rad:13:", "at most 12 lines");
    snprintf(text, sizeof text, "%s\n\nx\n", make_rad(12, 0, NULL));
    expect_error(text, "bad.rad:15:", NULL);
    /* 9 lines, a blank 10th, then an 11th: line 10 is empty, not skipped */
    snprintf(text, sizeof text, "%s\n54\n", make_rad(9, 0, NULL));
    expect_error(text, "bad.rad:10:", "the line is empty");
}

static void test_binary_and_control_chars(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(rad_load(RAD_DIR "binary.rad", &t, &err), -1);
    assert_non_null(strstr(err.msg, "binary.rad:3: control character 0x00"));
    expect_error(make_rad(12, 3, "python a.py\x1b[31m"), "bad.rad:3:", "control character 0x1b");
    /* a lone CR is a line end of old Macs, not binary: said so (the whole file is line 1) */
    expect_error(make_rad(12, 5, "a\rb"), "bad.rad:5:", "a carriage return with no newline");
    char text[4096];
    snprintf(text, sizeof text, "%s", make_rad(12, 0, NULL));
    for (char *p = text; (p = strchr(p, '\n')) != NULL;)
        *p = '\r';
    expect_error(text, "bad.rad:1:", "(old Mac line ends?)");
}

static void test_size_limits(void **state)
{
    (void)state;
    char *line = malloc(RAD_MAX_LINE + 2);
    memset(line, 'a', RAD_MAX_LINE + 1);
    line[RAD_MAX_LINE + 1] = '\0';
    expect_error(make_rad(12, 3, line), "bad.rad:3:", "longer than");
    free(line);
    size_t big = RAD_MAX_BYTES + 1;
    char *text = malloc(big + 1);
    memset(text, '#', big);
    text[big] = '\0';
    task_spec t;
    carma_err err;
    assert_int_equal(rad_parse("big.rad", text, big, &t, &err), -1);
    assert_non_null(strstr(err.msg, "big.rad:"));
    assert_non_null(strstr(err.msg, "more than"));
    free(text);
}

static void test_missing_file_and_bad_extension(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(rad_load(RAD_DIR "no_such.rad", &t, &err), -1);
    assert_non_null(strstr(err.msg, "no_such.rad"));
    assert_int_equal(task_load_file(RAD_DIR "resnet18.txt", &t, &err), -1);
    assert_non_null(strstr(err.msg, "unknown task file type"));
    assert_int_equal(task_load_file("noext", &t, &err), -1);
    task_spec_free(&t); /* safe on an emptied spec */
}

static void test_copy_and_to_sched(void **state)
{
    (void)state;
    task_spec t, c;
    carma_err err;
    sched_task st;
    assert_int_equal(rad_load(RAD_DIR "gpt2_large_2.rad", &t, &err), 0);
    assert_int_equal(task_spec_add_env(&t, "A=1", &err), 0);
    assert_int_equal(task_spec_add_env(&t, "noequals", &err), -1);
    assert_int_equal(task_spec_add_env(&t, "=x", &err), -1);
    t.id = 42;
    assert_int_equal(task_spec_copy(&c, &t, &err), 0);
    task_spec_free(&t);
    assert_string_equal(c.command, "python workloads/gpt2_large_on_wiki.py");
    assert_int_equal(c.nenv, 1);
    assert_string_equal(c.env[0], "A=1");
    task_spec_to_sched(&c, &st);
    assert_int_equal(st.id, 42);
    assert_int_equal(st.ngpus, 2);
    assert_int_equal(st.max_retries, -1);
    assert_int_equal(st.mem.mib[MEM_ORACLE], 28356);
    assert_int_equal(st.attempts, 0);
    task_spec_free(&c);
}

static void test_validate(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    task_spec_init(&t);
    t.ngpus = 1;
    assert_int_equal(task_spec_validate(&t, "submission", &err), -1);
    assert_string_equal(err.msg, "submission: no command to run");
    t.command = "true";
    assert_int_equal(task_spec_validate(&t, "submission", &err), 0);
    t.ngpus = 0;
    assert_int_equal(task_spec_validate(&t, "submission", &err), -1);
    assert_non_null(strstr(err.msg, "outside 1..16"));
    t.ngpus = 1;
    t.batch_size = -1;
    assert_int_equal(task_spec_validate(&t, "s", &err), -1);
    t.batch_size = 0;
    t.sim.smact = 1.5;
    assert_int_equal(task_spec_validate(&t, "s", &err), -1);
    assert_non_null(strstr(err.msg, "smact"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet18_file),
        cmocka_unit_test(test_two_gpu_and_capped_estimates),
        cmocka_unit_test(test_long_command),
        cmocka_unit_test(test_crlf_and_bom),
        cmocka_unit_test(test_optional_estimates),
        cmocka_unit_test(test_no_trailing_newline_and_spaces),
        cmocka_unit_test(test_truncated_gpt2_xl),
        cmocka_unit_test(test_missing_lines),
        cmocka_unit_test(test_empty_required_line),
        cmocka_unit_test(test_bad_env_line),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_extra_and_gap_lines),
        cmocka_unit_test(test_binary_and_control_chars),
        cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_missing_file_and_bad_extension),
        cmocka_unit_test(test_copy_and_to_sched),
        cmocka_unit_test(test_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
