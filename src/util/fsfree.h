/* fsfree.h — the free space of a filesystem, as carma's state-directory floor
 * (state_min_free_mib) reads it: what an unprivileged user may still write there. */
#ifndef CARMA_UTIL_FSFREE_H
#define CARMA_UTIL_FSFREE_H

#include <stdbool.h>
#include <stdint.h>

/* Bytes free to unprivileged users (f_bavail: the blocks kept for root are the system's) on
 * the filesystem of open descriptor fd; INT64_MAX when more than that; -1 when it cannot be
 * read (errno set). A quota is not seen: this is the filesystem's free space. */
int64_t fs_free_bytes(int fd);
/* blocks x size, INT64_MAX when more than that (fs_free_bytes' product). */
int64_t fs_bytes(uint64_t blocks, uint64_t size);

/* Whether free space `free` is under floor `floor` (bytes, > 0), given whether it was under
 * before: once under, it stays so until it is floor/16 above the floor, so that a filesystem
 * hovering at the floor does not flip at each look. */
bool fs_under_floor(int64_t free, int64_t floor, bool was_under);

#endif
