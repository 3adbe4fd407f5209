/* fake_nvml.c — a fake libnvidia-ml.so.1 for tests: GPUs, memory, utilization, power, energy,
 * processes, GPM metrics and faults scripted from the file named by $FAKE_NVML_SCENARIO. The
 * file is read again whenever it changes (replace it with `mv` to change the GPUs mid-run).
 *
 * Scenario lines ('#' starts a comment; values may be "quoted"):
 *   gpu uuid=U name=N total=MiB used=MiB reserved=MiB util=PCT power=mW energy=mJ
 *       gpm=0|1 smact=PCT smocc=PCT drama=PCT      (util/power/energy/sm*: "na" = not supported)
 *       minor=N                                    (/dev/nvidiaN; default: the GPU's line number
 *                                                   from 0, as on a machine whose minor numbers
 *                                                   follow NVML's order)
 *       mig=na|0|1 mig_pending=0|1                 (nvmlDeviceGetMigMode's current and pending
 *                                                   modes; na, the default: a GPU model without
 *                                                   MIG, NOT_SUPPORTED; pending defaults to the
 *                                                   current mode)
 *   proc gpu=I pid=P used=MiB|na                   (compute process list)
 *   proc gpu=I match=TEXT used=MiB|na              (every live process whose command line,
 *                                                   arguments joined by spaces, contains TEXT)
 *       gi=G ci=C                                  (on a GPU with mig=1: the GPU and compute
 *                                                   instance the entry is for, default 0 0;
 *                                                   the parent device lists a process once per
 *                                                   instance it runs on, each entry with that
 *                                                   instance's memory. Ignored with MIG off.)
 *   mps gpu=I pid=P used=MiB|na                    (MPS client list)
 *   fail FUNCTION RC [gpu=I]                       (FUNCTION returns RC, for that GPU or all;
 *                                                   nvmlInit / nvmlDeviceGetHandleByIndex name
 *                                                   both versions)
 *   lost I                                         (every query on GPU I: GPU_IS_LOST)
 *   init_fail RC                                   (nvmlInit returns RC)
 *
 * Build variants remove entry points for real, so the loader's missing-symbol paths run:
 *   FAKE_OLD_API  only unsuffixed init/count/handle, memory v1, _v2 process list, no energy,
 *                 no GPM, no MPS list
 *   FAKE_BARE     only nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2, ...HandleByIndex_v2
 *   FAKE_STRIDE32 _v3 process lists write the 32-byte records of drivers 535.43-535.86
 * The structs below are written from NVML's documentation, independently of src/gpu/nvml_api.h,
 * so a layout mistake there is caught here. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#define OK 0
#define E_UNINITIALIZED 1
#define E_INVALID_ARGUMENT 2
#define E_NOT_SUPPORTED 3
#define E_INSUFFICIENT_SIZE 7
#define E_GPU_IS_LOST 15
#define E_ARGUMENT_VERSION_MISMATCH 25
#define E_UNKNOWN 999

#define MAX_GPUS 16
#define MAX_PROCS 64
#define MAX_FAILS 32
#define NA (-1.0)
#define MIB (1024ULL * 1024ULL)

typedef struct fake_proc {
    int gpu;
    unsigned pid;
    double used_mib; /* NA: not available */
    unsigned gi, ci; /* its MIG instance (a GPU with mig=1 only) */
    char match[128]; /* non-empty: every live process whose command line contains this */
} fake_proc;

typedef struct fake_gpu {
    char uuid[96], name[96];
    double total, used, reserved; /* MiB */
    double util, power_mw, energy_mj, smact, smocc, drama; /* NA: not supported */
    int gpm, lost;
    unsigned minor; /* nvmlDeviceGetMinorNumber */
    int mig, mig_pending; /* -1: no MIG on this GPU (NOT_SUPPORTED); else 0 off, 1 on */
} fake_gpu;

typedef struct fake_fail {
    char fn[64];
    int rc, gpu; /* gpu -1: all */
} fake_fail;

static struct {
    int loaded, init_rc, inits;
    struct stat st;
    int ngpus, nprocs, nmps, nfails;
    fake_gpu gpus[MAX_GPUS];
    fake_proc procs[MAX_PROCS], mps[MAX_PROCS];
    fake_fail fails[MAX_FAILS];
} S;

