/* config.c — setting one key from its text, checking and writing carma's config, all by walking
 * the option table (config_table.c); reading files and --set pairs is config_load.c's. */
#include "config/config.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

/* ---- the names of the enum types, from their own tables ----------------------------------- */

static int enum_count(config_type type)
{
    switch (type) {
    case CONFIG_POLICY:
        return POLICY_COUNT;
    case CONFIG_ESTIMATOR:
        return MEM_SOURCE_COUNT;
    case CONFIG_AGG:
        return AGG_COUNT;
    default:
        return 0;
    }
}

static const char *enum_name(config_type type, int i)
{
    switch (type) {
    case CONFIG_POLICY:
        return policy_name((policy_id)i);
    case CONFIG_ESTIMATOR:
        return mem_source_estimator_name((mem_source)i);
    case CONFIG_AGG:
        return agg_mode_name((agg_mode)i);
    default:
        return "?";
    }
}

static const char *enum_what(config_type type)
{
    return type == CONFIG_POLICY      ? "policy"
           : type == CONFIG_ESTIMATOR ? "estimator"
                                      : "aggregation";
}

int config_names(config_type type, const char *sep, const char *last, char *buf, size_t size)
{
    int n = enum_count(type), len = 0;
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *before = i == 0 ? "" : i == n - 1 && last ? last : sep;
        size_t at = (size_t)len < size ? (size_t)len : size;
        int k = at < size ? snprintf(buf + at, size - at, "%s%s", before, enum_name(type, i))
                          : snprintf(NULL, 0, "%s%s", before, enum_name(type, i));
        len += k;
    }
    return len;
}

const char *config_scope_name(config_scope scope)
{
    switch (scope) {
    case CONFIG_SCHED:
        return "sched";
    case CONFIG_DAEMON:
        return "daemon";
    case CONFIG_SIM:
        return "sim";
    }
    return "?";
}

/* ---- the rows ------------------------------------------------------------------------------ */

const config_row *config_find(const char *name)
{
    for (size_t i = 0; i < config_nrows; i++)
        if (!strcmp(config_rows[i].name, name))
            return &config_rows[i];
    return NULL;
}

static void *field_of(carma_config *cfg, const config_row *r)
{
    return (char *)cfg + r->offset;
}

static const void *cfield_of(const carma_config *cfg, const config_row *r)
{
    return (const char *)cfg + r->offset;
}

/* The row's default, as a pointer to a value of its type. */
static const void *default_of(const config_row *r)
{
    switch (r->type) {
    case CONFIG_POLICY:
        return r->def.policy;
    case CONFIG_ESTIMATOR:
        return r->def.estimator;
    case CONFIG_AGG:
        return r->def.agg;
    case CONFIG_DOUBLE:
        return r->def.d;
    case CONFIG_INT:
        return r->def.i;
    case CONFIG_MIB:
        return r->def.mib;
    case CONFIG_BOOL:
        return r->def.b;
    case CONFIG_STRING:
        return r->def.s;
    case CONFIG_GPU_MODELS:
        return r->def.models;
    }
    return NULL;
}

static size_t size_of(config_type type)
{
    switch (type) {
    case CONFIG_POLICY:
        return sizeof(policy_id);
    case CONFIG_ESTIMATOR:
        return sizeof(mem_source);
    case CONFIG_AGG:
        return sizeof(agg_mode);
    case CONFIG_DOUBLE:
        return sizeof(double);
    case CONFIG_INT:
        return sizeof(int);
    case CONFIG_MIB:
        return sizeof(uint64_t);
    case CONFIG_BOOL:
        return sizeof(bool);
    case CONFIG_STRING:
        return CONFIG_STR_MAX;
    case CONFIG_GPU_MODELS:
        return sizeof(gpu_model_list);
    }
    return 0;
}

void config_defaults(carma_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < config_nrows; i++) {
        const config_row *r = &config_rows[i];
        if (r->type == CONFIG_STRING)
            snprintf(field_of(cfg, r), CONFIG_STR_MAX, "%s", r->def.s);
        else
            memcpy(field_of(cfg, r), default_of(r), size_of(r->type));
    }
}

/* The bounds a row's value must be in: its own, and for an int within +-CONFIG_INT_MAX where
 * it has none (a row's own wider bound, as 1 << 30 MiB, stands: it fits an int). Messages and
 * --list say these, so that what they promise is what is taken. */
static sched_bounds row_bounds(const config_row *r)
{
    sched_bounds b = *r->bounds;
    if (r->type == CONFIG_INT && isinf(b.max))
        b.max = CONFIG_INT_MAX;
    if (r->type == CONFIG_INT && b.min < -CONFIG_INT_MAX)
        b.min = -CONFIG_INT_MAX;
    return b;
}

/* "KEY: expected <what the row takes>, got 'TEXT'" */
static int expected(const config_row *r, const char *value, carma_err *err)
{
    char what[96];
    sched_bounds b = row_bounds(r);
    sched_bounds_describe(&b, what, sizeof what);
    return carma_err_set(err, "%s: expected %s, got '%s'", r->name, what, value);
}

