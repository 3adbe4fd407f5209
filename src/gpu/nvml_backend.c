/* nvml_backend.c — the "nvml" GPU backend (see nvml_backend.h). Every query that fails, or whose
 * entry point the library lacks, leaves its metric unknown (NaN / known = false), never zero.
 * A GPU that answers GPU_IS_LOST is queried no further in that sample: all its metrics unknown.
 * Inside a job allocation only the job's GPUs are kept (visible.h); of those, a GPU in MIG mode
 * is left out (CUDA cannot run a task on the whole GPU there) unless nvml_backend_open_all
 * opened the backend. The GPUs kept are numbered 0..n-1 in NVML order, and each remembers its
 * NVML index for the queries that take one. */
#include "gpu/nvml_backend.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/dcgm.h"
#include "gpu/gpm.h"
#include "gpu/nvml_lib.h"
#include "gpu/nvml_procs.h"
#include "gpu/visible.h"
#include "util/clock.h"

typedef struct nvml_gpu {
    unsigned nvml_index; /* NVML's own index: handles and DCGM values are by it */
    nvmlDevice_t dev;
    char uuid[NVML_DEVICE_UUID_BUFFER_SIZE];
    char name[NVML_DEVICE_NAME_BUFFER_SIZE];
    bool uuid_known, name_known; /* read (or the library cannot tell: left "") */
    bool gpm_known;    /* GPM support answered and, when supported, set up */
    gpu_mig mig;       /* nvmlDeviceGetMigMode's current mode (read_mig) */
    int minor;         /* nvmlDeviceGetMinorNumber; -1 unknown */
    gpm_reader gpm;
} nvml_gpu;

struct gpu_backend {
    nvml_lib lib;
    int n;                    /* the GPUs carma uses (the allocation's, or all) */
    int n_all;                /* the GPUs NVML lists */
    nvml_gpu *gpus;
    nvml_mig_gpu *mig_out;    /* the GPUs left out for MIG mode, nmig of them */
    int nmig;
    dcgm_reader *dcgm;        /* NULL when every GPU has GPM, or DCGM is absent */
    double dcgm_next_try;     /* clock_mono_s() before which DCGM is not opened again */
    dcgm_gpu_values *dvals;   /* n_all entries by NVML index, refilled each sample */
    char activity_note[DCGM_STATUS_MAX + 128];
    char visible_note[GPU_VISIBLE_NOTE_MAX]; /* which GPUs the allocation left, "" for all */
};

static uint64_t bytes_to_mib(unsigned long long b)
{
    return (uint64_t)(b >> 20);
}

static void nvml_close(gpu_backend *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->n; i++)
        gpm_reader_free(&b->gpus[i].gpm, &b->lib);
    dcgm_reader_close(b->dcgm);
    nvml_lib_close(&b->lib);
    free(b->gpus);
    free(b->mig_out);
    free(b->dvals);
    free(b);
}

/* Whether the GPU is in MIG mode now. nvml.h (nvmlDeviceGetMigMode): NVML_SUCCESS gives the
 * current mode, NVML_DEVICE_MIG_ENABLE or _DISABLE, and the pending one, which takes effect only
 * at the next GPU reset: until then CUDA sees the current one, so only that one counts.
 * NOT_SUPPORTED is a GPU that cannot do MIG: a whole GPU. A library without the entry point
 * predates MIG: no GPU has it on.
 * Any other answer (GPU_IS_LOST, UNKNOWN, ...) is a failed query, not a mode: the mode stays
 * unknown and the GPU is kept, as carma kept every GPU before it read MIG modes. Leaving it out
 * would cost a whole GPU until the next open (the daemon decides once, at start) for what is
 * most likely a passing fault, while taking a MIG GPU for a whole one costs the tasks placed
 * there, which fail with CUDA finding no device; and a fault of that kind usually fails the
 * GPU's other queries too, leaving its memory unknown, which no memory-based placement takes.
 * `carma gpus --gpu-backend nvml` shows the unknown mode. */
