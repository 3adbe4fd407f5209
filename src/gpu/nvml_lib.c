/* nvml_lib.c — dlopen of libnvidia-ml and dlsym of its entry points (see nvml_lib.h). */
#include "gpu/nvml_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

/* The first of `names` (NULL-terminated) the library exports, or NULL; *which gets its index. */
static void *resolve_first(void *dl, const char *const *names, int *which)
{
    for (int i = 0; names[i]; i++) {
        void *p = dlsym(dl, names[i]);
        if (p) {
            if (which)
                *which = i;
            return p;
        }
    }
    return NULL;
}

/* dlsym returns void *; converting it to a function pointer goes through memcpy so that
 * -Wpedantic builds stay quiet and the intent is plain. */
#define RESOLVE(field, ...)                                                                   \
    do {                                                                                      \
        static const char *const names_[] = {__VA_ARGS__, NULL};                              \
        void *p_ = resolve_first(lib->dl, names_, NULL);                                      \
        memcpy(&lib->field, &p_, sizeof lib->field);                                          \
    } while (0)

static nvml_proc_layout resolve_procs(nvml_lib *lib, nvml_procs_fn *fn, const char *base)
{
    char v3[96], v2[96];
    snprintf(v3, sizeof v3, "%s_v3", base);
    snprintf(v2, sizeof v2, "%s_v2", base);
    const char *const names[] = {v3, v2, base, NULL};
    int which = -1;
    void *p = resolve_first(lib->dl, names, &which);
    memcpy(fn, &p, sizeof *fn);
    if (!p)
        return NVML_PROCS_NONE;
    return which == 0 ? NVML_PROCS_V3 : which == 1 ? NVML_PROCS_V2 : NVML_PROCS_V1;
}

static void resolve_all(nvml_lib *lib)
{
    RESOLVE(init, "nvmlInit_v2", "nvmlInit");
    RESOLVE(shutdown, "nvmlShutdown");
    RESOLVE(device_count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    RESOLVE(device_handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    RESOLVE(error_string, "nvmlErrorString");
    RESOLVE(device_uuid, "nvmlDeviceGetUUID");
    RESOLVE(device_name, "nvmlDeviceGetName");
    RESOLVE(memory_v2, "nvmlDeviceGetMemoryInfo_v2");
    RESOLVE(memory_v1, "nvmlDeviceGetMemoryInfo");
    RESOLVE(utilization, "nvmlDeviceGetUtilizationRates");
    RESOLVE(power_usage, "nvmlDeviceGetPowerUsage");
    RESOLVE(minor_number, "nvmlDeviceGetMinorNumber");
    RESOLVE(total_energy, "nvmlDeviceGetTotalEnergyConsumption");
    RESOLVE(mig_mode, "nvmlDeviceGetMigMode");
    RESOLVE(gpm_query_support, "nvmlGpmQueryDeviceSupport");
    RESOLVE(gpm_sample_alloc, "nvmlGpmSampleAlloc");
    RESOLVE(gpm_sample_free, "nvmlGpmSampleFree");
    RESOLVE(gpm_sample_get, "nvmlGpmSampleGet");
    RESOLVE(gpm_metrics_get, "nvmlGpmMetricsGet");
    lib->compute_layout =
        resolve_procs(lib, &lib->compute_procs, "nvmlDeviceGetComputeRunningProcesses");
    lib->mps_layout =
        resolve_procs(lib, &lib->mps_procs, "nvmlDeviceGetMPSComputeRunningProcesses");
}

const char *nvml_lib_strerror(const nvml_lib *lib, nvmlReturn_t rc)
{
    if (lib && lib->error_string) {
        const char *s = lib->error_string(rc);
        if (s)
            return s;
    }
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "NVML error %d", rc);
    return buf;
}

int nvml_lib_has_gpm(const nvml_lib *lib)
{
    return lib->gpm_query_support && lib->gpm_sample_alloc && lib->gpm_sample_free &&
           lib->gpm_sample_get && lib->gpm_metrics_get;
}

int nvml_lib_open(nvml_lib *lib, const char *path, carma_err *err)
{
    memset(lib, 0, sizeof *lib);
    const char *env = path ? NULL : getenv(NVML_LIBRARY_ENV);
    if (!path)
        path = env && *env ? env : NVML_DEFAULT_LIBRARY;
    if (library_path_check(path, err)) /* dlopen would wait for ever on a FIFO */
        return carma_err_prefix(err, "NVML library%s",
                                path == env ? " ($" NVML_LIBRARY_ENV ")" : "");
    snprintf(lib->path, sizeof lib->path, "%s", path);
    lib->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->dl) {
        const char *why = dlerror();
        return carma_err_set(err, "cannot load NVML library %s (%s); is the NVIDIA driver "
                                  "installed? Set %s to its path if it lives elsewhere",
                             path, why ? why : "unknown dlopen error", NVML_LIBRARY_ENV);
    }
    resolve_all(lib);
    const char *missing = !lib->init           ? "nvmlInit_v2"
                          : !lib->shutdown     ? "nvmlShutdown"
                          : !lib->device_count ? "nvmlDeviceGetCount_v2"
                          : !lib->device_handle ? "nvmlDeviceGetHandleByIndex_v2"
                                                : NULL;
    if (missing) {
        carma_err_set(err, "NVML library %s lacks %s (not a usable libnvidia-ml)", path, missing);
        dlclose(lib->dl);
        lib->dl = NULL;
        return -1;
    }
    nvmlReturn_t rc = lib->init();
    if (rc != NVML_SUCCESS) {
        carma_err_set(err, "nvmlInit failed in %s: %s", path, nvml_lib_strerror(lib, rc));
        dlclose(lib->dl);
        lib->dl = NULL;
        return -1;
    }
    return 0;
}

void nvml_lib_close(nvml_lib *lib)
{
    if (!lib || !lib->dl)
        return;
    lib->shutdown();
    dlclose(lib->dl);
    lib->dl = NULL;
}