static int parse_enum(config_type type, const char *value, void *field)
{
    switch (type) {
    case CONFIG_POLICY:
        return policy_from_name(value, field);
    case CONFIG_ESTIMATOR:
        return mem_source_from_estimator(value, field);
    case CONFIG_AGG:
        return agg_mode_from_name(value, field);
    default:
        return -1;
    }
}

static int set_row(carma_config *cfg, const config_row *r, const char *value, carma_err *err)
{
    void *field = field_of(cfg, r);
    switch (r->type) {
    case CONFIG_POLICY:
    case CONFIG_ESTIMATOR:
    case CONFIG_AGG:
        if (parse_enum(r->type, value, field)) {
            char names[512];
            config_names(r->type, ", ", " or ", names, sizeof names);
            return carma_err_set(err, "%s: unknown %s '%s' (expected %s)", r->name,
                                 enum_what(r->type), value, names);
        }
        return 0;
    case CONFIG_DOUBLE: {
        double d;
        if (parse_double(value, &d))
            return expected(r, value, err);
        if (sched_bounds_check(r->bounds, d, r->name, err))
            return -1;
        *(double *)field = d;
        return 0;
    }
    case CONFIG_INT: {
        int64_t i;
        sched_bounds b = row_bounds(r);
        if (parse_i64(value, &i)) /* past int64 too: past the bounds, said as typed */
            return expected(r, value, err);
        if (sched_bounds_check(&b, (double)i, r->name, err))
            return -1;
        *(int *)field = (int)i;
        return 0;
    }
    case CONFIG_MIB: {
        uint64_t u;
        if (parse_size_mib(value, &u))
            return carma_err_set(err, "%s: expected a size in MiB (e.g. 2048, 2G), got '%s'",
                                 r->name, value);
        *(uint64_t *)field = u;
        return 0;
    }
    case CONFIG_BOOL:
        if (parse_bool(value, field))
            return carma_err_set(err, "%s: expected on or off, got '%s'", r->name, value);
        return 0;
    case CONFIG_STRING:
        if (!*value) /* empty: the built-in default, which for some keys is empty too */
            value = r->def.s;
        if (strlen(value) >= CONFIG_STR_MAX)
            return carma_err_set(err, "%s: value longer than %d characters", r->name,
                                 CONFIG_STR_MAX - 1);
        strcpy(field, value);
        return 0;
    case CONFIG_GPU_MODELS: {
        gpu_model m;
        if (gpu_model_parse(value, &m, err) || gpu_model_list_add(field, &m, err))
            return carma_err_prefix(err, "%s", r->name);
        return 0;
    }
    }
    return carma_err_set(err, "%s: unhandled option type", r->name);
}

