/* test_util.c — the small helpers of src/util that others fold into: growing an array
 * (array.h), the monotonic clock (clock.h), quoting a command line's words for /bin/sh,
 * printing doubles exactly and reading a whole file (strutil.h), the data directory's
 * defaults (datadir.h) and a filesystem's free space against a floor (fsfree.h). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "tmpfile_fixture.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/datadir.h"
#include "util/fsfree.h"
#include "util/strutil.h"

static void array_grow_doubles_from_initial(void **state)
{
    (void)state;
    int *v = NULL;
    size_t cap = 0;
    v = array_grow(v, &cap, 1, sizeof *v, 4);
    assert_non_null(v);
    assert_int_equal(cap, 4);
    int *same = array_grow(v, &cap, 4, sizeof *v, 4); /* enough room: untouched */
    assert_ptr_equal(same, v);
    assert_int_equal(cap, 4);
    for (int i = 0; i < 4; i++)
        v[i] = i;
    v = array_grow(v, &cap, 5, sizeof *v, 4);
    assert_non_null(v);
    assert_int_equal(cap, 8);
    v = array_grow(v, &cap, 33, sizeof *v, 4); /* several doublings at once */
    assert_non_null(v);
    assert_int_equal(cap, 64);
    for (int i = 0; i < 4; i++)
        assert_int_equal(v[i], i); /* the contents move along */
    free(v);

    cap = 0;
    char *c = array_grow(NULL, &cap, 1, 1, 0); /* no initial capacity: starts at 1 */
    assert_non_null(c);
    assert_int_equal(cap, 1);
    free(c);
}

static void array_grow_refuses_overflow_and_keeps_the_array(void **state)
{
    (void)state;
    size_t cap = 0;
    char *v = array_grow(NULL, &cap, 8, 1, 8);
    assert_non_null(v);
    assert_null(array_grow(v, &cap, SIZE_MAX, 1, 8)); /* the capacity cannot double that far */
    assert_int_equal(cap, 8);
    assert_null(array_grow(v, &cap, SIZE_MAX / 4, 16, 8)); /* nor the bytes be counted */
    assert_int_equal(cap, 8);
    v[7] = 'x'; /* still the caller's */
    free(v);
}

static void clock_is_monotonic_seconds(void **state)
{
    (void)state;
    double a = clock_mono_s(), b = clock_mono_s();
    assert_true(a > 0);
    assert_true(b >= a);
    assert_true(b - a < 1.0);
}

static char *quoted(const char *const *args)
{
    char *line = NULL;
    size_t len = 0;
    for (; *args; args++)
        assert_int_equal(str_append_shell_word(&line, &len, *args), 0);
    assert_int_equal(strlen(line), len);
    return line;
}

static void shell_words_quoted_only_when_needed(void **state)
{
    (void)state;
    const char *const plain[] = {"python", "train.py", "--lr=0.1", "a,b:c+d@e%f", "-_./", NULL};
    char *line = quoted(plain);
    assert_string_equal(line, "python train.py --lr=0.1 a,b:c+d@e%f -_./");
    free(line);
    const char *const odd[] = {"echo", "hi there", "", "it's", "$HOME", "a*b", "x;y", NULL};
    line = quoted(odd);
    assert_string_equal(line, "echo 'hi there' '' 'it'\\''s' '$HOME' 'a*b' 'x;y'");
    free(line);
    const char *const one[] = {"\xc3\xa9t\xc3\xa9", NULL}; /* non-ASCII: quoted */
    line = quoted(one);
    assert_string_equal(line, "'\xc3\xa9t\xc3\xa9'");
    free(line);
}