/* ---- scenario parsing ------------------------------------------------------------------- */

static char *next_token(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s || *s == '#')
        return NULL;
    char *out = s, *w = s;
    int quoted = 0;
    for (; *s && (quoted || (*s != ' ' && *s != '\t')); s++) {
        if (*s == '"')
            quoted = !quoted;
        else
            *w++ = *s;
    }
    if (*s)
        s++;
    *w = '\0';
    *p = s;
    return out;
}

static double num_or_na(const char *v)
{
    return strcmp(v, "na") == 0 ? NA : strtod(v, NULL);
}

static void parse_gpu(char *rest)
{
    if (S.ngpus >= MAX_GPUS)
        return;
    fake_gpu *g = &S.gpus[S.ngpus++];
    memset(g, 0, sizeof *g);
    g->util = g->power_mw = g->energy_mj = g->smact = g->smocc = g->drama = NA;
    snprintf(g->uuid, sizeof g->uuid, "GPU-fake-%d", S.ngpus - 1);
    snprintf(g->name, sizeof g->name, "Fake GPU");
    g->total = 40960;
    g->minor = (unsigned)(S.ngpus - 1);
    g->mig = g->mig_pending = -1;
    int pending_given = 0;
    for (char *t; (t = next_token(&rest));) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq = '\0';
        const char *k = t, *v = eq + 1;
        if (!strcmp(k, "uuid")) snprintf(g->uuid, sizeof g->uuid, "%s", v);
        else if (!strcmp(k, "name")) snprintf(g->name, sizeof g->name, "%s", v);
        else if (!strcmp(k, "total")) g->total = num_or_na(v);
        else if (!strcmp(k, "used")) g->used = num_or_na(v);
        else if (!strcmp(k, "reserved")) g->reserved = num_or_na(v);
        else if (!strcmp(k, "util")) g->util = num_or_na(v);
        else if (!strcmp(k, "power")) g->power_mw = num_or_na(v);
        else if (!strcmp(k, "energy")) g->energy_mj = num_or_na(v);
        else if (!strcmp(k, "gpm")) g->gpm = atoi(v);
        else if (!strcmp(k, "smact")) g->smact = num_or_na(v);
        else if (!strcmp(k, "smocc")) g->smocc = num_or_na(v);
        else if (!strcmp(k, "drama")) g->drama = num_or_na(v);
        else if (!strcmp(k, "minor")) g->minor = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(k, "mig")) g->mig = strcmp(v, "na") ? atoi(v) != 0 : -1;
        else if (!strcmp(k, "mig_pending")) { g->mig_pending = atoi(v) != 0; pending_given = 1; }
    }
    if (!pending_given || g->mig < 0)
        g->mig_pending = g->mig;
}

static void parse_proc(char *rest, fake_proc *list, int *n)
{
    if (*n >= MAX_PROCS)
        return;
    fake_proc *p = &list[(*n)++];
    memset(p, 0, sizeof *p);
    for (char *t; (t = next_token(&rest));) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq = '\0';
        if (!strcmp(t, "gpu")) p->gpu = atoi(eq + 1);
        else if (!strcmp(t, "pid")) p->pid = (unsigned)strtoul(eq + 1, NULL, 10);
        else if (!strcmp(t, "used")) p->used_mib = num_or_na(eq + 1);
        else if (!strcmp(t, "match")) snprintf(p->match, sizeof p->match, "%s", eq + 1);
        else if (!strcmp(t, "gi")) p->gi = (unsigned)strtoul(eq + 1, NULL, 10);
        else if (!strcmp(t, "ci")) p->ci = (unsigned)strtoul(eq + 1, NULL, 10);
    }
}

