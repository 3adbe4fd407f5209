/* catalog.h — the workload catalog (data/workloads.csv): one row per CARMA .rad task file with
 * its measured memory, the stored estimates, GPUs, runtime and (derived) solo activity. */
#ifndef CARMA_CORE_CATALOG_H
#define CARMA_CORE_CATALOG_H

#include <stddef.h>

#include "core/task.h"
#include "util/err.h"

typedef struct workload {
    char *rad_file;      /* "resnet18_cifar100_20e_1.rad" */
    char *model_name;    /* "resnet18" */
    char *size_class;    /* light / medium / heavy */
    char *script;        /* training script file name */
    char *summary_file;  /* model summary file name (.rad line 4) */
    char *dataset;
    int batch_size;      /* effective batch size */
    int ngpus;
    int epochs;
    mem_figures mem;     /* oracle (line 9), horus, faketensor, gpumemnet (lines 10-12) */
    task_sim_facts sim;  /* solo runtime (s) and solo SMACT/SMOCC/DRAMA when the catalog has them */
} workload;

typedef struct workload_catalog {
    workload *items;
    size_t n;
} workload_catalog;

/* Loads the catalog CSV. Required columns: rad_file, model_name, gpus_line8,
 * measured_mem_mb_line9, exclusive_runtime_min; the estimate, batch, summary and activity
 * columns (solo_smact, solo_smocc, solo_drama) are read when present. */
int catalog_load(const char *path, workload_catalog *out, carma_err *err);
void catalog_free(workload_catalog *c);

/* Finds a row by .rad name; a directory part in `rad_name` is ignored. NULL if absent. */
const workload *catalog_find(const workload_catalog *c, const char *rad_name);

/* Builds a task from a catalog row (name, GPUs, memory figures, batch, summary, sim facts). */
int catalog_to_task(const workload *w, task_spec *out, carma_err *err);

#endif
