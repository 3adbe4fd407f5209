/* strutil.c — see strutil.h. */
#include "util/strutil.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/array.h"

char *str_trim(char *s)
{
    char *start = s;
    while (*start && isspace((unsigned char)*start))
        start++;
    char *end = start + strlen(start);
    while (end > start && isspace((unsigned char)end[-1]))
        end--;
    *end = '\0';
    if (start != s)
        memmove(s, start, (size_t)(end - start) + 1);
    return s;
}

/* Copies s into buf trimmed; fails on empty or too-long input. */
static int trimmed_copy(const char *s, char *buf, size_t cap)
{
    if (!s)
        return -1;
    size_t n = strlen(s);
    if (n >= cap)
        return -1;
    memcpy(buf, s, n + 1);
    str_trim(buf);
    return buf[0] ? 0 : -1;
}

int parse_i64(const char *s, int64_t *out)
{
    errno = EINVAL;
    if (!s)
        return -1;
    /* read in place (strtoll skips leading blanks), never through a bounded copy: a numeral too
     * long for one is a whole number out of range, not no number */
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    const char *rest = end;
    while (isspace((unsigned char)*rest))
        rest++;
    if (end == s || *rest) /* no digits, or not a whole number whatever its size */
        errno = EINVAL;
    if (errno)
        return -1;
    *out = v;
    return 0;
}