static void parse_line(char *line)
{
    char *rest = line, *kw = next_token(&rest);
    if (!kw)
        return;
    if (!strcmp(kw, "gpu")) {
        parse_gpu(rest);
    } else if (!strcmp(kw, "proc")) {
        parse_proc(rest, S.procs, &S.nprocs);
    } else if (!strcmp(kw, "mps")) {
        parse_proc(rest, S.mps, &S.nmps);
    } else if (!strcmp(kw, "fail") && S.nfails < MAX_FAILS) {
        fake_fail *f = &S.fails[S.nfails++];
        char *fn = next_token(&rest), *rc = next_token(&rest), *gpu = next_token(&rest);
        snprintf(f->fn, sizeof f->fn, "%s", fn ? fn : "");
        f->rc = rc ? atoi(rc) : E_UNKNOWN;
        f->gpu = gpu && !strncmp(gpu, "gpu=", 4) ? atoi(gpu + 4) : -1;
    } else if (!strcmp(kw, "lost")) {
        char *i = next_token(&rest);
        int idx = i ? atoi(i) : -1;
        if (idx >= 0 && idx < MAX_GPUS)
            S.gpus[idx].lost = 1; /* gpu lines come first in a scenario */
    } else if (!strcmp(kw, "init_fail")) {
        char *rc = next_token(&rest);
        S.init_rc = rc ? atoi(rc) : E_UNKNOWN;
    }
}

/* Reads the scenario again when the file changed (or was replaced). */
static void refresh(void)
{
    const char *path = getenv("FAKE_NVML_SCENARIO");
    struct stat st;
    if (!path || stat(path, &st) != 0) {
        if (!S.loaded)
            S.loaded = 1; /* no scenario: no GPUs */
        return;
    }
    if (S.loaded && st.st_ino == S.st.st_ino && st.st_size == S.st.st_size &&
        st.st_mtim.tv_sec == S.st.st_mtim.tv_sec && st.st_mtim.tv_nsec == S.st.st_mtim.tv_nsec)
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    int inits = S.inits;
    memset(&S, 0, sizeof S);
    S.inits = inits;
    S.loaded = 1;
    S.st = st;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        parse_line(line);
    }
    fclose(f);
}

/* ---- helpers shared by the entry points ---------------------------------------------------- */

typedef struct fake_gpu *nvmlDevice_t;

static int failure(const char *fn, int gpu)
{
    for (int i = 0; i < S.nfails; i++)
        if (!strcmp(S.fails[i].fn, fn) && (S.fails[i].gpu < 0 || S.fails[i].gpu == gpu))
            return S.fails[i].rc;
    return OK;
}

/* Common entry checks for a device query: initialised, valid handle, not lost, no scripted
 * failure. Returns OK and sets *g, or the error code. */
__attribute__((unused)) static int enter_device(const char *fn, nvmlDevice_t dev, fake_gpu **g)
{
    refresh();
    if (S.inits <= 0)
        return E_UNINITIALIZED;
    int idx = (int)(dev - S.gpus);
    if (!dev || idx < 0 || idx >= S.ngpus)
        return E_INVALID_ARGUMENT;
    if (S.gpus[idx].lost)
        return E_GPU_IS_LOST;
    int rc = failure(fn, idx);
    if (rc != OK)
        return rc;
    *g = dev;
    return OK;
}

#define ENTER(dev)                                                                            \
    fake_gpu *g = NULL;                                                                       \
    {                                                                                         \
        int rc_ = enter_device(__func__, dev, &g);                                            \
        if (rc_ != OK)                                                                        \
            return rc_;                                                                       \
    }

static int do_init(void)
{
    refresh();
    int rc = failure("nvmlInit", -1);
    if (S.init_rc)
        return S.init_rc;
    if (rc)
        return rc;
    S.inits++;
    return OK;
}

static int do_count(unsigned *count)
{
    refresh();
    if (S.inits <= 0)
        return E_UNINITIALIZED;
    if (!count)
        return E_INVALID_ARGUMENT;
    *count = (unsigned)S.ngpus;
    return OK;
}

static int do_handle(unsigned index, nvmlDevice_t *dev)
{
    refresh();
    if (S.inits <= 0)
        return E_UNINITIALIZED;
    if (!dev || index >= (unsigned)S.ngpus)
        return E_INVALID_ARGUMENT;
    int rc = failure("nvmlDeviceGetHandleByIndex", (int)index); /* either version */
    if (rc)
        return rc;
    *dev = &S.gpus[index];
    return OK;
}

