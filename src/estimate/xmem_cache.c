/* xmem_cache.c — see xmem_cache.h. The key is a 64-bit FNV-1a hash: a cache, not a security
 * boundary (the files are the user's own). */
#include "estimate/xmem_cache.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "estimate/xmem_run.h"
#include "util/strutil.h"

extern char **environ;

static const char *const env_prefixes[] = {"PYTORCH_", "TORCH_", "CUDA_", "CUBLAS_", "CUDNN_",
                                           "OMP_"};

static void fnv(uint64_t *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        *h ^= p[i];
        *h *= 1099511628211ull;
    }
}

static void fnv_str(uint64_t *h, const char *s)
{
    fnv(h, s, strlen(s) + 1); /* the NUL separates the fields */
}

static bool is_interpreter(const char *word)
{
    const char *base = strrchr(word, '/');
    return !strncmp(base ? base + 1 : word, "python", 6);
}

bool xmem_command_is_python(char *const argv[], int argc)
{
    int i = argc > 0 && is_interpreter(argv[0]) ? 1 : 0;
    if (i >= argc)
        return false;
    size_t n = strlen(argv[i]);
    return !strcmp(argv[i], "-m") || (n > 3 && !strcmp(argv[i] + n - 3, ".py"));
}

/* Hashes the script file's bytes; a command without a readable script hashes its words only. */
static void hash_script(uint64_t *h, char *const argv[], int argc)
{
    int i = argc > 0 && is_interpreter(argv[0]) ? 1 : 0;
    if (i >= argc || argv[i][0] == '-')
        return; /* -m MODULE (its name is in the words) */
    FILE *f = fopen_regular(argv[i], NULL); /* never a FIFO's wait */
    if (!f)
        return;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fnv(h, buf, n);
    fclose(f);
}

static uint64_t key_of(char *const argv[], int argc, char *const env[], size_t nenv,
                       int iterations)
{
    uint64_t h = 14695981039346656037ull;
    fnv_str(&h, "xmem-cache 1");
    const xmem_coeffs *c = xmem_default_coeffs();
    fnv(&h, c, sizeof *c);
    fnv(&h, &iterations, sizeof iterations);
    hash_script(&h, argv, argc);
    for (int i = 0; i < argc; i++)
        fnv_str(&h, argv[i]);
    fnv_str(&h, "--env--");
    for (size_t i = 0; env && i < nenv; i++)
        fnv_str(&h, env[i]);
    fnv_str(&h, "--own-env--");
    for (char **e = environ; e && *e; e++)
        for (size_t k = 0; k < sizeof env_prefixes / sizeof *env_prefixes; k++)
            if (!strncmp(*e, env_prefixes[k], strlen(env_prefixes[k])))
                fnv_str(&h, *e);
    return h;
}

/* The cache file's path; creates its directories. -1 when there is no home to put it in. */
static int cache_path(uint64_t key, char *buf, size_t cap)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[PATH_MAX];
    if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/carma", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/carma", home);
    else
        return -1;
    char sub[PATH_MAX + 8];
    snprintf(sub, sizeof sub, "%s/xmem", dir);
    if (strlen(sub) >= sizeof dir)
        return -1;
    /* parents first; a failure shows when the file is written */
    char *parent = strdup(dir);
    if (parent) {
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = '\0';
            mkdir(parent, 0700);
        }
        free(parent);
    }
    mkdir(dir, 0700);
    mkdir(sub, 0700);
    int n = snprintf(buf, cap, "%s/%016llx.json", sub, (unsigned long long)key);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int load(const char *path, xmem_estimate *e)
{
    json_t *j = json_load_file(path, 0, NULL);
    if (!j)
        return -1;
    int rc = json_unpack(j, "{s:F, s:F, s:F, s:F, s:F, s:F, s:b, s:i}", "mib", &e->total_mib,
                         "context_mib", &e->context_mib, "reserved_mib", &e->reserved_mib,
                         "workspaces_mib", &e->workspaces_mib, "margin_mib", &e->margin_mib,
                         "allocated_mib", &e->allocated_mib, "convolutions", &e->convolutions,
                         "steps", &e->steps);
    json_decref(j);
    return rc ? -1 : 0;
}

static void store(const char *path, const xmem_estimate *e)
{
    json_t *j = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:i}", "mib", e->total_mib,
                          "context_mib", e->context_mib, "reserved_mib", e->reserved_mib,
                          "workspaces_mib", e->workspaces_mib, "margin_mib", e->margin_mib,
                          "allocated_mib", e->allocated_mib, "convolutions", e->convolutions,
                          "steps", e->steps);
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (j && !json_dump_file(j, tmp, 0))
        rename(tmp, path); /* whole files only; a failed cache write costs a trace next time */
    else
        remove(tmp);
    json_decref(j);
}

int xmem_cached_estimate(char *const argv[], int argc, char *const env[], size_t nenv,
                         int iterations, xmem_estimate *e, bool *hit, carma_err *err)
{
    char path[PATH_MAX];
    bool cacheable = cache_path(key_of(argv, argc, env, nenv, iterations), path, sizeof path) == 0;
    *hit = cacheable && load(path, e) == 0;
    if (*hit)
        return 0;
    if (xmem_run(argv, argc, iterations, xmem_default_coeffs(), e, err))
        return -1;
    if (cacheable)
        store(path, e);
    return 0;
}
