/* summary_torchsummary.c — rows of torchsummary's table: `Type-IDX  [B, C, H, W]  PARAMS`. */
#include <ctype.h>
#include <string.h>

#include "estimate/summary.h"

static bool is_rule(const char *t, char c)
{
    while (*t == ' ')
        t++;
    if (*t != c)
        return false;
    while (*t == c)
        t++;
    while (*t == ' ')
        t++;
    return !*t;
}

/* Parses one row in place; returns 0 or -1 when the row does not fit the pattern. */
static int parse_row(char *t, summary_layer *l)
{
    while (*t == ' ')
        t++;
    char *name_end = strchr(t, ' ');
    char *lb = strchr(t, '[');
    if (!name_end || !lb || lb < name_end)
        return -1;
    *name_end = '\0';
    char *dash = strrchr(t, '-');
    if (!dash || dash == t || !isdigit((unsigned char)dash[1]))
        return -1;
    for (char *d = dash + 1; *d; d++)
        if (!isdigit((unsigned char)*d))
            return -1;
    size_t tlen = (size_t)(dash - t);
    if (tlen >= SUMMARY_TYPE_MAX)
        tlen = SUMMARY_TYPE_MAX - 1;
    memcpy(l->type, t, tlen);
    l->type[tlen] = '\0';
    /* the shape runs to the matching bracket; nested lists (several outputs) are kept shapeless */
    int level = 0;
    char *p = lb;
    for (; *p; p++) {
        level += *p == '[';
        level -= *p == ']';
        if (level == 0)
            break;
    }
    if (!*p)
        return -1;
    char *rest = p + 1;
    char saved = *rest;
    *rest = '\0';
    if (summary_parse_shape(lb, l->shape, &l->ndims))
        l->ndims = 0;
    *rest = saved;
    while (*rest == ' ')
        rest++;
    char *end = rest + strlen(rest);
    while (end > rest && end[-1] == ' ')
        *--end = '\0';
    return summary_parse_count(rest, &l->params);
}

int summary_parse_torchsummary(const char *name, summary_line *lines, size_t n, size_t start,
                               model_summary *out, carma_err *err)
{
    size_t i = start + 1;
    if (i < n && is_rule(lines[i].text, '='))
        i++;
    for (; i < n; i++) {
        char *t = lines[i].text;
        if (is_rule(t, '='))
            break;
        summary_layer l = {.in_features = -1, .out_features = -1, .line = lines[i].no};
        if (parse_row(t, &l))
            return carma_err_set(err, "%s:%zu: not a torchsummary layer row", name, lines[i].no);
        if (summary_push(out, &l, err))
            return -1;
    }
    if (i == n)
        return carma_err_set(err, "%s:%zu: torchsummary table has no closing '====' rule", name,
                             lines[n - 1].no);
    summary_read_footer(out, lines, n, i + 1);
    return 0;
}
