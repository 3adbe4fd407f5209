/* config_fixture.h — helpers shared by the config tests: comparing two configs option by
 * option, and what `carma config` writes as a string. Include after <cmocka.h>. */
#ifndef CARMA_TEST_CONFIG_FIXTURE_H
#define CARMA_TEST_CONFIG_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

/* Field by field, row by row (struct padding is not guaranteed to survive assignment): every
 * option of the table, so a row added later is compared too. */
static inline bool row_equal(const config_row *r, const carma_config *a, const carma_config *b)
{
    const void *x = (const char *)a + r->offset, *y = (const char *)b + r->offset;
    switch (r->type) {
    case CONFIG_POLICY:
        return *(const policy_id *)x == *(const policy_id *)y;
    case CONFIG_ESTIMATOR:
        return *(const mem_source *)x == *(const mem_source *)y;
    case CONFIG_AGG:
        return *(const agg_mode *)x == *(const agg_mode *)y;
    case CONFIG_DOUBLE:
        return *(const double *)x == *(const double *)y;
    case CONFIG_INT:
        return *(const int *)x == *(const int *)y;
    case CONFIG_MIB:
        return *(const uint64_t *)x == *(const uint64_t *)y;
    case CONFIG_BOOL:
        return *(const bool *)x == *(const bool *)y;
    case CONFIG_STRING:
        return !strcmp(x, y);
    case CONFIG_GPU_MODELS: {
        const gpu_model_list *l = x, *m = y;
        if (l->n != m->n)
            return false;
        for (int i = 0; i < l->n; i++)
            if (strcmp(l->items[i].name, m->items[i].name) ||
                l->items[i].memory_mib != m->items[i].memory_mib ||
                l->items[i].idle_w != m->items[i].idle_w || l->items[i].max_w != m->items[i].max_w)
                return false;
        return true;
    }
    }
    return false;
}

static inline void assert_same_config(const carma_config *a, const carma_config *b)
{
    for (size_t i = 0; i < config_nrows; i++)
        if (!row_equal(&config_rows[i], a, b))
            fail_msg("option %s differs", config_rows[i].name);
}

/* What config_write writes, as a string (the caller frees it). */
static inline char *written(const carma_config *c, bool list)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    if (list)
        config_write_list(c, f);
    else
        config_write(c, f);
    fclose(f);
    /* a copy: gcc -O3 takes what open_memstream filled in for a pointer to the local `buf`
     * itself (-Wdangling-pointer) */
    char *text = strdup(buf);
    free(buf);
    assert_non_null(text);
    return text;
}

#endif
