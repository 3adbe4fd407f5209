/* fuzz_common.h — what every libFuzzer target in fuzz/ shares: the entry point's prototype,
 * the input as a NUL-terminated string, and the input as a file for the parsers that take a
 * path (an in-memory file: nothing is left on disk). */
#ifndef CARMA_FUZZ_COMMON_H
#define CARMA_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy (the parsers that take text stop at the first NUL, as on a file). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* The input as the file /proc/self/fd/N, rewritten on each call; path has room for 64 bytes. */
static inline const char *fuzz_file(const uint8_t *data, size_t size, char *path)
{
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("carma-fuzz", 0)) < 0)
        abort();
    if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        abort();
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return path;
}

#endif