static gpu_mig read_mig(const gpu_backend *b, const nvml_gpu *g)
{
    if (!b->lib.mig_mode)
        return GPU_MIG_OFF;
    unsigned current = 0, pending = 0;
    nvmlReturn_t rc = b->lib.mig_mode(g->dev, &current, &pending);
    if (rc == NVML_SUCCESS)
        return current == NVML_DEVICE_MIG_ENABLE ? GPU_MIG_ON : GPU_MIG_OFF;
    return rc == NVML_ERROR_NOT_SUPPORTED ? GPU_MIG_OFF : GPU_MIG_UNKNOWN;
}

/* Reads one string fact into buf unless known; a missing entry point leaves it "" for good,
 * a failed query "" until a later sample reads it. */
static void read_text(nvml_string_fn fn, nvmlDevice_t dev, char *buf, unsigned cap,
                      bool *known)
{
    if (*known)
        return;
    *known = !fn || fn(dev, buf, cap) == NVML_SUCCESS;
    if (!fn || !*known)
        buf[0] = '\0';
    buf[cap - 1] = '\0';
}

/* Static facts, read at open and again at each sample until each is known: a transient error
 * at start (UNKNOWN, TIMEOUT, a GPU lost for a moment) would otherwise leave the GPU nameless,
 * its MIG mode unknown or without GPM for the daemon's life. What was read is kept: the MIG
 * mode too, as changing it may reset the GPU, which a running carma does not follow (nvml.h:
 * attributes such as the minor number may change with it too). */
static void read_static(gpu_backend *b, nvml_gpu *g)
{
    read_text(b->lib.device_uuid, g->dev, g->uuid, sizeof g->uuid, &g->uuid_known);
    read_text(b->lib.device_name, g->dev, g->name, sizeof g->name, &g->name_known);
    if (g->mig == GPU_MIG_UNKNOWN)
        g->mig = read_mig(b, g);
    if (!g->gpm_known)
        g->gpm_known = gpm_reader_init(&g->gpm, &b->lib, g->dev);
}

/* Opens DCGM when some GPU lacks GPM and it is not open, at most once per DCGM_RETRY_S. */
static void open_dcgm_when_due(gpu_backend *b, double now)
{
    bool needed = false;
    for (int i = 0; i < b->n; i++)
        needed |= b->gpus[i].dev && !b->gpus[i].gpm.supported;
    if (!needed || b->dcgm || now < b->dcgm_next_try)
        return;
    b->dcgm_next_try = now + DCGM_RETRY_S;
    carma_err err;
    if (dcgm_reader_open(&b->dcgm, &err)) {
        b->dcgm = NULL;
        snprintf(b->activity_note, sizeof b->activity_note,
                 "no GPM on some GPUs and no DCGM (%s): SM activity unknown there; trying again "
                 "every %.0f s", err.msg, DCGM_RETRY_S);
        return;
    }
    snprintf(b->activity_note, sizeof b->activity_note, "%s", dcgm_reader_status(b->dcgm));
}

/* Keeps the GPUs the environment allows (visible.h), in NVML order; the others' GPM readers
 * are freed. Their identities were read by read_static. */
static int keep_visible(gpu_backend *b, carma_err *err)
{
    gpu_ident *ids = calloc((size_t)b->n_all + 1, sizeof *ids);
    bool *keep = calloc((size_t)b->n_all + 1, sizeof *keep);
    if (!ids || !keep) {
        free(ids);
        free(keep);
        return carma_err_set(err, "out of memory");
    }
    for (int i = 0; i < b->n_all; i++) {
        const nvml_gpu *g = &b->gpus[i];
        ids[i].nvml_index = (int)g->nvml_index;
        snprintf(ids[i].uuid, sizeof ids[i].uuid, "%s", g->uuid);
        ids[i].minor_known = g->dev && b->lib.minor_number &&
                             b->lib.minor_number(g->dev, &ids[i].minor) == NVML_SUCCESS;
        b->gpus[i].minor = ids[i].minor_known && ids[i].minor <= INT_MAX ? (int)ids[i].minor : -1;
    }
    gpu_visible_env env = {getenv("SLURM_JOB_GPUS"), getenv("CUDA_VISIBLE_DEVICES"),
                           b->lib.minor_number != NULL};
    int rc = gpu_visible_select(ids, b->n_all, &env, keep, b->visible_note,
                                sizeof b->visible_note, err);
    b->n = 0;
    for (int i = 0; i < b->n_all; i++) {
        if (rc == 0 && keep[i])
            b->gpus[b->n++] = b->gpus[i];
        else
            gpm_reader_free(&b->gpus[i].gpm, &b->lib);
    }
    free(ids);
    free(keep);
    return rc;
}

