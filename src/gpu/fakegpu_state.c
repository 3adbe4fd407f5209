/* fakegpu_state.c — reading and updating the fake-GPU backend's shared state file under flock.
 * The file is never written in place: each change is written whole to a private temporary file
 * beside it, flushed, and renamed over it (replace_file), so that a writer killed at any point
 * leaves the old contents or the new one, never a truncated file. */
#include "gpu/fakegpu_state.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/strutil.h"

static double tdp_for(const char *name)
{
    if (strstr(name, "H100") || strstr(name, "H200"))
        return 700;
    if (strstr(name, "A100"))
        return 400;
    if (strstr(name, "V100"))
        return 300;
    return 250;
}

static int parse_one(const char *item, fakegpu_state *out, carma_err *err)
{
    int count = 1;
    const char *name = item;
    const char *x = strchr(item, 'x');
    if (x && x > item) {
        char num[16];
        size_t n = (size_t)(x - item);
        int64_t c;
        if (n < sizeof num) {
            memcpy(num, item, n);
            num[n] = '\0';
            if (parse_i64(num, &c) == 0) {
                if (c < 1 || c > FAKEGPU_MAX_GPUS)
                    return carma_err_set(err, "sim GPUs '%s': count must be 1..%d", item,
                                         FAKEGPU_MAX_GPUS);
                count = (int)c;
                name = x + 1;
            }
        }
    }
    const char *dash = strrchr(name, '-');
    uint64_t gb = 0;
    if (!dash || !str_ends_with(dash, "GB") || strlen(dash) < 4)
        return carma_err_set(err, "sim GPUs '%s': expected COUNTxNAME-<N>GB, e.g. 2xA100-40GB",
                             item);
    char num[16];
    size_t n = strlen(dash + 1) - 2;
    if (n >= sizeof num)
        return carma_err_set(err, "sim GPUs '%s': memory size too long", item);
    memcpy(num, dash + 1, n);
    num[n] = '\0';
    if (parse_u64(num, &gb) || gb == 0 || gb > 4096)
        return carma_err_set(err, "sim GPUs '%s': bad memory size '%s'", item, num);
    if (strlen(name) >= sizeof out->gpus[0].name || strchr(name, ' '))
        return carma_err_set(err, "sim GPUs '%s': bad GPU name", item);
    for (int i = 0; i < count; i++) {
        if (out->ngpus >= FAKEGPU_MAX_GPUS)
            return carma_err_set(err, "sim GPUs: more than %d GPUs", FAKEGPU_MAX_GPUS);
        fakegpu_dev *g = &out->gpus[out->ngpus];
        snprintf(g->uuid, sizeof g->uuid, "GPU-sim-%d", out->ngpus);
        snprintf(g->name, sizeof g->name, "%s", name);
        g->total_mib = gb * 1024;
        g->tdp_w = tdp_for(name);
        out->ngpus++;
    }
    return 0;
}

int fakegpu_parse_spec(const char *spec, fakegpu_state *out, carma_err *err)
{
    memset(out, 0, sizeof *out);
    if (!spec || !*spec)
        return carma_err_set(err, "sim GPUs: empty specification (e.g. 2xA100-40GB)");
    char *copy = str_dup(spec);
    if (!copy)
        return carma_err_set(err, "out of memory");
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0;
         item = strtok_r(NULL, ",", &save))
        rc = parse_one(str_trim(item), out, err);
    free(copy);
    if (rc == 0 && out->ngpus == 0)
        rc = carma_err_set(err, "sim GPUs: no GPU in '%s'", spec);
    return rc;
}

int fakegpu_check_spec(const char *spec, carma_err *err)
{
    fakegpu_state *st = malloc(sizeof *st); /* the spec's GPUs, read and dropped */
    if (!st)
        return carma_err_set(err, "out of memory");
    int rc = fakegpu_parse_spec(spec, st, err);
    free(st);
    return rc;
}

