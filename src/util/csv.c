/* csv.c — see csv.h. */
#include "util/csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "util/array.h"

typedef struct field_buf {
    char *data;
    size_t len, cap;
} field_buf;

static int buf_put(field_buf *b, char c)
{
    char *nd = array_grow(b->data, &b->cap, b->len + 2, 1, 64);
    if (!nd)
        return -1;
    b->data = nd;
    b->data[b->len++] = c;
    return 0;
}

static void row_free(csv_row *r)
{
    for (size_t i = 0; i < r->nfields; i++)
        free(r->fields[i]);
    free(r->fields);
    r->fields = NULL;
    r->nfields = 0;
}

static int row_push(csv_row *r, field_buf *b)
{
    char **nf = realloc(r->fields, (r->nfields + 1) * sizeof *nf);
    if (!nf)
        return -1;
    r->fields = nf;
    char *s = malloc(b->len + 1);
    if (!s)
        return -1;
    if (b->len)
        memcpy(s, b->data, b->len);
    s[b->len] = '\0';
    r->fields[r->nfields++] = s;
    b->len = 0;
    return 0;
}

/* Parses one record starting at *pos; advances *pos and *line. Returns 1 on a row,
 * 0 at end of input, -1 on error. */
static int parse_record(const char *name, const char *text, size_t *pos, size_t *line, csv_row *row,
                        field_buf *b, carma_err *err)
{
    size_t i = *pos;
    if (!text[i])
        return 0;
    row->line = *line;
    int in_quotes = 0, quoted_field = 0;
    for (;;) {
        char c = text[i];
        if (in_quotes) {
            if (!c)
                return carma_err_set(err, "%s:%zu: unterminated quoted field", name, row->line);
            if (c == '"') {
                if (text[i + 1] == '"') {
                    if (buf_put(b, '"'))
                        goto nomem;
                    i += 2;
                    continue;
                }
                in_quotes = 0;
                i++;
                continue;
            }
            if (c == '\n')
                (*line)++;
            if (buf_put(b, c))
                goto nomem;
            i++;
            continue;
        }
        if (c == '"') {
            if (b->len || quoted_field)
                return carma_err_set(err, "%s:%zu: stray quote inside a field", name, *line);
            in_quotes = quoted_field = 1;
            i++;
            continue;
        }
        if (c == ',') {
            if (row_push(row, b))
                goto nomem;
            quoted_field = 0;
            i++;
            continue;
        }
        if (c == '\r' && (text[i + 1] == '\n' || !text[i + 1]))
            i++, c = text[i];
        else if (c == '\r') /* one line read as one row said "missing column 'task_file'" */
            return carma_err_set(err, "%s:%zu: " STR_LONE_CR_MSG, name, *line);
        if (c == '\n' || c == '\0') {
            if (row_push(row, b))
                goto nomem;
            if (c == '\n') {
                i++;
                (*line)++;
            }
            *pos = i;
            return 1;
        }
        if (quoted_field)
            return carma_err_set(err, "%s:%zu: text after a closing quote", name, *line);
        if (buf_put(b, c))
            goto nomem;
        i++;
    }
nomem:
    return carma_err_set(err, "%s: out of memory", name);
}

static int row_is_blank(const csv_row *r)
{
    return r->nfields == 1 && r->fields[0][0] == '\0';
}

/* Trims the header's names (`seq, submit_offset_s` names submit_offset_s) and refuses a name
 * twice: a lookup by name would silently take the first of the two columns. */
static int check_header(const char *name, csv_row *h, carma_err *err)
{
    for (size_t i = 0; i < h->nfields; i++)
        str_trim(h->fields[i]);
    for (size_t i = 1; i < h->nfields; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(h->fields[i], h->fields[j]))
                return carma_err_set(err, "%s:%zu: column '%s' appears twice in the header", name,
                                     h->line, h->fields[i]);
    return 0;
}

int csv_parse(const char *name, const char *text, csv_table *out, carma_err *err)
{
    memset(out, 0, sizeof *out);
    out->path = str_dup(name);
    field_buf b = {0};
    size_t pos = 0, line = 1, cap = 0;
    int rc = 0;
    if (!out->path) {
        rc = carma_err_set(err, "out of memory");
        goto done;
    }
    if (text[0] == '\xEF' && text[1] == '\xBB' && text[2] == '\xBF')
        pos = 3; /* UTF-8 byte-order mark */
    int got = parse_record(name, text, &pos, &line, &out->header, &b, err);
    if (got < 0) {
        rc = -1;
        goto done;
    }
    if (got == 0 || row_is_blank(&out->header)) {
        rc = carma_err_set(err, "%s: empty file (expected a header row)", name);
        goto done;
    }
    if ((rc = check_header(name, &out->header, err)) != 0)
        goto done;
    for (;;) {
        csv_row row = {0};
        got = parse_record(name, text, &pos, &line, &row, &b, err);
        if (got <= 0) {
            row_free(&row);
            rc = got;
            break;
        }
        if (row_is_blank(&row)) {
            row_free(&row);
            continue;
        }
        if (row.nfields != out->header.nfields) {
            rc = carma_err_set(err, "%s:%zu: expected %zu fields as in the header, found %zu", name,
                               row.line, out->header.nfields, row.nfields);
            row_free(&row);
            break;
        }
        csv_row *nr = array_grow(out->rows, &cap, out->nrows + 1, sizeof *nr, 64);
        if (!nr) {
            row_free(&row);
            rc = carma_err_set(err, "%s: out of memory", name);
            break;
        }
        out->rows = nr;
        out->rows[out->nrows++] = row;
    }
done:
    free(b.data);
    if (rc)
        csv_free(out);
    return rc;
}

int csv_load(const char *path, csv_table *out, carma_err *err)
{
    char *text = read_text_file(path, NULL, err);
    if (!text) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    int rc = csv_parse(path, text, out, err);
    free(text);
    return rc;
}

void csv_free(csv_table *t)
{
    row_free(&t->header);
    for (size_t i = 0; i < t->nrows; i++)
        row_free(&t->rows[i]);
    free(t->rows);
    free(t->path);
    memset(t, 0, sizeof *t);
}

int csv_column(const csv_table *t, const char *name)
{
    for (size_t i = 0; i < t->header.nfields; i++)
        if (!strcmp(t->header.fields[i], name))
            return (int)i;
    return -1;
}

int csv_require_column(const csv_table *t, const char *name, carma_err *err)
{
    int c = csv_column(t, name);
    if (c < 0)
        carma_err_set(err, "%s: missing column '%s'", t->path ? t->path : "csv", name);
    return c;
}

void csv_write_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
