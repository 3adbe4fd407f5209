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

/* Value of `key=` inside an argument list; false when the key is absent. */
static bool arg_int(const char *args, const char *key, long long *v)
{
    const char *p = strstr(args, key);
    if (!p)
        return false;
    p += strlen(key);
    char *end;
    *v = strtoll(p, &end, 10);
    return end != p;
}

/* Fills the Linear / Embedding arguments from the text between the type's parentheses (-1 when
 * absent). Returns -1 with *bad set when a size is negative. */
static int read_args(summary_layer *l, const char *args, long long *bad)
{
    long long in = -1, out = -1;
    bool has_in = arg_int(args, "in_features=", &in),
         has_out = arg_int(args, "out_features=", &out);
    /* "512, 768" (Embedding): leading integers; plain when nothing else follows */
    char *end;
    long long a = strtoll(args, &end, 10);
    if (end != args && end[0] == ',' && end[1] == ' ') {
        const char *q = end + 2;
        long long b = strtoll(q, &end, 10);
        if (end != q) {
            l->plain_args = *end == '\0';
            in = a, out = b;
            has_in = has_out = true;
        }
    }
    if ((has_in && in < 0) || (has_out && out < 0)) {
        *bad = has_in && in < 0 ? in : out;
        return -1;
    }
    l->in_features = in;
    l->out_features = out;
    return 0;
}

/* "(name): Type(args), N params" or "Type(args), N params"; modifies t. Errors name file:line. */
static int parse_leaf(const char *name, size_t no, char *t, summary_layer *l, carma_err *err)
{
    size_t len = strlen(t);
    const char *suffix = " params";
    if (len < strlen(suffix) || strcmp(t + len - strlen(suffix), suffix))
        goto not_leaf;
    t[len - strlen(suffix)] = '\0';
    /* the count follows the last "), " (counts have commas of their own) */
    char *comma = NULL;
    for (char *p = strstr(t, "), "); p; p = strstr(p + 1, "), "))
        comma = p + 1;
    if (!comma)
        goto not_leaf;
    *comma = '\0';
    char *num = comma + 1;
    while (*num == ' ')
        num++;
    if (summary_parse_count(num, &l->params))
        goto not_leaf;
    comma[-1] = '\0'; /* the closing parenthesis of the argument list */
    char *type = t;
    if (*t == '(') {
        char *close = strstr(t, "): ");
        if (!close)
            goto not_leaf;
        type = close + 3;
    }
    char *open = strchr(type, '(');
    if (!open || open == type)
        goto not_leaf;
    *open = '\0';
    for (char *c = type; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            goto not_leaf;
    snprintf(l->type, sizeof l->type, "%s", type);
    long long bad = 0;
    if (read_args(l, open + 1, &bad))
        return carma_err_set(err, "%s:%zu: %s has a negative size %lld", name, no, l->type, bad);
    return 0;
not_leaf:
    return carma_err_set(err, "%s:%zu: not a module line with a parameter count", name, no);
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
        if (parse_leaf(name, lines[i].no, t, &l, err))
            return -1;
        if (summary_push(out, &l, err))
            return -1;
    }
    if (depth != 0 && i < n)
        return carma_err_set(err, "%s:%zu: unbalanced parentheses before the footer", name,
                             lines[i].no);
    summary_read_footer(out, lines, n, i);
    return 0;
}
