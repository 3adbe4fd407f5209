/* usergroups.c — see usergroups.h. */
#include "util/usergroups.h"

#include <grp.h>
#include <stdlib.h>

int user_groups(const char *user, gid_t gid, gid_t **groups, int *n)
{
    *n = 64;
    for (;;) {
        int cap = *n;
        gid_t *g = realloc(*groups, (size_t)cap * sizeof *g);
        if (!g)
            return -1;
        *groups = g;
        if (getgrouplist(user, gid, g, n) >= 0)
            return 0;
        /* too small: *n is what it needs (glibc), or twice as many should it not say */
        if (*n <= cap)
            *n = cap * 2;
        if (*n > 1 << 24)
            return -1;
    }
}
