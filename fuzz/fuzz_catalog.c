/* fuzz_catalog.c — the workload catalog (CSV, catalog_load) and each row turned into a task. */
#include "fuzz_common.h"

#include "task/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    workload_catalog c;
    carma_err err;
    if (catalog_load(fuzz_file(data, size, path), &c, &err) == 0) {
        for (size_t i = 0; i < c.n; i++) {
            task_spec t;
            if (catalog_to_task(&c.items[i], &t, &err) == 0)
                task_spec_free(&t);
        }
        catalog_free(&c);
    }
    return 0;
}
