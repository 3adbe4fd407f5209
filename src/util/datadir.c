/* datadir.c — see datadir.h. */
#include "util/datadir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CARMA_SOURCE_DIR
#define CARMA_SOURCE_DIR "."
#endif
#ifndef CARMA_INSTALL_DATADIR
#define CARMA_INSTALL_DATADIR "/usr/local/share/carma"
#endif
#ifndef CARMA_SYSCONFDIR
#define CARMA_SYSCONFDIR "/etc/carma"
#endif

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* PREFIX/share/carma for the running binary PREFIX/DIR/NAME, when that directory exists. */
static int installed_data_dir(char *buf, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    for (int up = 0; up < 2; up++) { /* NAME, then DIR */
        char *slash = strrchr(exe, '/');
        if (!slash)
            return 0;
        *slash = '\0';
    }
    int len = snprintf(buf, cap, "%s/share/carma", exe);
    return len > 0 && (size_t)len < cap && is_dir(buf);
}

const char *carma_data_dir(void)
{
    const char *env = getenv("CARMA_DATA_DIR");
    if (env && *env)
        return env;
    /* found once: the binary and the trees do not move while it runs */
    static char found[PATH_MAX + 32];
    if (!found[0]) {
        if (!installed_data_dir(found, sizeof found))
            snprintf(found, sizeof found, "%s",
                     is_dir(CARMA_SOURCE_DIR "/data") ? CARMA_SOURCE_DIR "/data"
                                                      : CARMA_INSTALL_DATADIR);
    }
    return found;
}

int carma_data_path(const char *rel, char *buf, size_t cap, carma_err *err)
{
    int n = snprintf(buf, cap, "%s/%s", carma_data_dir(), rel);
    if (n < 0 || (size_t)n >= cap)
        return carma_err_set(err, "data path too long: %s/%s", carma_data_dir(), rel);
    return 0;
}

int carma_data_default(const char **path, const char *rel, char *buf, size_t cap,
                       carma_err *err)
{
    if (*path)
        return 0;
    if (carma_data_path(rel, buf, cap, err))
        return -1;
    *path = buf;
    return 0;
}

const char *carma_system_config(void)
{
    const char *env = getenv("CARMA_SYSTEM_CONFIG");
    return env ? env : CARMA_SYSCONFDIR "/carma.conf";
}
