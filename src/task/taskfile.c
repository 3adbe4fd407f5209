/* taskfile.c — YAML task files (see taskfile.h), read with libyaml's document API so every
 * error can name the line of the offending node. */
#include "task/taskfile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/strutil.h"

/* The deepest nesting read: a task file needs 2 (the top mapping, then env, estimates, sim or a
 * command list). libyaml's scanner slows quadratically with nesting: a 1 MiB "[[[[..." took
 * minutes, so a deeper file is refused by a first pass over its events, before it is loaded. */
#define TASKFILE_MAX_DEPTH 16

typedef struct tf_ctx {
    const char *path;
    yaml_document_t *doc;
    carma_err *err;
    /* Bytes of values still to be read: an alias (*a) names its anchor's value again without
     * repeating its text, so a small file could make a command or env of gigabytes. Without
     * aliases, the values are no longer than the file, which TASKFILE_MAX_BYTES bounds. */
    size_t budget;
} tf_ctx;

/* Sets "path:line: message" (line counted from 0, as libyaml's marks) and returns -1. The
 * message quotes the file's text, which a quoted "\e[2J" can fill with terminal escapes: its
 * controls are shown escaped. */
static int line_err(tf_ctx *c, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int line_err(tf_ctx *c, size_t line, const char *fmt, ...)
{
    char msg[CARMA_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *shown = str_escape_controls(msg);
    carma_err_set(c->err, "%s:%zu: %s", c->path, line + 1, shown ? shown : msg);
    free(shown);
    return -1;
}

#define node_err(c, n, ...) line_err((c), (size_t)(n)->start_mark.line, __VA_ARGS__)

static int syntax_err(tf_ctx *c, const yaml_parser_t *p)
{
    const char *problem = p->problem ? p->problem : "unknown problem";
    if (p->context)
        return line_err(c, p->problem_mark.line, "YAML syntax error: %s (%s on line %zu)",
                        problem, p->context, (size_t)p->context_mark.line + 1);
    return line_err(c, p->problem_mark.line, "YAML syntax error: %s", problem);
}

/* A tag (!!int 5, !foo x) asks for a type or a meaning carma does not give it: a value is read
 * as its text, so only the tag every node has anyway (!!str, !!seq, !!map) is taken. */
static int check_tag(tf_ctx *c, const yaml_event_t *ev, const char *tag, const char *plain)
{
    if (!tag || !strcmp(tag, plain))
        return 0;
    return line_err(c, ev->start_mark.line, "YAML tag '%s' is not supported (values are read as "
                    "written: leave the tag out)", tag);
}

/* The first pass: YAML syntax, nesting depth and tags, over the whole stream. */
static int check_events(tf_ctx *c, const char *text, size_t len)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return carma_err_set(c->err, "%s: out of memory", c->path);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int depth = 0, rc = 0;
    for (bool done = false; !done && rc == 0;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = syntax_err(c, &p);
            break;
        }
        switch (ev.type) {
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++depth > TASKFILE_MAX_DEPTH)
                rc = line_err(c, ev.start_mark.line, "nested more than %d deep (a task file "
                              "needs 2)", TASKFILE_MAX_DEPTH);
            else if (ev.type == YAML_SEQUENCE_START_EVENT)
                rc = check_tag(c, &ev, (const char *)ev.data.sequence_start.tag, YAML_SEQ_TAG);
            else
                rc = check_tag(c, &ev, (const char *)ev.data.mapping_start.tag, YAML_MAP_TAG);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_SCALAR_EVENT:
            rc = check_tag(c, &ev, (const char *)ev.data.scalar.tag, YAML_STR_TAG);
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* Whether a scalar holds a NUL ("a\0b" in double quotes): C strings would cut it there. */
static bool has_nul(const yaml_node_t *n)
{
    return strlen((const char *)n->data.scalar.value) != n->data.scalar.length;
}

static const char *node_kind(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return "a scalar";
    case YAML_SEQUENCE_NODE:
        return "a list";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "nothing";
    }
}

/* The text of a scalar node, or an error naming the key and what was found instead. */
static const char *scalar_of(tf_ctx *c, const yaml_node_t *n, const char *key, const char *want)
{
    if (n->type != YAML_SCALAR_NODE) {
        node_err(c, n, "%s: expected %s, got %s", key, want, node_kind(n));
        return NULL;
    }
    const char *v = (const char *)n->data.scalar.value;
    if (has_nul(n)) {
        node_err(c, n, "%s: contains a NUL character (\\0)", key);
        return NULL;
    }
    if (n->data.scalar.length > c->budget) {
        node_err(c, n, "%s: the file's aliases (*NAME) repeat more than %d bytes of values", key,
                 TASKFILE_MAX_BYTES);
        return NULL;
    }
    c->budget -= n->data.scalar.length;
    /* An unquoted empty value, `~` or `null` is YAML's null, not the text "null". */
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
         !strcmp(v, "NULL"))) {
        node_err(c, n, "%s: expected %s, got no value", key, want);
        return NULL;
    }
    return v;
}

