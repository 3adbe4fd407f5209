/* test_taskfile.c — YAML task files: exact values from good files, and errors (with file and
 * line) for unknown keys, wrong types, syntax errors, duplicates and missing commands, deep
 * nesting, aliases that multiply the text, and tags. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "task/taskfile.h"
#include "task/taskload.h"

#define YAML_DIR CARMA_TEST_DATA "/yaml/"

static void expect_error(const char *text, const char *frag1, const char *frag2)
{
    task_spec t;
    carma_err err = {{0}};
    if (taskfile_parse("t.yaml", text, strlen(text), &t, &err) != -1)
        fail_msg("accepted: %s", text);
    if (!strstr(err.msg, frag1))
        fail_msg("message '%s' lacks '%s'", err.msg, frag1);
    if (frag2 && !strstr(err.msg, frag2))
        fail_msg("message '%s' lacks '%s'", err.msg, frag2);
    assert_null(t.command);
    assert_null(t.name);
    assert_int_equal(t.nenv, 0);
}

static task_spec parse_ok(const char *text)
{
    task_spec t;
    carma_err err = {{0}};
    if (taskfile_parse("dir/job.yaml", text, strlen(text), &t, &err))
        fail_msg("rejected: %s", err.msg);
    return t;
}

static void test_full_example(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    uint64_t mib;
    assert_int_equal(task_load_file(YAML_DIR "full.yaml", &t, &err), 0);
    assert_string_equal(t.name, "resnet18-cifar100-20e");
    assert_string_equal(t.command,
                        "python workloads/resnet18_cifar100.py --batch_size 32 --epochs 20");
    assert_string_equal(t.workdir, "/srv/training");
    assert_int_equal(t.nenv, 1);
    assert_string_equal(t.env[0], "PYTHONUNBUFFERED=1");
    assert_int_equal(t.ngpus, 1);
    assert_true(mem_figures_get(&t.mem, MEM_ORACLE, &mib));
    assert_int_equal(mib, 788);
    assert_true(mem_figures_get(&t.mem, MEM_HORUS, &mib));
    assert_int_equal(mib, 2231);
    assert_true(mem_figures_get(&t.mem, MEM_FAKETENSOR, &mib));
    assert_int_equal(mib, 53);
    assert_true(mem_figures_get(&t.mem, MEM_GPUMEMNET, &mib));
    assert_int_equal(mib, 8192);
    assert_false(mem_figures_get(&t.mem, MEM_CARMA, &mib));
    assert_string_equal(t.summary_path, "resnet18_cifar100.model");
    assert_int_equal(t.batch_size, 32);
    assert_int_equal(t.max_retries, 2);
    assert_true(t.sim.solo_runtime_s == 588.0);
    assert_true(t.sim.smact != t.sim.smact); /* NaN: not given */
    assert_string_equal(t.source_path, YAML_DIR "full.yaml");
    task_spec_free(&t);
}

static void test_minimal_defaults(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    uint64_t mib;
    assert_int_equal(task_load_file(YAML_DIR "minimal.yaml", &t, &err), 0);
    assert_string_equal(t.name, "null"); /* quoted: the text, not YAML's null */
    assert_string_equal(t.command, "python train.py");
    assert_int_equal(t.ngpus, 1);
    assert_int_equal(t.max_retries, -1);
    assert_int_equal(t.batch_size, 0);
    assert_false(mem_figures_get(&t.mem, MEM_ORACLE, &mib));
    assert_null(t.workdir);
    assert_null(t.summary_path);
    task_spec_free(&t);
}

static void test_sim_facts(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(task_load_file(YAML_DIR "sim.yaml", &t, &err), 0);
    assert_string_equal(t.command, "true"); /* quoted: the text, not a YAML boolean */
    assert_true(t.sim.solo_runtime_s == 120.5);
    assert_true(t.sim.smact == 0.5);
    assert_true(t.sim.smocc == 0.25);
    assert_true(t.sim.drama == 0.125);
    task_spec_free(&t);
}