static void controls_are_escaped_for_terminals(void **state)
{
    (void)state;
    char *e = str_escape_controls("a\x1b[2Jb\nc\td\re\x7f \xc2\x9b" "1m \xc3\xa9 \\x");
    assert_string_equal(e, "a\\x1b[2Jb\\nc\\td\\re\\x7f \\u009b1m \xc3\xa9 \\x");
    free(e);
    /* bytes that start no UTF-8 character are shown; a whole character holding 0x9b is not */
    e = str_escape_controls("a\x9b" "2J \xc4\x9b \xe2\x82\xac \xff \xc3");
    assert_string_equal(e, "a\\x9b2J \xc4\x9b \xe2\x82\xac \\xff \\xc3");
    free(e);
    /* bidirectional formatting controls reorder what a terminal shows: made visible; other
     * three-byte characters (an em dash, CJK) are kept */
    e = str_escape_controls("ls \xe2\x80\xae" "gpj.exe\xe2\x81\xa6 \xd8\x9c \xe2\x80\x8f"
                            " \xe2\x80\x94 \xe4\xb8\xad");
    assert_string_equal(e, "ls \\u202egpj.exe\\u2066 \\u061c \\u200f \xe2\x80\x94 \xe4\xb8\xad");
    free(e);
    e = str_escape_controls_text("x\x9b" "31m\n");
    assert_string_equal(e, "x\\x9b31m\n");
    free(e);
    e = str_escape_controls("plain name");
    assert_string_equal(e, "plain name");
    free(e);
    assert_null(str_escape_controls(NULL));
    /* a task's output: lines and tabs kept, every other control made visible */
    e = str_escape_controls_text("x\x1b]0;TITLE\x07\x1b[2J\nc\td\re \xc2\x9b \xc3\xa9\n");
    assert_string_equal(e, "x\\x1b]0;TITLE\\x07\\x1b[2J\nc\td\\re \\u009b \xc3\xa9\n");
    free(e);
    assert_null(str_escape_controls_text(NULL));
}

static void doubles_print_short_and_exact(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0.1, "0.1"}, {16.7848, "16.7848"}, {0.1 + 0.2, "0.30000000000000004"}, {0, "0"},
        {1e9, "1000000000"}, {212.345678, "212.345678"}, {1.0 / 3, "0.3333333333333333"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fmt_double(buf, sizeof buf, cases[i].v);
        assert_string_equal(buf, cases[i].text);
    }
    const double hard[] = {5e-324, 1.7976931348623157e308, 12514.142857142857, 2.0 / 7 * 1e5};
    for (size_t i = 0; i < sizeof hard / sizeof *hard; i++) {
        fmt_double(buf, sizeof buf, hard[i]);
        assert_true(strtod(buf, NULL) == hard[i]);
    }
}

static void read_file_past_its_first_buffer(void **state)
{
    (void)state;
    size_t n = 3 * 4096 + 17;
    char *text = malloc(n + 1);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        text[i] = (char)('a' + i % 26);
    text[n] = '\0';
    char *path = write_tmp(text);
    size_t len;
    char *got = read_file(path, &len, NULL);
    assert_non_null(got);
    assert_int_equal(len, n);
    assert_string_equal(got, text);
    free(got);
    unlink(path);
    free(path);
    char *empty = write_tmp("");
    got = read_file(empty, &len, NULL);
    assert_non_null(got);
    assert_int_equal(len, 0);
    assert_string_equal(got, "");
    free(got);
    unlink(empty);
    free(empty);
    carma_err err;
    assert_null(read_file("/nonexistent/carma", &len, &err));
    assert_string_equal(err.msg, "/nonexistent/carma: No such file or directory");
    assert_null(read_file("/", &len, &err));
    assert_string_equal(err.msg, "/: Is a directory");
    free(text);
}

/* What is not a regular file is refused at once: a FIFO's open would wait for a writer, a
 * device such as /dev/zero would be read for ever. */
static void read_file_refuses_what_is_not_a_regular_file(void **state)
{
    (void)state;
    alarm(20); /* a wait on the FIFO fails the test rather than hanging it */
    char dir[] = "/tmp/carma-fifo-XXXXXX", fifo[64];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *paths[] = {fifo, "/dev/null"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        carma_err err;
        char want[128];
        size_t len;
        snprintf(want, sizeof want, "%s: not a regular file", paths[i]);
        assert_null(read_file(paths[i], &len, &err));
        assert_string_equal(err.msg, want);
        assert_null(fopen_regular(paths[i], NULL));
    }
    unlink(fifo);
    rmdir(dir);
    alarm(0);
}

