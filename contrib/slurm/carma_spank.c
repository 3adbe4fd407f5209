/* carma_spank.c — carma's SPANK plugin for Slurm (carma_spank.so): its hooks, the --gpu-mem
 * option and its plugstack.conf settings. The submit side turns --gpu-mem into a MiB figure
 * for job_submit.lua (spank_submit.c); the node side gives the job its MPS memory cap and
 * carma's MPS server (spank_node.c). docs/slurm.md is the admin's guide.
 *
 * A hook that fails on a `required` plugstack line drains the node (and a failing remote hook
 * kills the job), so every hook returns success whatever goes wrong inside it; the one
 * exception is a user's mistake at submission (a bad --gpu-mem, an estimate that cannot be
 * made), which refuses that submission with the reason and nothing else. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carma_spank.h"
#include "util/strutil.h"

SPANK_PLUGIN(carma, 1)

/* Set once per process by slurm_spank_init; Slurm calls the hooks of one process in turn. */
static cspank_conf conf;
static char gpu_mem_value[64]; /* --gpu-mem's value as given ("" = not given) */

int cspank_conf_parse(cspank_conf *c, int ac, char **av, carma_err *err)
{
    *c = (cspank_conf){.shard_mib = 1024, .timeout_ms = 2000};
    snprintf(c->carma, sizeof c->carma, "%s", CARMA_BINDIR "/carma");
    snprintf(c->socket, sizeof c->socket, "%s", "/run/carma/carma.sock");
    for (int i = 0; i < ac; i++) {
        const char *w = av[i], *eq = strchr(w, '=');
        if (!eq)
            return carma_err_set(err, "plugstack.conf: '%s' is not KEY=VALUE", w);
        const char *v = eq + 1;
        size_t klen = (size_t)(eq - w);
        uint64_t n;
        if (klen == 5 && !strncmp(w, "carma", 5)) {
            if (v[0] != '/' || strlen(v) >= sizeof c->carma)
                return carma_err_set(err, "plugstack.conf: carma= needs an absolute path");
            snprintf(c->carma, sizeof c->carma, "%s", v);
        } else if (klen == 6 && !strncmp(w, "socket", 6)) {
            if (v[0] != '/' || strlen(v) >= sizeof c->socket)
                return carma_err_set(err, "plugstack.conf: socket= needs an absolute path "
                                          "shorter than %zu bytes", sizeof c->socket);
            snprintf(c->socket, sizeof c->socket, "%s", v);
        } else if (klen == 9 && !strncmp(w, "shard_mib", 9)) {
            if (parse_u64(v, &n) || n < 1 || n > CSPANK_MAX_MIB)
                return carma_err_set(err, "plugstack.conf: shard_mib= needs 1..%u MiB",
                                     CSPANK_MAX_MIB);
            c->shard_mib = (unsigned)n;
        } else if (klen == 10 && !strncmp(w, "timeout_ms", 10)) {
            if (parse_u64(v, &n) || n < 1 || n > 60000)
                return carma_err_set(err, "plugstack.conf: timeout_ms= needs 1..60000");
            c->timeout_ms = (int)n;
        } else {
            return carma_err_set(err, "plugstack.conf: unknown setting '%.*s' (carma, socket, "
                                      "shard_mib, timeout_ms)", (int)klen, w);
        }
    }
    return 0;
}

/* Checks the value where it is given, so a typo is refused before anything is submitted;
 * on the node the value is not needed (the shards Slurm granted are). */
static int gpu_mem_option(int val, const char *optarg, int remote)
{
    (void)val;
    if (remote)
        return 0;
    uint64_t mib;
    if (!optarg || strlen(optarg) >= sizeof gpu_mem_value) {
        slurm_error("--gpu-mem needs a size (10G, 8000M) or auto");
        return -1;
    }
    if (strcmp(optarg, "auto") && (parse_size_mib(optarg, &mib) || mib < 1 ||
                                   mib > CSPANK_MAX_MIB)) {
        slurm_error("--gpu-mem=%s: not a GPU memory size (10G, 8000M, 8000 = MiB, at most "
                    "1T) nor auto", optarg);
        return -1;
    }
    snprintf(gpu_mem_value, sizeof gpu_mem_value, "%s", optarg);
    return 0;
}

static struct spank_option gpu_mem_opt = {
    .name = "gpu-mem",
    .arginfo = "SIZE|auto",
    .usage = "peak GPU memory of the job per GPU (10G, 8000M), or auto: carma estimates it "
             "by running the job's Python training command on the CPU for a few steps. "
             "Slurm gives the job that much of a GPU (shards of carma_spank's shard_mib).",
    .has_arg = 1,
    .val = 0,
    .cb = gpu_mem_option,
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    carma_err err = {{0}};
    if (cspank_conf_parse(&conf, ac, av, &err)) {
        /* An admin's typo must not take the node down: say so, go on with the defaults. */
        slurm_error("carma_spank: %s; using the defaults", err.msg);
        cspank_conf_parse(&conf, 0, NULL, &err);
    }
    /* Registered here, not in a static spank_options table: sbatch and salloc (allocator
     * context) only see options registered with spank_option_register. */
    spank_err_t rc = spank_option_register(sp, &gpu_mem_opt);
    if (rc != ESPANK_SUCCESS)
        slurm_error("carma_spank: cannot register --gpu-mem: %s", spank_strerror(rc));
    return 0;
}

/* Submit side: the figure for job_submit.lua. Only here may the plugin refuse (the user's
 * submission, with the reason); a job's steps (srun inside an allocation) have their shards
 * already, so the option, which sbatch also passes to them, is left alone there. */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    spank_context_t ctx = spank_context();
    if ((ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) || !gpu_mem_value[0])
        return 0;
    if (ctx == S_CTX_LOCAL && getenv("SLURM_JOB_ID")) {
        slurm_debug("carma_spank: --gpu-mem ignored for a step of job %s: its shards are the "
                    "job's", getenv("SLURM_JOB_ID"));
        return 0;
    }
    uint64_t mib;
    carma_err err = {{0}};
    if (cspank_submit_mib(&conf, gpu_mem_value, &mib, &err)) {
        /* Slurm ignores what an `optional` plugin's init_post_opt returns, and the submission
         * would go on without a figure: the reason goes to job_submit.lua, which refuses it. */
        slurm_error("--gpu-mem=%s: %s", gpu_mem_value, err.msg);
        spank_job_control_setenv(sp, CSPANK_ENV_ERROR, err.msg, 1);
        return -1;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)mib);
    spank_err_t rc = spank_job_control_setenv(sp, CSPANK_ENV_MIB, buf, 1);
    if (rc != ESPANK_SUCCESS) {
        slurm_error("--gpu-mem: cannot pass the figure to Slurm: %s", spank_strerror(rc));
        return -1;
    }
    if (!strcmp(gpu_mem_value, "auto"))
        slurm_spank_log("carma: --gpu-mem=auto: the job's estimated peak is %llu MiB",
                        (unsigned long long)mib);
    return 0;
}

/* Node side, once per step after Slurm dropped to the job's user: the variables go into the
 * environment of all the step's tasks. */
int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_remote(sp) == 1)
        cspank_node_setup(sp, &conf);
    return 0;
}