/* ---- always exported -------------------------------------------------------------------- */

EXPORT int nvmlShutdown(void)
{
    if (S.inits <= 0)
        return E_UNINITIALIZED;
    S.inits--;
    return OK;
}

#ifndef FAKE_OLD_API
EXPORT int nvmlInit_v2(void) { return do_init(); }
EXPORT int nvmlDeviceGetCount_v2(unsigned *count) { return do_count(count); }
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *dev)
{
    return do_handle(index, dev);
}
#else
EXPORT int nvmlInit(void) { return do_init(); }
EXPORT int nvmlDeviceGetCount(unsigned *count) { return do_count(count); }
EXPORT int nvmlDeviceGetHandleByIndex(unsigned index, nvmlDevice_t *dev)
{
    return do_handle(index, dev);
}
#endif

#ifndef FAKE_BARE

EXPORT const char *nvmlErrorString(int rc)
{
    switch (rc) {
    case OK: return "Success";
    case E_UNINITIALIZED: return "Uninitialized";
    case E_INVALID_ARGUMENT: return "Invalid Argument";
    case E_NOT_SUPPORTED: return "Not Supported";
    case E_INSUFFICIENT_SIZE: return "Insufficient Size";
    case E_GPU_IS_LOST: return "GPU is lost";
    case 9: return "Driver Not Loaded";
    case E_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    default: return "Unknown Error";
    }
}

static int copy_string(const char *s, char *buf, unsigned len)
{
    if (!buf || strlen(s) + 1 > len)
        return E_INSUFFICIENT_SIZE;
    memcpy(buf, s, strlen(s) + 1);
    return OK;
}

EXPORT int nvmlDeviceGetUUID(nvmlDevice_t dev, char *buf, unsigned len)
{
    ENTER(dev);
    return copy_string(g->uuid, buf, len);
}

EXPORT int nvmlDeviceGetName(nvmlDevice_t dev, char *buf, unsigned len)
{
    ENTER(dev);
    return copy_string(g->name, buf, len);
}

/* The N of the GPU's device file /dev/nvidiaN (an old entry point: in the old build too). */
EXPORT int nvmlDeviceGetMinorNumber(nvmlDevice_t dev, unsigned *minor)
{
    ENTER(dev);
    if (!minor)
        return E_INVALID_ARGUMENT;
    *minor = g->minor;
    return OK;
}

/* nvml.h: NVML_DEVICE_MIG_DISABLE 0 / NVML_DEVICE_MIG_ENABLE 1 for the current mode and the
 * one pending until the next reset; NOT_SUPPORTED for a GPU without MIG. */
EXPORT int nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned *current, unsigned *pending)
{
    ENTER(dev);
    if (!current || !pending)
        return E_INVALID_ARGUMENT;
    if (g->mig < 0)
        return E_NOT_SUPPORTED;
    *current = (unsigned)g->mig;
    *pending = (unsigned)g->mig_pending;
    return OK;
}

/* nvmlMemory_t: three unsigned long long. v1 `used` includes the reserved part. */
EXPORT int nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, unsigned long long *mem3)
{
    ENTER(dev);
    if (!mem3 || g->total < 0 || g->used < 0)
        return mem3 ? E_NOT_SUPPORTED : E_INVALID_ARGUMENT;
    unsigned long long total = (unsigned long long)g->total * MIB;
    unsigned long long used = (unsigned long long)(g->used + g->reserved) * MIB;
    mem3[0] = total;
    mem3[1] = total - used;
    mem3[2] = used;
    return OK;
}

#ifndef FAKE_OLD_API
/* nvmlMemory_v2_t: {unsigned version; ull total, reserved, free, used}; NVML documents the
 * version word as sizeof | 2 << 24, which is 0x02000028 on x86-64. */
struct fake_memory_v2 {
    unsigned version;
    unsigned long long total, reserved, free, used;
};
EXPORT int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, struct fake_memory_v2 *m)
{
    ENTER(dev);
    if (!m)
        return E_INVALID_ARGUMENT;
    if (m->version != 0x02000028u)
        return E_ARGUMENT_VERSION_MISMATCH;
    if (g->total < 0 || g->used < 0)
        return E_NOT_SUPPORTED;
    m->total = (unsigned long long)g->total * MIB;
    m->reserved = (unsigned long long)g->reserved * MIB;
    m->used = (unsigned long long)g->used * MIB;
    m->free = m->total - m->reserved - m->used;
    return OK;
}
#endif

