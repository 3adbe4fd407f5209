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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvml_process_records_have_no_mig_instance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
