/* test_fake_libs.c — the fake NVML and DCGM libraries (tests/fake_nvml) answer as NVIDIA's own
 * do: the values and status codes NVIDIA's headers document, written here from those headers
 * (nvml.h, dcgm_structs.h) and not from carma's declarations, so the fakes cannot drift along
 * with a mistake in src/gpu/nvml_api.h or src/gpu/dcgm_api.h. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fake_nvml_fixture.h"

static void *sym(void *dl, const char *name)
{
    void *p = dlsym(dl, name);
    assert_non_null(p);
    return p;
}

/* nvml.h, nvmlProcessInfo_v2_t: gpuInstanceId and computeInstanceId are 0xFFFFFFFF when MIG
 * is disabled (0 is a valid instance id). */
static void nvml_process_records_have_no_mig_instance(void **state)
{
    (void)state;
    const char *scenario = fake_nvml_scenario("gpu uuid=GPU-aaaa name=A100 gpm=0\n"
                                              "proc gpu=0 pid=4242 used=100\n");
    void *dl = dlopen(fake_nvml_path("full"), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(dl);
    int (*init)(void) = (int (*)(void))sym(dl, "nvmlInit_v2");
    int (*handle)(unsigned, void **) =
        (int (*)(unsigned, void **))sym(dl, "nvmlDeviceGetHandleByIndex_v2");
    int (*procs)(void *, unsigned *, void *) =
        (int (*)(void *, unsigned *, void *))sym(dl, "nvmlDeviceGetComputeRunningProcesses_v3");
    int (*shutdown)(void) = (int (*)(void))sym(dl, "nvmlShutdown");
    void *dev = NULL;
    assert_int_equal(init(), 0);
    assert_int_equal(handle(0, &dev), 0);
    unsigned char rec[24];
    unsigned count = 1;
    assert_int_equal(procs(dev, &count, rec), 0);
    assert_int_equal(count, 1);
    uint32_t pid, gi, ci;
    memcpy(&pid, rec, 4);
    memcpy(&gi, rec + 16, 4);
    memcpy(&ci, rec + 20, 4);
    assert_int_equal(pid, 4242);
    assert_int_equal(gi, 0xFFFFFFFFu);
    assert_int_equal(ci, 0xFFFFFFFFu);
    shutdown();
    dlclose(dl);
    unlink(scenario);
}

/* nvml.h: in MIG mode the parent device gives aggregate information, one record per instance
 * a process runs on, with valid gpuInstanceId and computeInstanceId (0 among them). */
static void nvml_process_records_on_a_mig_gpu_name_their_instance(void **state)
{
    (void)state;
    const char *scenario = fake_nvml_scenario("gpu uuid=GPU-aaaa name=A100 mig=1\n"
                                              "proc gpu=0 pid=4242 used=100 gi=1 ci=0\n"
                                              "proc gpu=0 pid=4242 used=200 gi=2 ci=1\n");
    void *dl = dlopen(fake_nvml_path("full"), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(dl);
    int (*init)(void) = (int (*)(void))sym(dl, "nvmlInit_v2");
    int (*handle)(unsigned, void **) =
        (int (*)(unsigned, void **))sym(dl, "nvmlDeviceGetHandleByIndex_v2");
    int (*procs)(void *, unsigned *, void *) =
        (int (*)(void *, unsigned *, void *))sym(dl, "nvmlDeviceGetComputeRunningProcesses_v3");
    int (*shutdown)(void) = (int (*)(void))sym(dl, "nvmlShutdown");
    void *dev = NULL;
    assert_int_equal(init(), 0);
    assert_int_equal(handle(0, &dev), 0);
    unsigned char rec[2 * 24];
    unsigned count = 2;
    assert_int_equal(procs(dev, &count, rec), 0);
    assert_int_equal(count, 2);
    static const uint32_t want[2][3] = {{4242, 1, 0}, {4242, 2, 1}};
    for (int i = 0; i < 2; i++) {
        uint32_t pid, gi, ci;
        memcpy(&pid, rec + i * 24, 4);
        memcpy(&gi, rec + i * 24 + 16, 4);
        memcpy(&ci, rec + i * 24 + 20, 4);
        assert_int_equal(pid, want[i][0]);
        assert_int_equal(gi, want[i][1]);
        assert_int_equal(ci, want[i][2]);
    }
    shutdown();
    dlclose(dl);
    unlink(scenario);
}

/* nvml.h, nvmlDeviceGetMigMode: NVML_DEVICE_MIG_DISABLE 0, NVML_DEVICE_MIG_ENABLE 1, for the
 * current mode and the one pending until the next reset; NVML_ERROR_NOT_SUPPORTED (3) for a
 * device that does not support MIG mode. */
static void nvml_mig_mode_answers_as_nvml_h_says(void **state)
{
    (void)state;
    const char *scenario = fake_nvml_scenario("gpu uuid=GPU-aaaa name=A100 mig=1\n"
                                              "gpu uuid=GPU-bbbb name=A100 mig=0 mig_pending=1\n"
                                              "gpu uuid=GPU-cccc name=L40S\n");
    void *dl = dlopen(fake_nvml_path("full"), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(dl);
    int (*init)(void) = (int (*)(void))sym(dl, "nvmlInit_v2");
    int (*handle)(unsigned, void **) =
        (int (*)(unsigned, void **))sym(dl, "nvmlDeviceGetHandleByIndex_v2");
    int (*mig)(void *, unsigned *, unsigned *) =
        (int (*)(void *, unsigned *, unsigned *))sym(dl, "nvmlDeviceGetMigMode");
    int (*shutdown)(void) = (int (*)(void))sym(dl, "nvmlShutdown");
    assert_int_equal(init(), 0);
    void *dev[3];
    for (unsigned i = 0; i < 3; i++)
        assert_int_equal(handle(i, &dev[i]), 0);
    unsigned current = 9, pending = 9;
    assert_int_equal(mig(dev[0], &current, &pending), 0);
    assert_int_equal(current, 1);
    assert_int_equal(pending, 1);
    assert_int_equal(mig(dev[1], &current, &pending), 0);
    assert_int_equal(current, 0);
    assert_int_equal(pending, 1);
    assert_int_equal(mig(dev[2], &current, &pending), 3);
    assert_int_equal(mig(dev[0], NULL, &pending), 2); /* NVML_ERROR_INVALID_ARGUMENT */
    shutdown();
    dlclose(dl);
    unlink(scenario);
}

/* dcgm_structs.h, dcgmReturn_enum */
#define DCGM_UNINITIALIZED (-10)
#define DCGM_NOT_WATCHED (-16)
#define DCGM_CONNECTION_NOT_VALID (-21)

typedef struct value_v1 { /* dcgmFieldValue_v1 */
    unsigned version;
    unsigned short fieldId, fieldType;
    int status;
    int64_t ts;
    union {
        int64_t i64;
        double dbl;
        char str[256];
        char blob[4096];
    } value;
} value_v1;

static int first_status(unsigned gpu, value_v1 *v, int n, void *user)
{
    (void)gpu;
    (void)n;
    *(int *)user = v->status;
    return 1; /* stop after the first value */
}

/* The fake DCGM's status codes are dcgm_structs.h's: a call before dcgmInit is UNINITIALIZED
 * (-10, not -3, GENERIC_ERROR), a value of a field not watched is NOT_WATCHED (-16, not -15,
 * STALE_DATA), and no host engine answering is CONNECTION_NOT_VALID (-21). */
static void dcgm_status_codes_are_nvidias(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/dcgm/libdcgm.so.4", FAKE_NVML_DIR);
    setenv("FAKE_DCGM_VALUES", "0:0:0.5:0.5:0.5:100:200", 1);
    unsetenv("FAKE_DCGM_HOSTENGINE");
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(dl);
    int (*init)(void) = (int (*)(void))sym(dl, "dcgmInit");
    int (*shutdown)(void) = (int (*)(void))sym(dl, "dcgmShutdown");
    int (*start)(int, uintptr_t *) = (int (*)(int, uintptr_t *))sym(dl, "dcgmStartEmbedded");
    int (*connect)(const char *, void *, uintptr_t *) =
        (int (*)(const char *, void *, uintptr_t *))sym(dl, "dcgmConnect_v2");
    int (*group)(uintptr_t, int, const char *, uintptr_t *) =
        (int (*)(uintptr_t, int, const char *, uintptr_t *))sym(dl, "dcgmGroupCreate");
    int (*fgroup)(uintptr_t, int, unsigned short *, const char *, uintptr_t *) =
        (int (*)(uintptr_t, int, unsigned short *, const char *, uintptr_t *))sym(
            dl, "dcgmFieldGroupCreate");
    int (*latest)(uintptr_t, uintptr_t, uintptr_t, int (*)(unsigned, value_v1 *, int, void *),
                  void *) = (int (*)(uintptr_t, uintptr_t, uintptr_t,
                                     int (*)(unsigned, value_v1 *, int, void *), void *))
        sym(dl, "dcgmGetLatestValues");
    uintptr_t h = 0, g = 0, fg = 0;
    assert_int_equal(start(1, &h), DCGM_UNINITIALIZED);
    assert_int_equal(init(), 0);
    /* dcgmConnectV2Params_v2: version, persistAfterDisconnect, timeoutMs, addressIsUnixSocket */
    unsigned params[4] = {16u | 2u << 24, 0, 100, 0};
    assert_int_equal(connect("127.0.0.1", params, &h), DCGM_CONNECTION_NOT_VALID);
    assert_int_equal(start(1, &h), 0);
    assert_int_equal(group(h, 0, "t", &g), 0);
    unsigned short ids[] = {155};
    assert_int_equal(fgroup(h, 1, ids, "t", &fg), 0);
    int status = 0;
    assert_int_equal(latest(h, g, fg, first_status, &status), 0);
    assert_int_equal(status, DCGM_NOT_WATCHED);
    shutdown();
    dlclose(dl);
    unsetenv("FAKE_DCGM_VALUES");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvml_process_records_have_no_mig_instance),
        cmocka_unit_test(nvml_process_records_on_a_mig_gpu_name_their_instance),
        cmocka_unit_test(nvml_mig_mode_answers_as_nvml_h_says),
        cmocka_unit_test(dcgm_status_codes_are_nvidias),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
