/* usergroups.h — the supplementary groups a process started for a user (a task, its on_finish
 * hook, the xmem tracer) runs with: all of them, as a login gives. */
#ifndef CARMA_UTIL_USERGROUPS_H
#define CARMA_UTIL_USERGROUPS_H

#include <sys/types.h>

/* user's groups (primary group gid among them) in *groups (NULL at first; the caller frees
 * it), *n of them, however many: a fixed array of 256 left a user in more (LDAP sites) with
 * the primary group alone. More than the kernel takes (NGROUPS_MAX) are returned: setgroups
 * refuses them, and the process fails saying so rather than run without some. -1 when out of
 * memory. */
int user_groups(const char *user, gid_t gid, gid_t **groups, int *n);

#endif