/* Leaves out the GPUs in MIG mode, remembering them for nvml_backend_mig_left_out; the
 * others keep their order. */
static int leave_out_mig(gpu_backend *b, carma_err *err)
{
    b->mig_out = calloc((size_t)b->n + 1, sizeof *b->mig_out);
    if (!b->mig_out)
        return carma_err_set(err, "out of memory");
    int kept = 0;
    for (int i = 0; i < b->n; i++) {
        nvml_gpu *g = &b->gpus[i];
        if (g->mig != GPU_MIG_ON) {
            b->gpus[kept++] = *g;
            continue;
        }
        nvml_mig_gpu *m = &b->mig_out[b->nmig++];
        m->nvml_index = g->nvml_index;
        snprintf(m->uuid, sizeof m->uuid, "%s", g->uuid);
        gpm_reader_free(&g->gpm, &b->lib);
    }
    b->n = kept;
    return 0;
}

static int open_backend(gpu_backend **out, const char *arg, bool keep_mig, carma_err *err)
{
    *out = NULL;
    gpu_backend *b = calloc(1, sizeof *b);
    if (!b)
        return carma_err_set(err, "out of memory");
    if (nvml_lib_open(&b->lib, arg, err)) {
        free(b);
        return -1;
    }
    unsigned count = 0;
    nvmlReturn_t rc = b->lib.device_count(&count);
    if (rc != NVML_SUCCESS) {
        carma_err_set(err, "nvmlDeviceGetCount failed: %s", nvml_lib_strerror(&b->lib, rc));
        nvml_close(b);
        return -1;
    }
    b->gpus = calloc(count ? count : 1, sizeof *b->gpus);
    b->dvals = calloc(count ? count : 1, sizeof *b->dvals);
    if (!b->gpus || !b->dvals) {
        nvml_close(b);
        return carma_err_set(err, "out of memory");
    }
    for (unsigned i = 0; i < count; i++) {
        nvml_gpu *g = &b->gpus[i];
        b->n = b->n_all = (int)i + 1;
        g->nvml_index = i;
        /* A GPU without a handle (lost at start) keeps its index, with every metric unknown. */
        if (b->lib.device_handle(i, &g->dev) != NVML_SUCCESS)
            g->dev = NULL;
        else
            read_static(b, g);
    }
    if (keep_visible(b, err) || (!keep_mig && leave_out_mig(b, err))) {
        nvml_close(b);
        return -1;
    }
    open_dcgm_when_due(b, clock_mono_s());
    *out = b;
    return 0;
}

static int nvml_open(gpu_backend **out, const char *arg, carma_err *err)
{
    return open_backend(out, arg, false, err);
}

int nvml_backend_open_all(gpu_backend **out, const char *library, carma_err *err)
{
    return open_backend(out, library, true, err);
}

static int nvml_count(gpu_backend *b)
{
    return b->n;
}

static void reading_unknown(gpu_reading *r, int index, const nvml_gpu *g)
{
    memset(r, 0, sizeof *r);
    r->index = index;
    r->minor = g->minor;
    snprintf(r->uuid, sizeof r->uuid, "%s", g->uuid);
    snprintf(r->name, sizeof r->name, "%s", g->name);
    r->mig = g->mig;
    r->util_gpu = r->smact = r->smocc = r->drama = NAN;
    r->power_w = r->energy_mj = NAN;
    r->src_activity = r->src_power = SRC_UNKNOWN;
}

