/* xmem_cache.c — see xmem_cache.h. The key is a 64-bit FNV-1a hash: a cache, not a security
 * boundary (the files are the user's own). */
#include "estimate/xmem_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    fnv_str(&h, "xmem-cache 2"); /* 2: with the files read */
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

/* The cache directory, opened (O_NOFOLLOW: the directory itself, whatever its path names
 * next); creates it. -1 when there is no home to put it in, or the directory is not ours alone:
 * under sudo with the user's HOME kept, root would otherwise write through the user's links. */
static int cache_dir(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[PATH_MAX];
    int n, base; /* the cache home's length: it and what is below it are made */
    if (xdg && *xdg)
        n = snprintf(dir, sizeof dir, "%s%n/carma/xmem", xdg, &base);
    else if (home && *home)
        n = snprintf(dir, sizeof dir, "%s/.cache%n/carma/xmem", home, &base);
    else
        return -1;
    if (n < 0 || (size_t)n >= sizeof dir)
        return -1;
    /* parents first; a failure shows when the directory is opened */
    for (char *slash = strchr(dir + base, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(dir, 0700);
        *slash = '/';
    }
    mkdir(dir, 0700);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022))) {
        close(fd);
        return -1;
    }
    return fd;
}

/* True when "SIZE MTIME_NS PATH" (carma_trace/files.py) still describes PATH: a module or
 * config the script read, changed since, makes the cached estimate stale. */
static bool file_unchanged(const char *line)
{
    long long size, mtime;
    int at = 0;
    struct stat st;
    if (!line || sscanf(line, "%lld %lld %n", &size, &mtime, &at) != 2 || !at ||
        stat(line + at, &st))
        return false;
    return st.st_size == size &&
           (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec == mtime;
}

static int load(int dir, const char *name, xmem_estimate *e)
{
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
    if (!f) {
        close(fd);
        return -1;
    }
    json_t *j = json_loadf(f, 0, NULL), *files = NULL;
    fclose(f);
    if (!j)
        return -1;
    int rc = json_unpack(j, "{s:F, s:F, s:F, s:F, s:F, s:F, s:b, s:i, s:o}", "mib",
                         &e->total_mib, "context_mib", &e->context_mib, "reserved_mib",
                         &e->reserved_mib, "workspaces_mib", &e->workspaces_mib, "margin_mib",
                         &e->margin_mib, "allocated_mib", &e->allocated_mib, "convolutions",
                         &e->convolutions, "steps", &e->steps, "files", &files);
    size_t i;
    json_t *v;
    json_array_foreach(files, i, v) {
        if (!rc && !file_unchanged(json_string_value(v)))
            rc = -1;
    }
    json_decref(j);
    return rc ? -1 : 0;
}

static void store(int dir, const char *name, const xmem_estimate *e, char *files)
{
    json_t *list = json_array();
    for (char *save = NULL, *l = strtok_r(files, "\n", &save); l && list;
         l = strtok_r(NULL, "\n", &save))
        if (json_array_append_new(list, json_string(l))) { /* not UTF-8: not cached */
            json_decref(list);
            list = NULL;
        }
    json_t *j = !list ? NULL
                      : json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:i, s:o}", "mib",
                                  e->total_mib, "context_mib", e->context_mib, "reserved_mib",
                                  e->reserved_mib, "workspaces_mib", e->workspaces_mib,
                                  "margin_mib", e->margin_mib, "allocated_mib", e->allocated_mib,
                                  "convolutions", e->convolutions, "steps", e->steps, "files",
                                  list);
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", name, (long)getpid());
    /* a new file of ours (O_EXCL never follows a link); whole files only, by rename: a failed
     * write costs a trace next time */
    int fd = j ? openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)
               : -1;
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !f)
        close(fd);
    bool ok = f && !json_dumpf(j, f, 0);
    if (f && fclose(f))
        ok = false;
    if (fd >= 0 && !(ok && renameat(dir, tmp, dir, name) == 0))
        unlinkat(dir, tmp, 0);
    json_decref(j);
}

int xmem_cached_estimate(char *const argv[], int argc, char *const env[], size_t nenv,
                         int iterations, xmem_estimate *e, bool *hit, carma_err *err)
{
    char name[32];
    snprintf(name, sizeof name, "%016llx.json",
             (unsigned long long)key_of(argv, argc, env, nenv, iterations));
    int dir = cache_dir();
    *hit = dir >= 0 && load(dir, name, e) == 0;
    int rc = 0;
    char *files = NULL;
    if (!*hit && xmem_run_files(argv, argc, iterations, xmem_default_coeffs(), e, &files, err))
        rc = -1;
    else if (!*hit && dir >= 0 && files) /* no list of what it read: not cached */
        store(dir, name, e, files);
    free(files);
    if (dir >= 0)
        close(dir);
    return rc;
}
