/* visible.c — the allocation filter (see visible.h): SLURM_JOB_GPUS by minor number, else
 * CUDA_VISIBLE_DEVICES by UUID (prefix) or NVML index. Unlike CUDA, which silently stops at the
 * first entry it cannot use, an entry naming no GPU stops the daemon: a job that packs its tasks
 * onto GPUs it does not hold would take them from another job. */
#include "gpu/visible.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY_MAX 128

/* Copies the next comma-separated entry of *p, trimmed, into buf; false at the end. */
static bool next_entry(const char **p, char *buf, size_t cap)
{
    const char *s = *p;
    if (!s)
        return false;
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    snprintf(buf, cap, "%.*s", (int)(len < cap ? len : cap - 1), s);
    *p = comma ? comma + 1 : NULL;
    return true;
}

/* A non-negative decimal integer, the whole text; -1 otherwise. */
static long parse_index(const char *s)
{
    if (!*s)
        return -1;
    for (const char *c = s; *c; c++)
        if (!isdigit((unsigned char)*c))
            return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v > 1000000 ? -1 : v;
}

static bool blank(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return !*s;
}

/* SLURM_JOB_GPUS: the node-local indices Slurm gave the job. With gres.conf's File=/dev/nvidia[..]
 * they are the device files' minor numbers, which NVML's own index need not follow. */
static int select_slurm(const gpu_ident *all, int n, const gpu_visible_env *env, bool *keep,
                        carma_err *err)
{
    if (blank(env->slurm_job_gpus))
        return carma_err_set(err, "SLURM_JOB_GPUS is set but empty: the job holds no GPU");
    const char *p = env->slurm_job_gpus;
    char e[ENTRY_MAX];
    while (next_entry(&p, e, sizeof e)) {
        long v = parse_index(e);
        if (v < 0)
            return carma_err_set(err, "SLURM_JOB_GPUS=%s: '%s' is not a GPU index",
                                 env->slurm_job_gpus, e);
        int hit = -1;
        for (int i = 0; i < n && hit < 0; i++) {
            bool match = env->minor_supported
                             ? all[i].minor_known && all[i].minor == (unsigned)v
                             : all[i].nvml_index == v;
            if (match)
                hit = i;
        }
        if (hit < 0)
            return carma_err_set(err, "SLURM_JOB_GPUS=%s: no GPU of this node has %s %ld "
                                      "(%d GPU(s) listed by NVML)",
                                 env->slurm_job_gpus,
                                 env->minor_supported ? "minor number (/dev/nvidiaN)"
                                                      : "NVML index",
                                 v, n);
        keep[hit] = true;
    }
    return 0;
}

/* CUDA_VISIBLE_DEVICES: UUIDs, or a "GPU-" prefix naming exactly one GPU, as CUDA takes them;
 * integers are NVML indices (CUDA's own order is fastest-first unless
 * CUDA_DEVICE_ORDER=PCI_BUS_ID, so they may differ: UUIDs are the safe form). */
static int select_cuda(const gpu_ident *all, int n, const char *list, bool *keep, carma_err *err)
{
    if (blank(list))
        return carma_err_set(err, "CUDA_VISIBLE_DEVICES is set but empty: it makes no GPU "
                                  "visible");
    const char *p = list;
    char e[ENTRY_MAX];
    while (next_entry(&p, e, sizeof e)) {
        int hit = -1;
        if (!strncmp(e, "GPU-", 4)) {
            int matches = 0;
            for (int i = 0; i < n; i++)
                if (all[i].uuid[0] && !strncmp(all[i].uuid, e, strlen(e))) {
                    hit = i;
                    matches++;
                }
            if (matches > 1)
                return carma_err_set(err, "CUDA_VISIBLE_DEVICES=%s: '%s' is the start of %d "
                                          "GPUs' UUIDs; give more of it",
                                     list, e, matches);
            if (!matches)
                return carma_err_set(err, "CUDA_VISIBLE_DEVICES=%s: no GPU of this node has "
                                          "a UUID starting with '%s'",
                                     list, e);
        } else if (!strncmp(e, "MIG-", 4)) {
            return carma_err_set(err, "CUDA_VISIBLE_DEVICES=%s: '%s' is a MIG instance; carma "
                                      "manages whole GPUs only",
                                 list, e);
        } else if (!strcmp(e, "NoDevFiles") || !strcmp(e, "-1")) {
            /* Slurm's word for a job without GPUs, and CUDA's idiom for none */
            return carma_err_set(err, "CUDA_VISIBLE_DEVICES=%s: '%s' makes no GPU visible "
                                      "(the job holds no GPU)",
                                 list, e);
        } else {
            long v = parse_index(e);
            if (v < 0)
                return carma_err_set(err, "CUDA_VISIBLE_DEVICES=%s: '%s' is neither a GPU "
                                          "index nor a GPU UUID (GPU-...)",
                                     list, e);
            for (int i = 0; i < n && hit < 0; i++)
                if (all[i].nvml_index == v)
                    hit = i;
            if (hit < 0)
                return carma_err_set(err, "CUDA_VISIBLE_DEVICES=%s: no GPU has index %ld "
                                          "(NVML lists %d)",
                                     list, v, n);
        }
        keep[hit] = true;
    }
    return 0;
}

static void write_note(const gpu_ident *all, int n, const bool *keep, const char *from,
                       const char *value, const char *how, char *note, size_t cap)
{
    int used = snprintf(note, cap, "%s=%s (%s): using", from, value, how);
    int kept = 0;
    for (int i = 0; i < n && used > 0 && (size_t)used < cap; i++) {
        if (!keep[i])
            continue;
        used += snprintf(note + used, cap - (size_t)used, "%s NVML GPU %d %s", kept ? "," : "",
                         all[i].nvml_index, all[i].uuid[0] ? all[i].uuid : "(UUID unknown)");
        kept++;
    }
    if (used > 0 && (size_t)used < cap)
        snprintf(note + used, cap - (size_t)used, "; %d of the node's %d GPU(s) left out",
                 n - kept, n);
}

int gpu_visible_select(const gpu_ident *all, int n, const gpu_visible_env *env, bool *keep,
                       char *note, size_t note_cap, carma_err *err)
{
    if (note_cap)
        note[0] = '\0';
    bool slurm = env->slurm_job_gpus != NULL;
    bool cuda = !slurm && env->cuda_visible_devices != NULL;
    for (int i = 0; i < n; i++)
        keep[i] = !slurm && !cuda;
    if (!slurm && !cuda)
        return 0;
    int rc = slurm ? select_slurm(all, n, env, keep, err)
                   : select_cuda(all, n, env->cuda_visible_devices, keep, err);
    if (rc)
        return rc;
    int kept = 0;
    for (int i = 0; i < n; i++)
        kept += keep[i];
    if (!kept)
        return carma_err_set(err, "%s is set but names no GPU",
                             slurm ? "SLURM_JOB_GPUS" : "CUDA_VISIBLE_DEVICES");
    const char *how = !slurm                 ? "UUIDs or NVML indices"
                      : env->minor_supported ? "/dev/nvidiaN minor numbers"
                                             : "NVML indices: this NVML has no "
                                               "nvmlDeviceGetMinorNumber";
    write_note(all, n, keep, slurm ? "SLURM_JOB_GPUS" : "CUDA_VISIBLE_DEVICES",
               slurm ? env->slurm_job_gpus : env->cuda_visible_devices, how, note, note_cap);
    return 0;
}
