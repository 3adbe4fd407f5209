/* trace.c — reading and atomically writing job traces (see trace.h). */
#include "task/trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/csv.h"
#include "util/strutil.h"

void trace_free(trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->entries[i].task_file);
    free(t->entries);
    free(t->path);
    memset(t, 0, sizeof *t);
}

/* Checks one entry against the previous one; `where` is "file:line". */
static int check_entry(const trace_entry *e, const trace_entry *prev, const char *where,
                       carma_err *err)
{
    if (e->seq < 1 || e->seq > TRACE_MAX_SEQ)
        return carma_err_set(err, "%s: seq %d is not 1..%d (submission order, from 1)", where,
                             e->seq, TRACE_MAX_SEQ);
    if (!(e->submit_offset_s >= 0) || !isfinite(e->submit_offset_s))
        return carma_err_set(err, "%s: submit_offset_s must be a number >= 0", where);
    /* offsets in full (as trace_fprint writes them): %g's six digits made 1234567.25 read
     * "1.23457e+06 is before the previous row's 1.23457e+06". Written only for a message: a
     * row's round-trip formatting cost more than the rest of loading a trace. */
    char off[32], prev_off[32];
    if (e->submit_offset_s > TRACE_MAX_OFFSET_S) {
        fmt_double(off, sizeof off, e->submit_offset_s);
        return carma_err_set(err,
                             "%s: submit_offset_s %s is past the latest a trace may hold, %.0f s "
                             "(about 31 years)",
                             where, off, TRACE_MAX_OFFSET_S);
    }
    if (prev && e->submit_offset_s < prev->submit_offset_s) {
        fmt_double(off, sizeof off, e->submit_offset_s);
        fmt_double(prev_off, sizeof prev_off, prev->submit_offset_s);
        return carma_err_set(err,
                             "%s: submit_offset_s %s is before the previous row's %s (offsets "
                             "must not decrease)",
                             where, off, prev_off);
    }
    if (!e->task_file || !*e->task_file)
        return carma_err_set(err, "%s: empty task_file", where);
    return 0;
}

typedef struct seq_at {
    int seq;
    size_t i;
} seq_at;

