/* fmt.c — reply fields as people read them (fmt.h). */
#include "cli/fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

const char *fmt_time(const json_t *t, char *buf, size_t cap)
{
    time_local_text(json_is_number(t) ? json_number_value(t) : -1, buf, cap);
    return buf;
}

const char *fmt_duration(const json_t *s, char *buf, size_t cap)
{
    time_duration_text(json_is_number(s) ? json_number_value(s) : -1, buf, cap);
    return buf;
}

const char *fmt_exit(const json_t *code, const json_t *signal, char *buf, size_t cap)
{
    if (json_is_integer(code))
        snprintf(buf, cap, "%lld", (long long)json_integer_value(code));
    else if (json_is_integer(signal))
        snprintf(buf, cap, "signal %lld", (long long)json_integer_value(signal));
    else
        snprintf(buf, cap, "%s", TIME_UNKNOWN);
    return buf;
}

const char *fmt_mib(const json_t *mib, char *buf, size_t cap)
{
    if (json_is_integer(mib))
        snprintf(buf, cap, "%lld MiB", (long long)json_integer_value(mib));
    else
        snprintf(buf, cap, "%s", TIME_UNKNOWN);
    return buf;
}

const char *fmt_mem_source(const char *source)
{
    return source && strcmp(source, "oracle") == 0 ? "given" : source;
}

const char *fmt_ints(const json_t *a, char *buf, size_t cap)
{
    size_t i, o = 0;
    json_t *g;
    buf[0] = '\0';
    json_array_foreach(a, i, g) {
        int w = snprintf(buf + o, o < cap ? cap - o : 0, "%s%lld", i ? "," : "",
                         (long long)json_integer_value(g));
        o += w > 0 ? (size_t)w : 0;
    }
    if (!buf[0])
        snprintf(buf, cap, "%s", TIME_UNKNOWN);
    return buf;
}

char *column_text(const char *s, size_t width)
{
    char *escaped = str_escape_controls(s);
    char *col = str_column(escaped, width);
    free(escaped);
    return col;
}

void fput_escaped(FILE *f, const char *s)
{
    if (!s)
        return;
    char *safe = str_escape_controls(s);
    fputs(safe ? safe : "?", f);
    free(safe);
}
