/* policy.c — CARMA's policies (carma-spec §4.3), AEGIS's horus and lucid baselines and our
 * carma policy as one table. */
#include "sched/policy.h"

#include <strings.h>

static const policy_desc policies[POLICY_COUNT] = {
    {POLICY_EXCLUSIVE, "exclusive", false, PMEM_NONE, false, PORDER_INDEX},
    {POLICY_OR_RR, "or-rr", true, PMEM_NONE, false, PORDER_ROUND_ROBIN},
    {POLICY_ORACLE_FF, "oracle-ff", true, PMEM_ORACLE, true, PORDER_INDEX},
    {POLICY_ORACLE_BF, "oracle-bf", true, PMEM_ORACLE, true, PORDER_MEM_ASC},
    {POLICY_ORACLE_MAGM, "oracle-magm", true, PMEM_ORACLE, true, PORDER_MEM_DESC},
    {POLICY_ORACLE_LUG, "oracle-lug", true, PMEM_ORACLE, true, PORDER_SMACT_ASC},
    {POLICY_OR_MAGM, "or-magm", true, PMEM_FIXED, true, PORDER_MEM_DESC},
    {POLICY_OR_LUG, "or-lug", true, PMEM_FIXED, true, PORDER_SMACT_ASC},
    {POLICY_EST_MAGM, "est-magm", true, PMEM_ESTIMATE, true, PORDER_MEM_DESC},
    {POLICY_EST_LUG, "est-lug", true, PMEM_ESTIMATE, true, PORDER_SMACT_ASC},
    /* AEGIS's baselines (select_horus, select_lucid): */
    {POLICY_HORUS, "horus", true, PMEM_NONE, false, PORDER_LEDGER_UTIL},
    {POLICY_LUCID, "lucid", true, PMEM_ORACLE, false, PORDER_LEDGER_CLASS_MEM},
    /* Ours (carma.c); `gate` applies when carma_interference is off. */
    {POLICY_CARMA, "carma", true, PMEM_BEST, true, PORDER_CARMA},
};

const policy_desc *policy_describe(policy_id p)
{
    return (unsigned)p < POLICY_COUNT ? &policies[p] : NULL;
}

int policy_from_name(const char *name, policy_id *out)
{
    if (!name)
        return -1;
    for (int i = 0; i < POLICY_COUNT; i++) {
        if (!strcasecmp(name, policies[i].name)) {
            *out = policies[i].id;
            return 0;
        }
    }
    return -1;
}

const char *policy_name(policy_id p)
{
    const policy_desc *d = policy_describe(p);
    return d ? d->name : "?";
}
