/* fsfree.c — see fsfree.h. */
#include "util/fsfree.h"

#include <sys/statvfs.h>

int64_t fs_free_bytes(int fd)
{
    struct statvfs v;
    if (fstatvfs(fd, &v))
        return -1;
    return fs_bytes(v.f_bavail, v.f_frsize);
}

int64_t fs_bytes(uint64_t blocks, uint64_t size)
{
    if (size != 0 && blocks > (uint64_t)INT64_MAX / size)
        return INT64_MAX; /* some FUSE and network filesystems report that much */
    return (int64_t)(blocks * size);
}

bool fs_under_floor(int64_t free, int64_t floor, bool was_under)
{
    return free < (was_under ? floor + floor / 16 : floor);
}
