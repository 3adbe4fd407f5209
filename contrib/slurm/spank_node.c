/* spank_node.c — the node side of carma's SPANK plugin (slurmstepd, once per step, as the
 * job's user): the job's MPS memory cap from the shards Slurm granted it, and, when the node's
 * carma daemon runs an MPS server, the pipe directory that makes the job one of its clients.
 * A step Slurm granted no GPU gets none: CUDA_VISIBLE_DEVICES is set empty (Slurm leaves it
 * unset, and CUDA then shows every GPU of the node). Whatever fails here is logged and the job
 * starts, never with more of a GPU than it was granted: a shard step whose cap cannot be set
 * sees no GPU. The hook itself never fails: that would fail the job, or, on a `required`
 * plugstack line, drain the node. What the daemon sent is logged with its control characters
 * escaped: the slurmd log (and a step's error output) must not take its terminal escapes or
 * lines that pass for slurmd's own. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "carma_spank.h"
#include "daemon/connect.h"
#include "util/clock.h"
#include "util/strutil.h"

/* A `gpus` reply of a node with many GPUs is a few KiB; more is not carma's daemon. */
#define GPUS_REPLY_MAX (1u << 20)
/* CUDA devices a step may see; more than any node has. */
#define MAX_DEVS 64
/* A GPU's memory in MiB is below this (1 PiB); a figure outside 0..GPU_MIB_MAX is not the
 * daemon's, and the difference of two within it cannot overflow. */
#define GPU_MIB_MAX (1LL << 30)

/* s with its control characters made visible (str_escape_controls) in buf, cut to fit: text
 * from the daemon or the job's environment, for the log. */
static const char *esc(const char *s, char *buf, size_t len)
{
    char *e = str_escape_controls(s ? s : "?");
    snprintf(buf, len, "%s", e ? e : "(unprintable)");
    free(e);
    return buf;
}

/* Reads the job's variable name into buf; false when absent or too long. */
static bool job_env(spank_t sp, const char *name, char *buf, int len)
{
    return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS && buf[0];
}

/* Splits a comma list of at most MAX_DEVS non-negative integers (GPU indices). Returns the
 * count, or -1 when it is anything else (a UUID list, say). */
static int parse_indices(const char *list, int *out)
{
    char buf[512];
    if (strlen(list) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", list);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (n == MAX_DEVS || parse_u64(t, &v) || v > 4096)
            return -1;
        out[n++] = (int)v;
    }
    return n;
}

/* The daemon's GPU that Slurm numbers n: Slurm's GPU numbers (SLURM_JOB_GPUS) are those of
 * /dev/nvidiaN, which the daemon reports as each GPU's "minor"; a daemon that reports none
 * (the sim backend, a library without nvmlDeviceGetMinorNumber) is taken to number its GPUs
 * the same way. NULL when it has no such GPU. */
static json_t *gpu_numbered(json_t *gpus, int n)
{
    bool minors = false;
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g) {
        minors |= json_is_integer(json_object_get(g, "minor"));
    }
    json_array_foreach(gpus, i, g) {
        json_t *id = json_object_get(g, minors ? "minor" : "index");
        if (json_is_integer(id) && json_integer_value(id) == n)
            return g;
    }
    return NULL;
}

/* Asks the daemon for its GPUs; logs what it knows of the job's ones (global indices idx) and
 * sets CUDA_MPS_PIPE_DIRECTORY when it runs an MPS server. */
static void ask_daemon(spank_t sp, const cspank_conf *c, const int *idx, int nidx,
                       uint64_t cap_mib)
{
    carma_err err = {{0}};
    /* timeout_ms bounds the whole talk, the connect included: the step waits for this hook */
    double deadline = clock_mono_s() + c->timeout_ms / 1000.0;
    char e1[512], e2[512];
    int fd = daemon_connect_timed(c->socket, c->timeout_ms, &err);
    if (fd < 0) {
        slurm_info("carma_spank: warning: %s; the job runs without carma's MPS server",
                   esc(err.msg, e1, sizeof e1));
        return;
    }
    json_t *reply = daemon_call_within(fd, json_pack("{s:s}", "verb", "gpus"), deadline,
                                       GPUS_REPLY_MAX, NULL, &err);
    close(fd);
    if (!reply) {
        /* err holds the daemon's own error text when it refused */
        slurm_error("carma_spank: carma daemon at %s: %s", c->socket, esc(err.msg, e1, sizeof e1));
        return;
    }
    json_t *gpus = json_object_get(reply, "gpus");
    for (int k = 0; k < nidx; k++) {
        json_t *g = gpu_numbered(gpus, idx[k]);
        if (!g) {
            slurm_error("carma_spank: the carma daemon at %s has no GPU /dev/nvidia%d",
                        c->socket, idx[k]);
            continue;
        }
        const char *uuid = json_string_value(json_object_get(g, "uuid"));
        json_t *used = json_object_get(g, "mem_used_mib"), *total = json_object_get(g,
                                                                                   "mem_total_mib");
        json_int_t u = json_integer_value(used), t = json_integer_value(total);
        if (json_is_null(used) || json_is_null(total) || !used || !total) {
            /* unknown to the daemon (its last reading failed): nothing to compare */
        } else if (!json_is_integer(used) || !json_is_integer(total) || u < 0 || t < 0 ||
                   u > GPU_MIB_MAX || t > GPU_MIB_MAX) {
            slurm_error("carma_spank: the carma daemon at %s gave GPU %d no sane memory figures",
                        c->socket, idx[k]);
        } else {
            json_int_t free_mib = t - u;
            slurm_info("carma_spank: GPU %d (%s): %lld MiB free, the job may use %llu MiB", idx[k],
                       esc(uuid, e1, sizeof e1), (long long)free_mib,
                       (unsigned long long)cap_mib);
            if (free_mib < (json_int_t)cap_mib)
                slurm_error("carma_spank: GPU %d has %lld MiB free, less than the job's %llu MiB",
                            idx[k], (long long)free_mib, (unsigned long long)cap_mib);
        }
    }
    /* an absolute path without control characters (those escaping changes) and short enough
     * for a socket's, as the daemon makes it; anything else is not given to the job */
    const char *pipe = json_string_value(json_object_get(reply, "mps_pipe_dir"));
    if (pipe && pipe[0] == '/' && strlen(pipe) < 256 &&
        !strcmp(esc(pipe, e1, sizeof e1), pipe)) {
        if (spank_setenv(sp, "CUDA_MPS_PIPE_DIRECTORY", pipe, 1) == ESPANK_SUCCESS)
            slurm_info("carma_spank: the job is a client of carma's MPS server (%s)", pipe);
    } else if (pipe) {
        slurm_error("carma_spank: the carma daemon at %s gave a pipe directory that is not an "
                    "absolute path of printable characters: %s", c->socket,
                    esc(pipe, e2, sizeof e2));
    }
    json_decref(reply);
}