int parse_u64(const char *s, uint64_t *out)
{
    int64_t v;
    if (parse_i64(s, &v) || v < 0)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int parse_double(const char *s, double *out)
{
    char buf[64], *end;
    if (trimmed_copy(s, buf, sizeof buf))
        return -1;
    if (strpbrk(buf, "xX")) /* decimal only: strtod also reads hex (0x10, 0x1p3) */
        return -1;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

void fmt_double(char *buf, size_t size, double v)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

int parse_bool(const char *s, bool *out)
{
    char buf[16];
    if (trimmed_copy(s, buf, sizeof buf))
        return -1;
    static const char *yes[] = {"on", "yes", "true", "1"};
    static const char *no[] = {"off", "no", "false", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(buf, yes[i])) {
            *out = true;
            return 0;
        }
        if (!strcasecmp(buf, no[i])) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

int parse_size_mib(const char *s, uint64_t *out)
{
    char buf[64], *end;
    if (trimmed_copy(s, buf, sizeof buf))
        return -1;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno || end == buf || !isfinite(v) || v < 0)
        return -1;
    /* plain decimals only: strtod also takes 0x10, 1e3, inf */
    if (!isdigit((unsigned char)buf[0]) || strspn(buf, "0123456789.") != (size_t)(end - buf))
        return -1;
    while (*end == ' ')
        end++;
    double scale;
    if (!*end || !strcasecmp(end, "m") || !strcasecmp(end, "mb") || !strcasecmp(end, "mib"))
        scale = 1.0;
    else if (!strcasecmp(end, "g") || !strcasecmp(end, "gb") || !strcasecmp(end, "gib"))
        scale = 1024.0;
    else if (!strcasecmp(end, "t") || !strcasecmp(end, "tb") || !strcasecmp(end, "tib"))
        scale = 1024.0 * 1024.0;
    else
        return -1;
    double mib = v * scale;
    if (mib > 1e15)
        return -1;
    *out = (uint64_t)ceil(mib); /* a figure is never rounded down: 0.0001G is 1 MiB, not 0 */
    return 0;
}

/* The code point of the UTF-8 character p[0..n) when a terminal must not be handed it: a C1
 * control (U+0080..U+009F, which some terminals obey as escape sequences) or a bidirectional
 * formatting control (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), which makes a
 * terminal show the text around it in another order than it holds ("Trojan Source"); else 0. */
static unsigned hidden_control(const unsigned char *p, size_t n)
{
    unsigned cp = n == 2   ? (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu)
                  : n == 3 ? (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu)
                           : 0;
    bool hidden = (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
                  (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
    return hidden ? cp : 0;
}

/* str_escape_controls, and with keep_lines its variant for multi-line text. */
static char *escape_controls(const char *s, bool keep_lines)
{
    if (!s)
        return NULL;
    size_t len = strlen(s);
    char *out = malloc(len * 4 + 1); /* at most \xHH for one byte, \uXXXX for two */
    if (!out)
        return NULL;
    char *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (keep_lines && (c == '\n' || c == '\t')) {
            *o++ = (char)c;
        } else if (c == '\n' || c == '\t' || c == '\r') {
            *o++ = '\\';
            *o++ = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        } else if (c < 0x20 || c == 0x7f) {
            o += sprintf(o, "\\x%02x", c);
        } else if (c < 0x80) {
            *o++ = (char)c;
        } else {
            /* a byte that starts no UTF-8 character is no text: shown, as a lone 0x9b is CSI
             * to a terminal that reads 8-bit controls; a whole character is copied whole */
            const char *at = (const char *)p;
            size_t n = str_utf8_seq(at, len - (size_t)(at - s));
            if (!n) {
                o += sprintf(o, "\\x%02x", c);
                continue;
            }
            unsigned cp = hidden_control(p, n);
            if (cp) {
                o += sprintf(o, "\\u%04x", cp);
                p += n - 1;
                continue;
            }
            memcpy(o, p, n);
            o += n;
            p += n - 1;
        }
    }
    *o = '\0';
    return out;
}

char *str_escape_controls(const char *s)
{
    return escape_controls(s, false);
}

char *str_escape_controls_text(const char *s)
{
    return escape_controls(s, true);
}

char *str_dup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* -1 with err "PATH: why" unless st is a regular file's; else 0. */
static int check_regular(const char *path, const struct stat *st, carma_err *err)
{
    if (S_ISREG(st->st_mode))
        return 0;
    return carma_err_set(err, "%s: %s", path,
                         S_ISDIR(st->st_mode) ? strerror(EISDIR) : "not a regular file");
}

int library_path_check(const char *name, carma_err *err)
{
    struct stat st;
    if (!strchr(name, '/') || stat(name, &st)) /* followed through links, as dlopen does */
        return 0;
    return check_regular(name, &st, err);
}

FILE *fopen_regular(const char *path, carma_err *err)
{
    /* The type is looked at before the open too: opening a device may act alone (a tape
     * rewinds, a watchdog arms). O_NONBLOCK: a FIFO's open would wait for a writer. The file
     * opened is the one checked (fstat): a name swapped in between is no way around it. */
    struct stat st;
    int fd = stat(path, &st) == 0 && !S_ISREG(st.st_mode)
                 ? -2 /* not opened: refused below by its type */
                 : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd == -1 || (fd >= 0 && fstat(fd, &st))) {
        carma_err_set(err, "%s: %s", path, strerror(errno));
    } else if (check_regular(path, &st, err) == 0) {
        FILE *f = fdopen(fd, "rb");
        if (f)
            return f;
        carma_err_set(err, "%s: %s", path, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

char *read_file(const char *path, size_t *len_out, carma_err *err)
{
    FILE *f = fopen_regular(path, err);
    if (!f)
        return NULL;
    size_t cap = 0, len = 0;
    char *buf = NULL;
    for (;;) {
        char *nb = array_grow(buf, &cap, len + 2, 1, 4096); /* room to read, and the NUL */
        if (!nb) {
            free(buf);
            fclose(f);
            carma_err_set(err, "%s: out of memory", path);
            return NULL;
        }
        buf = nb;
        errno = 0;
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    int failed = ferror(f) ? (errno ? errno : EIO) : 0; /* read's own errno */
    fclose(f);
    if (failed) {
        free(buf);
        carma_err_set(err, "%s: %s", path, strerror(failed));
        return NULL;
    }
    buf[len] = '\0';
    if (len_out)
        *len_out = len;
    return buf;
}

size_t text_nul_line(const char *text, size_t len)
{
    const char *nul = memchr(text, '\0', len);
    if (!nul)
        return 0;
    size_t line = 1;
    for (const char *p = text; (p = memchr(p, '\n', (size_t)(nul - p))) != NULL; p++)
        line++;
    return line;
}

char *read_text_file(const char *path, size_t *len_out, carma_err *err)
{
    size_t len, nul;
    char *text = read_file(path, &len, err);
    if (!text)
        return NULL;
    if ((nul = text_nul_line(text, len)) != 0) {
        free(text);
        carma_err_set(err, "%s:%zu: contains a NUL byte", path, nul);
        return NULL;
    }
    if (len_out)
        *len_out = len;
    return text;
}

bool str_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int str_append_shell_word(char **line, size_t *len, const char *arg)
{
    bool plain = *arg != '\0';
    for (const char *p = arg; *p && plain; p++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%",
                       *p) != NULL;
    char *grown = realloc(*line, *len + 1 + 4 * strlen(arg) + 3); /* ' ' + worst case + NUL */
    if (!grown)
        return -1;
    *line = grown;
    char *w = grown + *len;
    if (*len)
        *w++ = ' ';
    if (plain) {
        w = stpcpy(w, arg);
    } else {
        *w++ = '\'';
        for (const char *p = arg; *p; p++) {
            if (*p == '\'')
                w = stpcpy(w, "'\\''");
            else
                *w++ = *p;
        }
        *w++ = '\'';
        *w = '\0';
    }
    *len = (size_t)(w - grown);
    return 0;
}

size_t str_utf8_seq(const char *s, size_t left)
{
    const unsigned char *p = (const unsigned char *)s;
    if (p[0] >= 0x01 && p[0] < 0x80)
        return 1;
    size_t n = p[0] >= 0xF0 && p[0] < 0xF5 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (p[0] >= 0xF5 || n == 0 || n > left)
        return 0;
    for (size_t i = 1; i < n; i++) /* stops at a NUL: it is no continuation byte */
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if (n == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0)))
        return 0; /* overlong, surrogate */
    if (n == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90)))
        return 0; /* overlong, past U+10FFFF */
    return n;
}

bool str_utf8_valid(const char *s)
{
    for (const char *p = s; *p;) {
        size_t n = str_utf8_seq(p, SIZE_MAX);
        if (!n)
            return false;
        p += n;
    }
    return true;
}

size_t str_utf8_fit(const char *s, size_t max_bytes)
{
    size_t at = 0;
    while (s[at]) {
        size_t n = str_utf8_seq(s + at, SIZE_MAX);
        n = n ? n : 1;
        if (at + n > max_bytes)
            break;
        at += n;
    }
    return at;
}

char *str_column(const char *s, size_t width)
{
    if (!s)
        return NULL;
    size_t cut = 0, chars = 0;
    for (; chars < width && s[cut]; chars++) {
        size_t n = str_utf8_seq(s + cut, SIZE_MAX);
        cut += n ? n : 1;
    }
    char *out = malloc(cut + (width - chars) + 1);
    if (!out)
        return NULL;
    memcpy(out, s, cut);
    memset(out + cut, ' ', width - chars);
    out[cut + width - chars] = '\0';
    return out;
}

bool str_env_name_valid(const char *s, size_t n)
{
    if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}
