/* tmpfile_fixture.h — tests that feed a parser a file: write text to a fresh temporary file.
 * Include after <cmocka.h>. */
#ifndef CARMA_TEST_TMPFILE_FIXTURE_H
#define CARMA_TEST_TMPFILE_FIXTURE_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes len bytes (NUL bytes too) to a fresh file; returns its path, which the caller unlinks
 * and frees. */
static inline char *write_tmp_bytes(const char *bytes, size_t len)
{
    char *path = strdup("/tmp/carma_test_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, len), (ssize_t)len);
    close(fd);
    return path;
}

/* The same for a C string. */
static inline char *write_tmp(const char *text)
{
    return write_tmp_bytes(text, strlen(text));
}

#endif
