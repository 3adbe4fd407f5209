/* test_daemon_proto.c — the submission record: every bad field is refused with a message that
 * names it; a good one survives a JSON round trip; log bytes become valid JSON strings, and a
 * chunk of them ends on a character's boundary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/proto.h"

static int parse(const char *text, submission *out, carma_err *err)
{
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_ALLOW_NUL, &jerr);
    assert_non_null(j);
    int rc = submission_from_json(j, out, err);
    json_decref(j);
    return rc;
}

static void refuses_each_bad_field(void **state)
{
    (void)state;
    static const struct { const char *json, *msg; } cases[] = {
        {"{\"cwd\":\"/tmp\"}", "task.command: missing"},
        {"{\"command\":\"  \",\"cwd\":\"/tmp\"}", "task.command: empty"},
        {"{\"command\":\"x\"}", "task.cwd: missing"},
        {"{\"command\":\"x\",\"cwd\":\"tmp\"}", "task.cwd: expected an absolute path"},
        {"{\"command\":7,\"cwd\":\"/tmp\"}", "task.command: expected a string"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"ngpus\":0}",
         "task.ngpus: expected an integer 1..16"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"ngpus\":17}", "task.ngpus"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"ngpus\":1.5}", "task.ngpus"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"max_retries\":-2}", "task.max_retries"},
        /* absent is no index; -1, what absent stands for inside, is not one to send */
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"array_index\":-1}",
         "task.array_index: expected an integer 0..1000000"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"colour\":1}", "task.colour: unknown field"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"mem\":{\"guess\":5}}",
         "task.mem.guess: unknown source"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"mem\":{\"oracle\":-5}}", "task.mem.oracle"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"mem\":[1]}", "task.mem: expected an object"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"env\":\"A=1\"}", "task.env: expected an array"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"env\":[\"A\"]}", "'A': expected KEY=VALUE"},
        {"{\"command\":\"x\",\"cwd\":\"/tmp\",\"env\":[1]}", "task.env[0]"},
        {"{\"command\":\"a\\u0000b\",\"cwd\":\"/tmp\"}", "task.command: contains a NUL byte"},
        {"[1,2]", "task: expected an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        submission s;
        carma_err err = {{0}};
        assert_int_equal(parse(cases[i].json, &s, &err), -1);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' does not contain '%s'", i, err.msg, cases[i].msg);
    }
}

static void round_trip_keeps_every_field(void **state)
{
    (void)state;
    submission s;
    carma_err err;
    assert_int_equal(parse("{\"command\":\"python train.py --lr 0.1\",\"cwd\":\"/srv\","
                           "\"ngpus\":2,\"mem\":{\"oracle\":19828,\"gpumemnet\":32000},"
                           "\"env\":[\"A=1\",\"B=x=y\"],\"max_retries\":2,\"summary\":\"/m\","
                           "\"batch\":32,\"source\":\"/t.rad\"}", &s, &err), 0);
    assert_string_equal(s.name, "python"); /* default: the program's name */
    json_t *j = submission_to_json(&s);
    submission back;
    assert_int_equal(submission_from_json(j, &back, &err), 0);
    json_decref(j);
    assert_string_equal(back.command, "python train.py --lr 0.1");
    assert_string_equal(back.cwd, "/srv");
    assert_int_equal(back.ngpus, 2);
    assert_int_equal(back.max_retries, 2);
    assert_int_equal(back.batch, 32);
    assert_int_equal(back.nenv, 2);
    assert_string_equal(back.env[1], "B=x=y");
    uint64_t mib;
    assert_true(mem_figures_get(&back.mem, MEM_GPUMEMNET, &mib));
    assert_int_equal(mib, 32000);
    assert_true(mem_figures_get(&back.mem, MEM_ORACLE, &mib));
    assert_int_equal(mib, 19828);
    assert_false(mem_figures_get(&back.mem, MEM_HORUS, &mib));
    submission_free(&s);
    submission_free(&back);
}

static void lossy_strings_are_valid_utf8(void **state)
{
    (void)state;
    const char raw[] = "ok \xc3\xa9 bad \xff\xfe nul \0 end \xe2\x82";
    json_t *j = proto_string_lossy(raw, sizeof raw - 1);
    assert_non_null(j);
    const char *v = json_string_value(j);
    assert_non_null(strstr(v, "ok \xc3\xa9 bad ?? nul ? end ??"));
    json_t *obj = json_pack("{so}", "data", j);
    char *line = proto_encode_line(obj, NULL);
    assert_non_null(line);
    assert_int_equal(line[strlen(line) - 1], '\n');
    assert_null(strchr(line, '\n') + 1 == line + strlen(line) ? NULL : line); /* one line */
    free(line);
    json_decref(obj);
}

static void chunks_end_on_a_character_boundary(void **state)
{
    (void)state;
    static const struct { const char *s; size_t whole; } cases[] = {
        {"", 0},
        {"abc", 3},
        {"a\xc3", 1},                 /* é cut after its lead byte */
        {"a\xc3\xa9", 3},             /* whole */
        {"a\xe2\x96", 1},             /* █ (e2 96 88) cut after two of three */
        {"a\xe2\x96\x88", 4},
        {"a\xf0\x9f\x98", 1},         /* 😀 (f0 9f 98 80) cut after three of four */
        {"a\xf0\x9f\x98\x80", 5},
        {"a\xff", 2},                 /* not a lead byte: left to be replaced */
        {"a\x80\x80\x80\x80", 5},     /* stray continuation bytes: no lead to wait for */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_int_equal(proto_utf8_whole(cases[i].s, strlen(cases[i].s)), cases[i].whole);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refuses_each_bad_field),
        cmocka_unit_test(round_trip_keeps_every_field),
        cmocka_unit_test(lossy_strings_are_valid_utf8),
        cmocka_unit_test(chunks_end_on_a_character_boundary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
