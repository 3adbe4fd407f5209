/* rad.c — strict reader of CARMA `.rad` task files; the rules are in rad.h. */
#include "task/rad.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

/* What each line holds, for messages ("expected the batch size (line 6)"). */
static const char *const line_meaning[RAD_MAX_LINES] = {
    "a comment",
    "the conda environment as `conda activate ENV`",
    "the training command",
    "the model summary file name",
    "the dataset",
    "the batch size",
    "the collocation mode",
    "the number of GPUs",
    "the measured peak memory in MiB",
    "the Horus estimate in MiB",
    "the FakeTensor estimate in MiB",
    "the GPUMemNet estimate in MiB",
};

/* The estimate lines 10..12, in order. */
static const mem_source estimate_line_source[] = {MEM_HORUS, MEM_FAKETENSOR, MEM_GPUMEMNET};

typedef struct rad_lines {
    char *buf;                  /* a copy of the text with lines NUL-terminated */
    char *line[RAD_MAX_LINES];  /* trimmed lines */
    size_t n;                   /* lines present (trailing blank lines dropped) */
} rad_lines;

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Splits the text into at most RAD_MAX_LINES trimmed lines, rejecting binary content. */
static int split_lines(const char *name, const char *text, size_t len, rad_lines *L,
                       carma_err *err)
{
    memset(L, 0, sizeof *L);
    if (len > RAD_MAX_BYTES)
        return carma_err_set(err, "%s: %zu bytes is more than a .rad file may have (%d)", name,
                             len, RAD_MAX_BYTES);
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
        text += 3;
        len -= 3;
    }
    if (!(L->buf = malloc(len + 1)))
        return carma_err_set(err, "%s: out of memory", name);
    memcpy(L->buf, text, len);
    L->buf[len] = '\0';
    size_t lineno = 1, nlines = 0;
    char *start = L->buf;
    for (size_t i = 0; i <= len; i++) {
        unsigned char c = (unsigned char)L->buf[i];
        if (i < len && c != '\n') {
            bool cr_before_lf = c == '\r' && (i + 1 == len || L->buf[i + 1] == '\n');
            if (c == '\r' && !cr_before_lf) /* a text file with CR ends is no "binary" one */
                return carma_err_set(err, "%s:%zu: " STR_LONE_CR_MSG, name, lineno);
            if ((c < 0x20 && c != '\t' && !cr_before_lf) || c == 0x7f)
                return carma_err_set(err, "%s:%zu: control character 0x%02x (not a text file?)",
                                     name, lineno, c);
            continue;
        }
        if (i == len && start == L->buf + len)
            break; /* the text ended with a newline */
        L->buf[i] = '\0';
        if (strlen(start) > RAD_MAX_LINE)
            return carma_err_set(err, "%s:%zu: line longer than %d bytes", name, lineno,
                                 RAD_MAX_LINE);
        str_trim(start);
        if (*start) {
            if (lineno > RAD_MAX_LINES)
                return carma_err_set(err,
                                     "%s:%zu: unexpected text after line %d (a .rad file has at "
                                     "most %d lines)",
                                     name, lineno, RAD_MAX_LINES, RAD_MAX_LINES);
            nlines = lineno;
        }
        if (lineno <= RAD_MAX_LINES)
            L->line[lineno - 1] = start;
        lineno++;
        start = L->buf + i + 1;
    }
    L->n = nlines;
    return 0;
}

/* The text of a required or present line; an error when it is missing or empty. */
static const char *need_line(const char *name, const rad_lines *L, size_t lineno, carma_err *err)
{
    const char *what = line_meaning[lineno - 1];
    if (lineno > L->n) {
        carma_err_set(err, "%s:%zu: expected %s (line %zu), file has only %zu line%s", name,
                      lineno, what, lineno, L->n, L->n == 1 ? "" : "s");
        return NULL;
    }
    if (!*L->line[lineno - 1]) {
        carma_err_set(err, "%s:%zu: expected %s (line %zu), the line is empty", name, lineno,
                      what, lineno);
        return NULL;
    }
    return L->line[lineno - 1];
}

static int parse_count_line(const char *name, const rad_lines *L, size_t lineno, int lo, int hi,
                            int *out, carma_err *err)
{
    const char *s = need_line(name, L, lineno, err);
    int64_t v;
    if (!s)
        return -1;
    if (parse_i64(s, &v))
        return carma_err_set(err, "%s:%zu: expected %s (line %zu) as a whole number, got '%s'",
                             name, lineno, line_meaning[lineno - 1], lineno, s);
    if (v < lo || v > hi)
        return carma_err_set(err, "%s:%zu: %s must be between %d and %d, got %lld", name, lineno,
                             line_meaning[lineno - 1], lo, hi, (long long)v);
    *out = (int)v;
    return 0;
}

