/* config_load.c — reading config text into the option table's keys: a config file's
 * `key = value` lines and --set's KEY=VALUE pairs (config.h). */
#include "config/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

int config_set_pair(carma_config *cfg, const char *pair, carma_err *err)
{
    const char *eq = strchr(pair, '=');
    if (!eq)
        return carma_err_set(err, "expected KEY=VALUE, got '%s'", pair);
    char key[128];
    size_t n = (size_t)(eq - pair);
    if (n == 0 || n >= sizeof key)
        return carma_err_set(err, "expected KEY=VALUE, got '%s'", pair);
    memcpy(key, pair, n);
    key[n] = '\0';
    str_trim(key);
    return config_set(cfg, key, eq + 1, err);
}

int config_load_file(carma_config *cfg, const char *path, carma_err *err)
{
    size_t len, nul;
    char *text = read_file(path, &len);
    if (!text)
        return carma_err_set(err, "config %s: %s", path, strerror(errno));
    if ((nul = text_nul_line(text, len)) != 0) {
        free(text);
        return carma_err_set(err, "%s:%zu: contains a NUL byte", path, nul);
    }
    carma_config work = *cfg; /* nothing changes unless the whole file is good */
    int rc = 0;
    size_t lineno = 0;
    for (char *line = text, *next; line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        str_trim(line);
        if (!*line)
            continue;
        char *eq = strchr(line, '=');
        if (!eq) {
            rc = carma_err_set(err, "%s:%zu: expected `key = value`", path, lineno);
            break;
        }
        *eq = '\0';
        char *key = str_trim(line), *value = str_trim(eq + 1);
        const config_row *r = config_find(key);
        if (!*value && !(r && r->type == CONFIG_STRING)) { /* "" = a string's built-in default */
            rc = carma_err_set(err, "%s:%zu: %s: missing value", path, lineno, key);
            break;
        }
        if (config_set(&work, key, value, err)) {
            rc = carma_err_prefix(err, "%s:%zu", path, lineno);
            break;
        }
    }
    free(text);
    if (rc == 0 && (rc = config_validate(&work, err)) != 0)
        carma_err_prefix(err, "%s", path);
    if (rc == 0)
        *cfg = work;
    return rc;
}