static void data_defaults_follow_the_data_dir(void **state)
{
    (void)state;
    char buf[256];
    carma_err err = {{0}};
    const char *given = "mine.csv", *path = given;
    assert_int_equal(carma_data_default(&path, "workloads.csv", buf, sizeof buf, &err), 0);
    assert_ptr_equal(path, given); /* an option given wins */
    setenv("CARMA_DATA_DIR", "/elsewhere", 1);
    path = NULL;
    assert_int_equal(carma_data_default(&path, "traces/t.csv", buf, sizeof buf, &err), 0);
    assert_string_equal(path, "/elsewhere/traces/t.csv");
    char small[8];
    path = NULL;
    assert_int_equal(carma_data_default(&path, "workloads.csv", small, sizeof small, &err), -1);
    assert_null(path);
    assert_non_null(strstr(err.msg, "data path too long"));
    unsetenv("CARMA_DATA_DIR");
}

/* UTF-8 as JSON takes it (jansson refuses the rest): the validity check, a cut that never
 * splits a character, and a column cut and padded by characters. */
static void utf8_checks_and_cuts(void **state)
{
    (void)state;
    assert_true(str_utf8_valid(""));
    assert_true(str_utf8_valid("caf\xc3\xa9 \xe5\x90\x8d \xf0\x9f\x9a\x80"));
    const char *bad[] = {"caf\xe9", "\xff", "\xc3", "\xc0\xaf" /* overlong '/' */,
                         "\xe0\x80\xaf", "\xed\xa0\x80" /* surrogate */,
                         "\xf4\x90\x80\x80" /* past U+10FFFF */, "\xf0\x9f\x9a"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_false(str_utf8_valid(bad[i]));
        json_t *j = json_string(bad[i]); /* the same verdict as jansson's */
        assert_null(j);
    }
    /* "a" + U+1F680 (4 bytes) + "b": 2 bytes fit only "a"; 5 fit "a" and the rocket */
    const char *r = "a\xf0\x9f\x9a\x80" "b";
    assert_int_equal(str_utf8_fit(r, 0), 0);
    assert_int_equal(str_utf8_fit(r, 2), 1);
    assert_int_equal(str_utf8_fit(r, 4), 1);
    assert_int_equal(str_utf8_fit(r, 5), 5);
    assert_int_equal(str_utf8_fit(r, 100), 6);
    assert_int_equal(str_utf8_fit("\xff\xfe", 1), 1); /* stray bytes count alone */
    char *c = str_column(r, 2);
    assert_string_equal(c, "a\xf0\x9f\x9a\x80");
    free(c);
    c = str_column("\xc3\xa9", 4);
    assert_string_equal(c, "\xc3\xa9   ");
    free(c);
    assert_null(str_column(NULL, 3));
}

/* Under the floor once, it takes a sixteenth more to be out; a real descriptor has some free
 * space, a closed one none to tell; a product past INT64_MAX saturates. */
static void free_space_against_a_floor(void **state)
{
    (void)state;
    int64_t floor = 1024LL << 20;
    assert_true(fs_under_floor(floor - 1, floor, false));
    assert_false(fs_under_floor(floor, floor, false));
    assert_true(fs_under_floor(floor + floor / 16 - 1, floor, true));
    assert_false(fs_under_floor(floor + floor / 16, floor, true));
    int fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_true(fs_free_bytes(fd) >= 0);
    close(fd);
    assert_int_equal(fs_free_bytes(fd), -1);
    assert_true(fs_bytes(3, 4096) == 12288);
    assert_true(fs_bytes((uint64_t)INT64_MAX / 4096, 4096) == INT64_MAX / 4096 * 4096);
    assert_true(fs_bytes((uint64_t)INT64_MAX / 4096 + 1, 4096) == INT64_MAX); /* saturates */
    assert_true(fs_bytes(UINT64_MAX, 0) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(array_grow_doubles_from_initial),
        cmocka_unit_test(array_grow_refuses_overflow_and_keeps_the_array),
        cmocka_unit_test(clock_is_monotonic_seconds),
        cmocka_unit_test(shell_words_quoted_only_when_needed),
        cmocka_unit_test(controls_are_escaped_for_terminals),
        cmocka_unit_test(doubles_print_short_and_exact),
        cmocka_unit_test(read_file_past_its_first_buffer),
        cmocka_unit_test(read_file_refuses_what_is_not_a_regular_file),
        cmocka_unit_test(data_defaults_follow_the_data_dir),
        cmocka_unit_test(free_space_against_a_floor),
        cmocka_unit_test(utf8_checks_and_cuts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
