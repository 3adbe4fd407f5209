/* policy.h — the policy table: what each named policy filters on and how it sorts.
 * Internal to the core (sched.c, tests); drivers use policy ids and names from sched.h. */
#ifndef CARMA_SCHED_POLICY_H
#define CARMA_SCHED_POLICY_H

#include "sched/sched.h"

typedef enum policy_memory {
    PMEM_NONE = 0,  /* no memory filter */
    PMEM_ORACLE,    /* available >= measured figure + margin */
    PMEM_ESTIMATE,  /* available >= the configured estimator's figure + margin */
    PMEM_FIXED,     /* available >= or_min_free_mib, whatever the task */
    PMEM_BEST       /* carma: the measured figure first (carma_measured_first), else the
                       estimator's, raised by what OOMs taught (carma_figure) */
} policy_memory;

typedef enum policy_order {
    PORDER_INDEX = 0,   /* first fit: GPU index order */
    PORDER_MEM_ASC,     /* best fit: tightest available memory first */
    PORDER_MEM_DESC,    /* most available GPU memory first */
    PORDER_SMACT_ASC,   /* least utilized GPU first */
    PORDER_ROUND_ROBIN, /* a persistent cursor over all GPUs */
    /* Ledger policies (ledger.c): they filter and sort by the per-GPU ledger of placed tasks
     * alone; no free-memory filter, no gate. `memory` names only the task figure they use. */
    PORDER_LEDGER_UTIL,     /* horus: projected profiled util within budget, lowest first */
    PORDER_LEDGER_CLASS_MEM, /* lucid: job/class/memory caps; (class sum, memory) ascending */
    PORDER_CARMA            /* carma (carma.c): its own rules, parts switched by the config */
} policy_order;

typedef struct policy_desc {
    policy_id id;
    const char *name;
    bool collocates;     /* false: only the exclusive-first rule places tasks */
    policy_memory memory;
    bool gate;           /* applies the utilization gate */
    policy_order order;
} policy_desc;

const policy_desc *policy_describe(policy_id p);

#endif