static bool pid_alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Parses the file text; skips dead processes when prune is set. */
static int parse_text(const char *path, char *text, fakegpu_state *st, bool prune, carma_err *err)
{
    memset(st, 0, sizeof *st);
    if (!*text)
        return carma_err_set(err, "%s: empty, not a carma sim state file", path);
    int lineno = 0;
    for (char *line = text, *next; line && *line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (lineno == 1) {
            if (strcmp(line, "carma-sim 1"))
                return carma_err_set(err, "%s:1: not a carma sim state file", path);
            continue;
        }
        if (!strncmp(line, "gpu ", 4) && st->ngpus < FAKEGPU_MAX_GPUS) {
            fakegpu_dev *g = &st->gpus[st->ngpus];
            unsigned long long total;
            if (sscanf(line + 4, "%47s %47s %llu %lf", g->uuid, g->name, &total, &g->tdp_w) != 4)
                return carma_err_set(err, "%s:%d: bad gpu line", path, lineno);
            g->total_mib = total;
            st->ngpus++;
        } else if (!strncmp(line, "proc ", 5) && st->nprocs < FAKEGPU_MAX_PROCS) {
            fakegpu_proc *p = &st->procs[st->nprocs];
            int pid;
            unsigned long long mib;
            if (sscanf(line + 5, "%d %d %llu %lf %lf %lf", &pid, &p->gpu, &mib, &p->smact,
                       &p->smocc, &p->drama) != 6 || p->gpu < 0 || p->gpu >= st->ngpus)
                return carma_err_set(err, "%s:%d: bad proc line", path, lineno);
            p->pid = pid;
            p->mib = mib;
            if (!prune || pid_alive(p->pid))
                st->nprocs++;
        } else if (*line) {
            return carma_err_set(err, "%s:%d: unexpected line", path, lineno);
        }
    }
    return 0;
}

static char *format_text(const fakegpu_state *st)
{
    size_t cap = 64 + (size_t)st->ngpus * 160 + (size_t)st->nprocs * 120;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    size_t n = (size_t)snprintf(buf, cap, "carma-sim 1\n");
    for (int i = 0; i < st->ngpus; i++)
        n += (size_t)snprintf(buf + n, cap - n, "gpu %s %s %llu %g\n", st->gpus[i].uuid,
                              st->gpus[i].name, (unsigned long long)st->gpus[i].total_mib,
                              st->gpus[i].tdp_w);
    for (int i = 0; i < st->nprocs; i++) {
        const fakegpu_proc *p = &st->procs[i];
        n += (size_t)snprintf(buf + n, cap - n, "proc %d %d %llu %.4f %.4f %.4f\n", (int)p->pid,
                              p->gpu, (unsigned long long)p->mib, p->smact, p->smocc, p->drama);
    }
    return buf;
}

/* Reads the whole (locked) file from fd. */
static char *read_fd(int fd)
{
    struct stat sb;
    if (fstat(fd, &sb))
        return NULL;
    size_t cap = (size_t)sb.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    if (lseek(fd, 0, SEEK_SET) < 0) {
        free(buf);
        return NULL;
    }
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    return buf;
}

