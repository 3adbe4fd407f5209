/* proto.c — JSON encoding of requests, replies and submissions. */
#include "daemon/proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

static const char *const mem_names[MEM_SOURCE_COUNT] = {
    [MEM_ORACLE] = "oracle",       [MEM_HORUS] = "horus", [MEM_FAKETENSOR] = "faketensor",
    [MEM_GPUMEMNET] = "gpumemnet", [MEM_CARMA] = "carma", [MEM_XMEM] = "xmem",
};

const char *proto_mem_source_name(mem_source src)
{
    return (unsigned)src < MEM_SOURCE_COUNT ? mem_names[src] : "unknown";
}

void submission_init(submission *s)
{
    memset(s, 0, sizeof *s);
    s->ngpus = 1;
    s->max_retries = -1;
    s->array_index = -1;
}

void submission_free(submission *s)
{
    free(s->name);
    free(s->command);
    free(s->cwd);
    for (size_t i = 0; i < s->nenv; i++)
        free(s->env[i]);
    free(s->env);
    free(s->summary);
    free(s->source);
    free(s->conda_env);
    free(s->deps);
    submission_init(s);
}

int submission_add_env(submission *s, const char *kv, carma_err *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return carma_err_set(err, "environment entry '%s': expected KEY=VALUE", kv);
    char **env = realloc(s->env, (s->nenv + 1) * sizeof *env);
    if (!env)
        return carma_err_set(err, "out of memory");
    s->env = env;
    if (!(env[s->nenv] = str_dup(kv)))
        return carma_err_set(err, "out of memory");
    s->nenv++;
    return 0;
}

int submission_add_dep(submission *s, uint64_t id, bool ok, carma_err *err)
{
    if (s->ndeps >= SUB_MAX_DEPS)
        return carma_err_set(err, "more than %d dependencies", SUB_MAX_DEPS);
    sub_dep *d = realloc(s->deps, (s->ndeps + 1) * sizeof *d);
    if (!d)
        return carma_err_set(err, "out of memory");
    s->deps = d;
    d[s->ndeps++] = (sub_dep){id, ok};
    return 0;
}

bool submission_env_reserved(const char *kv)
{
    static const char *const names[] = {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
                                        "CUDA_DEVICE_ORDER",    "CARMA_TASK_ID",
                                        "CARMA_ATTEMPT",        "CARMA_ARRAY_INDEX",
                                        "CARMA_SIM_STATE"};
    size_t klen = strcspn(kv, "=");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == klen && !strncmp(kv, names[i], klen))
            return true;
    return !strncmp(kv, "CUDA_MPS_", 9);
}

/* Optional string member; NULL stays NULL. Errors when present but not a string. */
static int get_string(const json_t *j, const char *key, char **out, bool required, carma_err *err)
{
    json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v)) {
        if (required)
            return carma_err_set(err, "task.%s: missing", key);
        return 0;
    }
    if (!json_is_string(v))
        return carma_err_set(err, "task.%s: expected a string", key);
    if (memchr(json_string_value(v), '\0', json_string_length(v)))
        return carma_err_set(err, "task.%s: contains a NUL byte", key);
    free(*out);
    if (!(*out = str_dup(json_string_value(v))))
        return carma_err_set(err, "out of memory");
    return 0;
}

static int get_int(const json_t *j, const char *key, int *out, int lo, int hi, carma_err *err)
{
    json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return carma_err_set(err, "task.%s: expected an integer %d..%d", key, lo, hi);
    *out = (int)json_integer_value(v);
    return 0;
}

/* The environment, within its bounds (SUB_MAX_ENV_VARS, SUB_MAX_ENV_BYTES). */
static int get_env(const json_t *j, submission *out, carma_err *err)
{
    json_t *env = json_object_get(j, "env"), *e;
    if (!env || json_is_null(env))
        return 0;
    if (!json_is_array(env))
        return carma_err_set(err, "task.env: expected an array of \"KEY=VALUE\" strings");
    if (json_array_size(env) > SUB_MAX_ENV_VARS)
        return carma_err_set(err, "task.env: %zu variables, at most %d are passed",
                             json_array_size(env), SUB_MAX_ENV_VARS);
    size_t i, bytes = 0;
    json_array_foreach(env, i, e) {
        if (!json_is_string(e) || memchr(json_string_value(e), '\0', json_string_length(e)))
            return carma_err_set(err, "task.env[%zu]: expected a \"KEY=VALUE\" string", i);
        bytes += json_string_length(e) + 1;
        if (bytes > SUB_MAX_ENV_BYTES)
            return carma_err_set(err, "task.env: more than %d KiB of variables",
                                 SUB_MAX_ENV_BYTES / 1024);
        if (submission_add_env(out, json_string_value(e), err))
            return -1;
    }
    return 0;
}