/* Each read_* returns false when the GPU is lost (stop querying it). */
static bool read_memory(gpu_backend *b, nvml_gpu *g, gpu_reading *r)
{
    nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (b->lib.memory_v2) {
        nvmlMemory_v2_t m = {.version = NVML_MEMORY_V2_VERSION};
        rc = b->lib.memory_v2(g->dev, &m);
        if (rc == NVML_SUCCESS) {
            r->mem_known = true;
            r->total_mib = bytes_to_mib(m.total);
            r->used_mib = bytes_to_mib(m.used);
            r->free_mib = bytes_to_mib(m.free);
            return true;
        }
        if (rc == NVML_ERROR_GPU_IS_LOST)
            return false;
    }
    if (b->lib.memory_v1) {
        nvmlMemory_t m;
        rc = b->lib.memory_v1(g->dev, &m);
        if (rc == NVML_SUCCESS) {
            r->mem_known = true;
            r->total_mib = bytes_to_mib(m.total);
            r->used_mib = bytes_to_mib(m.used);
            r->free_mib = bytes_to_mib(m.free);
        }
    }
    return rc != NVML_ERROR_GPU_IS_LOST;
}

static bool read_activity_and_power(gpu_backend *b, nvml_gpu *g, gpu_reading *r)
{
    nvmlReturn_t rc;
    if (b->lib.utilization) {
        nvmlUtilization_t u;
        rc = b->lib.utilization(g->dev, &u);
        if (rc == NVML_ERROR_GPU_IS_LOST)
            return false;
        if (rc == NVML_SUCCESS)
            r->util_gpu = u.gpu > 100 ? 1.0 : u.gpu / 100.0;
    }
    if (b->lib.power_usage) {
        unsigned mw;
        rc = b->lib.power_usage(g->dev, &mw);
        if (rc == NVML_ERROR_GPU_IS_LOST)
            return false;
        if (rc == NVML_SUCCESS) {
            r->power_w = mw / 1000.0;
            r->src_power = SRC_NVML;
        }
    }
    if (b->lib.total_energy) {
        unsigned long long mj;
        rc = b->lib.total_energy(g->dev, &mj);
        if (rc == NVML_ERROR_GPU_IS_LOST)
            return false;
        if (rc == NVML_SUCCESS) {
            r->energy_mj = (double)mj;
            r->src_power = SRC_NVML;
        }
    }
    return true;
}

/* The MPS clients into the compute list: a pid both give keeps the compute list's entry and
 * is marked a client. false when out has no room for them all. */
static bool merge_mps(gpu_proc *out, int *n, const gpu_proc *mps, int nmps)
{
    for (int i = 0; i < nmps; i++) {
        int j = 0;
        while (j < *n && out[j].pid != mps[i].pid)
            j++;
        if (j == *n) {
            if (*n >= GPU_MAX_PROCS)
                return false;
            out[(*n)++] = mps[i];
        }
        out[j].mps_client = true;
    }
    return true;
}

/* Compute processes plus MPS clients (under MPS the compute list shows the server; a process
 * in the compute list only is not an MPS client). */
static bool read_procs(gpu_backend *b, nvml_gpu *g, gpu_reading *r)
{
    int n = 0;
    nvmlReturn_t rc = nvml_read_proc_list(b->lib.compute_procs, b->lib.compute_layout, g->dev,
                                          r->procs, &n, GPU_MAX_PROCS);
    if (rc == NVML_ERROR_GPU_IS_LOST)
        return false;
    bool known = rc == NVML_SUCCESS;
    r->mps_known = false;
    if (known && b->lib.mps_procs) {
        gpu_proc mps[GPU_MAX_PROCS];
        int nmps = 0;
        rc = nvml_read_proc_list(b->lib.mps_procs, b->lib.mps_layout, g->dev, mps, &nmps,
                                 GPU_MAX_PROCS);
        if (rc == NVML_ERROR_GPU_IS_LOST)
            return false;
        if (rc == NVML_SUCCESS && !merge_mps(r->procs, &n, mps, nmps))
            rc = NVML_ERROR_INSUFFICIENT_SIZE;
        /* NOT_SUPPORTED here just means no MPS on this GPU */
        known = rc == NVML_SUCCESS || rc == NVML_ERROR_NOT_SUPPORTED;
        r->mps_known = rc == NVML_SUCCESS;
    }
    r->procs_known = known;
    r->nprocs = known ? n : 0;
    if (!known) {
        memset(r->procs, 0, sizeof r->procs);
        r->mps_known = false;
    }
    return true;
}

