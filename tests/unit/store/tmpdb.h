/* tmpdb.h — the store tests' fixture: a fresh directory under /tmp for each test (dir) and the
 * database path in it (path, not made), removed with all it holds after the test. */
#ifndef CARMA_TESTS_STORE_TMPDB_H
#define CARMA_TESTS_STORE_TMPDB_H

#include <stdio.h>
#include <stdlib.h>

static char dir[64], path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/carma-store-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/carma.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

#endif