/* "after" / "afterok": task ids. */
static int get_deps(const json_t *j, const char *key, bool ok, submission *out, carma_err *err)
{
    json_t *a = json_object_get(j, key), *e;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a))
        return carma_err_set(err, "task.%s: expected an array of task ids", key);
    size_t i;
    json_array_foreach(a, i, e) {
        if (!json_is_integer(e) || json_integer_value(e) < 1)
            return carma_err_set(err, "task.%s[%zu]: expected a task id", key, i);
        if (submission_add_dep(out, (uint64_t)json_integer_value(e), ok, err))
            return carma_err_prefix(err, "task.%s", key);
    }
    return 0;
}

int submission_from_json(const json_t *j, submission *out, carma_err *err)
{
    submission_init(out);
    if (!json_is_object(j))
        return carma_err_set(err, "task: expected an object");
    static const char *const known[] = {
        "name",  "command", "cwd",      "env",          "ngpus",       "mem",
        "max_retries", "summary", "batch", "source",    "conda_env",   "after",
        "afterok", "time_limit_s", "array_index", "priority", "hold"};
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)j, key, v) {
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            ok |= !strcmp(key, known[i]);
        if (!ok) {
            carma_err_set(err, "task.%s: unknown field", key);
            goto fail;
        }
    }
    if (get_string(j, "command", &out->command, true, err) ||
        get_string(j, "cwd", &out->cwd, true, err) ||
        get_string(j, "name", &out->name, false, err) ||
        get_string(j, "summary", &out->summary, false, err) ||
        get_string(j, "source", &out->source, false, err) ||
        get_int(j, "ngpus", &out->ngpus, 1, SCHED_MAX_TASK_GPUS, err) ||
        get_int(j, "max_retries", &out->max_retries, -1, 1000, err) ||
        get_int(j, "batch", &out->batch, 0, 1 << 30, err) ||
        get_string(j, "conda_env", &out->conda_env, false, err) ||
        get_int(j, "array_index", &out->array_index, 0, 1000000, err) ||
        get_int(j, "priority", &out->priority, -SUB_MAX_PRIORITY, SUB_MAX_PRIORITY, err) ||
        get_deps(j, "after", false, out, err) || get_deps(j, "afterok", true, out, err) ||
        get_env(j, out, err))
        goto fail;
    json_t *hold = json_object_get(j, "hold"), *limit = json_object_get(j, "time_limit_s");
    if (hold && !json_is_boolean(hold)) {
        carma_err_set(err, "task.hold: expected true or false");
        goto fail;
    }
    out->hold = json_is_true(hold);
    if (limit && !json_is_null(limit)) {
        if (!json_is_integer(limit) || json_integer_value(limit) < 0 ||
            json_integer_value(limit) > SUB_MAX_TIME_S) {
            carma_err_set(err, "task.time_limit_s: expected seconds 0..%lld", SUB_MAX_TIME_S);
            goto fail;
        }
        out->time_limit_s = (int64_t)json_integer_value(limit);
    }
    /* a name a shell word can carry (it is quoted), as conda names and prefixes are */
    if (out->conda_env && (!*out->conda_env || strlen(out->conda_env) > 255 ||
                           strpbrk(out->conda_env, "\n\r\t"))) {
        carma_err_set(err, "task.conda_env: expected an environment name or path");
        goto fail;
    }
    if (!*str_trim(out->command)) {
        carma_err_set(err, "task.command: empty");
        goto fail;
    }
    if (out->cwd[0] != '/') {
        carma_err_set(err, "task.cwd: expected an absolute path, got '%s'", out->cwd);
        goto fail;
    }
    if (!out->name) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.63s", out->command);
        char *sp = strchr(buf, ' ');
        if (sp)
            *sp = '\0';
        const char *slash = strrchr(buf, '/');
        if (!(out->name = str_dup(slash ? slash + 1 : buf)))
            goto oom;
    }
    json_t *mem = json_object_get(j, "mem");
    if (mem && !json_is_null(mem)) {
        if (!json_is_object(mem)) {
            carma_err_set(err, "task.mem: expected an object of MiB figures by source");
            goto fail;
        }
        json_object_foreach(mem, key, v) {
            int src = -1;
            for (int k = 0; k < MEM_SOURCE_COUNT; k++)
                if (!strcmp(key, mem_names[k]))
                    src = k;
            if (src < 0) {
                carma_err_set(err, "task.mem.%s: unknown source (oracle, horus, faketensor, "
                                   "gpumemnet, carma, xmem)", key);
                goto fail;
            }
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                json_integer_value(v) > (json_int_t)1 << 40) {
                carma_err_set(err, "task.mem.%s: expected MiB as a non-negative integer", key);
                goto fail;
            }
            mem_figures_set(&out->mem, (mem_source)src, (uint64_t)json_integer_value(v));
        }
    }
    return 0;
oom:
    carma_err_set(err, "out of memory");