int config_set(carma_config *cfg, const char *key, const char *value, carma_err *err)
{
    const config_row *r = config_find(key);
    if (!r)
        return carma_err_set(err, "unknown config key '%s' (see `carma config --list`)", key);
    /* A value is one line of a config file: a newline in a --set would write a second line
     * (another key) into `carma config`'s output, other controls garble it. */
    for (const unsigned char *p = (const unsigned char *)value; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return carma_err_set(err, "%s: control character \\x%02x in the value (a value is "
                                 "one line of text)", r->name, *p);
    return set_row(cfg, r, value, err);
}

int config_check(const carma_config *cfg, const config_row **culprit, carma_err *err)
{
    const config_row *bad = NULL;
    for (size_t i = 0; i < config_nrows && !bad; i++) {
        const config_row *r = &config_rows[i];
        const void *field = cfield_of(cfg, r);
        if ((r->type == CONFIG_DOUBLE &&
             sched_bounds_check(r->bounds, *(const double *)field, r->name, err)) ||
            (r->type == CONFIG_INT &&
             sched_bounds_check(r->bounds, *(const int *)field, r->name, err)))
            bad = r;
    }
    for (size_t i = 0; i < config_nrows && !bad; i++)
        if (config_rows[i].check && config_rows[i].check(cfg, err))
            bad = &config_rows[i];
    if (culprit)
        *culprit = bad;
    if (bad)
        return -1;
    /* The rows cover these; they guard that what passes here is what the core and the
     * simulator accept. */
    if (sched_config_validate(&cfg->sched, err))
        return -1;
    return sim_params_validate(&cfg->sim, err);
}

int config_validate(const carma_config *cfg, carma_err *err)
{
    return config_check(cfg, NULL, err);
}

/* ---- writing ------------------------------------------------------------------------------- */

/* A value as config_load.c reads it back: in double quotes (" and \ escaped) when it holds a
 * '#', starts with a quote or has spaces at either end, which an unquoted value would lose. */
static void write_text(const char *s, FILE *out)
{
    size_t n = strlen(s);
    if (!n || (!strchr(s, '#') && s[0] != '"' && !isspace((unsigned char)s[0]) &&
               !isspace((unsigned char)s[n - 1]))) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* NAME:MEMORY:IDLE_W:MAX_W, every number exact (as gpu_model_parse reads it). */
#define GPU_MODEL_TEXT_MAX (GPU_MODEL_NAME_MAX + 96)
static const char *model_text(const gpu_model *m, char *buf, size_t size)
{
    char idle[32], max[32];
    fmt_double(idle, sizeof idle, m->idle_w);
    fmt_double(max, sizeof max, m->max_w);
    snprintf(buf, size, "%s:%llu:%s:%s", m->name, (unsigned long long)m->memory_mib, idle, max);
    return buf;
}

static void write_value(const config_row *r, const void *field, FILE *out)
{
    switch (r->type) {
    case CONFIG_POLICY:
        fputs(policy_name(*(const policy_id *)field), out);
        break;
    case CONFIG_ESTIMATOR:
        fputs(mem_source_estimator_name(*(const mem_source *)field), out);
        break;
    case CONFIG_AGG:
        fputs(agg_mode_name(*(const agg_mode *)field), out);
        break;
    case CONFIG_DOUBLE: {
        char num[32];
        fmt_double(num, sizeof num, *(const double *)field); /* as typed, and exact */
        fputs(num, out);
        break;
    }
    case CONFIG_MIB:
        fprintf(out, "%llu", (unsigned long long)*(const uint64_t *)field);
        break;
    case CONFIG_INT:
        fprintf(out, "%d", *(const int *)field);
        break;
    case CONFIG_STRING:
        write_text(field, out);
        break;
    case CONFIG_BOOL:
        fputs(*(const bool *)field ? "on" : "off", out);
        break;
    case CONFIG_GPU_MODELS: {
        const gpu_model_list *l = field;
        for (int j = 0; j < l->n; j++) {
            char model[GPU_MODEL_TEXT_MAX];
            fputs(j ? ", " : "", out);
            write_text(model_text(&l->items[j], model, sizeof model), out);
        }
        if (l->n == 0)
            fputs("none", out);
        break;
    }
    }
}

/* "# help", with "{}" written as the names the row takes. */
static void write_help(const config_row *r, FILE *out)
{
    const char *mark = enum_count(r->type) ? strstr(r->help, "{}") : NULL;
    if (!mark) {
        fprintf(out, "# %s\n", r->help);
        return;
    }
    char names[512];
    config_names(r->type, ", ", NULL, names, sizeof names);
    fprintf(out, "# %.*s%s%s\n", (int)(mark - r->help), r->help, names, mark + 2);
}

/* "#   applies to: SCOPE (COMMANDS); takes ...; default ..." */
static void write_about(const config_row *r, FILE *out)
{
    static const char *const users[] = {
        [CONFIG_SCHED] = "carma daemon and carma simulate",
        [CONFIG_DAEMON] = "carma daemon",
        [CONFIG_SIM] = "carma simulate",
    };
    char takes[512];
    switch (r->type) {
    case CONFIG_POLICY:
    case CONFIG_ESTIMATOR:
    case CONFIG_AGG: {
        char names[480];
        config_names(r->type, ", ", " or ", names, sizeof names);
        snprintf(takes, sizeof takes, "%s", names);
        break;
    }
    case CONFIG_DOUBLE:
    case CONFIG_INT: {
        sched_bounds b = row_bounds(r);
        sched_bounds_describe(&b, takes, sizeof takes);
        break;
    }
    case CONFIG_MIB:
        snprintf(takes, sizeof takes, "a size in MiB (e.g. 2048, 2G)");
        break;
    case CONFIG_BOOL:
        snprintf(takes, sizeof takes, "on or off");
        break;
    case CONFIG_STRING:
        snprintf(takes, sizeof takes, "text");
        break;
    case CONFIG_GPU_MODELS:
        snprintf(takes, sizeof takes, "NAME:MEMORY:IDLE_W:MAX_W, once per model");
        break;
    }
    fprintf(out, "#   applies to: %s (%s); takes %s; default ", config_scope_name(r->scope),
            users[r->scope], takes);
    if (r->type == CONFIG_STRING && !*r->def.s)
        fputs("empty", out);
    else
        write_value(r, default_of(r), out);
    fputs("\n", out);
}

static void write_rows(const carma_config *cfg, bool about, FILE *out)
{
    for (size_t i = 0; i < config_nrows; i++) {
        const config_row *r = &config_rows[i];
        write_help(r, out);
        if (about)
            write_about(r, out);
        if (r->type == CONFIG_GPU_MODELS) { /* one line per model */
            const gpu_model_list *l = cfield_of(cfg, r);
            if (l->n == 0)
                fprintf(out, "# %s = A30-24GB:24G:30:165\n", r->name);
            for (int j = 0; j < l->n; j++) {
                char model[GPU_MODEL_TEXT_MAX];
                fprintf(out, "%s = ", r->name);
                write_text(model_text(&l->items[j], model, sizeof model), out);
                fputs("\n", out);
            }
        } else {
            fprintf(out, "%s = ", r->name);
            write_value(r, cfield_of(cfg, r), out);
            fputs("\n", out);
        }
        fputs("\n", out);
    }
}

void config_write(const carma_config *cfg, FILE *out)
{
    write_rows(cfg, false, out);
}

void config_write_list(const carma_config *cfg, FILE *out)
{
    write_rows(cfg, true, out);
}