EXPORT int nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, unsigned *util2)
{
    ENTER(dev);
    if (g->util < 0)
        return E_NOT_SUPPORTED;
    util2[0] = (unsigned)g->util;
    util2[1] = 0;
    return OK;
}

EXPORT int nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned *mw)
{
    ENTER(dev);
    if (g->power_mw < 0)
        return E_NOT_SUPPORTED;
    *mw = (unsigned)g->power_mw;
    return OK;
}

#ifndef FAKE_OLD_API
EXPORT int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t dev, unsigned long long *mj)
{
    ENTER(dev);
    if (g->energy_mj < 0)
        return E_NOT_SUPPORTED;
    *mj = (unsigned long long)g->energy_mj;
    return OK;
}
#endif

/* The pids of live processes whose command line contains `text` (not this process). */
static int match_processes(const char *text, unsigned *pids, int max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *de; n < max && (de = readdir(d));) {
        unsigned pid = (unsigned)strtoul(de->d_name, NULL, 10);
        if (!pid || pid == (unsigned)getpid())
            continue;
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i + 1 < len; i++)
            if (buf[i] == '\0')
                buf[i] = ' ';
        buf[len] = '\0';
        if (len && strstr(buf, text))
            pids[n++] = pid;
    }
    closedir(d);
    return n;
}

/* The list with match entries replaced by the processes they match now. */
static int expand_procs(const fake_proc *list, int n, fake_proc *out)
{
    int k = 0;
    for (int i = 0; i < n && k < MAX_PROCS; i++) {
        if (!list[i].match[0]) {
            out[k++] = list[i];
            continue;
        }
        unsigned pids[MAX_PROCS];
        int m = match_processes(list[i].match, pids, MAX_PROCS - k);
        for (int j = 0; j < m; j++) {
            out[k] = list[i];
            out[k].match[0] = '\0';
            out[k++].pid = pids[j];
        }
    }
    return k;
}

/* Writes the processes of GPU `gpu` from `list` as records of `size` bytes (16: pid + memory;
 * 24: + instance ids; 32: + protected memory). */
static int write_procs(const fake_proc *scripted, int nscripted, int gpu, unsigned *count,
                       void *infos, size_t size)
{
    fake_proc list[MAX_PROCS];
    int n = expand_procs(scripted, nscripted, list);
    unsigned have = 0;
    for (int i = 0; i < n; i++)
        have += list[i].gpu == gpu;
    if (!count)
        return E_INVALID_ARGUMENT;
    if (*count < have || (have && !infos)) {
        *count = have;
        return E_INSUFFICIENT_SIZE;
    }
    unsigned char *out = infos;
    unsigned k = 0;
    for (int i = 0; i < n; i++) {
        if (list[i].gpu != gpu)
            continue;
        unsigned char rec[32];
        memset(rec, 0, sizeof rec);
        unsigned long long used = list[i].used_mib < 0 ? ~0ULL
                                                       : (unsigned long long)list[i].used_mib * MIB;
        /* nvml.h: gpuInstanceId and computeInstanceId are valid ids with MIG enabled, and
         * 0xFFFFFFFF otherwise (not 0, which is a valid instance id) */
        int mig = S.gpus[gpu].mig == 1;
        unsigned gid = mig ? list[i].gi : 0xFFFFFFFFu, cid = mig ? list[i].ci : 0xFFFFFFFFu;
        memcpy(rec, &list[i].pid, 4);
        memcpy(rec + 8, &used, 8);
        memcpy(rec + 16, &gid, 4);
        memcpy(rec + 20, &cid, 4);
        memcpy(out + (size_t)k * size, rec, size);
        k++;
    }
    *count = have;
    return OK;
}

#define PROC_ENTRY(fn, list, n, size)                                                         \
    EXPORT int fn(nvmlDevice_t dev, unsigned *count, void *infos)                             \
    {                                                                                         \
        ENTER(dev);                                                                           \
        return write_procs(list, n, (int)(g - S.gpus), count, infos, size);                   \
    }

