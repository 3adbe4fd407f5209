/* attempt_fixture.h — the supervisor tests' fixture: a fresh directory under /tmp for each
 * test (root) and an attempt directory path in it (dir, root/1.1, not made), removed with all
 * it holds after the test. */
#ifndef CARMA_TEST_ATTEMPT_FIXTURE_H
#define CARMA_TEST_ATTEMPT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

static char root[64], dir[128];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/carma-sup-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(dir, sizeof dir, "%s/1.1", root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

#endif