static int get_string(tf_ctx *c, const yaml_node_t *n, const char *key, char **dst)
{
    const char *s = scalar_of(c, n, key, "a string");
    if (!s)
        return -1;
    if (!*s)
        return node_err(c, n, "%s: must not be empty", key);
    if (*dst)
        return node_err(c, n, "%s: given twice", key);
    if (!(*dst = str_dup(s)))
        return node_err(c, n, "out of memory");
    return 0;
}

static int get_int(tf_ctx *c, const yaml_node_t *n, const char *key, int lo, int hi, int *out)
{
    const char *s = scalar_of(c, n, key, "a whole number");
    int64_t v;
    if (!s)
        return -1;
    if (parse_i64(s, &v))
        return node_err(c, n, "%s: expected a whole number, got '%s'", key, s);
    if (v < lo || v > hi)
        return node_err(c, n, "%s: must be between %d and %d, got %lld", key, lo, hi,
                        (long long)v);
    *out = (int)v;
    return 0;
}

static int get_number(tf_ctx *c, const yaml_node_t *n, const char *key, double lo, double hi,
                      double *out)
{
    const char *s = scalar_of(c, n, key, "a number");
    double v;
    if (!s)
        return -1;
    if (parse_double(s, &v))
        return node_err(c, n, "%s: expected a number, got '%s'", key, s);
    if (v < lo || v > hi)
        return node_err(c, n, "%s: must be between %g and %g, got %g", key, lo, hi, v);
    *out = v;
    return 0;
}

static int get_size(tf_ctx *c, const yaml_node_t *n, const char *key, uint64_t *out)
{
    const char *s = scalar_of(c, n, key, "a memory size");
    if (!s)
        return -1;
    if (parse_size_mib(s, out))
        return node_err(c, n, "%s: expected a memory size (MiB, or e.g. 512M, 20G), got '%s'",
                        key, s);
    return 0;
}

/* Iterates a mapping's pairs, rejecting non-scalar and duplicate keys. */
typedef int (*pair_fn)(tf_ctx *c, const char *key, const yaml_node_t *keynode,
                       const yaml_node_t *value, void *arg);

/* A scalar key and where it is among its mapping's pairs, sorted to find duplicates. */
typedef struct key_at {
    const char *key;
    size_t at;
} key_at;

static int key_at_cmp(const void *a, const void *b)
{
    const key_at *x = a, *y = b;
    int d = strcmp(x->key, y->key);
    return d ? d : (x->at > y->at) - (x->at < y->at);
}

/* first[i]: the pair whose key pair i's repeats, else i. Sorted, not pair by pair: an env of
 * 100000 keys took a minute to check two by two. NULL when out of memory. */
static size_t *first_of_keys(tf_ctx *c, const yaml_node_t *map)
{
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    size_t n = (size_t)(map->data.mapping.pairs.top - pairs), m = 0;
    size_t *first = malloc((n ? n : 1) * sizeof *first);
    key_at *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!first || !keys) {
        free(first);
        free(keys);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *k = yaml_document_get_node(c->doc, pairs[i].key);
        first[i] = i;
        if (k->type == YAML_SCALAR_NODE)
            keys[m++] = (key_at){(const char *)k->data.scalar.value, i};
    }
    qsort(keys, m, sizeof *keys, key_at_cmp);
    for (size_t i = 1; i < m; i++)
        if (!strcmp(keys[i].key, keys[i - 1].key))
            first[keys[i].at] = first[keys[i - 1].at];
    free(keys);
    return first;
}

