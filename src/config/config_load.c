/* config_load.c — reading config text into the option table's keys: a config file's
 * `key = value` lines and --set's KEY=VALUE pairs (config.h). */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

/* The value after `key =`, read in place: in double quotes it is exactly what lies between
 * them, with \" and \\ standing for " and \ (so that '#' and leading or trailing spaces
 * survive a round trip through `carma config`, which quotes such values); unquoted it is
 * trimmed and, in a file (`comments`), ends at a '#'. *value points into text. */
static int read_value(char *text, bool comments, char **value, carma_err *err)
{
    char *s = text;
    while (isspace((unsigned char)*s))
        s++;
    if (*s != '"') {
        char *hash = comments ? strchr(s, '#') : NULL;
        if (hash)
            *hash = '\0';
        *value = str_trim(s);
        return 0;
    }
    char *w = s, *r = s + 1;
    for (; *r != '"'; r++) {
        if (!*r)
            return carma_err_set(err, "unterminated quoted value (a value is one line)");
        if (*r == '\\' && (r[1] == '"' || r[1] == '\\'))
            r++;
        *w++ = *r;
    }
    *w = '\0';
    for (r++; isspace((unsigned char)*r); r++)
        ;
    if (*r && !(comments && *r == '#'))
        return carma_err_set(err, "text after the closing quote: '%s'", r);
    *value = s;
    return 0;
}

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
    char *text = str_dup(eq + 1), *value;
    if (!text)
        return carma_err_set(err, "out of memory");
    int rc = read_value(text, false, &value, err) ? carma_err_prefix(err, "%s", key)
                                                   : config_set(cfg, key, value, err);
    free(text);
    return rc;
}

/* The line of the file a failed check is about (set_on: each row's line, 0 when the file did
 * not set it): the line of the key the message names, else of the other key its check reads;
 * 0 when the file set neither, or no row is to blame. */
static size_t culprit_line(const config_row *culprit, const size_t *set_on)
{
    if (!culprit)
        return 0;
    const config_row *also = culprit->check_reads ? config_find(culprit->check_reads) : NULL;
    size_t at = set_on[culprit - config_rows];
    return at || !also ? at : set_on[also - config_rows];
}

int config_load_file(carma_config *cfg, const char *path, carma_err *err)
{
    size_t len, nul;
    carma_err why;
    char *text = read_file(path, &len, &why);
    if (!text)
        return carma_err_set(err, "config %s", why.msg);
    if ((nul = text_nul_line(text, len)) != 0) {
        free(text);
        return carma_err_set(err, "%s:%zu: contains a NUL byte", path, nul);
    }
    carma_config work = *cfg; /* nothing changes unless the whole file is good */
    size_t *set_on = calloc(config_nrows, sizeof *set_on); /* each row's line, 0: not set */
    int rc = set_on ? 0 : carma_err_set(err, "%s: out of memory", path);
    size_t lineno = 0;
    char *start = text;
    if (!strncmp(start, "\xEF\xBB\xBF", 3)) /* a UTF-8 byte-order mark, as some editors write */
        start += 3;
    for (char *line = start, *next; rc == 0 && line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *eq = strpbrk(line, "=#"); /* a '#' before any '=' makes the line a comment */
        if (!eq || *eq == '#') {
            if (eq)
                *eq = '\0';
            if (*str_trim(line)) {
                rc = carma_err_set(err, "%s:%zu: expected `key = value`", path, lineno);
                break;
            }
            continue;
        }
        *eq = '\0';
        char *key = str_trim(line), *value;
        if (read_value(eq + 1, true, &value, err)) {
            rc = carma_err_prefix(err, "%s:%zu: %s", path, lineno, key);
            break;
        }
        const config_row *r = config_find(key);
        if (!*value && !(r && r->type == CONFIG_STRING)) { /* "" = a string's built-in default */
            rc = carma_err_set(err, "%s:%zu: %s: missing value", path, lineno, key);
            break;
        }
        /* Twice in one file is a mistake (which did the admin mean?), not last-wins; the
         * GPU models are the one key a file repeats, once per model. */
        size_t *on = r ? &set_on[r - config_rows] : NULL;
        if (on && *on && r->type != CONFIG_GPU_MODELS) {
            rc = carma_err_set(err, "%s:%zu: %s: already set on line %zu (a key may appear once)",
                               path, lineno, key, *on);
            break;
        }
        if (config_set(&work, key, value, err)) {
            rc = carma_err_prefix(err, "%s:%zu", path, lineno);
            break;
        }
        if (on)
            *on = lineno;
    }
    free(text);
    const config_row *culprit;
    if (rc == 0 && (rc = config_check(&work, &culprit, err)) != 0) {
        size_t at = culprit_line(culprit, set_on);
        if (at)
            carma_err_prefix(err, "%s:%zu", path, at);
        else
            carma_err_prefix(err, "%s", path);
    }
    free(set_on);
    if (rc == 0)
        *cfg = work;
    return rc;
}
