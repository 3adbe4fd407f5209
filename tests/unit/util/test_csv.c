/* test_csv.c — the CSV reader: quoting, CRLF, BOM, blank lines, header lookup, and every
 * malformed input with its file and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tmpfile_fixture.h"

#include "util/csv.h"

static void expect_error(const char *text, const char *frag)
{
    csv_table t;
    carma_err err = {{0}};
    if (csv_parse("in.csv", text, &t, &err) != -1)
        fail_msg("accepted: %s", text);
    if (!strstr(err.msg, frag))
        fail_msg("message '%s' lacks '%s'", err.msg, frag);
    assert_int_equal(t.nrows, 0);
    assert_null(t.rows);
}

static void test_quoting_and_line_numbers(void **state)
{
    (void)state;
    const char *text = "\xEF\xBB\xBF"
                       "a,b,c\r\n"
                       "1,\"x,y\",\"say \"\"hi\"\"\"\r\n"
                       "\n"
                       "2,\"multi\nline\",\r\n"
                       "3,,last";
    csv_table t;
    carma_err err;
    if (csv_parse("in.csv", text, &t, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(t.header.nfields, 3);
    assert_string_equal(t.header.fields[0], "a"); /* BOM stripped */
    assert_int_equal(t.nrows, 3);
    assert_string_equal(t.rows[0].fields[1], "x,y");
    assert_string_equal(t.rows[0].fields[2], "say \"hi\"");
    assert_int_equal(t.rows[0].line, 2);
    assert_string_equal(t.rows[1].fields[1], "multi\nline");
    assert_string_equal(t.rows[1].fields[2], "");
    assert_int_equal(t.rows[1].line, 4); /* the blank line 3 is skipped but counted */
    assert_int_equal(t.rows[2].line, 6); /* the quoted line break counts as a line */
    assert_string_equal(t.rows[2].fields[2], "last");
    assert_int_equal(csv_column(&t, "b"), 1);
    assert_int_equal(csv_column(&t, "B"), -1);
    assert_int_equal(csv_require_column(&t, "c", &err), 2);
    assert_int_equal(csv_require_column(&t, "zz", &err), -1);
    assert_string_equal(err.msg, "in.csv: missing column 'zz'");
    csv_free(&t);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_error("", "in.csv: empty file");
    expect_error("\n", "in.csv: empty file");
    expect_error("a,b\n1,2\n3\n", "in.csv:3: expected 2 fields as in the header, found 1");
    expect_error("a,b\n1,2,3\n", "in.csv:2: expected 2 fields");
    expect_error("a,b\n1,\"open\n", "in.csv:2: unterminated quoted field");
    expect_error("a,b\n1,ab\"c\n", "in.csv:2: stray quote");
    expect_error("a,b\n1,\"ab\"c\n", "in.csv:2: text after a closing quote");
    expect_error("a,\"b\n", "in.csv:1: unterminated");
    /* CR alone ends no line (old Mac files): it read as one row, "missing column ..." */
    expect_error("a,b\r1,2\r", "in.csv:1: a carriage return with no newline after it");
    expect_error("a,b\n1,2\n3,x\ry\n", "in.csv:3: a carriage return with no newline");
    csv_table t;
    carma_err err;
    if (csv_parse("in.csv", "a,b\n1,2\r", &t, &err)) /* but one ending the text ends a line */
        fail_msg("%s", err.msg);
    assert_int_equal(t.nrows, 1);
    assert_string_equal(t.rows[0].fields[1], "2");
    csv_free(&t);
    /* a lookup by name took the first of two columns of one name */
    expect_error("a,b,a\n1,2,3\n", "in.csv:1: column 'a' appears twice in the header");
    expect_error("x, y ,\"y\"\n1,2,3\n", "in.csv:1: column 'y' appears twice in the header");
}

/* A NUL byte would end the text early and silently drop every row after it. */
/* `seq, submit_offset_s` was "missing column 'submit_offset_s'": names are trimmed. */
static void test_header_names_trimmed(void **state)
{
    (void)state;
    csv_table t;
    carma_err err;
    if (csv_parse("in.csv", " seq, submit_offset_s ,\ttask_file\r\n1,0,a\n", &t, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(csv_column(&t, "seq"), 0);
    assert_int_equal(csv_column(&t, "submit_offset_s"), 1);
    assert_int_equal(csv_column(&t, "task_file"), 2);
    assert_string_equal(t.rows[0].fields[2], "a");
    csv_free(&t);
}

static void test_load_nul_byte(void **state)
{
    (void)state;
    static const char text[] = "a,b\n1,2\n3,\0004\n5,6\n";
    char *path = write_tmp_bytes(text, sizeof text - 1);
    csv_table t;
    carma_err err;
    assert_int_equal(csv_load(path, &t, &err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:3: contains a NUL byte", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(t.nrows, 0);
    unlink(path);
    free(path);
}

static void test_load_missing(void **state)
{
    (void)state;
    csv_table t;
    carma_err err;
    assert_int_equal(csv_load("/nonexistent/x.csv", &t, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/x.csv"));
    csv_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoting_and_line_numbers),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_header_names_trimmed),
        cmocka_unit_test(test_load_nul_byte),
        cmocka_unit_test(test_load_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