static void test_command_list_is_quoted(void **state)
{
    (void)state;
    task_spec t = parse_ok("command: [python, a.py, --out, \"my dir\", \"it's\", '']\n");
    assert_string_equal(t.command, "python a.py --out 'my dir' 'it'\\''s' ''");
    task_spec_free(&t);
    t = parse_ok("command:\n  - python\n  - train.py\n");
    assert_string_equal(t.command, "python train.py");
    task_spec_free(&t);
}

static void test_memory_units(void **state)
{
    (void)state;
    uint64_t mib;
    task_spec t = parse_ok("command: x\nmemory: 20G\ngpus: 2\n");
    assert_true(mem_figures_get(&t.mem, MEM_ORACLE, &mib));
    assert_int_equal(mib, 20480);
    assert_int_equal(t.ngpus, 2);
    task_spec_free(&t);
    t = parse_ok("command: x\nmemory: 512M\nestimates: {carma: 1.5G}\n");
    assert_true(mem_figures_get(&t.mem, MEM_ORACLE, &mib));
    assert_int_equal(mib, 512);
    assert_true(mem_figures_get(&t.mem, MEM_CARMA, &mib));
    assert_int_equal(mib, 1536);
    task_spec_free(&t);
}

static void test_unknown_keys(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(task_load_file(YAML_DIR "unknown_key.yaml", &t, &err), -1);
    assert_non_null(strstr(err.msg, "unknown_key.yaml:3: unknown key 'memroy'"));
    expect_error("command: x\nsim:\n  runtime: 3\n", "t.yaml:3:", "sim: unknown key 'runtime'");
    expect_error("command: x\nestimates:\n  dnnmem: 3G\n",
                 "t.yaml:3:", "unknown estimator 'dnnmem'");
    expect_error("command: x\nestimates: {none: 3G}\n", "t.yaml:2:", "unknown estimator 'none'");
}

static void test_wrong_types(void **state)
{
    (void)state;
    expect_error("command: x\ngpus: two\n", "t.yaml:2:", "gpus: expected a whole number");
    expect_error("command: x\ngpus: 1.5\n", "t.yaml:2:", "gpus");
    expect_error("command: x\ngpus: [1]\n",
                 "t.yaml:2:", "gpus: expected a whole number, got a list");
    expect_error("command: x\ngpus: 0\n", "t.yaml:2:", "between 1 and 16");
    expect_error("command: x\ngpus: 17\n", "t.yaml:2:", "between 1 and 16");
    expect_error("command: x\nmemory: lots\n", "t.yaml:2:", "memory: expected a memory size");
    expect_error("command: x\nmemory: -5G\n", "t.yaml:2:", "memory");
    expect_error("command: x\nmemory: {a: 1}\n", "t.yaml:2:", "got a mapping");
    expect_error("command: x\nmemory: 0\n", "t.yaml:2:", "memory: must be more than 0 MiB");
    expect_error("command: x\nmemory: 0G\n", "t.yaml:2:", "got '0G'");
    expect_error("command: x\nestimates: {horus: 0}\n", "t.yaml:2:",
                 "estimates: horus: must be more than 0 MiB");
    expect_error("command: {a: b}\n", "t.yaml:1:", "command: expected a string or a list");
    expect_error("command: [python, [a]]\n", "t.yaml:1:", "a string argument");
    expect_error("command: []\n", "t.yaml:1:", "empty");
    expect_error("command: ''\n", "t.yaml:1:", "command: must not be empty");
    expect_error("command: ~\n", "t.yaml:1:", "command: expected a string, got no value");
    expect_error("command: null\n", "t.yaml:1:", "got no value");
    expect_error("command:\ngpus: 1\n", "t.yaml:1:", "got no value");
    expect_error("command: x\ngpus:\n", "t.yaml:2:", "gpus: expected a whole number, got no value");
    expect_error("command: x\nname: [a]\n", "t.yaml:2:", "name: expected a string");
    expect_error("command: x\nenv: [A=1]\n", "t.yaml:2:", "env: expected a mapping");
    expect_error("command: x\nenv:\n  A: [1]\n", "t.yaml:3:", "env value");
    expect_error("command: x\nenv:\n  1BAD: x\n", "t.yaml:3:", "not a valid variable name");
    expect_error("command: x\nenv:\n  'A=B': x\n", "t.yaml:3:", "not a valid variable name");
    expect_error("command: x\nbatch_size: -1\n", "t.yaml:2:", "batch_size");
    expect_error("command: x\nmax_retries: many\n", "t.yaml:2:", "max_retries");
    expect_error("command: x\nsim: {smact: 1.5}\n", "t.yaml:2:", "smact: must be between 0 and 1");
    expect_error("command: x\nsim: {solo_runtime_s: -1}\n", "t.yaml:2:", "solo_runtime_s");
    expect_error("command: x\nsim: 5\n", "t.yaml:2:", "sim: expected a mapping");
    expect_error("command: x\n[a]: 1\n", "t.yaml:2:", "keys must be plain words");
}