static bool read_gpm(gpu_backend *b, nvml_gpu *g, gpu_reading *r, double now)
{
    nvmlReturn_t rc;
    double a, o, d;
    if (gpm_reader_sample(&g->gpm, &b->lib, g->dev, now, &a, &o, &d, &rc)) {
        r->smact = a;
        r->smocc = o;
        r->drama = d;
        r->src_activity = SRC_GPM;
    }
    return rc != NVML_ERROR_GPU_IS_LOST;
}

/* DCGM's activity is used only on GPUs without GPM (on Hopper DCGM reads GPM itself, and one
 * source per GPU keeps readings comparable); its power and energy only where NVML gave none. */
static void apply_dcgm(const nvml_gpu *g, const dcgm_gpu_values *v, gpu_reading *r)
{
    if (!v->present)
        return;
    if (!g->gpm.supported &&
        !(isnan(v->smact) && isnan(v->smocc) && isnan(v->drama))) {
        r->smact = v->smact;
        r->smocc = v->smocc;
        r->drama = v->drama;
        r->src_activity = SRC_DCGM;
    }
    if (isnan(r->power_w) && isnan(r->energy_mj) && !(isnan(v->power_w) && isnan(v->energy_mj))) {
        r->power_w = v->power_w;
        r->energy_mj = v->energy_mj;
        r->src_power = SRC_DCGM;
    }
}

static int nvml_sample(gpu_backend *b, gpu_reading *out, carma_err *err)
{
    double now = clock_mono_s();
    open_dcgm_when_due(b, now);
    bool dcgm_ok = false;
    if (b->dcgm) {
        carma_err derr;
        dcgm_ok = dcgm_reader_read(b->dcgm, b->dvals, b->n_all, &derr) == 0;
        if (dcgm_ok) { /* what it is read through now: a read may move it to a host engine */
            snprintf(b->activity_note, sizeof b->activity_note, "%s",
                     dcgm_reader_status(b->dcgm));
        } else {
            /* closed and opened again later: a host engine that restarted no longer knows
             * this connection (DCGM_ST_CONNECTION_NOT_VALID on every call) */
            snprintf(b->activity_note, sizeof b->activity_note,
                     "DCGM read failed: %s; trying again in %.0f s", derr.msg, DCGM_RETRY_S);
            dcgm_reader_close(b->dcgm);
            b->dcgm = NULL;
            b->dcgm_next_try = now + DCGM_RETRY_S;
        }
    }
    for (int i = 0; i < b->n; i++) {
        nvml_gpu *g = &b->gpus[i];
        gpu_reading *r = &out[i];
        if (!g->dev && b->lib.device_handle(g->nvml_index, &g->dev) != NVML_SUCCESS)
            g->dev = NULL; /* still no handle: try again next sample */
        if (g->dev)
            read_static(b, g);
        reading_unknown(r, i, g);
        if (!g->dev)
            continue;
        gpu_reading keep = *r;
        if (!read_memory(b, g, r) || !read_activity_and_power(b, g, r) || !read_procs(b, g, r) ||
            !read_gpm(b, g, r, now)) {
            *r = keep; /* lost: nothing from this sample counts */
            gpm_reader_reset(&g->gpm);
            continue;
        }
        if (dcgm_ok)
            apply_dcgm(g, &b->dvals[g->nvml_index], r);
    }
    (void)err; /* per-GPU failures are unknowns, not errors */
    return 0;
}

const char *nvml_backend_activity_note(const gpu_backend *b)
{
    return b->activity_note;
}

const char *nvml_backend_visible_note(const gpu_backend *b)
{
    return b->visible_note;
}

const nvml_mig_gpu *nvml_backend_mig_left_out(const gpu_backend *b, int *n)
{
    *n = b->nmig;
    return b->mig_out;
}

const gpu_backend_ops gpu_backend_nvml = {
    .name = "nvml",
    .open = nvml_open,
    .count = nvml_count,
    .sample = nvml_sample,
    .close = nvml_close,
};