static int each_pair(tf_ctx *c, const yaml_node_t *map, const char *what, pair_fn fn, void *arg)
{
    if (map->type != YAML_MAPPING_NODE)
        return node_err(c, map, "%s: expected a mapping, got %s", what, node_kind(map));
    size_t *first = first_of_keys(c, map);
    if (!first)
        return node_err(c, map, "out of memory");
    int rc = 0;
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    for (size_t i = 0; rc == 0 && pairs + i < map->data.mapping.pairs.top; i++) {
        const yaml_node_t *k = yaml_document_get_node(c->doc, pairs[i].key);
        const yaml_node_t *v = yaml_document_get_node(c->doc, pairs[i].value);
        const char *key = k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
        if (k->type != YAML_SCALAR_NODE)
            rc = node_err(c, k, "%s: keys must be plain words, got %s", what, node_kind(k));
        else if (has_nul(k))
            rc = node_err(c, k, "%s: a key contains a NUL character (\\0)", what);
        else if (first[i] != i)
            rc = node_err(c, k, "duplicate key '%s' (first on line %zu)", key,
                          (size_t)yaml_document_get_node(c->doc, pairs[first[i]].key)
                                  ->start_mark.line + 1);
        else
            rc = fn(c, key, k, v, arg);
    }
    free(first);
    return rc;
}

/* ---- command ------------------------------------------------------------------------------ */

static int get_command(tf_ctx *c, const yaml_node_t *n, task_spec *t)
{
    if (n->type == YAML_SCALAR_NODE)
        return get_string(c, n, "command", &t->command);
    if (n->type != YAML_SEQUENCE_NODE)
        return node_err(c, n, "command: expected a string or a list of arguments, got %s",
                        node_kind(n));
    char *line = NULL;
    size_t len = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        const yaml_node_t *a = yaml_document_get_node(c->doc, *it);
        const char *s = scalar_of(c, a, "command", "a string argument");
        if (!s || str_append_shell_word(&line, &len, s)) {
            free(line);
            return s ? node_err(c, a, "out of memory") : -1;
        }
    }
    if (!line)
        return node_err(c, n, "command: the list of arguments is empty");
    t->command = line;
    return 0;
}

/* ---- env, estimates, sim ------------------------------------------------------------------ */

static int env_pair(tf_ctx *c, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                    void *arg)
{
    task_spec *t = arg;
    if (!str_env_name_valid(key, strlen(key)))
        return node_err(c, k, "env: '%s' is not a valid variable name", key);
    const char *val = scalar_of(c, v, "env value", "a string");
    if (!val)
        return -1;
    size_t n = strlen(key) + strlen(val) + 2;
    char *kv = malloc(n);
    if (!kv)
        return node_err(c, v, "out of memory");
    snprintf(kv, n, "%s=%s", key, val);
    int rc = task_spec_add_env(t, kv, c->err);
    free(kv);
    return rc;
}

static int estimate_pair(tf_ctx *c, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                         void *arg)
{
    task_spec *t = arg;
    mem_source src;
    if (mem_source_from_estimator(key, &src) || src == MEM_ORACLE)
        return node_err(c, k,
                        "estimates: unknown estimator '%s' (expected horus, faketensor, "
                        "gpumemnet, carma or xmem; the measured figure goes in `memory`)",
                        key);
    uint64_t mib;
    if (get_size(c, v, key, &mib))
        return -1;
    if (mib == 0) /* as `memory`: no task runs in no memory, and unknown is left out, not 0 */
        return node_err(c, v, "estimates: %s: must be more than 0 MiB, got '%s'", key,
                        (const char *)v->data.scalar.value);
    mem_figures_set(&t->mem, src, mib);
    return 0;
}

static int sim_pair(tf_ctx *c, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                    void *arg)
{
    task_sim_facts *s = arg;
    if (!strcmp(key, "solo_runtime_s"))
        return get_number(c, v, key, 0, 1e9, &s->solo_runtime_s);
    if (!strcmp(key, "smact"))
        return get_number(c, v, key, 0, 1, &s->smact);
    if (!strcmp(key, "smocc"))
        return get_number(c, v, key, 0, 1, &s->smocc);
    if (!strcmp(key, "drama"))
        return get_number(c, v, key, 0, 1, &s->drama);
    return node_err(c, k, "sim: unknown key '%s' (expected solo_runtime_s, smact, smocc, drama)",
                    key);
}

/* ---- top level ---------------------------------------------------------------------------- */