static int by_seq_then_position(const void *a, const void *b)
{
    const seq_at *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Finds the first entry (by position) whose seq an earlier entry already has: 1 with *again its
 * index and *first the earlier one's, 0 when every seq is unique, -1 when out of memory. */
static int find_repeated_seq(const trace_entry *e, size_t n, size_t *again, size_t *first)
{
    seq_at *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = (seq_at){e[i].seq, i};
    qsort(v, n, sizeof *v, by_seq_then_position);
    int found = 0;
    for (size_t k = 1; k < n; k++)
        if (v[k].seq == v[k - 1].seq && (!found || v[k].i < *again)) {
            *again = v[k].i;
            *first = v[k - 1].i;
            found = 1;
        }
    free(v);
    return found;
}

static int load_rows(const csv_table *csv, trace *out, carma_err *err)
{
    int cseq, coff, cfile;
    if ((cseq = csv_require_column(csv, "seq", err)) < 0 ||
        (coff = csv_require_column(csv, "submit_offset_s", err)) < 0 ||
        (cfile = csv_require_column(csv, "task_file", err)) < 0)
        return -1;
    if (csv->nrows == 0)
        return carma_err_set(err, "%s: no entries (only a header)", csv->path);
    if (!(out->entries = calloc(csv->nrows, sizeof *out->entries)))
        return carma_err_set(err, "%s: out of memory", csv->path);
    for (size_t i = 0; i < csv->nrows; i++) {
        const csv_row *r = &csv->rows[i];
        trace_entry *e = &out->entries[i];
        char where[600];
        snprintf(where, sizeof where, "%s:%zu", csv->path, r->line);
        int64_t seq;
        if (parse_i64(r->fields[cseq], &seq) || seq < 1 || seq > TRACE_MAX_SEQ)
            return carma_err_set(err,
                                 "%s: seq: expected a whole number 1..%d (submission order, "
                                 "from 1), got '%s'",
                                 where, TRACE_MAX_SEQ, r->fields[cseq]);
        e->seq = (int)seq;
        if (parse_double(r->fields[coff], &e->submit_offset_s))
            return carma_err_set(err, "%s: submit_offset_s: expected seconds, got '%s'", where,
                                 r->fields[coff]);
        if (!(e->task_file = str_dup(str_trim(r->fields[cfile]))))
            return carma_err_set(err, "%s: out of memory", csv->path);
        out->n++;
        if (check_entry(e, i ? e - 1 : NULL, where, err))
            return -1;
    }
    size_t again, first;
    switch (find_repeated_seq(out->entries, out->n, &again, &first)) {
    case 0:
        return 0;
    case 1:
        return carma_err_set(err, "%s:%zu: seq %d repeats line %zu's (each submission has its own)",
                             csv->path, csv->rows[again].line, out->entries[again].seq,
                             csv->rows[first].line);
    default:
        return carma_err_set(err, "%s: out of memory", csv->path);
    }
}

int trace_load(const char *path, trace *out, carma_err *err)
{
    memset(out, 0, sizeof *out);
    csv_table csv;
    if (csv_load(path, &csv, err))
        return -1;
    int rc = 0;
    if (!(out->path = str_dup(path)))
        rc = carma_err_set(err, "%s: out of memory", path);
    if (rc == 0)
        rc = load_rows(&csv, out, err);
    csv_free(&csv);
    if (rc)
        trace_free(out);
    return rc;
}

/* Checks every entry, naming it "NAME: entry I". */
static int check_entries(const trace *t, const char *name, carma_err *err)
{
    for (size_t i = 0; i < t->n; i++) {
        char where[600];
        snprintf(where, sizeof where, "%s: entry %zu", name, i + 1);
        if (check_entry(&t->entries[i], i ? &t->entries[i - 1] : NULL, where, err))
            return -1;
    }
    size_t again, first;
    switch (find_repeated_seq(t->entries, t->n, &again, &first)) {
    case 0:
        return 0;
    case 1:
        return carma_err_set(err, "%s: entry %zu: seq %d repeats entry %zu's (each submission has "
                             "its own)", name, again + 1, t->entries[again].seq, first + 1);
    default:
        return carma_err_set(err, "%s: out of memory", name);
    }
}

int trace_fprint(FILE *f, const char *name, const trace *t, carma_err *err)
{
    if (check_entries(t, name, err))
        return -1;
    errno = 0;
    fputs("seq,submit_offset_s,task_file\n", f);
    for (size_t i = 0; i < t->n; i++) {
        char secs[32];
        fmt_double(secs, sizeof secs, t->entries[i].submit_offset_s);
        fprintf(f, "%d,%s,", t->entries[i].seq, secs);
        csv_write_field(f, t->entries[i].task_file);
        fputc('\n', f);
    }
    if (fflush(f) || ferror(f))
        return carma_err_set(err, "%s: cannot write the trace: %s", name,
                             strerror(errno ? errno : EIO));
    return 0;
}

int trace_write(const char *path, const trace *t, carma_err *err)
{
    if (check_entries(t, path, err)) /* before anything is created: the old file stays */
        return -1;
    /* the rename below would fail on a directory, saying of "." only "Device or resource
     * busy" */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return carma_err_set(err, "%s: is a directory (expected the trace file to write)", path);
    size_t n = strlen(path);
    char *tmp = malloc(n + sizeof ".tmp.XXXXXX");
    if (!tmp)
        return carma_err_set(err, "%s: out of memory", path);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = carma_err_set(err, "%s: cannot create a temporary file: %s", path,
                               strerror(errno));
        free(tmp);
        return rc;
    }
    /* mkstemp's 0600 would make a new trace only its writer's: the mode a plain create
     * gives (0666 less the umask), or that of the file it replaces, with its group (without
     * the group's bits when the group cannot be kept: never loosened) */
    struct stat old;
    mode_t mask = umask(0), mode = 0666 & ~mask;
    umask(mask);
    if (stat(path, &old) == 0 && S_ISREG(old.st_mode)) {
        mode = old.st_mode & 0777;
        if (fchown(fd, (uid_t)-1, old.st_gid))
            mode &= ~(mode_t)070;
    }
    fchmod(fd, mode);
    FILE *f = fdopen(fd, "w");
    if (!f)
        close(fd);
    int saved = 0;
    errno = 0;
    if (!f || trace_fprint(f, path, t, NULL) || fsync(fileno(f)))
        saved = errno ? errno : EIO;
    if (f && fclose(f) && !saved)
        saved = errno ? errno : EIO;
    if (!saved && rename(tmp, path))
        saved = errno;
    int rc = 0;
    if (saved) {
        unlink(tmp);
        rc = carma_err_set(err, "%s: cannot write the trace: %s", path, strerror(saved));
    }
    free(tmp);
    return rc;
}