#ifdef FAKE_STRIDE32
#define V3_SIZE 32
#else
#define V3_SIZE 24
#endif

PROC_ENTRY(nvmlDeviceGetComputeRunningProcesses, S.procs, S.nprocs, 16)
PROC_ENTRY(nvmlDeviceGetComputeRunningProcesses_v2, S.procs, S.nprocs, 24)
#ifndef FAKE_OLD_API
PROC_ENTRY(nvmlDeviceGetComputeRunningProcesses_v3, S.procs, S.nprocs, V3_SIZE)
PROC_ENTRY(nvmlDeviceGetMPSComputeRunningProcesses_v3, S.mps, S.nmps, V3_SIZE)

/* ---- GPM ---- */
struct fake_gpm_sample {
    unsigned magic;
    int gpu;
    double t;
};
#define SAMPLE_MAGIC 0x6770u

struct fake_gpm_support {
    unsigned version, isSupportedDevice;
};
struct fake_gpm_metric {
    unsigned metricId;
    int nvmlReturn;
    double value;
    char *names[3];
};
struct fake_gpm_metrics_get {
    unsigned version, numMetrics;
    struct fake_gpm_sample *sample1, *sample2;
    struct fake_gpm_metric metrics[98]; /* the smallest NVML_GPM_METRIC_MAX any driver had */
};

EXPORT int nvmlGpmQueryDeviceSupport(nvmlDevice_t dev, struct fake_gpm_support *s)
{
    ENTER(dev);
    if (!s || s->version != 1)
        return E_ARGUMENT_VERSION_MISMATCH;
    s->isSupportedDevice = (unsigned)g->gpm;
    return OK;
}

EXPORT int nvmlGpmSampleAlloc(struct fake_gpm_sample **s)
{
    if (S.inits <= 0)
        return E_UNINITIALIZED;
    *s = calloc(1, sizeof **s);
    if (!*s)
        return E_UNKNOWN;
    (*s)->magic = SAMPLE_MAGIC;
    (*s)->gpu = -1;
    return OK;
}

EXPORT int nvmlGpmSampleFree(struct fake_gpm_sample *s)
{
    if (!s || s->magic != SAMPLE_MAGIC)
        return E_INVALID_ARGUMENT;
    s->magic = 0;
    free(s);
    return OK;
}

EXPORT int nvmlGpmSampleGet(nvmlDevice_t dev, struct fake_gpm_sample *s)
{
    ENTER(dev);
    if (!s || s->magic != SAMPLE_MAGIC)
        return E_INVALID_ARGUMENT;
    if (!g->gpm)
        return E_NOT_SUPPORTED;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s->gpu = (int)(g - S.gpus);
    s->t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    return OK;
}

EXPORT int nvmlGpmMetricsGet(struct fake_gpm_metrics_get *mg)
{
    refresh();
    if (!mg || mg->version != 1)
        return E_ARGUMENT_VERSION_MISMATCH;
    struct fake_gpm_sample *a = mg->sample1, *b = mg->sample2;
    if (!a || !b || a->magic != SAMPLE_MAGIC || b->magic != SAMPLE_MAGIC || a->gpu < 0 ||
        a->gpu != b->gpu || !(b->t > a->t) || mg->numMetrics > 98)
        return E_INVALID_ARGUMENT;
    fake_gpu *g = &S.gpus[a->gpu];
    if (g->lost)
        return E_GPU_IS_LOST;
    int rc = failure("nvmlGpmMetricsGet", a->gpu);
    if (rc)
        return rc;
    for (unsigned i = 0; i < mg->numMetrics; i++) {
        struct fake_gpm_metric *m = &mg->metrics[i];
        double v = m->metricId == 2 ? g->smact : m->metricId == 3 ? g->smocc
                 : m->metricId == 10 ? g->drama : NA;
        m->nvmlReturn = v < 0 ? E_NOT_SUPPORTED : OK;
        m->value = v < 0 ? 0 : v;
    }
    return OK;
}
#endif /* FAKE_OLD_API */

#endif /* FAKE_BARE */