static int top_pair(tf_ctx *c, const char *key, const yaml_node_t *k, const yaml_node_t *v,
                    void *arg)
{
    task_spec *t = arg;
    if (!strcmp(key, "name"))
        return get_string(c, v, key, &t->name);
    if (!strcmp(key, "command"))
        return get_command(c, v, t);
    if (!strcmp(key, "workdir"))
        return get_string(c, v, key, &t->workdir);
    if (!strcmp(key, "summary"))
        return get_string(c, v, key, &t->summary_path);
    if (!strcmp(key, "conda"))
        return get_string(c, v, key, &t->conda_env);
    if (!strcmp(key, "gpus"))
        return get_int(c, v, key, 1, SCHED_MAX_TASK_GPUS, &t->ngpus);
    if (!strcmp(key, "batch_size"))
        return get_int(c, v, key, 1, 1 << 30, &t->batch_size);
    if (!strcmp(key, "max_retries"))
        return get_int(c, v, key, 0, 1000, &t->max_retries);
    if (!strcmp(key, "memory")) {
        uint64_t mib;
        if (get_size(c, v, key, &mib))
            return -1;
        if (mib == 0) /* the daemon refuses it: no task runs in no memory */
            return node_err(c, v, "memory: must be more than 0 MiB (a task needs some GPU "
                            "memory), got '%s'", (const char *)v->data.scalar.value);
        mem_figures_set(&t->mem, MEM_ORACLE, mib);
        return 0;
    }
    if (!strcmp(key, "env"))
        return each_pair(c, v, "env", env_pair, t);
    if (!strcmp(key, "estimates"))
        return each_pair(c, v, "estimates", estimate_pair, t);
    if (!strcmp(key, "sim"))
        return each_pair(c, v, "sim", sim_pair, &t->sim);
    return node_err(c, k,
                    "unknown key '%s' (expected name, command, workdir, env, conda, gpus, "
                    "memory, estimates, summary, batch_size, max_retries, sim)",
                    key);
}

/* The file name without directory and extension: the default task name. */
static char *default_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *name = str_dup(base);
    char *dot = name ? strrchr(name, '.') : NULL;
    if (dot && dot != name)
        *dot = '\0';
    return name;
}

static int fill_from_doc(tf_ctx *c, task_spec *t)
{
    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    if (!root)
        return carma_err_set(c->err, "%s: empty task file (expected at least `command:`)",
                             c->path);
    if (root->type != YAML_MAPPING_NODE)
        return node_err(c, root, "expected a mapping of keys (name, command, gpus, ...), got %s",
                        node_kind(root));
    t->ngpus = 1;
    if (each_pair(c, root, "task file", top_pair, t))
        return -1;
    if (!t->command)
        return node_err(c, root, "missing required key 'command'");
    if (!t->name && !(t->name = default_name(c->path)))
        return carma_err_set(c->err, "%s: out of memory", c->path);
    if (!(t->source_path = str_dup(c->path)))
        return carma_err_set(c->err, "%s: out of memory", c->path);
    return task_spec_validate(t, c->path, c->err);
}

int taskfile_parse(const char *name, const char *text, size_t len, task_spec *out,
                   carma_err *err)
{
    task_spec_init(out);
    if (len > TASKFILE_MAX_BYTES)
        return carma_err_set(err, "%s: %zu bytes is more than a task file may have (%d)", name,
                             len, TASKFILE_MAX_BYTES);
    if (memchr(text, '\0', len))
        return carma_err_set(err, "%s: contains NUL bytes (not a text file?)", name);
    yaml_parser_t parser;
    yaml_document_t doc;
    tf_ctx c = {name, NULL, err, TASKFILE_MAX_BYTES};
    if (check_events(&c, text, len))
        return -1;
    if (!yaml_parser_initialize(&parser))
        return carma_err_set(err, "%s: out of memory", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0;
    if (!yaml_parser_load(&parser, &doc)) {
        rc = syntax_err(&c, &parser);
        yaml_parser_delete(&parser);
        return rc;
    }
    c.doc = &doc;
    rc = fill_from_doc(&c, out);
    if (rc == 0) { /* a second document is a mistake, not something to ignore */
        yaml_document_t extra;
        if (!yaml_parser_load(&parser, &extra)) {
            rc = syntax_err(&c, &parser);
        } else {
            yaml_node_t *r = yaml_document_get_root_node(&extra);
            if (r)
                rc = carma_err_set(err, "%s:%zu: a task file holds one YAML document", name,
                                   (size_t)r->start_mark.line + 1);
            yaml_document_delete(&extra);
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc)
        task_spec_free(out);
    return rc;
}

int taskfile_load(const char *path, task_spec *out, carma_err *err)
{
    size_t len;
    char *text = read_file(path, &len, err);
    if (!text) {
        task_spec_init(out);
        return -1;
    }
    int rc = taskfile_parse(path, text, len, out, err);
    free(text);
    return rc;
}
