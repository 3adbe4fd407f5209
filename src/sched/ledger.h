/* ledger.h — the per-GPU ledger of the running tasks placed on each GPU, and the two policies
 * that place by it instead of by telemetry: AEGIS's horus and lucid baselines. Internal to the
 * core (sched.c); drivers read a GPU's ledger with sched_gpu_ledger (sched.h). */
#ifndef CARMA_SCHED_LEDGER_H
#define CARMA_SCHED_LEDGER_H

#include "sched/sched.h"

/* One GPU's sums. Unknown figures are counted, not summed, so every update is O(1) and exact
 * (utilization is summed in integer parts per billion: no rounding drift as tasks come and go). */
typedef struct gpu_ledger {
    int ntasks;
    int util_unknown, class_unknown, oracle_unknown; /* tasks whose figure is unknown */
    int64_t util_ppb;     /* sum of the known profiled_util, in parts per billion */
    int class_sum;        /* sum of the known lucid_class */
    uint64_t oracle_mib;  /* sum of the known MEM_ORACLE figures */
    int commit_unknown;   /* tasks placed with no memory commitment (carma_figure unknown) */
    uint64_t commit_mib;  /* sum of the known commitments (carma: figure + margin) */
    sched_task *head;     /* its tasks, linked through glink[k] (k: this GPU in t->gpus) */
} gpu_ledger;

typedef struct ledger_cand {
    int gpu;
    int64_t key1;   /* sort keys, ascending; ties by GPU index */
    uint64_t key2;
} ledger_cand;

typedef struct ledger {
    int ngpus;
    gpu_ledger *gpu;
    ledger_cand *cand;  /* scratch for the picks, ngpus entries */
    long charged;       /* sum of gpu[].ntasks, kept apart as a cross-check */
} ledger;

int ledger_init(ledger *l, int ngpus);  /* -1: out of memory */
void ledger_free(ledger *l);

/* Adds a running task to each GPU in t->gpus[0..t->ngpus), recording its charge in t->charge:
 * its commitment (NULL: none known) and pressure. A task already charged is left as it is. */
void ledger_charge(ledger *l, sched_task *t, const uint64_t *commit_mib, double pressure);
/* Takes a task's recorded charge off its GPUs; nothing when it holds none. */
void ledger_discharge(ledger *l, sched_task *t);

sched_gpu_load ledger_load(const ledger *l, int gpu);
/* The next task on `gpu` after t (ledger_first: the first); NULL at the end. */
sched_task *ledger_first(const ledger *l, int gpu);
sched_task *ledger_next(const sched_task *t, int gpu);
/* The n best of c[0..ncand) by (key1, key2, index) ascending into out; 0 when ncand < n. */
int ledger_take_best(ledger_cand *c, int ncand, int n, int *out);
/* Internal consistency: counts >= 0, unknown counts <= ntasks, an empty GPU sums to 0, and the
 * counts add up to `charged`. */
bool ledger_consistent(const ledger *l);

/* Whether the GPU runs cfg->max_tasks_per_gpu tasks already (never when the cap is 0): no
 * policy places a task there. */
bool ledger_full(const ledger *l, const sched_config *cfg, int gpu);

/* The picks. `grace` has l->ngpus entries; only GPU_AVAILABLE GPUs are candidates. Each fills
 * out[0..t->ngpus) and returns t->ngpus, or returns 0 when fewer GPUs are feasible. */
int ledger_pick_horus(ledger *l, const sched_config *cfg, const gpu_grace *grace,
                      const sched_task *t, int *out);
int ledger_pick_lucid(ledger *l, const sched_config *cfg, const gpu_grace *grace,
                      const gpu_view *views, const sched_task *t, int *out);

#endif