fail:
    submission_free(out);
    return -1;
}

int submission_check_new(const submission *s, carma_err *err)
{
    const struct {
        const char *field, *value;
        size_t max;
    } bounds[] = {
        {"name", s->name, SUB_MAX_NAME},      {"command", s->command, SUB_MAX_COMMAND},
        {"cwd", s->cwd, SUB_MAX_PATH},        {"summary", s->summary, SUB_MAX_PATH},
        {"source", s->source, SUB_MAX_PATH},
    };
    if (s->name && !*s->name)
        return carma_err_set(err, "task.name: empty");
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        size_t n = bounds[i].value ? strlen(bounds[i].value) : 0;
        if (n > bounds[i].max)
            return carma_err_set(err, "task.%s: %zu bytes, at most %zu%s", bounds[i].field, n,
                                 bounds[i].max,
                                 bounds[i].max == SUB_MAX_COMMAND
                                     ? " (what /bin/sh -c can be given, less carma's wrapping)"
                                     : "");
    }
    return 0;
}

json_t *submission_to_json(const submission *s)
{
    json_t *j = json_object(), *env = json_array(), *mem = json_object();
    if (s->name)
        json_object_set_new(j, "name", json_string(s->name));
    json_object_set_new(j, "command", json_string(s->command ? s->command : ""));
    json_object_set_new(j, "cwd", json_string(s->cwd ? s->cwd : ""));
    for (size_t i = 0; i < s->nenv; i++)
        json_array_append_new(env, json_string(s->env[i]));
    json_object_set_new(j, "env", env);
    json_object_set_new(j, "ngpus", json_integer(s->ngpus));
    for (int k = 0; k < MEM_SOURCE_COUNT; k++) {
        uint64_t mib;
        if (mem_figures_get(&s->mem, (mem_source)k, &mib))
            json_object_set_new(mem, mem_names[k], json_integer((json_int_t)mib));
    }
    json_object_set_new(j, "mem", mem);
    json_object_set_new(j, "max_retries", json_integer(s->max_retries));
    if (s->summary)
        json_object_set_new(j, "summary", json_string(s->summary));
    if (s->batch)
        json_object_set_new(j, "batch", json_integer(s->batch));
    if (s->source)
        json_object_set_new(j, "source", json_string(s->source));
    if (s->conda_env)
        json_object_set_new(j, "conda_env", json_string(s->conda_env));
    json_t *deps[2] = {NULL, NULL};
    for (size_t i = 0; i < s->ndeps; i++) {
        json_t **a = &deps[s->deps[i].ok];
        if (!*a)
            *a = json_array();
        json_array_append_new(*a, json_integer((json_int_t)s->deps[i].id));
    }
    if (deps[0])
        json_object_set_new(j, "after", deps[0]);
    if (deps[1])
        json_object_set_new(j, "afterok", deps[1]);
    if (s->time_limit_s)
        json_object_set_new(j, "time_limit_s", json_integer(s->time_limit_s));
    if (s->array_index >= 0)
        json_object_set_new(j, "array_index", json_integer(s->array_index));
    if (s->priority)
        json_object_set_new(j, "priority", json_integer(s->priority));
    if (s->hold)
        json_object_set_new(j, "hold", json_true());
    return j;
}

json_t *proto_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *j = json_object();
    json_object_set_new(j, "ok", json_false());
    json_object_set_new(j, "error", proto_string_lossy(msg, strlen(msg)));
    return j;
}

json_t *proto_ok(void)
{
    json_t *j = json_object();
    json_object_set_new(j, "ok", json_true());
    return j;
}

char *proto_encode_line(const json_t *j, size_t *len)
{
    char *s = json_dumps(j, JSON_COMPACT);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *line = realloc(s, n + 2);
    if (!line) {
        free(s);
        return NULL;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    if (len)
        *len = n + 1;
    return line;
}

size_t proto_utf8_whole(const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    /* the last lead byte, behind at most 3 continuation bytes */
    for (size_t k = 1; k <= 4 && k <= len; k++) {
        unsigned char c = p[len - k];
        if ((c & 0xC0) == 0x80)
            continue;
        size_t n = c >= 0xC2 && c < 0xE0   ? 2
                   : c >= 0xE0 && c < 0xF0 ? 3
                   : c >= 0xF0 && c < 0xF5 ? 4
                                           : 1;
        return n > k ? len - k : len;
    }
    return len;
}

json_t *proto_string_lossy(const char *data, size_t len)
{
    char *buf = malloc(len + 1);
    if (!buf)
        return json_string("");
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t n = str_utf8_seq(data + i, len - i);
        if (n == 0) {
            buf[o++] = '?';
            i++;
        } else {
            memcpy(buf + o, data + i, n);
            o += n;
            i += n;
        }
    }
    json_t *j = json_stringn(buf, o);
    free(buf);
    return j ? j : json_string("");
}
