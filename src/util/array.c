/* array.c — see array.h. */
#include "util/array.h"

#include <stdint.h>
#include <stdlib.h>

void *array_grow(void *items, size_t *cap, size_t need, size_t elem, size_t initial)
{
    if (need <= *cap && items)
        return items;
    size_t ncap = *cap ? *cap : (initial ? initial : 1);
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return NULL;
        ncap *= 2;
    }
    if (elem && ncap > SIZE_MAX / elem)
        return NULL;
    void *grown = realloc(items, ncap * elem);
    if (!grown)
        return NULL;
    *cap = ncap;
    return grown;
}
