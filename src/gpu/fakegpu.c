/* fakegpu.c — the fake-GPU backend (named `sim` in the config and on the command line):
 * virtual GPUs whose memory use and activity are the sums of what the processes registered on
 * them (carma-fakejob) declared in the shared state file (fakegpu_state.h). Not the simulator
 * (src/sim), which models GPUs in virtual time without any process.
 * open() argument: "SPEC@STATEFILE", e.g. "2xA100-40GB@/var/lib/carma/sim-gpus".
 * A sample fails, every reading unknown but the GPUs' identity (from the specification), when
 * the file cannot be read or lists fewer GPUs than were opened. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/backend.h"
#include "gpu/fakegpu.h"
#include "gpu/fakegpu_state.h"
#include "util/clock.h"

struct gpu_backend {
    char *path;
    int ngpus;
    fakegpu_dev gpus[FAKEGPU_MAX_GPUS]; /* the GPUs opened (the specification's) */
    double last_t;          /* monotonic time of the previous sample, 0 = none */
    double energy_mj[FAKEGPU_MAX_GPUS];
    fakegpu_state st;       /* the file as the last sample read it */
};

static int fakegpu_open(gpu_backend **out, const char *arg, carma_err *err)
{
    const char *at = arg ? strrchr(arg, '@') : NULL;
    if (!at || at == arg || !at[1])
        return carma_err_set(err, "sim backend: expected SPEC@STATEFILE, got '%s'",
                             arg ? arg : "(none)");
    gpu_backend *b = calloc(1, sizeof *b);
    char *spec = b ? strndup(arg, (size_t)(at - arg)) : NULL;
    if (!b || !spec || !(b->path = strdup(at + 1))) {
        free(spec);
        if (b)
            free(b->path);
        free(b);
        return carma_err_set(err, "out of memory");
    }
    int rc = fakegpu_parse_spec(spec, &b->st, err);
    free(spec);
    if (rc == 0)
        rc = fakegpu_state_init_file(b->path, &b->st, err);
    if (rc) {
        free(b->path);
        free(b);
        return -1;
    }
    b->ngpus = b->st.ngpus;
    memcpy(b->gpus, b->st.gpus, sizeof b->gpus);
    *out = b;
    return 0;
}

static int fakegpu_count(gpu_backend *b)
{
    return b->ngpus;
}

/* A GPU whose readings are unknown: only what was opened (its UUID and name) is said. */
static void unknown_reading(const gpu_backend *b, int g, gpu_reading *r)
{
    memset(r, 0, sizeof *r);
    r->index = g;
    r->minor = -1; /* no device file */
    snprintf(r->uuid, sizeof r->uuid, "%s", b->gpus[g].uuid);
    snprintf(r->name, sizeof r->name, "sim %s", b->gpus[g].name);
    r->mig = GPU_MIG_OFF; /* simulated GPUs are whole GPUs */
    r->util_gpu = r->smact = r->smocc = r->drama = NAN;
    r->power_w = r->energy_mj = NAN;
    r->src_activity = r->src_power = SRC_UNKNOWN;
}

static int fakegpu_sample(gpu_backend *b, gpu_reading *out, carma_err *err)
{
    int rc = fakegpu_state_read(b->path, &b->st, err);
    /* A file that lost GPUs (truncated) would give them no UUID: no sample rather than that. */
    if (rc == 0 && b->st.ngpus < b->ngpus)
        rc = carma_err_set(err, "sim state %s lists %d of the backend's %d GPUs", b->path,
                           b->st.ngpus, b->ngpus);
    if (rc) {
        for (int g = 0; g < b->ngpus; g++)
            unknown_reading(b, g, &out[g]);
        return -1;
    }
    double now = clock_mono_s(), dt = b->last_t > 0 ? now - b->last_t : 0;
    b->last_t = now;
    for (int g = 0; g < b->ngpus; g++) {
        gpu_reading *r = &out[g];
        const fakegpu_dev *sg = &b->st.gpus[g];
        memset(r, 0, sizeof *r);
        r->index = g;
        r->minor = -1; /* no device file */
        snprintf(r->uuid, sizeof r->uuid, "%s", sg->uuid);
        snprintf(r->name, sizeof r->name, "sim %s", sg->name);
        r->mig = GPU_MIG_OFF;
        double smact = 0, smocc = 0, drama = 0;
        uint64_t used = 0;
        r->procs_known = true;
        for (int i = 0; i < b->st.nprocs; i++) {
            const fakegpu_proc *p = &b->st.procs[i];
            if (p->gpu != g)
                continue;
            used += p->mib;
            smact += p->smact;
            smocc += p->smocc;
            drama += p->drama;
            if (r->nprocs < GPU_MAX_PROCS)
                r->procs[r->nprocs++] =
                    (gpu_proc){.pid = p->pid, .used_mib = p->mib, .used_known = true};
        }
        r->mem_known = true;
        r->total_mib = sg->total_mib;
        r->used_mib = used < sg->total_mib ? used : sg->total_mib;
        r->free_mib = sg->total_mib - r->used_mib;
        r->smact = fmin(1, smact);
        r->smocc = fmin(1, smocc);
        r->drama = fmin(1, drama);
        r->util_gpu = r->nprocs ? fmin(1, 1.25 * smact) : 0;
        r->src_activity = SRC_FAKEGPU;
        r->src_power = SRC_FAKEGPU;
        r->power_w = sg->tdp_w * (0.15 + 0.85 * r->smact);
        b->energy_mj[g] += r->power_w * dt * 1000.0;
        r->energy_mj = b->energy_mj[g];
    }
    return 0;
}

static void fakegpu_close(gpu_backend *b)
{
    if (!b)
        return;
    free(b->path);
    free(b);
}

const gpu_backend_ops gpu_backend_fakegpu = {
    .name = "sim",
    .open = fakegpu_open,
    .count = fakegpu_count,
    .sample = fakegpu_sample,
    .close = fakegpu_close,
};