/* A memory figure: a number >= 0 cut to whole MiB, like the reference's int(float(x)). */
static int parse_mib_line(const char *name, const rad_lines *L, size_t lineno, uint64_t *out,
                          carma_err *err)
{
    const char *s = need_line(name, L, lineno, err);
    double v;
    if (!s)
        return -1;
    if (parse_double(s, &v))
        return carma_err_set(err, "%s:%zu: expected %s (line %zu) as a number, got '%s'", name,
                             lineno, line_meaning[lineno - 1], lineno, s);
    if (v < 0 || v > 1e12)
        return carma_err_set(err, "%s:%zu: %s must be between 0 and 1e12, got '%s'", name, lineno,
                             line_meaning[lineno - 1], s);
    *out = (uint64_t)v;
    return 0;
}

/* Line 2: `conda activate ENV` (or `source activate ENV`); the env name is the word after
 * `activate` and must be the last word. */
static int parse_env_line(const char *name, const rad_lines *L, char **env, carma_err *err)
{
    const char *s = need_line(name, L, 2, err);
    if (!s)
        return -1;
    const char *p = strstr(s, "activate");
    while (p && ((p > s && p[-1] != ' ' && p[-1] != '\t') || (p[8] != ' ' && p[8] != '\t')))
        p = strstr(p + 1, "activate");
    if (p) {
        p += 8;
        p += strspn(p, " \t");
        size_t n = strcspn(p, " \t");
        if (n > 0 && !p[n]) {
            if (!(*env = str_dup(p)))
                return carma_err_set(err, "%s: out of memory", name);
            return 0;
        }
    }
    return carma_err_set(err, "%s:2: expected %s (line 2), got '%s'", name, line_meaning[1], s);
}

static int set_str(char **dst, const char *src, const char *name, carma_err *err)
{
    if (!(*dst = str_dup(src)))
        return carma_err_set(err, "%s: out of memory", name);
    return 0;
}

static int fill_task(const char *name, const rad_lines *L, task_spec *t, carma_err *err)
{
    const char *s;
    uint64_t mib;
    if (L->n == 0)
        return carma_err_set(err, "%s: empty file (a .rad file has at least %d lines)", name,
                             RAD_REQUIRED_LINES);
    if (L->n < RAD_REQUIRED_LINES) /* name the first missing line, not an earlier empty one */
        return need_line(name, L, L->n + 1, err) ? 0 : -1;
    if (parse_env_line(name, L, &t->conda_env, err))
        return -1;
    if (!(s = need_line(name, L, 3, err)) || set_str(&t->command, s, name, err))
        return -1;
    if (!(s = need_line(name, L, 4, err)) || set_str(&t->summary_path, s, name, err))
        return -1;
    if (!(s = need_line(name, L, 5, err)) || set_str(&t->dataset, s, name, err))
        return -1;
    if (parse_count_line(name, L, 6, 1, 1 << 30, &t->batch_size, err))
        return -1;
    if (!(s = need_line(name, L, 7, err)) || set_str(&t->collocation_mode, s, name, err))
        return -1;
    if (parse_count_line(name, L, 8, 1, SCHED_MAX_TASK_GPUS, &t->ngpus, err))
        return -1;
    if (parse_mib_line(name, L, 9, &mib, err))
        return -1;
    if (mib == 0) /* the daemon refuses it: no task runs in no memory */
        return carma_err_set(err, "%s:9: %s must be more than 0 (a task needs some GPU memory), "
                             "got '%s'", name, line_meaning[8], L->line[8]);
    mem_figures_set(&t->mem, MEM_ORACLE, mib);
    for (size_t lineno = 10; lineno <= L->n; lineno++) {
        if (parse_mib_line(name, L, lineno, &mib, err))
            return -1;
        if (mib == 0) /* as a .yaml's estimates: unknown is a line left out, not 0 */
            return carma_err_set(err, "%s:%zu: %s must be more than 0, got '%s'", name, lineno,
                                 line_meaning[lineno - 1], L->line[lineno - 1]);
        mem_figures_set(&t->mem, estimate_line_source[lineno - 10], mib);
    }
    if (set_str(&t->source_path, name, name, err) || set_str(&t->name, base_name(name), name, err))
        return -1;
    return 0;
}

int rad_parse(const char *name, const char *text, size_t len, task_spec *out, carma_err *err)
{
    rad_lines L;
    task_spec_init(out);
    int rc = split_lines(name, text, len, &L, err);
    if (rc == 0)
        rc = fill_task(name, &L, out, err);
    free(L.buf);
    if (rc)
        task_spec_free(out);
    return rc;
}

int rad_load(const char *path, task_spec *out, carma_err *err)
{
    size_t len;
    char *text = read_file(path, &len, err);
    if (!text) {
        task_spec_init(out);
        return -1;
    }
    int rc = rad_parse(path, text, len, out, err);
    free(text);
    return rc;
}
