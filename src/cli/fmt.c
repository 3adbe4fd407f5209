/* fmt.c — reply fields as people read them (fmt.h). */
#include "cli/fmt.h"

#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

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

const char *fmt_hours(const json_t *h, char *buf, size_t cap)
{
    if (json_is_number(h))
        snprintf(buf, cap, "%.3f", json_number_value(h));
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

/* The code point of the valid UTF-8 character s[0..n) (str_utf8_seq's length). */
static unsigned code_point(const unsigned char *s, size_t n)
{
    unsigned cp = n == 1 ? s[0] : n == 2 ? s[0] & 0x1fu : n == 3 ? s[0] & 0x0fu : s[0] & 0x07u;
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (s[i] & 0x3fu);
    return cp;
}

/* The terminal columns code point cp takes, by the C library's Unicode tables (a CJK
 * character 2, a combining accent 0), read in the C.UTF-8 locale whatever the user's is; 1
 * where that locale is missing or the tables do not say. */
static size_t columns_of(unsigned cp)
{
    static locale_t utf8;
    static bool tried;
    if (cp < 0x80)
        return 1;
    if (!tried) {
        tried = true;
        utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    }
    if (!utf8)
        return 1;
    locale_t was = uselocale(utf8);
    int w = wcwidth((wchar_t)cp);
    uselocale(was);
    return w < 0 ? 1 : (size_t)w;
}

char *column_text(const char *s, size_t width)
{
    char *text = str_escape_controls(s); /* controls escaped: what is left is valid UTF-8 */
    if (!text)
        return NULL;
    size_t cut = 0, used = 0;
    while (text[cut]) {
        size_t n = str_utf8_seq(text + cut, SIZE_MAX), w;
        n = n ? n : 1;
        w = columns_of(code_point((const unsigned char *)text + cut, n));
        if (used + w > width) /* a wide character that would straddle the edge goes too */
            break;
        used += w;
        cut += n;
    }
    char *col = malloc(cut + (width - used) + 1);
    if (col) {
        memcpy(col, text, cut);
        memset(col + cut, ' ', width - used);
        col[cut + width - used] = '\0';
    }
    free(text);
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
