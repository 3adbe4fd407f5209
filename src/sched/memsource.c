/* memsource.c — memory figures by source, and the estimator names users type. */
#include <strings.h>

#include "sched/sched.h"

static const char *const estimator_names[MEM_SOURCE_COUNT] = {
    [MEM_ORACLE] = "none",
    [MEM_HORUS] = "horus",
    [MEM_FAKETENSOR] = "faketensor",
    [MEM_GPUMEMNET] = "gpumemnet",
    [MEM_CARMA] = "carma",
    [MEM_XMEM] = "xmem",
};

void mem_figures_set(mem_figures *m, mem_source src, uint64_t mib)
{
    m->mib[src] = mib;
    m->known |= 1u << src;
}

bool mem_figures_get(const mem_figures *m, mem_source src, uint64_t *mib)
{
    if (!(m->known & (1u << src)))
        return false;
    *mib = m->mib[src];
    return true;
}

int mem_source_from_estimator(const char *name, mem_source *out)
{
    if (!name)
        return -1;
    for (int i = 0; i < MEM_SOURCE_COUNT; i++) {
        if (!strcasecmp(name, estimator_names[i])) {
            *out = (mem_source)i;
            return 0;
        }
    }
    return -1;
}

const char *mem_source_estimator_name(mem_source src)
{
    return (unsigned)src < MEM_SOURCE_COUNT ? estimator_names[src] : "?";
}