static void test_structure_errors(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(task_load_file(YAML_DIR "syntax.yaml", &t, &err), -1);
    assert_non_null(strstr(err.msg, "syntax.yaml:3: YAML syntax error"));
    expect_error("", "t.yaml: empty task file", NULL);
    expect_error("# only a comment\n", "t.yaml: empty task file", NULL);
    expect_error("- a\n- b\n", "t.yaml:1:", "expected a mapping of keys");
    expect_error("just text\n", "t.yaml:1:", "got a scalar");
    expect_error("gpus: 1\nmemory: 2G\n", "t.yaml:1:", "missing required key 'command'");
    expect_error("command: a\ngpus: 1\ncommand: b\n", "t.yaml:3:",
                 "duplicate key 'command' (first on line 1)");
    expect_error("command: a\nenv: {A: 1, A: 2}\n", "t.yaml:2:", "duplicate key 'A'");
    expect_error("command: a\n---\ncommand: b\n", "t.yaml:3:", "one YAML document");
    expect_error("command: a\n\tgpus: 1\n", "t.yaml:", "YAML syntax error");
    expect_error("command: \"unterminated\n", "t.yaml:", "YAML syntax error");
}

static void test_binary_and_size(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    const char nul_text[] = "command: a\0b\n";
    assert_int_equal(taskfile_parse("t.yaml", nul_text, sizeof nul_text - 1, &t, &err), -1);
    assert_non_null(strstr(err.msg, "NUL"));
    size_t big = TASKFILE_MAX_BYTES + 1;
    char *text = malloc(big + 1);
    memset(text, '#', big);
    text[big] = '\0';
    assert_int_equal(taskfile_parse("t.yaml", text, big, &t, &err), -1);
    assert_non_null(strstr(err.msg, "more than"));
    free(text);
}

/* Text of `n` copies of `s`, between `head` and `tail`. */
static char *repeat(const char *head, const char *s, size_t n, const char *tail)
{
    size_t hl = strlen(head), sl = strlen(s), tl = strlen(tail);
    char *text = malloc(hl + sl * n + tl + 1);
    assert_non_null(text);
    memcpy(text, head, hl);
    for (size_t i = 0; i < n; i++)
        memcpy(text + hl + i * sl, s, sl);
    memcpy(text + hl + sl * n, tail, tl + 1);
    return text;
}

/* libyaml's scanner is quadratic in nesting: a deep file is refused before it is loaded (a
 * 1 MiB "[[[..." ran for minutes), naming its line. */
