/* catalog.h — the workload catalog (data/workloads.csv): one row per CARMA .rad task file and
 * one per AEGIS workload, with measured memory, the stored estimates, GPUs, runtime and the
 * solo profile measured on an A100 (start-up, memory ramp, activity, utilization, Lucid class). */
#ifndef CARMA_CORE_CATALOG_H
#define CARMA_CORE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "task/task.h"
#include "util/err.h"

/* What the simulator and the profile-based policies know of a row beyond task_sim_facts. */
typedef struct workload_profile {
    double startup_s;        /* CPU start-up before GPU work; NaN = not measured */
    bool peaks_known;        /* the two peaks below were measured */
    uint64_t peak_early_mib; /* peak in the first 200 s of GPU activity */
    uint64_t peak_full_mib;  /* peak over the whole run */
    double util;             /* nvidia-smi GPU utilization 0..1; NaN = unknown */
    int lucid_class;         /* Lucid's 0 Tiny, 1 Medium, 2 Jumbo; -1 = unknown */
} workload_profile;

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
    workload_profile profile;
} workload;

typedef struct workload_catalog {
    workload *items;
    size_t n;
} workload_catalog;

/* Loads the catalog CSV. Required columns: rad_file, model_name, gpus_line8,
 * measured_mem_mb_line9, exclusive_runtime_min; the estimate, batch, summary and activity
 * columns (solo_smact, solo_smocc, solo_drama) and the profile columns (startup_s,
 * peak_early_mib, peak_full_mib, profiled_util, lucid_class) are read when present; a row
 * with one peak must have both, the early one no larger. */
int catalog_load(const char *path, workload_catalog *out, carma_err *err);
void catalog_free(workload_catalog *c);

/* Finds a row by .rad name; a directory part in `rad_name` is ignored. NULL if absent. */
const workload *catalog_find(const workload_catalog *c, const char *rad_name);

/* Builds a task from a catalog row (name, GPUs, memory figures, batch, summary, sim facts). */
int catalog_to_task(const workload *w, task_spec *out, carma_err *err);

#endif