/* Leaves the step no GPU: an empty CUDA_VISIBLE_DEVICES shows CUDA none. */
static void hide_gpus(spank_t sp, const char *why)
{
    if (spank_setenv(sp, "CUDA_VISIBLE_DEVICES", "", 1) != ESPANK_SUCCESS) {
        slurm_error("carma_spank: %s, and CUDA_VISIBLE_DEVICES cannot be set", why);
        return;
    }
    slurm_error("carma_spank: %s; the step gets no GPU (CUDA_VISIBLE_DEVICES is empty)", why);
}

void cspank_node_setup(spank_t sp, const cspank_conf *c)
{
    char shards_s[32], visible[512], gpus_s[512], e[256];
    uint64_t shards;
    /* absent, not merely too long for buf, is what tells a step granted no GPU */
    spank_err_t vrc = spank_getenv(sp, "CUDA_VISIBLE_DEVICES", visible, sizeof visible);
    /* Only shard jobs (--gpu-mem, --gres=shard:N, gpu:1 rewritten by job_submit.lua) have a
     * share of a GPU to cap. Slurm sets CUDA_VISIBLE_DEVICES for a step it granted GPUs (whole
     * or shards) and unsets it otherwise, which CUDA takes as every GPU of the node: a step
     * without it was granted none, and is shown none. */
    spank_err_t src = spank_getenv(sp, "SLURM_SHARDS_ON_NODE", shards_s, sizeof shards_s);
    if (src == ESPANK_ENV_NOEXIST) {
        if (vrc == ESPANK_ENV_NOEXIST &&
            spank_setenv(sp, "CUDA_VISIBLE_DEVICES", "", 1) != ESPANK_SUCCESS)
            slurm_error("carma_spank: cannot hide the node's GPUs from a step granted none");
        return;
    }
    if (src != ESPANK_SUCCESS || parse_u64(shards_s, &shards) || shards < 1 ||
        shards > CSPANK_MAX_MIB / c->shard_mib) {
        char why[400];
        snprintf(why, sizeof why, "SLURM_SHARDS_ON_NODE=%s is not a shard count (1..%u of "
                 "%u MiB); no MPS cap", esc(shards_s, e, sizeof e),
                 CSPANK_MAX_MIB / c->shard_mib, c->shard_mib);
        hide_gpus(sp, why);
        return;
    }
    uint64_t cap = shards * c->shard_mib;
    int devs[MAX_DEVS], ndev = vrc == ESPANK_SUCCESS ? parse_indices(visible, devs) : 0;
    if (ndev <= 0) {
        hide_gpus(sp, "the job's CUDA_VISIBLE_DEVICES is not a GPU list; no MPS cap");
        return;
    }
    /* NVIDIA's format, "<device>=<N>M" by the ordinal the client sees (CUDA renumbers the
     * visible devices from 0); the whole grant on each device the shards came from, since
     * Slurm does not say how a grant spread over two GPUs splits. */
    char limit[MAX_DEVS * 24] = "";
    size_t off = 0;
    for (int k = 0; k < ndev; k++)
        off += (size_t)snprintf(limit + off, sizeof limit - off, "%s%d=%lluM", k ? "," : "", k,
                                (unsigned long long)cap);
    if (spank_setenv(sp, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", limit, 1) != ESPANK_SUCCESS) {
        hide_gpus(sp, "cannot set CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
        return;
    }
    /* Slurm's GPU numbers (SLURM_STEP_GPUS, else SLURM_JOB_GPUS) are those of /dev/nvidiaN:
     * gpu_numbered finds them among the daemon's GPUs by minor number. */
    int idx[MAX_DEVS], nidx = 0;
    if (job_env(sp, "SLURM_STEP_GPUS", gpus_s, sizeof gpus_s) ||
        job_env(sp, "SLURM_JOB_GPUS", gpus_s, sizeof gpus_s))
        nidx = parse_indices(gpus_s, idx);
    if (nidx < 0)
        nidx = 0;
    ask_daemon(sp, c, idx, nidx, cap);
}