static void test_nesting_depth(void **state)
{
    (void)state;
    char *open = repeat("command: a\nenv: ", "[", 17, "");
    char *text = repeat(open, "]", 17, "\n");
    expect_error(text, "t.yaml:2:", "nested more than 16 deep");
    free(open);
    free(text);
    open = repeat("command: a\n\nenv: ", "{a: ", 200000, "b");
    text = repeat(open, "}", 200000, "\n");
    clock_t t0 = clock();
    expect_error(text, "t.yaml:3:", "nested more than 16 deep");
    assert_true(clock() - t0 < 5 * CLOCKS_PER_SEC);
    free(open);
    free(text);
}

/* An alias names its anchor's value again: fine as such, but not to make a command of
 * gigabytes from a small file (one 64 KiB value, 20 aliases). */
static void test_aliases(void **state)
{
    (void)state;
    task_spec t = parse_ok("command: &c echo\nname: *c\nenv: {A: *c}\n");
    assert_string_equal(t.name, "echo");
    assert_string_equal(t.env[0], "A=echo");
    task_spec_free(&t);
    char *value = repeat("name: &a ", "x", 64 * 1024, "\ncommand: [");
    char *text = repeat(value, "*a, ", 20, "*a]\n");
    expect_error(text, "t.yaml:1:", "aliases (*NAME) repeat more than 1048576 bytes");
    free(value);
    free(text);
}

/* Values are read as written: a tag asking for another type or meaning is refused, the ones
 * every node has anyway are taken. */
static void test_tags(void **state)
{
    (void)state;
    expect_error("command: a\ngpus: !!int 2\n", "t.yaml:2:",
                 "YAML tag 'tag:yaml.org,2002:int' is not supported");
    expect_error("command: !shell a\n", "t.yaml:1:", "YAML tag '!shell' is not supported");
    expect_error("command: a\nenv: !!omap {A: b}\n", "t.yaml:2:", "is not supported");
    expect_error("command: !!binary ZWNobw==\n", "t.yaml:1:", "is not supported");
    task_spec t = parse_ok("command: !!str a\nenv: !!map {A: b}\nestimates: !!map {horus: 5}\n");
    assert_string_equal(t.command, "a");
    task_spec_free(&t);
}

/* Duplicate keys are found in a mapping of 80000 keys without comparing them two by two (a
 * minute before), and the message names both lines. */
static void test_many_keys(void **state)
{
    (void)state;
    size_t n = 80000;
    char *text = malloc(n * 16 + 64);
    assert_non_null(text);
    size_t len = (size_t)sprintf(text, "command: a\nenv:\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, " V%zu: x\n", i);
    sprintf(text + len, " V7: y\n");
    clock_t t0 = clock();
    expect_error(text, "t.yaml:80003:", "duplicate key 'V7' (first on line 10)");
    assert_true(clock() - t0 < 5 * CLOCKS_PER_SEC);
    free(text);
}

static void test_examples_dir(void **state)
{
    (void)state;
    task_spec t;
    carma_err err;
    assert_int_equal(task_load_file(CARMA_SOURCE_DIR "/examples/resnet50.yaml", &t, &err), 0);
    assert_string_equal(t.command,
                        "python3 estimate/resnet50.py --batch-size 32 --samples 4096");
    assert_int_equal(t.ngpus, 1);
    assert_string_equal(t.name, "resnet50");
    /* a relative workdir is the task file's directory */
    assert_string_equal(t.workdir, CARMA_SOURCE_DIR "/examples/.");
    task_spec_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_example),
        cmocka_unit_test(test_minimal_defaults),
        cmocka_unit_test(test_sim_facts),
        cmocka_unit_test(test_command_list_is_quoted),
        cmocka_unit_test(test_memory_units),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_structure_errors),
        cmocka_unit_test(test_binary_and_size),
        cmocka_unit_test(test_nesting_depth),
        cmocka_unit_test(test_aliases),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_many_keys),
        cmocka_unit_test(test_examples_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
