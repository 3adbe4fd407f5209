/* tmpfile_fixture.h — tests that feed a parser a file: write text to a fresh temporary file.
 * Include after <cmocka.h>. */
#ifndef CARMA_TEST_TMPFILE_FIXTURE_H
#define CARMA_TEST_TMPFILE_FIXTURE_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Returns the new file's path; the caller unlinks and frees it. */
static inline char *write_tmp(const char *text)
{
    char *path = strdup("/tmp/carma_test_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

#endif
