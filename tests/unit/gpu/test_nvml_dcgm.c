/* test_nvml_dcgm.c — the nvml backend's DCGM path on a node shared with other DCGM users,
 * against the fake libdcgm.so.4: the node's nv-hostengine used when one answers (embedded only
 * when none does), each closed the way it was opened; names of carma's own on the shared
 * engine; power and energy kept when the profiling watch fails (another process holds the
 * profiling counters). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dcgm_fixture.h"

/* An A100 (no GPM) whose NVML gives no power or energy: those can only come from DCGM. */
static const char *const a100 =
    "gpu uuid=GPU-bbbb-0002 name=\"NVIDIA A100-SXM4-40GB\" total=40960 used=0 util=0 gpm=0\n"
    "fail nvmlDeviceGetPowerUsage 3\n"
    "fail nvmlDeviceGetTotalEnergyConsumption 3\n";

static int setup(void **state)
{
    (void)state;
    dcgm_fixture_setup("4:0:0.55:0.25:0.125:300.5:4200");
    return 0;
}

static void open_and_sample(void)
{
    carma_err err = {""};
    F.scenario = fake_nvml_scenario(a100);
    int rc = gpu_backend_nvml.open(&F.b, fake_nvml_path("full"), &err);
    if (rc)
        print_error("open: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(gpu_backend_nvml.sample(F.b, F.r, &err), 0);
}

static const char *note(void)
{
    return nvml_backend_activity_note(F.b);
}


static void close_backend(void)
{
    gpu_backend_nvml.close(F.b);
    F.b = NULL;
}

/* nv-hostengine answers at its default address: carma connects to it (no embedded engine, which
 * NVIDIA does not support next to another), asks it to drop carma's watches when the connection
 * goes (persistAfterDisconnect 0), waits at most half a second, and disconnects at close. */
static void hostengine_is_used_when_one_answers(void **state)
{
    (void)state;
    setenv("FAKE_DCGM_HOSTENGINE", "127.0.0.1", 1);
    open_and_sample();
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_double_equal(F.r[0].smact, 0.55, 1e-12);
    assert_double_equal(F.r[0].power_w, 300.5, 1e-12);
    assert_string_equal(note(), "DCGM via nv-hostengine at 127.0.0.1");
    assert_non_null(strstr(dcgm_calls(), "dcgmConnect_v2 127.0.0.1 persist=0 timeoutMs=500 "
                                         "unix=0 -> connected"));
    assert_null(strstr(dcgm_calls(), "dcgmStartEmbedded"));
    close_backend();
    assert_non_null(strstr(dcgm_calls(), "dcgmDisconnect"));
    assert_null(strstr(dcgm_calls(), "dcgmStopEmbedded"));
}

/* No host engine answers: carma starts one embedded, and stops it at close. */
static void embedded_only_when_no_hostengine_answers(void **state)
{
    (void)state;
    open_and_sample();
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_string_equal(note(), "DCGM embedded (no nv-hostengine at 127.0.0.1)");
    const char *log = dcgm_calls();
    const char *tried = strstr(log, "dcgmConnect_v2 127.0.0.1 persist=0 timeoutMs=500 unix=0 -> "
                                    "no host engine");
    assert_non_null(tried);
    assert_non_null(strstr(tried, "dcgmStartEmbedded")); /* after the connection was refused */
    close_backend();
    assert_non_null(strstr(dcgm_calls(), "dcgmStopEmbedded"));
    assert_null(strstr(dcgm_calls(), "dcgmDisconnect"));
}

/* The name carma gave its group, from the fake's log: "carma-HOST-PID-" and 16 hex digits. */
static const char *group_name(void)
{
    static char name[256]; /* DCGM_MAX_STR_LENGTH */
    const char *p = strstr(dcgm_calls(), "dcgmGroupCreate ");
    assert_non_null(p);
    p += strlen("dcgmGroupCreate ");
    size_t n = strcspn(p, "\n");
    assert_true(n < sizeof name);
    memcpy(name, p, n);
    name[n] = '\0';
    return name;
}

/* Other clients of the shared host engine already hold field groups named "carma" and
 * "carma-prof", and another carma daemon, in a container (its own PID namespace) with the same
 * pid as this one and the same host name, "carma-PID" and "carma-HOST-PID" with "-prof": this
 * one's names are still its own, "carma-HOST-PID-NONCE". */
static void field_group_names_are_per_process(void **state)
{
    (void)state;
    char host[256] = "";
    assert_int_equal(gethostname(host, sizeof host), 0);
    /* used as it is: Linux host names are at most 64 characters (HOST_NAME_MAX), as many as
     * carma keeps, and a test machine's are letters, digits, '.' and '-' */
    long pid = (long)getpid();
    char in_use[1024];
    snprintf(in_use, sizeof in_use,
             "carma,carma-prof,carma-%ld,carma-%ld-prof,carma-%s-%ld,carma-%s-%ld-prof", pid, pid,
             host, pid, host, pid);
    setenv("FAKE_DCGM_HOSTENGINE", "127.0.0.1", 1);
    setenv("FAKE_DCGM_NAMES_IN_USE", in_use, 1);
    open_and_sample();
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_double_equal(F.r[0].power_w, 300.5, 1e-12);
    assert_null(strstr(dcgm_calls(), "duplicate"));
    const char *name = group_name();
    char prefix[512];
    snprintf(prefix, sizeof prefix, "carma-%s-%ld-", host, pid);
    assert_int_equal(strncmp(name, prefix, strlen(prefix)), 0);
    const char *nonce = name + strlen(prefix);
    assert_int_equal(strlen(nonce), 16);
    assert_int_equal(strspn(nonce, "0123456789abcdef"), 16);
    char line[512];
    snprintf(line, sizeof line, "dcgmFieldGroupCreate %s n=3\n", name);
    assert_non_null(strstr(dcgm_calls(), line));
    snprintf(line, sizeof line, "dcgmFieldGroupCreate %s-prof n=3\n", name);
    assert_non_null(strstr(dcgm_calls(), line));
}

/* A host engine on a unix socket (nv-hostengine --domain-socket), named as DCGM names them. */
static void hostengine_address_from_the_environment(void **state)
{
    (void)state;
    setenv("CARMA_DCGM_HOSTENGINE", "unix:///run/nvidia-dcgm/he.sock", 1);
    setenv("FAKE_DCGM_HOSTENGINE", "/run/nvidia-dcgm/he.sock", 1);
    open_and_sample();
    assert_int_equal(F.r[0].src_activity, SRC_DCGM);
    assert_string_equal(note(), "DCGM via nv-hostengine at unix:///run/nvidia-dcgm/he.sock");
    assert_non_null(strstr(dcgm_calls(), "dcgmConnect_v2 /run/nvidia-dcgm/he.sock persist=0 "
                                    "timeoutMs=500 unix=1 -> connected"));
}

/* Another process holds the profiling counters: nv-hostengine fails, and undoes, the whole
 * watch of a field group holding a profiling field. Power and energy, watched on their own,
 * still arrive; SM activity stays unknown and the note says why. */
static void profiling_lock_keeps_power_and_energy(void **state)
{
    (void)state;
    setenv("FAKE_DCGM_PROF_LOCKED", "1", 1);
    open_and_sample();
    const gpu_reading *r = &F.r[0];
    assert_int_equal(r->src_power, SRC_DCGM);
    assert_double_equal(r->power_w, 300.5, 1e-12);
    assert_double_equal(r->energy_mj, 4200.0, 1e-12);
    assert_int_equal(r->src_activity, SRC_UNKNOWN);
    assert_true(isnan(r->smact) && isnan(r->smocc) && isnan(r->drama));
    assert_non_null(strstr(note(), "DCGM embedded (no nv-hostengine at 127.0.0.1); "
                                   "profiling fields not watched"));
    assert_non_null(strstr(note(), "unrecoverable error")); /* DCGM's own words */
}

/* Without the lock the same reader gives all six fields. */
static void profiling_fields_arrive_when_free(void **state)
{
    (void)state;
    open_and_sample();
    const gpu_reading *r = &F.r[0];
    assert_int_equal(r->src_activity, SRC_DCGM);
    assert_double_equal(r->smact, 0.55, 1e-12);
    assert_double_equal(r->smocc, 0.25, 1e-12);
    assert_double_equal(r->drama, 0.125, 1e-12);
    assert_double_equal(r->power_w, 300.5, 1e-12);
    assert_null(strstr(note(), "not watched"));
}

/* each test against a fresh fake DCGM */
#define WITH_DCGM(test) cmocka_unit_test_setup_teardown(test, setup, dcgm_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        WITH_DCGM(hostengine_is_used_when_one_answers),
        WITH_DCGM(embedded_only_when_no_hostengine_answers),
        WITH_DCGM(hostengine_address_from_the_environment),
        WITH_DCGM(field_group_names_are_per_process),
        WITH_DCGM(profiling_lock_keeps_power_and_energy),
        WITH_DCGM(profiling_fields_arrive_when_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
