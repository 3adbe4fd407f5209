/* summary_repr.c — module printouts with parameter counts (Hugging Face models printed with
 * per-module counts):
 *     BertForMaskedLM(                                         container opens (depth + 1)
 *       (query): Linear(in_features=768, out_features=768, bias=True), 590,592 params   leaf
 *     ), 22,665,216 params                                     container closes
 *     =======  /  Total params: N                              footer */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/summary.h"

/* Value of `key=` inside an argument list, or -1. */
static int64_t arg_int(const char *args, const char *key)
{
    const char *p = strstr(args, key);
    if (!p)
        return -1;
    p += strlen(key);
    char *end;
    long long v = strtoll(p, &end, 10);
    return end == p ? -1 : v;
}

/* Fills the Linear / Embedding arguments from the text between the type's parentheses. */
static void read_args(summary_layer *l, const char *args)
{
    l->in_features = arg_int(args, "in_features=");
    l->out_features = arg_int(args, "out_features=");
    /* "512, 768" (Embedding): leading integers; plain when nothing else follows */
    char *end;
    long long a = strtoll(args, &end, 10);
    if (end != args && end[0] == ',' && end[1] == ' ') {
        const char *q = end + 2;
        long long b = strtoll(q, &end, 10);
        if (end != q) {
            l->plain_args = *end == '\0';
            l->in_features = a;
            l->out_features = b;
        }
    }
}

/* "(name): Type(args), N params" or "Type(args), N params"; modifies t. */
static int parse_leaf(char *t, summary_layer *l)
{
    size_t len = strlen(t);
    const char *suffix = " params";
    if (len < strlen(suffix) || strcmp(t + len - strlen(suffix), suffix))
        return -1;
    t[len - strlen(suffix)] = '\0';
    /* the count follows the last "), " (counts have commas of their own) */
    char *comma = NULL;
    for (char *p = strstr(t, "), "); p; p = strstr(p + 1, "), "))
        comma = p + 1;
    if (!comma)
        return -1;
    *comma = '\0';
    char *num = comma + 1;
    while (*num == ' ')
        num++;
    if (summary_parse_count(num, &l->params))
        return -1;
    comma[-1] = '\0'; /* the closing parenthesis of the argument list */
    char *type = t;
    if (*t == '(') {
        char *close = strstr(t, "): ");
        if (!close)
            return -1;
        type = close + 3;
    }
    char *open = strchr(type, '(');
    if (!open || open == type)
        return -1;
    *open = '\0';
    for (char *c = type; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return -1;
    snprintf(l->type, sizeof l->type, "%s", type);
    read_args(l, open + 1);
    return 0;
}

int summary_parse_repr(const char *name, summary_line *lines, size_t n, size_t start,
                       model_summary *out, carma_err *err)
{
    int depth = 0;
    size_t i = start;
    for (; i < n; i++) {
        char *t = lines[i].text;
        while (*t == ' ')
            t++;
        size_t len = strlen(t);
        if (!len)
            continue;
        if (t[0] == '=' || !strncmp(t, "Total params:", 13))
            break;
        if (t[0] == ')') { /* a container closes */
            depth--;
            continue;
        }
        if (t[len - 1] == '(') { /* a container opens: kept as a non-leaf row */
            summary_layer c = {.in_features = -1, .out_features = -1, .depth = depth,
                               .line = lines[i].no};
            char *type = t;
            if (*t == '(') {
                char *close = strstr(t, "): ");
                type = close ? close + 3 : t;
            }
            size_t tl = strcspn(type, "(");
            snprintf(c.type, sizeof c.type, "%.*s", (int)tl, type);
            depth++;
            if (summary_push(out, &c, err))
                return -1;
            continue;
        }
        summary_layer l = {.in_features = -1, .out_features = -1, .depth = depth,
                           .line = lines[i].no};
        if (parse_leaf(t, &l))
            return carma_err_set(err, "%s:%zu: not a module line with a parameter count", name,
                                 lines[i].no);
        if (summary_push(out, &l, err))
            return -1;
    }
    if (depth != 0 && i < n)
        return carma_err_set(err, "%s:%zu: unbalanced parentheses before the footer", name,
                             lines[i].no);
    summary_read_footer(out, lines, n, i);
    return 0;
}
