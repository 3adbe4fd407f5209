/* array.h — growing a heap array by doubling. */
#ifndef CARMA_UTIL_ARRAY_H
#define CARMA_UTIL_ARRAY_H

#include <stddef.h>

/* Returns `items` resized to hold at least `need` elements of `elem` bytes (capacity doubling
 * from `initial`), updating *cap. On failure returns NULL and leaves `items` and *cap as they
 * were, so the caller still owns the old array. */
void *array_grow(void *items, size_t *cap, size_t need, size_t elem, size_t initial);

#endif
