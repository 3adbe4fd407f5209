/* test_fmt.c — column_text (cli/fmt.h): other users' text in a table column, escaped, cut and
 * padded by the terminal cells it takes, so that the columns after it line up whatever
 * script the text is in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cli/fmt.h"

static void column_is(const char *in, size_t width, const char *want)
{
    char *got = column_text(in, width);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void ascii_and_controls(void **state)
{
    (void)state;
    column_is("abc", 5, "abc  ");
    column_is("abcdefg", 5, "abcde");
    column_is("a\033[2Jb", 8, "a\\x1b[2J"); /* escaped first, then cut */
    column_is("", 3, "   ");
    assert_null(column_text(NULL, 3));
}

static void wide_and_combining(void **state)
{
    (void)state;
    /* CJK characters take two cells each: three of them fill six */
    column_is("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 8, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e  ");
    /* one that would straddle the edge is left out, its cell padded */
    column_is("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 5, "\xe6\x97\xa5\xe6\x9c\xac ");
    /* a combining accent takes none: e + U+0301 is one cell, kept with its letter at the edge */
    column_is("e\xcc\x81" "e\xcc\x81", 4, "e\xcc\x81" "e\xcc\x81  ");
    column_is("ab" "e\xcc\x81" "cd", 3, "ab" "e\xcc\x81");
    /* a two-byte letter of one cell (é precomposed) */
    column_is("\xc3\xa9t\xc3\xa9", 4, "\xc3\xa9t\xc3\xa9 ");
    /* bytes that are not UTF-8 come escaped, four cells each */
    column_is("a\xff", 6, "a\\xff ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ascii_and_controls),
        cmocka_unit_test(wide_and_combining),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
