/* fdclose.c — see fdclose.h. */
#include "util/fdclose.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

int fd_close_span(unsigned lo, unsigned hi)
{
    if (close_range(lo, hi, 0) == 0)
        return 0;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        const struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char *end;
            unsigned long fd = strtoul(e->d_name, &end, 10);
            if (end != e->d_name && !*end && (int)fd != dirfd(d) && fd >= lo && fd <= hi)
                close((int)fd); /* the listing goes on without it */
        }
        closedir(d);
        return 0;
    }
    long max = sysconf(_SC_OPEN_MAX);
    if (max <= 0)
        return -1;
    for (long fd = lo; fd <= (long)hi && fd < max; fd++)
        close((int)fd);
    return 0;
}
