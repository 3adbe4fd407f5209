/* summary_torchinfo.c — torchinfo tables: a tree column `│    └─Type: D-I` followed by the
 * columns named in the header (Input Shape, Output Shape, Param #, Kernel Shape, ...). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/summary.h"

#define MAX_COLS 12

/* Splits at runs of two or more spaces; fields are trimmed, in place. */
static int split_cols(char *t, char **cols, int max)
{
    int n = 0;
    while (*t == ' ')
        t++;
    while (*t && n < max) {
        cols[n++] = t;
        char *gap = strstr(t, "  ");
        if (!gap)
            break;
        *gap = '\0';
        t = gap + 2;
        while (*t == ' ')
            t++;
    }
    return n;
}

static bool is_rule(const char *t)
{
    while (*t == ' ')
        t++;
    if (*t != '=')
        return false;
    while (*t == '=')
        t++;
    return !*t;
}

/* Skips the tree drawing (spaces and the UTF-8 box characters) before the type name. */
static char *skip_tree(char *t)
{
    while (*t && (*t == ' ' || (unsigned char)*t >= 0x80))
        t++;
    return t;
}

int summary_parse_torchinfo(const char *name, summary_line *lines, size_t n, size_t start,
                            model_summary *out, carma_err *err)
{
    char *hdr[MAX_COLS];
    int ncols = split_cols(lines[start].text, hdr, MAX_COLS);
    int c_out = -1, c_par = -1;
    for (int c = 0; c < ncols; c++) {
        if (!strcmp(hdr[c], "Output Shape"))
            c_out = c;
        if (!strcmp(hdr[c], "Param #"))
            c_par = c;
    }
    if (c_par < 0)
        return carma_err_set(err, "%s:%zu: torchinfo header has no 'Param #' column", name,
                             lines[start].no);
    size_t i = start + 1;
    if (i < n && is_rule(lines[i].text))
        i++;
    for (; i < n; i++) {
        char *t = lines[i].text;
        if (is_rule(t))
            break;
        char *cols[MAX_COLS];
        char *body = skip_tree(t);
        int k = split_cols(body, cols, MAX_COLS);
        if (k != ncols || !isalpha((unsigned char)cols[0][0]))
            return carma_err_set(err, "%s:%zu: not a torchinfo layer row (expected %d columns)",
                                 name, lines[i].no, ncols);
        summary_layer l = {.in_features = -1, .out_features = -1, .line = lines[i].no};
        char *colon = strchr(cols[0], ':');
        if (colon) {
            *colon = '\0';
            char *d = colon + 1;
            while (*d == ' ')
                d++;
            char *endp;
            long depth = strtol(d, &endp, 10);
            if (endp == d || *endp != '-')
                return carma_err_set(err, "%s:%zu: bad depth-index '%s'", name, lines[i].no, d);
            l.depth = (int)depth;
        }
        snprintf(l.type, sizeof l.type, "%s", cols[0]);
        if (c_out >= 0 && cols[c_out][0] == '[' &&
            summary_parse_shape(cols[c_out], l.shape, &l.ndims))
            l.ndims = 0;
        const char *p = cols[c_par];
        if (strcmp(p, "--") && strcmp(p, "(recursive)") && summary_parse_count(p, &l.params))
            return carma_err_set(err, "%s:%zu: bad parameter count '%s'", name, lines[i].no, p);
        if (summary_push(out, &l, err))
            return -1;
    }
    if (i == n)
        return carma_err_set(err, "%s:%zu: torchinfo table has no closing '====' rule", name,
                             lines[n - 1].no);
    summary_read_footer(out, lines, n, i + 1);
    return 0;
}