static int write_all(int fd, const char *text)
{
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* Flushes the directory holding path (the rename in it); best effort. */
static void sync_dir(const char *path)
{
    char *dir = str_dup(path);
    if (!dir)
        return;
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0'; /* "/f": the root */
    else if (slash)
        *slash = '\0';
    int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

/* Replaces the file at path with text, atomically: the text goes to PATH.tmp (created anew,
 * mode 0600), is flushed to disk, and the temporary file is renamed over path. Readers see the
 * old file or the new one; a writer killed before the rename leaves the old file and a stale
 * PATH.tmp, which the next writer removes. The caller holds the lock of the file at path, and
 * with it the temporary name. */
static int replace_file(const char *path, const char *text, carma_err *err)
{
    size_t n = strlen(path) + sizeof ".tmp";
    char *tmp = malloc(n);
    if (!tmp)
        return carma_err_set(err, "sim state %s: out of memory", path);
    snprintf(tmp, n, "%s.tmp", path);
    int fd = -1, e = 0;
    if (unlink(tmp) && errno != ENOENT)
        e = errno;
    else if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
        e = errno;
    else if (write_all(fd, text) || fsync(fd))
        e = errno;
    if (fd >= 0 && close(fd) && !e)
        e = errno;
    if (!e && rename(tmp, path))
        e = errno;
    if (e && fd >= 0)
        unlink(tmp);
    free(tmp);
    if (e)
        return carma_err_set(err, "sim state %s: write: %s", path, strerror(e));
    sync_dir(path);
    return 0;
}

/* Opens the file at path and locks it. The lock is the file's: since a writer replaces the
 * file by renaming another over it, an exclusive lock won on a file that was replaced
 * meanwhile guards nothing, and the file now at path is opened and locked instead. A reader
 * (LOCK_SH) keeps the file it opened: old or new, it is whole. */
static int open_locked(const char *path, int flags, int lock, carma_err *err)
{
    for (;;) {
        /* never through a symlink: the daemon that creates the file may be root */
        int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return carma_err_set(err, "sim state %s: %s", path, strerror(errno));
        while (flock(fd, lock)) {
            if (errno != EINTR) {
                carma_err_set(err, "sim state %s: lock: %s", path, strerror(errno));
                close(fd);
                return -1;
            }
        }
        struct stat held, now;
        bool current = false;
        int e = 0;
        if (lock != LOCK_EX)
            current = true;
        else if (fstat(fd, &held))
            e = errno;
        else if (stat(path, &now))
            e = errno == ENOENT ? 0 : errno; /* removed meanwhile: open it again */
        else
            current = now.st_dev == held.st_dev && now.st_ino == held.st_ino;
        if (current)
            return fd;
        close(fd);
        if (e)
            return carma_err_set(err, "sim state %s: %s", path, strerror(e));
        /* replaced while we waited for the lock: lock the file that replaced it */
    }
}

static bool same_gpus(const fakegpu_state *a, const fakegpu_state *b)
{
    if (a->ngpus != b->ngpus)
        return false;
    for (int i = 0; i < a->ngpus; i++)
        if (strcmp(a->gpus[i].uuid, b->gpus[i].uuid) || strcmp(a->gpus[i].name, b->gpus[i].name) ||
            a->gpus[i].total_mib != b->gpus[i].total_mib)
            return false;
    return true;
}

int fakegpu_state_init_file(const char *path, const fakegpu_state *gpus, carma_err *err)
{
    int fd = open_locked(path, O_RDONLY | O_CREAT, LOCK_EX, err);
    if (fd < 0)
        return -1;
    fakegpu_state *old = malloc(sizeof *old), *next = malloc(sizeof *next);
    char *text = read_fd(fd), *out = NULL;
    int rc = -1;
    if (!old || !next || !text) {
        carma_err_set(err, "sim state %s: out of memory", path);
        goto done;
    }
    *next = *gpus;
    next->nprocs = 0;
    if (*text && parse_text(path, text, old, true, NULL) == 0 && same_gpus(old, gpus)) {
        memcpy(next->procs, old->procs, sizeof old->procs);
        next->nprocs = old->nprocs;
    }
    out = format_text(next);
    if (!out)
        carma_err_set(err, "sim state %s: out of memory", path);
    else
        rc = replace_file(path, out, err);
done:
    free(out);
    free(text);
    free(old);
    free(next);
    close(fd);
    return rc;
}

int fakegpu_state_read(const char *path, fakegpu_state *out, carma_err *err)
{
    int fd = open_locked(path, O_RDONLY, LOCK_SH, err);
    if (fd < 0)
        return -1;
    char *text = read_fd(fd);
    close(fd);
    if (!text)
        return carma_err_set(err, "sim state %s: read failed", path);
    int rc = parse_text(path, text, out, true, err);
    free(text);
    return rc;
}

uint64_t fakegpu_state_used_mib(const fakegpu_state *st, int gpu)
{
    uint64_t used = 0;
    for (int i = 0; i < st->nprocs; i++)
        if (st->procs[i].gpu == gpu)
            used += st->procs[i].mib;
    return used;
}

/* Resolves one CUDA_VISIBLE_DEVICES item (UUID or index) to a GPU index, -1 if unknown. */
static int resolve_device(const fakegpu_state *st, const char *item)
{
    for (int i = 0; i < st->ngpus; i++)
        if (!strcmp(st->gpus[i].uuid, item))
            return i;
    int64_t idx;
    if (parse_i64(item, &idx) == 0 && idx >= 0 && idx < st->ngpus)
        return (int)idx;
    return -1;
}

/* Applies a change to the state under the exclusive lock. */
static int update(const char *path, int (*fn)(fakegpu_state *, void *), void *arg, carma_err *err)
{
    int fd = open_locked(path, O_RDONLY, LOCK_EX, err);
    if (fd < 0)
        return -1;
    fakegpu_state *st = malloc(sizeof *st);
    char *text = read_fd(fd), *out = NULL;
    int rc = -1;
    if (!st || !text) {
        carma_err_set(err, "sim state %s: out of memory", path);
        goto done;
    }
    if (parse_text(path, text, st, true, err))
        goto done;
    rc = fn(st, arg);
    if (rc < 0) {
        carma_err_set(err, "sim state %s: update failed (unknown GPU or too many processes)",
                      path);
        goto done;
    }
    out = format_text(st);
    if (!out)
        rc = carma_err_set(err, "sim state %s: out of memory", path);
    else if (replace_file(path, out, err))
        rc = -1;
done:
    free(out);
    free(text);
    free(st);
    close(fd);
    return rc;
}

typedef struct reg_args {
    pid_t pid;
    const char *devices;
    uint64_t mib;
    double smact, smocc, drama;
    int *oom_gpu;
    uint64_t *oom_total, *oom_free;
} reg_args;

static int do_register(fakegpu_state *st, void *arg)
{
    reg_args *a = arg;
    int idx[FAKEGPU_MAX_GPUS], n = 0;
    char *copy = str_dup(a->devices), *save = NULL;
    if (!copy)
        return -1;
    for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        int g = resolve_device(st, str_trim(it));
        if (g < 0 || n >= FAKEGPU_MAX_GPUS) {
            free(copy);
            return -1;
        }
        idx[n++] = g;
    }
    free(copy);
    if (n == 0 || st->nprocs + n > FAKEGPU_MAX_PROCS)
        return -1;
    for (int i = 0; i < n; i++) {
        uint64_t used = fakegpu_state_used_mib(st, idx[i]), total = st->gpus[idx[i]].total_mib;
        uint64_t avail = used < total ? total - used : 0;
        if (a->mib > avail) {
            *a->oom_gpu = i;
            *a->oom_total = total;
            *a->oom_free = avail;
            return 1;
        }
    }
    for (int i = 0; i < n; i++)
        st->procs[st->nprocs++] =
            (fakegpu_proc){a->pid, idx[i], a->mib, a->smact, a->smocc, a->drama};
    return 0;
}

int fakegpu_state_register(const char *path, pid_t pid, const char *devices, uint64_t mib,
                       double smact, double smocc, double drama, int *oom_gpu,
                       uint64_t *oom_total, uint64_t *oom_free, carma_err *err)
{
    if (!devices || !*devices)
        return carma_err_set(err, "no GPU visible (CUDA_VISIBLE_DEVICES is empty)");
    reg_args a = {pid, devices, mib, smact, smocc, drama, oom_gpu, oom_total, oom_free};
    return update(path, do_register, &a, err);
}

static int do_unregister(fakegpu_state *st, void *arg)
{
    pid_t pid = *(pid_t *)arg;
    int n = 0;
    for (int i = 0; i < st->nprocs; i++)
        if (st->procs[i].pid != pid)
            st->procs[n++] = st->procs[i];
    st->nprocs = n;
    return 0;
}

int fakegpu_state_unregister(const char *path, pid_t pid, carma_err *err)
{
    return update(path, do_unregister, &pid, err);
}
